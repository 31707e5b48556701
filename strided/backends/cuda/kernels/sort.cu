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
