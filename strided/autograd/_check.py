"""gradcheck and gradgradcheck: backward rules against central differences in double precision.

For every output element ``j`` (its real and, for complex outputs, imaginary direction ``v``) the
analytic gradient of L = Re(conj(v) * y_j) from the tape is compared with central differences of L
along the real (and, for complex inputs, imaginary) direction of every input element.
"""

from __future__ import annotations

import numpy as np

from .. import _dtypes as dt
from .._array import Array

_DOUBLE = (dt.float64, dt.complex128)


def _outputs(result) -> tuple:
    return tuple(result) if isinstance(result, (list, tuple)) else (result,)


def _evaluate(fn, inputs) -> list[np.ndarray]:
    return [np.array(o, copy=True) for o in _outputs(fn(*inputs))]


def _with_value(a: Array, flat_index: int, delta) -> Array:
    from .. import _namespace as xp

    host = np.array(a, copy=True)
    host.reshape(-1)[flat_index] += delta
    # a perturbed input still requires grad: gradgradcheck differentiates inside fn
    return xp.asarray(host, device=a.device, requires_grad=a.requires_grad)


def gradcheck(
    fn,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """True when the tape's gradients of ``fn(*inputs)`` match central differences.

    Every input that requires grad must be float64 or complex128.  On a mismatch this raises
    (or returns False with ``raise_exception=False``) naming the output, the input and the worst
    element with both values.
    """
    from . import grad

    inputs = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    diff = [i for i, a in enumerate(inputs) if isinstance(a, Array) and a._ag is not None]
    if not diff:
        raise ValueError("gradcheck: no input requires grad")
    for i in diff:
        if inputs[i].dtype not in _DOUBLE:
            raise TypeError(
                f"gradcheck: input {i} has dtype {inputs[i].dtype.name}; use float64 or "
                "complex128 so that finite differences are accurate"
            )
    outs = _outputs(fn(*inputs))
    # numeric derivatives of every output along each real direction of each input element
    derivs = {i: _numeric_derivatives(fn, inputs, i, eps) for i in diff}
    from .. import _namespace as xp

    for k, out in enumerate(outs):
        if not isinstance(out, Array) or out.dtype.kind not in dt.FLOAT_KINDS or out._ag is None:
            continue
        directions = [1.0, 1j] if out.dtype.kind == dt.COMPLEX else [1.0]
        for j in range(out.size):
            for v in directions:
                seed = np.zeros(out.shape, dtype=out.dtype.numpy)
                seed.reshape(-1)[j] = v
                gs = grad(
                    out,
                    [inputs[i] for i in diff],
                    grad_outputs=xp.asarray(seed, device=out.device),
                    retain_graph=True,
                    allow_unused=True,
                )
                for i, g in zip(diff, gs):
                    a = inputs[i]
                    analytic = (
                        np.zeros(a.shape, dtype=a.dtype.numpy) if g is None else np.asarray(g)
                    ).reshape(-1)
                    numeric = sum(unit * (np.conj(v) * d[k][j]).real for unit, d in derivs[i])
                    err = np.abs(analytic - numeric)
                    bound = atol + rtol * np.abs(numeric)
                    bad = (err > bound) | (np.isfinite(analytic) != np.isfinite(numeric))
                    if np.any(bad):
                        w = int(np.argmax(np.where(bad, err - bound, -np.inf)))
                        msg = (
                            f"gradcheck: output {k} element {j} (direction {v}) with respect to "
                            f"input {i}: element {w} differs, analytic {analytic[w]!r} vs "
                            f"numeric {numeric[w]!r} (atol={atol}, rtol={rtol})"
                        )
                        if raise_exception:
                            raise AssertionError(msg)
                        return False
    return True


def _numeric_derivatives(fn, inputs, i, eps) -> list:
    """[(unit, [d y_k / d step of input i as an (out size, in size) array per output k])] by
    central differences; the steps are the real direction and, for complex input, the imaginary
    one (unit 1j), so that sum(unit * Re(conj(v) * d)) is dL/d(re) + 1j dL/d(im)."""
    a = inputs[i]
    steps = [(eps, 1.0), (eps * 1j, 1j)] if a.dtype.kind == dt.COMPLEX else [(eps, 1.0)]
    result = []
    for delta, unit in steps:
        columns = []
        for n in range(a.size):
            ys = []
            for sign in (1, -1):
                trial = list(inputs)
                trial[i] = _with_value(a, n, sign * delta)
                ys.append([y.reshape(-1) for y in _evaluate(fn, trial)])
            columns.append([(p - m) / (2 * eps) for p, m in zip(*ys)])
        if columns:
            per_output = [
                np.stack([col[k] for col in columns], axis=1) for k in range(len(columns[0]))
            ]
        else:  # an empty input: every derivative is an empty column block
            per_output = [np.zeros((y.size, 0)) for y in _evaluate(fn, inputs)]
        result.append((unit, per_output))
    return result


def gradgradcheck(
    fn,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """gradcheck of the gradient itself: the first-order gradients (computed with
    ``create_graph=True`` for fixed random ``grad_outputs``) checked against central
    differences."""
    from .. import _namespace as xp
    from . import grad

    inputs = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    diff = [i for i, a in enumerate(inputs) if isinstance(a, Array) and a._ag is not None]
    outs = _outputs(fn(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = []
        for o in outs:
            host = rng.standard_normal(o.shape)
            if o.dtype.kind == dt.COMPLEX:
                host = host + 1j * rng.standard_normal(o.shape)
            grad_outputs.append(xp.asarray(host, dtype=o.dtype, device=o.device))

    def first_order(*args):
        ys = _outputs(fn(*args))
        gs = grad(
            list(ys),
            [args[i] for i in diff],
            grad_outputs=list(grad_outputs),
            create_graph=True,
            allow_unused=True,
        )
        return tuple(xp.zeros_like(args[i]) if g is None else g for i, g in zip(diff, gs))

    return gradcheck(
        first_order, inputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception
    )
