"""Conservative backfilling: tiny self-checking traces with expected starts, worked out by
hand from the spec's "Conservative backfilling" section (each case says how)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from schedbench.engine.replay import replay
from schedbench.errors import UsageError
from schedbench.io import jobs, machine


def _pool(rows, procs=10, predictor="requested"):
    """rows: (submit, size, run, estimate); a pool of ``procs`` one-core nodes."""
    submit, size, run, est = (np.array(c, dtype=np.int64) for c in zip(*rows, strict=True))
    table = jobs.from_columns(submit=submit, run=run, estimate=est, units=size, unit_cores=np.ones_like(size),
                              job_id=np.arange(1, len(rows) + 1))
    res = replay(table, machine.from_spec(f"{procs}x(cores=1)"), "conservative", "ff", predictor)
    return res.start.tolist()


def test_release_compresses_and_small_jobs_backfill():
    # A (6 procs, booked [0, 20)) runs; B (6) is booked at 20; C (4) fits beside A at 2;
    # A ends early at 10: a release, B moves to 10.
    assert _pool([(0, 6, 10, 20), (1, 6, 5, 5), (2, 4, 5, 5)]) == [0, 10, 2]


def test_exact_predictions_never_release():
    # --predictor actual: A is booked [0, 10), B at 10 from the start, C at 2.
    assert _pool([(0, 6, 10, 20), (1, 6, 5, 5), (2, 4, 5, 5)], predictor="actual") == [0, 10, 2]


def test_expiry_doubles_the_elapsed_time_and_rebooks_the_queue():
    # A (10 procs, est 10) runs 30 s: at 10 its booking expires (start + est = now) and is
    # extended to 10 + 10 = 20, B is rebooked at 20; at 20 to 20 + 20 = 40, B at 40; A ends
    # at 30 (a release): B moves to 30.
    assert _pool([(0, 10, 30, 10), (1, 10, 5, 5)]) == [0, 30]


def test_zero_length_job_releases_at_its_start_instant():
    # A (4 procs, run 0, est 10) and B (4, est 5) arrive at 0: A booked [0, 10), B at 10;
    # A starts and ends at 0, a release: another pass at 0 moves B to 0.
    assert _pool([(0, 4, 0, 10), (0, 4, 5, 5)], procs=4) == [0, 0]


def test_equal_submit_times_book_in_id_order():
    # three 6-proc jobs at once on 10: booked [0,10), [10,20), [20,30) in id order.
    assert _pool([(0, 6, 10, 10), (0, 6, 10, 10), (0, 6, 10, 10)]) == [0, 10, 20]


def _nodes(rows, spec, allocator="ff"):
    """rows: (submit, units, cores, gpus, run, estimate)."""
    cols = [np.array(c, dtype=np.int64) for c in zip(*rows, strict=True)]
    table = jobs.from_columns(submit=cols[0], units=cols[1], unit_cores=cols[2], unit_gpus=cols[3], run=cols[4],
                              estimate=cols[5], job_id=np.arange(1, len(rows) + 1))
    return replay(table, machine.from_spec(spec), "conservative", allocator)


def test_bookings_hold_nodes():
    # 2 nodes of (4 cores, 1 GPU).  A: 1 unit (4c, 1g) on node 0, [0, 10).  B: 2 units
    # (4c, 1g): at 0 only node 1 is free, next candidate 10 (A's end): [10, 15) on both.
    # C at 1: 1 unit of 2 cores for 20 s: every window before 15 meets A or B on both
    # nodes; candidate 15 (B's end) fits, on node 0 (first fit).
    res = _nodes([(0, 1, 4, 1, 10, 10), (0, 2, 4, 1, 5, 5), (1, 1, 2, 0, 20, 20)], "2x(cores=4,gpus=1)")
    assert res.start.tolist() == [0, 10, 15]
    nodes = [res.alloc_log[res.alloc_ptr[j] : res.alloc_ptr[j] + res.nodes_used[j], 0].tolist() for j in range(3)]
    assert nodes == [[0], [0, 1], [0]]


def test_nodes_need_an_allocator_with_a_planning_order():
    with pytest.raises(UsageError, match="use ff, bf, balanced or keller"):
        _nodes([(0, 1, 4, 1, 10, 10), (0, 1, 4, 1, 10, 10)], "1x(cores=4,gpus=1)", allocator="weighted")


# Compression on nodes (issue 27): a try first bounds each node by its most free amount
# before the booking; the nodes full from now until the booking are marked and left out
# of the search (known from their prefix minima's full-until instant, without a search),
# and the search reads only the others.  Four nodes of 2 cores, units of 2 cores (whole
# nodes, so conservative plans on nodes).


def test_compression_rejects_a_try_on_the_marked_nodes_alone():
    # A: nodes 0-1 [0, 100).  B: nodes 2-3, estimate 50, ends at 10 (a release).  C (3
    # nodes, 20 s) is booked at 100; D (2 nodes, 30 s) at 50 on nodes 2-3.  At 10: for C
    # (booked at 100) nodes 0-1 are full until 100, so marked; nodes 2-3 host 2 of its 3:
    # no search, C stays.  For D (booked at 50) nodes 0-1 are marked too; nodes 2-3 take
    # it at 10.
    res = _nodes([(0, 2, 2, 0, 100, 100), (0, 2, 2, 0, 10, 50), (1, 3, 2, 0, 20, 20), (2, 2, 2, 0, 30, 30)],
                 "4x(cores=2)")
    assert res.start.tolist() == [0, 0, 100, 10]


def test_compression_searches_the_nodes_that_differ_from_the_marked_ones():
    # As above, but node 1 is busy only until 30 (A2): C is booked at 50 on nodes 1-3, D
    # at 70 on nodes 1-2.  At 10 (B ends): for C, node 0 (full until 100) is marked, node
    # 1 (full until 30) is not: candidate 10 fails (node 1 busy), 30 (A2's end) fits on
    # nodes 1-3: C moves to 30.  For D (booked at 70), node 0 is marked; 10 fails ([10,
    # 40) meets C on nodes 2-3), 30 fails (C), 50 fits: D moves to 50.
    res = _nodes([(0, 1, 2, 0, 100, 100), (0, 1, 2, 0, 30, 30), (0, 2, 2, 0, 10, 50), (1, 3, 2, 0, 20, 20),
                  (2, 2, 2, 0, 30, 30)], "4x(cores=2)")
    assert res.start.tolist() == [0, 0, 0, 30, 50]
    nodes = [res.alloc_log[res.alloc_ptr[j] : res.alloc_ptr[j] + res.nodes_used[j], 0].tolist() for j in range(5)]
    assert nodes[3:] == [[1, 2, 3], [1, 2]]


@functools.cache
def _npmf_caller():
    """A jitted caller of _build_npmf (the kernel has no Python entry), compiled once: a
    caller defined per call compiled 200 times in the random-vector test (15 s)."""
    import numba

    from schedbench.schedulers.conservative.pruning import _build_npmf

    @numba.njit
    def call(slots, meta, out, now, cap):
        _build_npmf(slots, meta, out, now, cap)
        return out[0, 2]

    return call


def _full_until(rows, now, cap):
    """_build_npmf's full-until instant of a used vector with ``rows`` (start, stop,
    items)."""
    from schedbench.plan.rusv import M_N

    call = _npmf_caller()
    slots = np.zeros((max(len(rows), 1) + 1, 3), dtype=np.int64)
    slots[: len(rows)] = np.array(rows, dtype=np.int64).reshape(-1, 3)
    meta = np.zeros(5, dtype=np.int64)
    meta[M_N] = len(rows)
    return call(slots, meta, np.zeros_like(slots), now, cap)


@pytest.mark.parametrize(("rows", "now", "expected"), [
    ([(0, 10, 2), (10, 20, 2), (20, 30, 1)], 5, 20),  # full over two rows, then not
    ([(0, 10, 2), (12, 20, 2)], 5, 10),  # a gap (nothing used) ends it
    ([(6, 10, 2)], 5, 5),  # a gap at now: not full at now
    ([(0, 10, 1)], 5, 5),  # used below its capacity at now
    ([(0, 10, 2), (10, 20, 2)], 5, 20),  # full to the vector's end
    ([(0, 10, 2)], 25, 25),  # no row after now
])
def test_full_until_of_a_node_vector(rows, now, expected):
    assert _full_until(rows, now, 2) == expected


def test_full_until_is_the_end_of_the_full_run_on_random_vectors():
    rng = np.random.default_rng(5)
    for _ in range(200):
        stops = np.sort(rng.choice(np.arange(1, 40), size=rng.integers(1, 8), replace=False))
        starts = np.concatenate([[0], stops[:-1]]) + rng.integers(0, 2, size=stops.size)  # some gaps
        keep = starts < stops
        rows = [(int(a), int(b), int(rng.integers(0, 3))) for a, b in zip(starts[keep], stops[keep], strict=True)]
        rows = [r for r in rows if r[2] > 0]
        now = int(rng.integers(0, 40))
        used = np.zeros(41, dtype=np.int64)
        for a, b, items in rows:
            used[a:b] = items
        x = now
        while x < 41 and used[x] == 2:
            x += 1
        assert _full_until(rows, now, 2) == (x if x > now else now), (rows, now)
