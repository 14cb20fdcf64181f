"""Views of replay output folders (``schedbench replay ... -o DIR``): a comparison of
several runs and a Gantt chart of one.

* :func:`compare`: one table of the headline metrics of each run's summary.json, the best
  value of each row marked, and (optionally) the runs' wait CDFs overlaid in one figure.
* :func:`gantt`: nodes x time, one rectangle per block of consecutive nodes of each job's
  allocation (allocations.parquet), coloured by user, account (group), job or decision
  (in submit order or jumped ahead); at most :data:`MAX_RECTANGLES` rectangles, else a
  usage error that names a smaller window.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import numpy as np

from ..errors import DataError, UsageError
from ..io.aside import written_aside

COLOURS = ("user", "account", "job", "decision")
# (summary key, label, better: "lower" | "higher")
METRICS = [
    ("jobs_replayed", "jobs replayed", "higher"),
    ("wait_mean", "wait mean (s)", "lower"),
    ("wait_median", "wait median (s)", "lower"),
    ("wait_p95", "wait p95 (s)", "lower"),
    ("wait_p99", "wait p99 (s)", "lower"),
    ("wait_max", "wait max (s)", "lower"),
    ("bsld_mean", "bounded slowdown (10 s)", "lower"),
    ("utilisation_cores", "core utilisation", "higher"),
    ("utilisation_gpus", "GPU utilisation", "higher"),
    ("utilisation_mics", "MIC utilisation", "higher"),
    ("soner_utilisation", "Soner utilisation", "higher"),
    ("makespan", "makespan (s)", "lower"),
    ("queue_mean", "mean queue length", "lower"),
    ("worst_account_wait_mean", "worst account mean wait (s)", "lower"),
    ("jain_accounts", "Jain index over accounts", "higher"),
]


def _summary(run: Path) -> dict:
    path = run / "summary.json"
    if not path.is_file():
        raise DataError(f"{run}: not a replay output folder (no summary.json)")
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: unreadable summary ({exc})") from None


def figure_format(out: str | os.PathLike) -> str:
    """The format the figure ``out`` is written in, checked before any work: its suffix's,
    or PNG for a name without one (written under that name: matplotlib would add '.png'
    while the command said it wrote ``out``).  A suffix matplotlib cannot write is a
    :class:`UsageError`, a folder an :class:`IsADirectoryError`."""
    from matplotlib.backend_bases import FigureCanvasBase

    out = Path(out)
    if out.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", str(out))
    suffix = out.suffix[1:].lower()
    if not suffix:
        return "png"
    known = FigureCanvasBase.get_supported_filetypes()
    if suffix not in known:
        raise UsageError(f"{out}: cannot draw a .{suffix} file (give a name ending in .png, or "
                         f"{', '.join('.' + k for k in sorted(known) if k != 'png')})")
    return suffix


def _save(fig, out: str | os.PathLike, fmt: str) -> None:
    """``fig`` into ``out`` under a temporary name, then renamed: a failed or interrupted
    write leaves no half figure (nor an older one half overwritten)."""
    with written_aside(Path(out)) as tmp:
        fig.savefig(tmp, dpi=110, format=fmt)


def compare(runs: list[str | os.PathLike]) -> str:
    """A Markdown table: one column per run (labelled by its folder name and
    scheduler+allocator), one row per metric, the best value of each row in bold."""
    if len(runs) < 1:
        raise UsageError("compare needs at least one replay output folder")
    from .report.model import best
    from .report.render import markdown_table

    paths = [Path(r) for r in runs]
    summaries = [_summary(p) for p in paths]
    header = ["metric"] + [f"{p.name} ({s['label']})" for p, s in zip(paths, summaries, strict=True)]
    cells, flags = [], []
    for key, label, better in METRICS:
        values = [s["metrics"].get(key, s["metrics"].get("utilisation") if key == "utilisation_cores" else s.get(key))
                  for s in summaries]  # (older summaries have cores' utilisation only)
        if key.startswith("utilisation_") and all(v is None for v in values):
            continue  # a resource type none of the machines has
        top = best(values, better) if sum(v is not None for v in values) > 1 else None
        cells.append([f"{label} ({better} is better)"] + [
            "-" if v is None else (f"{v:,.3f}" if isinstance(v, float) and abs(v) < 10 else f"{v:,.0f}")
            for v in values])
        flags.append([False] + [v is not None and v == top for v in values])
    return markdown_table(header, cells, flags) + "\n"


def wait_cdfs(runs: list[str | os.PathLike], out: str | os.PathLike) -> None:
    """The runs' wait CDFs (replayed jobs) in one PNG figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import polars as pl

    from .report.model import read_run_file

    fmt = figure_format(out)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for r in runs:
        run = Path(r)
        label = f"{run.name} ({_summary(run)['label']})"
        jobs = read_run_file(run / "jobs.parquet", ["status", "wait"]).filter(pl.col("status") == "replayed")
        w = np.sort(jobs["wait"].to_numpy())
        if w.size:
            ax.step(np.maximum(w, 1), np.arange(1, w.size + 1) / w.size, where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("wait (s; 0 shown at 1 s)")
    ax.set_ylabel("fraction of jobs")
    ax.set_title("Wait CDF")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    _save(fig, out, fmt)
    plt.close(fig)


MAX_RECTANGLES = 20_000
"""The most rectangles :func:`gantt` draws: about what a 10-inch figure at 110 dpi can
show (1,100 pixels across), and drawn in seconds; a whole 77,000-job log (hundreds of
thousands of node blocks) ran for 20 minutes and showed none of them."""


def gantt(run: str | os.PathLike, out: str | os.PathLike, t_from: int | None = None, t_to: int | None = None,
          colour: str = "user", max_rectangles: int = MAX_RECTANGLES) -> int:
    """Draw nodes x time of the run in ``run`` into the PNG ``out``: every job that ran in
    [t_from, t_to) (default: the whole run), one rectangle per block of consecutive nodes
    of its allocation, coloured by ``colour``: "user", "account" (the SWF group), "job"
    or "decision" (whether the job started before a job submitted earlier, i.e. jumped
    ahead by backfilling or by a window's choice, or in submit order).  The ten largest
    (by node-seconds) get their own colour and a legend entry, the others grey.  More
    than ``max_rectangles`` rectangles is a usage error whose hint names a window that
    holds fewer (nothing is drawn).  Returns the number of jobs drawn."""
    import polars as pl

    from .report.model import read_run_file

    if colour not in COLOURS:
        raise UsageError(f"--colour must be one of {', '.join(COLOURS)}, not {colour!r}")
    fmt = figure_format(out)
    run = Path(run)
    summary = _summary(run)
    jobs = read_run_file(run / "jobs.parquet", ["job_id", "submit", "status", "start", "end", "user", "group"])
    jobs = jobs.filter(pl.col("status") == "replayed").sort("submit", "job_id")
    # a job "jumped ahead" when some job submitted before it started after it (backfill)
    earlier_max = jobs["start"].cum_max().shift(1, fill_value=-1)
    jobs = jobs.with_columns(decision=pl.when(pl.col("start") < earlier_max).then(pl.lit("jumped ahead"))
                             .otherwise(pl.lit("in submit order")), job=pl.col("job_id"),
                             account=pl.col("group"))
    key = colour
    lo = int(jobs["start"].min()) if t_from is None and jobs.height else (t_from or 0)
    hi = int(jobs["end"].max()) if t_to is None and jobs.height else (t_to or 1)
    if hi <= lo:
        raise UsageError(f"--to ({hi}) must be after --from ({lo})")
    jobs = jobs.filter((pl.col("start") < hi) & (pl.col("end") > lo))
    alloc = (read_run_file(run / "allocations.parquet", ["job_id", "node", "units"])
             .join(jobs.select("job_id", "start", "end", key), on="job_id").sort("job_id", "node"))
    # One rectangle per block of consecutive nodes of a job: a block starts where the job
    # changes or the node is not the previous one + 1.
    new_block = (pl.col("job_id") != pl.col("job_id").shift(1)) | (pl.col("node") != pl.col("node").shift(1) + 1)
    blocks = (alloc.with_columns(block=new_block.fill_null(True).cum_sum())
              .group_by("block", maintain_order=True)
              .agg(pl.col("job_id", "start", "end", key).first(), pl.col("node").min().alias("y"),
                   pl.len().alias("height")))
    if blocks.height > max_rectangles:
        first = blocks.sort("start")["start"]
        to = max(int(first[max_rectangles]), lo + 1)
        raise UsageError(
            f"{run}: {blocks.height:,} rectangles ({jobs.height:,} jobs) in [{lo}, {hi}) are more than a figure "
            f"can show (at most {max_rectangles:,}); draw a window, e.g. --from {lo} --to {to}, "
            f"or raise --max-rectangles")
    _draw_gantt(run, summary, alloc, blocks, key, colour, lo, hi, out, fmt)
    return jobs.height


def _draw_gantt(run: Path, summary: dict, alloc, blocks, key: str, colour: str, lo: int, hi: int, out,
                fmt: str) -> None:
    """The figure of :func:`gantt`: ``blocks`` (start, end, y, height, ``key``) as one
    collection of rectangles, the ten largest ``key`` values by node-seconds coloured."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import polars as pl
    from matplotlib.collections import PolyCollection

    busiest = (alloc.with_columns(area=(pl.col("end") - pl.col("start")) * pl.col("units"))
               .group_by(key).agg(pl.col("area").sum()).sort(["area", key], descending=[True, False])
               .head(10)[key].to_list())
    cmap = plt.get_cmap("tab10")
    colours = {who: cmap(i) for i, who in enumerate(busiest)}
    scale, unit = (86400.0, "days") if hi - lo > 3 * 86400 else ((3600.0, "hours") if hi - lo > 3 * 3600 else (1.0, "s"))
    fig, ax = plt.subplots(figsize=(10, 4.5))
    a = np.maximum(blocks["start"].to_numpy(), lo).astype(np.float64)
    b = np.minimum(blocks["end"].to_numpy(), hi).astype(np.float64)
    x0 = (a - lo) / scale
    x1 = x0 + np.maximum(b - a, 1) / scale
    y0 = blocks["y"].to_numpy().astype(np.float64)
    y1 = y0 + blocks["height"].to_numpy()
    verts = np.stack([np.column_stack(c) for c in ((x0, y0), (x0, y1), (x1, y1), (x1, y0))], axis=1)
    grey = (0.7, 0.7, 0.7, 1.0)
    faces = [colours.get(who, grey) for who in blocks[key].to_list()]
    ax.add_collection(PolyCollection(verts, facecolors=faces, edgecolors="none", linewidths=0))
    ax.set_xlim(0, max((hi - lo) / scale, float(x1.max()) if x1.size else 0.0))
    for who in busiest:
        ax.plot([], [], color=colours[who], linewidth=8, label=str(who) if colour == "decision" else f"{colour} {who}")
    ax.set_xlabel(f"time since {lo} s ({unit})")
    ax.set_ylabel("node")
    ax.set_ylim(0, int(alloc["node"].max()) + 1 if alloc.height else 1)
    ax.set_title(f"{run.name}: {summary['label']} on {summary['machine']}")
    if busiest:
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    _save(fig, out, fmt)
    plt.close(fig)
