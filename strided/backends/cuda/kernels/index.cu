// Indexing: take along an axis, gathers and scatters through element offsets, index checks.
// Index errors cannot be raised on a device: kernels record the first bad position with an
// atomic minimum in `bad` (initialised to n by the backend, which reads it back and raises).

#define STRIDED_GRID_LOOP(i, n) \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (long long)gridDim.x * blockDim.x)

// out[i] = k[i] counted from the end when negative; positions out of [-size, size) are bad
extern "C" __global__ void normalize_index(long long* out, const long long* k, long long ko,
                                           long long n, long long size,
                                           unsigned long long* bad) {
    STRIDED_GRID_LOOP(i, n) {
        long long v = k[ko + i];
        if (v < -size || v >= size) atomicMin(bad, (unsigned long long)i);
        out[i] = v < 0 ? v + size : v;
    }
}

// take: out[p, j, q] = x[p, idx[j], q] (x seen as (pre, n_ax, post), out dense)
template <class T>
__global__ void take3(T* out, const T* x, long long xo, long long s_pre, long long s_ax,
                      long long s_post, const long long* idx, long long io, long long is,
                      long long n_pre, long long n_idx, long long n_post, long long n_ax,
                      unsigned long long* bad) {
    STRIDED_GRID_LOOP(e, n_pre * n_idx * n_post) {
        long long q = e % n_post, r = e / n_post, j = r % n_idx, p = r / n_idx;
        long long k = idx[io + j * is];
        if (k < 0) k += n_ax;
        if (k < 0 || k >= n_ax) {
            atomicMin(bad, (unsigned long long)j);
            continue;
        }
        out[e] = x[xo + p * s_pre + k * s_ax + q * s_post];
    }
}

// integer-array indexing: out[i, a, b] = x[bases[i] + a * s0 + b * s1] (out dense)
template <class T>
__global__ void gather_blocks(T* out, const T* x, const long long* bases, long long bo,
                              long long n, long long t0, long long t1, long long s0,
                              long long s1) {
    const long long block = t0 * t1;
    STRIDED_GRID_LOOP(e, n * block) {
        long long i = e / block, r = e % block;
        out[e] = x[bases[bo + i] + (r / t1) * s0 + (r % t1) * s1];
    }
}

// assignment through offsets: x[bases[i] + a * s0 + b * s1] = v[i, a, b] (v dense)
template <class T>
__global__ void scatter_blocks(T* x, const long long* bases, long long bo, const T* v,
                               long long vo, long long n, long long t0, long long t1,
                               long long s0, long long s1) {
    const long long block = t0 * t1;
    STRIDED_GRID_LOOP(e, n * block) {
        long long i = e / block, r = e % block;
        x[bases[bo + i] + (r / t1) * s0 + (r % t1) * s1] = v[vo + e];
    }
}

template <class T>
__device__ inline void atomic_add(T* p, T v) {
    if constexpr (is_cplx<T>::value) {
        atomicAdd(&p->re, v.re);  // each part atomically: the sums are still exact sums
        atomicAdd(&p->im, v.im);
    } else if constexpr (same_t<T, i64>::value || same_t<T, u64>::value) {
        atomicAdd((unsigned long long*)p, (unsigned long long)v);  // two's complement
    } else {
        atomicAdd(p, v);
    }
}

// x[bases[i] + a * s0 + b * s1] += v[i, a, b]: repeated offsets accumulate (atomically)
template <class T>
__global__ void scatter_add_blocks(T* x, const long long* bases, long long bo, const T* v,
                                   long long vo, long long n, long long t0, long long t1,
                                   long long s0, long long s1) {
    const long long block = t0 * t1;
    STRIDED_GRID_LOOP(e, n * block) {
        long long i = e / block, r = e % block;
        atomic_add(&x[bases[bo + i] + (r / t1) * s0 + (r % t1) * s1], v[vo + e]);
    }
}

// take_along_axis with the axis last: o[r, j] = x[r, idx[r, j]] (o dense); bad rows recorded
template <class T>
__global__ void take_rows(T* o, const T* x, long long xo, long long xr, long long xa,
                          const long long* idx, long long io, long long ir, long long ia,
                          long long n_rows, long long n_idx, long long n_ax,
                          unsigned long long* bad) {
    STRIDED_GRID_LOOP(e, n_rows * n_idx) {
        long long r = e / n_idx, j = e % n_idx;
        long long k = idx[io + r * ir + j * ia];
        if (k < 0) k += n_ax;
        if (k < 0 || k >= n_ax) {
            atomicMin(bad, (unsigned long long)r);
            continue;
        }
        o[e] = x[xo + r * xr + k * xa];
    }
}

// o[i] = insertion point of v[i] in the sorted 1-D a (NaN sorts last, as in NumPy)
template <class T>
__global__ void searchsorted(long long* o, const T* a, long long ao, long long as, long long n,
                             const T* v, long long vo, long long count, bool right) {
    STRIDED_GRID_LOOP(i, count) {
        T x = v[vo + i];
        long long lo = 0, hi = n;
        while (lo < hi) {
            long long mid = (lo + hi) >> 1;
            T m = a[ao + mid * as];
            bool go_right;
            if (x != x) go_right = (m == m) || right;
            else if (m != m) go_right = false;
            else go_right = right ? (m <= x) : (m < x);
            if (go_right) lo = mid + 1;
            else hi = mid;
        }
        o[i] = lo;
    }
}

// coordinates (ndim, count) of the nonzero elements of the dense bool x, C order; pos is the
// inclusive prefix sum of x's flags (element i is the pos[i]-th nonzero)
extern "C" __global__ void nonzero_coords(long long* o, const bool* x, long long xo,
                                          const long long* pos, long long n,
                                          const long long* shape, long long nd,
                                          long long count) {
    STRIDED_GRID_LOOP(i, n) {
        if (!x[xo + i]) continue;
        long long c = pos[i] - 1, rem = i;
        for (long long d = nd - 1; d >= 0; --d) {
            o[d * count + c] = rem % shape[d];
            rem /= shape[d];
        }
    }
}

// the element offsets (offset + sum of coordinate * stride, the indexed array's strides) of the
// true elements of the dense bool mask x, in C order: what x[mask] gathers
extern "C" __global__ void mask_offsets(long long* o, const bool* x, long long xo,
                                        const long long* pos, long long n,
                                        const long long* shape, const long long* strides,
                                        long long nd, long long offset) {
    STRIDED_GRID_LOOP(i, n) {
        if (!x[xo + i]) continue;
        long long at = offset, rem = i;
        for (long long d = nd - 1; d >= 0; --d) {
            at += (rem % shape[d]) * strides[d];
            rem /= shape[d];
        }
        o[pos[i] - 1] = at;
    }
}
