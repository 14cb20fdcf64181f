"""The README's Python example and offline quick tour run as written (issue 14, item 1)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path

from schedbench.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end >= 0 else len(README)]


def test_python_example_runs_as_written(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", _section("Python API"), re.S)
    assert len(blocks) == 1
    (tmp_path / "traces").mkdir()
    shutil.copy(ROOT / "traces" / "tiny.swf", tmp_path / "traces" / "tiny.swf")
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(blocks[0], "README.md:Python API", "exec"), {"__name__": "readme"})
    assert printed.getvalue().startswith("60 jobs on 8 nodes")
    for run in ("api-easy-ff", "api-py-fcfs"):
        for name in ("jobs.parquet", "timeline.parquet", "allocations.parquet", "summary.json"):
            assert (tmp_path / "runs" / run / name).is_file()


def test_offline_quick_tour_on_the_committed_trace(tmp_path, monkeypatch, capsys):
    tour = _section("Quick tour")
    assert "schedbench replay traces/tiny.swf -o runs/tiny" in tour
    monkeypatch.chdir(ROOT)
    assert main(["traces", "info", "traces/tiny.swf"]) == 0
    assert "60" in capsys.readouterr().out
    assert main(["replay", "traces/tiny.swf", "-q", "-o", str(tmp_path / "tiny")]) == 0
    summary = json.loads((tmp_path / "tiny" / "summary.json").read_text())
    assert summary["jobs_input"] == summary["jobs_replayed"] == 60 and summary["label"] == "easy+ff"


def test_defaults_are_stated_in_replay_help_and_readme():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["replay"]
    text = sub.format_help()
    for default in ("default easy", "default ff", "default requested"):
        assert default in text
    assert "defaults: -s easy -a ff -p requested" in README
    assert {a.dest: a.default for a in sub._actions}.items() >= {
        "scheduler": "easy", "allocator": "ff", "predictor": "requested"}.items()
