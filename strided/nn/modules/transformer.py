"""``TransformerEncoderLayer`` (PyTorch's ``nn.TransformerEncoderLayer``: the same arguments,
submodule and parameter names, so a torch state dict loads as it is)."""

from __future__ import annotations

from collections.abc import Callable

from strided._array import Array

from .. import _functional_core as Fc
from .activation_attention import MultiheadAttention
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["TransformerEncoderLayer"]


def _activation(activation):
    if isinstance(activation, str):
        if activation == "relu":
            return Fc.relu
        if activation == "gelu":
            return Fc.gelu
        raise RuntimeError(
            f"TransformerEncoderLayer: activation should be relu/gelu, not {activation}"
        )
    if not callable(activation):
        raise TypeError(
            "TransformerEncoderLayer: activation must be 'relu', 'gelu' or a callable, got "
            f"{type(activation).__name__}"
        )
    return activation


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block, each with a residual connection and layer
    normalisation (after each block, or before with ``norm_first``), as PyTorch's
    ``nn.TransformerEncoderLayer``.

    Submodules: ``self_attn`` (MultiheadAttention), ``linear1`` (d_model -> dim_feedforward),
    ``dropout``, ``linear2``, ``norm1``, ``norm2``, ``dropout1``, ``dropout2``.
    ``forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)``.
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Array], Array] = Fc.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(
        self,
        src: Array,
        src_mask: Array | None = None,
        src_key_padding_mask: Array | None = None,
        is_causal: bool = False,
    ) -> Array:
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal) -> Array:
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x: Array) -> Array:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)
