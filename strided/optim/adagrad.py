"""``Adagrad``: per-element learning rates from the running sum of squared gradients."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .. import _namespace as xp
from .._tape import bump_version
from ..autograd import no_grad
from . import _kernels
from .optimizer import Optimizer, _check_grad, _check_nonneg, _host

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (PyTorch's ``torch.optim.Adagrad``, same update).

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``), at step ``t``::

        g = g + weight_decay * p                         if weight_decay != 0
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g;  p = p - clr * g / (sqrt(s) + eps)

    The state (``step``, ``sum`` = ``initial_accumulator_value``) is created with the optimizer.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        lr = float(lr)
        _check_nonneg("Adagrad", "learning rate", lr)
        _check_nonneg("Adagrad", "lr_decay value", lr_decay)
        _check_nonneg("Adagrad", "weight_decay value", weight_decay)
        _check_nonneg("Adagrad", "initial_accumulator_value value", initial_accumulator_value)
        _check_nonneg("Adagrad", "epsilon value", eps)
        if differentiable:
            raise NotImplementedError("Adagrad: differentiable=True is not supported")
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
        for group in self.param_groups:
            init = group["initial_accumulator_value"]
            for p in group["params"]:
                state = self.state[p]
                state["step"] = 0.0
                state["sum"] = xp.full(p.shape, init, dtype=p.dtype, device=p.device)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Adagrad update of every parameter that has a gradient; returns ``closure()``."""
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                lr_decay = group["lr_decay"]
                eps = group["eps"]
                wd = group["weight_decay"]
                maximize = group["maximize"]
                fused = group.get("fused") is not False
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    _check_grad("Adagrad", p, g)
                    state = self.state[p]
                    state["step"] = step = state["step"] + 1
                    s = state["sum"]
                    clr = lr / (1 + (step - 1) * lr_decay)
                    hosts = None
                    if fused:
                        hosts = [_host(a, p) for a in (p, g, s)]
                        if any(h is None for h in hosts):
                            hosts = None
                    if hosts is not None:
                        hp, hg, hs = hosts
                        t = hp.dtype.type
                        _kernels.adagrad(
                            hp, hg, hs, t(-1 if maximize else 1), t(wd), t(eps), t(-clr)
                        )
                        bump_version(p)
                        bump_version(s)
                        continue
                    d = -g if maximize else g
                    if wd != 0:
                        d = d + wd * p
                    s += d * d
                    p -= clr * (d / (xp.sqrt(s) + eps))
        return loss
