"""`schedbench replay` as a user runs it."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import numpy as np
import polars as pl
import pytest

from repo_paths import KTH
from schedbench.cli.main import main
from schedbench.io import jobs

needs_kth = pytest.mark.skipif(not KTH.exists(), reason="shared KTH log not present")


@needs_kth
def test_replay_writes_the_three_files(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["replay", str(KTH), "-s", "easy", "-a", "bf", "--limit", "3000", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "easy+bf" in printed and "bounded slowdown" in printed
    frame = pl.read_parquet(out / "jobs.parquet")
    assert frame.height == 3000
    assert set(frame["status"].unique()) <= {"replayed", "dropped_no_runtime", "dropped_no_size", "dropped_too_wide"}
    assert (frame["scheduler"] == "easy").all() and (frame["allocator"] == "bf").all()
    ran = frame.filter(pl.col("status") == "replayed")
    assert (ran["end"] - ran["start"] == ran["run"]).all()
    assert (ran["wait"] == ran["start"] - ran["submit"]).all()
    timeline = pl.read_parquet(out / "timeline.parquet")
    assert timeline.columns == ["time", "queue", "running", "used_cores", "used_gpus", "used_mics", "used_mem"]
    assert timeline["time"].is_sorted() and (timeline["used_cores"] <= 100).all()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["label"] == "easy+bf" and summary["jobs_input"] == 3000
    for key in ("parse_s", "simulate_s", "write_s", "jobs_per_s"):
        assert summary["timings"][key] > 0
    assert summary["metrics"]["wait_mean"] == pytest.approx(ran["wait"].mean())


def test_replay_of_a_parquet_workload_with_drops(tmp_path):
    table = jobs.from_columns(
        submit=np.array([0, 1, 2, 3]), run=np.array([10, -1, 5, 5]),
        procs_req=np.array([4, 2, 0, 99]), time_req=np.array([20, 20, 20, 20]),
    )
    src = tmp_path / "w.parquet"
    jobs.write_parquet(table, src, {"machine": "2x(cores=4)"})
    out = tmp_path / "run"
    assert main(["replay", str(src), "-s", "fcfs", "-o", str(out), "-q"]) == 0
    frame = pl.read_parquet(out / "jobs.parquet")
    assert frame["status"].to_list() == ["replayed", "dropped_no_runtime", "dropped_no_size", "dropped_too_wide"]
    assert frame["start"].to_list() == [0, None, None, None]


def test_usage_and_data_errors(tmp_path, capsys):
    assert main(["replay", "nonexistent/trace.swf", "-o", str(tmp_path)]) == 1
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["replay", "x.swf", "--scheduler", "nope", "-o", str(tmp_path)])
    assert exc.value.code == 2
    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n2 0 0 x 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
    assert main(["replay", str(bad), "-o", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3" in err and "Traceback" not in err
    assert main(["replay", str(bad), "--machine", "4x(cores=)", "-o", str(tmp_path / "o")]) in (1, 2)
    gz = tmp_path / "cut.swf.gz"
    stream = gzip.compress(KTH.read_bytes()[:100] if KTH.exists() else b"1 2 3\n")
    gz.write_bytes(stream[:-8])  # without its CRC and length trailer: truncated
    assert main(["replay", str(gz), "-o", str(tmp_path / "o")]) == 1
    assert "gzip" in capsys.readouterr().err


@needs_kth
def test_console_script_runs(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "schedbench", "replay", str(KTH), "--limit", "500", "-o", str(tmp_path), "-q"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "summary.json").exists()


def test_replay_with_a_decision_period(tmp_path):
    table = jobs.from_columns(
        submit=np.array([3, 4, 11, 12]), run=np.array([10, 0, 5, 5]),
        procs_req=np.array([1, 1, 4, 1]), time_req=np.array([20, 20, 20, 20]),
    )
    src = tmp_path / "w.parquet"
    jobs.write_parquet(table, src, {"machine": "4x(cores=1)"})
    out = tmp_path / "run"
    assert main(["replay", str(src), "-s", "easy", "--period", "5", "-o", str(out), "-q"]) == 0
    frame = pl.read_parquet(out / "jobs.parquet")
    # decisions only at 3, 8, 13, 18: job 2 (submitted at 4) waits for the tick at 8;
    # job 3 (4 cores) starts at 13 when job 1 ends; job 4 waits for job 3 to end at 18
    assert frame["start"].to_list() == [3, 8, 13, 18]
    assert main(["replay", str(src), "--period", "-1", "-o", str(out), "-q"]) == 2


def test_output_and_node_file_errors_are_sentences(tmp_path, capsys):
    table = tmp_path / "t.parquet"
    jobs.write_parquet(jobs.from_columns(job_id=[1], submit=[0], run=[5], procs_req=[1], procs_alloc=[1],
                                         time_req=[5]), table)
    taken = tmp_path / "afile"
    taken.write_text("x")
    assert main(["replay", str(table), "-m", "1x(cores=2)", "-o", str(taken)]) == 1
    err = capsys.readouterr().err
    assert f"{taken}: exists and is not a folder" in err and "Errno" not in err
    assert main(["replay", str(table), "-m", "nodes_64", "-o", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "no such node file: nodes_64" in err and err.count("\n") == 1


def test_nothing_to_replay_is_an_error(tmp_path, capsys):
    empty = tmp_path / "empty.swf"
    empty.write_text("; MaxProcs: 4\n; MaxNodes: 4\n")
    assert main(["replay", str(empty), "-o", str(tmp_path / "a")]) == 1
    assert f"{empty}: no jobs to replay" in capsys.readouterr().err
    wide = tmp_path / "wide.swf"  # one job wider than the machine: written with its status, exit 1
    wide.write_text("; MaxProcs: 4\n1 0 0 5 -1 -1 -1 8 5 -1 1 1 1 -1 1 -1 -1 -1\n")
    out = tmp_path / "b"
    assert main(["replay", str(wide), "-o", str(out), "-q"]) == 1
    assert "none of its 1 jobs could be replayed" in capsys.readouterr().err
    assert pl.read_parquet(out / "jobs.parquet")["status"].to_list() == ["dropped_too_wide"]


def test_the_solver_line_says_how_many_decisions_a_bound_proved():
    from schedbench.cli.replay import _solver_line

    policy = {"solver": "cbc", "solves": 370, "statuses": {"optimal": 370}, "proved_by_bound": 365,
              "solve_s_median": 0.0, "solve_s_max": 0.004}
    assert _solver_line(policy) == ("cbc, 370 solves (optimal 370, 365 of them proved by a bound without a model), "
                                    "median 0.000 s, max 0.004 s")
    policy["proved_by_job_set"] = 3  # AUCSCHED: a few jobs' model solved, then a bound on the rest
    assert _solver_line(policy) == ("cbc, 370 solves (optimal 370, 365 of them proved by a bound without a model, "
                                    "3 by a job set's small model and a bound), median 0.000 s, max 0.004 s")
    del policy["proved_by_bound"]
    assert _solver_line(policy).startswith("cbc, 370 solves (optimal 370, 3 of them proved by a job set's small model")
    del policy["proved_by_job_set"]  # older summaries: no such keys
    assert _solver_line(policy) == "cbc, 370 solves (optimal 370), median 0.000 s, max 0.004 s"
