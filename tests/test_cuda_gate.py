"""The compile gate: every cuda kernel source, with every instantiation the backend can request,
compiled by NVRTC for sm_90 (no GPU needed); a compile error or a register spill fails.

The 64-bit-index twins of the map and ``where`` kernels (launched only where an array's indices
do not fit 32 bits) go through NVRTC's front end only: every one is instantiated and checked for
errors, but not translated to machine code, so their registers and spills are not checked.  Their
32-bit twins, the same template with the narrower index, are compiled in full.  Translating the
wide twins was about half of the gate's time (cold, on 2 cores: 250 -> 123 CPU seconds).

Likewise an instantiation whose element types are all narrow (bool and the integers of up to 32
bits, held in 32-bit registers) goes through the front end only when the same kernel (template
and functor) is also instantiated for a 64-bit or floating type, which is compiled in full: that
one needs at least as many registers for the same code.  Every kernel keeps an instantiation
compiled in full (checked); 1004 of the 1741 narrow-index instantiations are (cold, on 2 cores:
103 -> 60 CPU seconds).

A module that passed is remembered (a stamp named by the hash of its source, instantiations,
the ones translated, options and the NVRTC version, in the host layer's ignored cache folder),
so only changed sources are compiled again.  Also checks that the instantiations cover every
dtype the primitives' rules compute in, except the gaps listed in ``KNOWN_GAPS``.
"""

from __future__ import annotations

import hashlib

import pytest

from strided import _dtypes as sdt
from strided import dispatch

from .cuda_cases import CUDA_INSTALLED, HAVE_CUPY, NO_CUPY

pytestmark = pytest.mark.skipif(not (HAVE_CUPY and CUDA_INSTALLED), reason=NO_CUPY)


def _nvrtc_version():
    try:
        from cupy.cuda import nvrtc

        return nvrtc.getVersion()
    except Exception as e:  # noqa: BLE001  (no NVRTC library: the gate cannot run)
        pytest.skip(f"NVRTC is not available ({e}); pip install nvidia-cuda-nvrtc")


def _modules():
    if not (HAVE_CUPY and CUDA_INSTALLED):
        return {}
    from strided.backends.cuda import _sources

    return _sources.all_modules()


MODULES = _modules()


#: element types (C names) whose instantiations are translated to machine code by the gate
_FULL_TYPES = frozenset({"i64", "u64", "f32", "f64", "c64", "c128"})


def _split(name: str) -> tuple[str, list[str]]:
    """(the instantiation with its dtype arguments left out, those dtypes); the index-type
    argument of a map or ``where`` kernel is not a dtype."""
    from strided.backends.cuda._sources import CTYPE

    if "<" not in name:
        return name, []
    args = [a.strip() for a in name[name.index("<") + 1 : -1].split(",")]
    index = args.pop() if name.startswith(("map", "where_3d<")) else None
    types = [a for a in args if a in CTYPE.values()]
    rest = [a for a in args if a not in CTYPE.values()]
    return f"{name.split('<')[0]}<{', '.join(rest)}; {index}>", types


def _translated(names) -> list[str]:
    """The instantiations of a module the gate compiles to machine code (the others go through
    the front end only): not the 64-bit-index twins, and of each kernel (template and functor)
    those with a wide or floating element type, or all of them where it has none."""
    from strided.backends.cuda._sources import wide_index

    narrow = [n for n in names if not wide_index(n)]
    heavy = {n for n in narrow if not _FULL_TYPES.isdisjoint(_split(n)[1])}
    covered = {_split(n)[0] for n in heavy}
    return [n for n in narrow if n in heavy or _split(n)[0] not in covered]


def test_every_kernel_keeps_an_instantiation_compiled_in_full():
    from strided.backends.cuda._sources import wide_index

    for key, (_, names) in MODULES.items():
        kernels = {_split(n)[0] for n in names if not wide_index(n)}
        assert kernels == {_split(n)[0] for n in _translated(names)}, key
    names = ["map2_1d<op_add, u8, u8, i32>", "map2_1d<op_add, i64, i64, i32>",
             "map2_1d<op_and, b1, b1, i32>", "map2_1d<op_and, b1, b1, i64>",
             "take3<u16>", "take3<f32>", "normalize_index"]  # fmt: skip
    assert _translated(names) == [names[1], names[2], names[5], names[6]]
    assert _split(names[0]) == ("map2_1d<op_add; i32>", ["u8", "u8"])


@pytest.mark.parametrize("key", sorted(MODULES))
def test_module_compiles_for_sm90_without_spills(key):
    from strided.backends.cuda import _gate, _runtime
    from strided.backends.cuda._host import cache_dir

    source, names = MODULES[key]
    version = _nvrtc_version()
    full = _translated(names)
    front_end_only = sorted(set(names) - set(full))
    # (the translated set is part of the stamp: a module passed under a narrower set is checked
    # again when the set grows)
    parts = [source, *names, "translated:", *full, *_runtime.NVRTC_OPTIONS, _gate.ARCH]
    digest = hashlib.sha256("\0".join([*parts, str(version)]).encode()).hexdigest()[:32]
    stamp = cache_dir() / "gate" / f"{digest}.ok"
    if stamp.exists():
        return
    r = _gate.compile_module(source, full)
    assert not r.spills, f"{key}: register spills {r.spills}"
    assert r.ok, f"{key}: NVRTC failed:\n{r.log[-6000:]}"
    assert r.kernels == len(full), f"{key}: {r.kernels} kernels for {len(full)} instantiations"
    if front_end_only:
        w = _gate.check_syntax(source, front_end_only)
        assert w.ok, f"{key}: NVRTC's front end failed:\n{w.log[-6000:]}"
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(f"{key}: {r.kernels} kernels\n")


# compute dtypes a rule can produce that have no cuda instantiation yet: the inverse
# trigonometric and hyperbolic functions and pow of complex numbers
_COMPLEX_MATH = {"asin", "acos", "atan", "asinh", "acosh", "atanh", "pow"}
KNOWN_GAPS = {(op, d) for op in _COMPLEX_MATH for d in ("complex64", "complex128")}


def test_instantiations_cover_the_rules_dtypes():
    from strided._ops.core import _dtype_table
    from strided.backends.cuda import _ops, _sources

    missing = []
    for name, prim in dispatch.primitives().items():
        if prim.kind not in ("unary", "binary"):
            continue
        _, module_names = _sources.elementwise(name)
        for d, pair in _dtype_table(prim).items():
            if pair is None:
                continue
            compute, out = pair
            want = _sources.map_name(name, _ops.OPS[name][0], "1d", out.name, compute.name, "i32")
            if want not in module_names and (name, compute.name) not in KNOWN_GAPS:
                missing.append((name, d.name, compute.name))
    assert not missing, f"rules compute in dtypes without a cuda kernel: {missing}"
    for op, pairs in _sources.REDUCTIONS.items():
        accepts = sdt.CATEGORIES[dispatch.primitive(op).accepts]
        assert {t for _, t in pairs} >= {d.name for d in sdt.ALL_DTYPES if d.kind in accepts} - {
            "bool"
        } or op in ("any", "all"), op


def test_every_wide_index_twin_has_its_narrow_twin_compiled_in_full():
    from strided.backends.cuda._sources import INDEX, wide_index

    wide_total = 0
    for key, (_, names) in MODULES.items():
        for n in names:
            if wide_index(n):
                wide_total += 1
                assert n[: -len(INDEX[1]) - 1] + INDEX[0] + ">" in names, (key, n)
    # the map and where modules are the only ones with an index parameter: half their names
    maps = sum(len(names) for k, (_, names) in MODULES.items() if k.split(":")[0] in
               ("elementwise", "copy", "where"))  # fmt: skip
    assert wide_total * 2 == maps


def test_the_syntax_check_fails_on_an_error_in_a_wide_instantiation_only():
    from strided.backends.cuda import _gate

    source = (
        "typedef int i32; typedef long long i64;\n"
        "template <typename I> __global__ void k(float* o, I n)"
        ' { static_assert(sizeof(I) == 4, "narrow only"); o[n] = 1.0f; }\n'
    )
    _nvrtc_version()
    assert _gate.check_syntax(source, ["k<i32>"]).ok
    bad = _gate.check_syntax(source, ["k<i64>"])
    assert not bad.ok and "narrow only" in bad.log
