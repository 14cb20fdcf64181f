"""Conservative backfilling: tiny self-checking traces with expected starts, worked out by
hand from the spec's "Conservative backfilling" section (each case says how)."""

from __future__ import annotations

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
