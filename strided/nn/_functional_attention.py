"""Attention functions of ``strided.nn.functional``: ``scaled_dot_product_attention`` and
``multi_head_attention_forward`` (PyTorch's signatures, defaults and semantics).

The attention core ``softmax(q @ k^T * scale + bias) [* dropout] @ v`` is one
``autograd.Function`` with a hand-written backward (one node instead of six).  Masks become an
additive bias first (``-inf`` where attention is not allowed).  As in PyTorch,
``scaled_dot_product_attention`` gives zeros for a query that may attend to nothing, while
``multi_head_attention_forward`` with ``need_weights=True`` (PyTorch's explicit-softmax path)
gives NaN there.
"""

from __future__ import annotations

import math

from strided._array import Array
from strided.autograd import Function, is_grad_enabled

from .. import _namespace as xp
from ._functional_core import linear

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _softmax_last(s: Array, safe: bool) -> Array:
    """softmax over the last axis; ``safe`` makes an all ``-inf`` row all zeros (not NaN)."""
    m = xp.max(s, axis=-1, keepdims=True)
    if safe:
        m = xp.where(xp.isfinite(m), m, 0.0)
    e = xp.exp(s - m)
    z = xp.sum(e, axis=-1, keepdims=True)
    if safe:
        z = xp.where(z == 0.0, 1.0, z)
    return e / z


def _scores(q: Array, k: Array, bias, scale: float) -> Array:
    s = xp.matmul(q, xp.matrix_transpose(k)) * scale
    return s if bias is None else s + bias


class _Attention(Function):
    """``softmax(q @ k^T * scale + bias) * keep @ v``; returns the (dropped-out) weights too
    when ``weights`` is true.  ``keep`` is None or the dropout multiplier (0 or 1/(1-p))."""

    @staticmethod
    def forward(ctx, q, k, v, bias, keep, scale, weights, safe):
        p = _softmax_last(_scores(q, k, bias, scale), safe and bias is not None)
        pd = p if keep is None else p * keep
        out = xp.matmul(pd, v)
        ctx.save_for_backward(q, k, v, bias, keep, p)
        ctx.args = (scale, safe and bias is not None)
        ctx.set_materialize_grads(False)
        return (out, pd) if weights else out

    @staticmethod
    def backward(ctx, gout, gweights=None):
        q, k, v, bias, keep, p = ctx.saved_tensors
        scale, safe = ctx.args
        need = ctx.needs_input_grad
        if is_grad_enabled():
            # create_graph: recompute the weights from q and k with recorded operations
            p = _softmax_last(_scores(q, k, bias, scale), safe)
        pd = p if keep is None else p * keep
        gq = gk = gv = gbias = None
        if gout is not None and need[2]:
            gv = xp.matmul(xp.matrix_transpose(pd), gout)
        if not (need[0] or need[1] or need[3]):
            return gq, gk, gv, gbias, None, None, None, None
        gpd = None if gout is None else xp.matmul(gout, xp.matrix_transpose(v))
        if gweights is not None:
            gpd = gweights if gpd is None else gpd + gweights
        if gpd is None:
            return gq, gk, gv, gbias, None, None, None, None
        gp = gpd if keep is None else gpd * keep
        gs = p * (gp - xp.sum(gp * p, axis=-1, keepdims=True))
        if bias is not None and need[3]:
            gbias = gs
        gs = gs * scale
        if need[0]:
            gq = xp.matmul(gs, k)
        if need[1]:
            gk = xp.matmul(xp.matrix_transpose(gs), q)
        return gq, gk, gv, gbias, None, None, None, None


def _mask_to_bias(fn: str, mask: Array, dtype, *, true_means_keep: bool) -> Array:
    """A boolean mask as an additive bias (0 where attention is allowed, -inf elsewhere); a
    float mask is the bias itself."""
    if not isinstance(mask, Array):
        raise TypeError(f"{fn}: a mask must be a strided array, got {type(mask).__name__}")
    if mask.dtype == xp.bool:
        zero = xp.asarray(0.0, dtype=dtype, device=mask.device)
        ninf = xp.asarray(-math.inf, dtype=dtype, device=mask.device)
        return xp.where(mask, zero, ninf) if true_means_keep else xp.where(mask, ninf, zero)
    if xp.isdtype(mask.dtype, "real floating"):
        return mask if mask.dtype == dtype else xp.astype(mask, dtype)
    raise TypeError(
        f"{fn}: only bool and floating-point masks are supported, got a mask of dtype "
        f"{mask.dtype.name} and shape {tuple(mask.shape)}"
    )


def _dropout_keep(p: float, shape: tuple, dtype, device) -> Array:
    """The inverted-dropout multiplier: 0 with probability p, else 1/(1-p)."""
    from .. import random

    if p >= 1.0:
        return xp.zeros(shape, dtype=dtype, device=device)
    return random.bernoulli(1.0 - p, shape, dtype=dtype, device=device) * (1.0 / (1.0 - p))


def scaled_dot_product_attention(
    query: Array,
    key: Array,
    value: Array,
    attn_mask: Array | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Array:
    """``softmax(query @ key^T * scale + mask) @ value`` over arrays of shape (..., L, E),
    (..., S, E) and (..., S, Ev) (PyTorch's ``F.scaled_dot_product_attention``).

    ``attn_mask``: a boolean mask (True: the query may attend to that key) or a float bias
    added to the scores, broadcastable to (..., L, S); ``is_causal``: the lower-triangular
    (top-left aligned) mask; ``scale`` defaults to ``1/sqrt(E)``; ``dropout_p`` drops weights
    (always, as PyTorch's function does: pass 0 in evaluation); ``enable_gqa`` lets key and
    value have fewer heads (axis -3) than the query, each shared by a group of query heads.
    A query that may attend to no key gets zeros.
    """
    fn = "scaled_dot_product_attention"
    for name, a in (("query", query), ("key", key), ("value", value)):
        if not isinstance(a, Array):
            raise TypeError(f"{fn}: {name} must be a strided array, got {type(a).__name__}")
        if a.ndim < 2:
            raise ValueError(f"{fn}: {name} must have at least 2 dimensions, got shape {a.shape}")
    if not xp.isdtype(query.dtype, "real floating"):
        raise TypeError(f"{fn}: expected floating-point query, got dtype {query.dtype.name}")
    if not (query.dtype == key.dtype == value.dtype):
        raise TypeError(
            f"{fn}: expected query, key and value to have the same dtype, got {query.dtype.name}, "
            f"{key.dtype.name} and {value.dtype.name}"
        )
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ValueError(
            f"{fn}: shapes do not match: query {tuple(query.shape)} (..., L, E), key "
            f"{tuple(key.shape)} (..., S, E), value {tuple(value.shape)} (..., S, Ev)"
        )
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3 and query.shape[-3] != key.shape[-3]:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk or hq % hv:
            raise ValueError(
                f"{fn}: with enable_gqa the number of query heads ({hq}) must be a multiple of "
                f"the key heads ({hk}) and value heads ({hv})"
            )
        key = xp.repeat(key, hq // hk, axis=-3)
        value = xp.repeat(value, hq // hv, axis=-3)
    L, S = query.shape[-2], key.shape[-2]
    bias = None
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError(f"{fn}: explicit attn_mask should not be set when is_causal=True")
        causal = xp.tril(xp.ones((L, S), dtype=xp.bool, device=query.device))
        bias = _mask_to_bias(fn, causal, query.dtype, true_means_keep=True)
    elif attn_mask is not None:
        bias = _mask_to_bias(fn, attn_mask, query.dtype, true_means_keep=True)
        batch = xp.broadcast_shapes(tuple(query.shape[:-2]), tuple(key.shape[:-2]))
        try:
            ok = xp.broadcast_shapes(tuple(bias.shape), batch + (L, S)) == batch + (L, S)
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(
                f"{fn}: attn_mask of shape {tuple(attn_mask.shape)} does not broadcast to the "
                f"attention weights' shape {batch + (L, S)}"
            )
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0
    keep = None
    if dropout_p > 0.0:
        batch = xp.broadcast_shapes(tuple(query.shape[:-2]), tuple(key.shape[:-2]))
        keep = _dropout_keep(float(dropout_p), batch + (L, S), query.dtype, query.device)
    return _Attention.apply(query, key, value, bias, keep, float(scale), False, True)


# ----------------------------------------------------------------------------- multi-head


def _linear(x: Array, w: Array, b: Array | None) -> Array:
    return linear(x, w, b)  # nn-core's fused Function: one node per projection


def multi_head_attention_forward(
    query: Array,
    key: Array,
    value: Array,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Array | None,
    in_proj_bias: Array | None,
    bias_k: Array | None,
    bias_v: Array | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Array,
    out_proj_bias: Array | None,
    training: bool = True,
    key_padding_mask: Array | None = None,
    need_weights: bool = True,
    attn_mask: Array | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Array | None = None,
    k_proj_weight: Array | None = None,
    v_proj_weight: Array | None = None,
    static_k: Array | None = None,
    static_v: Array | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
    batch_first: bool = False,
) -> tuple[Array, Array | None]:
    """Multi-head attention as PyTorch's ``F.multi_head_attention_forward``: query (L, N, E)
    or unbatched (L, E), key (S, N, Ek), value (S, N, Ev) (``batch_first=True``, an extension
    used by ``nn.MultiheadAttention``, takes (N, L, E) and returns batch-first output).

    Masks: ``key_padding_mask`` (N, S) and ``attn_mask`` (L, S) or (N * num_heads, L, S),
    boolean (True: *not* allowed to attend) or float (added to the scores).  Returns the
    output and, with ``need_weights``, the attention weights (N, L, S) averaged over heads, or
    (N, num_heads, L, S) with ``average_attn_weights=False``; else None.
    """
    fn = "multi_head_attention_forward"
    for name, a in (("query", query), ("key", key), ("value", value)):
        if not isinstance(a, Array):
            raise TypeError(f"{fn}: {name} must be a strided array, got {type(a).__name__}")
    if static_k is not None or static_v is not None:
        raise NotImplementedError(f"{fn}: static_k and static_v are not supported")
    batched = query.ndim == 3
    self_attention = query is key and key is value  # one packed projection
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise ValueError(
            f"{fn}: expected query, key and value of 3 dimensions (batched) or 2 (unbatched), "
            f"got shapes {tuple(query.shape)}, {tuple(key.shape)} and {tuple(value.shape)}"
        )
    if not batched:
        query, key, value = (xp.expand_dims(a, axis=0) for a in (query, key, value))
        if key_padding_mask is not None:
            if key_padding_mask.ndim != 1:
                raise ValueError(
                    f"{fn}: for unbatched (2-D) query, key_padding_mask must be 1-D, got shape "
                    f"{tuple(key_padding_mask.shape)}"
                )
            key_padding_mask = xp.expand_dims(key_padding_mask, axis=0)
    elif not batch_first:
        # (L, N, E) -> (N, L, E): every shape below is batch first
        query, key, value = (xp.permute_dims(a, (1, 0, 2)) for a in (query, key, value))
    n, L, e = query.shape
    s = key.shape[1]
    if e != embed_dim_to_check:
        raise ValueError(
            f"{fn}: was expecting embedding dimension of {embed_dim_to_check}, but got query "
            f"of shape {tuple(query.shape)}"
        )
    if num_heads <= 0 or e % num_heads:
        raise ValueError(f"{fn}: embed_dim {e} must be divisible by num_heads {num_heads}")
    hd = e // num_heads
    if key.shape[0] != n or value.shape[0] != n or value.shape[1] != s:
        raise ValueError(
            f"{fn}: key and value must have the same batch size and sequence length as each "
            f"other and the query's batch size, got query {tuple(query.shape)}, key "
            f"{tuple(key.shape)} and value {tuple(value.shape)} (batch first)"
        )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            f"{fn}: need attn_mask if specifying the is_causal hint (for a causal mask, pass "
            "both attn_mask and is_causal=True)"
        )

    w0 = in_proj_weight if not use_separate_proj_weight else q_proj_weight
    for name, a in (("query", query), ("key", key), ("value", value)):
        if w0 is not None and a.dtype != w0.dtype:
            raise TypeError(
                f"{fn}: {name} of dtype {a.dtype.name} and shape {tuple(a.shape)} differs from the "
                f"projection weights' dtype {w0.dtype.name}; cast the input or the module"
            )

    # input projections
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise ValueError(f"{fn}: use_separate_proj_weight is False but in_proj_weight is None")
        if self_attention:
            qkv = _linear(query, in_proj_weight, in_proj_bias)
            q, k, v = qkv[..., :e], qkv[..., e : 2 * e], qkv[..., 2 * e :]
        else:
            bq = bk = bv = None
            if in_proj_bias is not None:
                bq, bk, bv = in_proj_bias[:e], in_proj_bias[e : 2 * e], in_proj_bias[2 * e :]
            q = _linear(query, in_proj_weight[:e], bq)
            k = _linear(key, in_proj_weight[e : 2 * e], bk)
            v = _linear(value, in_proj_weight[2 * e :], bv)
    else:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise ValueError(
                f"{fn}: use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                "v_proj_weight is None"
            )
        bq = bk = bv = None
        if in_proj_bias is not None:
            bq, bk, bv = in_proj_bias[:e], in_proj_bias[e : 2 * e], in_proj_bias[2 * e :]
        q = _linear(query, q_proj_weight, bq)
        k = _linear(key, k_proj_weight, bk)
        v = _linear(value, v_proj_weight, bv)

    # masks -> one additive bias broadcastable to (N, H, L, S)
    bias = None
    if attn_mask is not None:
        bias = _mask_to_bias(fn, attn_mask, q.dtype, true_means_keep=False)
        if bias.ndim == 2:
            if tuple(bias.shape) != (L, s):
                raise ValueError(
                    f"{fn}: the shape of the 2D attn_mask is {tuple(attn_mask.shape)}, but "
                    f"should be {(L, s)}"
                )
        elif bias.ndim == 3:
            if tuple(bias.shape) != (n * num_heads, L, s):
                raise ValueError(
                    f"{fn}: the shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but "
                    f"should be {(n * num_heads, L, s)}"
                )
            bias = xp.reshape(bias, (n, num_heads, L, s))
        else:
            raise ValueError(f"{fn}: attn_mask's dimension {attn_mask.ndim} is not supported")
    kpm = None
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (n, s):
            raise ValueError(
                f"{fn}: expected key_padding_mask of shape {(n, s)}, got "
                f"{tuple(key_padding_mask.shape)}"
            )
        kpm = xp.reshape(
            _mask_to_bias(fn, key_padding_mask, q.dtype, true_means_keep=False), (n, 1, 1, s)
        )
    if bias_k is not None and bias_v is not None:
        k = xp.concat([k, xp.broadcast_to(xp.reshape(bias_k, (1, 1, e)), (n, 1, e))], axis=1)
        v = xp.concat([v, xp.broadcast_to(xp.reshape(bias_v, (1, 1, e)), (n, 1, e))], axis=1)
        bias, kpm = _pad_last(bias), _pad_last(kpm)
        s += 1
    elif bias_k is not None or bias_v is not None:
        raise ValueError(f"{fn}: bias_k and bias_v must both be given or both be None")

    # (N, X, E) -> (N, H, X, hd)
    def heads(a: Array) -> Array:
        return xp.permute_dims(xp.reshape(a, (n, a.shape[1], num_heads, hd)), (0, 2, 1, 3))

    q, k, v = heads(q), heads(k), heads(v)
    if add_zero_attn:
        zeros = xp.zeros((n, num_heads, 1, hd), dtype=k.dtype, device=k.device)
        k, v = xp.concat([k, zeros], axis=2), xp.concat([v, zeros], axis=2)
        bias, kpm = _pad_last(bias), _pad_last(kpm)
        s += 1
    if kpm is not None:
        bias = kpm if bias is None else bias + kpm
    if not training:
        dropout_p = 0.0
    keep = None
    if dropout_p > 0.0:
        keep = _dropout_keep(float(dropout_p), (n, num_heads, L, s), q.dtype, q.device)
    scale = 1.0 / math.sqrt(hd)
    res = _Attention.apply(q, k, v, bias, keep, scale, bool(need_weights), not need_weights)
    out, weights = res if need_weights else (res, None)
    # (N, H, L, hd) -> (N, L, E) or (L, N, E)
    order = (0, 2, 1, 3) if (batch_first or not batched) else (2, 0, 1, 3)
    out = xp.permute_dims(out, order)
    out = _linear(xp.reshape(out, out.shape[:2] + (e,)), out_proj_weight, out_proj_bias)
    if weights is not None and average_attn_weights:
        weights = xp.mean(weights, axis=1)
    if not batched:
        out = xp.squeeze(out, axis=0)
        if weights is not None:
            weights = xp.squeeze(weights, axis=0)
    return out, weights


def _pad_last(bias: Array | None) -> Array | None:
    """One more key position, always allowed (a zero column of bias)."""
    if bias is None:
        return None
    zeros = xp.zeros(bias.shape[:-1] + (1,), dtype=bias.dtype, device=bias.device)
    return xp.concat([bias, zeros], axis=-1)
