// Reductions: one block per output element (a row of the kept dimensions), its threads stride
// over the reduced elements (rank 2 after layout simplification), then reduce in registers with
// warp shuffles and across warps through shared memory.  Blocks loop over rows (grid-stride),
// so the barriers are reached by the whole block on every row.
//
// R is the reduction: R::identity<A>(), R::combine(a, b) and R::load<A>(x) (x converted to the
// accumulator type A, which is the output type).

#define STRIDED_REDUCE_BLOCK 256

template <class T>
__device__ inline T shfl_down(T v, unsigned d) {
    if constexpr (is_cplx<T>::value) {
        return T{shfl_down(v.re, d), shfl_down(v.im, d)};
    } else if constexpr (sizeof(T) < 4) {
        return (T)__shfl_down_sync(0xffffffffu, (int)v, d);
    } else {
        return __shfl_down_sync(0xffffffffu, v, d);
    }
}

template <class R, class A>
__device__ inline A warp_reduce(A acc) {
    for (unsigned d = 16; d > 0; d /= 2) acc = R::combine(acc, shfl_down(acc, d));
    return acc;
}

template <class R, class A, class T>
__global__ void reduce_rows(A* out, long long oo, long long os0, long long os1,
                            const T* x, long long xo, long long ks0, long long ks1,
                            long long rs0, long long rs1, long long kn0, long long kn1,
                            long long rn0, long long rn1) {
    __shared__ A partial[STRIDED_REDUCE_BLOCK / 32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const long long rows = kn0 * kn1, n = rn0 * rn1;
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        long long k0 = row / kn1, k1 = row % kn1;
        const T* base = x + xo + k0 * ks0 + k1 * ks1;
        A acc = R::template identity<A>();
        for (long long j = threadIdx.x; j < n; j += blockDim.x) {
            long long j0 = j / rn1, j1 = j % rn1;
            acc = R::combine(acc, R::template load<A>(base[j0 * rs0 + j1 * rs1]));
        }
        acc = warp_reduce<R>(acc);
        if (lane == 0) partial[warp] = acc;
        __syncthreads();
        if (warp == 0) {
            acc = lane < blockDim.x / 32 ? partial[lane] : R::template identity<A>();
            acc = warp_reduce<R>(acc);
            if (lane == 0) out[oo + k0 * os0 + k1 * os1] = acc;
        }
        __syncthreads();  // partial[] is reused by the next row
    }
}

struct red_sum {
    template <class A> __device__ static A identity() { return zero<A>(); }
    template <class A> __device__ static A combine(A a, A b) { return a + b; }
    template <class A, class T> __device__ static A load(T v) { return cvt<A>(v); }
};
struct red_prod {
    template <class A> __device__ static A identity() { return one<A>(); }
    template <class A> __device__ static A combine(A a, A b) { return a * b; }
    template <class A, class T> __device__ static A load(T v) { return cvt<A>(v); }
};
// max/min: NaN propagates (a NaN operand wins every comparison)
struct red_max {
    template <class A> __device__ static A identity() { return lowest<A>(); }
    template <class A> __device__ static A combine(A a, A b) { return (a > b || a != a) ? a : b; }
    template <class A, class T> __device__ static A load(T v) { return cvt<A>(v); }
};
struct red_min {
    template <class A> __device__ static A identity() { return highest<A>(); }
    template <class A> __device__ static A combine(A a, A b) { return (a < b || a != a) ? a : b; }
    template <class A, class T> __device__ static A load(T v) { return cvt<A>(v); }
};
struct red_any {
    template <class A> __device__ static A identity() { return false; }
    template <class A> __device__ static A combine(A a, A b) { return a || b; }
    template <class A, class T> __device__ static A load(T v) { return cvt<bool>(v); }
};
struct red_all {
    template <class A> __device__ static A identity() { return true; }
    template <class A> __device__ static A combine(A a, A b) { return a && b; }
    template <class A, class T> __device__ static A load(T v) { return cvt<bool>(v); }
};

// A block's threads combine their accumulators: warp shuffles, then the warps' results
// through shared memory; thread 0 gets the block's result (others: their warp's).
template <class R, class A>
__device__ inline A block_reduce(A acc, A* partial) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    acc = warp_reduce<R>(acc);
    if (lane == 0) partial[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < blockDim.x / 32 ? partial[lane] : R::template identity<A>();
        acc = warp_reduce<R>(acc);
    }
    __syncthreads();  // partial[] may be reused by the caller
    return acc;
}

// A full reduction in one pass: every block reduces a grid-strided share of the (rank-2)
// input into partials[blockIdx.x]; the last block to finish (a ticket from an atomic counter,
// after a fence that publishes the partials) reduces the partials into out and resets the
// counter to 0 for the next launch.
template <class R, class A, class T>
__global__ void reduce_all(A* out, long long oo, const T* x, long long xo, long long rs0,
                           long long rs1, long long rn0, long long rn1, A* partials,
                           unsigned* counter) {
    __shared__ A partial[STRIDED_REDUCE_BLOCK / 32];
    __shared__ bool last;
    const long long n = rn0 * rn1;
    A acc = R::template identity<A>();
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (long long)gridDim.x * blockDim.x) {
        long long j0 = j / rn1, j1 = j % rn1;
        acc = R::combine(acc, R::template load<A>(x[xo + j0 * rs0 + j1 * rs1]));
    }
    acc = block_reduce<R>(acc, partial);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
        __threadfence();
        last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last) {
        acc = R::template identity<A>();
        for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
            acc = R::combine(acc, partials[b]);
        acc = block_reduce<R>(acc, partial);
        if (threadIdx.x == 0) {
            out[oo] = acc;
            *counter = 0;
        }
    }
}
