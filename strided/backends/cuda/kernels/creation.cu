// Index sequences written into a dense output: arange and linspace.  C is the type the values
// are computed in (long long for integer ranges, double or complex double otherwise), as NumPy
// computes them before the cast to the output dtype.

template <class O, class C>
__global__ void arange(O* out, long long n, C start, C step) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = cvt<O>(start + step * cvt<C>(i));
}

// linspace: start + i * step, the last element exactly `stop` when `endpoint` is set
template <class O, class C>
__global__ void linspace(O* out, long long n, C start, C stop, C step, bool endpoint) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = cvt<O>(endpoint && i == n - 1 ? stop : start + cvt<C>(i) * step);
}
