"""Job dependencies (SWF fields 17 and 18, ``dependencies`` "on"): a job whose preceding
job is in the trace arrives when that job ends plus its think time, for the jitted
schedulers (the core's one loop) and the Python policies (Simulation) alike; checked on
hand-made chains with known starts and against the oracles (tests/naive.py D1-D3 and
R7d, tests/naive_fairshare.py, tests/naive_conservative.py C15) on generated traces with
random links.  ``slurm``'s own cases and its oracle (tests/naive_slurm.py) are in
tests/properties/test_slurm_dependencies.py."""

from __future__ import annotations

import json
from functools import partial

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import naive
import naive_conservative as nc
import naive_fairshare as nf
from schedbench.cli.main import main
from schedbench.engine import replay
from schedbench.engine.simulation import Simulation
from schedbench.errors import UsageError
from schedbench.io import jobs, machine, swf
from schedbench.io.jobs import expected_queue_wait
from strategies import pool_traces

STATUS = {s.value: s.name.lower() for s in replay.Status}
POOL4 = machine.from_spec("4x(cores=1)")


def _chain():
    """Job 1 fills the machine 0-100; job 2 (submitted at 0 too) follows job 1 after 10 s
    of think time; job 3 is independent, submitted at 5."""
    return jobs.from_columns(job_id=np.array([1, 2, 3]), submit=np.array([0, 0, 5]), run=np.array([100, 50, 20]),
                             procs_req=np.array([4, 4, 4]), time_req=np.array([100, 100, 100]),
                             preceding_job=np.array([-1, 1, -1]), think_time=np.array([-1, 10, -1]))


@pytest.mark.parametrize("scheduler", ["fcfs", "sjf", "easy", "easy-sjbf", "ebf-accasim", "prb", "prb-blocking",
                                       "conservative", "priority", "sfs", "slurm", "backfill"])
def test_a_successor_arrives_at_its_predecessors_end_plus_think_time(scheduler):
    # ebf-accasim retries a blocked job only from its reserved time, the predicted end
    # (start + 100 s) of the job it waits for: 200 in both runs, although that job ends at
    # 150 (off) or 120 (on)
    ebf = scheduler == "ebf-accasim"
    off_starts, on_starts = ([0, 100, 200], [0, 200, 100]) if ebf else ([0, 100, 150], [0, 120, 100])
    off = replay.replay(_chain(), POOL4, scheduler)
    assert off.start.tolist() == off_starts and off.eligible is None  # submit order: 1, 2, 3
    on = replay.replay(_chain(), POOL4, scheduler, dependencies="on")
    # job 2 arrives at 100 + 10, after job 3 (arrived at 5) has started at 100
    assert on.start.tolist() == on_starts
    assert on.eligible.tolist() == [0, 110, 5]
    assert on.options["dependencies"] == "on" and "dependencies" not in off.options


@pytest.mark.parametrize("scheduler", ["fcfs", "sjf", "easy", "easy-sjbf", "prb", "prb-blocking", "conservative"])
def test_a_released_job_queues_behind_the_jobs_that_arrived_before_its_release(scheduler):
    # P (1 core, 0-10) and X (3 cores, 0-100) fill the machine; D (4 cores, logged at 1)
    # waits for P (think 0: it arrives at 10); C (4 cores) arrives at 5.  At 100, when X
    # ends, C has waited longer (PRB's wait / expected wait: 95 against 90)
    table = jobs.from_columns(job_id=np.arange(1, 5), submit=np.array([0, 0, 1, 5]), run=np.array([10, 100, 10, 10]),
                              procs_req=np.array([1, 3, 4, 4]), time_req=np.array([10, 100, 10, 10]),
                              preceding_job=np.array([-1, -1, 1, -1]), think_time=np.array([-1, -1, 0, -1]))
    assert replay.replay(table, POOL4, scheduler).start.tolist() == [0, 0, 100, 110]
    assert replay.replay(table, POOL4, scheduler, dependencies="on").start.tolist() == [0, 0, 110, 100]


def test_links_that_are_not_honoured_and_predecessors_left_out():
    # 1 runs 0-10; 2 waits for 1 (think 5: arrives 15); 3 names an absent id (arrives at
    # its submit, 0: starts 10 behind 1); 4 names a later job (ignored); 5 is too wide;
    # 6 waits for 5 and 7 for 6: neither is replayed; 8 waits for 2 (think 0: arrives 25)
    table = jobs.from_columns(
        job_id=np.arange(1, 9), submit=np.zeros(8, np.int64), run=np.full(8, 10), procs_req=[4, 4, 4, 4, 9, 4, 4, 4],
        time_req=np.full(8, 10), preceding_job=[-1, 1, 99, 8, -1, 5, 6, 2], think_time=[-1, 5, 7, 7, -1, 0, 0, 0])
    r = replay.replay(table, POOL4, "fcfs", dependencies="on")
    assert [STATUS[s] for s in r.status] == ["replayed"] * 4 + ["dropped_too_wide"] + ["predecessor_not_run"] * 2 + [
        "replayed"]
    # FCFS in arrival order: 1, 3, 4 at 0, then 2 at 15 (starts when 4 ends at 30), then 8
    # at 40, when 2 ends (think 0)
    assert r.start.tolist() == [0, 30, 10, 20, -1, -1, -1, 40]
    assert r.eligible.tolist() == [0, 15, 0, 0, -1, -1, -1, 40]


def test_periodic_decisions_wait_for_a_released_job_when_nothing_else_is_left():
    # period 7 from 0: job 1 ends at 100, job 2 arrives at 113 with nothing running or
    # queued in between; the next decision is the first period instant after it, 119
    table = jobs.from_columns(job_id=np.array([1, 2]), submit=np.array([0, 0]), run=np.array([100, 5]),
                              procs_req=np.array([4, 4]), preceding_job=np.array([-1, 1]), think_time=np.array([0, 13]))
    r = replay.replay(table, POOL4, "fcfs", period=7, dependencies="on")
    assert r.start.tolist() == [0, 119]


def test_a_predecessor_that_never_ends_leaves_its_successor_with_a_reason():
    class OnlyTheLast:  # a policy that never starts job index 0
        def decide(self, view):
            return [j for j in view.queue if j != 0]

    table = jobs.from_columns(job_id=np.array([1, 2, 3]), submit=np.array([0, 1, 2]), run=np.array([5, 5, 5]),
                              procs_req=np.array([1, 1, 1]), preceding_job=np.array([-1, 1, 2]),
                              think_time=np.array([0, 0, 0]))
    r = Simulation(table, POOL4, dependencies="on").run(OnlyTheLast())
    assert [STATUS[s] for s in r.status] == ["not_started", "predecessor_not_run", "predecessor_not_run"]
    assert r.eligible.tolist() == [0, -1, -1]


def test_a_sweep_takes_dependencies_and_keeps_its_keys_by_default():
    from schedbench.sweep import config as sweep_config

    base = {"schedulers": ["fcfs"], "allocators": ["ff"],
            "workloads": [{"generator": "chains", "chains": 2, "length": 3, "background": 5,
                           "name": "ch"}]}
    default, = sweep_config.expand(base)
    off, on = sweep_config.expand({**base, "options": {"dependencies": ["off", "on"]}})
    assert "dependencies" not in default["options"] and off["key"] == default["key"]
    assert on["options"] == {"dependencies": "on"} and on["key"] != default["key"]


def test_a_bad_value_is_a_usage_error():
    with pytest.raises(UsageError, match="dependencies"):
        replay.replay(_chain(), POOL4, "fcfs", dependencies="yes please")


def test_cli_writes_the_arrival_and_counts_waits_from_it(tmp_path):
    src = tmp_path / "chain.swf"
    swf.write(_chain(), None, src)
    out_on, out_off = tmp_path / "on", tmp_path / "off"
    assert main(["replay", str(src), "-s", "fcfs", "-m", "4x(cores=1)", "--dependencies", "on", "-o", str(out_on),
                 "-q"]) == 0
    assert main(["replay", str(src), "-s", "fcfs", "-m", "4x(cores=1)", "-o", str(out_off), "-q"]) == 0
    on = pl.read_parquet(out_on / "jobs.parquet")
    off = pl.read_parquet(out_off / "jobs.parquet")
    assert on["eligible"].to_list() == [0, 110, 5] and "eligible" not in off.columns
    assert on["wait"].to_list() == [0, 10, 95] and off["wait"].to_list() == [0, 100, 145]
    summary = json.loads((out_on / "summary.json").read_text())
    assert summary["dependencies"] == "on" and summary["jobs_predecessor_not_run"] == 0
    assert summary["dependency_links"] == {"waiting": 1, "absent": 0, "not_earlier": 0, "predecessor_not_run": 0}
    assert json.loads((out_off / "summary.json").read_text())["dependencies"] == "off"


# --------------------------------------------------------------------------- against the oracles


@st.composite
def linked_pool_traces(draw):
    """pool_traces (ids 1..n in submit order) with random links: none, an earlier job,
    the job itself, a later job or an absent id; think times -1 (unknown), 0 or more;
    logged waits (-1 or 0-60 s) and queues (1-2) that give PRB's expected queue waits."""
    table, procs = draw(partial(pool_traces, max_procs=8, max_jobs=25, max_submit=40, min_size=0, size_over=1,
                                min_est=0, groups=True)())
    n = table.n_jobs
    preceding = np.array(draw(st.lists(st.integers(-1, n + 2) | st.just(-1), min_size=n, max_size=n)))
    think = np.array(draw(st.lists(st.sampled_from([-1, 0, 0, 3, 30]), min_size=n, max_size=n)))
    table.preceding_job[:] = preceding  # the table's own arrays (JobTable's length is its jobs': no _replace)
    table.think_time[:] = think
    table.wait[:] = draw(st.lists(st.integers(-1, 60), min_size=n, max_size=n))
    table.queue[:] = draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
    return table, procs


def _expected(nv):
    return np.array([-1 if s is None else s for s in nv.start], dtype=np.int64)


@settings(max_examples=150, deadline=None)
@given(linked_pool_traces(), st.sampled_from(["fcfs", "sjf", "easy", "easy-sjbf", "ebf-accasim", "prb",
                                              "prb-blocking"]),
       st.sampled_from(["requested", "actual"]))
def test_engine_equals_oracle_in_order(trace, scheduler, predictor):
    table, procs = trace
    pred = table.run if predictor == "actual" else np.where(table.estimate > 0, table.estimate, table.run)
    nv = naive.replay_pool(table.job_id, table.submit, table.run, table.units, pred, procs, scheduler,
                           preceding=table.preceding_job, think=table.think_time, qwait=expected_queue_wait(table))
    r = replay.replay(table, machine.from_spec(f"1x(cores={procs})"), scheduler, "ff", predictor, dependencies="on")
    assert r.start.tolist() == _expected(nv).tolist()
    assert [STATUS[s] for s in r.status] == nv.status


def test_ebf_accasim_waits_for_a_released_arrival_before_stepping_to_the_reserved_time():
    """One core.  At 0 job 1 (estimate 1, run 0) starts and ends; job 2 is blocked with
    reserved time 1; job 1's end releases job 3 for 3 (think time 3).  Nothing runs, but
    job 3 is still to arrive, so the clock does not step a second at a time (R7c): the
    next instant is 3, where job 2 starts (its reserved time has come), and job 3 at its
    end.  Found by hypothesis (seed 21): the wake counted only jobs read from the trace
    as still to arrive, and started job 2 at 1 and job 3 at 3."""
    table = jobs.from_columns(job_id=np.array([1, 2, 3]), submit=np.zeros(3, np.int64), run=np.array([0, 1, 1]),
                              procs_req=np.ones(3, np.int64), time_req=np.array([1, 1, 1]),
                              preceding_job=np.array([-1, -1, 1]), think_time=np.array([-1, -1, 3]))
    pool1 = machine.from_spec("1x(cores=1)")
    r = replay.replay(table, pool1, "ebf-accasim", "ff", "requested", dependencies="on")
    nv = naive.replay_pool(table.job_id, table.submit, table.run, table.units, table.estimate, 1, "ebf-accasim",
                           preceding=table.preceding_job, think=table.think_time)
    assert _expected(nv).tolist() == [0, 3, 4]
    assert r.start.tolist() == [0, 3, 4]


TARGETS = {1: 2, 2: 1, 3: 3}  # the accounts file's target occupancy of each group


@pytest.fixture(scope="module")
def accounts_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("accounts") / "accounts.toml"
    path.write_text("".join(f"[accounts.{g}]\ntarget = {t}\n" for g, t in TARGETS.items()))
    return str(path)


@settings(max_examples=100, deadline=None)
@given(trace=linked_pool_traces(), scheduler=st.sampled_from(["priority", "sfs"]), depth=st.integers(1, 3),
       backfill=st.booleans())
def test_engine_equals_fairshare_oracle(accounts_file, trace, scheduler, depth, backfill):
    table, procs = trace
    groups, acct = np.unique(table.group, return_inverse=True)
    target = np.array([TARGETS[int(g)] for g in groups])
    shares = target / target.sum()  # an accounts file's targets fix the shares (plan.accounts)
    pred = np.where(table.estimate > 0, table.estimate, table.run)
    nv = nf.replay_pool(table.job_id, table.submit, table.run, table.units, pred, acct, procs, sfs=scheduler == "sfs",
                        weights=(1.0, 1.0, 5.0), depth=depth, target=target, shares=shares, backfill=backfill,
                        standing=scheduler == "sfs", preceding=table.preceding_job, think=table.think_time)
    opts = {"priority_weights": "age=1,size=1,fairshare=5", "depth": depth, "backfill": backfill,
            "accounts": accounts_file, "dependencies": "on"}
    r = replay.replay(table, machine.from_spec(f"1x(cores={procs})"), scheduler, options=opts)
    assert r.start.tolist() == _expected(nv).tolist()
    assert [STATUS[s] for s in r.status] == nv.status


def _two_zero_length_rounds():
    """Six jobs at 0 on two cores (a hypothesis find, shrunk by hand): 1 and 3 of run 0,
    5 released by 1's end, 4 by 3's, in two zero-length rounds at 0.  5 joined the queue
    a round before 4, so it is ahead of 4 when 6's end compresses the plan: both start at
    0 (the oracle once ordered a round's arrivals by id alone and started 5 at 1)."""
    table = jobs.from_columns(job_id=np.arange(1, 7), submit=np.zeros(6, np.int64), run=np.array([0, 1, 0, 1, 0, 0]),
                              procs_req=np.ones(6, np.int64), procs_alloc=np.ones(6, np.int64),
                              time_req=np.array([0, 1, 0, 1, 0, 0]), group=np.ones(6, np.int64),
                              preceding_job=np.array([-1, -1, -1, 3, 1, -1]), think_time=np.full(6, -1))
    return table, 2


@settings(max_examples=60, deadline=None)
@given(linked_pool_traces(), st.sampled_from(["requested", "actual"]))
@example(_two_zero_length_rounds(), "requested")
def test_engine_equals_conservative_oracle(trace, predictor):
    table, procs = trace
    est = np.where(table.estimate > 0, table.estimate, table.run)
    nv = nc.replay_pool(table.job_id, table.submit, table.run, table.units, table.run if predictor == "actual" else est,
                        est, procs, preceding=table.preceding_job, think=table.think_time)
    for spec in (f"1x(cores={procs})", f"{procs}x(cores=1)"):
        r = replay.replay(table, machine.from_spec(spec), "conservative", "ff", predictor, dependencies="on")
        assert r.start.tolist() == _expected(nv).tolist(), spec
        assert [STATUS[s] for s in r.status] == nv.status
