"""``priority`` and ``sfs`` (schedbench.schedulers.fairshare): Steffen's §5 example, EASY
equality, and engine == tests/naive_fairshare.py job by job."""

from __future__ import annotations

import os
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_fairshare as nf
from repo_paths import SWF_LOGS
from schedbench.engine import replay
from schedbench.errors import UsageError
from schedbench.io import jobs, machine, swf
from strategies import pool_traces as _pool_traces

LOGS = SWF_LOGS
N_JOBS = int(os.environ.get("SCHEDBENCH_ORACLE_JOBS", "3000"))
STATUS = {s.value: s.name.lower() for s in replay.Status}


def _estimate(table):
    return np.where(table.estimate > 0, table.estimate, table.run)


def _allocations(table, account, procs_total):
    """Independent of the engine: targets and shares from the trace's work (issue 12)."""
    ids, acct = np.unique(account, return_inverse=True)
    live = (table.run >= 0) & (table.units > 0) & (table.units <= procs_total)
    ends = table.submit[live] + table.run[live]
    span = float(max(1, int(ends.max() - table.submit[live].min()))) if live.any() else 1.0
    work = np.zeros(ids.size)
    for i in np.flatnonzero(live):
        work[acct[i]] += float(table.units[i] * table.run[i])
    ideal = work / span
    shares = ideal / ideal.sum() if ideal.sum() > 0 else np.zeros(ids.size)
    return acct, np.floor(2.0 * ideal + 1e-9).astype(int), shares


def _check(table, procs, scheduler, weights, depth, predictor="requested", backfill=True, standing=False):
    acct, target, shares = _allocations(table, table.group, procs)
    pred = table.run if predictor == "actual" else _estimate(table)
    standing = standing and scheduler == "sfs"
    nv = nf.replay_pool(table.job_id, table.submit, table.run, table.units, pred, acct, procs,
                        sfs=scheduler == "sfs", weights=weights, depth=depth, target=target, shares=shares,
                        backfill=backfill, standing=standing)
    opts = {"priority_weights": f"age={weights[0]},size={weights[1]},fairshare={weights[2]}", "depth": depth,
            "backfill": backfill}
    if scheduler == "sfs":
        opts["standing"] = standing
    r = replay.replay(table, machine.from_spec(f"1x(cores={procs})"), scheduler, "ff", predictor, options=opts)
    expected = np.array([-1 if s is None else s for s in nv.start], dtype=np.int64)
    bad = np.flatnonzero(r.start != expected)
    assert bad.size == 0, (f"{scheduler} {weights} depth {depth}: {bad.size} starts differ, first job id "
                           f"{table.job_id[bad[0]]}: engine {r.start[bad[0]]}, oracle {expected[bad[0]]}")
    assert [STATUS[s] for s in r.status] == nv.status
    return r, nv


def _example(tmp_path):
    """Steffen §5: 1000 nodes; Alice (group 1) ten 200-node jobs A..K, Bob (group 2) ten
    50-node jobs M..X, all submitted together with equal run times and estimates."""
    n = 20
    table = jobs.from_columns(
        job_id=np.arange(1, n + 1), submit=np.zeros(n, np.int64), run=np.full(n, 3600),
        estimate=np.full(n, 3600), procs_req=[200] * 10 + [50] * 10, group=[1] * 10 + [2] * 10,
    )
    accounts = tmp_path / "accounts.toml"
    accounts.write_text("[accounts.1]\ntarget = 288\n[accounts.2]\ntarget = 58\n")
    return table, machine.from_spec("1000x(cores=1)"), str(accounts)


NAMES = list("ABCDEFGHJK") + list("MNPQRSUVWX")


@pytest.mark.parametrize(("scheduler", "first_slice"), [
    ("sfs", set("ABMNCDPQ")),  # the paper's answer, §5.0.3
    ("priority", set("ABCDE")),  # the linear scheduler: Alice's larger jobs fill the machine, Bob waits
])
def test_steffens_example_first_slice(tmp_path, scheduler, first_slice):
    table, mach, accounts = _example(tmp_path)
    r = replay.replay(table, mach, scheduler, "ff", options={
        "priority_weights": "age=0,size=1,fairshare=0", "depth": 2, "accounts": accounts})
    assert {NAMES[i] for i in np.flatnonzero(r.start == 0)} == first_slice


def test_sfs_pass_one_order_is_the_papers(tmp_path):
    """Pass 1 alone (no room left for pass 2's C and D): A, B, then Bob's M, N - not C."""
    table, mach, accounts = _example(tmp_path)
    small = machine.from_spec("500x(cores=1)")
    r = replay.replay(table, small, "sfs", "ff", options={
        "priority_weights": "age=0,size=1,fairshare=0", "depth": 2, "accounts": accounts})
    assert {NAMES[i] for i in np.flatnonzero(r.start == 0)} == set("ABMN")
    del mach


@pytest.mark.skipif(not LOGS, reason="../shared/traces/swf not present")
@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name.split("-cln")[0])
def test_age_only_depth_one_is_easy(log):
    table, header = swf.read(log)
    table = table.head(N_JOBS)
    mach = machine.from_swf_header(header.max_procs, header.max_nodes, int(table.units.max()))
    easy = replay.replay(table, mach, "easy", "ff")
    prio = replay.replay(table, mach, "priority", "ff", options={"priority_weights": "age=1,size=0,fairshare=0"})
    np.testing.assert_array_equal(prio.start, easy.start)


# ff only: each allocator compiles the per-node loop again (bf adds about two minutes of a
# cold run on a busy 2-core machine); the property tests vary the allocator on small cases.
@pytest.mark.parametrize("allocator", ["ff"])
def test_age_only_depth_one_is_easy_on_eurora_nodes(shared_traces, allocator):
    """Eurora's jobs ask for cores, GPUs, MICs and memory on 64 nodes: the per-node plan."""
    from schedbench.io import eurora

    table, meta = eurora.read_instances(shared_traces / "eurora" / "job_instances")
    mach = machine.from_node_file(shared_traces / "eurora" / "system_configs" / "nodes_#64")
    easy = replay.replay(table, mach, "easy", allocator, meta=meta)
    prio = replay.replay(table, mach, "priority", allocator, meta=meta,
                         options={"priority_weights": "age=1,size=0,fairshare=0"})
    np.testing.assert_array_equal(prio.start, easy.start)


@pytest.mark.skipif(not LOGS, reason="../shared/traces/swf not present")
@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name.split("-cln")[0])
@pytest.mark.parametrize(("scheduler", "weights", "depth"), [
    ("sfs", (1.0, 1.0, 1440.0), 1), ("priority", (1.0, 1.0, 1440.0), 3), ("sfs", (0.0, 1.0, 0.0), 2),
    ("sfs-standing", (1.0, 20.0, 0.0), 2)])
def test_engine_equals_oracle_on_shared_logs(log, scheduler, weights, depth):
    table, header = swf.read(log)
    table = table.head(N_JOBS)
    _check(table, int(header.max_procs or table.units.max()) if header.max_procs else int(table.units.max()),
           scheduler.removesuffix("-standing"), weights, depth, standing=scheduler.endswith("-standing"))


pool_traces = partial(_pool_traces, max_procs=10, max_jobs=30, max_submit=40, min_size=0, size_over=1, min_est=0, groups=True)


@settings(max_examples=250, deadline=None)
@given(pool_traces(), st.sampled_from(["priority", "sfs", "sfs-standing"]),
       st.tuples(st.sampled_from([0.0, 1.0, 7.0]), st.sampled_from([0.0, 1.0, 3.0]), st.sampled_from([0.0, 5.0, 1e4])),
       st.integers(1, 4), st.sampled_from(["requested", "actual"]), st.sampled_from([True, True, False]))
def test_engine_equals_oracle_on_generated_pools(trace, scheduler, weights, depth, predictor, backfill):
    table, procs = trace
    _check(table, procs, scheduler.removesuffix("-standing"), weights, depth, predictor, backfill,
           standing=scheduler.endswith("-standing"))


def _chris_case(tmp_path, on_nodes):
    """10 cores; size-only priority.  At 0 Alice (group 1) starts jobs 1 (5 cores, 100 s)
    and 2 (5 cores, 50 s); at 1 Chris (group 3) submits job 3 (8 cores, 10 s), Bob (group
    2) job 4 (4 cores, 100 s); every estimate exact.  At 50 job 2 ends: Chris is first in
    priority but 5 cores are free.  Without standing reservations pass 1 starts Bob's job 4
    (Bob is under target), which holds 4 cores until 150, so Chris's reservation in pass 2
    lands at 150.  With them, Chris holds 100 (job 1's end) before pass 1, job 4 would
    delay it and waits; Chris starts at 100, Bob at Chris's end, 110.  On nodes: two nodes
    of 5 cores, jobs 1, 2 and 4 each on one node."""
    nodes = [1, 1, -1, 1] if on_nodes else [-1] * 4
    table = jobs.from_columns(
        job_id=[1, 2, 3, 4], submit=[0, 0, 1, 1], run=[100, 50, 10, 100], estimate=[100, 50, 10, 100],
        units=[5, 5, 8, 4], unit_cores=[1] * 4, unit_gpus=[0] * 4, unit_mics=[0] * 4, unit_mem=[0] * 4,
        req_nodes=nodes, group=[1, 1, 3, 2],
    )
    accounts = tmp_path / "a.toml"
    accounts.write_text("[accounts.1]\ntarget = 10\n[accounts.2]\ntarget = 4\n[accounts.3]\ntarget = 8\n")
    mach = machine.from_spec("2x(cores=5)" if on_nodes else "1x(cores=10)")
    return table, mach, {"priority_weights": "age=0,size=1,fairshare=0", "accounts": str(accounts)}


@pytest.mark.parametrize("on_nodes", [False, True], ids=["pool", "nodes"])
@pytest.mark.parametrize(("scheduler", "standing", "starts"), [
    ("sfs", False, [0, 0, 150, 50]),
    ("sfs", True, [0, 0, 100, 110]),
    ("priority", None, [0, 0, 100, 110]),  # the linear scheduler reserves for Chris as standing sfs does
])
def test_standing_reservations_let_the_top_job_through(tmp_path, on_nodes, scheduler, standing, starts):
    table, mach, opts = _chris_case(tmp_path, on_nodes)
    if standing is not None:
        opts["standing"] = standing
    r = replay.replay(table, mach, scheduler, "ff", options=opts)
    assert r.start.tolist() == starts
    if not on_nodes and scheduler == "sfs":  # the oracle agrees (targets from the file)
        nv = nf.replay_pool(table.job_id, table.submit, table.run, table.units, table.estimate,
                            table.group - 1, 10, sfs=True, weights=(0.0, 1.0, 0.0), depth=1, target=[10, 4, 8],
                            shares=[0.0, 0.0, 0.0], standing=standing)
        assert nv.start == starts


def test_standing_is_an_sfs_option_only(tmp_path):
    """priority does not declare it, so it takes no part (the registry hands each
    scheduler only the options it declares)."""
    from schedbench import registry

    assert "standing" in {o.name for o in registry.SCHEDULERS["sfs"].options}
    assert "standing" not in {o.name for o in registry.SCHEDULERS["priority"].options}


@pytest.mark.parametrize(("text", "words"), [
    ("[accounts.x]\ntarget = 1\n", "numbers"),
    ("[accounts.1]\ntarget = 1\nallocation = 2\n", "target = U or allocation"),
    ("[accounts.1]\ntarget = -1\n", ">= 0"),
    ("[other]\n", r"only \[accounts\.ID\]"),
    ("[accounts.1\n", "not TOML"),
])
def test_bad_accounts_files_say_what(tmp_path, text, words):
    table, mach, _ = _example(tmp_path)
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(UsageError, match=words):
        replay.replay(table, mach, "sfs", "ff", options={"accounts": str(path)})


@pytest.mark.parametrize("weights", ["age", "speed=1", "age=-1", "age=x"])
def test_bad_weights_are_usage_errors(tmp_path, weights):
    table, mach, _ = _example(tmp_path)
    with pytest.raises(UsageError, match="priority_weights"):
        replay.replay(table, mach, "priority", "ff", options={"priority_weights": weights})


def _moving_head(r2_run):
    """2 nodes of 2 cores, all jobs submitted at 0, priority = (submit, id): R1 (1 core,
    10 s) goes to node 0, R2 (a whole node, ``r2_run`` s) to node 1; H (a whole node)
    cannot start and is reserved at 10 on node 0 (node index order); C (1 core, 100 s)
    fits now only on node 0, where H's placement is."""
    return jobs.from_columns(
        job_id=[1, 2, 3, 4], submit=[0, 0, 0, 0], run=[10, r2_run, 10, 100], estimate=[10, r2_run, 10, 100],
        units=[1, 1, 1, 1], unit_cores=[1, 2, 2, 1], unit_gpus=[0] * 4, unit_mics=[0] * 4, unit_mem=[0] * 4,
        req_nodes=[1, 1, 1, 1],
    )


@pytest.mark.parametrize(("r2_run", "starts"), [
    (10, [0, 0, 10, 0]),  # node 1 is free at 10: H's reservation moves there and C backfills
    (50, [0, 0, 10, 20]),  # node 1 is busy until 50: H cannot move, C would delay it and waits for H's end
])
def test_a_reservation_moves_to_other_nodes_to_let_a_job_backfill(r2_run, starts):
    table = _moving_head(r2_run)
    r = replay.replay(table, machine.from_spec("2x(cores=2)"), "priority", "ff", options={
        "priority_weights": "age=0,size=0,fairshare=0", "depth": 2})
    assert r.start.tolist() == starts
    # H ends up on node 1 in the first case, node 0 in the second
    assert int(r.alloc_log[r.alloc_ptr[2], 0]) == (1 if r2_run == 10 else 0)


def test_node_workloads_are_accepted_and_sizes_are_cores(tmp_path):
    """On 2 nodes of (4 cores, 1 GPU), priority = size: job 1 (2 units of 2 cores and a
    GPU) runs 0-100 and is 4 cores, over its account's target of 3 (as 2 units it would
    not be).  At 1, sfs's pass 1 skips account 1's jobs 3 (8 cores) and 2 (1 core) and
    starts account 2's job 4; pass 2 reserves job 3 at 100 and backfills job 2 (it ends at
    11).  Strict priority: pass 2 stops at job 3, which starts at 100 (pass 1), job 2
    after it, at 110."""
    table = jobs.from_columns(
        job_id=[1, 2, 3, 4], submit=[0, 1, 1, 1], run=[100, 10, 10, 10], estimate=[100, 10, 10, 10],
        units=[2, 1, 4, 1], unit_cores=[2, 1, 2, 1], unit_gpus=[1, 0, 0, 0], unit_mics=[0] * 4,
        unit_mem=[0] * 4, req_nodes=[-1, -1, -1, -1], group=[1, 1, 1, 2],
    )
    accounts = tmp_path / "a.toml"
    accounts.write_text("[accounts.1]\ntarget = 3\n[accounts.2]\ntarget = 4\n")
    mach = machine.from_spec("2x(cores=4,gpus=1)")
    opts = {"priority_weights": "age=0,size=1,fairshare=0", "accounts": str(accounts)}
    assert replay.replay(table, mach, "sfs", "ff", options=opts).start.tolist() == [0, 1, 100, 1]
    strict = replay.replay(table, mach, "sfs", "ff", options={**opts, "backfill": False})
    assert strict.start.tolist() == [0, 110, 100, 1]


def test_fairness_metrics_by_hand(tmp_path):
    """Two accounts on 2 cores: group 1 runs a 2-core job for 1 h at 0, group 2's 1-core
    job waits for it and runs 1 h.  Span 2 h = 1/12 day.  Targets from the file: 1 and 1."""
    from schedbench.analysis import results

    table = jobs.from_columns(job_id=[1, 2], submit=[0, 0], run=[3600, 3600], estimate=[3600, 3600],
                              procs_req=[2, 1], group=[1, 2])
    accounts = tmp_path / "a.toml"
    accounts.write_text("[accounts.1]\ntarget = 1\n[accounts.2]\ntarget = 1\n")
    r = replay.replay(table, machine.from_spec("1x(cores=2)"), "sfs", "ff", options={"accounts": str(accounts)})
    f = results.write_run(r, tmp_path / "out")["fairness"]
    a1, a2 = f["accounts"]["1"], f["accounts"]["2"]
    assert (a1["first_start_latency"], a2["first_start_latency"]) == (0, 3600)
    assert (a1["wait_mean"], a2["wait_mean"]) == (0.0, 3600.0)
    assert a1["delivered_unit_hours_per_day"] == pytest.approx(2 * 12) and a2["delivered_unit_hours_per_day"] == 12
    assert a1["target_unit_hours_per_day"] == 24.0
    # delivered shares 2/3, 1/3 against 1/2, 1/2: x = (4/3, 2/3), Jain = 4 / (2 * 20/9) = 0.9
    assert f["jain_delivered_vs_allocated"] == pytest.approx(0.9)


def test_steffen_workload_is_the_papers():
    from schedbench.workloads import steffen

    t = steffen.generate(np.random.default_rng(0))
    days = t.submit // 86400
    assert t.n_jobs == 7 * 18 + 1 and set(days) == set(range(7)) and (t.submit % 86400 == 0).all()
    alice, bob, chris = (t.group == 1), (t.group == 2), (t.group == 3)
    assert (t.units[alice] == 250).all() and np.bincount(days[alice]).tolist() == [12] * 7
    assert (t.units[bob] == 65).all() and np.bincount(days[bob]).tolist() == [6] * 7
    assert t.units[chris].tolist() == [750] and days[chris].tolist() == [6]
    frac = t.run / t.estimate
    assert (frac >= 0.70 - 1e-4).all() and (frac <= 0.95).all()


@settings(max_examples=150, deadline=None)
@given(pool_traces(), st.sampled_from(["priority", "sfs", "sfs-standing"]), st.integers(1, 4))
def test_backfill_never_overfills_the_plan_and_pass_one_respects_targets(trace, scheduler, depth):
    """With exact estimates (predictor actual): at the end of every pass, every instant of
    the plan - running jobs, reservations and the jobs backfilled around them - fits the
    machine, so no backfilled job delays a reservation; and an account above its target
    never starts a job in sfs's pass 1.  (The engine equals this oracle job by job.)"""
    table, procs = trace
    standing = scheduler.endswith("-standing")
    scheduler = scheduler.removesuffix("-standing")
    _, nv = _check(table, procs, scheduler, (1.0, 1.0, 5.0), depth, "actual", standing=standing)
    for now, plan in nv.plans:
        for t in {now} | {a for a, _, _ in plan}:
            assert sum(s for a, b, s in plan if a <= t < b) <= procs, (now, t, plan)
    assert all(occ <= target for _, _, occ, target in nv.pass1_starts)
    if scheduler == "priority":
        assert nv.pass1_starts == []


def test_a_reservation_may_end_where_the_one_before_it_begins():
    # (priority: sfs's first pass would start C before any reservation is made.)
    # 3 nodes of 4 cores, every job a whole node per unit, all at 0, age only, two
    # reservations.  A (1 node, 10 s) and B (1 node, 20 s) start.  H1 (3 nodes) is reserved
    # at 20, when all are free; H2 (2 nodes, 10 s) at 10, on A's and the third node: its
    # [10, 20) ends where H1 begins.  C (1 node, 20 s) fits now but would hold the third
    # node over H2's window: it waits for both, until 30.  Windows taken as closed would
    # put H2 after H1 and let C start at 0.
    n = 5
    t = jobs.from_columns(job_id=np.arange(1, n + 1), submit=np.zeros(n, np.int64), run=[10, 20, 10, 10, 20],
                          estimate=[10, 20, 10, 10, 20], units=[1, 1, 3, 2, 1], unit_cores=[4] * n, group=[1] * n)
    r = replay.replay(t, machine.from_spec("3x(cores=4)"), "priority", "ff",
                      options={"priority_weights": "age=1,size=0,fairshare=0", "depth": 2})
    assert r.start.tolist() == [0, 0, 20, 10, 30]
