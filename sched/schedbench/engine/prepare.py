"""What every run needs before its first event, and what it hands back.

:func:`classify` decides which jobs are left out and why; :func:`build` validates the
inputs and builds the core, the predictor, the scheduler's and the allocator's states;
:func:`result` turns a finished core into a :class:`ReplayResult`.  Shared by the jitted
replay (:mod:`schedbench.engine.replay`) and the step-by-step one (:mod:`schedbench.engine.simulation`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .. import __version__, predictors, registry
from .. import core as core_mod
from .._jit import kernel
from ..core.api import place
from ..core.layout import (
    J_END,
    J_NODES,
    J_PRED,
    J_PTR,
    J_REQ,
    J_REQ_NODES,
    J_START,
    J_STATE,
    J_UNITS,
    N_RES,
    JobState,
    job_matrix,
    request_shape,
)
from ..core.state import C_LOG, C_TL
from ..errors import UsageError
from ..io.jobs import JobTable, digest
from ..io.machine import Machine
from ..schema import STATUS_NAMES, ReplayResult, Status  # noqa: F401 - re-exported: the engine hands them back

if TYPE_CHECKING:
    from ..plan.site import Site


@kernel
def _too_wide(cap, jobs, ident, out_node, out_count, wide):
    """Mark in ``wide`` (bool (n,)) the jobs of the job matrix ``jobs`` that no empty
    machine of capacity ``cap`` (int64 (m, 4)) can host; ident, out_node, out_count: int64
    (m,) buffers, ident = 0 .. m-1."""
    for j in range(jobs.shape[0]):
        wide[j] = jobs[j, J_UNITS] > 0 and place(
            cap, ident, np.int64(0), jobs[j, J_UNITS], jobs[j, J_REQ : J_REQ + N_RES], jobs[j, J_REQ_NODES],
            out_node, out_count,
        ) < 0


def classify(table: JobTable, machine: Machine, jobs: np.ndarray | None = None) -> np.ndarray:
    """Status of every job before the replay: jobs with a negative run time, no size or
    a request no empty machine can host are left out (in that order of reasons).
    ``jobs``: the table's job matrix (:func:`schedbench.core.layout.job_matrix`), when the
    caller has it already."""
    if jobs is None:
        jobs = job_matrix(table, np.zeros(table.n_jobs, dtype=np.bool_))
    status = np.empty(table.n_jobs, dtype=np.int8)
    pool = np.empty(table.n_jobs, dtype=np.bool_)
    total = np.ascontiguousarray(machine.capacity.sum(axis=0), dtype=np.int64)
    if _screen(jobs, table.req_nodes, table.run, total, status, pool) < table.n_jobs:
        m = machine.n_nodes
        buffers = np.empty((3, m), dtype=np.int64)
        buffers[0] = np.arange(m)
        scanned = np.empty(table.n_jobs, dtype=np.bool_)
        _too_wide(np.ascontiguousarray(machine.capacity, dtype=np.int64), jobs, buffers[0], buffers[1], buffers[2], scanned)
        status[scanned & ~pool & (status == Status.REPLAYED)] = Status.DROPPED_TOO_WIDE
    return status


_REPLAYED, _TOO_WIDE, _NO_SIZE, _NO_RUNTIME = (
    int(s) for s in (Status.REPLAYED, Status.DROPPED_TOO_WIDE, Status.DROPPED_NO_SIZE, Status.DROPPED_NO_RUNTIME)
)


@kernel
def _screen(jobs, req_nodes, run, total, status, pool):
    """Per job of the job matrix ``jobs``, into ``status`` (int8 (n,)): DROPPED_NO_RUNTIME
    (run < 0), else DROPPED_NO_SIZE (no units, or no cores, GPUs nor MICs per unit), else
    DROPPED_TOO_WIDE (req_nodes (int64 (n,), the table's) not dividing the units, or
    more of a type than the machine's ``total`` (int64 (4,))), else REPLAYED; and into
    ``pool`` (bool (n,)) whether the job is single units of one type spread freely, for
    which the total test is exact.  Returns the number of pool jobs: the others need the
    node scan (:func:`_too_wide`)."""
    pools = 0
    for j in range(jobs.shape[0]):
        units = jobs[j, J_UNITS]
        wide = req_nodes[j] > 0 and units % req_nodes[j] != 0
        for k in range(N_RES):
            wide |= units * jobs[j, J_REQ + k] > total[k]
        kinds, largest = request_shape(jobs, j)
        pool[j] = jobs[j, J_REQ_NODES] <= 0 and kinds == 1 and largest == 1
        pools += pool[j]
        no_size = units <= 0 or (jobs[j, J_REQ] <= 0 and jobs[j, J_REQ + 1] <= 0 and jobs[j, J_REQ + 2] <= 0)
        if run[j] < 0:
            status[j] = _NO_RUNTIME
        elif no_size:
            status[j] = _NO_SIZE
        elif wide:
            status[j] = _TOO_WIDE
        else:
            status[j] = _REPLAYED
    return pools


def _refused_by_kept_cores(machine: Machine, J: np.ndarray, keep: int) -> np.ndarray:
    """Jobs without GPUs that no empty machine can host once ``keep`` cores of every GPU
    node are kept for GPU jobs (Keller's expensive resources)."""
    out = np.zeros(J.shape[0], dtype=np.bool_)
    gpu_nodes = machine.capacity[:, 1] > 0
    if keep <= 0 or not gpu_nodes.any():
        return out
    cap = np.array(machine.capacity, dtype=np.int64)
    cap[gpu_nodes, 0] = np.maximum(cap[gpu_nodes, 0] - keep, 0)
    m = cap.shape[0]
    buffers = np.empty((3, m), dtype=np.int64)
    buffers[0] = np.arange(m)
    _too_wide(cap, J, buffers[0], buffers[1], buffers[2], out)
    return out & (J[:, J_REQ + 1] == 0)


def check_sorted(table: JobTable) -> None:
    s, i = table.submit, table.job_id
    if table.n_jobs > 1 and not np.all((s[1:] > s[:-1]) | ((s[1:] == s[:-1]) & (i[1:] > i[:-1]))):
        raise UsageError("the job table must be sorted by (submit, job_id) with distinct ids")


class Prepared(NamedTuple):
    """A run ready to go but for its core and its scheduler: the predictor's and the
    allocator's states, the setup the factories saw and the status of every job."""

    pred: tuple
    alloc: tuple
    setup: core_mod.Setup
    status: np.ndarray


def build(
    table: JobTable,
    machine: Machine,
    allocator: registry.Entry,
    alloc_options: dict,
    predictor: str = "requested",
    *,
    meta: dict | None = None,
    site: Site | None = None,
) -> Prepared:
    """Validate the inputs and build everything but the scheduler's state and the core:
    the caller builds the scheduler from ``Prepared.setup``, then the core in the queue
    order the scheduler asks for (:func:`schedbench.core.new_core`).  ``site``: site
    policies (:mod:`schedbench.plan.site`); jobs they refuse for ever are left out."""
    check_sorted(table)
    if predictor not in predictors.PREDICTORS:
        raise UsageError(f"unknown predictor {predictor!r}; choose from {', '.join(predictors.PREDICTORS)}")
    J = job_matrix(table, np.zeros(table.n_jobs, dtype=np.bool_))
    status = classify(table, machine, J)
    J[status != Status.REPLAYED, J_STATE] = JobState.DROPPED
    arrays = None
    if site is not None:
        from ..plan.site import (
            compile_site,  # only with site policies (start-up cost of every command)
        )

        arrays, rejected = compile_site(site, J, machine)
        rejected |= _refused_by_kept_cores(machine, J, site.gpu_node_cores) & (status == Status.REPLAYED)
        status[rejected] = Status.REJECTED_BY_LIMIT
        J[rejected, J_STATE] = JobState.DROPPED
    pred = predictors.prepare(table, predictor, meta)
    setup = core_mod.Setup(table, machine, J, meta or {}, arrays)
    alloc = allocator.load()(setup, **alloc_options)
    return Prepared(pred, alloc, setup, status)


def result(core, status, table, machine, scheduler, allocator, predictor, simulate_s, passes, options) -> ReplayResult:
    """The :class:`ReplayResult` of a finished ``core`` (arrays are copies or views that
    no later replay touches)."""
    J = core.jobs
    status = status.copy()
    never = (status == Status.REPLAYED) & (J[:, J_START] < 0)
    status[never] = Status.NOT_STARTED
    rows = int(core.scal[C_TL])
    tl = core.timeline[:, :rows]  # views: only the rows written were ever touched in memory
    timeline = {"time": tl[0], "queue": tl[1], "running": tl[2], "used": tl[3:].T}
    started = J[:, J_START] >= 0
    return ReplayResult(
        table, machine, scheduler, allocator, predictor,
        J[:, J_START].copy(), J[:, J_END].copy(), J[:, J_PRED].copy(),
        np.where(started, J[:, J_NODES], 0), status, timeline, simulate_s, passes,
        np.where(started, J[:, J_PTR], -1), core.log[: int(core.scal[C_LOG])], options,
    )


def provenance(table: JobTable, machine: Machine, scheduler: str, allocator: str, predictor: str,
               period: int, sched_options: dict, alloc_options: dict, input_digest: str | None = None,
               site: Site | None = None) -> dict:
    """Every setting that can change a schedule, and a digest of the input job table
    (``input_digest``, :func:`schedbench.io.jobs.digest` of ``table``, computed here unless
    the caller has it); with site policies, their summary under "site"."""
    prov = {
        "scheduler": scheduler,
        "allocator": allocator,
        "predictor": predictor,
        "period": int(period),
        "machine": machine.spec,
        "scheduler_options": _plain(sched_options),
        "allocator_options": _plain(alloc_options),
        "input_digest": digest(table) if input_digest is None else input_digest,
        "schedbench_version": __version__,
    }
    if site is not None:
        prov["site"] = site.summary()
    return prov


def _plain(options: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()}
