// strided's cuda prelude: scalar types, traits, complex numbers, math and conversions.
// Compiled by NVRTC (no host headers there) and, for host execution, by g++ after cuda_host.h.
#pragma once

typedef bool b1;
typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef float f32;
typedef double f64;

template <class R>
struct alignas(2 * sizeof(R)) cplx {
    R re, im;
    typedef R real;
};
typedef cplx<float> c64;
typedef cplx<double> c128;

template <class A, class B> struct same_t { static constexpr bool value = false; };
template <class A> struct same_t<A, A> { static constexpr bool value = true; };
template <class T> struct is_cplx { static constexpr bool value = false; };
template <class R> struct is_cplx<cplx<R>> { static constexpr bool value = true; };
template <class T> struct is_flt { static constexpr bool value = false; };
template <> struct is_flt<float> { static constexpr bool value = true; };
template <> struct is_flt<double> { static constexpr bool value = true; };
template <class T> struct is_bool { static constexpr bool value = same_t<T, bool>::value; };
template <class T> struct is_int {
    static constexpr bool value = !is_cplx<T>::value && !is_flt<T>::value && !is_bool<T>::value;
};
template <class T> struct is_signed_int { static constexpr bool value = is_int<T>::value && (T)-1 < (T)0; };

// limits (reduction identities)
template <class T> __device__ inline T lowest();
template <class T> __device__ inline T highest();
#define STRIDED_LIMITS(T, LO, HI) \
    template <> __device__ inline T lowest<T>() { return LO; } \
    template <> __device__ inline T highest<T>() { return HI; }
STRIDED_LIMITS(bool, false, true)
STRIDED_LIMITS(i8, -128, 127)
STRIDED_LIMITS(i16, -32768, 32767)
STRIDED_LIMITS(i32, -2147483647 - 1, 2147483647)
STRIDED_LIMITS(i64, -9223372036854775807LL - 1, 9223372036854775807LL)
STRIDED_LIMITS(u8, 0, 255)
STRIDED_LIMITS(u16, 0, 65535)
STRIDED_LIMITS(u32, 0u, 4294967295u)
STRIDED_LIMITS(u64, 0ull, 18446744073709551615ull)
STRIDED_LIMITS(f32, -__int_as_float(0x7f800000), __int_as_float(0x7f800000))
STRIDED_LIMITS(f64, -__longlong_as_double(0x7ff0000000000000LL), __longlong_as_double(0x7ff0000000000000LL))
#undef STRIDED_LIMITS

// math: one name per function for float and double (C names, which NVRTC and g++ both have)
#define STRIDED_MATH1(name) \
    __device__ inline float sm_##name(float x) { return name##f(x); } \
    __device__ inline double sm_##name(double x) { return name(x); }
#define STRIDED_MATH2(name) \
    __device__ inline float sm_##name(float x, float y) { return name##f(x, y); } \
    __device__ inline double sm_##name(double x, double y) { return name(x, y); }
STRIDED_MATH1(floor) STRIDED_MATH1(ceil) STRIDED_MATH1(trunc) STRIDED_MATH1(rint)
STRIDED_MATH1(sqrt) STRIDED_MATH1(exp) STRIDED_MATH1(expm1) STRIDED_MATH1(log)
STRIDED_MATH1(log1p) STRIDED_MATH1(log2) STRIDED_MATH1(log10) STRIDED_MATH1(sin)
STRIDED_MATH1(cos) STRIDED_MATH1(tan) STRIDED_MATH1(asin) STRIDED_MATH1(acos)
STRIDED_MATH1(atan) STRIDED_MATH1(sinh) STRIDED_MATH1(cosh) STRIDED_MATH1(tanh)
STRIDED_MATH1(asinh) STRIDED_MATH1(acosh) STRIDED_MATH1(atanh) STRIDED_MATH1(fabs)
STRIDED_MATH2(atan2) STRIDED_MATH2(hypot) STRIDED_MATH2(copysign) STRIDED_MATH2(nextafter)
STRIDED_MATH2(fmod) STRIDED_MATH2(pow)
#undef STRIDED_MATH1
#undef STRIDED_MATH2

template <class T> __device__ inline bool sm_isnan(T x) { return x != x; }
template <class T> __device__ inline bool sm_isfinite(T x) { return x - x == x - x; }
template <class T> __device__ inline bool sm_isinf(T x) { return x == x && x - x != x - x; }
template <class T> __device__ inline bool sm_signbit(T x) { return sm_copysign((T)1, x) < 0; }

// complex arithmetic
template <class R> __device__ inline cplx<R> operator+(cplx<R> a, cplx<R> b) { return {a.re + b.re, a.im + b.im}; }
template <class R> __device__ inline cplx<R> operator-(cplx<R> a, cplx<R> b) { return {a.re - b.re, a.im - b.im}; }
template <class R> __device__ inline cplx<R> operator-(cplx<R> a) { return {-a.re, -a.im}; }
template <class R> __device__ inline cplx<R> operator*(cplx<R> a, cplx<R> b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class R> __device__ inline cplx<R> operator/(cplx<R> a, cplx<R> b) {
    // Smith's algorithm: no overflow of |b|^2 for large b
    R ar = sm_fabs(b.re), ai = sm_fabs(b.im);
    if (ar == 0 && ai == 0) return {a.re / ar, a.im / ai};
    if (ar >= ai) {
        R r = b.im / b.re, d = b.re + b.im * r;
        return {(a.re + a.im * r) / d, (a.im - a.re * r) / d};
    }
    R r = b.re / b.im, d = b.im + b.re * r;
    return {(a.re * r + a.im) / d, (a.im * r - a.re) / d};
}
template <class R> __device__ inline bool operator==(cplx<R> a, cplx<R> b) { return a.re == b.re && a.im == b.im; }
template <class R> __device__ inline bool operator!=(cplx<R> a, cplx<R> b) { return !(a == b); }
template <class R> __device__ inline bool sm_isnan(cplx<R> a) { return sm_isnan(a.re) || sm_isnan(a.im); }
template <class R> __device__ inline bool sm_isinf(cplx<R> a) { return sm_isinf(a.re) || sm_isinf(a.im); }
template <class R> __device__ inline bool sm_isfinite(cplx<R> a) { return sm_isfinite(a.re) && sm_isfinite(a.im); }

// value conversion with NumPy's meaning (complex to real keeps the real part; to bool: != 0)
template <class O, class T> __device__ inline O cvt(T v) {
    if constexpr (is_cplx<O>::value) {
        typedef typename O::real R;
        if constexpr (is_cplx<T>::value) return O{(R)v.re, (R)v.im};
        else return O{(R)v, (R)0};
    } else if constexpr (is_cplx<T>::value) {
        if constexpr (is_bool<O>::value) return v.re != 0 || v.im != 0;
        else return (O)v.re;
    } else if constexpr (is_bool<O>::value) {
        return v != 0;
    } else {
        return (O)v;
    }
}
template <class T> __device__ inline T zero() { return cvt<T>(0); }
template <class T> __device__ inline T one() { return cvt<T>(1); }

// complex functions, with C99 Annex G's special values (as the cpu backend's _scalar.py):
// exp, expm1, log, log1p, sqrt and the hyperbolic functions; sin, cos and tan through
// sin(z) = -i sinh(iz), cos(z) = cosh(iz), tan(z) = -i tanh(iz)
template <class R> __device__ inline bool sm_fin(R v) { return v - v == v - v; }
template <class R> __device__ inline R sm_inf() { return highest<R>(); }

template <class R> __device__ inline cplx<R> cx_exp(cplx<R> z) {
    R x = z.re, y = z.im;
    if (y == 0) return {sm_exp(x), y};
    if (!sm_fin(y)) {
        if (x == -sm_inf<R>()) return {0, 0};
        if (x == sm_inf<R>()) return {x, y - y};
        return {y - y, y - y};
    }
    R e = sm_exp(x);
    return {e * sm_cos(y), e * sm_sin(y)};
}

template <class R> __device__ inline cplx<R> cx_expm1(cplx<R> z) {
    R x = z.re, y = z.im;
    if (x == 0 && y == 0) return {0, y};
    if (sm_fin(x) && sm_fin(y) && sm_fabs(x) < 1 && sm_fabs(y) < 1) {
        // exp(x)cos(y) - 1 = expm1(x)cos(y) - 2 sin(y/2)^2: accurate near zero
        R h = sm_sin(y / 2);
        return {sm_expm1(x) * sm_cos(y) - 2 * h * h, sm_exp(x) * sm_sin(y)};
    }
    cplx<R> e = cx_exp(z);
    return {e.re - 1, e.im};
}

template <class R> __device__ inline cplx<R> cx_log(cplx<R> z) {
    R a = z.re, b = z.im, h = sm_hypot(a, b);
    // near |z| = 1, log|z| from log1p(|z|^2 - 1) keeps its relative accuracy
    R re = (h > (R)0.71 && h < (R)1.73) ? (R)0.5 * sm_log1p((a - 1) * (a + 1) + b * b) : sm_log(h);
    return {re, sm_atan2(b, a)};
}

template <class R> __device__ inline cplx<R> cx_log_base(cplx<R> z, double ln_base) {
    cplx<R> l = cx_log(z);
    return {l.re / (R)ln_base, l.im / (R)ln_base};
}

template <class R> __device__ inline cplx<R> cx_log1p(cplx<R> z) {
    R a = z.re, b = z.im;
    if (!(sm_fabs(a) < (R)1e15 && sm_fabs(b) < (R)1e15)) return cx_log(cplx<R>{a + 1, b});
    // |1 + z|^2 - 1 = a (2 + a) + b^2: no cancellation for small z
    return {(R)0.5 * sm_log1p(a * (2 + a) + b * b), sm_atan2(b, 1 + a)};
}

template <class R> __device__ inline cplx<R> cx_sqrt_exact(R a, R b) {
    const R inf = sm_inf<R>();
    if (a == 0 && b == 0) return {0, b};
    if (b == inf || b == -inf) return {inf, b};
    if (a != a) return {a, b == b ? a : b};
    if (a == inf) return {a, b == b ? sm_copysign((R)0, b) : b};
    if (a == -inf) return {b == b ? (R)0 : b, sm_copysign(inf, b)};
    if (b != b) return {b, b};
    // scale huge and tiny values by a power of 4 so that |a| + |z| stays finite and normal
    R scale = 1, big = highest<R>() / 8;
    R tiny = sizeof(R) == 8 ? (R)1e-300 : (R)1e-35;
    if (sm_fabs(a) > big || sm_fabs(b) > big) { a *= (R)0.25; b *= (R)0.25; scale = 2; }
    else if (sm_fabs(a) < tiny && sm_fabs(b) < tiny) {
        R up = sizeof(R) == 8 ? (R)1e200 : (R)1e24;  // an even power of ten: sqrt is exact-ish
        a *= up; b *= up; scale = 1 / sm_sqrt(up);
    }
    R t = sm_sqrt((sm_fabs(a) + sm_hypot(a, b)) / 2);
    if (a >= 0) return {t * scale, b / (2 * t) * scale};
    return {sm_fabs(b) / (2 * t) * scale, sm_copysign(t, b) * scale};
}
__device__ inline c128 cx_sqrt(c128 z) { return cx_sqrt_exact(z.re, z.im); }
__device__ inline c64 cx_sqrt(c64 z) {  // in double precision: its range covers |z| + |re z|
    c128 r = cx_sqrt_exact((double)z.re, (double)z.im);
    return {(float)r.re, (float)r.im};
}

template <class R> __device__ inline cplx<R> cx_cosh(cplx<R> z) {
    R x = z.re, y = z.im;
    const R inf = sm_inf<R>();
    if (sm_fin(x) && sm_fin(y)) {
        if (y == 0) return {sm_cosh(x), x * y};
        return {sm_cosh(x) * sm_cos(y), sm_sinh(x) * sm_sin(y)};
    }
    if (x == 0) return {y - y, 0};
    if (y == 0) return {x * x, x == x ? sm_copysign((R)0, x) * y : y};
    if (sm_fin(x)) return {y - y, x * (y - y)};
    if (x == inf || x == -inf) {
        if (!sm_fin(y)) return {x * x, x * (y - y)};
        return {(x * x) * sm_cos(y), x * sm_sin(y)};
    }
    return {(x * x) * (y - y), (x + x) * (y - y)};
}

template <class R> __device__ inline cplx<R> cx_sinh(cplx<R> z) {
    R x = z.re, y = z.im;
    const R inf = sm_inf<R>();
    if (sm_fin(x) && sm_fin(y)) {
        if (y == 0) return {sm_sinh(x), y};
        return {sm_sinh(x) * sm_cos(y), sm_cosh(x) * sm_sin(y)};
    }
    if (x == 0) return {x, y - y};
    if (y == 0) return {x, y};
    if (sm_fin(x)) return {y - y, x * (y - y)};
    if (x == inf || x == -inf) {
        if (!sm_fin(y)) return {x * x, x * (y - y)};
        return {x * sm_cos(y), inf * sm_sin(y)};
    }
    return {(x * x) * (y - y), (x + x) * (y - y)};
}

// Kahan's tanh formulation ("Branch cuts for complex elementary functions", 1987): finite where
// exp() would overflow
template <class R> __device__ inline cplx<R> cx_tanh(cplx<R> z) {
    R x = z.re, y = z.im;
    if (!sm_fin(x)) {
        if (x != x) return {x, y == 0 ? y : x * y};
        return {sm_copysign((R)1, x), sm_copysign((R)0, y)};
    }
    if (!sm_fin(y)) return {x == 0 ? x : y - y, y - y};
    if (sm_fabs(x) >= (R)22) {
        R e = sm_exp(-sm_fabs(x));
        return {sm_copysign((R)1, x), 4 * sm_sin(y) * sm_cos(y) * e * e};
    }
    R t = sm_tan(y), beta = 1 + t * t, s = sm_sinh(x), rho = sm_sqrt(1 + s * s);
    R denom = 1 + beta * s * s;
    return {beta * rho * s / denom, t / denom};
}

template <class R> __device__ inline cplx<R> cx_sin(cplx<R> z) {
    cplx<R> w = cx_sinh(cplx<R>{-z.im, z.re});
    return {w.im, -w.re};
}
template <class R> __device__ inline cplx<R> cx_cos(cplx<R> z) { return cx_cosh(cplx<R>{-z.im, z.re}); }
template <class R> __device__ inline cplx<R> cx_tan(cplx<R> z) {
    cplx<R> w = cx_tanh(cplx<R>{-z.im, z.re});
    return {w.im, -w.re};
}

// complex inverse functions.  The standard's (C99 Annex G's) special values are decided first;
// finite arguments take Kahan's formulas through sqrt(1 - z) and sqrt(1 + z) ("Branch cuts for
// complex elementary functions", 1987), which keep the branch cuts' signed zeros; asin and atan
// are asinh and atanh rotated (asin(z) = -i asinh(iz), atan(z) = -i atanh(iz)).  complex64 is
// computed in double precision and rounded once.
template <class R> __device__ inline R sm_pi() { return (R)3.14159265358979323846264338327950288; }

__device__ inline c128 cx_asinh_exact(double x, double y) {
    const double inf = sm_inf<double>(), pi = sm_pi<double>();
    double ax = sm_fabs(x), ay = sm_fabs(y), re, im;
    if (sm_fin(ax) && sm_fin(ay)) {
        // asinh(z) = -i asin(iz): with w = iz = -y + ix, asin(w) = atan(Re w / Re(s1 s2))
        // + i asinh(Im(conj(s1) s2)), s1 = sqrt(1 - w), s2 = sqrt(1 + w)
        c128 s1 = cx_sqrt_exact(1 + y, -x), s2 = cx_sqrt_exact(1 - y, x);
        double a = sm_atan2(-y, s1.re * s2.re - s1.im * s2.im);
        double b = sm_asinh(s1.re * s2.im - s1.im * s2.re);
        return {b, -a};
    }
    if (ay == inf && ax != ax) return {sm_copysign(inf, y), ax};  // real part's sign: unspecified
    if (ay == inf) { re = inf; im = ax == inf ? pi / 4 : pi / 2; }
    else if (ax == inf) { re = inf; im = ay == ay ? 0.0 : ay; }
    else if (ax != ax) { re = ax; im = ay == 0 ? 0.0 : ax; }
    else { re = ay; im = ay; }  // x finite, y NaN
    return {sm_copysign(re, x), sm_copysign(im, y)};
}

__device__ inline c128 cx_acos_exact(double x, double y) {
    const double inf = sm_inf<double>(), pi = sm_pi<double>();
    double re, im;  // for the upper half plane; acos(conj z) = conj(acos z)
    if (sm_fin(x) && sm_fin(y)) {
        c128 s1 = cx_sqrt_exact(1 - x, -y), s2 = cx_sqrt_exact(1 + x, y);
        re = 2 * sm_atan2(s1.re, s2.re);
        im = sm_asinh(s2.re * s1.im - s2.im * s1.re);
        return {re, im};
    }
    double ay = sm_fabs(y);
    if (x != x) { re = x; im = ay == inf ? -inf : x; }
    else if (y != y) {
        if (x == 0) { re = pi / 2; im = y; }
        else if (!sm_fin(x)) { re = y; im = -inf; }  // the imaginary part's sign: unspecified
        else { re = y; im = y; }
        return {re, im};
    }
    else if (ay == inf) { im = -inf; re = x == -inf ? 3 * pi / 4 : (x == inf ? pi / 4 : pi / 2); }
    else { im = -inf; re = x == -inf ? pi : 0.0; }  // x infinite, y finite
    return {re, sm_signbit(y) ? -im : im};
}

__device__ inline c128 cx_acosh_exact(double x, double y) {
    const double inf = sm_inf<double>(), pi = sm_pi<double>();
    double re, im;
    if (sm_fin(x) && sm_fin(y)) {
        c128 s1 = cx_sqrt_exact(x - 1, y), s2 = cx_sqrt_exact(x + 1, y);
        re = sm_asinh(s1.re * s2.re + s1.im * s2.im);
        im = 2 * sm_atan2(s1.im, s2.re);
        return {re, im};
    }
    double ay = sm_fabs(y);
    if (x != x) { re = ay == inf ? inf : x; im = x; return {re, im}; }
    if (y != y) {
        if (!sm_fin(x)) { re = inf; im = y; }
        else if (x == 0) { re = y; im = pi / 2; }
        else { re = y; im = y; }
        return {re, im};
    }
    if (ay == inf) { re = inf; im = x == -inf ? 3 * pi / 4 : (x == inf ? pi / 4 : pi / 2); }
    else { re = inf; im = x == -inf ? pi : 0.0; }  // x infinite, y finite
    return {re, sm_signbit(y) ? -im : im};
}

__device__ inline c128 cx_atanh_exact(double x, double y) {
    const double inf = sm_inf<double>(), pi = sm_pi<double>();
    double ax = sm_fabs(x), ay = sm_fabs(y), re, im;
    if (sm_fin(ax) && sm_fin(ay)) {
        if (ax > 1e150 || ay > 1e150) {
            // |z| huge: atanh(z) ~ 1/z, and the imaginary part is pi/2
            double h = sm_hypot(ax, ay);
            re = (ax / h) / h;
            im = pi / 2;
        } else {
            double d = (1 - ax) * (1 - ax) + ay * ay;
            // log1p keeps small x accurate; near z = 1, where d underflows, the ratio of the
            // distances to -1 and 1 (hypot does not underflow)
            re = d > 1e-280 ? 0.25 * sm_log1p(4 * ax / d)
                            : 0.5 * (sm_log(sm_hypot(1 + ax, ay)) - sm_log(sm_hypot(1 - ax, ay)));
            im = 0.5 * sm_atan2(2 * ay, (1 - ax) * (1 + ax) - ay * ay);
        }
    } else if (ay == inf) { re = 0.0; im = pi / 2; }
    else if (ax == inf) { re = 0.0; im = ay == ay ? pi / 2 : ay; }
    else if (ax != ax) { re = ax; im = ax; }
    else { re = ax == 0 ? ax : ay; im = ay; }  // x finite, y NaN
    return {sm_copysign(re, x), sm_copysign(im, y)};
}

#define STRIDED_CX_INVERSE(name) \
    __device__ inline c128 cx_##name(c128 z) { return cx_##name##_exact(z.re, z.im); } \
    __device__ inline c64 cx_##name(c64 z) { \
        c128 r = cx_##name##_exact((double)z.re, (double)z.im); \
        return {(float)r.re, (float)r.im}; \
    }
STRIDED_CX_INVERSE(asinh) STRIDED_CX_INVERSE(acos) STRIDED_CX_INVERSE(acosh) STRIDED_CX_INVERSE(atanh)
#undef STRIDED_CX_INVERSE

template <class R> __device__ inline cplx<R> cx_asin(cplx<R> z) {
    cplx<R> w = cx_asinh(cplx<R>{-z.im, z.re});
    return {w.im, -w.re};
}
template <class R> __device__ inline cplx<R> cx_atan(cplx<R> z) {
    cplx<R> w = cx_atanh(cplx<R>{-z.im, z.re});
    return {w.im, -w.re};
}

// complex power: z ** 0 is 1; integer exponents (up to 1024 in magnitude) by repeated squaring,
// as exact as products get; otherwise exp(w log z).  0 ** w is 0 where Re w > 0, and NaN
// otherwise.  complex64 in double precision, rounded once.
__device__ inline c128 cx_pow_exact(c128 z, c128 w) {
    const double nan = sm_inf<double>() - sm_inf<double>();
    if (w.re == 0 && w.im == 0) return {1, 0};
    if (z.re == 0 && z.im == 0) {
        if (w.re > 0) return {0, 0};
        return {nan, nan};
    }
    if (w.im == 0 && w.re == 1) return z;
    if (w.im == 0 && w.re == -1) return c128{1, 0} / z;
    if (w.im == 0 && w.re == sm_rint(w.re) && sm_fabs(w.re) <= 1024) {
        long long n = (long long)w.re, e = n < 0 ? -n : n;
        c128 result = {1, 0}, base = z;
        bool first = true;  // (1 + 0i) * z would turn an infinite part's 0 * inf into NaN
        while (e > 0) {
            if (e & 1) {
                result = first ? base : result * base;
                first = false;
            }
            e >>= 1;
            if (e > 0) base = base * base;
        }
        return n < 0 ? c128{1, 0} / result : result;
    }
    return cx_exp(w * cx_log(z));
}
__device__ inline c128 cx_pow(c128 z, c128 w) { return cx_pow_exact(z, w); }
__device__ inline c64 cx_pow(c64 z, c64 w) {
    c128 r = cx_pow_exact(c128{z.re, z.im}, c128{w.re, w.im});
    return {(float)r.re, (float)r.im};
}
