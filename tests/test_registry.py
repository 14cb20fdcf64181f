"""The registry: a scheduler registered from outside the package (this file) runs through
``replay`` (API and CLI) and a sweep like a built-in one; Python policies too.

The toy jitted scheduler is all a plug-in writes: its state (a namedtuple of arrays), its
pass (``@implements(schedule, State)``) and a factory; the core's replay loop runs it."""

from __future__ import annotations

import json
from typing import NamedTuple

import numba
import numpy as np
import polars as pl
import pytest

from schedbench import registry
from schedbench.cli import main as cli
from schedbench.core import JittedScheduler
from schedbench.core.api import (
    C_QH,
    C_QN,
    fits_now,
    implements,
    queue_compact,
    schedule,
    try_start,
)
from schedbench.core.layout import J_UNITS
from schedbench.engine import replay
from schedbench.engine.simulation import Simulation
from schedbench.errors import UsageError
from schedbench.io import jobs, machine
from schedbench.sweep import run as sweep
from schedbench.workloads import eurora_like


class LargestFirst(NamedTuple):
    """The toy scheduler's state: nothing to keep but a pass counter."""

    passes: np.ndarray


@implements(schedule, LargestFirst)
@numba.njit(inline="always", _nrt=False)
def _largest_first(sched, core, pred, alloc, now):
    """Start the largest queued job (most units; the earliest in queue order among equals)
    that fits, again and again, until none fits."""
    sched.passes[0] += 1
    while True:
        queue_compact(core.jobs, core.queue, core.scal)
        qh = core.scal[C_QH]
        best = -1
        for r in range(qh, qh + core.scal[C_QN]):
            j = core.queue[r]
            if (best < 0 or core.jobs[j, J_UNITS] > core.jobs[best, J_UNITS]) and fits_now(core, j):
                best = j
        if best < 0:
            return
        try_start(core, alloc, best, now)


_BUILT: list[LargestFirst] = []  # the states the factory built, newest last


def largest_first(setup):
    """The factory: the state, and nothing else (no loop: the core's runs the pass)."""
    _BUILT.append(LargestFirst(np.zeros(1, dtype=np.int64)))
    return JittedScheduler(_BUILT[-1])


class PyLargestFirst:
    """The same rule as a Python policy (the reference)."""

    def __init__(self, sim):
        self.sim = sim

    def decide(self, view):
        waiting = sorted(view.queue, key=lambda j: (-int(view.units[j]), list(view.queue).index(j)))
        for j in waiting:
            if self.sim.fits(j):
                yield int(j)


@pytest.fixture(autouse=True)
def toy_policies():
    registry.register_scheduler("ljf", largest_first, "largest job first (a test's toy)", replace=True)
    registry.register_scheduler(
        "py-ljf", PyLargestFirst, "largest job first, in Python", kind="python", replace=True
    )
    yield
    registry.unregister("ljf")
    registry.unregister("py-ljf")


def _workload(n=300, seed=4):
    table, meta = eurora_like.generate(n, np.random.default_rng(seed), load=1.3)
    return table, machine.from_spec(meta["machine"])


@pytest.mark.parametrize("allocator", ["ff", "bf", "balanced"])
def test_jitted_toy_equals_its_python_reference(allocator):
    table, mach = _workload()
    got = replay.replay(table, mach, "ljf", allocator)
    ref = replay.replay(table, mach, "py-ljf", allocator)
    np.testing.assert_array_equal(got.start, ref.start)
    np.testing.assert_array_equal(got.nodes_used, ref.nodes_used)
    assert (got.start >= 0).all()
    # not FCFS in disguise: the rule changes the schedule
    assert not np.array_equal(got.start, replay.replay(table, mach, "fcfs", allocator).start)
    assert got.options["scheduler"] == "ljf" and ref.label == f"py-ljf+{allocator}"
    # the core's loop ran the toy's pass once per decision point
    assert got.passes > 0 and _BUILT[-1].passes[0] == got.passes


def test_toy_runs_from_the_command_line(tmp_path, capsys):
    table, mach = _workload(120)
    path = tmp_path / "w.parquet"
    jobs.write_parquet(table, path, {"machine": mach.spec})
    assert cli.main(["replay", str(path), "-s", "ljf", "-a", "bf", "-o", str(tmp_path / "out"), "-q"]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["label"] == "ljf+bf" and summary["jobs_replayed"] == 120
    assert cli.main(["replay", str(path), "-s", "py-ljf", "-o", str(tmp_path / "py"), "-q"]) == 0
    a = pl.read_parquet(tmp_path / "out" / "jobs.parquet")
    b = pl.read_parquet(tmp_path / "py" / "jobs.parquet")
    assert a["start"].to_list() != [] and a.height == b.height
    with pytest.raises(SystemExit):
        cli.main(["replay", "--help"])
    out = capsys.readouterr().out
    assert "ljf" in out and "largest job first (a test's toy)" in out and "(Python policy)" in out


def test_toy_runs_in_a_two_run_sweep(tmp_path):
    config = {
        "schedulers": ["ljf", "fcfs"],
        "allocators": ["ff"],
        "workloads": [{"generator": "eurora-like", "jobs": 100, "name": "eu"}],
    }
    runs = sweep.expand(config)
    assert [r["scheduler"] for r in runs] == ["ljf", "fcfs"]
    counts = sweep.sweep(runs, tmp_path, jobs=1, progress=False)
    assert counts == {"total": 2, "skipped": 0, "ran": 2, "failed": 0, "failed_total": 0}
    table = pl.read_parquet(tmp_path / "runs.parquet")
    assert sorted(table["label"].to_list()) == ["fcfs+ff", "ljf+ff"]
    parts = pl.scan_parquet(tmp_path / "allocations", hive_partitioning=True).collect()
    assert set(parts["scheduler"].unique()) == {"ljf", "fcfs"}


def test_unknown_names_and_options_are_usage_errors():
    table, mach = _workload(10)
    with pytest.raises(UsageError, match="unknown scheduler 'nope'; choose from .*ljf"):
        replay.replay(table, mach, "nope")
    with pytest.raises(UsageError, match="unknown option"):
        replay.replay(table, mach, "easy", "ff", options={"bogus": 1})
    with pytest.raises(UsageError, match="already registered"):
        registry.register_scheduler("ljf", largest_first, "again")
    with pytest.raises(UsageError, match="Python policy"):
        Simulation(table, mach, scheduler="py-ljf")


def test_an_implementation_must_use_the_hooks_parameter_names():
    with pytest.raises(TypeError, match="use the hook's parameter names"):
        implements(schedule, LargestFirst)(numba.njit(lambda s, c, p, a, t: None))
