"""The report as text: ``report.md`` and a standalone ``report.html`` (the figures
embedded in base64, so that it can be mailed or archived alone; ``report.md`` links them
from ``figures/``), and the plain-text tables the command prints.  A workload's
``description`` in the sweep config says why it is there.
"""

from __future__ import annotations

import base64
import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ...io.aside import written_aside
from .model import (
    METRICS,
    NAME_NOTES,
    THROUGHPUT,
    Metric,
    account_waits,
    best,
    duration_unit,
    headline_metrics,
    metric_unit,
    slug,
    titled,
    unit_of,
)


def fmt_duration(s: float | None) -> str:
    if s is None or not math.isfinite(s):
        return "–"
    if abs(s) < 120:
        return f"{s:,.0f} s"
    if abs(s) < 2 * 3600:
        return f"{s / 60:,.1f} min"
    if abs(s) < 2 * 86400:
        return f"{s / 3600:,.2f} h"
    return f"{s / 86400:,.2f} d"


def fmt(value, kind: str, unit: tuple[float, str] | None = None) -> str:
    """``value`` as text; durations in ``unit`` (seconds per unit, name; the number only)
    when given, else in a unit of their own (:func:`fmt_duration`)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if kind == "duration" and unit is not None:
        return f"{value / unit[0]:,.0f}" if unit[1] == "s" else f"{value / unit[0]:,.2f}"
    if kind == "duration":
        return fmt_duration(value)
    if kind == "share":
        return f"{100 * value:.1f} %"
    if kind == "ratio":
        return f"{value:,.2f}"
    if kind == "rate":
        return f"{value:,.3g}" if value < 1000 else f"{value:,.0f}"
    return f"{value:,.2f}"


def table_rows(summary: pl.DataFrame, workload: str) -> tuple[list[str], list[list[str]], list[list[bool]]]:
    """Header, cells and best-cell flags of a workload's summary table (durations in the
    workload's one unit, shares in %, both named in the header)."""
    sub = summary.filter(pl.col("workload") == workload)
    headline = headline_metrics(sub)
    metrics = headline + THROUGHPUT
    unit = unit_of(sub, headline)
    units = [metric_unit(m, sub, unit) for m in metrics]
    header = ["scheduler+allocator", "seeds"] + [titled(m, u) for m, u in zip(metrics, units, strict=True)]
    tops = {m.column: best(sub[m.column].to_list(), m.better) for m in headline if m.column in sub.columns}
    cells, flags = [], []
    for r in sub.iter_rows(named=True):
        cells.append([r["label"], str(r["seeds"])] + [
            fmt(r.get(m.column), m.kind, u).removesuffix(" %") for m, u in zip(metrics, units, strict=True)])
        flags.append(
            [False, False]
            + [m.column in tops and r.get(m.column) is not None and tops[m.column] is not None
               and math.isclose(r[m.column], tops[m.column], rel_tol=1e-9, abs_tol=1e-12) for m in headline]
            + [False] * len(THROUGHPUT)
        )
    return header, cells, flags


def markdown_table(header: list[str], cells: list[list[str]], flags: list[list[bool]] | None = None) -> str:
    def row(values):
        return "| " + " | ".join(values) + " |"

    lines = [row(header), row(["---"] + ["---:"] * (len(header) - 1))]
    for i, values in enumerate(cells):
        marked = [f"**{v}**" if flags and flags[i][j] else v for j, v in enumerate(values)]
        lines.append(row(marked))
    return "\n".join(lines)


@dataclass
class Section:
    workload: str
    header: list[str]
    cells: list[list[str]]
    flags: list[list[bool]]
    facts: list[tuple[str, str]]
    highlights: list[str]
    figures: list[tuple[str, str]] = field(default_factory=list)  # (relative path, caption)
    accounts: tuple[list[str], list[list[str]], list[list[bool]]] | None = None  # fairness table


def accounts_table(results: Path, runs: pl.DataFrame, summary: pl.DataFrame, workload: str
                   ) -> tuple[list[str], list[list[str]], list[list[bool]]] | None:
    """Header, cells and best-cell flags of a workload's fairness table
    (:func:`schedbench.analysis.report.model.account_waits`), or None."""
    waits = account_waits(results, runs, summary, workload)
    if waits is None:
        return None
    by, shown, jobs_of, rows = waits
    unit = duration_unit(max((v for r in rows for v in r[2:] if v is not None), default=0.0))
    header = ["scheduler+allocator", "Jain's index (delivered/allocated share)", f"worst account mean wait ({unit[1]})"] + [
        f"{by} {a} mean wait ({unit[1]}; {jobs_of[a]:,} jobs)" for a in shown]
    better = ["higher"] + ["lower"] * (len(header) - 2)
    bests = [best([r[i + 1] for r in rows], b) for i, b in enumerate(better)]
    cells = [[r[0], "–" if r[1] is None else f"{r[1]:.3f}"] + [fmt(v, "duration", unit) for v in r[2:]] for r in rows]
    flags = [[False] + [v is not None and b is not None and math.isclose(v, b, rel_tol=1e-9, abs_tol=1e-12)
                        for v, b in zip(r[1:], bests, strict=True)] for r in rows]
    return header, cells, flags


def describe_source(row: dict) -> str:
    if row.get("generator"):
        params = json.loads(row.get("params") or "{}")
        text = ", ".join(f"{k} = {v}" for k, v in params.items())
        return f"generator {row['generator']}" + (f" ({text})" if text else "")
    text = f"trace {Path(str(row.get('trace'))).name}"
    return text + (f", first {row['limit']:,} jobs" if row.get("limit") else "")


def workload_facts(ok: pl.DataFrame, workload: str) -> list[tuple[str, str]]:
    """(name, text) facts heading a workload's section, from its successful runs ``ok``:
    why it is in the sweep (its description), its source, machine, jobs, seeds, makespan."""
    first = ok.filter(pl.col("workload") == workload).row(0, named=True)
    w_ok = ok.filter(pl.col("workload") == workload)
    seeds = sorted(s for s in w_ok["seed"].unique().to_list() if s is not None)
    span_unit = duration_unit(w_ok["makespan"].max())
    described = [d for d in w_ok["description"].drop_nulls().to_list()] if "description" in w_ok.columns else []
    facts = [("why", described[-1])] if described else []
    facts += [
        ("workload", describe_source(first)),
        ("machine", str(first.get("machine"))),
        ("jobs", f"{int(first['jobs_input']):,} submitted, {int(w_ok['jobs_replayed'].mean()):,} replayed on average"),
        ("seeds", ", ".join(map(str, seeds)) if seeds else "none (a trace replay is deterministic)"),
        ("makespan", f"{fmt(w_ok['makespan'].min(), 'duration', span_unit)} to "
                     f"{fmt(w_ok['makespan'].max(), 'duration', span_unit)} {span_unit[1]}"),
    ]
    return facts


def highlights(summary: pl.DataFrame, workload: str) -> list[str]:
    sub = summary.filter(pl.col("workload") == workload)
    metrics = headline_metrics(sub)
    unit = unit_of(sub, metrics)

    def shown(value, m):
        u = metric_unit(m, sub, unit)
        text = fmt(value, m.kind, u)
        return f"{text} {u[1]}" if m.kind == "duration" else text

    out = []
    for m in metrics:
        vals = sub[m.column].to_list()
        top = best(vals, m.better)
        if top is None:
            continue
        winners = [lab for lab, v in zip(sub["label"], vals, strict=True)
                   if v is not None and math.isclose(v, top, rel_tol=1e-9, abs_tol=1e-12)]
        worst = best(vals, "higher" if m.better == "lower" else "lower")
        phrase = "lowest" if m.better == "lower" else "highest"
        if len(winners) == len(vals) and len(vals) > 1:
            out.append(f"{m.title}: the same for every pair ({shown(top, m)})")
            continue
        line = f"{phrase} {m.title}: {', '.join(winners)} ({shown(top, m)}"
        if worst is not None and len(winners) < len(vals):
            line += f"; worst {shown(worst, m)}"
        out.append(line + ")")
    return out


def _terms(names: dict[str, list[str]]) -> list[tuple[str, str]]:
    def listed(kind: str) -> str:
        items = [f"{n} ({NAME_NOTES[n]})" if n in NAME_NOTES else n for n in names.get(kind, [])]
        return "; ".join(items)

    out = [
        ("scheduler", "decides which waiting job starts next. Here: " + listed("scheduler") + "."),
        ("allocator", "decides which nodes a starting job gets. Here: " + listed("allocator") + "."),
    ]
    if len(names.get("predictor", [])) > 1:
        out.append(("predictor", "what the scheduler takes as a job's run time. Here: " + listed("predictor") + "."))
    out += [
        ("seeds", "number of random workload instances averaged in a row; where a row has more "
                  "than one, the bars' error marks show their standard deviation (a single run is "
                  "deterministic and has none)."),
        ("makespan", "time from the first submission to the last job's end."),
    ]
    return out


def _glossary(names: dict[str, list[str]], metrics: tuple[Metric, ...] = METRICS) -> list[tuple[str, str]]:
    return [(m.title, m.explain + f" {m.better.capitalize()} is better.") for m in metrics] + [
        (m.title, m.explain) for m in THROUGHPUT
    ] + _terms(names)


def _throughput_cells(tp: pl.DataFrame) -> tuple[list[str], list[list[str]]]:
    header = ["workload", "scheduler+allocator", "seeds"] + [m.title for m in THROUGHPUT]
    cells = [[r["workload"], r["label"], str(r["seeds"])] + [fmt(r[m.column], m.kind) for m in THROUGHPUT]
             for r in tp.iter_rows(named=True)]
    return header, cells


def render_markdown(data: dict) -> str:
    meta = data["meta"]
    out = [
        "# schedbench report",
        "",
        f"{meta['runs']} runs ({meta['ok']} succeeded, {meta['failed']} failed) from `{meta['results']}`; "
        f"schedbench {', '.join(meta['versions']) or '?'}, git {', '.join(r[:12] for r in meta['git_revs']) or 'unknown'}; "
        f"generated {meta['generated']}.",
        "",
        "Each table row is one scheduler+allocator pair, averaged over the seeds shown; the best value "
        "of each headline column is in bold.",
        "",
        "## What the columns mean",
        "",
    ]
    out += [f"- **{name}**: {text}" for name, text in _glossary(data["names"], data["metrics"])]
    for sec in data["sections"]:
        out += ["", f"## {sec.workload}", ""]
        out += [f"- {k}: {v}" for k, v in sec.facts]
        out += [""] + [f"- {h}" for h in sec.highlights]
        out += ["", markdown_table(sec.header, sec.cells, sec.flags), ""]
        if sec.accounts:
            out += ["Fairness across accounts (the accounts with the most jobs; summary.json has every one):",
                    "", markdown_table(*sec.accounts), ""]
        for rel, caption in sec.figures:
            out += [f"![{caption}]({rel})", "", f"*{caption}*", ""]
    header, cells = _throughput_cells(data["throughput"])
    out += ["## Simulator throughput", "", markdown_table(header, cells), "",
            f"![Simulator throughput]({data['throughput_figure']})", ""]
    if data["failed"].height:
        out += ["## Failed runs", ""]
        out += [markdown_table(
            ["workload", "scheduler+allocator", "seed", "error"],
            [[r["workload"], r["label"], str(r["seed"]), str(r["error"]).replace("|", "\\|")]
             for r in data["failed"].iter_rows(named=True)],
        ), ""]
    out += ["## Data", "",
            "`runs.parquet`: one row per run with every metric and timing; `jobs/` and `timeline/`: "
            "per-job and per-instant results, hive-partitioned by workload, scheduler, allocator and "
            "predictor (`polars.scan_parquet(\"RESULTS/jobs/\", hive_partitioning=True)`).", ""]
    return "\n".join(out)


_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1100px; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #4C72B0; padding-bottom: .2em; }
h2 { margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: .15em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.92em; }
th, td { padding: .35em .7em; border-bottom: 1px solid #e3e3e3; text-align: right; }
th { background: #f3f5f9; } td:first-child, th:first-child { text-align: left; }
td.best { font-weight: bold; background: #e8f3e8; }
dl.glossary dt { font-weight: bold; float: left; clear: left; width: 11em; }
dl.glossary dd { margin-left: 12em; margin-bottom: .4em; }
ul.facts { list-style: none; padding-left: 0; } ul.facts b { display: inline-block; width: 6.5em; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: .9em; color: #555; }
.note { color: #555; font-size: .9em; } code { background: #f4f4f4; padding: 0 .2em; }
"""


def _html_table(header: list[str], cells: list[list[str]], flags: list[list[bool]] | None = None) -> str:
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(cells):
        tds = "".join(
            f"<td class=\"best\">{e(v)}</td>" if flags and flags[i][j] else f"<td>{e(v)}</td>"
            for j, v in enumerate(row)
        )
        body.append(f"<tr>{tds}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _img(outdir: Path, rel: str, alt: str) -> str:
    data = base64.b64encode((outdir / rel).read_bytes()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'


def render_html(data: dict, outdir: Path) -> str:
    e = html.escape
    meta = data["meta"]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>schedbench report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>schedbench report</h1>",
        f"<p>{meta['runs']} simulated runs ({meta['ok']} succeeded, {meta['failed']} failed) of HPC job "
        "workloads replayed through each scheduler and node allocator. Each table row is one "
        "scheduler+allocator pair, averaged over the random seeds shown; the best value of each "
        "headline column is highlighted.</p>",
        f"<p class=\"note\">Results: <code>{e(meta['results'])}</code>; schedbench "
        f"{e(', '.join(meta['versions']) or '?')}, git {e(', '.join(r[:12] for r in meta['git_revs']) or 'unknown')}; "
        f"host {e(', '.join(meta['hosts']) or '?')}; generated {e(meta['generated'])}.</p>",
        "<h2>What the columns mean</h2>",
        '<dl class="glossary">',
    ]
    parts += [f"<dt>{e(name)}</dt><dd>{e(text)}</dd>" for name, text in _glossary(data["names"], data["metrics"])]
    parts.append("</dl>")
    for sec in data["sections"]:
        parts.append(f'<h2 id="{e(slug(sec.workload))}">{e(sec.workload)}</h2>')
        parts.append('<ul class="facts">' + "".join(f"<li><b>{e(k)}</b> {e(v)}</li>" for k, v in sec.facts) + "</ul>")
        if sec.highlights:
            parts.append("<p>In short: " + "; ".join(e(h) for h in sec.highlights) + ".</p>")
        parts.append(_html_table(sec.header, sec.cells, sec.flags))
        if sec.accounts:
            parts.append("<p>Fairness across accounts (the accounts with the most jobs; each run's summary.json "
                         "has every one):</p>")
            parts.append(_html_table(*sec.accounts))
        for rel, caption in sec.figures:
            parts.append(f"<figure>{_img(outdir, rel, caption)}<figcaption>{e(caption)}</figcaption></figure>")
    header, cells = _throughput_cells(data["throughput"])
    parts += [
        "<h2>Simulator throughput</h2>",
        "<p>How fast the simulator itself replays each workload (the scheduling quality above does not "
        "depend on it).</p>",
        _html_table(header, cells),
        f"<figure>{_img(outdir, data['throughput_figure'], 'simulator throughput')}"
        "<figcaption>Jobs per second and simulated days per second of simulation (log scale).</figcaption></figure>",
    ]
    if data["failed"].height:
        parts.append("<h2>Failed runs</h2>")
        parts.append(_html_table(
            ["workload", "scheduler+allocator", "seed", "error"],
            [[r["workload"], r["label"], str(r["seed"]), str(r["error"])] for r in data["failed"].iter_rows(named=True)],
        ))
    parts += [
        "<h2>Data</h2>",
        "<p class=\"note\"><code>runs.parquet</code> holds one row per run with every metric and timing; "
        "<code>jobs/</code> and <code>timeline/</code> hold the per-job and per-instant results, partitioned "
        "by workload, scheduler, allocator and predictor.</p>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _write_text(path: Path, text: str) -> None:
    with written_aside(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_pages(data: dict, outdir: Path) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` of :func:`schedbench.analysis.report.build`'s
    ``data`` into ``outdir`` (whose ``figures/`` it embeds); returns their paths."""
    md = outdir / "report.md"
    page = outdir / "report.html"
    _write_text(md, render_markdown(data))
    _write_text(page, render_html(data, outdir))
    return md, page


def text_summary(data: dict) -> str:
    """The summary tables as plain text (markdown), one per workload, then throughput."""
    out = []
    for sec in data["sections"]:
        out += [f"## {sec.workload} ({dict(sec.facts)['machine']})", markdown_table(sec.header, sec.cells), ""]
    return "\n".join(out).rstrip() + "\n"
