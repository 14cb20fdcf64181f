"""What a replay writes: ``jobs.parquet``, ``timeline.parquet`` and ``summary.json``.

``jobs.parquet`` has one row per input job, in input order (sorted by submit, id):
job_id, submit, start, end, wait, run, size (units), cores, gpus, mics, mem (per unit,
MiB), estimate, pred, user, group, queue, nodes_used, status, scheduler, allocator; start,
end, wait and pred are null for jobs that did not run.  ``timeline.parquet`` has one row
per decision instant: time, queue (jobs waiting after the pass), running, used_cores,
used_gpus, used_mics, used_mem.  Files are written to temporary names and renamed, and
Parquet is written without timestamps, so equal replays give byte-identical files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import polars as pl

from . import __version__, metrics
from .machine import RESOURCE_NAMES
from .replay import STATUS_NAMES, ReplayResult, Status


def _status_strings(status: np.ndarray) -> pl.Series:
    codes = pl.Series("status", status)
    return codes.replace_strict(list(range(len(STATUS_NAMES))), list(STATUS_NAMES), return_dtype=pl.String)


def jobs_frame(result: ReplayResult) -> pl.DataFrame:
    """The ``jobs.parquet`` frame.  Integer columns share memory with the result's and
    the table's numpy arrays where they can (polars wraps contiguous int64 arrays without
    copying); only ``wait``, the null masks and the string columns are new."""
    t = result.table
    n = t.n_jobs
    idle = np.flatnonzero(result.start < 0)

    def col(name: str, values: np.ndarray) -> pl.Series:
        return pl.Series(name, values, dtype=pl.Int64)

    def masked(name: str, values: np.ndarray) -> pl.Series:
        s = col(name, values)
        return s.scatter(idle, None) if idle.size else s

    wait = result.start - t.submit
    return pl.DataFrame(
        [
            col("job_id", t.job_id),
            col("submit", t.submit),
            masked("start", result.start),
            masked("end", result.end),
            masked("wait", wait),
            col("run", t.run),
            col("size", t.units),
            col("cores", t.unit_cores),
            col("gpus", t.unit_gpus),
            col("mics", t.unit_mics),
            col("mem", t.unit_mem),
            col("estimate", t.estimate),
            masked("pred", result.pred),
            col("user", t.user),
            col("group", t.group),
            col("queue", t.queue),
            col("nodes_used", result.nodes_used),
            _status_strings(result.status),
            pl.repeat(result.scheduler, n, dtype=pl.String, eager=True).alias("scheduler"),
            pl.repeat(result.allocator, n, dtype=pl.String, eager=True).alias("allocator"),
        ]
    )


def timeline_frame(result: ReplayResult) -> pl.DataFrame:
    tl = result.timeline
    cols = {"time": tl["time"], "queue": tl["queue"], "running": tl["running"]}
    for k, name in enumerate(RESOURCE_NAMES):
        cols[f"used_{name}"] = tl["used"][:, k]
    return pl.DataFrame(cols, schema={c: pl.Int64 for c in cols})


def machine_totals(result: ReplayResult) -> dict:
    tot = result.machine.totals
    return {name: int(tot[k]) for k, name in enumerate(RESOURCE_NAMES)}


def summarize(result: ReplayResult, jobs: pl.DataFrame, timeline: pl.DataFrame) -> dict:
    counts = {name: int(np.count_nonzero(result.status == s)) for s, name in zip(Status, STATUS_NAMES, strict=True)}
    replayed = counts["replayed"]
    return {
        "label": result.label,
        "scheduler": result.scheduler,
        "allocator": result.allocator,
        "predictor": result.predictor,
        "machine": result.machine.spec,
        "machine_note": result.machine.note,
        "jobs_input": int(result.table.n_jobs),
        "jobs_replayed": replayed,
        "jobs_dropped": {k: v for k, v in counts.items() if k.startswith("dropped")},
        "jobs_not_started": counts["not_started"],
        "passes": int(result.passes),
        "metrics": metrics.summary(jobs, timeline, machine_totals(result)),
        "timings": {
            "simulate_s": result.simulate_s,
            "jobs_per_s": replayed / result.simulate_s if result.simulate_s > 0 else None,
        },
        "schedbench_version": __version__,
    }


def _write_parquet(df: pl.DataFrame, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    df.write_parquet(tmp, compression="zstd", compression_level=1, statistics=True)
    os.replace(tmp, path)


def write_run(result: ReplayResult, outdir: str | os.PathLike, timings: dict | None = None, extra: dict | None = None) -> dict:
    """Write the three files of a run into ``outdir`` (created) and return the summary."""
    import time

    t0 = time.perf_counter()
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    jobs = jobs_frame(result)
    timeline = timeline_frame(result)
    _write_parquet(jobs, outdir / "jobs.parquet")
    _write_parquet(timeline, outdir / "timeline.parquet")
    summary = summarize(result, jobs, timeline)
    summary["timings"].update(timings or {})
    summary["timings"]["write_s"] = time.perf_counter() - t0
    summary.update(extra or {})
    tmp = outdir / ".summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=2, sort_keys=False) + "\n")
    os.replace(tmp, outdir / "summary.json")
    return summary
