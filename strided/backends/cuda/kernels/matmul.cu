// Matrix product over broadcast batches: 16x16 output tiles, operand tiles staged in shared
// memory.  Batch b of the grid (blockIdx.z, plus `zbase` for grids beyond 65535) reads its
// element offsets from oo/ao/bo.  Serves the dtypes cuBLAS has no kernel for (integers, bool)
// and every dtype where cuBLAS cannot run (host execution).

#define STRIDED_TILE 16

template <class T>
__global__ void matmul_tiled(T* out, const long long* oo, long long osm, long long osn,
                             const T* a, const long long* ao, long long asm_, long long ask,
                             const T* b, const long long* bo, long long bsk, long long bsn,
                             long long m, long long k, long long n, long long zbase) {
    __shared__ T as[STRIDED_TILE][STRIDED_TILE];
    __shared__ T bs[STRIDED_TILE][STRIDED_TILE];
    const long long z = zbase + blockIdx.z;
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const long long row = (long long)blockIdx.y * STRIDED_TILE + ty;
    const long long col = (long long)blockIdx.x * STRIDED_TILE + tx;
    const T* pa = a + ao[z];
    const T* pb = b + bo[z];
    T acc = zero<T>();
    for (long long t = 0; t < k; t += STRIDED_TILE) {
        as[ty][tx] = (row < m && t + tx < k) ? pa[row * asm_ + (t + tx) * ask] : zero<T>();
        bs[ty][tx] = (t + ty < k && col < n) ? pb[(t + ty) * bsk + col * bsn] : zero<T>();
        __syncthreads();
        for (int i = 0; i < STRIDED_TILE; ++i) {
            if constexpr (is_bool<T>::value) acc = acc || (as[ty][i] && bs[i][tx]);
            else acc = acc + as[ty][i] * bs[i][tx];
        }
        __syncthreads();  // the tiles are overwritten by the next step
    }
    if (row < m && col < n) out[oo[z] + row * osm + col * osn] = acc;
}
