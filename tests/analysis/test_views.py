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
