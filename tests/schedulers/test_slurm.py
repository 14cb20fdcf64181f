"""``slurm`` (schedbench.schedulers.slurm) on hand-made traces with known starts."""

from __future__ import annotations

import numpy as np
import pytest

from schedbench.engine.replay import replay
from schedbench.io import jobs, machine

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
