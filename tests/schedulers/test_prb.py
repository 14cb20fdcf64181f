"""PRB (Netti et al. 2.2): the expected wait of a job's queue, and what prb and prb-blocking do
with a job that does not fit, and a job a maintenance window keeps out.  PRB's schedules under
every allocator are checked against the oracle in tests/allocators/test_allocators.py."""

from __future__ import annotations

import numpy as np
import pytest

from schedbench.engine import replay
from schedbench.io import jobs, machine
from schedbench.io.jobs import expected_queue_wait
from schedbench.plan import site
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


def test_arrivals_only_pass_gives_the_weighted_window_the_prb_order():
    """Nodes of 3, 1, 1, 2 (+1 GPU), 1 and 3 (+2 GPUs) cores; every job asks 1 s.  Job 1
    (1 core, run 0) starts and ends at 0; jobs 2 (2 units of 3 cores), 3 (2 cores) and 4 (1
    core) arrive at 1, when nothing ended since the last pass, so only the arrivals are
    offered, in PRB order: 4, 3, 2 (equal waits, smaller demand first).  Under Weighted with
    the authors' rule, job 3's weights come from the queued jobs after it *in that order*
    (job 2): cores weigh more than GPUs, so job 3 takes node 3 and job 2 starts at 1 on
    nodes 0 and 5.  Found by hypothesis (seed 33): the arrivals-only pass left the core's
    queue in arrival order, job 3's window held only job 4 (started), the GPUs weighed
    more, job 3 took node 0, and job 2 waited until 2."""
    table = jobs.from_columns(job_id=np.arange(1, 5), submit=np.array([0, 1, 1, 1]), run=np.array([0, 0, 1, 0]),
                              estimate=np.ones(4, np.int64), units=np.array([1, 2, 1, 1]),
                              unit_cores=np.array([1, 3, 2, 1]))
    mach = machine.from_spec("1x(cores=3)+2x(cores=1)+1x(cores=2,gpus=1)+1x(cores=1)+1x(cores=3,gpus=2)")
    r = replay.replay(table, mach, "prb", "weighted", weight_rule="authors", window=100)
    assert r.start.tolist() == [0, 1, 1, 1]
    nodes = [sorted(r.alloc_log[r.alloc_ptr[j]: r.alloc_ptr[j] + r.nodes_used[j], 0].tolist()) for j in range(4)]
    assert nodes == [[1], [0, 5], [3], [1]]


@pytest.mark.parametrize("scheduler", ["prb", "prb-blocking"])
def test_a_job_kept_out_by_a_window_starts_at_its_end_with_nothing_else_happening(scheduler):
    """Two 1-core nodes, both down over [5, 20).  J1 (10 s) would run into the window:
    it waits; J2 (3 s) starts at 0 and ends at 3.  Nothing arrives or ends after that, so
    only the window's end can start J1 (a pass offering only arrivals never would)."""
    table = jobs.from_columns(submit=np.array([0, 0]), run=np.array([10, 3]), procs_req=np.array([1, 1]),
                              estimate=np.array([10, 3]))
    windows = site.parse('[[maintenance]]\nnodes = "all"\nfrom = 5\nto = 20\n')
    r = replay.replay(table, machine.from_spec("2x(cores=1)"), scheduler, "ff", site=windows)
    assert r.start.tolist() == [20, 0]
