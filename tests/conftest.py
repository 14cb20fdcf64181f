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


def _refuse_non_json(constant):
    raise AssertionError(f"a summary.json holds {constant}, which strict JSON parsers refuse")


@pytest.fixture(autouse=True)
def _summaries_are_strict_json(request):
    """Every summary.json a test writes under its tmp_path parses with a parser that
    refuses NaN and Infinity (issue 31, item 5)."""
    # asked for before the test runs, so that it is torn down after this fixture
    folder = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    if folder is None:
        return
    import json

    for path in folder.rglob("summary.json"):
        json.loads(path.read_text(), parse_constant=_refuse_non_json)
