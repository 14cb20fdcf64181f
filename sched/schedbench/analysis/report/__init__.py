"""Report of a sweep: ``report.md``, a standalone ``report.html`` and PNG figures.

Reads ``RESULTS/runs.parquet`` (and the per-run ``jobs`` and ``timeline`` parts it points
to) as written by :mod:`schedbench.sweep`.  Three modules, each knowing only the one
before it: :mod:`.model` (the metric catalogue; the runs loaded and averaged over seeds),
:mod:`.figures` (matplotlib) and :mod:`.render` (markdown and HTML).  :func:`build`
computes the tables and draws the figures, :func:`write_report` also writes the pages.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import uuid
from pathlib import Path

import polars as pl

from ...errors import DataError
from .figures import (
    bars_figure,
    overlapping_ticks,
    queue_figure,
    throughput_figure,
    wait_cdf_figure,
)
from .model import (
    METRICS,
    THROUGHPUT,
    UTILISATION,
    Metric,
    best,
    duration_unit,
    glossary_rank,
    headline_metrics,
    load_runs,
    names_in_order,
    slug,
    summarise,
    unit_of,
)
from .render import (
    Section,
    accounts_table,
    fmt,
    fmt_duration,
    highlights,
    markdown_table,
    render_html,
    render_markdown,
    table_rows,
    text_summary,
    workload_facts,
    write_pages,
)

__all__ = [
    "METRICS", "THROUGHPUT", "UTILISATION", "Metric", "Section", "accounts_table", "bars_figure", "best", "build",
    "duration_unit", "fmt", "fmt_duration", "headline_metrics", "load_runs", "markdown_table", "overlapping_ticks",
    "queue_figure", "render_html", "render_markdown", "summarise", "table_rows", "text_summary", "throughput_figure",
    "unit_of", "wait_cdf_figure", "write_report",
]


def build(results: str | os.PathLike, outdir: str | os.PathLike) -> dict:
    """Compute the tables and draw the figures; returns what the writers need."""
    results, outdir = Path(results), Path(outdir)
    runs = load_runs(results)
    if runs.height == 0 or "status" not in runs.columns:
        raise DataError(f"{results / 'runs.parquet'} holds no runs")
    ok = runs.filter(pl.col("status") == "ok")
    if ok.height == 0:
        raise DataError(f"every run in {results} failed: see the error column of runs.parquet")
    summary = summarise(runs)
    figdir = outdir / "figures"
    sections = []
    for workload in list(dict.fromkeys(summary["workload"].to_list())):
        header, cells, flags = table_rows(summary, workload)
        sec = Section(workload, header, cells, flags, workload_facts(ok, workload), highlights(summary, workload))
        name = slug(workload)
        bars = figdir / f"{name}-metrics.png"
        bars_figure(summary, workload, bars)
        sec.figures.append((bars.relative_to(outdir).as_posix(),
                            "Headline metrics per scheduler (groups) and allocator (colours), mean over seeds."))
        cdf = figdir / f"{name}-wait-cdf.png"
        wait_cdf_figure(results, runs, summary, workload, cdf)
        sec.figures.append((cdf.relative_to(outdir).as_posix(),
                            "Cumulative distribution of waiting times: the higher and further left a line, the "
                            "shorter jobs waited (colour: scheduler, line style: allocator; equal "
                            "schedules draw coinciding lines)."))
        queue = figdir / f"{name}-queue.png"
        seed = queue_figure(results, runs, summary, workload, queue)
        sec.figures.append((queue.relative_to(outdir).as_posix(),
                            "Number of waiting jobs over time" + (f" (seed {seed})." if seed is not None else ".")))
        sec.accounts = accounts_table(results, runs, summary, workload)
        sections.append(sec)
    tput = figdir / "throughput.png"
    throughput_figure(summary, tput)
    failed = runs.filter(pl.col("status") != "ok")
    meta = {
        "results": str(results),
        "runs": runs.height,
        "ok": ok.height,
        "failed": failed.height,
        "versions": sorted({str(v) for v in runs["schedbench_version"].drop_nulls()}) if "schedbench_version" in runs.columns else [],
        "git_revs": sorted({str(v) for v in runs["git_rev"].drop_nulls()}) if "git_rev" in runs.columns else [],
        "hosts": sorted({str(v) for v in runs["host"].drop_nulls()}) if "host" in runs.columns else [],
        "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    tp = summary.select("workload", "label", "seeds", *[m.column for m in THROUGHPUT])
    used = [m for sec in sections for m in headline_metrics(summary.filter(pl.col("workload") == sec.workload))]
    return {
        "names": names_in_order(ok), "metrics": tuple(dict.fromkeys(sorted(used, key=glossary_rank))),
        "summary": summary, "sections": sections, "meta": meta, "failed": failed,
        "throughput": tp, "throughput_figure": tput.relative_to(outdir).as_posix(),
    }


def write_report(results: str | os.PathLike, outdir: str | os.PathLike) -> dict:
    """Write ``report.md``, ``report.html`` and ``figures/*.png`` into ``outdir``; returns
    the data of :func:`build` plus ``paths``.

    They are made in a hidden folder inside ``outdir`` and moved in once all are done
    (``figures/`` replaced whole): a report that fails half-way (an unreadable run file)
    leaves an older report as it was, not its pages beside half of new figures, and a
    first report no folder at all."""
    outdir = Path(outdir)
    made = not outdir.exists()
    outdir.mkdir(parents=True, exist_ok=True)
    staging = outdir / f".report.tmp-{uuid.uuid4().hex[:8]}"
    try:
        staging.mkdir()
    except OSError as exc:  # named as given, not by the hidden folder
        raise type(exc)(exc.errno, exc.strerror, str(outdir)) from None
    try:
        data = build(results, staging)
        write_pages(data, staging)
        figures = outdir / "figures"
        aside = outdir / f".figures.old-{uuid.uuid4().hex[:8]}"
        if figures.exists():
            os.rename(figures, aside)
        try:
            os.rename(staging / "figures", figures)
        except BaseException:
            if aside.exists():  # the old figures back in place
                os.rename(aside, figures)
            raise
        for name in ("report.md", "report.html"):
            os.replace(staging / name, outdir / name)
        shutil.rmtree(aside, ignore_errors=True)
    except BaseException:
        if made:  # nothing of it was there before: no empty folder left behind
            shutil.rmtree(outdir, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    data["paths"] = {"markdown": outdir / "report.md", "html": outdir / "report.html",
                     "figures": sorted(figures.glob("*.png"))}
    return data
