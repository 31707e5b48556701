// Convolution and pooling over images (N, C, H, W): im2col/col2im (a convolution is im2col and
// a batched matrix product, its input gradient a product and col2im) and max/average pooling
// with their backward passes.  One thread per output element, grid-stride, 64-bit indices;
// every pass is a gather (each thread sums what lands on its element), so results do not depend
// on thread order, except max_pool_backward, where one thread per plane adds each gradient at
// its recorded position in the order the cpu kernel does.

// out[(n, k, l)] (or [(k, n, l)] with channels_first), k = (c, i, j): the input pixel under tap
// (i, j) of the window at output position l, 0 in the padding.  x has any strides.
template <class T>
__global__ void im2col(T* out, const T* x, long long xo, long long xsn, long long xsc,
                       long long xsh, long long xsw, long long n, long long c, long long h,
                       long long w, long long kh, long long kw, long long dh, long long dw,
                       long long pt, long long pl, long long sh, long long sw, long long oh,
                       long long ow, bool channels_first) {
    const long long len = oh * ow, taps = kh * kw, k_all = c * taps, total = n * k_all * len;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        long long l = e % len, rest = e / len, b, k;
        if (channels_first) {
            b = rest % n;
            k = rest / n;
        } else {
            k = rest % k_all;
            b = rest / k_all;
        }
        long long ch = k / taps, t = k % taps, i = t / kw, j = t % kw;
        long long y = (l / ow) * sh - pt + i * dh, xx = (l % ow) * sw - pl + j * dw;
        T v = T(0);
        if (y >= 0 && y < h && xx >= 0 && xx < w) v = x[xo + b * xsn + ch * xsc + y * xsh + xx * xsw];
        out[e] = v;
    }
}

// out (N, C, H, W) dense: every image element sums the column entries of the windows and taps
// that read it (the adjoint of im2col).  cols (N, C*kh*kw, L) has strides (csn, csk, csl).
template <class T>
__global__ void col2im(T* out, const T* cols, long long co, long long csn, long long csk,
                       long long csl, long long n, long long c, long long h, long long w,
                       long long kh, long long kw, long long dh, long long dw, long long pt,
                       long long pl, long long sh, long long sw, long long oh, long long ow) {
    const long long total = n * c * h * w;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        long long xx = e % w, y = (e / w) % h, ch = (e / (w * h)) % c, b = e / (w * h * c);
        T acc = T(0);
        for (long long i = 0; i < kh; ++i) {
            long long ty = y + pt - i * dh;
            if (ty < 0 || ty % sh) continue;
            long long oy = ty / sh;
            if (oy >= oh) continue;
            for (long long j = 0; j < kw; ++j) {
                long long tx = xx + pl - j * dw;
                if (tx < 0 || tx % sw) continue;
                long long ox = tx / sw;
                if (ox >= ow) continue;
                acc += cols[co + b * csn + ((ch * kh + i) * kw + j) * csk + (oy * ow + ox) * csl];
            }
        }
        out[e] = acc;
    }
}

// window maxima of dense planes and their flat positions y*W + x in the plane: padding never
// wins, NaN always does (the last one), ties keep the first (the cpu kernel's rule)
template <class T>
__global__ void max_pool(T* vals, long long* idx, const T* x, long long planes, long long h,
                         long long w, long long kh, long long kw, long long sh, long long sw,
                         long long ph, long long pw, long long dh, long long dw, long long oh,
                         long long ow) {
    const long long total = planes * oh * ow;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        long long ox = e % ow, oy = (e / ow) % oh, p = e / (ow * oh);
        long long hs = oy * sh - ph, ws = ox * sw - pw;
        long long he = hs + (kh - 1) * dh + 1, we = ws + (kw - 1) * dw + 1;
        he = he < h ? he : h;
        we = we < w ? we : w;
        while (hs < 0) hs += dh;
        while (ws < 0) ws += dw;
        const T* plane = x + p * h * w;
        T best = lowest<T>();  // -inf
        long long at = hs * w + ws;
        for (long long y = hs; y < he; y += dh)
            for (long long xx = ws; xx < we; xx += dw) {
                T v = plane[y * w + xx];
                if (v > best || v != v) {
                    best = v;
                    at = y * w + xx;
                }
            }
        vals[e] = best;
        idx[e] = at;
    }
}

// the gradient of max pooling: one thread per plane adds each output's gradient at the position
// its maximum came from, in output order (as the cpu kernel, so float sums agree bit for bit)
template <class T>
__global__ void max_pool_backward(T* out, const T* g, const long long* idx, long long planes,
                                  long long hw, long long len) {
    for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < planes;
         p += (long long)gridDim.x * blockDim.x) {
        T* o = out + p * hw;
        for (long long i = 0; i < hw; ++i) o[i] = T(0);
        for (long long j = 0; j < len; ++j) o[idx[p * len + j]] += g[p * len + j];
    }
}

// PyTorch's average-pooling window of output (oy, ox): clipped bounds and its divisor
struct avg_window {
    long long hs, he, ws, we, d;
};

__device__ inline avg_window window_of(long long oy, long long ox, long long h, long long w,
                                       long long kh, long long kw, long long sh, long long sw,
                                       long long ph, long long pw, bool count_include_pad,
                                       long long divisor) {
    avg_window r;
    long long hs = oy * sh - ph, ws = ox * sw - pw;
    long long he = hs + kh < h + ph ? hs + kh : h + ph;
    long long we = ws + kw < w + pw ? ws + kw : w + pw;
    long long size = (he - hs) * (we - ws);
    r.hs = hs > 0 ? hs : 0;
    r.ws = ws > 0 ? ws : 0;
    r.he = he < h ? he : h;
    r.we = we < w ? we : w;
    r.d = divisor ? divisor : (count_include_pad ? size : (r.he - r.hs) * (r.we - r.ws));
    return r;
}

// window means (accumulated in double, as on cpu) with PyTorch's divisor rules
template <class T>
__global__ void avg_pool(T* out, const T* x, long long planes, long long h, long long w,
                         long long kh, long long kw, long long sh, long long sw, long long ph,
                         long long pw, long long oh, long long ow, bool count_include_pad,
                         long long divisor) {
    const long long total = planes * oh * ow;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        long long ox = e % ow, oy = (e / ow) % oh, p = e / (ow * oh);
        avg_window r = window_of(oy, ox, h, w, kh, kw, sh, sw, ph, pw, count_include_pad, divisor);
        const T* plane = x + p * h * w;
        double acc = 0.0;
        for (long long y = r.hs; y < r.he; ++y)
            for (long long xx = r.ws; xx < r.we; ++xx) acc += (double)plane[y * w + xx];
        out[e] = (r.hs >= r.he || r.ws >= r.we) ? T(0) : T(acc / (double)r.d);
    }
}

// the adjoint of avg_pool: every input element gathers g / divisor of the windows that hold it
template <class T>
__global__ void avg_pool_backward(T* out, const T* g, long long planes, long long h, long long w,
                                  long long kh, long long kw, long long sh, long long sw,
                                  long long ph, long long pw, long long oh, long long ow,
                                  bool count_include_pad, long long divisor) {
    const long long total = planes * h * w;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        long long xx = e % w, y = (e / w) % h, p = e / (w * h);
        // windows starting at most kh - 1 rows above y (and kw - 1 columns left of xx)
        long long oy0 = y + ph - kh + 1, ox0 = xx + pw - kw + 1;
        oy0 = oy0 > 0 ? (oy0 + sh - 1) / sh : 0;
        ox0 = ox0 > 0 ? (ox0 + sw - 1) / sw : 0;
        double acc = 0.0;
        for (long long oy = oy0; oy < oh && oy * sh - ph <= y; ++oy)
            for (long long ox = ox0; ox < ow && ox * sw - pw <= xx; ++ox) {
                avg_window r =
                    window_of(oy, ox, h, w, kh, kw, sh, sw, ph, pw, count_include_pad, divisor);
                if (y < r.hs || y >= r.he || xx < r.ws || xx >= r.we) continue;
                acc += (double)g[(p * oh + oy) * ow + ox] / (double)r.d;
            }
        out[e] = T(acc);
    }
}
