"""Fused CPU update loops of the optimizers: one pass over a parameter and its state.

Written as one numba loop per optimizer over the flat (1-D, C-contiguous) NumPy buffers of a
parameter, its gradient and its state, so that an update reads and writes each element once
instead of running 4-10 elementwise kernels with temporaries in between.  The hyperparameters
arrive already cast to the parameter's dtype, so that float32 parameters are updated in float32
arithmetic as PyTorch does; the flags are loop-invariant and LLVM hoists them out of the loops
(the loops still vectorise).  Each function follows the order of operations of PyTorch's
single-tensor implementation step by step (see the optimizer classes).
"""

from __future__ import annotations

import numba as nb
import numpy as np

# error_model="numpy": a division by zero gives inf/nan (as in PyTorch) instead of a Python
# exception, whose per-element check would keep the loops from vectorising
_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}


@nb.njit(**_JIT)
def sgd(p, g, buf, neg_lr, sign, wd, momentum, damp1, nesterov, init):  # pragma: no cover
    for i in range(p.size):
        d = sign * g[i]
        if wd != 0:
            d = d + wd * p[i]
        if momentum != 0:
            if init:
                b = d
            else:
                b = buf[i] * momentum + damp1 * d
            buf[i] = b
            if nesterov:
                d = d + momentum * b
            else:
                d = b
        p[i] = p[i] + neg_lr * d


@nb.njit(**_JIT)
def adam(
    p,
    g,
    m,
    v,
    vmax,
    sign,
    wd,
    decay,
    w1,
    w1c,
    small,
    beta2,
    w2,
    bc2_sqrt,
    eps,
    neg_step,
    amsgrad,
    decoupled,
):  # pragma: no cover
    for i in range(p.size):
        x = p[i]
        if decoupled:  # AdamW's decoupled decay
            x = x * decay
        d = sign * g[i]
        if wd != 0:
            d = d + wd * x
        mi = m[i]
        if small:  # lerp(m, d, w1) as PyTorch evaluates it for small and large weights
            mi = mi + w1 * (d - mi)
        else:
            mi = d - (d - mi) * w1c
        m[i] = mi
        vi = v[i] * beta2 + w2 * d * d
        v[i] = vi
        if amsgrad:
            vm = vmax[i]
            vi = vm if (vm > vi or vm != vm) else vi  # NaN-propagating, as torch.maximum
            vmax[i] = vi
        denom = np.sqrt(vi) / bc2_sqrt + eps
        p[i] = x + neg_step * (mi / denom)


@nb.njit(**_JIT)
def rmsprop(
    p, g, sq, ga, buf, sign, wd, alpha, w, wc, small, eps, neg_lr, momentum, centered
):  # pragma: no cover
    for i in range(p.size):
        x = p[i]
        d = sign * g[i]
        if wd != 0:
            d = d + wd * x
        s = sq[i] * alpha + w * d * d
        sq[i] = s
        if centered:
            a = ga[i]
            if small:
                a = a + w * (d - a)
            else:
                a = d - (d - a) * wc
            ga[i] = a
            s = s - a * a  # PyTorch's s + (-1) * a * a, the same value
        avg = np.sqrt(s) + eps
        if momentum > 0:
            b = buf[i] * momentum + d / avg
            buf[i] = b
            p[i] = x + neg_lr * b
        else:
            p[i] = x + neg_lr * (d / avg)


@nb.njit(**_JIT)
def adagrad(p, g, s, sign, wd, eps, neg_clr):  # pragma: no cover
    for i in range(p.size):
        x = p[i]
        d = sign * g[i]
        if wd != 0:
            d = d + wd * x
        si = s[i] + d * d
        s[i] = si
        p[i] = x + neg_clr * (d / (np.sqrt(si) + eps))
