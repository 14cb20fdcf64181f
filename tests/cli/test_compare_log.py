"""``schedbench compare-log DIR`` and ``schedbench replay ... --compare-log`` (issue 26,
item 5): the table printed, the files written, and one clear line for a folder that cannot
be compared."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from repo_paths import TINY
from schedbench.cli.main import main
from schedbench.io import jobs

# the hand-made trace of tests/analysis/test_log_compare.py, as a Parquet job table whose
# metadata names its partitions (as the sacct reader's does)
HAND = {
    "submit": [0, 10, 20, 30, 40], "run": [100, 50, 10, 10, -1], "procs_req": [1, 2, 1, 1, 1],
    "time_req": [100, 50, 10, 10, 10], "wait": [0, 200, -1, 130, 5], "partition": [1, 1, 2, 2, 2],
}


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "hand.parquet"
    table = jobs.from_columns(**{k: np.array(v) for k, v in HAND.items()})
    jobs.write_parquet(table, path, {"machine": "2x(cores=1)", "partitions": {"cpu": 1, "gpu": 2}})
    return path


def _summary_rows(run) -> dict:
    table = pl.read_parquet(run / "log_compare_summary.parquet")
    return {r["partition"]: r for r in table.iter_rows(named=True)}


def test_replay_then_compare_log(trace, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["replay", str(trace), "-s", "fcfs", "-q", "-o", str(run)]) == 0
    assert json.loads((run / "summary.json").read_text())["partitions"] == {"cpu": 1, "gpu": 2}
    capsys.readouterr()
    assert main(["compare-log", str(run)]) == 0
    out = capsys.readouterr().out
    assert "| all | 5 | 3 | 1 | 1 | 10 | 90 | 66.7% | -40 | 110 | 70 |" in out
    assert "| cpu | 2 | 2 | 0 | 0 | 55 | 99 | 50.0% | -55 | 100 | 45 |" in out
    assert "| gpu | 3 | 1 | 1 | 1 | 10 | 10 | 100.0% | -10 | 130 | 120 |" in out
    assert _summary_rows(run)["gpu"]["not_replayed"] == 1
    assert pl.read_parquet(run / "log_compare.parquet")["delta"].to_list() == [0, -110, None, -10, None]


def test_the_replay_flag_compares_after_the_replay(trace, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["replay", str(trace), "-s", "fcfs", "-o", str(run), "--compare-log"]) == 0
    out = capsys.readouterr().out
    assert "wait mean" in out and "| all | 5 | 3 |" in out
    assert _summary_rows(run)["all"]["compared"] == 3
    assert main(["replay", str(trace), "-s", "fcfs", "-q", "-o", str(run)]) == 0  # the folder stays replaceable
    assert not (run / "log_compare.parquet").exists()  # and a new replay leaves no stale comparison


def test_quiet_writes_and_prints_nothing(trace, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["replay", str(trace), "-s", "fcfs", "-q", "-o", str(run), "--compare-log"]) == 0
    assert capsys.readouterr().out == ""
    assert (run / "log_compare_summary.parquet").is_file()


@pytest.mark.parametrize("case", ["missing", "not_a_run", "no_log_starts"])
def test_a_folder_that_cannot_be_compared_is_one_line_exit_1(case, tmp_path, capsys):
    run = tmp_path / "run"
    if case == "not_a_run":
        run.mkdir()
        (run / "notes.txt").write_text("x")
    elif case == "no_log_starts":  # tiny.swf records no waits
        assert main(["replay", str(TINY), "-q", "-o", str(run)]) == 0
    capsys.readouterr()
    assert main(["compare-log", str(run)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("schedbench: error:") and str(run) in err[0]
    expected = {"missing": "no such folder", "not_a_run": "not a replay output folder",
                "no_log_starts": "recorded no start times"}[case]
    assert expected in err[0]


def test_the_replay_flag_on_a_log_without_starts_fails_after_writing_the_run(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["replay", str(TINY), "-q", "-o", str(run), "--compare-log"]) == 1
    assert "recorded no start times" in capsys.readouterr().err
    assert (run / "jobs.parquet").is_file()


def test_compare_log_needs_a_folder(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["compare-log"])
    assert exc.value.code == 2
