"""Replay a job table on a machine with a ``scheduler+allocator`` pair.

:func:`replay` validates its inputs, decides which jobs are left out (and why), builds the
engine state and runs the jitted loop; :func:`replay_policy` does the same with a Python
``decide(view) -> starts`` policy through :class:`schedbench.simulation.Simulation`.
"""

from __future__ import annotations

import enum
import time
from typing import NamedTuple

import numpy as np

from . import engine, layout, predictors
from ._jit import kernel
from .allocators import ALLOCATORS, DEFAULT_CRITICAL, DEFAULT_PRIORITY_BOUND, _place
from .errors import UsageError
from .jobs import JobTable
from .machine import RESOURCE_NAMES, Machine
from .predictors import PREDICTORS
from .schedulers import SCHEDULERS, needs_backfill_tree, needs_sjf_queue, run


class Status(enum.IntEnum):
    """Per-job outcome written to ``jobs.parquet`` (lower-case names)."""

    REPLAYED = 0
    DROPPED_NO_RUNTIME = 1
    DROPPED_NO_SIZE = 2
    DROPPED_TOO_WIDE = 3
    NOT_STARTED = 4  # a Python policy left the job queued when nothing else could happen


STATUS_NAMES: tuple[str, ...] = tuple(s.name.lower() for s in Status)


class ReplayResult(NamedTuple):
    """Outcome of one replay.  Per-job arrays follow the input table's row order; start and
    end are -1 for jobs that did not run.  ``timeline``: dict of arrays (time, queue,
    running, used (k, 4))."""

    table: JobTable
    machine: Machine
    scheduler: str
    allocator: str
    predictor: str
    start: np.ndarray
    end: np.ndarray
    pred: np.ndarray
    nodes_used: np.ndarray
    status: np.ndarray
    timeline: dict
    simulate_s: float
    passes: int

    @property
    def label(self) -> str:
        return f"{self.scheduler}+{self.allocator}"


def request_matrix(table: JobTable, out: np.ndarray | None = None) -> np.ndarray:
    """Per-unit request, int64 (n, 4): cores, GPUs, MICs, MiB (negative amounts are 0).
    Written into ``out`` (an int64 (n, 4) array or view) when given."""
    if out is None:
        out = np.empty((table.n_jobs, 4), dtype=np.int64)
    for k, col in enumerate((table.unit_cores, table.unit_gpus, table.unit_mics, table.unit_mem)):
        np.maximum(col, 0, out=out[:, k], casting="unsafe")
    return out


@kernel
def _too_wide(cap, total, units, req, req_nodes, order, out_node, out_count, wide):
    """Mark in ``wide`` (bool (n,)) the jobs no empty machine of capacity ``cap`` (int64
    (m, 4), totals ``total``) can host; order, out_node, out_count: int64 (m,) buffers."""
    for j in range(units.shape[0]):
        wide[j] = False
        if units[j] <= 0:
            continue
        for k in range(4):
            if units[j] * req[j, k] > total[k]:
                wide[j] = True
        if not wide[j]:
            wide[j] = _place(cap, order, np.int64(0), units[j], req[j], req_nodes[j], out_node, out_count) < 0


def classify(table: JobTable, machine: Machine, req: np.ndarray | None = None) -> np.ndarray:
    """Status of every job before the replay: jobs with a negative run time, no size or
    a request no empty machine can host are left out (in that order of reasons).
    ``req``: the table's :func:`request_matrix`, when the caller has it already."""
    if req is None:
        req = request_matrix(table)
    status = np.full(table.n_jobs, Status.REPLAYED, dtype=np.int8)
    no_size = (table.units <= 0) | ((req[:, 0] <= 0) & (req[:, 1] <= 0) & (req[:, 2] <= 0))
    bad_shape = (table.req_nodes > 0) & (
        (table.units % np.where(table.req_nodes > 0, table.req_nodes, 1)) != 0
    )
    m = machine.n_nodes
    wide = np.empty(table.n_jobs, dtype=np.bool_)
    _too_wide(
        machine.capacity, machine.capacity.sum(axis=0), table.units, req, table.req_nodes,
        np.arange(m, dtype=np.int64), np.empty(m, np.int64), np.empty(m, np.int64), wide,
    )
    wide |= bad_shape
    status[wide] = Status.DROPPED_TOO_WIDE
    status[no_size] = Status.DROPPED_NO_SIZE
    status[table.run < 0] = Status.DROPPED_NO_RUNTIME
    return status


def _check_sorted(table: JobTable) -> None:
    s, i = table.submit, table.job_id
    if table.n_jobs > 1 and not np.all((s[1:] > s[:-1]) | ((s[1:] == s[:-1]) & (i[1:] > i[:-1]))):
        raise UsageError("the job table must be sorted by (submit, job_id) with distinct ids")


def _lookup(table: dict, name: str, what: str):
    try:
        return table[name]
    except KeyError:
        raise UsageError(f"unknown {what} {name!r}; choose from {', '.join(table)}") from None


_BLOCK_ROWS = 4096
"""Rows of the job matrix filled at a time (4096 x 24 int64 = 768 KiB)."""


def job_matrix(table: JobTable, status: np.ndarray, req: np.ndarray | None = None) -> np.ndarray:
    """The engine's int64 (n, N_JCOLS) job matrix for ``table``; jobs whose ``status`` is
    not REPLAYED are marked DROPPED.  The scheduler's estimate is the table's estimate
    when positive, else the run time (spec: field 9 when > 0, otherwise the run time).
    ``req``: the table's :func:`request_matrix`, when the caller has it already."""
    n = table.n_jobs
    J = np.zeros((n, layout.N_JCOLS), dtype=np.int64)
    if req is None:
        req = request_matrix(table)
    # Filled by blocks of rows that stay in cache: a column-at-a-time fill of the whole
    # matrix would stream it from memory once per column.
    for lo in range(0, n, _BLOCK_ROWS):
        hi = min(n, lo + _BLOCK_ROWS)
        Jb = J[lo:hi]
        run, est, nodes = table.run[lo:hi], table.estimate[lo:hi], table.req_nodes[lo:hi]
        Jb[:, layout.J_SUBMIT] = table.submit[lo:hi]
        Jb[:, layout.J_RUN] = run
        np.copyto(Jb[:, layout.J_EST], run)
        np.copyto(Jb[:, layout.J_EST], est, where=est > 0)
        Jb[:, layout.J_UNITS] = table.units[lo:hi]
        Jb[:, layout.J_REQ : layout.J_REQ + 4] = req[lo:hi]
        Jb[:, layout.J_REQ_NODES] = -1
        np.copyto(Jb[:, layout.J_REQ_NODES], nodes, where=nodes > 0)
        Jb[:, layout.J_PRED] = -1
        Jb[:, layout.J_START] = -1
        Jb[:, layout.J_END] = -1
        Jb[:, layout.J_STATE] = engine.JobState.PENDING
        Jb[status[lo:hi] != Status.REPLAYED, layout.J_STATE] = engine.JobState.DROPPED
        Jb[:, layout.J_USER] = table.user[lo:hi]
        Jb[:, layout.J_QUEUE] = table.queue[lo:hi]
    return J


def expected_queue_wait(table: JobTable, meta: dict | None = None) -> np.ndarray:
    """Per job, the expected wait of its queue (s, >= 1), PRB's yardstick (Netti et al.
    §2.2: "the average waiting time over a certain queue").

    From ``meta["queue_expected_wait"]`` ({queue name: s}) with ``meta["queues"]``
    ({queue name: code}) when the workload carries them (Eurora's ``system_queues``);
    otherwise the mean logged wait (SWF field 3, where >= 0) of the job's queue in this
    trace, else of the whole trace, else 1 s.
    """
    out = np.ones(table.n_jobs, dtype=np.int64)
    meta = meta or {}
    limits, codes = meta.get("queue_expected_wait"), meta.get("queues")
    if limits and codes:
        for name, code in codes.items():
            if name in limits:
                out[table.queue == code] = max(1, int(limits[name]))
        return out
    known = table.wait >= 0
    if not known.any():
        return out
    overall = max(1, int(round(table.wait[known].mean())))
    out[:] = overall
    queues, inverse = np.unique(table.queue, return_inverse=True)
    sums = np.bincount(inverse, weights=np.where(known, table.wait, 0), minlength=queues.size)
    counts = np.bincount(inverse, weights=known, minlength=queues.size)
    means = np.where(counts > 0, np.round(sums / np.maximum(counts, 1)), overall)
    return np.maximum(1, means[inverse]).astype(np.int64)


def build_state(
    table: JobTable,
    machine: Machine,
    predictor: str = "requested",
    *,
    period: int = 0,
    sjf: bool = False,
    backfill_tree: bool = False,
    meta: dict | None = None,
    critical: tuple[str, ...] = DEFAULT_CRITICAL,
    priority_bound: int = DEFAULT_PRIORITY_BOUND,
) -> tuple[engine.State, np.ndarray]:
    """Engine state for a replay, and the pre-replay status of every job.  ``meta``: the
    workload's metadata (queue limits); ``critical``: resource names the Balanced and
    Priority-Weighted allocators protect; ``priority_bound``: Priority-Weighted's bound."""
    _check_sorted(table)
    if period < 0:
        raise UsageError("the decision period must be >= 0 seconds")
    if priority_bound < 1:
        raise UsageError("the priority bound must be >= 1")
    unknown = [c for c in critical if c not in RESOURCE_NAMES]
    if unknown:
        raise UsageError(f"unknown critical resource(s) {unknown}; choose from {', '.join(RESOURCE_NAMES)}")
    _lookup(PREDICTORS, predictor, "predictor")
    req = request_matrix(table)  # built once, for classify and the job matrix
    status = classify(table, machine, req)
    J = job_matrix(table, status, req)
    del req
    pred_kind, pred_keys, memo = predictors.prepare(table, predictor, meta)
    J[:, layout.J_PKEY : layout.J_PKEY + pred_keys.shape[1]] = pred_keys
    del pred_keys
    J[:, layout.J_QWAIT] = expected_queue_wait(table, meta)
    state = engine.new_state(
        J,
        machine.capacity,
        period=period,
        pred_kind=pred_kind,
        sjf=sjf,
        backfill_tree=backfill_tree,
        memo=memo,
        critical=tuple(RESOURCE_NAMES.index(c) for c in critical),
        priority_bound=priority_bound,
    )
    return state, status


def result_from_state(S, status, table, machine, scheduler, allocator, predictor, simulate_s, passes):
    J = S.jobs
    status = status.copy()
    never = (status == Status.REPLAYED) & (J[:, layout.J_START] < 0)
    status[never] = Status.NOT_STARTED
    rows = int(S.scal[layout.V_TL])
    tl = S.timeline[:, :rows]  # views: only the rows written were ever touched in memory
    timeline = {"time": tl[0], "queue": tl[1], "running": tl[2], "used": tl[3:].T}
    return ReplayResult(
        table, machine, scheduler, allocator, predictor,
        J[:, layout.J_START].copy(), J[:, layout.J_END].copy(), J[:, layout.J_PRED].copy(),
        J[:, layout.J_NODES].copy(), status, timeline, simulate_s, passes,
    )


_WARM = False


def warm_up() -> None:
    """Compile (or load from numba's cache) the jitted loop, so that timings measure the
    replay and not the compiler."""
    global _WARM
    if _WARM:
        return
    from .jobs import from_columns
    from .machine import from_spec

    tiny = from_columns(submit=np.array([0, 0]), run=np.array([1, 0]), procs_req=np.array([1, 2]))
    for sched in SCHEDULERS.values():
        S, _ = build_state(
            tiny, from_spec("2x(cores=1)"), sjf=needs_sjf_queue(sched), backfill_tree=needs_backfill_tree(sched)
        )
        run(S, sched, 0)
    _WARM = True


def replay(
    table: JobTable,
    machine: Machine,
    scheduler: str = "easy",
    allocator: str = "ff",
    predictor: str = "requested",
    progress=None,
    **options,
) -> ReplayResult:
    """Replay ``table`` (sorted by (submit, job_id)) on ``machine`` with a jitted
    ``scheduler+allocator`` pair (names from SCHEDULERS and ALLOCATORS).  ``progress``,
    if given, is called with the number of started jobs from time to time; ``options``
    (meta, critical, priority_bound) go to :func:`build_state`."""
    sched = _lookup(SCHEDULERS, scheduler, "scheduler")
    alloc = _lookup(ALLOCATORS, allocator, "allocator")
    S, status = build_state(
        table, machine, predictor,
        sjf=needs_sjf_queue(sched), backfill_tree=needs_backfill_tree(sched), **options,
    )
    warm_up()
    t0 = time.perf_counter()
    passes = run(S, sched, alloc, progress, chunk=100_000 if progress else 1 << 62)
    simulate_s = time.perf_counter() - t0
    return result_from_state(S, status, table, machine, scheduler, allocator, predictor, simulate_s, passes)
