// Elementwise maps over strided operands: out[i] = F(in1[i], ...) (and where(c, a, b)).
//
// The backend simplifies every layout first (strided/_layout.py: drop size-1 dimensions, order
// by the output's strides, merge dimensions contiguous in every operand), so a dense or
// broadcast problem reaches the 1-d kernels and anything else the rank-3 ones (higher ranks are
// split into rank-3 launches).  IX is the index type: 32-bit where every index of the launch
// fits, 64-bit otherwise.  A Python scalar operand arrives by value: bit k of `scalars` says
// operand k is the value argument, and its pointer is then never read.
// Each thread handles elements i, i + grid size, ... (grid-stride loop).

#define STRIDED_LOOP(IX, total) \
    for (IX i = (IX)blockIdx.x * (IX)blockDim.x + (IX)threadIdx.x; i < (total); \
         i += (IX)gridDim.x * (IX)blockDim.x)

// index of element i of a rank-3 problem (n1, n2: the inner sizes) in an operand
#define STRIDED_AT3(IX, o, s0, s1, s2) ((IX)(o) + i0 * (IX)(s0) + i1 * (IX)(s1) + i2 * (IX)(s2))
#define STRIDED_SPLIT3(IX)                    \
    IX i2 = i % (IX)n2, q = i / (IX)n2;       \
    IX i1 = q % (IX)n1, i0 = q / (IX)n1;

template <class F, class O, class T, class IX>
__global__ void map1_1d(O* out, long long oo, long long os, const T* a, long long ao,
                        long long as, T av, int scalars, long long n) {
    STRIDED_LOOP(IX, (IX)n) {
        T x = (scalars & 1) ? av : a[(IX)ao + i * (IX)as];
        out[(IX)oo + i * (IX)os] = F::template f<O, T>(x);
    }
}

template <class F, class O, class T, class IX>
__global__ void map1_3d(O* out, long long oo, long long os0, long long os1, long long os2,
                        const T* a, long long ao, long long as0, long long as1, long long as2,
                        T av, int scalars, long long n0, long long n1, long long n2) {
    STRIDED_LOOP(IX, (IX)n0 * (IX)n1 * (IX)n2) {
        STRIDED_SPLIT3(IX)
        T x = (scalars & 1) ? av : a[STRIDED_AT3(IX, ao, as0, as1, as2)];
        out[STRIDED_AT3(IX, oo, os0, os1, os2)] = F::template f<O, T>(x);
    }
}

template <class F, class O, class T, class IX>
__global__ void map2_1d(O* out, long long oo, long long os, const T* a, long long ao,
                        long long as, const T* b, long long bo, long long bs, T av, T bv,
                        int scalars, long long n) {
    STRIDED_LOOP(IX, (IX)n) {
        T x = (scalars & 1) ? av : a[(IX)ao + i * (IX)as];
        T y = (scalars & 2) ? bv : b[(IX)bo + i * (IX)bs];
        out[(IX)oo + i * (IX)os] = F::template f<O, T>(x, y);
    }
}

template <class F, class O, class T, class IX>
__global__ void map2_3d(O* out, long long oo, long long os0, long long os1, long long os2,
                        const T* a, long long ao, long long as0, long long as1, long long as2,
                        const T* b, long long bo, long long bs0, long long bs1, long long bs2,
                        T av, T bv, int scalars, long long n0, long long n1, long long n2) {
    STRIDED_LOOP(IX, (IX)n0 * (IX)n1 * (IX)n2) {
        STRIDED_SPLIT3(IX)
        T x = (scalars & 1) ? av : a[STRIDED_AT3(IX, ao, as0, as1, as2)];
        T y = (scalars & 2) ? bv : b[STRIDED_AT3(IX, bo, bs0, bs1, bs2)];
        out[STRIDED_AT3(IX, oo, os0, os1, os2)] = F::template f<O, T>(x, y);
    }
}

// where(c, a, b): c is bool; a and b (or their scalar values) have out's type
template <class T, class IX>
__global__ void where_3d(T* out, long long oo, long long os0, long long os1, long long os2,
                         const bool* c, long long co, long long cs0, long long cs1, long long cs2,
                         const T* a, long long ao, long long as0, long long as1, long long as2,
                         const T* b, long long bo, long long bs0, long long bs1, long long bs2,
                         T av, T bv, int scalars, long long n0, long long n1, long long n2) {
    STRIDED_LOOP(IX, (IX)n0 * (IX)n1 * (IX)n2) {
        STRIDED_SPLIT3(IX)
        bool k = c[STRIDED_AT3(IX, co, cs0, cs1, cs2)];
        T v = k ? ((scalars & 1) ? av : a[STRIDED_AT3(IX, ao, as0, as1, as2)])
                : ((scalars & 2) ? bv : b[STRIDED_AT3(IX, bo, bs0, bs1, bs2)]);
        out[STRIDED_AT3(IX, oo, os0, os1, os2)] = v;
    }
}
