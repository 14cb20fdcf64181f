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
