"""Shared pytest configuration."""

import os

import pytest
from hypothesis import settings

from repo_paths import SHARED_TRACES

# numba compiles on first call, so a per-example deadline would flake on the first example.
settings.register_profile("schedbench", deadline=None, print_blob=True)
# Under CI (the variable CI set, as CI services and .ci/run's callers do) every run draws
# the same examples, so a red CI run is repeatable and a green one stays green for the
# same sources.  Elsewhere each run draws new ones: that is how rare cases are still
# found (two in the last stops), and each such case is then kept as an @example.
settings.register_profile("schedbench-ci", parent=settings.get_profile("schedbench"), derandomize=True)
settings.load_profile("schedbench-ci" if os.environ.get("CI") else "schedbench")


# Replay loops compiled once at the start of a parallel run of the whole suite (pytest -n 2
# or more, as make test), each worker walking the list from its own end, each loop under a
# lock of numba's cache folder (schedbench.engine.warm.ready): one worker compiles it, the
# other loads it, or passes it by while the first still compiles it (where the two walks
# meet: waiting there left a core idle for up to a loop's compile, and the files that need
# the middle loops come later).  Two kinds (bench/compile_cost.py --tests tests; the figures are
# in docs/internals/performance.md):
# * loops that test files which may run in different workers need: both workers met them
#   at about the same moment and both compiled them (conservative pool and nodes:
#   tests/plan/test_site.py, tests/io/test_sacct.py, tests/io/test_slurm_conf.py and
#   tests/test_docs.py; slurm: tests/engine/test_dependencies.py and test_docs.py;
#   easy and easy-sjbf with a packed predictor: tests/test_predictors.py and
#   tests/schedulers/test_easy_sjbf.py), 10 to 60 CPU s each time;
# * the two nodes loops of tests/schedulers/test_fairshare.py's Eurora test, which was
#   otherwise the slowest test of a cold run (55 CPU s of compiling in one test), so that
#   both workers share that compile from the start;
# * easy on a pool with the default predictor, the loop most files run (23): both workers
#   compiled it in one cold run (tests/io/test_slurm_conf.py and test_fairshare.py).
# (scheduler, mode, predictor): the mode's tiny workload takes the same loop types as the
# tests' workloads (a loop a test compiles again shows in compile_cost's table).  Each of
# the eight is run by three test files or more (compile_cost's table of every loop's
# users), so none would be compiled once anyway by the one file that needs it.
SHARED_LOOPS = [
    ("conservative", "pool", "requested"),
    ("easy-sjbf", "pool", "tsafrir"),
    ("easy", "nodes", "requested"),
    ("slurm", "pool", "requested"),
    ("easy", "pool", "requested"),
    ("priority", "nodes", "requested"),
    ("easy", "pool", "user-profile"),
    ("conservative", "nodes", "requested"),
]


@pytest.fixture(scope="session", autouse=True)
def _shared_loops_compiled_once(request, worker_id):
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) < 2:
        return  # one process: compile what its tests need, when they need it
    files = {item.path.relative_to(request.config.rootpath).as_posix() for item in request.session.items}
    if not {"tests/test_docs.py", "tests/plan/test_site.py"} <= files:
        return  # a part of the suite: its own loops, when its tests need them
    from schedbench.engine.warm import mode_input, ready

    order = SHARED_LOOPS if int(worker_id.removeprefix("gw") or 0) % 2 == 0 else SHARED_LOOPS[::-1]
    for scheduler, mode, predictor in order:
        table, machine, meta = mode_input(mode)
        ready(table, machine, scheduler, "ff", predictor, meta=meta, wait=False)


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
