"""``schedbench compare`` and ``schedbench gantt`` (issue 14, item 6)."""

from __future__ import annotations

import json

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
    assert rows["longest wait"].endswith("| **108** | 199 |")
    assert rows["wait p99"].endswith("| **108** | 193 |")
    assert rows["wait mean"].endswith("| 57 | **52** |")  # PRB's mean is the better one


@pytest.mark.parametrize("colour", ["user", "account", "job", "decision"])
def test_gantt_draws_every_job_in_the_window(two_runs, capsys, tmp_path, colour):
    out = tmp_path / "g.png"
    assert main(["gantt", str(two_runs / "easy"), "--colour", colour, "-o", str(out)]) == 0
    assert "60 jobs drawn" in capsys.readouterr().out
    assert out.stat().st_size > 1000


def test_views_fail_in_one_line(two_runs, capsys, tmp_path):
    assert main(["gantt", str(tmp_path / "missing"), "-o", str(tmp_path / "g.png")]) == 1
    assert "not a replay output folder" in capsys.readouterr().err
    assert main(["gantt", str(two_runs / "easy"), "--from", "100", "--to", "50", "-o", str(tmp_path / "g.png")]) == 2
    assert main(["compare", str(tmp_path / "missing")]) == 1
