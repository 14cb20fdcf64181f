"""``slurm`` (schedbench.schedulers.slurm) on hand-made traces with known starts."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import naive_slurm as ns
from naive import placements
from schedbench.analysis import results
from schedbench.cli.main import main
from schedbench.engine.replay import Status, replay
from schedbench.io import jobs, machine
from schedbench.io.machine import Machine, Partition, spec_of
from strategies import pool_traces

POOL4 = machine.from_spec("1x(cores=4)")


def _table(submit, run, procs, est):
    n = len(submit)
    return jobs.from_columns(job_id=np.arange(1, n + 1), submit=submit, run=run, procs_req=procs, procs_alloc=procs,
                             time_req=est)


# job 1 holds 3 of 4 cores over [0, 10); job 2 needs all 4 (reserved from 10 to 15);
# job 3 asks 1 core for 20 s at t=1: it would enter job 2's reservation
DELAYS = _table([0, 0, 1], [10, 5, 20], [3, 4, 1], [10, 5, 20])


@pytest.mark.parametrize(("options", "starts"), [
    ({"bf_interval": 0, "bf_resolution": 1}, [0, 10, 15]),  # job 3 would delay job 2: it waits
    # job 1's expected end rounds up to 60: job 2's reservation is [60, 120), job 3 ends
    # before it and backfills (job 1 ends at 10 in fact: job 2 then waits for job 3)
    ({"bf_interval": 0, "bf_resolution": 60}, [0, 21, 1]),
    # job 2 starts beyond the 5 s window: no reservation, job 3 backfills
    ({"bf_interval": 0, "bf_resolution": 1, "bf_window": 5}, [0, 21, 1]),
    # the cycle at 0 sees job 3 not yet; the next grid instant is 30 > 15
    ({"bf_interval": 30, "bf_resolution": 1}, [0, 10, 15]),
])
def test_backfill_reservations(options, starts):
    r = replay(DELAYS, POOL4, "slurm", "ff", options=options)
    assert r.start.tolist() == starts


# The per-node plan (job 1 fixes its node count, so the plan is kept per node): job 1 holds
# one of two 4-core nodes over [0, 10); job 2 needs both (as two whole nodes, or as 8 cores
# spread) and is reserved from 10, the instant at which exactly enough is free; job 3 (one
# node for 20 s at t=1) would enter that reservation, so it waits.  A fit test that wanted
# more than enough at 10 would leave job 2 unreserved and let job 3 start at 1.
@pytest.mark.parametrize(("units", "req_nodes"), [(2, 2), (8, -1)])
def test_a_reservation_on_nodes_takes_exactly_what_is_free(units, req_nodes):
    t = jobs.from_columns(job_id=np.arange(1, 4), submit=[0, 0, 1], run=[10, 5, 20], time_req=[10, 5, 20],
                          units=[1, units, 1], unit_cores=[4, 8 // units, 4], req_nodes=[1, req_nodes, 1])
    r = replay(t, machine.from_spec("2x(cores=4)"), "slurm", "ff", options={"bf_interval": 0, "bf_resolution": 1})
    assert r.start.tolist() == [0, 10, 15]


def test_a_job_that_delays_no_reservation_starts():
    t = _table([0, 0, 1, 2, 3], [10, 5, 5, 3, 2], [3, 4, 2, 1, 1], [10, 5, 5, 3, 2])
    r = replay(t, POOL4, "slurm", "ff", options={"bf_interval": 0, "bf_resolution": 1})
    assert r.start.tolist() == [0, 10, 15, 2, 5]


def test_bf_max_job_test_and_user():
    # jobs 2 and 3 (user 1) wait; job 4 (user 2) fits now: tested only when the cycle reaches it
    t = jobs.from_columns(job_id=np.arange(1, 5), submit=[0, 1, 1, 1], run=[10, 5, 5, 3], procs_req=[3, 4, 4, 1],
                          procs_alloc=[3, 4, 4, 1], time_req=[10, 5, 5, 3], user=[1, 1, 1, 2])
    base = {"bf_interval": 0, "bf_resolution": 1}
    assert replay(t, POOL4, "slurm", "ff", options=base).start.tolist() == [0, 10, 15, 1]
    # two jobs tested: job 4 is never reached, and starts after job 3 (main loop, at 20)
    assert replay(t, POOL4, "slurm", "ff", options={**base, "bf_max_job_test": 2}).start.tolist()[3] == 20
    # one job per user tested: job 3 is skipped, job 4 is the second tested
    assert replay(t, POOL4, "slurm", "ff", options={**base, "bf_max_job_test": 2,
                                                    "bf_max_job_user": 1}).start.tolist()[3] == 1


def test_job_size_factor_orders_the_queue():
    # 4 cores busy until 10; then a 1-core and a 3-core job wait: favouring large jobs
    # starts the 3-core one first, favor_small the 1-core one (the other then waits for it)
    t = _table([0, 1, 1], [10, 10, 10], [4, 1, 4], [10, 10, 10])
    big = replay(t, POOL4, "slurm", "ff", options={"weight_jobsize": 1000, "bf_interval": 0})
    small = replay(t, POOL4, "slurm", "ff", options={"weight_jobsize": 1000, "favor_small": True, "bf_interval": 0})
    assert big.start.tolist() == [0, 20, 10]
    assert small.start.tolist() == [0, 10, 20]


# --------------------------------------------------------------------------- age only: conservative


AGE_ONLY = {"weight_age": 1000, "bf_interval": 0, "bf_resolution": 1, "bf_window": 10**9, "bf_max_job_test": 10**6,
            "default_queue_depth": 10**6, "max_age": 10**9}


def test_age_only_reserves_for_every_waiting_job():
    # job 1 holds 3 of 4 cores over [0, 10); job 2 (2 cores) waits for [10, 20), leaving
    # 2 cores; job 3 (4 cores) for [20, 30); job 4 (1 core, 20 s) fits now and its core
    # is spare over [10, 20), but it would run into job 3's reservation: it waits until 30.
    # EASY reserves for job 2 only and backfills job 4 at 3, delaying job 3 to 23.
    t = _table([0, 1, 2, 3], [10, 10, 10, 20], [3, 2, 4, 1], [10, 10, 10, 20])
    assert replay(t, POOL4, "slurm", "ff", options=AGE_ONLY).start.tolist() == [0, 10, 20, 30]
    assert replay(t, POOL4, "conservative", "ff").start.tolist() == [0, 10, 20, 30]
    assert replay(t, POOL4, "easy", "ff").start.tolist() == [0, 10, 23, 3]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=pool_traces(max_procs=8, max_jobs=25, min_size=1, min_est=1), weight=st.sampled_from([0.0, 1000.0]))
def test_age_only_equals_conservative_when_jobs_end_at_their_limits(case, weight):
    """On a pool, with every job ending exactly at its limit, a re-plan from scratch in
    submission order at every event books each waiting job where conservative booked it
    at its arrival: the starts are equal."""
    table, procs = case
    run = np.maximum(table.run, 1)
    table = jobs.from_columns(job_id=table.job_id, submit=table.submit, run=run, procs_req=table.procs_req,
                              procs_alloc=table.procs_req, time_req=run)
    mach = machine.from_spec(f"1x(cores={procs})")
    got = replay(table, mach, "slurm", "ff", options={**AGE_ONLY, "weight_age": weight})
    ref = replay(table, mach, "conservative", "ff")
    assert got.start.tolist() == ref.start.tolist()


# --------------------------------------------------------------------------- priority factors, partitions


def _cluster(partitions, nodes=(4,)):
    cap = np.array([[c, 0, 0, 0] for c in nodes], dtype=np.int64)
    parts = tuple(Partition(name, np.array(idx, dtype=np.int64), default=i == 0, job_factor=factor, tier=tier)
                  for i, (name, idx, factor, tier) in enumerate(partitions))
    return Machine(cap, spec_of(cap), "test", tuple(f"n{i}" for i in range(len(nodes))),
                   tuple(frozenset() for _ in nodes), parts)


def _jobs(submit, run, procs, **cols):
    n = len(submit)
    return jobs.from_columns(job_id=np.arange(1, n + 1), submit=submit, run=run, procs_req=procs, procs_alloc=procs,
                             time_req=run, **{k: np.array(v) for k, v in cols.items()})


# job 1 (lo) holds the node over [0, 10); job 2 (lo) arrives at 1, job 3 (hi) at 2, each
# needing the whole node for 10 s: whichever goes first starts at 10, the other at 20
QUEUED_BEHIND = dict(submit=[0, 1, 2], run=[10, 10, 10], procs=[4, 4, 4], partition=[0, 0, 1])
TWO_PARTS = {"partitions": {"lo": 0, "hi": 1}}
NO_BACKFILL = {"bf_interval": 0}


@pytest.mark.parametrize(("hi_tier", "starts"), [(1, [0, 10, 20]), (2, [0, 20, 10])])
def test_partition_tier_goes_first(hi_tier, starts):
    m = _cluster([("lo", [0], 1, 1), ("hi", [0], 1, hi_tier)])
    r = replay(_jobs(**QUEUED_BEHIND), m, "slurm", "ff", meta=TWO_PARTS, options=NO_BACKFILL)
    assert r.start.tolist() == starts


@pytest.mark.parametrize(("weight", "starts"), [(0, [0, 10, 20]), (1000, [0, 20, 10])])
def test_partition_job_factor(weight, starts):
    m = _cluster([("lo", [0], 1, 1), ("hi", [0], 10, 1)])
    r = replay(_jobs(**QUEUED_BEHIND), m, "slurm", "ff", meta=TWO_PARTS,
               options={**NO_BACKFILL, "weight_partition": weight})
    assert r.start.tolist() == starts


def test_a_blocked_partition_blocks_only_its_own_jobs():
    # a = node 0, b = node 1 (4 cores each).  Job 1 (a) holds 3 cores of node 0 over [0, 10).
    # At 1: job 2 (a, 4 cores) cannot start and blocks a; job 3 (b) starts; job 4 (a,
    # 1 core) would fit but a is blocked (no backfill cycle before 10^9); job 5 ("a,b", 1
    # core for 5 s) is passed over only when both are blocked: it starts at 1.  At 10 job 2
    # starts, job 4 waits behind it until 20.
    m = _cluster([("a", [0], 1, 1), ("b", [1], 1, 1)], nodes=(4, 4))
    t = _jobs([0, 1, 1, 1, 1], [10, 10, 10, 10, 5], [3, 4, 2, 1, 1], partition=[0, 0, 1, 0, 2])
    r = replay(t, m, "slurm", "ff", meta={"partitions": {"a": 0, "b": 1, "a,b": 2}},
               options={"bf_interval": 10**9})
    assert r.start.tolist() == [0, 10, 1, 20, 1]


def test_qos_priority():
    meta = {"qos": {"normal": 0, "high": 1}, "slurm_accounts": {"qos_priority": {"normal": 0, "high": 100}}}
    t = _jobs([0, 1, 2], [10, 10, 10], [4, 4, 4], queue=[0, 0, 1])
    assert replay(t, POOL4, "slurm", "ff", meta=meta, options={**NO_BACKFILL, "weight_qos": 1000}).start.tolist() \
        == [0, 20, 10]
    assert replay(t, POOL4, "slurm", "ff", meta=meta, options=NO_BACKFILL).start.tolist() == [0, 10, 20]


@pytest.mark.parametrize(("weight", "starts"), [(0, [0, 100, 110]), (1000, [0, 110, 100])])
def test_fair_share_lets_the_account_that_used_less_go_first(weight, starts):
    # account 1 runs job 1 on the whole pool over [0, 100); at 100 its job 2 (submitted
    # first) and account 2's job 3 wait: with the fair-share weight, account 2 goes first
    t = _jobs([0, 50, 60], [100, 10, 10], [4, 4, 4], group=[1, 1, 2])
    r = replay(t, POOL4, "slurm", "ff", options={**NO_BACKFILL, "weight_fairshare": weight, "calc_period": 10})
    assert r.start.tolist() == starts


@pytest.mark.parametrize(("max_age", "starts"), [(100, [0, 100, 110]), (10, [0, 110, 100])])
def test_age_is_capped_at_max_age(max_age, starts):
    # job 1 holds the pool until 100; A (2 cores, submitted at 1) and B (4 cores, at 5)
    # wait.  B's job size factor is higher by 0.25 (x weight 1).  With max_age 100, A's 4 s
    # of extra age weigh 40: A first.  With max_age 10 both are capped at 100: B first.
    t = _jobs([0, 1, 5], [100, 10, 10], [4, 2, 4])
    opts = {**NO_BACKFILL, "weight_age": 1000, "weight_jobsize": 1, "max_age": max_age, "calc_period": 1}
    assert replay(t, POOL4, "slurm", "ff", options=opts).start.tolist() == starts


@pytest.mark.parametrize(("calc_period", "starts"), [(1, [0, 50, 60]), (100, [0, 60, 50])])
def test_priorities_are_as_of_the_last_calc_instant(calc_period, starts):
    # job 1 holds the pool until 50; A (3 cores, at 1) and B (4 cores, at 2) wait; B's job
    # size factor is higher (weight 10: 1.25 more).  Recomputed at 50, A's extra second of
    # age weighs 10 (1000 / max_age 100): A first.  With calc_period 100 the last calc instant is 0: both have
    # their arrival priority (age 0) and B goes first.
    t = _jobs([0, 1, 2], [50, 10, 10], [4, 3, 4])
    opts = {**NO_BACKFILL, "weight_age": 1000, "weight_jobsize": 10, "max_age": 100, "calc_period": calc_period}
    assert replay(t, POOL4, "slurm", "ff", options=opts).start.tolist() == starts


# --------------------------------------------------------------------------- provenance


def test_resolved_options_are_recorded():
    t = _table([0, 1], [10, 5], [4, 4], [10, 5])
    r = replay(t, POOL4, "slurm", "ff")
    opts = r.options["scheduler_options"]
    assert opts["bf_interval"] == 30 and opts["bf_resolution"] == 60 and opts["priority_type"] == "multifactor"
    assert all(v is not None for v in opts.values())
    r = replay(t, POOL4, "slurm", "ff", meta={"slurm": {"bf_interval": 45, "weight_age": 7}})
    assert r.options["scheduler_options"]["bf_interval"] == 45
    assert r.options["scheduler_options"]["weight_age"] == 7.0
    r = replay(t, POOL4, "slurm", "ff", meta={"slurm": {"bf_interval": 45}}, options={"bf_interval": 5})
    assert r.options["scheduler_options"]["bf_interval"] == 5


def test_summary_json_records_the_slurm_conf_value(tmp_path):
    trace = tmp_path / "t.swf"
    trace.write_text("1 0 -1 10 4 -1 -1 4 10 -1 1 1 1 -1 -1 -1 -1 -1\n2 1 -1 5 4 -1 -1 4 5 -1 1 1 1 -1 -1 -1 -1 -1\n")
    conf = tmp_path / "slurm.conf"
    conf.write_text("NodeName=n[1-2] CPUs=4\nPartitionName=all Nodes=ALL Default=YES\n"
                    "SchedulerParameters=bf_interval=45,bf_resolution=10\n")
    for args, interval in (([], 30), (["--machine", str(conf)], 45), (["--machine", str(conf), "-O", "bf_interval=7"], 7)):
        out = tmp_path / f"run{interval}"
        assert main(["replay", str(trace), "-s", "slurm", "-o", str(out), "-q", *args]) == 0
        opts = json.loads((out / "summary.json").read_text())["scheduler_options"]
        assert opts["bf_interval"] == interval
        assert opts["bf_resolution"] == (60 if not args else 10)


def test_no_backfill_and_no_decay_as_slurm_conf_writes_them():
    # DELAYS: job 3 backfills at 1 under a coarse resolution; without a backfill scheduler
    # (bf_interval -1, or SchedulerType=sched/builtin) it waits for job 2 (main loop, FIFO)
    coarse = {"bf_interval": 0, "bf_resolution": 60}
    assert replay(DELAYS, POOL4, "slurm", "ff", options=coarse).start.tolist() == [0, 21, 1]
    assert replay(DELAYS, POOL4, "slurm", "ff", options={**coarse, "bf_interval": -1}).start.tolist() == [0, 10, 15]
    r = replay(DELAYS, POOL4, "slurm", "ff", meta={"slurm": {"scheduler_type": "builtin", "bf_resolution": 60}})
    assert r.start.tolist() == [0, 10, 15] and r.options["scheduler_options"]["bf_interval"] == -1
    r = replay(DELAYS, POOL4, "slurm", "ff", meta={"slurm": {"decay_half_life": 0}}, options={"weight_fairshare": 1})
    assert r.options["scheduler_options"]["decay_half_life"] == 0


def test_a_reservation_holds_until_its_end_rounded_up_to_the_resolution():
    # one node of 12 cores, resolution 60 s.  Job 1 (8 cores) runs [0, 60); job 2 (8) is
    # reserved from 60 until 90 rounded up, 120; job 3 (12) from 120.  Job 4 (4 cores,
    # 100 s) fits beside both now and starts.  Job 1 ends at 60, job 2 at 90, job 4 at 100:
    # job 3 starts at 100.  A reservation ending at 90 would put job 3 at 90, which job 4
    # would run into: job 4 would wait.
    t = _table([0, 0, 0, 0], [60, 30, 30, 100], [8, 8, 12, 4], [60, 30, 30, 100])
    r = replay(t, machine.from_spec("1x(cores=12)"), "slurm", "ff", options={**AGE_ONLY, "bf_resolution": 60})
    assert r.start.tolist() == [0, 60, 100, 0]


# --------------------------------------------------------------------------- Netti et al.'s Weighted and
# Priority-Weighted against tests/naive_slurm.py (whose node orders are tests/naive_alloc.py's)


NETTI_CAP = [(8, 2, 0, 32), (8, 0, 2, 32), (8, 2, 0, 32), (16, 0, 0, 32), (4, 1, 1, 32)]
NETTI = [("weighted", "text"), ("weighted", "authors"), ("priority-weighted", "text"),
         ("priority-weighted", "authors")]


def _gpu_workload(seed, n=30, cap=NETTI_CAP):
    """n jobs of 1-4 units (1-3 cores, a GPU or a MIC on some) over 60 s on ``cap``: a
    third of them or more wait, and backfill starts some."""
    rng = np.random.default_rng(seed)
    run = rng.integers(1, 40, n)
    gpus = (rng.random(n) < 0.3).astype(np.int64)
    table = jobs.from_columns(
        job_id=np.arange(1, n + 1), submit=np.sort(rng.integers(0, 60, n)), run=run, estimate=run + rng.integers(0, 20, n),
        units=rng.integers(1, 5, n), unit_cores=rng.integers(1, 4, n), unit_gpus=gpus,
        unit_mics=((rng.random(n) < 0.2) & (gpus == 0)).astype(np.int64), unit_mem=np.zeros(n, np.int64),
        req_nodes=np.full(n, -1), user=rng.integers(1, 3, n), group=rng.integers(1, 3, n))
    c = np.array(cap, dtype=np.int64)
    return table, Machine(c, spec_of(c))


def _netti_check(table, mach, params, allocator, rule, window=100, meta=None, eligible=None, lists=None):
    """The engine against naive_slurm, job by job: starts and nodes.  Returns the result.
    With partitions (``meta``): ``lists``, each job's partition indices, and
    ``eligible``, its eligible nodes (frozensets), computed by the caller."""
    est = np.where(table.estimate > 0, table.estimate, table.run)
    cap = [tuple(int(v) for v in c) for c in mach.capacity]
    parts = mach.partitions
    top = max((p.job_factor for p in parts), default=1)
    ref = [ns.Job(submit=int(table.submit[i]), run=int(table.run[i]), est=int(est[i]), units=int(table.units[i]),
                  req=tuple(max(int(c[i]), 0) for c in (table.unit_cores, table.unit_gpus, table.unit_mics,
                                                         table.unit_mem)),
                  req_nodes=int(table.req_nodes[i]) if table.req_nodes[i] > 0 else -1,
                  user=int(table.user[i]), account=int(table.group[i]),
                  **({} if lists is None else dict(
                      parts=tuple(lists[i]), nodes_ok=eligible[i], tier=max(parts[p].tier for p in lists[i]),
                      part_factor=max(parts[p].job_factor for p in lists[i]) / top)))
           for i in range(table.n_jobs)]
    ns.replay(ref, cap, **params, allocator=allocator, weight_rule=rule, window=window)
    got = replay(table, mach, "slurm", allocator, options=params, meta=meta, weight_rule=rule, window=window)
    expected = np.array([-1 if j.start is None else j.start for j in ref], dtype=np.int64)
    start = np.where(got.status == Status.REPLAYED, got.start, -1)
    bad = np.flatnonzero(start != expected)
    assert bad.size == 0, f"{params}: job {bad[0]}: engine {start[bad[0]]}, oracle {expected[bad[0]]} ({bad.size} differ)"
    placed = placements(results.allocations_frame(got))
    for i, j in enumerate(ref):
        assert placed.get(int(table.job_id[i]), []) == sorted(j.nodes), (params, i)
    return got


BACKFILL_NOW = {"bf_interval": 0, "bf_resolution": 1}


@pytest.mark.parametrize(("allocator", "rule"), NETTI)
@pytest.mark.parametrize(("seed", "params"), [(3, BACKFILL_NOW), (8, {"bf_interval": 7, "bf_resolution": 4}),
                                              (0, {**BACKFILL_NOW, "weight_jobsize": 1000.0})])
def test_slurm_netti_allocators_equal_the_oracle(allocator, rule, seed, params):
    table, mach = _gpu_workload(seed)
    got = _netti_check(table, mach, params, allocator, rule)
    # what the comparison covers: jobs wait, backfill starts some, the nodes are not ff's
    assert (got.start > table.submit).sum() >= 5
    no_bf = replay(table, mach, "slurm", allocator, options={**params, "bf_interval": -1}, weight_rule=rule)
    assert (no_bf.start != got.start).sum() >= 5
    ff = replay(table, mach, "slurm", "ff", options=params)
    assert (ff.nodes_used != got.nodes_used).any() or (ff.start != got.start).any()


def test_slurm_authors_window_reads_the_priority_order():
    """Under a job-size weight slurm's order is not the arrival order: the authors' window
    must read the jobs behind the placed one in slurm's order (the one its main loop and
    backfill walk), as it reads PRB's and the fair-share schedulers' orders."""
    table, mach = _gpu_workload(0)
    params = {**BACKFILL_NOW, "weight_jobsize": 1000.0}
    # the orders differ: some job starts before one submitted earlier that waits for it
    got = _netti_check(table, mach, params, "weighted", "authors")
    later_first = [(a, b) for a in range(table.n_jobs) for b in range(a + 1, table.n_jobs)
                   if got.start[b] < got.start[a] and table.submit[b] < got.start[b]]
    assert later_first


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), netti=st.sampled_from(NETTI), window=st.sampled_from([1, 3, 100]),
       params=st.fixed_dictionaries({
           "bf_interval": st.sampled_from([0, 7]), "bf_resolution": st.sampled_from([1, 4]),
           "weight_jobsize": st.sampled_from([0.0, 1000.0]), "weight_age": st.sampled_from([0.0, 1000.0]),
           "default_queue_depth": st.sampled_from([2, 100]), "bf_max_job_test": st.sampled_from([2, 500])}))
def test_slurm_netti_allocators_equal_the_oracle_on_generated_traces(seed, netti, window, params):
    table, mach = _gpu_workload(seed, n=20)
    _netti_check(table, mach, params, *netti, window=window)


# Partitions and node features: the engine ranks every node (the machine's totals in the
# weights, every node's rank) and skips the ones a job may not use when placing it, as
# netti.py's docstring says ("ranked too but never used") and naive_slurm does.
# NETTI_CAP with features a (nodes 0, 1) and b (nodes 3, 4) and partitions "all" (the
# default, every node) and "small" (nodes 1, 3, 4, a higher job factor and tier).
NETTI_FEATURES = (frozenset("a"), frozenset("a"), frozenset(), frozenset("b"), frozenset("b"))
NETTI_PARTS = (("all", (0, 1, 2, 3, 4)), ("small", (1, 3, 4)))
NETTI_NAMES = ["all", "small", "all,small"]  # partition codes 0-2 (-1: the default)
NETTI_CONSTRAINTS = ["a", "b"]  # constraint codes 0-1 (-1: none)


def _partitioned_gpu_workload(seed, n=30):
    """:func:`_gpu_workload` on NETTI_CAP with NETTI_PARTS and NETTI_FEATURES, about half
    the jobs in a partition or with a constraint: (table, machine, meta, eligible node
    sets, partition index lists)."""
    table, _ = _gpu_workload(seed, n)
    rng = np.random.default_rng(seed + 1000)
    partition = np.where(rng.random(n) < 0.5, rng.integers(0, len(NETTI_NAMES), n), -1)
    constraint = np.where(rng.random(n) < 0.4, rng.integers(0, len(NETTI_CONSTRAINTS), n), -1)
    table = jobs.from_columns(**{c: getattr(table, c) for c in (
        "job_id", "submit", "run", "estimate", "units", "unit_cores", "unit_gpus", "unit_mics", "unit_mem",
        "req_nodes", "user", "group")}, partition=partition, constraint=constraint)
    cap = np.array(NETTI_CAP, dtype=np.int64)
    parts = tuple(Partition(name, np.array(nodes, dtype=np.int64), default=p == 0, job_factor=1 + 2 * p, tier=1 + p)
                  for p, (name, nodes) in enumerate(NETTI_PARTS))
    mach = Machine(cap, spec_of(cap), "test", tuple(f"n{i}" for i in range(len(cap))), NETTI_FEATURES, parts)
    meta = {"partitions": {name: code for code, name in enumerate(NETTI_NAMES)}, "constraints": NETTI_CONSTRAINTS}
    eligible, lists = [], []
    for i in range(n):
        names = ["all"] if partition[i] < 0 else NETTI_NAMES[partition[i]].split(",")
        plist = [q for q, (name, _) in enumerate(NETTI_PARTS) if name in names]
        ok = set().union(*(NETTI_PARTS[p][1] for p in plist))
        if constraint[i] >= 0:
            ok = {v for v in ok if NETTI_CONSTRAINTS[constraint[i]] in NETTI_FEATURES[v]}
        eligible.append(frozenset(ok))
        lists.append(plist)
    return table, mach, meta, eligible, lists


@pytest.mark.parametrize(("allocator", "rule"), NETTI)
@pytest.mark.parametrize(("seed", "params"), [(3, BACKFILL_NOW), (9, {"bf_interval": 7, "bf_resolution": 4})])
def test_slurm_netti_allocators_equal_the_oracle_with_partitions_and_features(allocator, rule, seed, params):
    table, mach, meta, eligible, lists = _partitioned_gpu_workload(seed)
    got = _netti_check(table, mach, params, allocator, rule, meta=meta, eligible=eligible, lists=lists)
    # what the comparison covers: jobs wait, jobs limited to some nodes start, and the
    # nodes are not ff's
    assert (got.start > table.submit).sum() >= 5
    limited = np.array([len(e) < len(NETTI_CAP) for e in eligible]) & (got.status == Status.REPLAYED)
    assert limited.sum() >= 5
    ff = placements(results.allocations_frame(replay(table, mach, "slurm", "ff", options=params, meta=meta)))
    placed = placements(results.allocations_frame(got))
    assert sum(placed[int(table.job_id[i])] != ff.get(int(table.job_id[i])) for i in np.flatnonzero(limited)) >= 2


# Priority-Weighted's p_k moves once per attempt (netti.py's docstring; naive_alloc.move_priorities).
# Two hand-made cases where the GPU priority p_GPU decides the last job's node, one with
# the decisive GPU start in a backfill cycle and one in the main loop.  Node 0 has a few
# cores and many GPUs, node 1 only cores; the last job J4 (1 core, nothing behind it in
# the order: the authors' window is empty) goes to the node of lower rank, node 0's
# rank growing with p_GPU (its one free GPU) and node 1's fixed (its free cores).


def _pw_table(submit, run, cores, gpus):
    n = len(submit)
    return jobs.from_columns(job_id=np.arange(1, n + 1), submit=submit, run=run, estimate=run, units=np.ones(n),
                             unit_cores=cores, unit_gpus=gpus, unit_mics=np.zeros(n), unit_mem=np.zeros(n),
                             req_nodes=np.full(n, -1))


def _pw_machine(cores0, gpus0, cores1):
    cap = np.array([(cores0, gpus0, 0, 0), (cores1, 0, 0, 0)], dtype=np.int64)
    return Machine(cap, spec_of(cap))


def _last_job_node(table, mach, allocator, params):
    got = replay(table, mach, "slurm", allocator, options=params)
    return placements(results.allocations_frame(got))[int(table.job_id[-1])]


def test_priority_weighted_moves_p_once_for_a_backfill_start():
    """A job a backfill cycle starts moves p_GPU by -1 once (after its node order).
    Node 0: 4 cores, 16 GPUs; node 1: 8 cores.  J1 (3 cores, 15 GPUs, 0-100) leaves one
    GPU; J2 (1 core, 2 GPUs, at 1) waits for it: the main loop offers it and it fails at
    every pass (+1).  J3 (1 core, 1 GPU, at 2, 1 s) backfills on node 0 (-1) and ends at
    3.  p_GPU: 1 (J1 starts), 2 (t=1), 3 then 2 (t=2), 3 (t=3), 4 (t=4, J4's arrival).
    J4 (1 core) backfills at 4; used 3 cores of 12 and 15 GPUs of 16, so w_cores = 4/144
    and w_GPU = 16/256 x p_GPU: node 0's rank is p_GPU/16 (0 cores, 1 GPU left), node
    1's 7/36.  With p_GPU = 4, 0.25 > 0.194: node 1.  A second move at J3's start (p_GPU
    3 at J4) would put J4 on node 0, as Weighted (p = 1) does."""
    table = _pw_table([0, 1, 2, 4], [100, 50, 1, 10], [3, 1, 1, 1], [15, 2, 1, 0])
    mach = _pw_machine(4, 16, 8)
    got = _netti_check(table, mach, BACKFILL_NOW, "priority-weighted", "authors")
    assert got.start.tolist() == [0, 100, 2, 4]
    assert _last_job_node(table, mach, "priority-weighted", BACKFILL_NOW) == [(1, 1)]
    assert _last_job_node(table, mach, "weighted", BACKFILL_NOW) == [(0, 1)]


def test_priority_weighted_moves_p_once_for_a_main_loop_start():
    """A job the main loop starts moves p_GPU by -1 once (after its node order).  Node 0:
    5 cores, 32 GPUs; node 1: 8 cores; a job-size weight puts larger jobs first.  J1 (3
    cores, 31 GPUs, 0-100) leaves one GPU; J2 (1 core, 2 GPUs, at 1) waits for it and
    fails at every pass (+1).  J3 (1 core, at 2, 1 s) only makes a pass.  J4 (2 cores, 1
    GPU, at 3, 1 s) goes before J2 and the main loop starts it on node 0 (-1).  p_GPU: 1,
    2 (t=1), 3 (t=2), 2 then 3 (t=3: J4 starts, J2 fails), 4 (t=4), 5 (t=5, J5's
    arrival).  J5 (1 core) backfills at 5; used 3 cores of 13 and 31 GPUs of 32, so
    w_cores = 4/169 and w_GPU = 32/1024 x p_GPU: node 0's rank is 4/169 + p_GPU/32 (1
    core, 1 GPU left), node 1's 28/169.  With p_GPU = 5, 0.18 > 0.166: node 1.  A
    second move at J4's start (p_GPU 4 at J5: 0.149) would put J5 on node 0, as Weighted
    does."""
    table = _pw_table([0, 1, 2, 3, 5], [100, 50, 1, 1, 10], [3, 1, 1, 2, 1], [31, 2, 0, 1, 0])
    mach = _pw_machine(5, 32, 8)
    params = {**BACKFILL_NOW, "weight_jobsize": 1000.0}
    got = _netti_check(table, mach, params, "priority-weighted", "authors")
    assert got.start.tolist() == [0, 100, 2, 3, 5]
    assert _last_job_node(table, mach, "priority-weighted", params) == [(1, 1)]
    assert _last_job_node(table, mach, "weighted", params) == [(0, 1)]
