"""The registry: a scheduler registered from outside the package (this file) runs through
``replay`` (API and CLI) and a sweep like a built-in one; Python policies and predictors
too.  Capabilities refuse impossible pairs before any replay work; every declared option
is a ``schedbench replay`` flag.

The toy jitted scheduler is all a plug-in writes: its state (a namedtuple of arrays), its
pass (``@implements(schedule, State)``) and a factory; the core's replay loop runs it."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from typing import NamedTuple

import numba
import numpy as np
import polars as pl
import pytest

from repo_paths import ROOT
from schedbench import predictors, registry
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
from schedbench.core.layout import J_RUN, J_UNITS
from schedbench.engine import replay
from schedbench.engine.simulation import Simulation
from schedbench.errors import UsageError
from schedbench.io import jobs, machine
from schedbench.sweep import run as sweep
from schedbench.workloads import eurora_like


class LargestFirst(NamedTuple):
    """The toy scheduler's state: nothing to keep but a pass counter.  A plug-in's class
    gets a replay loop of its own (:func:`schedbench.core.loop_for`), so this file compiles
    one loop that no other test needs, on purpose: the plug-in path is what it checks."""

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
    assert counts == {"total": 2, "skipped": 0, "ran": 2, "failed": 0, "impossible": 0, "failed_total": 0}
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


# --------------------------------------------------------------------------- capabilities



def test_the_capabilities_of_the_built_ins():
    caps = {n: registry.scheduler(n).capabilities for n in registry.scheduler_names()}
    assert [n for n, c in caps.items() if c.plans] == ["conservative"]
    assert caps["conservative"].plan_order == "on nodes" and caps["backfill"].plan_order == "always"
    assert not any(c.pool_only for c in caps.values())  # priority and sfs plan on nodes too (issue 26)
    assert {n: c.default_period for n, c in caps.items() if c.default_period} == {"ipsched": 5, "aucsched": 5}
    assert caps["conservative"].site == {"limits", "freepools", "kept_cores", "maintenance"}
    # slurm's backfill plan does not see maintenance windows: it refuses a site file
    assert caps["slurm"].site == frozenset()
    assert all(c.site == {"maintenance"} for n, c in caps.items() if n not in ("conservative", "slurm"))
    givers = [n for n in registry.allocator_names() if registry.allocator(n).capabilities.gives_plan_order]
    assert givers == ["ff", "bf", "balanced", "keller"]


def test_conservative_on_nodes_needs_an_allocator_that_gives_a_planning_order():
    table, mach = _workload(60)  # Eurora-like: GPU jobs and node requests, so bookings hold nodes
    for name in ("weighted", "priority-weighted"):
        with pytest.raises(registry.Impossible, match=f"conservative\\+{name}: .*planning order"):
            replay.replay(table, mach, "conservative", name)
    assert (replay.replay(table, mach, "conservative", "balanced").start >= 0).any()


@pytest.mark.parametrize(("scheduler", "allocator", "workload", "reason"), [
    ("conservative", "weighted", registry.Workload(on_nodes=True, pool=False), "planning order"),
    ("conservative", "priority-weighted", registry.Workload(on_nodes=True, pool=True), "planning order"),
    ("backfill", "weighted", None, "planning order"),
])
def test_check_pair_names_the_pair_and_the_reason(scheduler, allocator, workload, reason):
    with pytest.raises(registry.Impossible, match=f"^{scheduler}\\+{allocator}: .*{reason}") as info:
        registry.check_pair(scheduler, allocator, workload=workload)
    assert isinstance(info.value, UsageError) and "\n" not in str(info.value)


@pytest.mark.parametrize(("scheduler", "allocator", "workload"), [
    ("conservative", "weighted", registry.Workload(on_nodes=False, pool=True)),  # a pool plan needs no order
    ("conservative", "balanced", registry.Workload(on_nodes=True, pool=False)),
    ("priority", "weighted", registry.Workload(on_nodes=False, pool=True)),
    ("easy", "priority-weighted", registry.Workload(on_nodes=True, pool=False)),
    ("priority", "ff", registry.Workload(on_nodes=True, pool=False)),
    ("sfs", "bf", registry.Workload(on_nodes=False, pool=False)),
    ("conservative", "weighted", None),  # unknown jobs: only what needs none is checked
])
def test_check_pair_lets_possible_pairs_through(scheduler, allocator, workload):
    registry.check_pair(scheduler, allocator, workload=workload)


def test_workload_shape_follows_the_setups_pool_types():
    # every replayed job a pool job: pool plans (on nodes only for per-node site rules)
    assert registry.workload_shape(True) == (False, True)
    assert registry.workload_shape(False) == (True, False)
    assert registry.workload_shape(True, per_node_site=True) == (True, True)


def test_a_dropped_job_does_not_decide_the_plan():
    # one job asks for two units per node but is too wide to run: the others plan on a pool
    t = jobs.from_columns(submit=np.array([0, 0, 1]), run=np.array([10, 10, 10]), procs_req=np.array([1, 64, 1]),
                          req_nodes=np.array([-1, 32, -1]))
    from schedbench.engine.prepare import start_run

    run = start_run(t, machine.from_spec("4x(cores=2)"), "conservative", "weighted")
    assert run.setup.pool_type.tolist() == [0, -1, 0] and run.setup.all_pool
    assert run.status.tolist()[1] != 0  # dropped


def test_a_site_feature_the_scheduler_does_not_honour_is_refused():
    from schedbench.plan import site as site_mod

    limits = site_mod.parse("[[limit]]\nuser = 1\nitems = 2\n")
    with pytest.raises(registry.Impossible, match="^easy\\+ff: easy does not honour the site's limits .*conservative"):
        registry.check_pair("easy", "ff", site=limits)
    registry.check_pair("conservative", "ff", site=limits)
    windows = site_mod.parse('[[maintenance]]\nnodes = "0-3"\nweekly = "Tue 06:00-08:00"\n')
    registry.check_pair("easy", "ff", site=windows)  # windows bind every jitted scheduler
    registry.check_pair("ipsched", "ff", site=windows)
    with pytest.raises(registry.Impossible, match="^ipsched\\+ff: .*limits"):
        registry.check_pair("ipsched", "ff", site=limits)


def _cli(args: list[str], tmp_path) -> subprocess.CompletedProcess:
    """``schedbench ARGS`` in a fresh interpreter that then prints whether any scheduler
    kernel module was imported (the work a replay does first)."""
    code = (
        "import sys\nfrom schedbench.cli.main import main\nrc = main(sys.argv[1:])\n"
        "print(sorted(m for m in sys.modules if m.startswith(('schedbench.schedulers.', 'schedbench.policies.'))))\n"
        "sys.exit(rc)\n"
    )
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=tmp_path,
                          timeout=600)


def test_an_impossible_pair_from_the_cli_is_one_line_and_exit_2_before_any_work(tmp_path):
    table, mach = _workload(60)
    path = tmp_path / "w.parquet"
    jobs.write_parquet(table, path, {"machine": mach.spec})
    for s, a, why in [("conservative", "weighted", "planning order"), ("backfill", "priority-weighted", "planning order")]:
        out = tmp_path / f"{s}-{a}"
        done = _cli(["replay", str(path), "-s", s, "-a", a, "-o", str(out), "-q"], tmp_path)
        assert done.returncode == 2, done.stderr
        # warnings about the workload (its groups are all -1) may come first; one error line
        lines = [line for line in done.stderr.splitlines() if not line.startswith("schedbench: warning: ")]
        assert len(lines) == 1 and lines[0].startswith(f"schedbench: error: {s}+{a}: ") and why in lines[0]
        assert done.stdout.strip() == "[]"  # no scheduler, policy nor solver was loaded
        assert not out.exists()


def test_a_sweep_without_an_exclude_list_skips_the_impossible_pairs(tmp_path):
    config = {
        "schedulers": ["fcfs", "conservative", "priority"],
        "allocators": ["ff", "weighted"],
        "workloads": [{"generator": "eurora-like", "jobs": 60, "name": "eu"}],
    }
    runs = sweep.expand(config)
    assert len(runs) == 6
    counts = sweep.sweep(runs, tmp_path, jobs=1, progress=False)
    assert counts == {"total": 6, "skipped": 0, "ran": 5, "failed": 0, "impossible": 1, "failed_total": 0}
    table = pl.read_parquet(tmp_path / "runs.parquet")
    assert sorted(table["label"].to_list()) == ["conservative+ff", "fcfs+ff", "fcfs+weighted", "priority+ff",
                                                "priority+weighted"]
    again = sweep.sweep(runs, tmp_path, jobs=1, progress=False)  # nothing recorded for it: checked again
    assert again["skipped"] == 5 and again["impossible"] == 1 and again["ran"] == 0


def test_the_default_sweep_keeps_no_list_of_impossible_pairs():
    config = tomllib.loads((ROOT / "bench" / "default.toml").read_text())
    # only the Python policies, for their cost (a model solved at each decision), not impossible pairs
    assert config["exclude"] == ["ipsched+*", "aucsched+*", "backfill+*", "cph+*"]
    built_in = {e.name for e in registry.SCHEDULERS.values()
                if e.kind == registry.Kind.PYTHON and str(e.factory).startswith("schedbench.")}
    assert built_in == {"ipsched", "aucsched", "backfill", "cph"}
    labels = {f"{r['scheduler']}+{r['allocator']}" for r in sweep.expand(config, ROOT / "bench")}
    assert {"conservative+weighted", "priority+ff", "sfs+balanced"} <= labels


# --------------------------------------------------------------------------- option flags


def _parse(argv):
    from schedbench.cli import replay as replay_cli

    args = cli.build_parser().parse_args(["replay", "t.swf", "-o", "out", *argv])
    return replay_cli.options_of(args)


def test_every_declared_option_is_a_replay_flag_with_its_declared_help(capsys):
    with pytest.raises(SystemExit):
        cli.main(["replay", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for option in registry.declared_options().values():
        assert option.flag in out
        assert " ".join(option.help.split())[:40] in out


def test_the_historical_flags_and_option_still_give_the_same_options():
    got = _parse(["--critical", "gpus", "--priority-bound", "5", "--priority-weights", "age=2", "--depth", "3",
                  "--account", "user", "--accounts", "a.toml", "-O", "window=7", "--weight-rule", "text"])
    assert got == {"critical": "gpus", "priority_bound": "5", "priority_weights": "age=2", "depth": "3",
                   "account": "user", "accounts": "a.toml", "window": "7", "weight_rule": "text"}
    sched, alloc = registry.split_options(registry.scheduler("priority"), registry.allocator("priority-weighted"), got)
    assert sched["depth"] == 3 and sched["account"] == "user" and sched["half_life"] == 7 * 86400
    assert alloc == {"critical": ("gpus",), "priority_bound": 5, "weight_rule": "text", "window": 7}
    assert _parse([]) == {}
    with pytest.raises(SystemExit):
        _parse(["--account", "nobody"])  # the declared choices


def test_a_plug_in_option_gets_its_flag():
    registry.register_scheduler("knobbed", largest_first, "a toy with a knob", replace=True,
                                options=(registry.Option("toy_knob", 3, "the toy's knob", int),))
    try:
        assert _parse(["--toy-knob", "4"]) == {"toy_knob": "4"}
        assert registry.scheduler("knobbed").resolve(_parse(["--toy-knob", "4"])) == {"toy_knob": 4}
    finally:
        registry.unregister("knobbed")


def test_factories_repeat_no_default():
    import inspect

    for entry in (*registry.SCHEDULERS.values(), *registry.ALLOCATORS.values()):
        if entry.name in registry.BUILTIN:
            params = inspect.signature(entry.load()).parameters.values()
            assert all(p.default is inspect.Parameter.empty for p in params), entry.name


# --------------------------------------------------------------------------- predictors


def test_a_registered_predictor_runs_like_a_built_in(capsys):
    registry.register_predictor("toy-oracle", lambda table, meta: predictors.JobColumn(np.array([J_RUN])),
                                "the run time, from a plug-in", replace=True)
    try:
        table, mach = _workload(80)
        got = replay.replay(table, mach, "easy", "ff", "toy-oracle")
        ref = replay.replay(table, mach, "easy", "ff", "actual")
        np.testing.assert_array_equal(got.start, ref.start)
        assert got.predictor == "toy-oracle" and "toy-oracle" in registry.predictor_names()
        with pytest.raises(SystemExit):
            cli.main(["replay", "--help"])
        assert "the run time, from a plug-in" in capsys.readouterr().out
    finally:
        registry.unregister("toy-oracle")
    with pytest.raises(UsageError, match="unknown predictor 'toy-oracle'"):
        replay.replay(table, mach, "easy", "ff", "toy-oracle")


def test_listing_the_registry_imports_no_numba():
    code = ("import sys\nfrom schedbench import registry\n"
            "names = registry.scheduler_names() + registry.allocator_names() + registry.predictor_names()\n"
            "registry.declared_options(); registry.check_pair('conservative', 'weighted')\n"
            "print(len(names), 'numba' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["28", "False"]  # 15 schedulers, 6 allocators, 7 predictors
