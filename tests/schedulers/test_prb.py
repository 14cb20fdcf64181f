"""PRB (Netti et al. 2.2): the expected wait of a job's queue, and what prb and prb-blocking do
with a job that does not fit.  PRB's schedules under every allocator are checked against the
reference dispatcher in tests/allocators/test_allocators.py."""

from __future__ import annotations

import numpy as np
import pytest

from schedbench.engine import replay
from schedbench.io import jobs, machine
from schedbench.io.jobs import expected_queue_wait
from schedbench.workloads import eurora_like


def test_prb_expected_waits_from_eurora_queues_and_from_the_trace():
    table, meta = eurora_like.generate(100, np.random.default_rng(1), load=1.0)
    waits = expected_queue_wait(table, meta)
    codes = meta["queues"]
    for name, seconds in meta["queue_expected_wait"].items():
        if name in codes:
            assert (waits[table.queue == codes[name]] == max(1, seconds)).all()
    t = jobs.from_columns(submit=np.arange(4), run=np.ones(4), procs_req=np.ones(4),
                          queue=np.array([1, 1, 2, 3]), wait=np.array([10, 30, -1, 4]))
    assert expected_queue_wait(t).tolist() == [20, 20, 15, 4]


@pytest.mark.parametrize(("scheduler", "starts"), [("prb", [0, 100, 2]), ("prb-blocking", [0, 100, 100])])
def test_prb_skips_jobs_that_do_not_fit_and_prb_blocking_stops(scheduler, starts):
    """One node of 4 cores.  J0 (3 cores) runs 0-100.  At t=2 PRB's order is J1 (waited
    1 s, 2 cores: does not fit), then J2 (1 core).  prb skips J1 and starts J2 at 2;
    prb-blocking stops at J1, and J2 waits for it."""
    table = jobs.from_columns(submit=np.array([0, 1, 2]), run=np.array([100, 10, 10]), procs_req=np.array([3, 2, 1]),
                              estimate=np.array([100, 10, 10]))
    m = machine.from_spec("1x(cores=4)")
    assert replay.replay(table, m, scheduler, "ff").start.tolist() == starts
