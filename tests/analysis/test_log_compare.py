"""A replay set against the starts its log recorded (issue 26, item 5): jobs.parquet's
``log_start``, and the per-job deltas and the per-partition summary of
:mod:`schedbench.analysis.log_compare`, on a hand-made trace whose starts are worked out
by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from repo_paths import KTH
from schedbench.analysis import log_compare, results
from schedbench.engine.replay import replay
from schedbench.errors import DataError
from schedbench.io import jobs, machine, swf

# Two 1-core nodes, strict FCFS.  job (submit, run, procs, logged wait, partition):
#   1: 0, 100, 1, 0, cpu      -> replay starts it at 0 (log 0): delta 0
#   2: 10, 50, 2, 200, cpu    -> waits for job 1's core: 100 (log 210): delta -110
#   3: 20, 10, 1, -1, gpu     -> behind job 2 (FCFS): 150; the log has no start: not compared
#   4: 30, 10, 1, 130, gpu    -> beside job 3 at 150 (log 160): delta -10
#   5: 40, -1, 1, 5, gpu      -> no run time: dropped, so not replayed though the log started it
HAND = {
    "submit": [0, 10, 20, 30, 40], "run": [100, 50, 10, 10, -1], "procs_req": [1, 2, 1, 1, 1],
    "time_req": [100, 50, 10, 10, 10], "wait": [0, 200, -1, 130, 5], "partition": [1, 1, 2, 2, 2],
}
PARTITIONS = {"cpu": 1, "gpu": 2}


def hand_table(**changes) -> jobs.JobTable:
    """The HAND trace, with some columns replaced."""
    return jobs.from_columns(**{k: np.array(v) for k, v in (HAND | changes).items()})


def hand_run_with(tmp_path, **changes) -> Path:
    """The run folder of :func:`hand_table` replayed under fcfs on two 1-core nodes."""
    result = replay(hand_table(**changes), machine.from_spec("2x(cores=1)"), "fcfs", "ff")
    results.write_run(result, tmp_path / "run", extra={"trace": "hand", "partitions": PARTITIONS})
    return tmp_path / "run"


@pytest.fixture
def hand_run(tmp_path):
    return hand_run_with(tmp_path)


def test_log_start_is_submit_plus_the_logged_wait_or_null():
    result = replay(hand_table(), machine.from_spec("2x(cores=1)"), "fcfs", "ff")
    frame = results.jobs_frame(result)
    assert frame["start"].to_list() == [0, 100, 150, 150, None]  # the hand schedule above
    assert frame["log_start"].to_list() == [0, 210, None, 160, 45]
    assert frame["partition"].to_list() == [1, 1, 2, 2, 2]


def test_per_job_deltas_and_why_a_job_is_not_compared(hand_run):
    frame, _, _ = log_compare.compare(hand_run)
    assert frame["delta"].to_list() == [0, -110, None, -10, None]
    assert frame["compared"].to_list() == ["compared", "compared", "no_log_start", "compared", "not_replayed"]
    assert frame["partition"].to_list() == ["cpu", "cpu", "gpu", "gpu", "gpu"]
    assert frame["log_wait"].to_list() == [0, 200, None, 130, 5]


def test_summary_overall_and_per_partition(hand_run):
    _, table, _ = log_compare.compare(hand_run)
    rows = {r["partition"]: r for r in table.iter_rows(named=True)}
    assert table["partition"].to_list() == ["all", "cpu", "gpu"]
    whole = rows["all"]
    assert (whole["jobs"], whole["compared"], whole["no_log_start"], whole["not_replayed"]) == (5, 3, 1, 1)
    # |delta| = 0, 10, 110: median 10; p90 at rank 1.8 = 10 + 0.8 * 100
    assert whole["abs_delta_median"] == 10 and whole["abs_delta_p90"] == pytest.approx(90)
    assert whole["within_60s"] == pytest.approx(2 / 3) and whole["delta_mean"] == pytest.approx(-40)
    assert whole["log_wait_mean"] == pytest.approx(110) and whole["replay_wait_mean"] == pytest.approx(70)
    cpu = rows["cpu"]
    assert (cpu["jobs"], cpu["compared"], cpu["abs_delta_median"]) == (2, 2, 55)
    assert cpu["abs_delta_p90"] == pytest.approx(99) and cpu["within_60s"] == 0.5
    assert (cpu["log_wait_mean"], cpu["replay_wait_mean"]) == (100, 45)
    gpu = rows["gpu"]
    assert (gpu["jobs"], gpu["compared"], gpu["no_log_start"], gpu["not_replayed"]) == (3, 1, 1, 1)
    assert (gpu["abs_delta_median"], gpu["within_60s"], gpu["log_wait_mean"], gpu["replay_wait_mean"]) == (10, 1.0, 130, 120)


@pytest.mark.parametrize("job4_wait, delta", [(180, -60), (60, 60)])
def test_within_60s_includes_a_delta_of_exactly_60(tmp_path, job4_wait, delta):
    # job 4 still starts at 150 in the replay (the logged wait does not steer fcfs); logged
    # at 30 + wait: 210 -> delta -60, 90 -> delta +60.  |delta| = 0, 110, 60 and WITHIN_S is
    # inclusive ("this close ... (s, inclusive)"): 2 of the 3 compared jobs -> 2/3
    run = hand_run_with(tmp_path, wait=[0, 200, -1, job4_wait, 5])
    frame, table, _ = log_compare.compare(run)
    assert frame["delta"].to_list() == [0, -110, None, delta, None]
    whole = table.row(0, named=True)
    assert whole["partition"] == "all" and whole["compared"] == 3
    assert whole["within_60s"] == pytest.approx(2 / 3)
    # gpu: job 4 is its only compared job -> 1/1
    assert table.filter(pl.col("partition") == "gpu")["within_60s"].item() == 1.0


def test_a_job_without_a_log_start_that_was_not_replayed_is_counted_as_no_log_start(tmp_path):
    # job 5 (run -1: dropped) now has logged wait -1 too.  The module docstring: no_log_start
    # is "the log recorded no start (...; a job that never ran)"; not_replayed needs "the log
    # recorded a start".  So all: jobs 5, compared 3 (jobs 1, 2, 4), no_log_start 2 (3, 5),
    # not_replayed 0
    run = hand_run_with(tmp_path, wait=[0, 200, -1, 130, -1])
    frame, table, _ = log_compare.compare(run)
    assert frame["compared"].to_list() == ["compared", "compared", "no_log_start", "compared", "no_log_start"]
    whole = table.row(0, named=True)
    assert whole["partition"] == "all"
    assert (whole["jobs"], whole["compared"], whole["no_log_start"], whole["not_replayed"]) == (5, 3, 2, 0)


def test_partitions_are_codes_without_names(tmp_path):
    result = replay(hand_table(), machine.from_spec("2x(cores=1)"), "fcfs", "ff")
    results.write_run(result, tmp_path / "run")
    _, table, _ = log_compare.compare(tmp_path / "run")
    assert table["partition"].to_list() == ["all", "1", "2"]


def test_the_default_partition_is_named_when_the_run_names_partitions():
    codes = pl.Series([-1, 0, 3])
    assert log_compare.partition_names(codes, {"partitions": {"a": 0}}).to_list() == ["(default)", "a", "3"]


def test_a_partition_with_no_compared_job_has_null_statistics(tmp_path):
    cols = {k: np.array(v) for k, v in HAND.items()}
    cols["partition"] = np.array([1, 1, 2, 1, 3])  # partition 3: one dropped job; 2: one without a log start
    result = replay(jobs.from_columns(**cols), machine.from_spec("2x(cores=1)"), "fcfs", "ff")
    results.write_run(result, tmp_path / "run")
    _, table, _ = log_compare.compare(tmp_path / "run")
    for code in ("2", "3"):
        row = table.filter(pl.col("partition") == code).row(0, named=True)
        assert row["compared"] == 0
        assert row["within_60s"] is None and row["abs_delta_median"] is None and row["log_wait_mean"] is None


def test_files_written_are_reproducible_and_keep_the_folder_a_run_folder(hand_run):
    from schedbench.analysis.run_folder import check_output_folder

    names = (log_compare.JOBS_FILE, log_compare.SUMMARY_FILE)
    written = []
    for _ in range(2):
        frame, table, _summary = log_compare.compare(hand_run)
        log_compare.write(hand_run, frame, table)
        written.append([(hand_run / n).read_bytes() for n in names])
    assert written[0] == written[1]
    assert pl.read_parquet(hand_run / log_compare.JOBS_FILE).height == 5  # every input job
    check_output_folder(hand_run)  # a later replay may still replace the folder


def test_errors_are_one_line_data_errors(tmp_path, hand_run):
    with pytest.raises(DataError, match="no such folder"):
        log_compare.compare(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="not a replay output folder"):
        log_compare.compare(tmp_path / "empty")
    (tmp_path / "afile").write_text("x")  # was 'no such folder'
    with pytest.raises(DataError, match="afile: a file, not a folder"):
        log_compare.compare(tmp_path / "afile")
    pl.read_parquet(hand_run / "jobs.parquet").drop("log_start").write_parquet(hand_run / "jobs.parquet")
    with pytest.raises(DataError, match="no log_start column"):
        log_compare.compare(hand_run)


def test_damaged_pages_behind_a_whole_footer_are_a_data_error(hand_run):
    # the schema read well, the pages did not: polars' ComputeError was an internal error
    path = hand_run / "jobs.parquet"
    data = bytearray(path.read_bytes())
    data[4 : len(data) // 2] = b"\x55" * (len(data) // 2 - 4)
    path.write_bytes(bytes(data))
    assert pl.read_parquet_schema(path)
    with pytest.raises(DataError, match=f"{re.escape(str(path))}: unreadable"):
        log_compare.compare(hand_run)


def test_a_log_without_any_start_is_refused(tmp_path):
    cols = {k: np.array(v) for k, v in HAND.items()}
    cols["wait"] = np.full(5, -1)
    results.write_run(replay(jobs.from_columns(**cols), machine.from_spec("2x(cores=1)"), "fcfs", "ff"),
                      tmp_path / "run", extra={"trace": "w.swf"})
    with pytest.raises(DataError, match="w.swf recorded no start times"):
        log_compare.compare(tmp_path / "run")


def test_swf_waits_become_log_starts(tmp_path):
    path = tmp_path / "w.swf"
    path.write_text("; MaxProcs: 4\n"
                    "1 0 7 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n"
                    "2 5 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 3 -1 -1\n")
    table, _ = swf.read(path)
    frame = results.jobs_frame(replay(table, machine.from_spec("4x(cores=1)"), "fcfs", "ff"))
    assert frame["log_start"].to_list() == [7, None]
    assert frame["partition"].to_list() == [-1, 3]


@pytest.mark.skipif(not KTH.is_file(), reason="the shared KTH log is not beside the repository")
def test_kth_log_starts_and_deltas(tmp_path):
    table, _ = swf.read(KTH)
    result = replay(table, machine.from_spec("100x(cores=1)"), "easy", "ff")
    results.write_run(result, tmp_path / "kth", extra={"trace": str(KTH)})
    frame, summary_table, summary = log_compare.compare(tmp_path / "kth")
    logged = table.wait >= 0
    assert frame["log_start"].to_numpy()[logged].tolist() == (table.submit + table.wait)[logged].tolist()
    assert frame["log_start"].null_count() == int((~logged).sum())
    started = result.start >= 0
    both = logged & started
    assert frame["delta"].drop_nulls().to_numpy().tolist() == (result.start - table.submit - table.wait)[both].tolist()
    whole = summary_table.row(0, named=True)
    assert whole["compared"] + whole["no_log_start"] + whole["not_replayed"] == whole["jobs"] == table.n_jobs
    gap = np.abs((result.start - table.submit - table.wait)[both])
    assert whole["abs_delta_median"] == pytest.approx(float(np.median(gap)))
    assert whole["abs_delta_p90"] == pytest.approx(float(np.quantile(gap, 0.9)))
    assert whole["within_60s"] == pytest.approx(float(np.mean(gap <= 60)))
    assert json.loads((tmp_path / "kth" / "summary.json").read_text())["label"] == summary["label"]
