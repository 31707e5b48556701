"""Loss functions of ``strided.nn.functional`` (PyTorch's signatures, defaults and semantics):
mse_loss, l1_loss, smooth_l1_loss, huber_loss, cross_entropy, nll_loss, binary_cross_entropy,
binary_cross_entropy_with_logits, kl_div.

``cross_entropy``/``nll_loss`` with class indices and both binary cross entropies are one
``autograd.Function`` each (they run in every training step: one node on the tape, a
hand-written backward); the rest are short compositions.  Every computation is numerically
stable: log-softmax through the maximum-shifted log-sum-exp, softplus as
``max(-x, 0) + log1p(exp(-|x|))``.  Under ``create_graph=True`` the fused backwards recompute
what they saved from the saved inputs with recorded operations, so they differentiate again.
"""

from __future__ import annotations

import warnings

from strided._array import Array
from strided.autograd import Function, is_grad_enabled

from .. import _device
from .. import _namespace as xp

__all__ = [
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "cross_entropy",
    "nll_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
]

_REDUCTIONS = ("none", "mean", "sum")


# ----------------------------------------------------------------------------- helpers


def _reduction(fn: str, size_average, reduce, reduction: str, allowed=_REDUCTIONS) -> str:
    """PyTorch's reduction argument, with the deprecated ``size_average``/``reduce`` pair
    mapped as ``_Reduction.legacy_get_string`` does."""
    if size_average is not None or reduce is not None:
        warnings.warn(
            f"{fn}: size_average and reduce args will be deprecated, please use reduction= instead",
            stacklevel=3,
        )
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        if not reduce:
            return "none"
        return "mean" if size_average else "sum"
    if reduction not in allowed:
        raise ValueError(
            f"{fn}: {reduction!r} is not a valid value for reduction (expected one of "
            f"{', '.join(map(repr, allowed))})"
        )
    return reduction


def _reduce(loss: Array, reduction: str) -> Array:
    if reduction == "mean":
        return xp.mean(loss)
    if reduction == "sum":
        return xp.sum(loss)
    return loss


def _check_inputs(fn: str, input, target) -> None:
    for name, a in (("input", input), ("target", target)):
        if not isinstance(a, Array):
            raise TypeError(f"{fn}: {name} must be a strided array, got {type(a).__name__}")
    if not xp.isdtype(input.dtype, "real floating"):
        raise TypeError(
            f"{fn}: expected a real floating-point input, got input of dtype {input.dtype.name} "
            f"and shape {tuple(input.shape)}"
        )


def _check_same_shape(fn: str, input: Array, target: Array) -> None:
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"{fn}: target of shape {tuple(target.shape)} must have the same shape as the "
            f"input of shape {tuple(input.shape)}"
        )


def _float_target(fn: str, input: Array, target: Array) -> Array:
    """The target as the input's floating dtype (a float target of another precision is cast,
    an integer or bool target is refused, as PyTorch does)."""
    if not xp.isdtype(target.dtype, "real floating"):
        raise TypeError(
            f"{fn}: expected a floating-point target like the input ({input.dtype.name}), got "
            f"target of dtype {target.dtype.name} and shape {tuple(target.shape)}"
        )
    return target if target.dtype == input.dtype else xp.astype(target, input.dtype)


def _warn_broadcast(fn: str, input: Array, target: Array) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"{fn}: using a target size ({tuple(target.shape)}) that is different to the input "
            f"size ({tuple(input.shape)}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def _log_softmax_values(x: Array, axis: int) -> Array:
    """log(softmax(x)) along ``axis`` through the max-shifted log-sum-exp."""
    shifted = x - xp.max(x, axis=axis, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))


class _LogSoftmax(Function):
    @staticmethod
    def forward(ctx, x, axis):
        y = _log_softmax_values(x, axis)
        ctx.save_for_backward(x, y)
        ctx.axis = axis
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        if is_grad_enabled():
            y = _log_softmax_values(x, ctx.axis)
        return g - xp.exp(y) * xp.sum(g, axis=ctx.axis, keepdims=True), None


def _log_softmax(x: Array, axis: int) -> Array:
    """Private log_softmax (one node on the tape); ``nn.functional.log_softmax`` is nn-core's."""
    return _LogSoftmax.apply(x, axis)


def _weighted_mean(fn: str, loss: Array, weight: Array | None, reduction: str) -> Array:
    """PyTorch's elementwise-weighted regression losses: ``mean`` divides by ``sum(weight)``."""
    if weight is None:
        return _reduce(loss, reduction)
    loss = loss * weight
    if reduction == "mean":
        return xp.sum(loss) / xp.sum(weight)
    return _reduce(loss, reduction)


def _check_weight_same(fn: str, weight, input: Array) -> None:
    if weight is None:
        return
    if not isinstance(weight, Array):
        raise TypeError(f"{fn}: weight must be a strided array, got {type(weight).__name__}")
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError(
            f"{fn}: weights and input must have the same size (weight of shape "
            f"{tuple(weight.shape)}, input of shape {tuple(input.shape)})"
        )


# ----------------------------------------------------------------------------- regression


def mse_loss(
    input: Array,
    target: Array,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Array | None = None,
) -> Array:
    """Mean squared error ``(input - target)**2`` reduced by ``reduction`` ('none' | 'mean' |
    'sum'); an elementwise ``weight`` makes 'mean' divide by ``sum(weight)`` (PyTorch)."""
    fn = "mse_loss"
    _check_inputs(fn, input, target)
    target = _float_target(fn, input, target)
    reduction = _reduction(fn, size_average, reduce, reduction)
    _warn_broadcast(fn, input, target)
    _check_weight_same(fn, weight, input)
    d = input - target
    return _weighted_mean(fn, d * d, weight, reduction)


def l1_loss(
    input: Array,
    target: Array,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Array | None = None,
) -> Array:
    """Mean absolute error ``|input - target|`` reduced by ``reduction``."""
    fn = "l1_loss"
    _check_inputs(fn, input, target)
    target = _float_target(fn, input, target)
    reduction = _reduction(fn, size_average, reduce, reduction)
    _warn_broadcast(fn, input, target)
    _check_weight_same(fn, weight, input)
    return _weighted_mean(fn, xp.abs(input - target), weight, reduction)


def _smooth_l1(d: Array, beta: float) -> Array:
    a = xp.abs(d)
    if beta == 0.0:
        return a
    # the quadratic branch uses min(|d|, beta) so the unused branch never overflows
    q = xp.minimum(a, beta)
    return xp.where(a < beta, (0.5 / beta) * (q * q), a - 0.5 * beta)


def smooth_l1_loss(
    input: Array,
    target: Array,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Array:
    """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta`` (``d = input -
    target``); ``beta=0`` is the L1 loss."""
    fn = "smooth_l1_loss"
    _check_inputs(fn, input, target)
    target = _float_target(fn, input, target)
    reduction = _reduction(fn, size_average, reduce, reduction)
    if beta < 0:
        raise ValueError(f"{fn}: beta must be non-negative, got {beta}")
    _warn_broadcast(fn, input, target)
    return _reduce(_smooth_l1(input - target, float(beta)), reduction)


def huber_loss(
    input: Array,
    target: Array,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Array | None = None,
) -> Array:
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``."""
    fn = "huber_loss"
    _check_inputs(fn, input, target)
    target = _float_target(fn, input, target)
    reduction = _reduction(fn, None, None, reduction)
    if delta <= 0:
        raise ValueError(f"{fn}: delta must be positive, got {delta}")
    _warn_broadcast(fn, input, target)
    _check_weight_same(fn, weight, input)
    loss = _smooth_l1(input - target, float(delta)) * float(delta)
    return _weighted_mean(fn, loss, weight, reduction)


# ----------------------------------------------------------------------------- classification


def _class_weight(fn: str, weight, c: int, input: Array):
    if weight is None:
        return None
    if not isinstance(weight, Array):
        raise TypeError(f"{fn}: weight must be a strided array, got {type(weight).__name__}")
    if tuple(weight.shape) != (c,):
        raise ValueError(
            f"{fn}: weight of shape {tuple(weight.shape)} must have one entry per class: "
            f"expected ({c},) for the input of shape {tuple(input.shape)}"
        )
    return weight if weight.dtype == input.dtype else xp.astype(weight, input.dtype)


def _check_index_target(fn: str, input: Array, target: Array, ignore_index: int) -> bool:
    """Class-index targets: shape (N, d1, ...) for an (N, C, d1, ...) input, every value in
    [0, C) or equal to ``ignore_index`` (checked on devices with data).  Returns True when
    no target can equal ``ignore_index`` (False when unknown).

    The common case costs one reduction: with non-negative targets and a negative
    ``ignore_index`` only values >= C can be wrong, and ``take_along_axis`` refuses those
    (the caller turns its IndexError into ``_raise_out_of_range``'s message)."""
    expected = (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape) != expected:
        raise ValueError(
            f"{fn}: expected a class-index target of shape {expected} for the input of shape "
            f"{tuple(input.shape)}, got target of shape {tuple(target.shape)}"
        )
    if target.device == "meta" or target.size == 0:
        return False
    if ignore_index < 0 and int(xp.min(target)) >= 0:
        return True
    _raise_out_of_range(fn, input, target, ignore_index)
    return False


def _raise_out_of_range(fn: str, input: Array, target: Array, ignore_index: int) -> None:
    """Raise IndexError naming the first target outside [0, C) that is not ignore_index."""
    c = input.shape[1]
    bad = xp.logical_and(target != ignore_index, xp.logical_or(target < 0, target >= c))
    if bool(xp.any(bad)):
        first = int(xp.argmax(xp.reshape(xp.astype(bad, xp.int8), (-1,))))
        value = int(xp.reshape(target, (-1,))[first])
        raise IndexError(
            f"{fn}: target {value} is out of bounds for {c} classes (input of shape "
            f"{tuple(input.shape)}, target of shape {tuple(target.shape)}; ignore_index="
            f"{ignore_index})"
        )


def _nll_apply(fn, input, target, weight, ignore_index, reduction, smoothing, from_logits):
    all_valid = _check_index_target(fn, input, target, ignore_index)
    try:
        return _NLL.apply(
            input, target, weight, ignore_index, reduction, smoothing, from_logits, all_valid
        )
    except IndexError:
        _raise_out_of_range(fn, input, target, ignore_index)
        raise


_CLASSES: dict = _device.array_cache()


def _classes(c: int, ndim: int, dtype, device) -> Array:
    """arange(c) shaped (1, c, 1, ...): compared with targets it gives the one-hot mask (kept
    per shape, dtype and device: it is never written to)."""
    key = (c, ndim, dtype, str(device))
    a = _CLASSES.get(key)
    if a is None:
        a = xp.reshape(xp.arange(c, dtype=dtype, device=device), (1, c) + (1,) * (ndim - 2))
        _CLASSES[key] = a
    return a


class _NLL(Function):
    """Negative log-likelihood of class-index targets, optionally from logits (then the
    log-softmax over axis 1 is fused in: that is cross entropy) and with label smoothing.

    ``x``: (N, C, *) logits or log-probabilities; ``target``: (N, *) integer classes;
    ``all_valid``: no target equals ``ignore_index`` (known from the range check), which
    skips the masking.  Per-sample values keep the class axis (N, 1, *) so that they
    broadcast against ``x`` without further reshapes.
    """

    @staticmethod
    def forward(ctx, x, target, weight, ignore_index, reduction, smoothing, from_logits, all_valid):
        c = x.shape[1]
        if all_valid:
            safe1, valid1 = xp.expand_dims(target, axis=1), None
        else:
            valid = target != ignore_index
            safe1 = xp.expand_dims(xp.where(valid, target, 0), axis=1)
            valid1 = xp.expand_dims(valid, axis=1)
        e = s = ls = None
        if from_logits:
            sh = x - xp.max(x, axis=1, keepdims=True)
            e = xp.exp(sh)
            s = xp.sum(e, axis=1, keepdims=True)
            ls = xp.log(s)
            picked = xp.take_along_axis(sh, safe1, axis=1) - ls
        else:
            sh = x
            picked = xp.take_along_axis(x, safe1, axis=1)
        if weight is None:
            wt = None if valid1 is None else xp.astype(valid1, x.dtype)
        else:
            wt = xp.reshape(xp.take(weight, xp.reshape(safe1, (-1,)), axis=0), safe1.shape)
            if valid1 is not None:
                wt = xp.where(valid1, wt, 0.0)
        loss = -picked if wt is None else -(picked * wt)
        if smoothing > 0.0:
            logp = sh if ls is None else sh - ls
            if weight is not None:
                logp = logp * xp.reshape(weight, (1, c) + (1,) * (x.ndim - 2))
            smooth = -xp.sum(logp, axis=1, keepdims=True)
            if valid1 is not None:
                smooth = xp.where(valid1, smooth, 0.0)
            loss = loss * (1.0 - smoothing) + smooth * (smoothing / c)
        denom = None
        if reduction == "mean":
            denom = float(loss.size) if wt is None else xp.sum(wt)
            out = xp.sum(loss) / denom
            if wt is not None:
                # every target ignored (or weighted 0): the loss is NaN, its gradient zero
                denom = xp.where(denom == 0.0, 1.0, denom)
        elif reduction == "sum":
            out = xp.sum(loss)
        else:
            out = xp.squeeze(loss, axis=1)
        ctx.save_for_backward(x, e, s, weight, safe1, wt, valid1)
        ctx.args = (reduction, smoothing, from_logits, denom)
        return out

    @staticmethod
    def backward(ctx, g):
        if not ctx.needs_input_grad[0]:
            return (None,) * 8
        x, e, s, weight, safe1, wt, valid1 = ctx.saved_tensors
        reduction, smoothing, from_logits, denom = ctx.args
        c = x.shape[1]
        if from_logits:
            if is_grad_enabled():
                # create_graph: recompute the softmax from x with recorded operations
                e = xp.exp(x - xp.max(x, axis=1, keepdims=True))
                s = xp.sum(e, axis=1, keepdims=True)
            p = e / s
        if reduction == "mean":
            g = g / denom
        elif reduction == "none":
            g = xp.expand_dims(g, axis=1)
        # g is 0-d or (N, 1, *); coef = -d loss / d logp[target]
        coef = g if wt is None else g * wt
        onehot = safe1 == _classes(c, x.ndim, safe1.dtype, x.device)
        if from_logits and smoothing == 0.0:
            return xp.where(onehot, p - 1.0, p) * coef, None, None, None, None, None, None, None
        if smoothing > 0.0:
            coef = coef * (1.0 - smoothing)
        glogp = xp.where(onehot, -coef, 0.0)
        if smoothing > 0.0:
            sm = (g if valid1 is None else g * xp.astype(valid1, x.dtype)) * (smoothing / c)
            if weight is not None:
                sm = sm * xp.reshape(weight, (1, c) + (1,) * (x.ndim - 2))
            glogp = glogp - sm
        if from_logits:
            # through log_softmax: dx = dlogp - softmax * sum(dlogp)
            glogp = glogp - p * xp.sum(glogp, axis=1, keepdims=True)
        return glogp, None, None, None, None, None, None, None


def _as_batched(fn: str, input: Array, target: Array):
    """An unbatched (C,) input with a () target becomes a batch of one."""
    if input.ndim == 0:
        raise ValueError(f"{fn}: expected an input of shape (C,) or (N, C, *), got shape ()")
    if input.ndim == 1:
        return xp.expand_dims(input, axis=0), xp.expand_dims(target, axis=0), True
    return input, target, False


def _index_target_dtype(fn: str, input: Array, target: Array) -> None:
    if not xp.isdtype(target.dtype, "integral"):
        raise TypeError(
            f"{fn}: expected a class-index target of an integer dtype for the input of shape "
            f"{tuple(input.shape)}, got target of dtype {target.dtype.name} and shape "
            f"{tuple(target.shape)}"
        )


def nll_loss(
    input: Array,
    target: Array,
    weight: Array | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Array:
    """Negative log-likelihood of class-index ``target`` (N, d1, ...) under log-probabilities
    ``input`` (N, C, d1, ...): ``-weight[t] * input[n, t]``; 'mean' divides by the summed
    weights of the targets that are not ``ignore_index``."""
    fn = "nll_loss"
    _check_inputs(fn, input, target)
    reduction = _reduction(fn, size_average, reduce, reduction)
    _index_target_dtype(fn, input, target)
    input, target, unbatched = _as_batched(fn, input, target)
    w = _class_weight(fn, weight, input.shape[1], input)
    out = _nll_apply(fn, input, target, w, int(ignore_index), reduction, 0.0, False)
    return xp.squeeze(out, axis=0) if unbatched and reduction == "none" else out


def cross_entropy(
    input: Array,
    target: Array,
    weight: Array | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Array:
    """Cross entropy between logits ``input`` (C,), (N, C) or (N, C, d1, ...) and ``target``:
    class indices (an integer array of shape (), (N,) or (N, d1, ...)) or class probabilities
    (a float array of the input's shape), with PyTorch's ``weight``, ``ignore_index`` (class
    indices only), ``label_smoothing`` and ``reduction``."""
    fn = "cross_entropy"
    _check_inputs(fn, input, target)
    reduction = _reduction(fn, size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(
            f"{fn}: label_smoothing must be between 0.0 and 1.0, got {label_smoothing}"
        )
    if xp.isdtype(target.dtype, "real floating"):
        if tuple(target.shape) != tuple(input.shape):
            raise ValueError(
                f"{fn}: a floating-point target holds class probabilities and must have the "
                f"input's shape {tuple(input.shape)}, got target of shape "
                f"{tuple(target.shape)} and dtype {target.dtype.name} (class indices need an "
                "integer dtype)"
            )
        return _cross_entropy_probs(fn, input, target, weight, reduction, float(label_smoothing))
    _index_target_dtype(fn, input, target)
    input, target, unbatched = _as_batched(fn, input, target)
    w = _class_weight(fn, weight, input.shape[1], input)
    smoothing = float(label_smoothing)
    out = _nll_apply(fn, input, target, w, int(ignore_index), reduction, smoothing, True)
    return xp.squeeze(out, axis=0) if unbatched and reduction == "none" else out


def _cross_entropy_probs(fn, input, target, weight, reduction, smoothing) -> Array:
    if input.ndim == 0:
        raise ValueError(f"{fn}: expected an input of shape (C,) or (N, C, *), got shape ()")
    axis = 0 if input.ndim == 1 else 1
    c = input.shape[axis]
    target = target if target.dtype == input.dtype else xp.astype(target, input.dtype)
    if smoothing > 0.0:
        target = target * (1.0 - smoothing) + smoothing / c
    prod = _log_softmax(input, axis) * target
    w = _class_weight(fn, weight, c, input)
    if w is not None:
        prod = prod * xp.reshape(w, (c,) + (1,) * (input.ndim - axis - 1))
    if reduction == "mean":
        return -xp.sum(prod) / (input.size // c if input.size else 0.0)
    if reduction == "sum":
        return -xp.sum(prod)
    return -xp.sum(prod, axis=axis)


# ----------------------------------------------------------------------------- binary


class _BCE(Function):
    """Binary cross entropy of probabilities with PyTorch's log clamp at -100 and its gradient
    ``(x - t) / max(x * (1 - x), 1e-12)``."""

    @staticmethod
    def forward(ctx, x, t, weight, reduction):
        logx = xp.maximum(xp.log(x), -100.0)
        log1mx = xp.maximum(xp.log(1.0 - x), -100.0)
        raw = -(t * logx + (1.0 - t) * log1mx)
        loss = raw if weight is None else raw * weight
        ctx.save_for_backward(x, t, weight)
        ctx.reduction = reduction
        return _reduce(loss, reduction)

    @staticmethod
    def backward(ctx, g):
        x, t, weight = ctx.saved_tensors
        if ctx.reduction == "mean":
            g = g / x.size
        need = ctx.needs_input_grad
        gx = gt = gw = None
        gw_ = g if weight is None else g * weight
        if need[0]:
            gx = gw_ * (x - t) / xp.maximum(x * (1.0 - x), 1e-12)
        if need[1] or (weight is not None and need[2]):
            logx = xp.maximum(xp.log(x), -100.0)
            log1mx = xp.maximum(xp.log(1.0 - x), -100.0)
            if need[1]:
                gt = gw_ * (log1mx - logx)
            if weight is not None and need[2]:
                gw = -g * (t * logx + (1.0 - t) * log1mx)
        return gx, gt, gw, None


def binary_cross_entropy(
    input: Array,
    target: Array,
    weight: Array | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Array:
    """``-weight * (t * log(x) + (1 - t) * log(1 - x))`` for probabilities ``x`` in [0, 1]
    (each log clamped at -100, as PyTorch does, so the loss stays finite)."""
    fn = "binary_cross_entropy"
    _check_inputs(fn, input, target)
    target = _float_target(fn, input, target)
    reduction = _reduction(fn, size_average, reduce, reduction)
    _check_same_shape(fn, input, target)
    if weight is not None:
        _check_broadcast_weight(fn, "weight", weight, input)
    if input.device != "meta" and input.size:
        if float(xp.min(input)) < 0.0 or float(xp.max(input)) > 1.0:
            raise ValueError(
                f"{fn}: all elements of input should be between 0 and 1 (input of shape "
                f"{tuple(input.shape)}); apply a sigmoid first, or use "
                "binary_cross_entropy_with_logits on logits"
            )
    return _BCE.apply(input, target, weight, reduction)


def _check_broadcast_weight(fn: str, name: str, w, input: Array) -> None:
    if not isinstance(w, Array):
        raise TypeError(f"{fn}: {name} must be a strided array, got {type(w).__name__}")
    try:
        shape = xp.broadcast_shapes(tuple(w.shape), tuple(input.shape))
    except ValueError:
        shape = None
    if shape != tuple(input.shape):
        raise ValueError(
            f"{fn}: {name} of shape {tuple(w.shape)} does not broadcast to the input of shape "
            f"{tuple(input.shape)}"
        )


def _softplus_neg(x: Array) -> Array:
    """log(1 + exp(-x)), stable for every x."""
    return xp.maximum(-x, 0.0) + xp.log1p(xp.exp(-xp.abs(x)))


class _BCEWithLogits(Function):
    """``(1 - t) * x + (1 + (pos_weight - 1) * t) * softplus(-x)``, times ``weight``."""

    @staticmethod
    def forward(ctx, x, t, weight, pos_weight, reduction):
        sp = _softplus_neg(x)
        lw = None if pos_weight is None else 1.0 + (pos_weight - 1.0) * t
        raw = (1.0 - t) * x + (sp if lw is None else lw * sp)
        loss = raw if weight is None else raw * weight
        ctx.save_for_backward(x, t, weight, pos_weight, sp)
        ctx.reduction = reduction
        return _reduce(loss, reduction)

    @staticmethod
    def backward(ctx, g):
        x, t, weight, pos_weight, sp = ctx.saved_tensors
        if is_grad_enabled():
            sp = _softplus_neg(x)
        if ctx.reduction == "mean":
            g = g / x.size
        need = ctx.needs_input_grad
        gw_ = g if weight is None else g * weight
        gx = gt = gw = gpw = None
        if need[0]:
            sig = xp.exp(-sp)  # sigmoid(x)
            if pos_weight is None:
                gx = gw_ * (sig - t)
            else:
                lw = 1.0 + (pos_weight - 1.0) * t
                gx = gw_ * ((1.0 - t) - lw * (1.0 - sig))
        if need[1]:
            gt = gw_ * (-x if pos_weight is None else (pos_weight - 1.0) * sp - x)
        if weight is not None and need[2]:
            lw = 1.0 if pos_weight is None else 1.0 + (pos_weight - 1.0) * t
            gw = g * ((1.0 - t) * x + lw * sp)
        if pos_weight is not None and need[3]:
            gpw = gw_ * t * sp
        return gx, gt, gw, gpw, None


def binary_cross_entropy_with_logits(
    input: Array,
    target: Array,
    weight: Array | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Array | None = None,
) -> Array:
    """Sigmoid and binary cross entropy in one numerically stable expression; ``pos_weight``
    weighs the positive term (broadcast along the last axis, one entry per class)."""
    fn = "binary_cross_entropy_with_logits"
    _check_inputs(fn, input, target)
    target = _float_target(fn, input, target)
    reduction = _reduction(fn, size_average, reduce, reduction)
    _check_same_shape(fn, input, target)
    if weight is not None:
        _check_broadcast_weight(fn, "weight", weight, input)
    if pos_weight is not None:
        _check_broadcast_weight(fn, "pos_weight", pos_weight, input)
    return _BCEWithLogits.apply(input, target, weight, pos_weight, reduction)


# ----------------------------------------------------------------------------- divergence


def kl_div(
    input: Array,
    target: Array,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Array:
    """Kullback-Leibler divergence ``target * (log(target) - input)`` with ``input`` given as
    log-probabilities (``target`` too with ``log_target=True``); ``reduction='batchmean'``
    divides the sum by the batch size (the mathematical definition), 'mean' by the element
    count (PyTorch's default, with its warning)."""
    fn = "kl_div"
    _check_inputs(fn, input, target)
    target = _float_target(fn, input, target)
    if size_average is not None or reduce is not None:
        reduction = _reduction(fn, size_average, reduce, reduction)
    else:
        reduction = _reduction(fn, None, None, reduction, _REDUCTIONS + ("batchmean",))
        if reduction == "mean":
            warnings.warn(
                "kl_div: reduction 'mean' divides the total loss by both the batch size and the "
                "support size; 'batchmean' divides only by the batch size and aligns with the KL "
                "divergence's definition",
                stacklevel=2,
            )
    if log_target:
        loss = xp.exp(target) * (target - input)
    else:
        # xlogy(t, t) = 0 where t == 0; log(1) there keeps the gradient finite too
        safe = xp.where(target == 0, 1.0, target)
        loss = target * (xp.log(safe) - input)
    if reduction == "batchmean":
        total = xp.sum(loss)
        return total / input.shape[0] if input.ndim else total
    return _reduce(loss, reduction)
