"""``schedbench compare`` and ``schedbench gantt`` (issue 14, item 6)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from repo_paths import ROOT
from schedbench.cli.main import main

TINY = str(ROOT / "traces" / "tiny.swf")


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("views")
    for s in ("easy", "fcfs"):
        assert main(["replay", TINY, "-s", s, "-q", "-o", str(root / s)]) == 0
    return root


def test_compare_marks_the_best_value_of_each_row(two_runs, capsys, tmp_path):
    out = tmp_path / "waits.png"
    assert main(["compare", str(two_runs / "easy"), str(two_runs / "fcfs"), "-o", str(out)]) == 0
    table = capsys.readouterr().out
    assert "easy (easy+ff)" in table and "fcfs (fcfs+ff)" in table
    waits = {s: json.loads((two_runs / s / "summary.json").read_text())["metrics"]["wait_mean"] for s in ("easy", "fcfs")}
    row = next(line for line in table.splitlines() if line.startswith("| wait mean"))
    best = min(waits.values())
    if waits["easy"] != waits["fcfs"]:
        assert f"**{best:,.0f}**" in row
    assert out.stat().st_size > 1000


# Two single-core nodes.  EASY reserves the two-node job 2 the first end (t=100) and
# backfills nothing past it; PRB skips job 2 and starts jobs 3 and 4 on the free node,
# so job 2 waits for both: waits EASY 0, 99, 108, 20; PRB 0, 199, 0, 10.
STARVE = """; MaxProcs: 2
; MaxNodes: 2
1   0 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1
2   1 -1  10 2 -1 -1 2  10 -1 1 2 1 -1 1 -1 -1 -1
3   2 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1
4  90 -1 100 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1
"""


def test_compare_shows_the_longest_and_p99_wait(tmp_path, capsys):
    trace = tmp_path / "starve.swf"
    trace.write_text(STARVE)
    for s in ("easy", "prb"):
        assert main(["replay", str(trace), "-s", s, "-q", "-o", str(tmp_path / s)]) == 0
    metrics = {s: json.loads((tmp_path / s / "summary.json").read_text())["metrics"] for s in ("easy", "prb")}
    assert (metrics["easy"]["wait_max"], metrics["prb"]["wait_max"]) == (108.0, 199.0)
    # sorted waits, h = 3 x 0.99 = 2.97: EASY 99 + 0.97 x 9, PRB 10 + 0.97 x 189
    assert metrics["easy"]["wait_p99"] == pytest.approx(107.73)
    assert metrics["prb"]["wait_p99"] == pytest.approx(193.33)
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "easy"), str(tmp_path / "prb")]) == 0
    rows = {line.split(" (")[0].strip("| "): line for line in capsys.readouterr().out.splitlines()}
    assert rows["wait max"].endswith("| **108** | 199 |")
    assert rows["wait p99"].endswith("| **108** | 193 |")
    assert rows["wait mean"].endswith("| 57 | **52** |")  # PRB's mean is the better one


@pytest.mark.parametrize("colour", ["user", "account", "job", "decision"])
def test_gantt_draws_every_job_in_the_window(two_runs, capsys, tmp_path, colour):
    out = tmp_path / "g.png"
    assert main(["gantt", str(two_runs / "easy"), "--colour", colour, "-o", str(out)]) == 0
    assert "60 jobs drawn" in capsys.readouterr().out
    assert out.stat().st_size > 1000


def _large_run(root, n_jobs: int = 80_000):
    """A replay output folder as a 77,000-job log gives, written directly (no replay): one
    job after the other on 128 nodes, each on two blocks (nodes k and k + 64)."""
    import polars as pl

    root.mkdir()
    k = np.arange(n_jobs, dtype=np.int64)
    start = k * 30
    pl.DataFrame({"job_id": k + 1, "submit": start, "status": ["replayed"] * n_jobs, "start": start,
                  "end": start + 600, "user": k % 7, "group": k % 3}).write_parquet(root / "jobs.parquet")
    node = np.stack([k % 64, k % 64 + 64], axis=1).ravel().astype(np.int32)
    pl.DataFrame({"job_id": np.repeat(k + 1, 2), "node": node, "units": np.ones(2 * n_jobs, np.int32)}
                 ).write_parquet(root / "allocations.parquet")
    (root / "summary.json").write_text(json.dumps({"label": "easy+ff", "machine": "128x(cores=1)"}))
    return root


def test_gantt_refuses_a_whole_large_log_with_a_window_that_fits(tmp_path, capsys):
    import time

    run = _large_run(tmp_path / "large")
    t0 = time.perf_counter()
    assert main(["gantt", str(run), "-o", str(tmp_path / "g.png")]) == 2
    assert time.perf_counter() - t0 < 30  # the drawing took 20 minutes on such a log
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "160,000 rectangles (80,000 jobs)" in err and not (tmp_path / "g.png").exists()
    window = re.search(r"--from (\d+) --to (\d+)", err)
    assert window, err
    # the hinted window is drawn: 20,000 rectangles hold 10,000 jobs of 30 s apart
    assert main(["gantt", str(run), "--from", window[1], "--to", window[2], "-o", str(tmp_path / "g.png")]) == 0
    drawn = int(re.search(r"([\d,]+) jobs drawn", capsys.readouterr().out)[1].replace(",", ""))
    assert 9_900 <= drawn <= 10_000 and (tmp_path / "g.png").stat().st_size > 1000


def test_gantt_limit_is_an_option(two_runs, capsys, tmp_path):
    out = tmp_path / "g.png"
    assert main(["gantt", str(two_runs / "easy"), "--max-rectangles", "10", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "at most 10)" in err and not out.exists()
    window = re.search(r"--from (\d+) --to (\d+)", err)
    assert main(["gantt", str(two_runs / "easy"), "--max-rectangles", "10", "--from", window[1], "--to", window[2],
                 "-o", str(out)]) == 0
    with pytest.raises(SystemExit) as exc:  # argparse's usage error
        main(["gantt", str(two_runs / "easy"), "--max-rectangles", "0", "-o", str(out)])
    assert exc.value.code == 2


def test_views_fail_in_one_line(two_runs, capsys, tmp_path):
    assert main(["gantt", str(tmp_path / "missing"), "-o", str(tmp_path / "g.png")]) == 1
    assert "not a replay output folder" in capsys.readouterr().err
    assert main(["gantt", str(two_runs / "easy"), "--from", "100", "--to", "50", "-o", str(tmp_path / "g.png")]) == 2
    assert main(["compare", str(tmp_path / "missing")]) == 1


def _broken_copy(run, tmp_path, name: str):
    """A copy of the run folder ``run`` whose file ``name`` is cut to its first 100 bytes."""
    import shutil

    copy = tmp_path / f"cut-{name.split('.')[0]}"
    shutil.copytree(run, copy)
    (copy / name).write_bytes((copy / name).read_bytes()[:100])
    return copy


@pytest.mark.parametrize(("command", "name"), [
    ("gantt", "jobs.parquet"), ("gantt", "allocations.parquet"), ("compare", "jobs.parquet"),
])
def test_an_unreadable_run_file_is_named(two_runs, capsys, tmp_path, command, name):
    # polars' "File out of specification" reached the user as an internal error, naming no file
    run = _broken_copy(two_runs / "easy", tmp_path, name)
    assert main([command, str(run), "-o", str(tmp_path / "f.png")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"schedbench: error: {run / name}: unreadable ("), err


@pytest.mark.parametrize("command", ["gantt", "compare"])
def test_a_figure_is_written_under_the_name_given_or_refused_first(two_runs, capsys, tmp_path, command):
    run = str(two_runs / "easy")
    bare = tmp_path / "waits"  # matplotlib wrote waits.png while the command named waits
    assert main([command, run, "-o", str(bare)]) == 0
    assert bare.read_bytes().startswith(b"\x89PNG") and not bare.with_suffix(".png").exists()
    capsys.readouterr()
    odd = tmp_path / "waits.xyz"  # matplotlib's ValueError, after the work: an internal error
    assert main([command, run, "-o", str(odd)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"schedbench: error: {odd}: cannot draw a .xyz file (give a name ending in .png, ")
    assert captured.out == "" and not odd.exists()
    # a folder: was written beside it as FOLDER.png
    assert main([command, run, "-o", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip() == f"schedbench: error: {tmp_path}: is a folder, not a file"
    assert not tmp_path.with_suffix(".png").exists()


@pytest.mark.parametrize("bound", ["--from", "--to"])
def test_a_window_end_past_int64_is_a_usage_error(two_runs, capsys, tmp_path, bound):
    # --to 99999999999999999999 reached polars' filter: OverflowError, an internal error
    with pytest.raises(SystemExit) as exc:  # argparse's usage error
        main(["gantt", str(two_runs / "easy"), bound, "99999999999999999999", "-o", str(tmp_path / "g.png")])
    assert exc.value.code == 2
    assert "99999999999999999999: out of range (at most 999,999,999,999,999,999 either way)" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["gantt", "compare"])
def test_an_interrupted_figure_leaves_the_older_one_whole(two_runs, tmp_path, monkeypatch, command):
    # savefig wrote into the named file: an interrupt left half a PNG there
    from matplotlib.figure import Figure

    out = tmp_path / "f.png"
    out.write_bytes(b"the older figure")

    def half_then_interrupted(self, fname, **kwargs):
        with open(fname, "wb") as f:
            f.write(b"\x89PNG half")
        raise KeyboardInterrupt

    monkeypatch.setattr(Figure, "savefig", half_then_interrupted)
    assert main([command, str(two_runs / "easy"), "-o", str(out)]) == 130  # "schedbench: interrupted"
    assert out.read_bytes() == b"the older figure" and [p.name for p in tmp_path.iterdir()] == ["f.png"]
