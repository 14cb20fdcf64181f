"""What a replay writes: ``jobs.parquet``, ``allocations.parquet``, ``timeline.parquet``
and ``summary.json``.

``jobs.parquet`` has one row per input job, in input order (sorted by submit, id):
job_id, submit, start, end, wait, run, size (units), cores, gpus, mics, mem (per unit,
MiB), estimate, pred, user, group, queue, nodes_used, status, scheduler, allocator, and
the shape of the job's allocation (Soner & Özturan §6): ``nodes`` (the node indices it ran
on, ascending), ``fragments`` (blocks of consecutive node indices), ``spread`` ((last -
first + 1) / nodes_used) and ``packing`` (nodes_used / the fewest nodes of the empty
machine that could host the request); start, end, wait, pred and the allocation columns
are null for jobs that did not run.  ``allocations.parquet`` has one row per (job, node)
of every started job: job_id, node (index in the machine, 0-based, the order of the
machine spec or node file), units (the job's units on that node; the resources are units
times the per-unit request), in input order and allocation order.  ``timeline.parquet``
has one row per decision instant: time, queue (jobs waiting after the pass), running,
used_cores, used_gpus, used_mics, used_mem.  Files are written to temporary names and
renamed, and Parquet is written without timestamps, so equal replays give byte-identical
files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa

from . import __version__, metrics
from .layout import request_matrix
from .machine import RESOURCE_NAMES
from .prepare import STATUS_NAMES, ReplayResult, Status


def _status_strings(status: np.ndarray) -> pl.Series:
    codes = pl.Series("status", status)
    return codes.replace_strict(list(range(len(STATUS_NAMES))), list(STATUS_NAMES), return_dtype=pl.String)


class Allocations(NamedTuple):
    """Every (job, node) row of the started jobs, in input order and allocation order:
    row int64 (k,) (the job's row in the table), node int64 (k,), units int64 (k,);
    offsets int64 (n_started + 1,) delimit each started job's rows; started int64
    (n_started,) are their table rows."""

    row: np.ndarray
    node: np.ndarray
    units: np.ndarray
    offsets: np.ndarray
    started: np.ndarray


def allocations(result: ReplayResult) -> Allocations:
    """The allocation rows of ``result``, gathered from its allocation log."""
    started = np.flatnonzero(result.start >= 0)
    counts = result.nodes_used[started].astype(np.int64)
    offsets = np.zeros(started.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    index = np.repeat(result.alloc_ptr[started] - offsets[:-1], counts) + np.arange(offsets[-1])
    log = result.alloc_log[index]
    return Allocations(
        np.repeat(started, counts), log[:, 0].astype(np.int64), log[:, 1].astype(np.int64), offsets, started
    )


def fewest_nodes(capacity: np.ndarray, units: np.ndarray, req: np.ndarray, req_nodes: np.ndarray) -> np.ndarray:
    """Per job, the fewest nodes of the empty machine ``capacity`` (int64 (m, 4)) that can
    host ``units`` units of the per-unit request ``req`` (int64 (n, 4)): ``req_nodes``
    where the job fixes it, else the count of the best-hosting nodes taken first; 0 for a
    job no empty machine can host.  Computed once per distinct request."""
    out = np.zeros(units.shape[0], dtype=np.int64)
    fixed = req_nodes > 0
    out[fixed] = req_nodes[fixed]
    free = np.flatnonzero(~fixed)
    if free.size == 0:
        return out
    shapes, inverse = np.unique(req[free], axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    for s, shape in enumerate(shapes):
        ask = shape > 0
        if not ask.any():
            continue
        host = np.min(capacity[:, ask] // shape[ask], axis=1)
        reach = np.cumsum(np.sort(host)[::-1])
        rows = free[inverse == s]
        k = np.searchsorted(reach, units[rows], side="left") + 1
        out[rows] = np.where(k <= reach.size, k, 0)
    return out


def allocation_shape(result: ReplayResult, alloc: Allocations) -> dict[str, np.ndarray]:
    """Per started job (rows ``alloc.started``): its nodes in ascending order (flat, with
    ``alloc.offsets``), fragments, spread and packing (see the module docstring)."""
    order = np.lexsort((alloc.node, alloc.row))
    nodes = alloc.node[order]
    starts = alloc.offsets[:-1]
    count = np.diff(alloc.offsets)
    gaps = np.zeros(nodes.size, dtype=np.int64)
    if nodes.size > 1:
        gaps[1:] = (np.diff(nodes) > 1) & (alloc.row[order][1:] == alloc.row[order][:-1])
    fragments = np.add.reduceat(gaps, starts) + 1 if starts.size else np.zeros(0, np.int64)
    first = nodes[starts] if starts.size else np.zeros(0, np.int64)
    last = nodes[alloc.offsets[1:] - 1] if starts.size else np.zeros(0, np.int64)
    t = result.table
    rows = alloc.started
    fewest = fewest_nodes(result.machine.capacity, t.units[rows], request_matrix(t.take(rows)), t.req_nodes[rows])
    return {
        "nodes": nodes,
        "fragments": fragments.astype(np.int64),
        "spread": (last - first + 1) / np.maximum(count, 1),
        "packing": count / np.maximum(fewest, 1),
    }


def jobs_frame(result: ReplayResult, alloc: Allocations | None = None) -> pl.DataFrame:
    """The ``jobs.parquet`` frame.  Integer columns share memory with the result's and
    the table's numpy arrays where they can (polars wraps contiguous int64 arrays without
    copying); only ``wait``, the null masks and the string columns are new."""
    t = result.table
    n = t.n_jobs
    idle = np.flatnonzero(result.start < 0)

    def col(name: str, values: np.ndarray) -> pl.Series:
        return pl.Series(name, values, dtype=pl.Int64)

    def masked(name: str, values: np.ndarray, dtype=pl.Int64) -> pl.Series:
        s = pl.Series(name, values, dtype=dtype)
        return s.scatter(idle, None) if idle.size else s

    wait = result.start - t.submit
    if alloc is None:
        alloc = allocations(result)
    shape = allocation_shape(result, alloc)

    def per_started(name: str, values: np.ndarray, dtype) -> pl.Series:
        full = np.zeros(n, dtype=values.dtype)
        full[alloc.started] = values
        return masked(name, full, dtype)

    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(result.nodes_used, out=offsets[1:])
    null = np.zeros(n + 1, dtype=np.bool_)
    null[idle] = True  # a null offset makes a null list (a mask argument would import pyarrow.compute)
    node_lists = pa.LargeListArray.from_arrays(
        pa.array(offsets, mask=null if idle.size else None), pa.array(shape["nodes"], type=pa.int64())
    )
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
            pl.Series("nodes", pl.from_arrow(node_lists), dtype=pl.List(pl.Int64)),
            per_started("fragments", shape["fragments"], pl.Int64),
            per_started("spread", shape["spread"], pl.Float64),
            per_started("packing", shape["packing"], pl.Float64),
        ]
    )


def allocations_frame(result: ReplayResult, alloc: Allocations | None = None) -> pl.DataFrame:
    """The ``allocations.parquet`` frame: job_id, node, units per (job, node)."""
    if alloc is None:
        alloc = allocations(result)
    return pl.DataFrame(
        [
            pl.Series("job_id", result.table.job_id[alloc.row], dtype=pl.Int64),
            pl.Series("node", alloc.node, dtype=pl.Int64),
            pl.Series("units", alloc.units, dtype=pl.Int64),
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
        "period": result.options.get("period"),
        "scheduler_options": result.options.get("scheduler_options"),
        "allocator_options": result.options.get("allocator_options"),
        "input_digest": result.options.get("input_digest"),
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
    """Write the four files of a run into ``outdir`` (created) and return the summary."""
    import time

    t0 = time.perf_counter()
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    alloc = allocations(result)
    jobs = jobs_frame(result, alloc)
    timeline = timeline_frame(result)
    _write_parquet(jobs, outdir / "jobs.parquet")
    _write_parquet(allocations_frame(result, alloc), outdir / "allocations.parquet")
    _write_parquet(timeline, outdir / "timeline.parquet")
    summary = summarize(result, jobs, timeline)
    summary["timings"].update(timings or {})
    summary["timings"]["write_s"] = time.perf_counter() - t0
    summary.update(extra or {})
    tmp = outdir / ".summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=2, sort_keys=False) + "\n")
    os.replace(tmp, outdir / "summary.json")
    return summary
