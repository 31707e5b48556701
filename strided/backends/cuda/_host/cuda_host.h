// CUDA C compiled as C++ by g++: the host execution layer of strided's cuda backend.
//
// A kernel source written for NVRTC is compiled unchanged after this header.  Blocks run one at a
// time on the calling OS thread.  Kernels without barriers run their threads as a plain loop;
// a module built with STRIDED_HOST_FIBERS (its source uses __syncthreads, __syncwarp, shuffles or
// votes) runs each CUDA thread as a ucontext fiber that runs until its next barrier: a block
// barrier releases when every thread of the block waits there, a warp barrier when every live
// lane of the warp does.  __shared__ variables are thread-local statics, so one block at a time
// per OS thread sees them.  Atomics are plain read-modify-writes: blocks never run concurrently.
#pragma once

#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __noinline__
#define __forceinline__ inline
#define __shared__ static thread_local
#define __constant__ static
#define __restrict__ __restrict
#define __align__(n) alignas(n)
#define __launch_bounds__(...)

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
};

inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;
constexpr int warpSize = 32;

namespace strided_host {

enum State { RUNNABLE, AT_BLOCK_BARRIER, AT_WARP_BARRIER, FINISHED };

// A fiber starts on its own stack through makecontext/swapcontext; after that it and the
// scheduler switch with _setjmp/_longjmp, which keep the signal mask as it is: swapcontext saves
// and restores it with a system call per switch, most of a barrier kernel's launch time (a
// block of 256 threads crossing 9 barriers switches ~4,600 times).
struct Fiber {
    ucontext_t ctx;
    jmp_buf resume;  // where the fiber continues, once it has started
    bool started;
    State state;
    uint3 idx;
    unsigned linear;
};

inline thread_local bool fibers_on = false;
inline thread_local Fiber* current = nullptr;
inline thread_local ucontext_t scheduler;
inline thread_local jmp_buf scheduler_resume;
// the fibers' stacks, kept for the next launch: allocating them zero-filled for every launch
// (16 MB for 256 threads) was ~40% of its time
inline thread_local std::unique_ptr<char[]> stacks;
inline thread_local size_t stacks_size = 0;
inline thread_local std::string failure;  // set when a launch must stop (reported to Python)
inline thread_local std::vector<unsigned long long> exchange;  // shuffle/vote slots, per thread

inline unsigned linear_tid() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

inline void wait(State s) {
    if (!fibers_on) {
        failure = "a barrier or warp intrinsic ran in a module built without fibers";
        return;
    }
    current->state = s;
    if (!_setjmp(current->resume)) _longjmp(scheduler_resume, 1);
}

}  // namespace strided_host

inline void __syncthreads() { strided_host::wait(strided_host::AT_BLOCK_BARRIER); }
inline void __syncwarp(unsigned = 0xffffffffu) { strided_host::wait(strided_host::AT_WARP_BARRIER); }
inline void __threadfence() {}
inline void __threadfence_block() {}

// warp exchange: every lane publishes 8 bytes, waits for its warp, reads, waits again (so that
// no lane overwrites its slot before the others have read it)
namespace strided_host {
template <class T>
inline T exchange_read(T v, int src_lane, bool valid) {
    static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
    unsigned me = linear_tid();
    unsigned base = me - me % 32;
    unsigned long long bits = 0;
    memcpy(&bits, &v, sizeof(T));
    exchange[me] = bits;
    __syncwarp();
    T r = v;
    unsigned total = blockDim.x * blockDim.y * blockDim.z;
    if (valid && base + src_lane < total) memcpy(&r, &exchange[base + src_lane], sizeof(T));
    __syncwarp();
    return r;
}
inline unsigned vote(bool p) {
    unsigned me = linear_tid();
    unsigned base = me - me % 32;
    exchange[me] = p ? 1 : 0;
    __syncwarp();
    unsigned total = blockDim.x * blockDim.y * blockDim.z, m = 0;
    for (unsigned l = 0; l < 32 && base + l < total; ++l)
        if (exchange[base + l]) m |= 1u << l;
    __syncwarp();
    return m;
}
}  // namespace strided_host

template <class T>
inline T __shfl_sync(unsigned, T v, int src, int width = 32) {
    int lane = strided_host::linear_tid() % 32;
    int seg = lane - lane % width;
    return strided_host::exchange_read(v, seg + ((src % width) + width) % width, true);
}
template <class T>
inline T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
    int lane = strided_host::linear_tid() % 32;
    int seg = lane - lane % width;
    int src = lane + (int)delta;
    return strided_host::exchange_read(v, src, src < seg + width);
}
template <class T>
inline T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32) {
    int lane = strided_host::linear_tid() % 32;
    int seg = lane - lane % width;
    int src = lane - (int)delta;
    return strided_host::exchange_read(v, src, src >= seg);
}
template <class T>
inline T __shfl_xor_sync(unsigned, T v, int mask, int width = 32) {
    int lane = strided_host::linear_tid() % 32;
    int seg = lane - lane % width;
    int src = lane ^ mask;
    return strided_host::exchange_read(v, src, src >= seg && src < seg + width);
}
inline unsigned __ballot_sync(unsigned, int p) { return strided_host::vote(p != 0); }
inline int __any_sync(unsigned, int p) { return strided_host::vote(p != 0) != 0; }
inline int __all_sync(unsigned m, int p) {
    unsigned live = strided_host::vote(true);
    return (strided_host::vote(p != 0) & live & m) == (live & m);
}

// atomics: blocks run one at a time and fibers switch only at barriers, so plain updates suffice
template <class T>
inline T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }
template <class T>
inline T atomicSub(T* p, T v) { T old = *p; *p = old - v; return old; }
template <class T>
inline T atomicExch(T* p, T v) { T old = *p; *p = v; return old; }
template <class T>
inline T atomicMax(T* p, T v) { T old = *p; if (v > old) *p = v; return old; }
template <class T>
inline T atomicMin(T* p, T v) { T old = *p; if (v < old) *p = v; return old; }
template <class T>
inline T atomicCAS(T* p, T cmp, T v) { T old = *p; if (old == cmp) *p = v; return old; }
template <class T>
inline T atomicOr(T* p, T v) { T old = *p; *p = old | v; return old; }
template <class T>
inline T atomicAnd(T* p, T v) { T old = *p; *p = old & v; return old; }
template <class T>
inline T __ldg(const T* p) { return *p; }

// bit casts CUDA offers as intrinsics
inline float __int_as_float(int v) { float r; memcpy(&r, &v, 4); return r; }
inline int __float_as_int(float v) { int r; memcpy(&r, &v, 4); return r; }
inline double __longlong_as_double(long long v) { double r; memcpy(&r, &v, 8); return r; }
inline long long __double_as_longlong(double v) { long long r; memcpy(&r, &v, 8); return r; }

namespace strided_host {

// thread orders: 0 forward, 1 reverse, 2 shuffled (seeded)
inline std::vector<unsigned> thread_order(unsigned n, int order, unsigned seed) {
    std::vector<unsigned> v(n);
    for (unsigned i = 0; i < n; ++i) v[i] = order == 1 ? n - 1 - i : i;
    if (order == 2) {
        std::mt19937 g(seed);
        std::shuffle(v.begin(), v.end(), g);
    }
    return v;
}

inline thread_local void (*fiber_body)(void*) = nullptr;
inline thread_local void* fiber_arg = nullptr;

inline void fiber_entry() {
    fiber_body(fiber_arg);
    current->state = FINISHED;
    _longjmp(scheduler_resume, 1);
}

// one block as fibers; returns false (with `failure` set) on a barrier no schedule can release
inline bool run_block_fibers(unsigned nthreads, const std::vector<unsigned>& order,
                             std::vector<Fiber>& fibers, char* stacks, size_t stack_size) {
    for (unsigned t = 0; t < nthreads; ++t) {
        Fiber& f = fibers[t];
        f.state = RUNNABLE;
        f.started = false;
        f.linear = t;
        f.idx = {t % blockDim.x, (t / blockDim.x) % blockDim.y, t / (blockDim.x * blockDim.y)};
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = &stacks[(size_t)t * stack_size];
        f.ctx.uc_stack.ss_size = stack_size;
        f.ctx.uc_link = nullptr;
        makecontext(&f.ctx, fiber_entry, 0);
    }
    for (;;) {
        for (unsigned t : order) {
            Fiber& f = fibers[t];
            if (f.state != RUNNABLE) continue;
            current = &f;
            threadIdx = f.idx;
            if (!_setjmp(scheduler_resume)) {
                if (f.started) _longjmp(f.resume, 1);
                f.started = true;
                swapcontext(&scheduler, &f.ctx);  // returns only through scheduler_resume
            }
            if (!failure.empty()) return false;
        }
        unsigned finished = 0, at_block = 0;
        for (unsigned t = 0; t < nthreads; ++t) {
            finished += fibers[t].state == FINISHED;
            at_block += fibers[t].state == AT_BLOCK_BARRIER;
        }
        if (finished == nthreads) return true;
        bool released = false;
        for (unsigned w = 0; w < nthreads; w += 32) {  // a warp whose live lanes all wait
            unsigned end = std::min(nthreads, w + 32), live = 0, waiting = 0;
            for (unsigned t = w; t < end; ++t) {
                live += fibers[t].state != FINISHED;
                waiting += fibers[t].state == AT_WARP_BARRIER;
            }
            if (live && waiting == live) {
                for (unsigned t = w; t < end; ++t)
                    if (fibers[t].state == AT_WARP_BARRIER) fibers[t].state = RUNNABLE;
                released = true;
            }
        }
        if (released) continue;
        if (at_block == nthreads) {
            for (unsigned t = 0; t < nthreads; ++t) fibers[t].state = RUNNABLE;
            continue;
        }
        if (at_block && finished)
            failure = "__syncthreads reached by part of a block (" + std::to_string(at_block) +
                      " threads wait, " + std::to_string(finished) + " have returned)";
        else
            failure = "threads of a block wait at different barriers (deadlock)";
        return false;
    }
}

// not a template: the grid loop and the fiber set-up are compiled once per module, not once per
// kernel instantiation (up to ~40 % of a module's g++ time at -O0)
inline int run_grid(void (*body)(void*), void* ctx, const unsigned* geom, int order,
                    unsigned seed, bool fibers, char* err, int errlen) {
    gridDim = {geom[0], geom[1], geom[2]};
    blockDim = {geom[3], geom[4], geom[5]};
    unsigned nthreads = blockDim.x * blockDim.y * blockDim.z;
    failure.clear();
    fibers_on = fibers;
    std::vector<unsigned> torder = thread_order(nthreads, order, seed);
    std::vector<Fiber> fib;
    const size_t stack_size = 64 * 1024;
    if (fibers) {
        fib.resize(nthreads);
        if (stacks_size < (size_t)nthreads * stack_size) {
            stacks_size = (size_t)nthreads * stack_size;
            stacks.reset(new char[stacks_size]);
        }
        exchange.assign(nthreads, 0);
        fiber_body = body;
        fiber_arg = ctx;
    }
    for (unsigned z = 0; z < gridDim.z; ++z)
        for (unsigned y = 0; y < gridDim.y; ++y)
            for (unsigned x = 0; x < gridDim.x; ++x) {
                blockIdx = {x, y, z};
                if (fibers) {
                    if (!run_block_fibers(nthreads, torder, fib, stacks.get(), stack_size)) break;
                } else {
                    for (unsigned t : torder) {
                        threadIdx = {t % blockDim.x, (t / blockDim.x) % blockDim.y,
                                     t / (blockDim.x * blockDim.y)};
                        body(ctx);
                    }
                    if (!failure.empty()) break;
                }
            }
    fibers_on = false;
    if (!failure.empty()) {
        snprintf(err, errlen, "%s", failure.c_str());
        return 1;
    }
    return 0;
}

template <class... P, size_t... I>
inline void call(void (*k)(P...), void** args, std::index_sequence<I...>) {
    k(*static_cast<std::remove_cv_t<std::remove_reference_t<P>>*>(args[I])...);
}

template <class... P>
struct Launch {
    void (*kernel)(P...);
    void** args;
    static void run(void* self) {
        auto* l = static_cast<Launch*>(self);
        call(l->kernel, l->args, std::index_sequence_for<P...>{});
    }
};

template <class... P>
inline int launch(void (*k)(P...), void** args, const unsigned* geom, int order, unsigned seed,
                  bool fibers, char* err, int errlen) {
    Launch<P...> l{k, args};
    return run_grid(&Launch<P...>::run, &l, geom, order, seed, fibers, err, errlen);
}

// each parameter's size and kind ('p' pointer, 'f' floating, 'b' bool, 'i' integer, 's' other)
template <class T>
constexpr char kind_of() {
    return std::is_pointer<T>::value         ? 'p'
           : std::is_floating_point<T>::value ? 'f'
           : std::is_same<T, bool>::value     ? 'b'
           : std::is_integral<T>::value       ? 'i'
                                              : 's';
}

template <class... P>
inline int param_info(void (*)(P...), long long* sizes, char* kinds) {
    int i = 0;
    ((sizes[i] = sizeof(P), kinds[i] = kind_of<P>(), ++i), ...);
    return i;
}

}  // namespace strided_host
