"""A replay's folder is written as one unit: built beside the destination and renamed into
place, so that nothing of an older run survives and a failed write leaves the old run
whole (``schedbench.analysis.results.write_run``)."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from schedbench.analysis import results
from schedbench.engine.replay import replay
from schedbench.errors import DataError
from schedbench.io import jobs, machine

RUN_FILES = {"summary.json", "jobs.parquet", "allocations.parquet", "timeline.parquet"}


@pytest.fixture(scope="module")
def result():
    table = jobs.from_columns(submit=np.array([0, 1, 2]), run=np.array([10, 5, 5]), procs_req=np.array([2, 1, 2]),
                              time_req=np.array([10, 5, 5]))
    return replay(table, machine.from_spec("2x(cores=1)"), "fcfs")


def _files(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def test_a_new_run_leaves_nothing_of_the_old_one(tmp_path, result):
    out = tmp_path / "run"
    with_table = result._replace(tables={"decisions": pl.DataFrame({"time": [0]})})
    results.write_run(with_table, out)
    assert set(_files(out)) == RUN_FILES | {"decisions.parquet"}
    results.write_run(result, out)
    assert set(_files(out)) == RUN_FILES  # the stale decisions.parquet is gone
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no staging folder left beside it


def test_a_failed_write_leaves_the_old_run_intact(tmp_path, result, monkeypatch):
    out = tmp_path / "run"
    results.write_run(result, out)
    before = _files(out)
    written = []

    def write_then_fail(df, path, *args, **kwargs):
        if path.name == "timeline.parquet":  # after jobs.parquet was written: a crash mid-write
            raise OSError(28, "No space left on device", str(path))
        written.append(path.name)
        return real(df, path, *args, **kwargs)

    real = results.write_parquet
    monkeypatch.setattr(results, "write_parquet", write_then_fail)
    other = result._replace(scheduler="other")  # a run whose jobs.parquet differs
    with pytest.raises(OSError, match="No space"):
        results.write_run(other, out)
    assert written == ["jobs.parquet"]
    assert _files(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_an_interrupt_while_writing_leaves_the_old_run_intact(tmp_path, result, monkeypatch):
    out = tmp_path / "run"
    results.write_run(result, out)
    before = _files(out)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(results, "summarize", interrupted)
    with pytest.raises(KeyboardInterrupt):
        results.write_run(result._replace(scheduler="other"), out)
    assert _files(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_a_folder_that_cannot_be_replaced_is_named_as_given(tmp_path, result, monkeypatch):
    # an empty folder the check passes but the rename cannot replace (immutable, or another
    # user's in a sticky /tmp): the error named the hidden staging folder, .run.tmp-XXXXXXXX
    from schedbench.analysis import run_folder

    out = tmp_path / "run"
    out.mkdir()

    def refused(src, dst):
        raise PermissionError(1, "Operation not permitted", str(src))

    monkeypatch.setattr(run_folder.os, "rename", refused)
    with pytest.raises(PermissionError) as exc:
        results.write_run(result, out)
    assert exc.value.filename == str(out)
    assert [p.name for p in tmp_path.iterdir()] == ["run"] and not any(out.iterdir())


def test_a_new_or_empty_folder_is_written(tmp_path, result):
    results.write_run(result, tmp_path / "a" / "b" / "run")  # parents created
    assert set(_files(tmp_path / "a" / "b" / "run")) == RUN_FILES
    (tmp_path / "empty").mkdir()
    results.write_run(result, tmp_path / "empty")
    assert set(_files(tmp_path / "empty")) == RUN_FILES
    summary = json.loads((tmp_path / "empty" / "summary.json").read_text())
    assert summary["jobs_input"] == 3


def test_a_folder_holding_other_files_is_refused_untouched(tmp_path, result):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(DataError, match=r"mine: holds notes.txt, which a replay does not write"):
        results.write_run(result, mine)
    assert _files(mine) == {"notes.txt": b"keep me"}
    # a former run with a file of the user's beside it: refused too, nothing deleted
    out = tmp_path / "run"
    results.write_run(result, out)
    (out / "gantt.png").write_bytes(b"png")
    before = _files(out)
    with pytest.raises(DataError, match="gantt.png"):
        results.write_run(result, out)
    assert _files(out) == before


def test_same_run_same_bytes(tmp_path, result):
    results.write_run(result, tmp_path / "a")
    results.write_run(result, tmp_path / "b")
    for name in ("jobs.parquet", "allocations.parquet", "timeline.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_check_output_folder_refuses_what_cannot_be_written(tmp_path):
    a_file = tmp_path / "afile"
    a_file.write_text("x")
    with pytest.raises(FileExistsError):
        results.check_output_folder(a_file)
    with pytest.raises(NotADirectoryError):
        results.check_output_folder(a_file / "run")
    results.check_output_folder(tmp_path / "new" / "run")
    assert not (tmp_path / "new").exists()  # the check creates nothing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_writing_a_run_imports_no_pandas(tmp_path):
    # pyarrow imports pandas (0.1 s) to check the kind of an argument it is given; a
    # replay's command line never needs it
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from schedbench.analysis import results\n"
        "from schedbench.engine.replay import replay\n"
        "from schedbench.io import jobs, machine\n"
        "t = jobs.from_columns(submit=np.array([0, 1]), run=np.array([10, 5]), procs_req=np.array([2, 4]),\n"
        "                      time_req=np.array([10, 5]), wait=np.array([3, -1]))\n"
        "r = replay(t, machine.from_spec('2x(cores=1)'), 'fcfs')\n"
        f"results.write_run(r, {str(tmp_path / 'run')!r})\n"
        "assert 'pandas' not in sys.modules, 'pandas imported'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    frame = pl.read_parquet(tmp_path / "run" / "jobs.parquet")
    assert frame["start"].to_list()[1] is None  # too wide for the machine: not run, null
    assert frame["log_start"].to_list() == [3, None]


def test_a_symlinked_result_file_counts_as_foreign(tmp_path):
    # (a mutation run found both rules unguarded) a link is not a file a run wrote
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("{}")
    (tmp_path / "elsewhere.parquet").write_text("x")
    (out / "jobs.parquet").symlink_to(tmp_path / "elsewhere.parquet")
    with pytest.raises(DataError, match="jobs.parquet"):
        results.check_output_folder(out)


def test_result_files_without_a_summary_are_not_a_run_folder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "jobs.parquet").write_text("x")
    with pytest.raises(DataError, match="no summary.json"):
        results.check_output_folder(out)
