"""Properties of ``priority`` and ``sfs`` on nodes (their per-node plan: partitions,
features, node counts, several resource types): the engine equals
tests/naive_fairshare.py's ``replay_nodes`` job by job (starts and placements), depth 1
with only the age weight is EASY, and after every pass of the oracle the plan - running
jobs and reservations - overdraws no node at any instant."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import naive_fairshare as nf
from schedbench.engine.replay import replay
from schedbench.io import jobs
from schedbench.plan.eligibility import node_classes
from schedbench.schema import Status
from strategies import CONSTRAINTS, partitioned_machines


@st.composite
def clusters(draw, max_jobs=18, max_cores=6):
    """(table, machine, meta): 2-4 nodes of cores, GPUs and MiB with random features,
    one to three overlapping partitions, jobs of two or three accounts in them with random
    constraints, shapes, runs and estimates (some shorter than the run)."""
    machine, n_parts = draw(partitioned_machines(max_nodes=4, max_cores=max_cores))
    n = draw(st.integers(1, max_jobs))
    rows = []
    for _ in range(n):
        units = draw(st.integers(1, 4))
        req_nodes = draw(st.sampled_from([-1, 1, units])) if units > 1 else draw(st.sampled_from([-1, 1]))
        rows.append(dict(
            submit=draw(st.integers(0, 30)), run=draw(st.integers(0, 30)), time_req=draw(st.integers(1, 40)),
            units=units, unit_cores=draw(st.integers(1, 3)), unit_gpus=draw(st.integers(0, 1)),
            unit_mem=draw(st.sampled_from([0, 8])), req_nodes=req_nodes, group=draw(st.integers(1, 3)),
            partition=draw(st.integers(-1, n_parts - 1)), constraint=draw(st.integers(-1, len(CONSTRAINTS) - 1)),
        ))
    rows.sort(key=lambda r: r["submit"])
    cols = {k: np.array([r[k] for r in rows], dtype=np.int64) for k in rows[0]}
    table = jobs.from_columns(job_id=np.arange(1, n + 1), procs_req=cols["units"] * cols["unit_cores"], **cols)
    meta = {"partitions": {f"p{p}": p for p in range(n_parts)}, "constraints": CONSTRAINTS}
    return table, machine, meta


def _oracle_jobs(table, meta, machine):
    """The oracle's job dicts, from the table as the engine reads it (memory defaults of
    the partitions applied) and the jobs' eligible nodes."""
    classes = node_classes(table, meta, machine)
    t = classes.table
    out = []
    for j in range(t.n_jobs):
        out.append(dict(
            job_id=int(t.job_id[j]), submit=int(t.submit[j]), run=int(t.run[j]),
            pred=int(t.estimate[j]), units=int(t.units[j]),
            unit=(int(t.unit_cores[j]), int(t.unit_gpus[j]), 0, max(int(t.unit_mem[j]), 0)),
            req_nodes=int(t.req_nodes[j]), elig=set(np.flatnonzero(classes.elig[classes.job_class[j]]).tolist()),
            account=int(t.group[j]) - 1,
        ))
    return out


def _allocations(specs, replayed, n_accounts):
    """Targets (2 x ideal occupancy, floored) and shares from the replayed jobs' work
    (size x run) over the trace's span, written here from the package docstring."""
    live = [d for d, ok in zip(specs, replayed, strict=True) if ok]
    if not live:
        return [0] * n_accounts, [0.0] * n_accounts
    span = max(1, max(d["submit"] + d["run"] for d in live) - min(d["submit"] for d in live))
    ideal = [0.0] * n_accounts
    for d in live:
        ideal[d["account"]] += nf.job_size(d["units"], d["unit"]) * d["run"] / span
    total = sum(ideal)
    return [int(np.floor(2.0 * x + 1e-9)) for x in ideal], [x / total if total > 0 else 0.0 for x in ideal]


def _run_both(case, scheduler, allocator, weights, depth, backfill, **netti):
    """``scheduler``: priority, sfs, or sfs-standing (sfs with standing reservations);
    ``netti``: weighted / priority-weighted options (weight_rule, window, bound)."""
    table, machine, meta = case
    standing = scheduler == "sfs-standing"
    scheduler = scheduler.removesuffix("-standing")
    opts = {"priority_weights": f"age={weights[0]},size={weights[1]},fairshare={weights[2]}", "depth": depth,
            "backfill": backfill}
    if scheduler == "sfs":
        opts["standing"] = standing
    for name, value in netti.items():
        if name != "bound" or allocator == "priority-weighted":
            opts["priority_bound" if name == "bound" else name] = value
    r = replay(table, machine, scheduler, allocator, meta=meta, options=opts)
    specs = _oracle_jobs(table, meta, machine)
    replayed = [s == Status.REPLAYED for s in r.status]
    target, shares = _allocations(specs, replayed, 3)
    nv = nf.replay_nodes(specs, machine.capacity.tolist(), allocator, sfs=scheduler == "sfs", weights=weights,
                         depth=depth, target=target, shares=shares, backfill=backfill,
                         standing=standing, **netti)
    assert replayed == [s == "replayed" for s in nv.status]
    return r, nv


WEIGHTS = st.tuples(st.sampled_from([0.0, 1.0, 7.0]), st.sampled_from([0.0, 1.0, 3.0]),
                    st.sampled_from([0.0, 5.0, 1e4]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=clusters(), scheduler=st.sampled_from(["priority", "sfs", "sfs-standing"]),
       allocator=st.sampled_from(["ff", "bf", "balanced", "keller"]),
       weights=WEIGHTS, depth=st.integers(1, 3), backfill=st.sampled_from([True, True, False]))
def test_engine_equals_oracle_on_nodes(case, scheduler, allocator, weights, depth, backfill):
    r, nv = _run_both(case, scheduler, allocator, weights, depth, backfill)
    _same_starts_and_nodes(r, nv)


def _nodes_of(r, j):
    rows = r.alloc_log[r.alloc_ptr[j] : r.alloc_ptr[j] + r.nodes_used[j]]
    return sorted((int(a), int(b)) for a, b in rows)


def _same_starts_and_nodes(r, nv):
    """Job by job: the engine's start and placement are the oracle's."""
    for j, s in enumerate(nv.start):
        if s is None:
            continue
        assert r.start[j] == s, (j, r.start[j], s)
        assert _nodes_of(r, j) == nv.alloc[j], j


# Netti et al.'s dynamic allocators (N7 of tests/naive_fairshare.py): their node order
# reads the queue (the authors' window: the jobs behind in the pass's priority order; the
# text's rule: every queued job) and Priority-Weighted's p_k move with every attempt.

NETTI = st.sampled_from([("weighted", "text"), ("weighted", "authors"), ("priority-weighted", "text"),
                         ("priority-weighted", "authors")])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=clusters(max_jobs=14, max_cores=40), scheduler=st.sampled_from(["priority", "sfs", "sfs-standing"]), netti=NETTI,
       window=st.sampled_from([1, 2, 100]), bound=st.sampled_from([2, 10]), weights=WEIGHTS,
       depth=st.integers(1, 2), backfill=st.sampled_from([True, True, False]))
def test_engine_equals_oracle_on_nodes_with_netti_allocators(case, scheduler, netti, window, bound, weights, depth,
                                                             backfill):
    allocator, rule = netti
    r, nv = _run_both(case, scheduler, allocator, weights, depth, backfill, weight_rule=rule, window=window,
                      bound=bound)
    _same_starts_and_nodes(r, nv)


def _contended(seed=28):
    """(table, machine, meta): four unlike nodes (many cores, few GPUs: the weights trade
    the two off, so that p_k changes orders), one partition, and 16 jobs of three accounts
    that arrive faster than they run: most wait, GPU jobs among them, and weighted places
    them elsewhere than first fit does, priority-weighted elsewhere than weighted."""
    from schedbench.io.machine import Machine, Partition, spec_of

    cap = np.array([[64, 1, 0, 0], [8, 2, 0, 0], [32, 0, 0, 0], [16, 2, 0, 0]], dtype=np.int64)
    machine = Machine(cap, spec_of(cap), "", tuple(f"n{i}" for i in range(4)), (frozenset(),) * 4,
                      (Partition("p0", np.arange(4, dtype=np.int64), default=True),))
    rng = np.random.default_rng(seed)
    n = 16
    units = rng.integers(1, 4, n)
    cols = dict(
        submit=np.sort(rng.integers(0, 40, n)), run=rng.integers(5, 40, n), time_req=rng.integers(10, 50, n),
        units=units, unit_cores=rng.integers(1, 17, n), unit_gpus=rng.integers(0, 2, n),
        unit_mem=np.zeros(n, np.int64), req_nodes=np.full(n, -1), group=rng.integers(1, 4, n),
        partition=np.full(n, -1), constraint=np.full(n, -1),
    )
    table = jobs.from_columns(job_id=np.arange(1, n + 1), procs_req=units * cols["unit_cores"], **cols)
    return table, machine, {"partitions": {"p0": 0}, "constraints": CONSTRAINTS}


@pytest.mark.parametrize("rule", ["text", "authors"])
@pytest.mark.parametrize("allocator", ["weighted", "priority-weighted"])
@pytest.mark.parametrize("scheduler", ["priority", "sfs", "sfs-standing"])
def test_netti_allocators_equal_the_oracle_where_jobs_wait(scheduler, allocator, rule):
    """A workload where the comparison bites: jobs wait (a job that starts at its
    arrival on an idle machine tests no queue-reading rule), and the allocator's nodes
    are not first fit's."""
    case = _contended()
    weights, depth = (1.0, 1.0, 1e4), 2
    r, nv = _run_both(case, scheduler, allocator, weights, depth, True, weight_rule=rule, window=2, bound=3)
    _same_starts_and_nodes(r, nv)
    table = case[0]
    waited = [j for j, s in enumerate(nv.start) if s is not None and s > table.submit[j]]
    assert len(waited) >= 6
    ff = replay(table, case[1], scheduler.removesuffix("-standing"), "ff", meta=case[2],
                options={"priority_weights": "age=1,size=1,fairshare=1e4", "depth": depth,
                         **({"standing": True} if scheduler == "sfs-standing" else {})})
    assert any(_nodes_of(r, j) != _nodes_of(ff, j) for j in waited)
    if allocator == "priority-weighted":  # the priorities moved, and that changed placements
        assert any(p != 1 for _, *ps in nv.prio_trace for p in ps)
        w = replay(table, case[1], scheduler.removesuffix("-standing"), "weighted", meta=case[2],
                   options={"priority_weights": "age=1,size=1,fairshare=1e4", "depth": depth, "weight_rule": rule,
                            "window": 2, **({"standing": True} if scheduler == "sfs-standing" else {})})
        assert any(_nodes_of(r, j) != _nodes_of(w, j) for j in range(len(nv.start)) if nv.start[j] is not None)


def _fixed(cap, rows):
    """(table, machine, meta): nodes of (cores, GPUs) ``cap``, one partition, and jobs
    (submit, run, estimate, units, cores and GPUs per unit, req_nodes, account 1-3)."""
    from schedbench.io.machine import Machine, Partition, spec_of

    cap = np.array([[c, g, 0, 0] for c, g in cap], dtype=np.int64)
    m = len(cap)
    machine = Machine(cap, spec_of(cap), "", tuple(f"n{i}" for i in range(m)), (frozenset(),) * m,
                      (Partition("p0", np.arange(m, dtype=np.int64), default=True),))
    r = np.array(rows, dtype=np.int64)
    n = len(r)
    table = jobs.from_columns(
        job_id=np.arange(1, n + 1), submit=r[:, 0], run=r[:, 1], time_req=r[:, 2], units=r[:, 3], unit_cores=r[:, 4],
        unit_gpus=r[:, 5], unit_mem=np.zeros(n, np.int64), req_nodes=r[:, 6], group=r[:, 7],
        partition=np.full(n, -1), constraint=np.full(n, -1), procs_req=r[:, 3] * r[:, 4])
    return table, machine, {"partitions": {"p0": 0}, "constraints": CONSTRAINTS}


# Priority-Weighted's attempts (N7) on fixed workloads, each found by replaying the oracle
# with one reading of "attempt" changed: a placement then differs.  Each row: nodes,
# jobs, weight rule, bound, the schedulers where it bites, and one job's known (start,
# nodes) under N7 (with the other reading in the comment).
_PW_CASES = {
    # At 11 job 1 (3 units with a GPU each) exceeds the 2 free GPUs: a failed attempt
    # lifts p_gpu to 2 before job 2 is placed, which then avoids the GPU nodes (n2, not
    # n3).  Old reading, no attempt beyond the free totals: n3.
    "beyond the free totals": (
        [(64, 1), (8, 2), (32, 0), (16, 2)],
        [(2, 24, 15, 3, 5, 1, -1, 2), (11, 19, 49, 3, 7, 1, -1, 3), (11, 9, 17, 1, 5, 0, -1, 2),
         (15, 6, 36, 3, 16, 0, -1, 1), (25, 5, 40, 2, 3, 1, -1, 3), (39, 6, 19, 2, 15, 0, -1, 2)],
        "text", 3, ("priority", "sfs", "sfs-standing"), (2, 11, [(2, 1)])),
    # Four jobs fill the machine at 0; the GPU jobs arriving at 1, 3 and 4 fail in passes
    # where nothing is free, so p_gpu stands higher when job 7 is placed at 9 (n2, not n0;
    # job 8 then starts at 18, not 19).  Old reading, no attempt in such a pass: n0.
    "a pass where nothing is free": (
        [(4, 1), (8, 2), (16, 0), (8, 0)],
        [(0, 9, 16, 1, 4, 1, 1, 1), (0, 7, 10, 1, 8, 2, 1, 2), (0, 9, 12, 1, 16, 0, 1, 1), (0, 14, 19, 1, 8, 0, 1, 3),
         (1, 13, 21, 2, 3, 1, -1, 2), (3, 21, 23, 2, 5, 1, -1, 3), (4, 19, 28, 1, 8, 1, -1, 1),
         (5, 10, 11, 2, 2, 0, -1, 1), (18, 13, 15, 1, 3, 1, -1, 3)],
        "text", 10, ("priority", "sfs", "sfs-standing"), (7, 9, [(2, 2)])),
    # A GPU job that fits now but would delay the reservation fails (N5); without that
    # attempt job 7 goes to n1 at 29 (and job 5 starts at 60, not 65).
    "a backfill refusal": (
        [(8, 1), (4, 2), (8, 0)],
        [(4, 33, 29, 3, 5, 1, -1, 1), (14, 15, 11, 2, 2, 0, -1, 2), (19, 28, 34, 1, 6, 0, -1, 3),
         (22, 30, 39, 3, 6, 0, -1, 3), (22, 29, 15, 3, 7, 1, -1, 2), (23, 36, 36, 1, 7, 1, -1, 2),
         (25, 29, 40, 2, 7, 1, -1, 3), (27, 36, 35, 1, 1, 1, -1, 3), (29, 31, 19, 3, 1, 0, -1, 3),
         (31, 38, 35, 3, 8, 1, -1, 1)],
        "authors", 10, ("priority",), (7, 29, [(0, 1)])),
    # The node order of an attempt uses p_k as they stand before it: with p_gpu lowered
    # first, job 2 goes to n1 and n3; and with no attempt beyond the free totals too.
    "p_k move after the node order": (
        [(64, 1), (8, 2), (32, 0), (16, 2)],
        [(11, 19, 16, 1, 50, 1, -1, 1), (15, 8, 13, 3, 1, 1, -1, 1), (22, 25, 46, 2, 5, 1, -1, 3),
         (31, 29, 33, 3, 1, 0, -1, 3), (35, 26, 29, 2, 2, 1, -1, 3), (38, 19, 14, 2, 5, 1, -1, 3)],
        "text", 3, ("priority",), (2, 23, [(3, 2)])),
}


@pytest.mark.parametrize(("name", "scheduler"), [(name, s) for name, c in _PW_CASES.items() for s in c[4]])
def test_priority_weighted_attempts_on_fixed_workloads(name, scheduler):
    """Every job a pass offers is an attempt, those beyond the free totals and those of a
    pass where nothing is free included, and so is a backfill refusal; p_k move after
    the attempt's node order (N7): the engine equals the oracle, and the job named gets
    the start and nodes that reading gives."""
    cap, rows, rule, bound, _, (j, start, nodes) = _PW_CASES[name]
    r, nv = _run_both(_fixed(cap, rows), scheduler, "priority-weighted", (1.0, 1.0, 1e4), 1, True,
                      weight_rule=rule, window=2, bound=bound)
    _same_starts_and_nodes(r, nv)
    assert (int(r.start[j]), _nodes_of(r, j)) == (start, nodes)


@pytest.mark.parametrize("scheduler", ["priority", "sfs", "sfs-standing"])
def test_priority_weighted_attempts_on_pool_jobs(scheduler):
    """Every job is single units of one type (cores or GPUs): the engine plans on totals
    (the pool variant) while the oracle places on nodes; N7's attempts (beyond the free
    totals, backfill refusals) give the same starts and nodes.  Before they were counted
    the pool variant placed some GPU jobs elsewhere."""
    rows = [(1, 4, 21, 1, 0, 1, -1, 2), (1, 24, 10, 19, 1, 0, -1, 3), (2, 13, 25, 19, 1, 0, -1, 2),
            (2, 20, 7, 2, 0, 1, -1, 1), (5, 8, 5, 1, 0, 1, -1, 3), (6, 17, 38, 18, 1, 0, -1, 1),
            (20, 8, 13, 4, 0, 1, -1, 2), (20, 13, 14, 4, 0, 1, -1, 1), (21, 20, 13, 7, 1, 0, -1, 1),
            (22, 20, 17, 19, 1, 0, -1, 2), (23, 6, 24, 10, 1, 0, -1, 3), (28, 22, 16, 2, 0, 1, -1, 2)]
    r, nv = _run_both(_fixed([(8, 2), (4, 2), (16, 0), (8, 1)], rows), scheduler, "priority-weighted",
                      (1.0, 1.0, 1e4), 1, True, weight_rule="text", window=2, bound=10)
    _same_starts_and_nodes(r, nv)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=clusters(), scheduler=st.sampled_from(["priority", "sfs", "sfs-standing"]), depth=st.integers(1, 3))
def test_the_plan_never_overdraws_a_node(case, scheduler, depth):
    """After every pass: running jobs (until their predicted ends) and reservations fit
    every node at every instant, and each reservation is on its job's eligible nodes."""
    _, nv = _run_both(case, scheduler, "ff", (1.0, 1.0, 5.0), depth, True)
    cap = case[1].capacity
    for now, holds, running in nv.plans:
        for job, alloc, _, _ in holds:
            assert {node for node, _ in alloc} <= job.elig, (now, job.job_id)
        # the plan's load only rises at now and at a reservation's start
        for s in {now} | {t for _, _, t, _ in holds}:
            used = np.zeros_like(cap)
            for job, _, pe in running:
                if pe > s:
                    for node, k in job.alloc:
                        used[node] += k * np.array(job.need.unit)
            for job, alloc, t, e in holds:
                if t <= s < e:
                    for node, k in alloc:
                        used[node] += k * np.array(job.need.unit)
            assert np.all(used <= cap), (now, s)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=clusters(), allocator=st.sampled_from(["ff", "bf"]))
def test_age_only_depth_one_is_easy_on_nodes(case, allocator):
    table, machine, meta = case
    easy = replay(table, machine, "easy", allocator, meta=meta)
    prio = replay(table, machine, "priority", allocator, meta=meta,
                  options={"priority_weights": "age=1,size=0,fairshare=0", "depth": 1})
    np.testing.assert_array_equal(prio.start, easy.start)
