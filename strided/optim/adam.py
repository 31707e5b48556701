"""``Adam`` (with AMSGrad, and the decoupled weight decay that ``AdamW`` uses)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .. import _namespace as xp
from .._tape import bump_version
from ..autograd import no_grad
from . import _kernels
from .optimizer import Optimizer, _check_grad, _check_nonneg, _host

__all__ = ["Adam"]


def _check_adam(name: str, lr: float, betas, eps: float, weight_decay: float) -> None:
    _check_nonneg(name, "learning rate", lr)
    _check_nonneg(name, "epsilon value", eps)
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"{name}: Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"{name}: Invalid beta parameter at index 1: {betas[1]}")
    _check_nonneg(name, "weight_decay value", weight_decay)


class Adam(Optimizer):
    """Adam (PyTorch's ``torch.optim.Adam``, same update).

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``), at step ``t``::

        p = p * (1 - lr * weight_decay)        if decoupled_weight_decay (AdamW)
        g = g + weight_decay * p               if weight_decay != 0 and not decoupled
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                  if amsgrad (then used in place of v)
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    State per parameter: ``step``, ``exp_avg``, ``exp_avg_sq`` (and ``max_exp_avg_sq``).
    ``fused=None`` (default) updates dense cpu float parameters in one fused loop;
    ``fused=False`` always uses the namespace's operations (any device, meta included).
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        name = type(self).__name__
        lr = float(lr)
        betas = (float(betas[0]), float(betas[1]))
        _check_adam(name, lr, betas, eps, weight_decay)
        if differentiable:
            raise NotImplementedError(f"{name}: differentiable=True is not supported")
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Adam update of every parameter that has a gradient; returns ``closure()``."""
        loss = self._closure(closure)
        name = type(self).__name__
        with no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                beta1, beta2 = group["betas"]
                eps = group["eps"]
                wd = group["weight_decay"]
                amsgrad = group["amsgrad"]
                maximize = group["maximize"]
                decoupled = group.get("decoupled_weight_decay", False)
                fused = group.get("fused") is not False
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    _check_grad(name, p, g)
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0.0
                        state["exp_avg"] = xp.zeros_like(p)
                        state["exp_avg_sq"] = xp.zeros_like(p)
                        if amsgrad:
                            state["max_exp_avg_sq"] = xp.zeros_like(p)
                    m = state["exp_avg"]
                    v = state["exp_avg_sq"]
                    vmax = state.get("max_exp_avg_sq") if amsgrad else None
                    state["step"] = step = state["step"] + 1
                    bc1 = 1 - beta1**step
                    bc2_sqrt = (1 - beta2**step) ** 0.5
                    step_size = lr / bc1
                    w1 = 1 - beta1
                    hosts = None
                    if fused:
                        hosts = [_host(a, p) for a in (p, g, m, v, vmax if amsgrad else v)]
                        if any(h is None for h in hosts):
                            hosts = None
                    if hosts is not None:
                        hp, hg, hm, hv, hx = hosts
                        t = hp.dtype.type
                        _kernels.adam(
                            hp, hg, hm, hv, hx, t(-1 if maximize else 1),
                            t(0 if decoupled else wd), t(1 - lr * wd), t(w1), t(1) - t(w1),
                            w1 < 0.5, t(beta2), t(1 - beta2), t(bc2_sqrt), t(eps),
                            t(-step_size), bool(amsgrad), bool(decoupled and wd != 0),
                        )  # fmt: skip
                        for a in (p, m, v, vmax):
                            if a is not None:
                                bump_version(a)
                        continue
                    if wd != 0 and decoupled:
                        p *= 1 - lr * wd
                    d = -g if maximize else g
                    if wd != 0 and not decoupled:
                        d = d + wd * p
                    _lerp_(m, d, w1)
                    v *= beta2
                    v += (1 - beta2) * d * d
                    if amsgrad:
                        vmax[...] = xp.maximum(vmax, v)
                        v = vmax
                    denom = xp.sqrt(v) / bc2_sqrt + eps
                    p -= step_size * (m / denom)
        return loss


def _lerp_(a, end, w: float) -> None:
    """``a = lerp(a, end, w)`` in place, evaluated as PyTorch does for small and large weights."""
    if w < 0.5:
        a += w * (end - a)
    else:
        a[...] = end - (end - a) * (1 - w)
