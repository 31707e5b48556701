# Two commands set everything up on a fresh machine with Python 3.10+ and make:
#   make demo   creates .venv, installs strided with its test extra, runs examples/tour.py
#   make test   same venv, runs the test suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench bench-ops conformance clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/tour.py

test: $(STAMP)
	$(PY) -m pytest -q -n 2 tests

lint: $(STAMP)
	$(PY) -m ruff check strided tests benchmarks conformance examples
	$(PY) -m ruff format --check strided tests benchmarks conformance examples

bench: $(STAMP)
	$(PY) benchmarks/bench_core.py

# every op vs NumPy and PyTorch (pip install torch==2.13.0 for its column); ARGS="--quick --filter exp"
bench-ops: $(STAMP)
	$(PY) benchmarks/bench_ops.py $(ARGS)

# SUITE=path/to/array-api-tests checkout (with its array-api submodule)
conformance: $(STAMP)
	$(PY) conformance/run.py --suite "$(SUITE)" $(ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
