"""Shared pytest configuration."""

import pytest
from hypothesis import settings

from repo_paths import SHARED_TRACES

# numba compiles on first call, so a per-example deadline would flake on the first example.
settings.register_profile("schedbench", deadline=None)
settings.load_profile("schedbench")


@pytest.fixture(scope="session")
def shared_traces():
    """The shared traces folder (``../shared/traces`` beside the repository); the test is
    skipped where it is absent (a clone without it)."""
    if not SHARED_TRACES.is_dir():
        pytest.skip(f"{SHARED_TRACES} not present")
    return SHARED_TRACES
