// Sorting rows by rank: element i of a row goes to position #{j : x[j] sorts before x[i]} +
// #{j < i : x[j] ties with x[i]}, which is a stable sort computed independently per element
// (one thread each, O(n) work per element).  Correct for every dtype and layout; rows longer
// than the backend's limit wait for a merge sort.  NaN sorts last ascending (first
// descending); complex numbers order by (real, imaginary) as NumPy's do.

template <class T>
__device__ inline bool sort_lt(T a, T b) {
    if constexpr (is_cplx<T>::value) {
        bool an = sm_isnan(a), bn = sm_isnan(b);
        if (an || bn) return !an && bn;
        return a.re < b.re || (a.re == b.re && a.im < b.im);
    } else if constexpr (is_flt<T>::value) {
        if (a != a || b != b) return a == a && b != b;
        return a < b;
    } else {
        return a < b;
    }
}

// o: rows of n (dense, the axis last); ARG: o holds int64 positions, else values
template <class T, bool ARG>
__global__ void rank_sort(void* o, const T* x, long long xo, long long xr, long long xa,
                          long long rows, long long n, bool descending) {
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < rows * n;
         e += (long long)gridDim.x * blockDim.x) {
        long long r = e / n, i = e % n;
        const T* row = x + xo + r * xr;
        T v = row[i * xa];
        long long rank = 0;
        for (long long j = 0; j < n; ++j) {
            T w = row[j * xa];
            bool before = descending ? sort_lt(v, w) : sort_lt(w, v);
            if (!before && j < i && !sort_lt(v, w) && !sort_lt(w, v)) before = true;
            rank += before;
        }
        if constexpr (ARG) ((long long*)o)[r * n + rank] = i;
        else ((T*)o)[r * n + rank] = v;
    }
}

// Long rows: a bottom-up merge sort.  Each pass merges neighbouring sorted runs of `width`
// elements of every row from (ki, ii) into (ko, io), one thread per element: an element finds
// its place by a binary search in the other run, left elements going before equal right ones
// (stable).  log2(n) passes of O(n log n) work replace the rank sort's O(n^2).
template <class T>
__device__ inline bool sort_before(T a, T b, bool descending) {
    return descending ? sort_lt(b, a) : sort_lt(a, b);
}

template <class T>
__global__ void merge_pass(T* ko, long long* io, const T* ki, const long long* ii, long long rows,
                           long long n, long long width, bool descending) {
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < rows * n;
         e += (long long)gridDim.x * blockDim.x) {
        long long r = e / n, i = e % n;
        long long s = i / (2 * width) * (2 * width);
        long long mid = s + width < n ? s + width : n;
        long long end = s + 2 * width < n ? s + 2 * width : n;
        const T* row = ki + r * n;
        T v = row[i];
        long long pos;
        if (i < mid) {  // right-run elements strictly before v come first
            long long lo = mid, hi = end;
            while (lo < hi) {
                long long m = lo + (hi - lo) / 2;
                if (sort_before(row[m], v, descending)) lo = m + 1;
                else hi = m;
            }
            pos = i + (lo - mid);
        } else {  // left-run elements before or tied with v come first
            long long lo = s, hi = mid;
            while (lo < hi) {
                long long m = lo + (hi - lo) / 2;
                if (!sort_before(v, row[m], descending)) lo = m + 1;
                else hi = m;
            }
            pos = s + (i - mid) + (lo - s);
        }
        ko[r * n + pos] = v;
        io[r * n + pos] = ii[r * n + i];
    }
}

// positions 0..n-1 in every row: the indices the first merge pass carries along
__global__ void iota_rows(long long* io, long long rows, long long n) {
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < rows * n;
         e += (long long)gridDim.x * blockDim.x)
        io[e] = e % n;
}
