"""Report: tables averaged over seeds, markdown, standalone HTML and PNG figures."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from schedbench.analysis import report
from schedbench.cli import main as cli
from schedbench.registry import ALLOCATORS, SCHEDULERS
from schedbench.sweep import config as sweep_config
from schedbench.sweep import execute

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
        "predictors": ["requested", "actual"],  # long group labels: the tick-label test needs them
        "workloads": [
            {"name": "esp", "generator": "esp", "variant": "original", "machine": "16x(cores=8,gpus=2)",
             "description": "ESP on a GPU machine"},
            {"name": "eurora", "generator": "eurora-like", "jobs": 120},
            # fails when it runs (a bad option value is refused before any run)
            {"name": "broken", "generator": "esp", "variant": "cpu-gpu", "machine": "4x(cores=8)"},
        ],
    }
    execute.sweep(sweep_config.expand(config), out, jobs=1, progress=False)
    return out


@pytest.fixture(scope="module")
def rendered(results, tmp_path_factory):
    outdir = tmp_path_factory.mktemp("report") / "report"
    return outdir, report.write_report(results, outdir)


def test_summary_averages_over_seeds(results):
    runs = pl.read_parquet(results / "runs.parquet")
    summary = report.summarise(runs)
    assert summary.height == 2 * 2 * len(SCHEDS) * len(ALLOCS)  # the failed workload has no row
    assert (summary["seeds"] == 2).all()
    row = summary.filter((pl.col("workload") == "eurora") & (pl.col("scheduler") == SCHEDS[1])
                         & (pl.col("allocator") == ALLOCS[0]) & (pl.col("predictor") == "actual")).row(0, named=True)
    src = runs.filter((pl.col("workload") == "eurora") & (pl.col("scheduler") == SCHEDS[1])
                      & (pl.col("allocator") == ALLOCS[0]) & (pl.col("predictor") == "actual"))
    assert row["wait_mean"] == pytest.approx(src["wait_mean"].mean())
    assert row["wait_mean_sd"] == pytest.approx(src["wait_mean"].std())
    assert row["sim_days_per_s"] == pytest.approx(src["sim_days_per_hour"].mean() / 3600)
    assert row["utilisation_gpus"] == pytest.approx(src["utilisation_gpus"].mean())
    assert row["label"] == f"{SCHEDS[1]}+{ALLOCS[0]} (actual)"
    # rows follow the order of the scheduler, allocator and predictor tables
    esp = summary.filter(pl.col("workload") == "esp")
    assert esp["label"].to_list() == [f"{s}+{a} ({p})" for s in SCHEDS for a in ALLOCS for p in ("requested", "actual")]


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
    labels = [f"{s}+{a} (requested)" for s in SCHEDS for a in ALLOCS]
    for label in labels:
        assert label in page and label in md
    # every figure is embedded: the page stands alone
    assert page.count('src="data:image/png;base64,') == len(figures)
    assert not re.search(r'(src|href)="(?!data:)', page)
    assert "<style>" in page and "<link" not in page
    # every headline metric and the throughput are explained, with seeds counts
    for m in data["metrics"] + report.THROUGHPUT:
        assert m.title in page and m.explain.split(":")[0][:20] in page
    assert "seeds" in page and "simulated days/s" in page and "jobs/s" in page
    # utilisation per resource type the machines have: Eurora has MICs, the ESP machine none
    assert {"core utilisation", "GPU utilisation", "MIC utilisation"} <= {m.title for m in data["metrics"]}
    esp = next(s for s in data["sections"] if s.workload == "esp")
    assert "GPU utilisation (%)" in esp.header and "MIC utilisation (%)" not in esp.header
    # the config's description says why a workload is there
    assert ("why", "ESP on a GPU machine") in esp.facts and "ESP on a GPU machine" in page
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
    assert len(lines) == 2 + 2 * len(SCHEDS) * len(ALLOCS)
    headline = report.headline_metrics(data["summary"].filter(pl.col("workload") == "eurora"))
    assert table.count("**") >= 2 * len(headline)  # at least one best cell per metric


def test_cli_prints_the_summary(tmp_path, capsys):
    results = tmp_path / "results"
    config = {"schedulers": SCHEDS[:1], "allocators": ALLOCS[:1],
              "workloads": [{"name": "esp", "generator": "esp", "machine": "16x(cores=8)"}]}
    execute.sweep(sweep_config.expand(config), results, jobs=1, progress=False)
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
    assert text.count(f"| {SCHEDS[0]}+{ALLOCS[0]} (requested) | 2 |") == 2


def test_cli_errors(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path / "nothing"), "-o", str(tmp_path / "r")]) == 1
    assert "run `schedbench sweep" in capsys.readouterr().err
    only_failed = tmp_path / "failed"
    config = {"schedulers": SCHEDS[:1], "allocators": ALLOCS[:1],
              "workloads": [{"generator": "esp", "variant": "cpu-gpu", "machine": "4x(cores=8)"}]}
    execute.sweep(sweep_config.expand(config), only_failed, jobs=1, progress=False)
    assert cli.main(["report", str(only_failed), "-o", str(tmp_path / "r")]) == 1
    assert "every run" in capsys.readouterr().err


def test_a_runs_table_of_another_program_is_named(tmp_path, capsys):
    # its missing columns were polars' ColumnNotFoundError deep in the report: an internal error
    folder = tmp_path / "results"
    folder.mkdir()
    pl.DataFrame({"status": ["ok"], "workload": ["w"], "x": [1]}).write_parquet(folder / "runs.parquet")
    assert cli.main(["report", str(folder), "-o", str(tmp_path / "r")]) == 1
    assert capsys.readouterr().err.strip() == (
        f"schedbench: error: {folder / 'runs.parquet'}: not a sweep's runs table (no column run_id)")


def test_a_file_given_for_the_results_folder_is_named(tmp_path, capsys):
    # it was "FILE/runs.parquet not found"
    runs = tmp_path / "runs.parquet"
    runs.write_bytes(b"")
    assert cli.main(["report", str(runs), "-o", str(tmp_path / "r")]) == 1
    assert capsys.readouterr().err.strip() == (
        f"schedbench: error: {runs}: a sweep's runs table, not a sweep's results folder (give the folder "
        "`schedbench sweep CONFIG -o RESULTS` wrote)")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("part", ["jobs", "timeline"])
def test_an_unreadable_run_file_is_named(tmp_path, capsys, part):
    # polars' "File out of specification" reached the user as an internal error, naming no file
    results, older = tmp_path / "results", tmp_path / "older"
    for folder, seed in ((results, 1), (older, 2)):  # other jobs, other figures
        config = {"schedulers": SCHEDS[:1], "allocators": ALLOCS[:1], "seeds": [seed],
                  "workloads": [{"name": "esp", "generator": "esp", "machine": "16x(cores=8)"}]}
        execute.sweep(sweep_config.expand(config), folder, jobs=1, progress=False)
    broken = next((results / part).rglob("*.parquet"))
    out = tmp_path / "r"
    assert cli.main(["report", str(older), "-o", str(out), "-q"]) == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    broken.write_bytes(broken.read_bytes()[:100])
    assert cli.main(["report", str(results), "-o", str(out), "-q"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"schedbench: error: {broken}: unreadable ("), err
    # the failed report left the older one whole: figures were redrawn before the failure
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(None, "–"), (0, "0 s"), (119, "119 s"), (600, "10.0 min"), (7200, "2.00 h"), (3 * 86400, "3.00 d")],
)
def test_fmt_duration(seconds, text):
    assert report.fmt_duration(seconds) == text


def test_one_duration_unit_per_workload(rendered):
    """Tables, highlights and figures of a workload give durations in one unit."""
    outdir, data = rendered
    for sec in data["sections"]:
        sub = data["summary"].filter(pl.col("workload") == sec.workload)
        _, unit = report.unit_of(sub, report.headline_metrics(sub))
        assert f"mean wait ({unit})" in sec.header
        assert f"worst account mean wait ({unit})" in sec.header
        wait_line = next(h for h in sec.highlights if "mean wait" in h and "account" not in h)
        assert re.search(rf"\d {unit}[;)]", wait_line), wait_line
    runs = pl.read_parquet(data["meta"]["results"] + "/runs.parquet")
    sub = data["summary"].filter(pl.col("workload") == "eurora")
    _, unit = report.unit_of(sub, report.headline_metrics(sub))
    fig = report.wait_cdf_figure(Path(data["meta"]["results"]), runs, data["summary"], "eurora", outdir / "cdf.png")
    assert fig.axes[0].get_xlabel().startswith(f"wait ({unit})")
    fig = report.bars_figure(data["summary"], "eurora", outdir / "bars.png")
    assert f"mean wait ({unit}), lower is better" in [ax.get_title() for ax in fig.axes]


@pytest.mark.parametrize(
    ("seconds", "unit"), [(None, "s"), (119, "s"), (120, "min"), (7199, "min"), (7200, "h"), (2 * 86400, "d")]
)
def test_duration_unit(seconds, unit):
    assert report.duration_unit(seconds)[1] == unit


def test_no_overlapping_tick_labels(rendered):
    """The two-predictor metrics figure (long group labels) and the throughput figure."""
    outdir, data = rendered
    for workload in ("esp", "eurora"):
        fig = report.bars_figure(data["summary"], workload, outdir / "bars.png")
        fig.canvas.draw()  # laid out once for all its axes
        for ax in fig.axes:
            if ax.get_visible():
                assert not report.overlapping_ticks(fig, ax, draw=False), (workload, ax.get_title())
    fig = report.throughput_figure(data["summary"], outdir / "tp.png")
    fig.canvas.draw()
    assert not any(report.overlapping_ticks(fig, ax, draw=False) for ax in fig.axes)


def test_overlapping_ticks_detects_overlap():
    """The check can fail: crowded long labels, upright, overlap."""
    fig = report.figures._figure(6, 5)
    ax = fig.subplots()
    ax.set_xticks(range(24), [f"scheduler-{i}" for i in range(24)], fontsize=9)
    assert report.overlapping_ticks(fig, ax)
    for t in ax.get_xticklabels():
        t.set_rotation(30)
    assert report.overlapping_ticks(fig, ax)  # still too close across the slant
    for t in ax.get_xticklabels():
        t.set_rotation(90)
    assert not report.overlapping_ticks(fig, ax)


def test_error_bars_only_with_several_seeds(rendered):
    from matplotlib.container import ErrorbarContainer

    outdir, data = rendered
    fig = report.bars_figure(data["summary"], "esp", outdir / "bars.png")
    assert any(isinstance(c, ErrorbarContainer) for ax in fig.axes for c in ax.containers)
    single = data["summary"].with_columns(pl.lit(1, pl.UInt32).alias("seeds"))
    fig = report.bars_figure(single, "esp", outdir / "bars1.png")
    assert not any(isinstance(c, ErrorbarContainer) for ax in fig.axes for c in ax.containers)
    assert "no error bars" in fig.get_suptitle()


def test_allocator_line_styles_are_distinct():
    """Every allocator (five built in, plug-ins beyond) gets its own line style."""
    styles = [report.figures._line_style(k) for k in range(3 * len(report.figures._LINESTYLES))]
    assert len({repr(sorted(s.items())) for s in styles}) == len(styles)
    assert len(ALLOCATORS) <= len(report.figures._LINESTYLES)  # the built-in ones need no marker


def test_cdf_legend_outside_the_plot(rendered):
    outdir, data = rendered
    runs = pl.read_parquet(data["meta"]["results"] + "/runs.parquet")
    fig = report.wait_cdf_figure(Path(data["meta"]["results"]), runs, data["summary"], "esp", outdir / "cdf.png")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert legend is not None and len(legend.get_texts()) == 2 * len(SCHEDS) * len(ALLOCS)
    assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))


def test_fairness_table_per_account(tmp_path):
    """Steffen's three accounts: the report's table has each one's mean wait, as in the
    runs' summary.json; a workload with one account has no table."""
    import json

    results = tmp_path / "results"
    config = {"schedulers": ["easy", "sfs"], "allocators": ["ff"],
              "workloads": [{"name": "steffen", "generator": "steffen"}]}
    execute.sweep(sweep_config.expand(config), results, jobs=1, progress=False)
    data = report.write_report(results, tmp_path / "report")
    header, cells, flags = data["sections"][0].accounts
    assert [c[0] for c in cells] == ["easy+ff", "sfs+ff"]
    assert len(header) == 3 + 3 and header[3].startswith("group 1 mean wait")
    runs = pl.read_parquet(results / "runs.parquet")
    sfs = runs.filter(pl.col("scheduler") == "sfs").row(0, named=True)
    fairness = json.loads((results / "runs" / sfs["run_id"] / "summary.json").read_text())["fairness"]
    unit = header[2].split("(")[1].rstrip(")")
    scale = {"s": 1, "min": 60, "h": 3600, "d": 86400}[unit]
    for col, name in enumerate(header[3:], start=3):
        account = name.split()[1]
        assert float(cells[1][col].replace(",", "")) == pytest.approx(
            fairness["accounts"][account]["wait_mean"] / scale, abs=0.006)
    assert any(any(row[1:]) for row in flags)
    assert "Fairness across accounts" in (tmp_path / "report" / "report.md").read_text()


def test_no_fairness_table_for_one_account(rendered):
    _, data = rendered
    eurora = next(s for s in data["sections"] if s.workload == "esp")
    assert eurora.accounts is None


def _hand_summary(**extra) -> pl.DataFrame:
    """A workload's summary as :func:`report.summarise` gives it, made by hand: EASY and
    PRB with mean waits in minutes and PRB's longest wait in days (the CTC-SP2 case)."""
    return pl.DataFrame({
        "workload": ["w", "w"], "label": ["easy+ff", "prb+ff"], "seeds": [1, 1],
        "wait_mean": [1800.0, 1500.0], "bsld_mean": [3.0, 2.5], "utilisation": [0.8, 0.8],
        "queue_mean": [4.0, 3.0], "worst_account_wait_mean": [3000.0, 2500.0], **extra,
    })


def test_longest_and_p99_wait_in_their_own_unit():
    summary = _hand_summary(wait_p99=[20_000.0, 40_000.0], wait_max=[95 * 3600.0, 1908 * 3600.0])
    header, cells, flags = report.table_rows(summary, "w")
    # the tail in days does not turn the means into fractions of a day
    assert "mean wait (min)" in header and "p99 wait (h)" in header and "max wait (d)" in header
    col = header.index("max wait (d)")
    assert [row[col] for row in cells] == ["3.96", "79.50"] and [f[col] for f in flags] == [True, False]
    assert [row[header.index("mean wait (min)")] for row in cells] == ["30.00", "25.00"]
    lines = report.highlights(summary, "w")
    assert "lowest max wait: easy+ff (3.96 d; worst 79.50 d)" in lines
    assert "lowest mean wait: prb+ff (25.00 min; worst 30.00 min)" in lines


def test_runs_of_older_versions_without_the_tail_metrics():
    header, _, _ = report.table_rows(_hand_summary(), "w")
    assert "mean wait (min)" in header and not any("max wait" in h or "p99" in h for h in header)


def test_prb_note_says_it_can_starve_a_job():
    from schedbench.analysis.report.model import NAME_NOTES

    assert "delay" not in NAME_NOTES["prb"]  # it reserves nothing: a wide job can be passed for ever
    assert "skipped" in NAME_NOTES["prb"] and "for ever" in NAME_NOTES["prb"]
