"""``RMSprop``: gradients scaled by a running root mean square (optionally centered)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .. import _namespace as xp
from .._tape import bump_version
from ..autograd import no_grad
from . import _kernels
from .adam import _lerp_
from .optimizer import Optimizer, _check_grad, _check_nonneg, _host

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (PyTorch's ``torch.optim.RMSprop``, same update).

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p                          if weight_decay != 0
        v = alpha * v + (1 - alpha) * g * g
        avg = sqrt(v - g_avg**2) + eps, g_avg = lerp(g_avg, g, 1 - alpha)   if centered
        avg = sqrt(v) + eps                               otherwise
        b = momentum * b + g / avg;  p = p - lr * b       if momentum > 0
        p = p - lr * g / avg                              otherwise

    State per parameter: ``step``, ``square_avg`` (``momentum_buffer``, ``grad_avg``).
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        *,
        fused: bool | None = None,
    ) -> None:
        lr = float(lr)
        _check_nonneg("RMSprop", "learning rate", lr)
        _check_nonneg("RMSprop", "epsilon value", eps)
        _check_nonneg("RMSprop", "momentum value", momentum)
        _check_nonneg("RMSprop", "weight_decay value", weight_decay)
        _check_nonneg("RMSprop", "alpha value", alpha)
        if differentiable:
            raise NotImplementedError("RMSprop: differentiable=True is not supported")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One RMSprop update of every parameter that has a gradient; returns ``closure()``."""
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                alpha = group["alpha"]
                eps = group["eps"]
                wd = group["weight_decay"]
                momentum = group["momentum"]
                centered = group["centered"]
                maximize = group["maximize"]
                fused = group.get("fused") is not False
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    _check_grad("RMSprop", p, g)
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0.0
                        state["square_avg"] = xp.zeros_like(p)
                        if momentum > 0:
                            state["momentum_buffer"] = xp.zeros_like(p)
                        if centered:
                            state["grad_avg"] = xp.zeros_like(p)
                    state["step"] += 1
                    sq = state["square_avg"]
                    buf = state.get("momentum_buffer") if momentum > 0 else None
                    ga = state.get("grad_avg") if centered else None
                    w = 1 - alpha
                    hosts = None
                    if fused:
                        hosts = [
                            _host(a, p)
                            for a in (
                                p,
                                g,
                                sq,
                                sq if ga is None else ga,
                                sq if buf is None else buf,
                            )
                        ]
                        if any(h is None for h in hosts):
                            hosts = None
                    if hosts is not None:
                        hp, hg, hs, ha, hb = hosts
                        t = hp.dtype.type
                        _kernels.rmsprop(
                            hp, hg, hs, ha, hb, t(-1 if maximize else 1), t(wd), t(alpha),
                            t(w), t(1) - t(w), w < 0.5, t(eps), t(-lr), t(momentum),
                            bool(centered),
                        )  # fmt: skip
                        for a in (p, sq, ga, buf):
                            if a is not None:
                                bump_version(a)
                        continue
                    d = -g if maximize else g
                    if wd != 0:
                        d = d + wd * p
                    sq *= alpha
                    sq += w * d * d
                    if centered:
                        _lerp_(ga, d, w)
                        avg = xp.sqrt(sq - ga * ga)
                    else:
                        avg = xp.sqrt(sq)
                    avg += eps
                    if momentum > 0:
                        buf *= momentum
                        buf += d / avg
                        p -= lr * buf
                    else:
                        p -= lr * (d / avg)
        return loss
