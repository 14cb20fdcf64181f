"""The report's figures (matplotlib, Agg, no screen): grouped bars of the headline
metrics (with the seed-to-seed standard deviation as error bars when a row has several
seeds), the CDF of the waiting times (all jobs of all seeds), the queue length over time
(first seed) and the simulator's throughput.

Colours: one per scheduler; line styles and bar colours: one per allocator.  Durations
are in the workload's one unit (:func:`schedbench.analysis.report.model.unit_of`).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl

from .model import THROUGHPUT, headline_metrics, metric_unit, read_run_file, titled, unit_of

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
    unit = unit_of(sub, metrics)
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
        m_unit = metric_unit(m, sub, unit)
        factor = 100.0 if m.kind == "share" else 1.0 / m_unit[0] if m.kind == "duration" else 1.0
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
        ax.set_title(f"{titled(m, m_unit)}, {m.better} is better", fontsize=10)
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


def wait_cdf_figure(results: Path, runs: pl.DataFrame, summary: pl.DataFrame, workload: str, path: Path):
    """CDF of the waiting time of every replayed job, all seeds pooled, one line a label
    (colour: scheduler, line style: allocator; legend beside the plot).  Returns the figure."""
    sub = _with_group(summary.filter(pl.col("workload") == workload))
    scale, unit = unit_of(sub, headline_metrics(sub))
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
            pl.concat([read_run_file(f, ["wait", "status"]) for f in files])
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
            tl = read_run_file(results / sel["timeline_path"][0], ["time", "queue"])
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
