"""The compile gate: every kernel module compiled by NVRTC for a GPU architecture, no device
needed.

``compile_module(source, names)`` compiles one module's source with its name expressions to a
cubin (``-Xptxas=-v``, so that the log reports registers and spills) and returns a
:class:`GateResult`; ``check_syntax(source, names)`` runs only NVRTC's front end (every template
instantiated and checked, no code generated: ~0.05 s a module).  ``tests/test_cuda_gate.py`` runs
both over ``_sources.all_modules()`` and fails on a compile error or a register spill.  NVRTC is
reached through CuPy's wrapper of it, which compiles without asking the driver for a device.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from ._runtime import NVRTC_OPTIONS

ARCH = "sm_90"  # the GPUs the project targets first (H100/H200)
_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_ENTRY = re.compile(r"Compiling entry function '([^']+)'")


@dataclass
class GateResult:
    ok: bool
    log: str
    kernels: int  # entry functions compiled
    spills: list  # (mangled kernel name, store bytes, load bytes) of kernels that spill


def _compile(source: str, names, method: str, options: tuple):
    """NVRTC over ``source`` with ``names`` instantiated: (log, None) or (None, error text)."""
    from cupy.cuda import compiler

    prog = compiler._NVRTCProgram(source, "strided.cu", name_expressions=list(names) or None,
                                  method=method)  # fmt: skip
    log = io.StringIO()
    try:
        prog.compile(options=options, log_stream=log)
    except compiler.CompileException as e:
        return None, str(e)
    return log.getvalue(), None


def check_syntax(source: str, names, arch: str = ARCH) -> GateResult:
    """NVRTC's front end over ``source`` with the name expressions ``names``: every template is
    instantiated and checked (errors, static assertions), no PTX or machine code is made, so
    registers and spills are not known."""
    log, error = _compile(source, names, "ptx", (f"-arch={arch}", *NVRTC_OPTIONS,
                                                 "-fdevice-syntax-only"))  # fmt: skip
    if error is not None:
        return GateResult(False, error, 0, [])
    return GateResult(True, log, len(names), [])


def compile_module(source: str, names, arch: str = ARCH) -> GateResult:
    """Compile ``source`` with the name expressions ``names`` to a cubin for ``arch``."""
    text, error = _compile(source, names, "cubin", (f"-arch={arch}", *NVRTC_OPTIONS, "-Xptxas=-v"))
    if error is not None:
        return GateResult(False, error, 0, [])
    spills, entry = [], None
    for line in text.splitlines():
        m = _ENTRY.search(line)
        if m:
            entry = m.group(1)
        m = _SPILL.search(line)
        if m and (int(m.group(1)) or int(m.group(2))):
            spills.append((entry, int(m.group(1)), int(m.group(2))))
    return GateResult(not spills, text, len(_ENTRY.findall(text)), spills)
