"""Which jobs a run leaves out, and why (docs/reference/replay-contract.md §2)."""

from __future__ import annotations

import numpy as np
import pytest

from schedbench.engine.replay import Status, replay
from schedbench.io import jobs, machine


@pytest.mark.parametrize("scheduler", ["fcfs", "easy", "conservative", "priority"])
def test_a_job_without_a_submit_time_is_left_out_and_the_rest_replay(scheduler):
    # sorted by (submit, id): the jobs whose submit is unknown (-1) or negative come first
    table = jobs.from_columns(
        job_id=np.array([2, 5, 1, 3, 4]), submit=np.array([-7, -1, 0, 4, 6]), run=np.array([10, 10, -1, 10, 10]),
        procs_req=np.array([1, 1, 1, 2, 2]),
    )
    result = replay(table, machine.parse("1x(cores=4)"), scheduler, "ff")
    assert result.status.tolist() == [Status.DROPPED_NO_SUBMIT, Status.DROPPED_NO_SUBMIT, Status.DROPPED_NO_RUNTIME,
                                      Status.REPLAYED, Status.REPLAYED]
    assert result.start.tolist() == [-1, -1, -1, 4, 6]


def test_no_submit_is_the_first_reason_tested():
    table = jobs.from_columns(submit=np.array([-1, 0]), run=np.array([-1, 5]), procs_req=np.array([0, 1]))
    result = replay(table, machine.parse("1x(cores=1)"), "easy", "ff")
    assert result.status.tolist() == [Status.DROPPED_NO_SUBMIT, Status.REPLAYED]


def test_no_eligible_node_is_reported_before_a_missing_run_time_or_size():
    # A job in a partition the machine lacks names its configuration mismatch whatever
    # else is wrong with it (only a missing submit comes first): a slurm.conf that lost a
    # partition shows in jobs_no_eligible_nodes in full.
    cap = np.array([[4, 0, 0, 0]], dtype=np.int64)
    mach = machine.Machine(cap, machine.spec_of(cap), "test", ("n0",), (frozenset(),),
                           (machine.Partition("cpu", np.array([0]), True),))
    table = jobs.from_columns(job_id=np.arange(1, 5), submit=np.array([-1, 0, 0, 0]), run=np.array([10, -1, 10, 10]),
                              procs_req=np.array([1, 1, 0, 1]), partition=np.array([1, 1, 1, 0]))
    result = replay(table, mach, "easy", "ff", meta={"partitions": {"cpu": 0, "gone": 1}})
    assert result.status.tolist() == [Status.DROPPED_NO_SUBMIT, Status.NO_ELIGIBLE_NODES, Status.NO_ELIGIBLE_NODES,
                                      Status.REPLAYED]
