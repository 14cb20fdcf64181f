"""Property: on machines with partitions and node features, no job of any jitted scheduler
x allocator ever runs on a node outside its partition and features, or above a node's
capacity, and every job kept for the replay starts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedbench.engine.replay import replay
from schedbench.io import jobs
from schedbench.plan.eligibility import node_classes
from schedbench.schema import Status
from strategies import CONSTRAINTS, partitioned_machines


@st.composite
def clusters(draw):
    """(table, machine, meta): 2-5 nodes of cores, GPUs and MiB, random features, two or
    three overlapping partitions, jobs in them with random constraints and shapes."""
    machine, n_parts = draw(partitioned_machines())
    n = draw(st.integers(1, 25))
    rows = []
    for _ in range(n):
        units = draw(st.integers(1, 4))
        req_nodes = draw(st.sampled_from([-1, 1, units])) if units > 1 else draw(st.sampled_from([-1, 1]))
        rows.append(dict(
            submit=draw(st.integers(0, 40)), run=draw(st.integers(0, 30)), time_req=draw(st.integers(1, 40)),
            units=units, unit_cores=draw(st.integers(1, 3)), unit_gpus=draw(st.integers(0, 1)),
            unit_mem=draw(st.sampled_from([0, 8])), req_nodes=req_nodes,
            partition=draw(st.integers(-1, n_parts - 1)), constraint=draw(st.integers(-1, len(CONSTRAINTS) - 1)),
        ))
    rows.sort(key=lambda r: r["submit"])
    cols = {k: np.array([r[k] for r in rows], dtype=np.int64) for k in rows[0]}
    table = jobs.from_columns(job_id=np.arange(1, n + 1), procs_req=cols["units"] * cols["unit_cores"], **cols)
    meta = {"partitions": {f"p{p}": p for p in range(n_parts)}, "constraints": CONSTRAINTS}
    return table, machine, meta


def check(table, machine, meta, r):
    classes = node_classes(table, meta, machine)
    usage = []  # (time, +1 start / -1 end, node, amounts)
    for j in np.flatnonzero(r.status == Status.REPLAYED):
        assert r.start[j] >= table.submit[j], j
        rows = r.alloc_log[r.alloc_ptr[j] : r.alloc_ptr[j] + r.nodes_used[j]]
        req = np.array([classes.table.unit_cores[j], classes.table.unit_gpus[j], 0,
                        max(classes.table.unit_mem[j], 0)])
        for node, count in rows:
            assert classes.elig[classes.job_class[j], node], (j, node)
            usage.append((r.start[j], 1, node, count * req))
            usage.append((r.end[j], -1, node, count * req))
    used = np.zeros_like(machine.capacity)
    for t, sign, node, amount in sorted(usage, key=lambda u: (u[0], u[1])):  # ends before starts
        used[node] += sign * amount
        assert np.all(used[node] <= machine.capacity[node]), (t, node)
    never = (r.status == Status.REPLAYED) & (r.start < 0)
    assert not never.any()
    assert not np.any((r.status == Status.NO_ELIGIBLE_NODES) & ~classes.empty)


PAIRS = [(s, a) for s in ("fcfs", "easy", "conservative", "prb", "priority", "sfs") for a in ("ff", "bf")] + [
    ("sjf", "balanced"), ("easy", "weighted"), ("easy", "priority-weighted")]


@pytest.mark.parametrize(("scheduler", "allocator"), PAIRS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=clusters())
def test_no_job_leaves_its_partition_and_features(case, scheduler, allocator):
    table, machine, meta = case
    check(table, machine, meta, replay(table, machine, scheduler, allocator, meta=meta))


@pytest.mark.parametrize("scheduler", ["backfill", "ipsched", "aucsched"])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=clusters())
def test_python_policies_keep_jobs_in_their_partition_and_features(case, scheduler):
    table, machine, meta = case
    check(table, machine, meta, replay(table, machine, scheduler, "ff", meta=meta))
