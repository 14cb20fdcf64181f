"""summary.json is strict JSON (issue 31, item 5): a non-finite number is written as null,
never as NaN or Infinity, which most JSON parsers refuse."""

from __future__ import annotations

import json

import numpy as np

from schedbench.analysis.results import write_run
from schedbench.engine.replay import replay
from schedbench.io import jobs, machine


def _refuse(constant):
    raise AssertionError(f"{constant} is not JSON")


def test_non_finite_numbers_are_written_as_null(tmp_path):
    table = jobs.from_columns(submit=np.array([0, 5]), run=np.array([10, 10]), procs_req=np.array([1, 1]))
    result = replay(table, machine.parse("1x(cores=2)"), "easy", "ff")
    extra = {"nan": float("nan"), "inf": [float("inf"), -float("inf"), 1.5], "nested": {"x": np.float64("nan")}}
    summary = write_run(result, tmp_path, extra=extra)
    written = json.loads((tmp_path / "summary.json").read_text(), parse_constant=_refuse)
    assert written["nan"] is None and written["inf"] == [None, None, 1.5] and written["nested"] == {"x": None}
    assert summary["nan"] is None  # what write_run returns is what it wrote


def test_worst_account_wait_mean_is_the_largest_account_mean_wait(tmp_path):
    # test_fairness_metrics_by_hand's trace under fcfs, 2 cores: group 1's 2-core job runs
    # 0..3600, group 2's 1-core job waits for it: account mean waits 0 and 3600.  The summary's
    # worst_account_wait_mean is "the largest per-account mean wait" (docs/reference/outputs.md)
    table = jobs.from_columns(job_id=np.array([1, 2]), submit=np.array([0, 0]), run=np.array([3600, 3600]),
                              estimate=np.array([3600, 3600]), procs_req=np.array([2, 1]), group=np.array([1, 2]))
    summary = write_run(replay(table, machine.parse("1x(cores=2)"), "fcfs", "ff"), tmp_path)
    accounts = summary["fairness"]["accounts"]
    assert (accounts["1"]["wait_mean"], accounts["2"]["wait_mean"]) == (0.0, 3600.0)
    assert summary["metrics"]["worst_account_wait_mean"] == 3600.0
