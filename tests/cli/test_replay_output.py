"""``schedbench replay -o DIR``: a folder that cannot be written is refused before the
replay starts (one line, exit 1), and a rerun into a run's folder replaces it whole."""

from __future__ import annotations

import os

import numpy as np
import polars as pl
import pytest

from schedbench.cli import replay as replay_cli
from schedbench.cli.main import main
from schedbench.io import jobs


@pytest.fixture
def trace(tmp_path):
    src = tmp_path / "w.parquet"
    table = jobs.from_columns(submit=np.array([0, 1]), run=np.array([10, 5]), procs_req=np.array([1, 1]),
                              time_req=np.array([10, 5]))
    jobs.write_parquet(table, src, {"machine": "2x(cores=1)"})
    return src


@pytest.fixture
def replays(monkeypatch):
    """The replays the command started (none must start when -o is refused)."""
    calls = []
    real = replay_cli.replay

    def counted(*args, **kwargs):
        calls.append(args[2:4])
        return real(*args, **kwargs)

    monkeypatch.setattr(replay_cli, "replay", counted)
    return calls


def _refused(argv, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("schedbench: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_an_output_under_a_file_is_refused_before_replaying(tmp_path, trace, replays, capsys):
    a_file = tmp_path / "afile"
    a_file.write_text("x")
    err = _refused(["replay", str(trace), "-s", "fcfs", "-o", str(a_file / "run")], capsys)
    assert str(a_file / "run") in err or str(a_file) in err
    assert replays == []
    err = _refused(["replay", str(trace), "-s", "fcfs", "-o", str(a_file)], capsys)
    assert "exists and is not a folder" in err and replays == []


def test_a_folder_of_other_files_is_refused_before_replaying(tmp_path, trace, replays, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("x")
    err = _refused(["replay", str(trace), "-s", "fcfs", "-o", str(mine)], capsys)
    assert f"{mine}: holds thesis.tex" in err and replays == []
    assert os.listdir(mine) == ["thesis.tex"]


def _unwritable_place() -> str | None:
    """A folder path this user cannot create (even as root: /sys refuses new entries)."""
    for target in ("/sys/schedbench-run", "/schedbench-run"):
        try:
            os.mkdir(target)
        except OSError:
            return target
        os.rmdir(target)
    return None


def test_an_unwritable_place_is_refused_before_replaying(trace, replays, capsys):
    target = _unwritable_place()
    if target is None:
        pytest.skip("no unwritable place on this machine")
    err = _refused(["replay", str(trace), "-s", "fcfs", "-o", target], capsys)
    assert target in err and replays == []


def test_a_rerun_replaces_the_run_folder(tmp_path, trace, replays):
    out = tmp_path / "run"
    assert main(["replay", str(trace), "-s", "fcfs", "-o", str(out), "-q"]) == 0
    pl.DataFrame({"x": [1]}).write_parquet(out / "decisions.parquet")  # as an ipsched run leaves
    assert main(["replay", str(trace), "-s", "easy", "-o", str(out), "-q"]) == 0
    assert sorted(os.listdir(out)) == ["allocations.parquet", "jobs.parquet", "summary.json", "timeline.parquet"]
    assert pl.read_parquet(out / "jobs.parquet")["scheduler"].unique().to_list() == ["easy"]
    assert len(replays) == 2
