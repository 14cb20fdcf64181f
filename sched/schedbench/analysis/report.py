"""Report of a sweep: ``report.md``, a standalone ``report.html`` and PNG figures.

Reads ``RESULTS/runs.parquet`` (and the per-run ``jobs`` and ``timeline`` parts it points
to) as written by :mod:`schedbench.sweep.run`.  For each workload, the runs of one
scheduler+allocator (and predictor, when a sweep has several) are averaged over their
seeds, and the number of seeds is shown.  Figures (matplotlib, Agg, no screen): grouped
bars of the headline metrics (with the seed-to-seed standard deviation as error bars
when a row has several seeds), the CDF of the waiting times (all jobs of all seeds), the
queue length over time (first seed) and the simulator's throughput.

Units: within a workload every duration (tables, bars, CDF axis) is in one unit, chosen
from the workload's largest value of that quantity; utilisation is given per resource
type the machine has (cores, GPUs, MICs), so a GPU-bound run is not summed up by
its idle cores.  Colours: one per scheduler; line styles and bar colours: one per
allocator.  A workload's ``description`` in the sweep config says why it is there.  The HTML page embeds the figures (base64),
so it can be mailed or archived alone; ``report.md`` links them from ``figures/``.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from ..errors import DataError
from ..predictors import PREDICTORS
from ..registry import ALLOCATORS, SCHEDULERS


@dataclass(frozen=True)
class Metric:
    column: str
    title: str
    kind: str  # "duration" (s), "ratio" (x), "share" (0..1), "number", "rate"
    better: str  # "lower" or "higher"
    explain: str


METRICS: tuple[Metric, ...] = (
    Metric("wait_mean", "mean wait", "duration", "lower",
           "average time a job waits in the queue, from its submission to its start."),
    Metric("bsld_mean", "bounded slowdown", "ratio", "lower",
           "average of max(1, (wait + run) / max(run, 10 s)): how many times longer than its own run "
           "time a job took to finish; 1 means no waiting (jobs under 10 s count as 10 s long)."),
    Metric("utilisation", "utilisation", "share", "higher",
           "share of the machine's cores kept busy by jobs between the first submission and the "
           "last job's end (the rest idled: no job fitted, or none was waiting)."),
    Metric("queue_mean", "mean queue length", "number", "lower",
           "number of jobs waiting in the queue, averaged over time."),
    Metric("worst_account_wait_mean", "worst account mean wait", "duration", "lower",
           "the mean wait of the account (SWF group, or the fair-share schedulers' accounts) whose "
           "jobs waited longest on average; summary.json's fairness block has every account."),
)
_RESOURCE_NAMES = {"cores": ("core", "cores"), "gpus": ("GPU", "GPUs"), "mics": ("MIC", "MICs")}
UTILISATION: dict[str, Metric] = {
    k: Metric(f"utilisation_{k}", f"{one} utilisation", "share", "higher",
              f"share of the machine's {many} kept busy by jobs between the first submission and the "
              "last job's end (the rest idled: no job fitted, or none was waiting).")
    for k, (one, many) in _RESOURCE_NAMES.items()
}
"""Utilisation per resource type, shown in place of ``utilisation`` for the types a
workload's machine has (runs of older versions have only ``utilisation``, cores).  Memory
is left out: summary.json and runs.parquet have ``utilisation_mem``."""

THROUGHPUT: tuple[Metric, ...] = (
    Metric("jobs_per_s", "jobs/s", "rate", "higher",
           "simulator speed: jobs replayed per second of simulation wall time (parsing, "
           "generating and writing excluded)."),
    Metric("sim_days_per_s", "simulated days/s", "rate", "higher",
           "simulator speed: days of simulated time (the makespan) replayed per second of "
           "simulation wall time."),
)
NAME_NOTES: dict[str, str] = {
    "fcfs": "first come, first served",
    "sjf": "shortest (estimated) job first",
    "easy": "first come, first served with EASY backfilling: a later job may start early when "
            "that does not delay the first waiting job",
    "prb": "priority-based backfilling (Netti et al.): jobs in order of wait over expected wait, "
           "a later job may start early when that does not delay the first waiting job",
    "prb-blocking": "PRB's priority order without backfilling: the first waiting job blocks the others",
    "conservative": "conservative backfilling: every waiting job holds a reservation, and a later job "
                    "starts early only when that delays none of them",
    "ff": "first fit: the lowest-numbered nodes that fit",
    "bf": "best fit: the nodes with the fewest free resources that fit",
    "balanced": "Netti et al.'s Balanced: takes nodes in turn from the groups with the most free GPUs "
                "or MICs, nodes without them first, so that no scarce type runs out first",
    "weighted": "Netti et al.'s Weighted: first the nodes that would keep the least of the resources "
                "the waiting jobs are asking for and that are busy",
    "priority-weighted": "Weighted, with the weight of GPUs and MICs raised each time a job needing them "
                         "fails to start and lowered when one starts",
    "requested": "the scheduler trusts the users' requested wall times",
    "actual": "the scheduler knows the actual run times (an oracle)",
}
"""One-line notes on the scheduler, allocator and predictor names the report may meet;
names without a note are listed bare."""


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


_PALETTE = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C",
            "#CCB974", "#64B5CD")
_LINESTYLES = ("-", "--", ":", "-.", (0, (6, 2, 1, 2, 1, 2)), (0, (1, 4)), (0, (10, 3)), (0, (3, 1, 3, 5)))
"""One line style per allocator: distinct for the five built-in ones and three plug-ins
(more cycle, with a marker added so that they still differ)."""


def _line_style(k: int) -> dict:
    style = {"linestyle": _LINESTYLES[k % len(_LINESTYLES)]}
    if k >= len(_LINESTYLES):
        style.update(marker="osv^D"[(k // len(_LINESTYLES) - 1) % 5], markevery=0.1, markersize=4)
    return style


def headline_metrics(sub: pl.DataFrame) -> tuple[Metric, ...]:
    """The headline metrics of a workload's rows: :data:`METRICS` with ``utilisation``
    replaced by one utilisation per resource type that the rows' machine has."""
    per_type = [m for m in UTILISATION.values() if m.column in sub.columns and sub[m.column].drop_nulls().len() > 0]
    out = []
    for m in METRICS:
        out.extend(per_type if m.column == "utilisation" and per_type else [m])
    return tuple(out)


def duration_unit(seconds: float | None) -> tuple[float, str]:
    """(seconds per unit, unit) in which to show durations up to ``seconds``: s below 2 min,
    min below 2 h, h below 2 days, else days."""
    top = abs(seconds) if seconds is not None and math.isfinite(seconds) else 0.0
    if top < 120:
        return 1.0, "s"
    if top < 2 * 3600:
        return 60.0, "min"
    if top < 2 * 86400:
        return 3600.0, "h"
    return 86400.0, "d"


def _unit_of(sub: pl.DataFrame, metrics: tuple[Metric, ...]) -> tuple[float, str]:
    """The one duration unit of a workload's tables and figures."""
    values = [v for m in metrics if m.kind == "duration" and m.column in sub.columns
              for v in sub[m.column].drop_nulls().to_list()]
    return duration_unit(max(values, default=0.0))


# -- loading and aggregating ----------------------------------------------------------------


def load_runs(results: str | os.PathLike) -> pl.DataFrame:
    path = Path(results) / "runs.parquet"
    if not path.is_file():
        raise DataError(f"{path} not found: run `schedbench sweep CONFIG -o {results}` first")
    try:
        return pl.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is a data error
        raise DataError(f"cannot read {path}: {exc}") from None


def _order_key(table: dict, name: str) -> tuple[int, str]:
    names = list(table)
    return (names.index(name), name) if name in names else (len(names), name)


def summarise(runs: pl.DataFrame) -> pl.DataFrame:
    """One row per (workload, scheduler, allocator, predictor) of the successful runs:
    ``seeds`` (runs averaged), ``<metric>`` means and ``<metric>_sd`` standard deviations
    (null for a single seed) of the headline and throughput metrics, ``label``."""
    ok = runs.filter(pl.col("status") == "ok")
    if "sim_days_per_hour" in ok.columns and "sim_days_per_s" not in ok.columns:
        ok = ok.with_columns((pl.col("sim_days_per_hour") / 3600.0).alias("sim_days_per_s"))
    cols = [m.column for m in METRICS + tuple(UTILISATION.values()) + THROUGHPUT]
    cols = [c for c in cols + ["sim_days_per_hour", "makespan", "jobs_replayed", "jobs_input"] if c in ok.columns]
    keys = ["workload", "scheduler", "allocator", "predictor"]
    agg = ok.group_by(keys).agg(
        pl.len().alias("seeds"),
        pl.col("machine").first(),
        *[pl.col(c).cast(pl.Float64).mean().alias(c) for c in cols],
        *[pl.col(c).cast(pl.Float64).std().alias(f"{c}_sd") for c in cols],
    )
    n_pred = agg.group_by("workload").agg(pl.col("predictor").n_unique().alias("_np"))
    agg = agg.join(n_pred, on="workload").with_columns(
        pl.when(pl.col("_np") > 1)
        .then(pl.format("{}+{} ({})", "scheduler", "allocator", "predictor"))
        .otherwise(pl.format("{}+{}", "scheduler", "allocator"))
        .alias("label")
    ).drop("_np")
    rows = sorted(
        agg.iter_rows(named=True),
        key=lambda r: (
            r["workload"], _order_key(SCHEDULERS, r["scheduler"]), _order_key(ALLOCATORS, r["allocator"]),
            _order_key(PREDICTORS, r["predictor"]),
        ),
    )
    return pl.DataFrame(rows, schema=agg.schema) if rows else agg


# -- formatting -----------------------------------------------------------------------------


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


def _best(values: list, better: str) -> float | None:
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return None
    return min(vals) if better == "lower" else max(vals)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "workload"


def _titled(m: Metric, unit: tuple[float, str]) -> str:
    return f"{m.title} ({unit[1]})" if m.kind == "duration" else f"{m.title} (%)" if m.kind == "share" else m.title


def table_rows(summary: pl.DataFrame, workload: str) -> tuple[list[str], list[list[str]], list[list[bool]]]:
    """Header, cells and best-cell flags of a workload's summary table (durations in the
    workload's one unit, shares in %, both named in the header)."""
    sub = summary.filter(pl.col("workload") == workload)
    headline = headline_metrics(sub)
    metrics = headline + THROUGHPUT
    unit = _unit_of(sub, headline)
    header = ["scheduler+allocator", "seeds"] + [_titled(m, unit) for m in metrics]
    best = {m.column: _best(sub[m.column].to_list(), m.better) for m in headline if m.column in sub.columns}
    cells, flags = [], []
    for r in sub.iter_rows(named=True):
        cells.append([r["label"], str(r["seeds"])] + [
            fmt(r.get(m.column), m.kind, unit).removesuffix(" %") for m in metrics])
        flags.append(
            [False, False]
            + [m.column in best and r.get(m.column) is not None and best[m.column] is not None
               and math.isclose(r[m.column], best[m.column], rel_tol=1e-9, abs_tol=1e-12) for m in headline]
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


# -- figures --------------------------------------------------------------------------------


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def overlapping_ticks(fig, ax, draw: bool = True) -> bool:
    """Whether two of ``ax``'s x tick labels overlap once ``fig`` is laid out (``draw``:
    lay it out first; False when the caller just did).  Labels at 0 or 90 degrees are
    compared by their boxes; slanted ones, which are parallel, by the distance between
    neighbours across the slant against the text's height."""
    if draw:
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [t for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]
    angle = labels[0].get_rotation() % 180 if labels else 0.0
    if angle in (0.0, 90.0):
        boxes = [t.get_window_extent(renderer) for t in labels]
        return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    xs = sorted(ax.transData.transform((t.get_position()[0], 0))[0] for t in labels)
    height = max((t.get_fontsize() * fig.dpi / 72.0 * 1.2 for t in labels), default=0.0)
    gap = min((b - a for a, b in zip(xs, xs[1:], strict=False)), default=math.inf)
    return gap * math.sin(math.radians(angle)) < height


def _fit_ticks(fig, axes) -> None:
    """Turn the x tick labels of ``axes`` (30, then 90 degrees) until none overlap."""
    for angle in (0, 30, 90):
        for ax in axes:
            for t in ax.get_xticklabels():
                t.set_rotation(angle)
                t.set_horizontalalignment("right" if angle == 30 else "center")
                t.set_rotation_mode("anchor" if angle == 30 else "default")
        fig.canvas.draw()  # once per angle for all the axes
        if not any(overlapping_ticks(fig, ax, draw=False) for ax in axes):
            return


def _save(fig, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=100)


def _with_group(sub: pl.DataFrame) -> pl.DataFrame:
    """Adds ``_group``: the scheduler, with the predictor when the sweep has several."""
    return sub.with_columns(
        pl.when(pl.col("label").str.contains(r"\("))
        .then(pl.format("{} ({})", "scheduler", "predictor"))
        .otherwise(pl.col("scheduler"))
        .alias("_group")
    )


def bars_figure(summary: pl.DataFrame, workload: str, path: Path):
    """Grouped bars, two metrics a row (groups: scheduler (and predictor); bars: allocator);
    error bars only where a row averages several seeds.  Returns the figure."""
    sub = _with_group(summary.filter(pl.col("workload") == workload))
    metrics = headline_metrics(sub)
    unit = _unit_of(sub, metrics)
    groups = list(dict.fromkeys(sub["_group"].to_list()))
    allocs = list(dict.fromkeys(sub["allocator"].to_list()))
    several = bool((sub["seeds"] > 1).any())
    rows = (len(metrics) + 1) // 2
    fig = _figure(10, 0.6 + 3.1 * rows)
    axes = fig.subplots(rows, 2, squeeze=False)
    for ax in axes.flat[len(metrics):]:
        ax.set_visible(False)
    width = 0.8 / max(1, len(allocs))
    x = np.arange(len(groups))
    for ax, m in zip(axes.flat, metrics, strict=False):
        factor = 100.0 if m.kind == "share" else 1.0 / unit[0] if m.kind == "duration" else 1.0
        for k, alloc in enumerate(allocs):
            vals, errs = [], []
            for g in groups:
                r = sub.filter((pl.col("_group") == g) & (pl.col("allocator") == alloc))
                v = r[m.column][0] if r.height and m.column in r.columns else None
                e = r[f"{m.column}_sd"][0] if r.height and f"{m.column}_sd" in r.columns else None
                vals.append(np.nan if v is None else v * factor)
                errs.append(0.0 if e is None or not math.isfinite(e) else e * factor)
            ax.bar(x + (k - (len(allocs) - 1) / 2) * width, vals, width, label=alloc,
                   color=_PALETTE[k % len(_PALETTE)], edgecolor="white",
                   **({"yerr": errs, "capsize": 3} if several else {}))
        ax.set_title(f"{_titled(m, unit)}, {m.better} is better", fontsize=10)
        ax.set_xticks(x, [g.replace(" (", "\n(") for g in groups], fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, title="allocator", fontsize=8, title_fontsize=8, loc="outside lower center",
               ncols=min(len(allocs), 6))
    seeds = sorted(set(sub["seeds"].to_list()))
    how = (f"mean over {'/'.join(map(str, seeds))} seeds (error bars: standard deviation)" if several
           else "one deterministic run each (no error bars)")
    fig.suptitle(f"{workload}: {how}", fontsize=11)
    _fit_ticks(fig, [ax for ax in axes.flat if ax.get_visible()])
    _save(fig, path)
    return fig


def _labels_in_order(sub: pl.DataFrame) -> list[str]:
    return list(dict.fromkeys(sub["label"].to_list()))


def wait_cdf_figure(results: Path, runs: pl.DataFrame, summary: pl.DataFrame, workload: str, path: Path):
    """CDF of the waiting time of every replayed job, all seeds pooled, one line a label
    (colour: scheduler, line style: allocator; legend beside the plot).  Returns the figure."""
    sub = _with_group(summary.filter(pl.col("workload") == workload))
    scale, unit = _unit_of(sub, headline_metrics(sub))
    groups = list(dict.fromkeys(sub["_group"].to_list()))
    allocs = list(dict.fromkeys(sub["allocator"].to_list()))
    fig = _figure(10, 4.8)
    ax = fig.subplots()
    probs = np.linspace(0.0, 1.0, 1001)
    curves, top = [], 0.0
    for r in sub.iter_rows(named=True):
        paths = runs.filter(
            (pl.col("workload") == workload) & (pl.col("status") == "ok") & (pl.col("scheduler") == r["scheduler"])
            & (pl.col("allocator") == r["allocator"]) & (pl.col("predictor") == r["predictor"])
        )["jobs_path"].to_list()
        files = [results / p for p in paths if (results / p).is_file()]
        if not files:
            continue
        waits = (
            pl.read_parquet(files, columns=["wait", "status"])
            .filter(pl.col("status") == "replayed")["wait"]
            .drop_nulls()
            .to_numpy()
            .astype(np.float64)
        )
        if waits.size == 0:
            continue
        q = np.quantile(waits, probs)
        top = max(top, float(np.quantile(waits, 0.99)))
        curves.append((r["label"], q, (groups.index(r["_group"]), allocs.index(r["allocator"]))))
    for label, q, (g, a) in curves:  # colour: scheduler; line style: allocator
        ax.plot(q / scale, probs, label=label, color=_PALETTE[g % len(_PALETTE)], linewidth=1.6, **_line_style(a))
    if top > 0:
        ax.set_xlim(0, top / scale * 1.05)
    ax.set_ylim(0, 1.0)
    ax.set_xlabel(f"wait ({unit}); axis cut at the 99th percentile")
    ax.set_ylabel("share of jobs that waited at most x")
    ax.grid(alpha=0.3)
    if curves:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncols=1 if len(curves) <= 16 else 2,
                  title="scheduler+allocator", title_fontsize=8)
    ax.set_title(f"{workload}: distribution of waiting times (all seeds)", fontsize=11)
    _save(fig, path)
    return fig


def _downsample(t: np.ndarray, q: np.ndarray, points: int = 3000) -> tuple[np.ndarray, np.ndarray]:
    if t.size <= points:
        return t, q
    edges = np.linspace(t[0], t[-1], points + 1)
    idx = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, points - 1)
    sums = np.bincount(idx, weights=q, minlength=points)
    counts = np.bincount(idx, minlength=points)
    keep = counts > 0
    return edges[:-1][keep], sums[keep] / counts[keep]


def queue_figure(results: Path, runs: pl.DataFrame, summary: pl.DataFrame, workload: str, path: Path) -> int | None:
    """Queue length over time, first seed, one panel a scheduler (and predictor), one
    line an allocator.  Returns the seed shown."""
    sub = summary.filter(pl.col("workload") == workload)
    ok = runs.filter((pl.col("workload") == workload) & (pl.col("status") == "ok"))
    seeds = sorted(s for s in ok["seed"].unique().to_list() if s is not None)
    seed = seeds[0] if seeds else None
    panels = list(dict.fromkeys((r["scheduler"], r["predictor"]) for r in sub.iter_rows(named=True)))
    multi_pred = sub["label"].str.contains(r"\(").any()
    allocs = list(dict.fromkeys(sub["allocator"].to_list()))
    fig = _figure(9, 1.0 + 2.0 * len(panels))
    axes = np.atleast_1d(fig.subplots(len(panels), 1, sharex=True, sharey=True, squeeze=False)[:, 0])
    span_h = 0.0
    for ax, (sched, pred) in zip(axes, panels, strict=True):
        for k, alloc in enumerate(allocs):
            sel = ok.filter((pl.col("scheduler") == sched) & (pl.col("allocator") == alloc) & (pl.col("predictor") == pred))
            if seed is not None:
                sel = sel.filter(pl.col("seed") == seed)
            if sel.height == 0 or not (results / sel["timeline_path"][0]).is_file():
                continue
            tl = pl.read_parquet(results / sel["timeline_path"][0], columns=["time", "queue"])
            if tl.height == 0:
                continue
            t = tl["time"].to_numpy().astype(np.float64)
            t = (t - t[0]) / 3600.0
            t, q = _downsample(t, tl["queue"].to_numpy().astype(np.float64))
            span_h = max(span_h, float(t[-1]))
            ax.step(t, q, where="post", label=alloc, color=_PALETTE[k % len(_PALETTE)], linewidth=1.1,
                    alpha=0.85, **_line_style(k))
        ax.set_ylabel("jobs waiting", fontsize=9)
        ax.set_title(f"{sched}" + (f" ({pred})" if multi_pred else ""), fontsize=10, loc="left")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(title="allocator", fontsize=8, title_fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axes[-1].set_xlabel("hours since the first event")
    if span_h > 0:
        axes[-1].set_xlim(0, span_h)
    fig.suptitle(f"{workload}: queue length over time" + (f" (seed {seed})" if seed is not None else ""), fontsize=11)
    _save(fig, path)
    return seed


def throughput_figure(summary: pl.DataFrame, path: Path):
    """Simulator throughput per label and workload (log scale)."""
    workloads = list(dict.fromkeys(summary["workload"].to_list()))
    labels = list(dict.fromkeys(summary["label"].to_list()))
    fig = _figure(12, 4.6)
    axes = fig.subplots(1, 2)
    width = 0.8 / max(1, len(labels))
    x = np.arange(len(workloads))
    for ax, m in zip(axes, THROUGHPUT, strict=True):
        for k, label in enumerate(labels):
            vals = []
            for w in workloads:
                r = summary.filter((pl.col("workload") == w) & (pl.col("label") == label))
                v = r[m.column][0] if r.height else None
                vals.append(np.nan if v is None or v <= 0 else v)
            ax.bar(x + (k - (len(labels) - 1) / 2) * width, vals, width, label=label,
                   color=_PALETTE[k % len(_PALETTE)], edgecolor="white")
        ax.set_yscale("log")
        ax.set_xticks(x, workloads, fontsize=8)
        ax.set_title(f"{m.title} (higher is faster)", fontsize=10)
        ax.grid(axis="y", alpha=0.3, which="both")
        ax.set_axisbelow(True)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, fontsize=7, loc="outside right upper", title="scheduler+allocator", title_fontsize=7,
               ncols=1 if len(labels) <= 24 else 2)
    fig.suptitle("Simulator throughput, mean over seeds", fontsize=11)
    _fit_ticks(fig, list(axes))
    _save(fig, path)
    return fig


# -- the report -----------------------------------------------------------------------------


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


ACCOUNT_COLUMNS = 6
"""The accounts (most jobs first) whose mean wait the fairness table shows."""


def accounts_table(results: Path, runs: pl.DataFrame, summary: pl.DataFrame, workload: str
                   ) -> tuple[list[str], list[list[str]], list[list[bool]]] | None:
    """Fairness across accounts (Steffen; summary.json's ``fairness`` block), mean over
    seeds: per scheduler+allocator, Jain's index of delivered over allocated shares, the
    worst account's mean wait and the mean wait of the :data:`ACCOUNT_COLUMNS` accounts
    with the most jobs.  None when the workload has fewer than two accounts."""
    sub = summary.filter(pl.col("workload") == workload)
    ok = runs.filter((pl.col("workload") == workload) & (pl.col("status") == "ok"))
    label_of = {(x["scheduler"], x["allocator"], x["predictor"]): x["label"] for x in sub.iter_rows(named=True)}
    per_label: dict[str, list[tuple[float | None, dict]]] = {}  # label -> [(Jain's index, accounts)] per seed
    jobs_of: dict[str, int] = {}
    by = "account"
    for r in ok.iter_rows(named=True):
        path = results / "runs" / str(r["run_id"]) / "summary.json"
        try:
            fairness = json.loads(path.read_text()).get("fairness") or {}
        except (OSError, ValueError):
            continue
        accounts = fairness.get("accounts") or {}
        by = fairness.get("by", by)
        label = label_of.get((r["scheduler"], r["allocator"], r["predictor"]))
        if label is None:
            continue
        per_label.setdefault(label, []).append((fairness.get("jain_delivered_vs_allocated"), accounts))
        for a, v in accounts.items():
            jobs_of[a] = max(jobs_of.get(a, 0), int(v.get("jobs") or 0))
    if len(jobs_of) < 2:
        return None
    shown = sorted(jobs_of, key=lambda a: (-jobs_of[a], a))[:ACCOUNT_COLUMNS]

    def mean(values):
        vals = [v for v in values if v is not None]
        return sum(vals) / len(vals) if vals else None

    rows = []
    for label in _labels_in_order(sub):
        seeds = per_label.get(label, [])
        worst = mean([max((v["wait_mean"] for v in accounts.values() if v.get("wait_mean") is not None), default=None)
                      for _, accounts in seeds])
        rows.append([label, mean([jain for jain, _ in seeds]), worst]
                    + [mean([accounts.get(a, {}).get("wait_mean") for _, accounts in seeds]) for a in shown])
    unit = duration_unit(max((v for r in rows for v in r[2:] if v is not None), default=0.0))
    header = ["scheduler+allocator", "Jain's index (delivered/allocated share)", f"worst account mean wait ({unit[1]})"] + [
        f"{by} {a} mean wait ({unit[1]}; {jobs_of[a]:,} jobs)" for a in shown]
    better = ["higher"] + ["lower"] * (len(header) - 2)
    bests = [_best([r[i + 1] for r in rows], b) for i, b in enumerate(better)]
    cells = [[r[0], "–" if r[1] is None else f"{r[1]:.3f}"] + [fmt(v, "duration", unit) for v in r[2:]] for r in rows]
    flags = [[False] + [v is not None and b is not None and math.isclose(v, b, rel_tol=1e-9, abs_tol=1e-12)
                        for v, b in zip(r[1:], bests, strict=True)] for r in rows]
    return header, cells, flags


def _describe_source(row: dict) -> str:
    if row.get("generator"):
        params = json.loads(row.get("params") or "{}")
        text = ", ".join(f"{k} = {v}" for k, v in params.items())
        return f"generator {row['generator']}" + (f" ({text})" if text else "")
    text = f"trace {Path(str(row.get('trace'))).name}"
    return text + (f", first {row['limit']:,} jobs" if row.get("limit") else "")


def _highlights(summary: pl.DataFrame, workload: str) -> list[str]:
    sub = summary.filter(pl.col("workload") == workload)
    metrics = headline_metrics(sub)
    unit = _unit_of(sub, metrics)

    def shown(value, kind):
        text = fmt(value, kind, unit)
        return f"{text} {unit[1]}" if kind == "duration" else text

    out = []
    for m in metrics:
        vals = sub[m.column].to_list()
        best = _best(vals, m.better)
        if best is None:
            continue
        winners = [lab for lab, v in zip(sub["label"], vals, strict=True)
                   if v is not None and math.isclose(v, best, rel_tol=1e-9, abs_tol=1e-12)]
        worst = _best(vals, "higher" if m.better == "lower" else "lower")
        phrase = "lowest" if m.better == "lower" else "highest"
        if len(winners) == len(vals) and len(vals) > 1:
            out.append(f"{m.title}: the same for every pair ({shown(best, m.kind)})")
            continue
        line = f"{phrase} {m.title}: {', '.join(winners)} ({shown(best, m.kind)}"
        if worst is not None and len(winners) < len(vals):
            line += f"; worst {shown(worst, m.kind)}"
        out.append(line + ")")
    return out


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
        first = ok.filter(pl.col("workload") == workload).row(0, named=True)
        w_ok = ok.filter(pl.col("workload") == workload)
        seeds = sorted(s for s in w_ok["seed"].unique().to_list() if s is not None)
        span_unit = duration_unit(w_ok["makespan"].max())
        described = [d for d in w_ok["description"].drop_nulls().to_list()] if "description" in w_ok.columns else []
        facts = [("why", described[-1])] if described else []
        facts += [
            ("workload", _describe_source(first)),
            ("machine", str(first.get("machine"))),
            ("jobs", f"{int(first['jobs_input']):,} submitted, {int(w_ok['jobs_replayed'].mean()):,} replayed on average"),
            ("seeds", ", ".join(map(str, seeds)) if seeds else "none (a trace replay is deterministic)"),
            ("makespan", f"{fmt(w_ok['makespan'].min(), 'duration', span_unit)} to "
                         f"{fmt(w_ok['makespan'].max(), 'duration', span_unit)} {span_unit[1]}"),
        ]
        sec = Section(workload, header, cells, flags, facts, _highlights(summary, workload))
        slug = _slug(workload)
        bars = figdir / f"{slug}-metrics.png"
        bars_figure(summary, workload, bars)
        sec.figures.append((bars.relative_to(outdir).as_posix(),
                            "Headline metrics per scheduler (groups) and allocator (colours), mean over seeds."))
        cdf = figdir / f"{slug}-wait-cdf.png"
        wait_cdf_figure(results, runs, summary, workload, cdf)
        sec.figures.append((cdf.relative_to(outdir).as_posix(),
                            "Cumulative distribution of waiting times: the higher and further left a line, the "
                            "shorter jobs waited (colour: scheduler, line style: allocator; equal "
                            "schedules draw coinciding lines)."))
        queue = figdir / f"{slug}-queue.png"
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
    names = {
        "scheduler": sorted(set(ok["scheduler"]), key=lambda n: _order_key(SCHEDULERS, n)),
        "allocator": sorted(set(ok["allocator"]), key=lambda n: _order_key(ALLOCATORS, n)),
        "predictor": sorted(set(ok["predictor"]), key=lambda n: _order_key(PREDICTORS, n)),
    }
    used = [m for sec in sections for m in headline_metrics(summary.filter(pl.col("workload") == sec.workload))]
    return {
        "names": names, "metrics": tuple(dict.fromkeys(sorted(used, key=_glossary_rank))),
        "summary": summary, "sections": sections, "meta": meta, "failed": failed,
        "throughput": tp, "throughput_figure": tput.relative_to(outdir).as_posix(),
    }


def _glossary_rank(m: Metric) -> int:
    """A metric's place in the glossary: that of METRICS, each utilisation at utilisation's."""
    columns = [x.column for x in METRICS]
    if m.column.startswith("utilisation_"):
        return columns.index("utilisation")
    return columns.index(m.column)


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
        parts.append(f'<h2 id="{e(_slug(sec.workload))}">{e(sec.workload)}</h2>')
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
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_report(results: str | os.PathLike, outdir: str | os.PathLike) -> dict:
    """Write ``report.md``, ``report.html`` and ``figures/*.png`` into ``outdir``; returns
    the data of :func:`build` plus ``paths``."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    data = build(results, outdir)
    md = outdir / "report.md"
    page = outdir / "report.html"
    _write_text(md, render_markdown(data))
    _write_text(page, render_html(data, outdir))
    data["paths"] = {"markdown": md, "html": page, "figures": sorted((outdir / "figures").glob("*.png"))}
    return data


def text_summary(data: dict) -> str:
    """The summary tables as plain text (markdown), one per workload, then throughput."""
    out = []
    for sec in data["sections"]:
        out += [f"## {sec.workload} ({dict(sec.facts)['machine']})", markdown_table(sec.header, sec.cells), ""]
    return "\n".join(out).rstrip() + "\n"
