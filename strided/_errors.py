"""Exceptions shared by the namespace and the backends."""

from __future__ import annotations

import functools
import inspect
import re

__all__ = [
    "LinAlgError",
    "linalg_failure",
    "batched_linalg",
    "named",
    "name_errors",
    "names_its_errors",
    "forwarding",
    "renamed",
    "NAMED_ERRORS",
]


class LinAlgError(ValueError):
    """A linear-algebra routine failed on valid input: a singular matrix (``inv``, ``solve``), a
    matrix that is not positive definite (``cholesky``), or an iteration that did not converge.

    A subclass of ``ValueError``, as NumPy's ``numpy.linalg.LinAlgError`` is; the message names the
    function and, for stacks, the batch index of the first matrix that failed.  Exported as
    ``strided.linalg.LinAlgError``.
    """

    __module__ = "strided.linalg"


def linalg_failure(op: str, what: str, index) -> LinAlgError:
    """The LinAlgError of ``op`` failing with ``what``, naming the batch ``index`` when given."""
    where = f" (at batch index {index})" if index is not None else ""
    return LinAlgError(f"{op}: {what}{where}")


def batched_linalg(op: str, what: str | None, fn, *arrays, **kw):
    """``fn(*arrays, **kw)``, a linalg function with NumPy's interface over a whole stack of
    matrices (NumPy's or CuPy's), with its LinAlgError turned into strided's: the message names
    ``op`` (``what`` replaces the library's text when given) and, in a stack, the index of the
    first matrix that fails (found on the error path only, matrix by matrix)."""
    import numpy as np  # CuPy raises NumPy's LinAlgError too

    try:
        return fn(*arrays, **kw)
    except np.linalg.LinAlgError as e:
        index = None
        if arrays[0].ndim > 2:
            for idx in np.ndindex(arrays[0].shape[:-2]):
                try:
                    fn(*(a[idx] for a in arrays), **kw)
                except np.linalg.LinAlgError:
                    index = idx
                    break
        raise linalg_failure(op, what or str(e), index) from None


# the exceptions a user may see from the namespace; anything else escaping is a bug
_NAMED = (TypeError, ValueError, IndexError, OverflowError, RuntimeError, NotImplementedError)
NAMED_ERRORS = _NAMED
_PREFIX = re.compile(r"^[A-Za-z_][\w.]*: ")


def renamed(op: str, e: BaseException) -> BaseException:
    """``e`` itself when its message already starts with ``op``, else an exception of the same
    type whose message does (an inner function's prefix replaced)."""
    msg = str(e)
    short = op.rsplit(".", 1)[-1]
    if msg.startswith((op + ":", short + ":")):
        return e
    try:
        return type(e)(f"{op}: {_PREFIX.sub('', msg, count=1)}")
    except Exception:  # an exception type with its own signature: leave it alone
        return e


def named(op: str):
    """Decorator for compositions: an error raised by an inner function (``std`` calls ``var``,
    ``clip`` calls ``maximum``) is raised again naming ``op``, the function the user called, with
    the same type and message (the inner error stays attached as ``__cause__``).
    """

    short = op.rsplit(".", 1)[-1]  # "fft.ifft" may say "ifft: ..."

    def rename(e):
        msg = str(e)
        if msg.startswith((op + ":", short + ":")):
            raise e
        try:
            renamed = type(e)(f"{op}: {_PREFIX.sub('', msg, count=1)}")
        except Exception:  # an exception type with its own signature: leave it alone
            raise e from None
        raise renamed from e

    def decorate(fn):
        wrapper = forwarding(fn, fn, rename=rename)
        if wrapper is None:  # a signature the generated wrapper does not take

            def wrapper(*args, **kwargs):
                try:
                    return fn(*args, **kwargs)
                except _NAMED as e:
                    rename(e)

        return functools.wraps(fn)(wrapper)

    return decorate


_KINDS = inspect.Parameter


def forwarding(fn, target, *, by_name_from: int | None = None, rename=None):
    """A function with ``fn``'s own parameters (generated once) that calls ``target`` with them:
    positionally as they are declared, or by name from the ``by_name_from``-th parameter on
    (keyword-only ones always by name); with ``rename``, a named error raised inside is handed
    to it.  None where ``fn`` has no signature to copy.  A ``(*args, **kwargs)`` wrapper packed
    and unpacked a tuple and a dict on every call (~0.3 us of a 3 us call)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params, call = [], []
    scope = {"target": target, "rename": rename, "NAMED": _NAMED}
    star = slash = False
    for i, p in enumerate(sig.parameters.values()):
        name = p.name
        if not name.isidentifier() or name in scope:
            return None
        text = name
        if p.default is not p.empty:
            scope[f"_default{i}"] = p.default
            text += f"=_default{i}"
        if p.kind is _KINDS.POSITIONAL_ONLY:
            slash = True
        elif slash:
            params.append("/")
            slash = False
        if p.kind is _KINDS.VAR_POSITIONAL:
            if by_name_from is not None and i >= by_name_from:
                return None  # (extra positional arguments cannot go by name)
            text, star = f"*{name}", True
            call.append(text)
        elif p.kind is _KINDS.KEYWORD_ONLY:
            if not star:
                params.append("*")
                star = True
            call.append(f"{name}={name}")
        elif p.kind is _KINDS.VAR_KEYWORD:
            text = f"**{name}"
            call.append(text)
        elif by_name_from is not None and i >= by_name_from:
            call.append(f"{name}={name}")
        else:
            call.append(name)
        params.append(text)
    if slash:
        params.append("/")
    body = f"return target({', '.join(call)})"
    if rename is not None:
        body = f"try:\n        {body}\n    except NAMED as e:\n        rename(e)"
    source = f"def wrapper({', '.join(params)}):\n    {body}\n"
    exec(source, scope)  # noqa: S102 (source built from the signature's own identifiers)
    return scope["wrapper"]


def names_its_errors(fn):
    """Mark a public function whose body only calls the primitive of its own name: the
    dispatcher already names that primitive's errors after it, so :func:`name_errors` leaves
    the function unwrapped (a frame and a ``try`` less on every call)."""
    fn.names_its_errors = True
    return fn


def name_errors(namespace: dict, names, prefix: str = "") -> None:
    """Wrap the functions ``names`` of a namespace (a module's globals) with :func:`named`,
    except those marked by :func:`names_its_errors`.

    Done once, on the public names only: the op layer's own calls between functions stay
    unwrapped (no cost), and what a user calls names itself in every error.
    """
    for n in names:
        if not getattr(namespace[n], "names_its_errors", False):
            namespace[n] = named(prefix + n)(namespace[n])
