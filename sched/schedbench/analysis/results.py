"""What a replay writes: ``jobs.parquet``, ``allocations.parquet``, ``timeline.parquet``
and ``summary.json``.

``jobs.parquet`` has one row per input job, in input order (sorted by submit, id):
job_id, submit, start, end, wait, run, size (units), cores, gpus, mics, mem (per unit,
MiB), estimate, pred, user, group, queue, nodes_used, status, scheduler, allocator, the
shape of the job's allocation (Soner & Özturan §6): ``nodes`` (nodes used, the same
as nodes_used), ``fragments`` (blocks of consecutive node indices), ``spread`` ((last -
first + 1) / nodes) and ``packing`` (nodes / the fewest nodes of the empty machine that
could host the request), ``killed`` (ended at its request, ``on_overrun`` "kill";
``run`` is then the time it ran), ``log_start`` (the start the input recorded, submit +
the table's ``wait`` where that is >= 0: SWF field 3, sacct's Start; null where the log
gives none) and ``partition`` (the table's partition code); with job dependencies
(``dependencies`` "on"), ``eligible`` after ``submit``: the job's arrival, its
predecessor's end plus its think time, or its submit when it has none (null when it never
arrived), from which its ``wait`` counts; start, end, wait, pred, the
allocation columns and killed are null for jobs that did not run.  ``allocations.parquet`` has one row per (job, node) of every
started job: job_id, node (index in the machine, 0-based, the order of the machine spec
or node file), units (the job's units on that node; the resources are units times the
per-unit request), in the order jobs started and each job's nodes in allocation order.  ``timeline.parquet``
has one row per decision instant: time, queue (jobs waiting after the pass), running,
used_cores, used_gpus, used_mics, used_mem.  Parquet is written without timestamps, so
equal replays give byte-identical files.

A run's folder is written as one unit (:func:`write_run`): its files go into a new hidden
folder beside the destination, which is then renamed into place, so that nothing of an
older run in that folder survives and a failed or interrupted write leaves the older run
whole.  The destination must be new, empty, or a former run's folder
(:func:`schedbench.analysis.run_folder.check_output_folder`, which the command line
calls before replaying).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl

from .. import __version__
from ..io.aside import written_aside
from ..plan.accounts import DEFAULT_FACTOR, account_targets
from ..schema import RESOURCE_NAMES, STATUS_NAMES, ReplayResult, Status
from . import metrics
from .run_folder import check_output_folder, move_into_place


def _status_strings(status: np.ndarray) -> pl.Series:
    codes = pl.Series("status", status)
    return codes.replace_strict(list(range(len(STATUS_NAMES))), list(STATUS_NAMES), return_dtype=pl.String)


def _request_ids(request: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(distinct requests int64 (k, 4), the id of each job's) of the per-unit request
    columns ``request`` (cores, GPUs, MICs, MiB; negatives read as 0), through one int64
    key per job when the values allow it (no (n, 4) copy)."""
    cols = [np.maximum(c, 0) for c in request]
    span = [int(c.max()) + 1 if c.size else 1 for c in cols]
    if float(np.prod(np.array(span, dtype=float))) < 2.0**62:
        key = np.zeros(cols[0].shape[0], dtype=np.int64)
        for c, sp in zip(cols, span, strict=True):
            key *= sp
            key += c
        if key.size and key.min() == key.max():  # one request for every job (most SWF logs): no sort
            return np.stack([c[:1] for c in cols], axis=1), np.zeros(key.size, dtype=np.intp)
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        return np.stack([c[first] for c in cols], axis=1), inverse.reshape(-1)
    shapes, inverse = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)
    return shapes, inverse.reshape(-1)


def fewest_nodes(capacity: np.ndarray, units: np.ndarray, request: tuple[np.ndarray, ...], req_nodes: np.ndarray) -> np.ndarray:
    """Per job, the fewest nodes of the empty machine ``capacity`` (int64 (m, 4)) that can
    host ``units`` units of the per-unit request ``request`` (cores, GPUs, MICs, MiB
    columns): ``req_nodes`` where the job fixes it, else the count of the best-hosting
    nodes taken first; 0 for a job no empty machine can host.  Computed once per
    distinct request."""
    out = np.where(req_nodes > 0, req_nodes, 0).astype(np.int64)
    shapes, inverse = _request_ids(request)
    for s, shape in enumerate(shapes):
        ask = shape > 0
        if not ask.any():
            continue
        host = np.min(capacity[:, ask] // shape[ask], axis=1)
        reach = np.cumsum(np.sort(host)[::-1])
        rows = np.flatnonzero((inverse == s) & (req_nodes <= 0))
        k = np.searchsorted(reach, units[rows], side="left") + 1
        out[rows] = np.where(k <= reach.size, k, 0)
    return out


def _allocation_blocks(log: np.ndarray, ptr: np.ndarray, count: np.ndarray, n_nodes: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fragments, first, last), int64 (n,) each: for every job j with count[j] > 0 nodes
    at log[ptr[j] : + count[j], 0] (log int32 (k, 2); ptr, count int64 (n,); the jobs'
    row ranges do not overlap), its blocks of consecutive node indices and its lowest and
    highest node index; 0, -1, -1 for the others.  ``n_nodes``: the machine's node count.

    Numpy only, so that writing results does not load numba.  The log is read in place
    when every job lists its nodes in ascending order (what the built-in allocators
    write); otherwise each job's rows are gathered and sorted by node first.  A node
    listed twice in a job counts once."""
    n = count.shape[0]
    fragments = np.zeros(n, dtype=np.int64)
    first = np.full(n, -1, dtype=np.int64)
    last = np.full(n, -1, dtype=np.int64)
    jobs = np.flatnonzero(count > 0)
    if not jobs.size:
        return fragments, first, last
    lo = ptr[jobs]  # each job's first and last row
    hi = lo + count[jobs] - 1
    nodes = log[: int(hi.max()) + 1, 0]
    opens = np.zeros(nodes.size, dtype=np.bool_)  # the rows where a job's rows begin
    opens[lo] = True
    step = np.diff(nodes)
    if ((step < 0) & ~opens[1:]).any():  # some job's nodes out of order: sort each job's rows
        k = count[jobs]
        ends = np.cumsum(k)
        rows = np.arange(int(ends[-1]), dtype=np.int64) + np.repeat(lo - (ends - k), k)
        owner = np.repeat(np.arange(jobs.size, dtype=np.int64) * n_nodes, k)
        nodes = np.sort(owner + log[rows, 0]) - owner
        lo, hi = ends - k, ends - 1
        opens = np.zeros(nodes.size, dtype=np.bool_)
        opens[lo] = True
        step = np.diff(nodes)
    # blocks[i]: blocks opened on rows 1 .. i (a new job, or a gap of more than one node)
    blocks = np.concatenate(([0], np.cumsum(opens[1:] | (step > 1))))
    fragments[jobs] = 1 + blocks[hi] - blocks[lo]
    first[jobs] = nodes[lo]
    last[jobs] = nodes[hi]
    return fragments, first, last


def allocation_shape(result: ReplayResult) -> dict[str, np.ndarray]:
    """Per job (int64 or float64 (n,); meaningful for started jobs only): fragments, spread
    and packing (see the module docstring)."""
    count = np.where(result.start >= 0, result.nodes_used, 0).astype(np.int64)
    fragments, first, last = _allocation_blocks(result.alloc_log, np.maximum(result.alloc_ptr, 0), count,
                                                result.machine.n_nodes)
    t = result.table
    request = (t.unit_cores, t.unit_gpus, t.unit_mics, t.unit_mem)
    fewest = fewest_nodes(result.machine.capacity, t.units, request, t.req_nodes)
    return {
        "fragments": fragments,
        "spread": (last - first + 1) / np.maximum(count, 1),
        "packing": count / np.maximum(fewest, 1),
    }


def jobs_frame(result: ReplayResult) -> pl.DataFrame:
    """The ``jobs.parquet`` frame.  Integer columns share memory with the result's and
    the table's numpy arrays where they can (polars wraps contiguous int64 arrays without
    copying); only ``wait``, the null masks and the string columns are new."""
    t = result.table
    n = t.n_jobs
    idle = np.flatnonzero(result.start < 0)

    def col(name: str, values: np.ndarray) -> pl.Series:
        return pl.Series(name, values, dtype=pl.Int64)

    def masked(name: str, values: np.ndarray, dtype=pl.Int64) -> pl.Series:
        """``values`` with nulls where the job did not run."""
        return _with_nulls(name, values, idle, dtype)

    # with job dependencies a job joins the queue at its arrival (``eligible``), which
    # then plays the part of the submit time in every rule of the replay: waits count from it
    arrival = t.submit if result.eligible is None else result.eligible
    wait = result.start - arrival
    shape = allocation_shape(result)
    killed = _killed(result)
    eligible = [] if result.eligible is None else [
        _with_nulls("eligible", result.eligible, np.flatnonzero(result.eligible < 0))]
    return pl.DataFrame(
        [
            col("job_id", t.job_id),
            col("submit", t.submit),
            *eligible,
            masked("start", result.start),
            masked("end", result.end),
            masked("wait", wait),
            col("run", np.where(killed, t.estimate, t.run)),  # a killed job ran its request
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
            masked("nodes", result.nodes_used),
            masked("fragments", shape["fragments"]),
            masked("spread", shape["spread"], pl.Float64),
            masked("packing", shape["packing"], pl.Float64),
            masked("killed", killed, pl.Boolean),
            _log_start(t),
            col("partition", t.partition),
        ]
    )


def _log_start(t) -> pl.Series:
    """The start the input log recorded (submit + its ``wait``), null where the log gives
    no wait (-1, or any negative value): what ``schedbench compare-log`` sets the
    replayed start against."""
    return _with_nulls("log_start", t.submit + t.wait, np.flatnonzero(t.wait < 0))


def _with_nulls(name: str, values: np.ndarray, nulls: np.ndarray, dtype=pl.Int64) -> pl.Series:
    """``values`` as a Series of ``dtype`` with nulls at the indices ``nulls``.  Polars
    sets them itself: ``pyarrow.array(values, mask=...)`` imports pandas, when installed,
    to check the argument's kind (0.1 s of every replay's command line)."""
    s = pl.Series(name, values, dtype=dtype)
    return s.scatter(nulls, None) if nulls.size else s


def _killed(result: ReplayResult) -> np.ndarray:
    """bool (n,): the jobs the replay ended at their request (``on_overrun`` "kill")."""
    if result.killed is None:
        return np.zeros(result.table.n_jobs, dtype=np.bool_)
    return result.killed


ALLOCATIONS_SCHEMA = {"job_id": pl.Int64, "node": pl.Int32, "units": pl.Int32}
_ALLOCATION_ROWS = 1 << 18
"""Rows of allocations.parquet built and written at a time (a row group each)."""


def _allocation_chunks(result: ReplayResult, rows: int):
    """The ``allocations.parquet`` frame in pieces of whole jobs of about ``rows`` rows:
    job_id, node, units per (job, node), in the order jobs started (the allocation log's
    own order)."""
    started = np.flatnonzero(result.start >= 0)
    started = started[np.argsort(result.alloc_ptr[started], kind="stable")]
    counts = result.nodes_used[started]
    ends = np.cumsum(counts)
    first = 0
    while first < started.size:
        base = int(ends[first - 1]) if first else 0
        last = max(first + 1, int(np.searchsorted(ends, base + rows, side="right")))
        log = result.alloc_log[base : int(ends[last - 1])]
        yield pl.DataFrame(
            [
                pl.Series("job_id", np.repeat(result.table.job_id[started[first:last]], counts[first:last])),
                pl.Series("node", np.ascontiguousarray(log[:, 0])),
                pl.Series("units", np.ascontiguousarray(log[:, 1])),
            ],
            schema=ALLOCATIONS_SCHEMA,
        )
        first = last


def allocations_frame(result: ReplayResult) -> pl.DataFrame:
    """The whole ``allocations.parquet`` frame (see :func:`_allocation_chunks`)."""
    chunks = list(_allocation_chunks(result, 1 << 62))
    return chunks[0] if chunks else pl.DataFrame(schema=ALLOCATIONS_SCHEMA)


def _write_allocations(result: ReplayResult, path: Path) -> None:
    """Write allocations.parquet a row group at a time, so that a replay of millions of
    jobs never holds the whole frame in memory.  Without dictionary encoding: job ids
    come in runs and node indices in ascending blocks, which zstd compresses better than
    dictionary indices (HPC2N's 1.29 M rows: 0.73 MB instead of 1.26 MB, written in half
    the time)."""
    import pyarrow.parquet as pq

    schema = pl.DataFrame(schema=ALLOCATIONS_SCHEMA).to_arrow().schema
    with written_aside(path) as tmp, pq.ParquetWriter(tmp, schema, compression="zstd", compression_level=1,
                                                      use_dictionary=False) as writer:
        for chunk in _allocation_chunks(result, _ALLOCATION_ROWS):
            writer.write_table(chunk.to_arrow())


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
    fairness = _fairness(result, jobs)
    waits = [a["wait_mean"] for a in fairness["accounts"].values() if a["wait_mean"] is not None]
    scalars = metrics.summary(jobs, timeline, machine_totals(result))
    scalars["worst_account_wait_mean"] = max(waits) if waits else None
    scalars["jain_accounts"] = fairness["jain_delivered_vs_allocated"]
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
        "jobs_rejected_by_limit": counts["rejected_by_limit"],
        "jobs_never_started": counts["never_started"],
        "jobs_no_eligible_nodes": counts["no_eligible_nodes"],
        "jobs_predecessor_not_run": counts["predecessor_not_run"],
        "jobs_killed": int(np.count_nonzero(_killed(result))),
        "passes": int(result.passes),
        "period": result.options.get("period"),
        "scheduler_options": result.options.get("scheduler_options"),
        "allocator_options": result.options.get("allocator_options"),
        "on_overrun": result.options.get("on_overrun", "run"),
        "dependencies": result.options.get("dependencies", "off"),
        "dependency_links": result.options.get("dependency_links"),
        "input_digest": result.options.get("input_digest"),
        "site": result.options.get("site"),
        **({"slurm_accounts": result.options["slurm_accounts"]} if "slurm_accounts" in result.options else {}),
        "metrics": scalars,
        "fairness": fairness,
        **({"policy": result.policy} if result.policy else {}),  # a Python policy's own account
        "timings": {
            "simulate_s": result.simulate_s,
            "jobs_per_s": replayed / result.simulate_s if result.simulate_s > 0 else None,
        },
        "schedbench_version": __version__,
    }


def _fairness(result: ReplayResult, jobs: pl.DataFrame) -> dict:
    """Per-account fairness (:func:`schedbench.analysis.metrics.per_account`): accounts and targets
    as priority and sfs define them (their options when the run used one of them, else the
    SWF group and each group's share of the trace's work)."""
    opts = result.options.get("scheduler_options") or {}
    by = opts.get("account", "group")
    targets = account_targets(result.table, result.status, by, opts.get("accounts") or None,
                              float(opts.get("target_factor", DEFAULT_FACTOR)))
    return {"by": by, **metrics.per_account(jobs, by, targets)}


REPLAY_COMPRESSION_LEVEL = 1
"""zstd level of the files of ``schedbench replay`` (:func:`write_run`); a sweep's parts
and runs.parquet keep polars' default level."""


def write_parquet(df: pl.DataFrame, path: Path, compression_level: int | None = None) -> None:
    """Write ``df`` to ``path`` (its folder created), zstd at ``compression_level`` (None:
    polars' default) with column statistics, under a temporary name renamed into place, so
    that no reader sees half a file.  The temporary name is unique: a sweep's processes
    write side by side.  The replay's files and the sweep's go through here."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with written_aside(path, unique=True) as tmp:
        df.write_parquet(tmp, compression="zstd", compression_level=compression_level, statistics=True)


def finite_or_null(value):
    """``value`` (dicts, lists and tuples of numbers, strings, ...) with every float that is
    NaN or infinite replaced by None: JSON has no such numbers, and most parsers refuse the
    ``NaN`` and ``Infinity`` Python's json module writes by default."""
    if isinstance(value, float):  # numpy's float64 is a float too
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_null(v) for v in value]
    return value


def write_run(result: ReplayResult, outdir: str | os.PathLike, timings: dict | None = None, extra: dict | None = None) -> dict:
    """Write the four files of a run into ``outdir``, and a Python policy's own tables
    (``decisions.parquet`` of ipsched and aucsched), and return the summary.

    The folder is written as one unit (:mod:`schedbench.analysis.run_folder`): the files
    go into a new hidden folder beside ``outdir`` (``.NAME.tmp-XXXXXXXX``, its parents
    created), which then replaces ``outdir``, so nothing of an older run in ``outdir``
    survives; an error or an interrupt while writing removes the new folder and leaves the
    older run whole.  ``outdir`` must be new, empty or a former run's folder."""
    import time

    t0 = time.perf_counter()
    shown = Path(outdir)
    check_output_folder(shown)
    final = Path(os.path.realpath(shown))
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = final.with_name(f".{final.name}.tmp-{uuid.uuid4().hex[:8]}")
    staging.mkdir()
    try:
        summary = _write_files(result, staging, t0, timings, extra)
        move_into_place(staging, final, shown)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return summary


def _write_files(result: ReplayResult, outdir: Path, t0: float, timings: dict | None, extra: dict | None) -> dict:
    """Write a run's files into the new folder ``outdir``; the summary (write_s counted
    from ``t0``)."""
    import time

    # The files are encoded and written by a second thread while this one builds the
    # frames and computes the summary: pyarrow and polars release the GIL while they
    # encode, compress and aggregate.  Each file is written by one thread alone, so the
    # bytes do not depend on the interleaving.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="schedbench-write") as pool:
        written = [pool.submit(_write_allocations, result, outdir / "allocations.parquet")]
        jobs = jobs_frame(result)
        written.append(pool.submit(write_parquet, jobs, outdir / "jobs.parquet", REPLAY_COMPRESSION_LEVEL))
        timeline = timeline_frame(result)
        written.append(pool.submit(write_parquet, timeline, outdir / "timeline.parquet", REPLAY_COMPRESSION_LEVEL))
        for name, table in (result.tables or {}).items():
            written.append(pool.submit(write_parquet, table, outdir / f"{name}.parquet", REPLAY_COMPRESSION_LEVEL))
        summary = summarize(result, jobs, timeline)
        del jobs, timeline
        for w in written:
            w.result()
    summary["timings"].update(timings or {})
    summary["timings"]["write_s"] = time.perf_counter() - t0
    summary.update(extra or {})
    summary = finite_or_null(summary)
    with written_aside(outdir / "summary.json") as tmp:
        tmp.write_text(json.dumps(summary, indent=2, sort_keys=False, allow_nan=False) + "\n")
    return summary
