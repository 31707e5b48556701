# Two commands set everything up on a fresh machine with Python 3.10+ and make:
#   make demo   creates .venv, installs strided with its test extra, runs examples/tour.py and
#               examples/train_digits.py (fast settings; plot and checkpoints in runs/)
#   make test   same venv, runs the test suite (the cuda extra too: without a GPU, the cuda
#               kernels are compiled by NVRTC and run on the host with g++)
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench bench-meta bench-nn bench-ops bench-threads bench-cuda bench-memory conformance fuzz boundscheck clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-compile -e ".[test,cuda]"
	@# byte-compile what pip installed on every core (pip's own pass is serial: ~40 s vs ~25 s);
	@# -qq and `|| true`: some packages ship files for newer Pythons, which pip skips the same way
	$(PY) -m compileall -qq -j 0 "$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" || true
	touch $(STAMP)

demo: $(STAMP)
	@# strided's bytecode, as an installed package has it (not written where PYTHONDONTWRITEBYTECODE
	@# is set: each process would compile the 5,000-line generated kernel module, ~0.1 s)
	$(PY) -m compileall -qq -j 0 strided
	$(PY) examples/tour.py
	$(PY) examples/train_digits.py --fast --out runs

test: $(STAMP)
	@# bytecode for strided and the tests' helpers, written once: where PYTHONDONTWRITEBYTECODE is
	@# set, every worker and every subprocess a test starts would compile them again (~0.8 s each)
	$(PY) -m compileall -qq -j 0 strided tests
	@# worksteal: each worker starts on its own half of the files (stealing from the other's at
	@# the end), so each loads about half of the compiled kernels instead of most of them (one
	@# cold run each, 2026-11-28: 13m41 -> 13m02, within this machine's variation)
	$(PY) -m pytest -q -n 2 --dist worksteal tests

lint: $(STAMP)
	$(PY) -m ruff check strided tests benchmarks conformance examples
	$(PY) -m ruff format --check strided tests benchmarks conformance examples

bench: $(STAMP)
	$(PY) benchmarks/bench_core.py

# GPT-3 175B on meta vs PyTorch's meta device; strided.nn vs PyTorch (conv, digits CNN, MLP step)
bench-meta: $(STAMP)
	$(PY) benchmarks/bench_meta.py
bench-nn: $(STAMP)
	$(PY) benchmarks/bench_nn.py $(ARGS)

# every op vs NumPy and PyTorch (pip install torch==2.13.0 for its column); ARGS="--quick --filter exp"
bench-ops: $(STAMP)
	$(PY) benchmarks/bench_ops.py $(ARGS)

# parallel kernels beside BLAS and busy processes: strided's OpenMP spin bound vs libgomp's default
bench-threads: $(STAMP)
	$(PY) benchmarks/bench_threads.py $(ARGS)

# the cuda device on a GPU: bandwidth fractions, matmul vs cuBLAS, per-call cost vs CuPy/PyTorch
bench-cuda: $(STAMP)
	$(PY) benchmarks/bench_cuda.py $(ARGS)

# 1,000,000 small ops with and without gradients: RSS after warm-up vs at the end
bench-memory: $(STAMP)
	$(PY) benchmarks/bench_memory.py

# the long differential fuzzing run (a short one is part of `make test`):
#   make fuzz FUZZ_EXAMPLES=20000 FUZZ_SEED=1 FUZZ_WORKERS=2
FUZZ_EXAMPLES ?= 20000
FUZZ_SEED ?= 0
FUZZ_WORKERS ?= 2
fuzz: $(STAMP)
	$(PY) -m tests.fuzz_programs --examples $(FUZZ_EXAMPLES) --seed $(FUZZ_SEED) --workers $(FUZZ_WORKERS)

# the op table over every layout with numba's bounds checking on; a cache directory of its own,
# so that no kernel compiled without the checks is loaded (the first run compiles everything)
boundscheck: $(STAMP)
	NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR=$(CURDIR)/.numba-boundscheck \
		$(PY) -m pytest -q -n 2 tests/test_bounds.py tests/test_robustness.py tests/test_searching.py

# SUITE=path/to/array-api-tests checkout (with its array-api submodule)
conformance: $(STAMP)
	$(PY) conformance/run.py --suite "$(SUITE)" $(ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .numba-boundscheck runs
