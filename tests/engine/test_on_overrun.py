"""``on_overrun``: a job that outlives its request runs its logged time (``run``, the
default) or ends at its request (``kill``), for jitted schedulers and Python policies."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from schedbench.analysis import results
from schedbench.cli.main import main
from schedbench.engine.replay import replay
from schedbench.engine.simulation import Simulation
from schedbench.errors import UsageError
from schedbench.io import jobs, machine

# Four processors.  Job 1 asks for 50 s and runs 100; job 3 gives no request (estimate =
# its run, so it cannot overrun).
FCFS_TRACE = dict(
    submit=np.array([0, 10, 10]), run=np.array([100, 20, 40]),
    procs_req=np.array([4, 2, 2]), time_req=np.array([50, 30, -1]),
)


def _fcfs_table():
    return jobs.from_columns(**FCFS_TRACE)


def _ends(r):
    return r.start.tolist(), r.end.tolist()


def test_fcfs_runs_the_logged_time_by_default_and_ends_at_the_request_when_killing():
    mach = machine.from_spec("4x(cores=1)")
    # run: job 1 holds the machine 0-100; jobs 2 and 3 (2 + 2) start when it ends
    assert _ends(replay(_fcfs_table(), mach, "fcfs")) == ([0, 100, 100], [100, 120, 140])
    assert _ends(replay(_fcfs_table(), mach, "fcfs", on_overrun="run")) == ([0, 100, 100], [100, 120, 140])
    # kill: job 1 ends at its request, 50; job 2 stays inside its own; job 3 has none
    killed = replay(_fcfs_table(), mach, "fcfs", on_overrun="kill")
    assert _ends(killed) == ([0, 50, 50], [50, 70, 90])
    assert killed.options["on_overrun"] == "kill"
    frame = results.jobs_frame(killed)
    assert frame["killed"].to_list() == [True, False, False]
    assert frame["run"].to_list() == [50, 20, 40]  # the time each job ran in this replay
    assert (frame["end"] - frame["start"] == frame["run"]).all()
    assert results.jobs_frame(replay(_fcfs_table(), mach, "fcfs"))["killed"].to_list() == [False] * 3


def _easy_table():
    # 4 processors.  1: 2 procs, asks 50, runs 100.  2: 2 procs, 10 s.  3 (head from t1):
    # 4 procs.  4: 2 procs, 30 s (backfilled at 10: 10 + 30 <= shadow 50).  5 (t45) and
    # 6 (t60): 2 procs each, 20 s and 5 s.
    return jobs.from_columns(
        submit=np.array([0, 0, 1, 2, 45, 60]), run=np.array([100, 10, 10, 30, 20, 5]),
        procs_req=np.array([2, 2, 4, 2, 2, 2]), time_req=np.array([50, 10, 10, 30, 20, 5]),
    )


def test_easy_with_an_overrunning_job():
    mach = machine.from_spec("4x(cores=1)")
    # run: job 1 runs its 100 s.  From t50 EASY counts it as ending "now" at every pass
    # (predicted end max(start + pred, now)): the shadow time is now and extra 0, so
    # neither 5 (t45) nor 6 (t60) backfills; 3 starts when 1 really ends, at 100.
    ran = replay(_easy_table(), mach, "easy")
    assert _ends(ran) == ([0, 0, 100, 10, 110, 110], [100, 10, 110, 40, 130, 115])
    # kill: job 1 ends at 50; 3 starts then; 5 and 6 when 3 ends, at 60
    killed = replay(_easy_table(), mach, "easy", on_overrun="kill")
    assert _ends(killed) == ([0, 0, 50, 10, 60, 60], [50, 10, 60, 40, 80, 65])
    assert results.jobs_frame(killed)["killed"].to_list() == [True] + [False] * 5


class _InOrder:
    """A Python policy: start queued jobs in queue order while they fit."""

    def __init__(self, sim):
        self.sim = sim

    def decide(self, view):
        for j in view.queue:
            if not self.sim.fits(int(j)):
                return
            yield int(j)


@pytest.mark.parametrize("mode, expected", [
    ("run", ([0, 100, 100], [100, 120, 140])),
    ("kill", ([0, 50, 50], [50, 70, 90])),
])
def test_a_python_policy_sees_killed_jobs_end_at_their_request(mode, expected):
    mach = machine.from_spec("4x(cores=1)")
    sim = Simulation(_fcfs_table(), mach, options={"on_overrun": mode})
    assert _ends(sim.run(_InOrder(sim), name="in-order")) == expected
    # the registered Python policy (Soner's SLURM backfill) through replay()
    assert _ends(replay(_fcfs_table(), mach, "backfill", on_overrun=mode)) == expected


def test_an_unknown_mode_is_a_usage_error():
    with pytest.raises(UsageError, match="on_overrun"):
        replay(_fcfs_table(), machine.from_spec("4x(cores=1)"), "fcfs", on_overrun="stop")


def test_the_cli_flag_is_recorded_in_the_summary(tmp_path):
    src = tmp_path / "w.parquet"
    jobs.write_parquet(_fcfs_table(), src, {"machine": "4x(cores=1)"})
    out = tmp_path / "run"
    assert main(["replay", str(src), "-s", "fcfs", "--on-overrun", "kill", "-o", str(out), "-q"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["on_overrun"] == "kill" and summary["jobs_killed"] == 1
    frame = pl.read_parquet(out / "jobs.parquet")
    assert frame["end"].to_list() == [50, 70, 90] and frame["killed"].to_list() == [True, False, False]
    assert main(["replay", str(src), "-s", "fcfs", "-o", str(tmp_path / "default"), "-q"]) == 0
    default = json.loads((tmp_path / "default" / "summary.json").read_text())
    assert default["on_overrun"] == "run" and default["jobs_killed"] == 0


def test_a_sweep_run_takes_on_overrun_and_keeps_its_key_by_default():
    from schedbench.sweep import config as sweep_config

    base = {"schedulers": ["fcfs"], "allocators": ["ff"],
            "workloads": [{"generator": "eurora-like", "jobs": 20, "name": "eu"}]}
    default, = sweep_config.expand(base)
    assert "on_overrun" not in default["options"]  # the default adds nothing: run keys stay
    run, kill = sweep_config.expand({**base, "options": {"on_overrun": ["run", "kill"]}})
    assert run["key"] == default["key"] and kill["options"] == {"on_overrun": "kill"}
    with pytest.raises(UsageError, match="choose from run, kill"):
        sweep_config.expand({**base, "options": {"on_overrun": "stop"}})
