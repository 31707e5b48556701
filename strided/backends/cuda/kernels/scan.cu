// Inclusive scans along one axis: one block per row (the other dimensions, rank 2 after layout
// simplification), which walks the row in chunks of blockDim.x elements: a warp scan with
// shuffles, a scan of the warp totals through shared memory, then the carry of the chunks
// before.  R is a reduction of reduce.cu (identity, combine) over the output type A; the
// dispatcher has cast the input to A.

template <class T>
__device__ inline T shfl_up(T v, unsigned d) {
    if constexpr (is_cplx<T>::value) {
        return T{shfl_up(v.re, d), shfl_up(v.im, d)};
    } else if constexpr (sizeof(T) < 4) {
        return (T)__shfl_up_sync(0xffffffffu, (int)v, d);
    } else {
        return __shfl_up_sync(0xffffffffu, v, d);
    }
}

template <class R, class A>
__device__ inline A warp_scan(A v, unsigned lane) {
    for (unsigned d = 1; d < 32; d *= 2) {
        A t = shfl_up(v, d);
        if (lane >= d) v = R::combine(t, v);
    }
    return v;
}

template <class R, class A>
__global__ void scan_rows(A* out, long long oo, long long os0, long long os1, long long osa,
                          const A* x, long long xo, long long xs0, long long xs1, long long xsa,
                          long long kn0, long long kn1, long long n) {
    __shared__ A totals[STRIDED_REDUCE_BLOCK / 32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const unsigned nwarps = blockDim.x / 32;
    const long long rows = kn0 * kn1;
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        long long k0 = row / kn1, k1 = row % kn1;
        A* o = out + oo + k0 * os0 + k1 * os1;
        const A* in = x + xo + k0 * xs0 + k1 * xs1;
        A carry = R::template identity<A>();
        for (long long base = 0; base < n; base += blockDim.x) {
            long long j = base + threadIdx.x;
            A v = j < n ? in[j * xsa] : R::template identity<A>();
            v = warp_scan<R>(v, lane);
            if (lane == 31) totals[warp] = v;
            __syncthreads();
            if (warp == 0) {
                A w = lane < nwarps ? totals[lane] : R::template identity<A>();
                w = warp_scan<R>(w, lane);
                if (lane < nwarps) totals[lane] = w;
            }
            __syncthreads();
            if (warp > 0) v = R::combine(totals[warp - 1], v);
            v = R::combine(carry, v);
            if (j < n) o[j * osa] = v;
            carry = R::combine(carry, totals[nwarps - 1]);
            __syncthreads();  // totals[] is rewritten by the next chunk
        }
    }
}

// argmax/argmin over rows: (value, index) pairs, the first index among equal values; NaN wins
// (the first NaN).  The reduced axis is never reordered, so an index is a position along it.
template <bool MAX, class T>
__device__ inline void arg_combine(T& v, long long& i, T v2, long long i2) {
    if (i2 < 0) return;
    if (i < 0) { v = v2; i = i2; return; }
    bool n1 = v != v, n2 = v2 != v2;
    bool take;
    if (n1 || n2) take = n2 && (!n1 || i2 < i);
    else if (v2 == v) take = i2 < i;
    else take = MAX ? v2 > v : v2 < v;
    if (take) { v = v2; i = i2; }
}

// one block's (value, index) pairs reduced to thread 0 of warp 0 (shuffles, then shared memory)
template <bool MAX, class T>
__device__ inline void block_arg_reduce(T& v, long long& i, T* pv, long long* pi) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (unsigned d = 16; d > 0; d /= 2) {
        T v2 = shfl_down(v, d);
        long long i2 = shfl_down(i, d);
        arg_combine<MAX>(v, i, v2, i2);
    }
    if (lane == 0) { pv[warp] = v; pi[warp] = i; }
    __syncthreads();
    if (warp == 0) {
        v = T(0);
        i = -1;
        if (lane < blockDim.x / 32) { v = pv[lane]; i = pi[lane]; }
        for (unsigned d = 16; d > 0; d /= 2) {
            T v2 = shfl_down(v, d);
            long long i2 = shfl_down(i, d);
            arg_combine<MAX>(v, i, v2, i2);
        }
    }
}

template <bool MAX, class T>
__global__ void argreduce_rows(long long* out, long long oo, long long os0, long long os1,
                               const T* x, long long xo, long long ks0, long long ks1,
                               long long rs, long long kn0, long long kn1, long long n) {
    __shared__ T pv[STRIDED_REDUCE_BLOCK / 32];
    __shared__ long long pi[STRIDED_REDUCE_BLOCK / 32];
    const long long rows = kn0 * kn1;
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        long long k0 = row / kn1, k1 = row % kn1;
        const T* base = x + xo + k0 * ks0 + k1 * ks1;
        T v = T(0);
        long long i = -1;
        for (long long j = threadIdx.x; j < n; j += blockDim.x) arg_combine<MAX>(v, i, base[j * rs], j);
        block_arg_reduce<MAX>(v, i, pv, pi);
        if (threadIdx.x == 0) out[oo + k0 * os0 + k1 * os1] = i;
        __syncthreads();
    }
}

// argmax/argmin of one long dense run (axis=None) in two passes, so that it is not left to one
// block: argreduce_chunks gives each block a chunk and writes the chunk's (first) best as a
// position in the run; argreduce_candidates then reduces those positions in one block.  The
// positions are global, so ties and NaN keep the first-index rule of arg_combine.

template <bool MAX, class T>
__global__ void argreduce_chunks(long long* cand, const T* x, long long xo, long long n,
                                 long long chunk) {
    __shared__ T pv[STRIDED_REDUCE_BLOCK / 32];
    __shared__ long long pi[STRIDED_REDUCE_BLOCK / 32];
    const long long lo = (long long)blockIdx.x * chunk;
    const long long hi = n - lo < chunk ? n : lo + chunk;
    const T* base = x + xo;
    T v = T(0);
    long long i = -1;
    for (long long j = lo + threadIdx.x; j < hi; j += blockDim.x) arg_combine<MAX>(v, i, base[j], j);
    block_arg_reduce<MAX>(v, i, pv, pi);
    if (threadIdx.x == 0) cand[blockIdx.x] = i;
}

template <bool MAX, class T>
__global__ void argreduce_candidates(long long* out, long long oo, const T* x, long long xo,
                                     const long long* cand, long long m) {
    __shared__ T pv[STRIDED_REDUCE_BLOCK / 32];
    __shared__ long long pi[STRIDED_REDUCE_BLOCK / 32];
    T v = T(0);
    long long i = -1;
    for (long long j = threadIdx.x; j < m; j += blockDim.x) {
        const long long c = cand[j];
        arg_combine<MAX>(v, i, x[xo + c], c);
    }
    block_arg_reduce<MAX>(v, i, pv, pi);
    if (threadIdx.x == 0) out[oo] = i;
}
