"""Hypothesis strategies shared by the engine's, the planners' and the fair-share oracle tests.

Each test module picks its ranges through the parameters (the defaults are the engine
oracle's); a strategy used by one module only stays in that module.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from schedbench.io import jobs


@st.composite
def pool_traces(draw, max_procs=12, max_jobs=40, max_submit=60, min_size=-1, size_over=2, min_est=-1, max_est=40,
                groups=False):
    """(job table sorted by (submit, id), processors) of a pool: equal submit times,
    zero-length jobs, runs longer than the estimate, missing estimates and sizes the
    machine cannot hold (sizes from ``min_size`` to processors + ``size_over``);
    ``groups``: 1-3 SWF groups, ids in submit order (else permuted ids)."""
    procs = draw(st.integers(1, max_procs))
    n = draw(st.integers(1, max_jobs))
    submit = np.sort(np.array(draw(st.lists(st.integers(0, max_submit), min_size=n, max_size=n))))
    run = np.array(draw(st.lists(st.integers(-1, 30) | st.just(0), min_size=n, max_size=n)))
    size = np.array(draw(st.lists(st.integers(min_size, procs + size_over), min_size=n, max_size=n)))
    est = np.array(draw(st.lists(st.integers(min_est, max_est), min_size=n, max_size=n)))
    if groups:
        group = np.array(draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)))
        return jobs.from_columns(job_id=np.arange(1, n + 1), submit=submit, run=run, procs_req=size,
                                 procs_alloc=size, time_req=est, group=group), procs
    ids = np.array(draw(st.permutations(range(1, n + 1))))
    order = np.lexsort((ids, submit))
    table = jobs.from_columns(
        job_id=ids[order], submit=submit[order], run=run[order], procs_req=size[order],
        procs_alloc=size[order], time_req=est[order],
    )
    return table, procs


@st.composite
def node_traces(draw, zero_runs=False, min_est=1):
    """(nodes, rows) of a small heterogeneous machine: nodes (cores, GPUs, MICs, MiB);
    rows (submit, run, estimate, units, per-unit request, req_nodes) sorted by submit, with
    fixed node counts that divide the units; ``zero_runs``: more zero-length jobs."""
    m = draw(st.integers(1, 5))
    nodes = [
        (draw(st.integers(1, 8)), draw(st.integers(0, 2)), draw(st.integers(0, 2)), draw(st.sampled_from([0, 16, 32])))
        for _ in range(m)
    ]
    n = draw(st.integers(1, 25))
    rows = []
    runs = st.integers(-1, 25) | st.just(0) if zero_runs else st.integers(-1, 25)
    for _ in range(n):
        unit = (draw(st.integers(0, 3)), draw(st.integers(0, 1)), draw(st.integers(0, 1)), draw(st.sampled_from([0, 0, 8])))
        if sum(unit[:3]) == 0:
            unit = (1, unit[1], unit[2], unit[3])
        units = draw(st.integers(0, 6))
        req_nodes = -1
        if units > 0 and draw(st.booleans()):
            req_nodes = draw(st.sampled_from([d for d in range(1, units + 1) if units % d == 0]))
        rows.append((draw(st.integers(0, 40)), draw(runs), draw(st.integers(min_est, 30)), units, unit, req_nodes))
    rows.sort(key=lambda r: r[0])
    return nodes, rows


def node_case(nodes, rows):
    """(job table, machine) of a :func:`node_traces` example (job ids 1..n in row order)."""
    from schedbench.io import machine

    n = len(rows)
    table = jobs.from_columns(
        job_id=np.arange(1, n + 1), submit=[r[0] for r in rows], run=[r[1] for r in rows],
        estimate=[r[2] for r in rows], units=[r[3] for r in rows], unit_cores=[r[4][0] for r in rows],
        unit_gpus=[r[4][1] for r in rows], unit_mics=[r[4][2] for r in rows], unit_mem=[r[4][3] for r in rows],
        req_nodes=[r[5] for r in rows],
    )
    cap = np.array(nodes, dtype=np.int64)
    return table, machine.Machine(cap, machine.spec_of(cap))


FEATURES = ("a", "b", "gpu:x")
"""Node features of :func:`partitioned_machines` (``gpu:x`` stands for a typed GPU)."""
CONSTRAINTS = ["a", "b", "a|b", "a&b", "!a", "gpu:x"]
"""Constraint expressions the generated jobs pick from (``meta["constraints"]``)."""


@st.composite
def partitioned_machines(draw, min_nodes=2, max_nodes=5, max_cores=6, features=FEATURES, priorities=False):
    """(machine, partition count): min_nodes-max_nodes nodes of 1-max_cores cores, 0-2
    GPUs and 0 or 32 MiB, each with a random subset of ``features``, and one to three
    overlapping partitions p0, p1, ... (p0 the default); ``priorities``: each partition
    with a random PriorityJobFactor (1-3) and PriorityTier (1-2)."""
    from schedbench.io.machine import Machine, Partition, spec_of

    m = draw(st.integers(min_nodes, max_nodes))
    cap = np.array([[draw(st.integers(1, max_cores)), draw(st.integers(0, 2)), 0, draw(st.sampled_from([0, 32]))]
                    for _ in range(m)], dtype=np.int64)
    feats = tuple(frozenset(f for f in features if draw(st.booleans())) for _ in range(m))
    n_parts = draw(st.integers(1, 3))
    parts = []
    for p in range(n_parts):
        nodes = np.array(sorted(draw(st.sets(st.integers(0, m - 1), min_size=1, max_size=m))), dtype=np.int64)
        more = dict(job_factor=draw(st.integers(1, 3)), tier=draw(st.integers(1, 2))) if priorities else {}
        parts.append(Partition(f"p{p}", nodes, default=p == 0, **more))
    return Machine(cap, spec_of(cap), "", tuple(f"n{i}" for i in range(m)), feats, tuple(parts)), n_parts
