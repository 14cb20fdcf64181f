"""ebf-accasim (EASY backfilling as AccaSim runs it: reservation computed once, the blocked
job retried only from its reserved time, greedy backfill): hand-made cases with known
schedules.  The engine against the reference replay (tests/naive.py, R7c) job by job, on
the shared logs and on generated pools and nodes, is in tests/core/test_engine_oracle.py."""

from __future__ import annotations

import numpy as np
import pytest

from schedbench.engine import replay
from schedbench.io import jobs, machine


def _table(rows):
    """A job table of (submit, run, estimate, size) rows, ids 1..n."""
    return jobs.from_columns(
        job_id=np.arange(1, len(rows) + 1), submit=[r[0] for r in rows], run=[r[1] for r in rows],
        estimate=[r[2] for r in rows], units=[r[3] for r in rows],
    )


def _starts(nv) -> np.ndarray:
    return np.array([-1 if s is None else s for s in nv.start], dtype=np.int64)


def _both(rows, spec="1x(cores=4)"):
    table = _table(rows)
    mach = machine.from_spec(spec)
    return (replay.replay(table, mach, "easy", "ff").start, replay.replay(table, mach, "ebf-accasim", "ff").start)


@pytest.mark.parametrize("spec", ["1x(cores=4)", "4x(cores=1)"])
def test_backfill_does_not_protect_the_reservation(spec):
    # Job 1 holds three processors until 100; job 2 wants all four (blocked, reserved at
    # 100); job 3 (1 processor, 200 s) would delay it.  EASY keeps job 3 out; AccaSim's
    # backfill starts it, and job 2 waits until job 3 ends at 201.
    easy, ebf = _both([(0, 100, 100, 3), (0, 10, 10, 4), (1, 200, 200, 1)], spec)
    np.testing.assert_array_equal(easy, [0, 100, 110])
    np.testing.assert_array_equal(ebf, [0, 201, 1])


def test_reservation_is_not_revised_when_jobs_end_early():
    # Job 1 asks 100 s but ends at 10; job 2 (blocked at 1, reserved at 100) is not tried
    # before 100 although it fits at 10; job 3 arrives at 50 and starts at once.
    easy, ebf = _both([(0, 10, 100, 4), (1, 10, 10, 4), (50, 5, 5, 1)])
    np.testing.assert_array_equal(easy, [0, 10, 50])
    np.testing.assert_array_equal(ebf, [0, 100, 50])


def test_reserved_time_between_events_waits_for_the_next_event():
    # Reserved at 100, but job 3 keeps an event (its end at 150) pending: AccaSim's clock
    # jumps from 50 to 150, where job 2 is tried and starts.
    ebf = _both([(0, 10, 100, 4), (1, 10, 10, 4), (50, 100, 100, 1)])[1]
    np.testing.assert_array_equal(ebf, [0, 150, 50])


def test_reserved_time_in_the_past_with_no_event_left():
    # Job 1 outlives its request (ends at 300, asked 100): job 2's reservation (100) is
    # reached at job 1's end, where job 2 fits and starts.
    ebf = _both([(0, 300, 100, 4), (1, 10, 10, 4)])[1]
    np.testing.assert_array_equal(ebf, [0, 300])


def test_registered_with_every_allocator():
    # priority-weighted counts every allocation attempt: the backfill then offers every
    # queued job even with nothing free.  The five allocators share one compiled loop
    # (schedbench.allocators.dispatch), so the loop below compiles it once.
    rows = [(0, 100, 100, 3), (0, 10, 10, 4), (1, 200, 200, 1)]
    for allocator in ("ff", "bf", "balanced", "weighted", "priority-weighted"):
        r = replay.replay(_table(rows), machine.from_spec("4x(cores=1)"), "ebf-accasim", allocator)
        np.testing.assert_array_equal(r.start, [0, 201, 1], err_msg=allocator)
