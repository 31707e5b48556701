"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .. import _namespace as xp
from .._tape import bump_version
from ..autograd import no_grad
from . import _kernels
from .optimizer import Optimizer, _check_grad, _check_nonneg, _host

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (PyTorch's ``torch.optim.SGD``, same update).

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p                       if weight_decay != 0
        b = g (first step) or momentum * b + (1 - dampening) * g    if momentum != 0
        g = g + momentum * b (nesterov) or b           if momentum != 0
        p = p - lr * g

    ``fused=None`` (default) updates dense cpu float parameters in one fused loop;
    ``fused=False`` always uses the namespace's operations (any device, meta included).
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        lr = float(lr)
        _check_nonneg("SGD", "learning rate", lr)
        _check_nonneg("SGD", "momentum value", momentum)
        _check_nonneg("SGD", "weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum and zero dampening")
        if differentiable:
            raise NotImplementedError("SGD: differentiable=True is not supported")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One SGD update of every parameter that has a gradient; returns ``closure()``."""
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                momentum = group["momentum"]
                dampening = group["dampening"]
                wd = group["weight_decay"]
                nesterov = group["nesterov"]
                maximize = group["maximize"]
                fused = group.get("fused") is not False
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    _check_grad("SGD", p, g)
                    state = self.state[p] if momentum != 0 else None
                    buf = None if state is None else state.get("momentum_buffer")
                    hp = _host(p) if fused else None
                    hg = _host(g, p) if hp is not None else None
                    hb = hp
                    if hg is not None and buf is not None:
                        hb = _host(buf, p)
                        if hb is None:
                            hg = None  # a state array that the fused loop cannot take
                    if hg is not None:
                        init = momentum != 0 and buf is None
                        if init:
                            buf = xp.empty_like(p)
                            hb = _host(buf)
                        t = hp.dtype.type
                        _kernels.sgd(
                            hp, hg, hb, t(-lr), t(-1 if maximize else 1), t(wd),
                            t(momentum), t(1 - dampening), bool(nesterov), init,
                        )  # fmt: skip
                        bump_version(p)
                        if buf is not None:
                            bump_version(buf)
                    else:
                        d = -g if maximize else g
                        if wd != 0:
                            d = d + wd * p
                        if momentum != 0:
                            if buf is None:
                                buf = xp.asarray(d, copy=True)
                            else:
                                buf *= momentum
                                buf += (1 - dampening) * d
                            d = d + momentum * buf if nesterov else buf
                        p -= lr * d
                    if state is not None:
                        state["momentum_buffer"] = buf
        return loss
