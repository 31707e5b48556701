"""A short differential fuzzing run (the long one is ``make fuzz``): hypothesis draws programs of
1-5 operations over random dtypes, layouts and edge values; each runs in a worker process and is
checked against NumPy (values, where the standard pins them) and meta (shape, dtype, exception
type).  See ``tests/fuzz_programs.py``."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_programs import DataChooser, Worker, random_program, run_program

EXAMPLES = int(os.environ.get("FUZZ_SHORT_EXAMPLES", 120))


@pytest.fixture(scope="module")
def worker():
    w = Worker()
    yield w
    w.close()


def _check(result: dict) -> None:
    if result["status"] not in ("ok", "known", "open"):
        pytest.fail(
            f"{result['status']}: {result['detail']}\n-- reproducer --\n{result['code']}",
            pytrace=False,
        )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=os.environ.get("FUZZ_SEED") is None,  # a fixed set in `make test` unless asked
)
@given(data=st.data())
def test_random_programs_agree_with_numpy_and_meta(worker, data):
    program = random_program(DataChooser(data))
    _check(worker.run(program))


# -- the harness itself can fail -----------------------------------------------------------------
def _program(*steps, dtype="float64", values="small", shape=(3, 2)):
    spec = {"shape": list(shape), "dtype": dtype, "layout": "negative", "values": values}
    return {"inputs": [dict(spec, seed=1)], "steps": [[s, [1, 2, 3, 4, 5, 6]] for s in steps]}


def test_a_crashing_program_is_reported_with_its_reproducer(worker):
    result = worker.run(_program("__crash__"))
    assert result["status"] == "crash"
    assert "run_program(program)" in result["code"] and '"__crash__"' in result["code"]
    assert worker.run(_program("exp"))["status"] == "ok"  # a fresh worker carries on


def test_a_wrong_value_is_a_mismatch():
    result = run_program(_program("exp", "__wrong__"))
    assert result["status"] == "mismatch" and "step 1" in result["detail"]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "negative", "broadcast"])
def test_every_layout_builds_on_cpu_and_meta(layout):
    program = _program("sum", "argmax")
    program["inputs"][0]["layout"] = layout
    program["inputs"][0]["values"] = "edge"
    assert run_program(program)["status"] == "ok"


def test_a_write_outside_the_output_is_reported_at_its_step():
    """The argmin bug of issue 13, replayed: a kernel writing one element past its output."""
    from strided import dispatch
    from tests.fuzz_programs import guard_allocations

    empty, real = dispatch.kernel("empty", "cpu"), dispatch.kernel("argmax", "cpu")

    def argmax_past_the_end(out, x, **params):
        real(out, x, **params)
        out._buf.base[out._buf.size + 8] = 1  # 8: the canary pad, in elements

    try:
        guard_allocations()
        dispatch.register("argmax", "cpu")(argmax_past_the_end)
        result = run_program(_program("exp", "argmax"))
        assert result["status"] == "bounds" and "step 1" in result["detail"], result
        assert "argmax" in result["detail"] and "run_program(program)" in result["code"]
        dispatch.register("argmax", "cpu")(real)
        assert run_program(_program("exp", "argmax"))["status"] == "ok"  # the real kernel passes
    finally:
        dispatch.register("argmax", "cpu")(real)
        dispatch.register("empty", "cpu")(empty)
