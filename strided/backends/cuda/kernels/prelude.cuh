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
