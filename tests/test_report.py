"""Report: tables averaged over seeds, markdown, standalone HTML and PNG figures."""

from __future__ import annotations

import re

import polars as pl
import pytest

from schedbench import cli, report, sweep
from schedbench.registry import ALLOCATORS, SCHEDULERS

SCHEDS = list(SCHEDULERS)[:2]
ALLOCS = list(ALLOCATORS)[:2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "results"
    config = {
        "schedulers": SCHEDS,
        "allocators": ALLOCS,
        "seeds": [1, 2],
        "workloads": [
            {"name": "esp", "generator": "esp", "variant": "original", "machine": "16x(cores=8,gpus=2)"},
            {"name": "eurora", "generator": "eurora-like", "jobs": 120},
            # fails when it runs (a bad option value is refused before any run)
            {"name": "broken", "generator": "esp", "variant": "cpu-gpu", "machine": "4x(cores=8)"},
        ],
    }
    sweep.sweep(sweep.expand(config), out, jobs=1, progress=False)
    return out


@pytest.fixture(scope="module")
def rendered(results, tmp_path_factory):
    outdir = tmp_path_factory.mktemp("report") / "report"
    return outdir, report.write_report(results, outdir)


def test_summary_averages_over_seeds(results):
    runs = pl.read_parquet(results / "runs.parquet")
    summary = report.summarise(runs)
    assert summary.height == 2 * len(SCHEDS) * len(ALLOCS)  # the failed workload has no row
    assert (summary["seeds"] == 2).all()
    row = summary.filter((pl.col("workload") == "eurora") & (pl.col("scheduler") == SCHEDS[1])
                         & (pl.col("allocator") == ALLOCS[0])).row(0, named=True)
    src = runs.filter((pl.col("workload") == "eurora") & (pl.col("scheduler") == SCHEDS[1])
                      & (pl.col("allocator") == ALLOCS[0]))
    assert row["wait_mean"] == pytest.approx(src["wait_mean"].mean())
    assert row["wait_mean_sd"] == pytest.approx(src["wait_mean"].std())
    assert row["sim_days_per_hour"] == pytest.approx(src["sim_days_per_hour"].mean())
    assert row["label"] == f"{SCHEDS[1]}+{ALLOCS[0]}"
    # rows follow the order of the scheduler and allocator tables
    esp = summary.filter(pl.col("workload") == "esp")
    assert esp["label"].to_list() == [f"{s}+{a}" for s in SCHEDS for a in ALLOCS]


def test_report_files(rendered):
    outdir, data = rendered
    md = (outdir / "report.md").read_text()
    page = (outdir / "report.html").read_text()
    figures = sorted(p.name for p in (outdir / "figures").glob("*.png"))
    for w in ("esp", "eurora"):
        for kind in ("metrics", "wait-cdf", "queue"):
            assert f"{w}-{kind}.png" in figures
    assert "throughput.png" in figures
    for p in (outdir / "figures").glob("*.png"):
        blob = p.read_bytes()
        assert blob.startswith(PNG_MAGIC) and len(blob) > 5_000, p.name
    labels = [f"{s}+{a}" for s in SCHEDS for a in ALLOCS]
    for label in labels:
        assert label in page and label in md
    # every figure is embedded: the page stands alone
    assert page.count('src="data:image/png;base64,') == len(figures)
    assert not re.search(r'(src|href)="(?!data:)', page)
    assert "<style>" in page and "<link" not in page
    # every headline metric and the throughput are explained, with seeds counts
    for m in report.METRICS + report.THROUGHPUT:
        assert m.title in page and m.explain.split(":")[0][:20] in page
    assert "seeds" in page and "simulated days/h" in page and "jobs/s" in page
    # markdown links its figures relatively
    assert "](figures/esp-metrics.png)" in md
    # the failed runs are listed with their error
    assert "Failed runs" in md and "needs nodes with cores and" in page


def test_markdown_table_marks_the_best(rendered):
    _, data = rendered
    sec = next(s for s in data["sections"] if s.workload == "eurora")
    table = report.markdown_table(sec.header, sec.cells, sec.flags)
    lines = table.splitlines()
    assert lines[0].startswith("| scheduler+allocator | seeds | mean wait")
    assert len(lines) == 2 + len(SCHEDS) * len(ALLOCS)
    assert table.count("**") >= 2 * len(report.METRICS)  # at least one best cell per metric


def test_cli_prints_the_summary(tmp_path, capsys):
    results = tmp_path / "results"
    config = {"schedulers": SCHEDS[:1], "allocators": ALLOCS[:1],
              "workloads": [{"name": "esp", "generator": "esp", "machine": "16x(cores=8)"}]}
    sweep.sweep(sweep.expand(config), results, jobs=1, progress=False)
    assert cli.main(["report", str(results), "-o", str(tmp_path / "r")]) == 0
    captured = capsys.readouterr()
    assert "## esp (16x(cores=8))" in captured.out
    assert f"| {SCHEDS[0]}+{ALLOCS[0]} | 1 |" in captured.out
    assert "report.html" in captured.err
    assert (tmp_path / "r" / "report.html").is_file()


def test_text_summary(rendered):
    _, data = rendered
    text = report.text_summary(data)
    assert "## esp" in text and "## eurora" in text
    assert text.count(f"| {SCHEDS[0]}+{ALLOCS[0]} | 2 |") == 2


def test_cli_errors(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path / "nothing"), "-o", str(tmp_path / "r")]) == 1
    assert "run `schedbench sweep" in capsys.readouterr().err
    only_failed = tmp_path / "failed"
    config = {"schedulers": SCHEDS[:1], "allocators": ALLOCS[:1],
              "workloads": [{"generator": "esp", "variant": "cpu-gpu", "machine": "4x(cores=8)"}]}
    sweep.sweep(sweep.expand(config), only_failed, jobs=1, progress=False)
    assert cli.main(["report", str(only_failed), "-o", str(tmp_path / "r")]) == 1
    assert "every run" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(None, "–"), (0, "0 s"), (119, "119 s"), (600, "10.0 min"), (7200, "2.00 h"), (3 * 86400, "3.00 d")],
)
def test_fmt_duration(seconds, text):
    assert report.fmt_duration(seconds) == text
