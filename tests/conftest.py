"""Shared test settings."""

import os

import pytest

# SciPy reads this once, at import: its array-API aware functions then accept strided arrays
# (tests/test_consumers.py). Set before anything imports SciPy (numba's BLAS does, lazily).
os.environ.setdefault("SCIPY_ARRAY_API", "1")

from hypothesis import HealthCheck, settings

# CI machines are shared and slow; numba compiles on first use inside a test
settings.register_profile(
    "strided",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "strided"))


@pytest.fixture
def cuda_host():
    """The cuda device on host execution (no GPU needed) for the test; yields the host runtime."""
    from strided.backends.cuda import host_execution

    with host_execution() as rt:
        yield rt
