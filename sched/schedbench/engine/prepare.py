"""What every run needs before its first event, and what it hands back.

:func:`start_run` is the one set-up pipeline (:func:`screen` decides which jobs are left
out and why, in the same pass that fills the job matrix); :func:`result` turns a
finished core into a :class:`ReplayResult`.  Shared by the jitted
replay (:mod:`schedbench.engine.replay`) and the step-by-step one (:mod:`schedbench.engine.simulation`).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .. import __version__, registry
from .. import core as core_mod
from .._jit import kernel
from ..core.layout import (
    J_CLASS,
    J_END,
    J_EST,
    J_NODES,
    J_PRED,
    J_PTR,
    J_REQ,
    J_RUN,
    J_START,
    J_STATE,
    J_SUBMIT,
    J_UNITS,
    N_JCOLS,
    N_RES,
    JobState,
    fill_row,
    pool_type,
    table_columns,
)
from ..core.screening import too_wide_on
from ..core.state import C_LOG, C_TL
from ..declarations import MAX_INT
from ..errors import UsageError
from ..io.jobs import LOG_NEVER_STARTED, JobTable, digest
from ..io.machine import Machine
from ..plan.eligibility import NodeClasses, node_classes
from ..schema import STATUS_NAMES, ReplayResult, Status  # noqa: F401 - re-exported: the engine hands them back

if TYPE_CHECKING:
    from ..plan.site import Site


def screen(table: JobTable, machine: Machine, classes: NodeClasses | None = None,
           never_started: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The job matrix of ``table`` (every job PENDING), the status of every job before the
    replay (int8 (n,): jobs with a negative submit time, that the log says never started
    (``never_started``, bool (n,)), with no eligible node, a negative run time, no size or
    a request no empty machine can host on its nodes are left out, with the first of these
    reasons that holds: a partition the machine lacks shows whatever else is wrong with
    the job) and each job's pool type (int64 (n,), :func:`schedbench.core.layout.pool_type`),
    from one pass over the table; only the jobs that are not pool jobs are then tested
    against the nodes.  ``classes``: the jobs' node classes (None: every job may use every
    node)."""
    n = table.n_jobs
    J = np.empty((n, N_JCOLS), dtype=np.int64)
    status = np.empty(n, dtype=np.int8)
    pool = np.empty(n, dtype=np.int64)
    total = np.ascontiguousarray(machine.capacity.sum(axis=0), dtype=np.int64)
    job_class = np.zeros(n, np.int64) if classes is None else classes.job_class
    if _fill_and_screen(J, *table_columns(table), job_class, total, status, pool) < n:
        scanned = too_wide_on(machine.capacity, J, None if classes is None else classes.elig)
        status[scanned & (pool < 0) & (status == Status.REPLAYED)] = Status.DROPPED_TOO_WIDE
    if classes is not None:
        status[classes.empty & (status != Status.DROPPED_NO_SUBMIT)] = Status.NO_ELIGIBLE_NODES
    if never_started is not None:
        status[never_started & (status != Status.DROPPED_NO_SUBMIT)] = Status.NEVER_STARTED
    return J, status, pool


_REPLAYED, _TOO_WIDE, _NO_SIZE, _NO_RUNTIME, _NO_SUBMIT = (
    int(s) for s in (Status.REPLAYED, Status.DROPPED_TOO_WIDE, Status.DROPPED_NO_SIZE, Status.DROPPED_NO_RUNTIME,
                     Status.DROPPED_NO_SUBMIT)
)


@kernel
def _fill_and_screen(J, submit, run, estimate, units, cores, gpus, mics, mem, req_nodes, user, group, queue,
                     job_class, total, status, pool):
    """Per job of the table's int64 (n,) columns: its row of the job matrix ``J`` (int64
    (n, N_JCOLS)); into ``status`` (int8 (n,)) DROPPED_NO_SUBMIT (submit < 0: the core's
    clock reads a negative time as "no event", so such a job would end the replay before
    any other), else DROPPED_NO_RUNTIME (run < 0), else
    DROPPED_NO_SIZE (no units, or no cores, GPUs nor MICs per unit), else DROPPED_TOO_WIDE
    (``req_nodes`` not dividing the units, or more of a type than the machine's ``total``
    (int64 (4,))), else REPLAYED; the node class from ``job_class`` (int64 (n,)); into ``pool`` (int64 (n,)) its pool type, for which the
    total test is exact.  Returns the number of pool jobs: the others need the node scan
    (:func:`schedbench.core.screening.too_wide_on`)."""
    pools = 0
    for j in range(J.shape[0]):
        fill_row(J, j, submit, run, estimate, units, cores, gpus, mics, mem, req_nodes, user, group, queue)
        J[j, J_CLASS] = job_class[j]
        n_units = J[j, J_UNITS]
        wide = req_nodes[j] > 0 and n_units % req_nodes[j] != 0
        for k in range(N_RES):
            wide |= n_units * J[j, J_REQ + k] > total[k]
        pool[j] = pool_type(J, j)
        pools += pool[j] >= 0
        no_size = n_units <= 0 or (J[j, J_REQ] <= 0 and J[j, J_REQ + 1] <= 0 and J[j, J_REQ + 2] <= 0)
        if submit[j] < 0:
            status[j] = _NO_SUBMIT
        elif run[j] < 0:
            status[j] = _NO_RUNTIME
        elif no_size:
            status[j] = _NO_SIZE
        elif wide:
            status[j] = _TOO_WIDE
        else:
            status[j] = _REPLAYED
    return pools


def cut_overruns(J: np.ndarray, status: np.ndarray, on_overrun: str) -> None:
    """Apply the ``on_overrun`` option to the job matrix ``J`` (int64 (n, N_JCOLS)) of a
    run whose jobs have their ``status`` (int8 (n,)): with "kill", every job kept for the
    replay whose run exceeds its request ends at its request, as at a site that enforces
    wall times: its run (``J_RUN``, by which the core ends it and learning predictors learn)
    becomes its estimate (``J_EST``: the user's request, or the run itself where the log
    gives none, so such a job is never cut).  "run" (the default) changes nothing: a job
    runs its logged time whatever its request.  :func:`result` reports the cut jobs as
    ``killed``."""
    if on_overrun == "kill":
        over = (status == Status.REPLAYED) & (J[:, J_RUN] > J[:, J_EST])
        J[over, J_RUN] = J[over, J_EST]


class Dependencies(NamedTuple):
    """The job dependencies of a run (SWF fields 17 and 18; :func:`dependencies`).

    ``blocked``: bool (n,), the jobs that arrive when their predecessor ends (plus their
    think time) rather than at their submit time; ``successors``: (succ_ptr int64 (n + 1,),
    succ int64 (k, 2)) for :func:`schedbench.core.new_core`; the links not honoured:
    ``absent`` (field 17 names no job of the table: the log, or ``--limit``, starts after
    it, so the job arrives at its submit), ``not_earlier`` (it names the job itself or one
    after it in (submit, id) order: not a preceding job, ignored likewise) and
    ``not_run`` (the predecessor, or one before it in the chain, is left out of the
    replay: the job gets the status ``predecessor_not_run``)."""

    blocked: np.ndarray
    successors: tuple[np.ndarray, np.ndarray]
    absent: int
    not_earlier: int
    not_run: int

    def counts(self) -> dict:
        """The links by outcome (summary.json's ``dependency_links``): ``waiting`` (jobs
        that arrive when their predecessor ends), ``absent``, ``not_earlier`` and
        ``predecessor_not_run`` (before the replay)."""
        return {"waiting": int(np.count_nonzero(self.blocked)), "absent": self.absent,
                "not_earlier": self.not_earlier, "predecessor_not_run": self.not_run}


def dependencies(table: JobTable, status: np.ndarray) -> Dependencies:
    """The job dependencies of ``table`` (sorted by (submit, id), distinct ids) whose jobs
    have their pre-replay ``status`` (int8 (n,), changed in place: a job whose predecessor
    is left out of the replay, directly or down a chain, is left out too, with the status
    PREDECESSOR_NOT_RUN, since it could only arrive at that job's end).  Field 17
    (``preceding_job``) names the predecessor by job id (negative: none); field 18
    (``think_time``, s; negative: unknown, read as 0) is the time from the predecessor's
    end to the job's arrival.  A link is honoured when the predecessor is a job of the
    table before this one in (submit, id) order (so no cycle can form); see
    :class:`Dependencies` for the others."""
    n = table.n_jobs
    named = table.preceding_job >= 0
    by_id = np.argsort(table.job_id, kind="stable")
    pos = np.minimum(np.searchsorted(table.job_id, table.preceding_job, sorter=by_id), max(n - 1, 0))
    row = by_id[pos] if n else np.zeros(0, np.int64)
    found = named & (table.job_id[row] == table.preceding_job) if n else named
    linked = found & (row < np.arange(n))
    pred_row = np.where(linked, row, -1).astype(np.int64)
    before = status == Status.REPLAYED
    blocked = np.zeros(n, np.bool_)
    _resolve_links(pred_row, status, blocked)
    js = np.flatnonzero(blocked)
    ps = pred_row[js]  # js ascending, a stable sort keeps each predecessor's successors in job order
    order = np.argsort(ps, kind="stable")
    succ = np.column_stack((js[order], np.maximum(table.think_time[js[order]], 0))).astype(np.int64)
    succ_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(ps, minlength=n), out=succ_ptr[1:])
    return Dependencies(blocked, (succ_ptr, succ.reshape(-1, 2)), int(np.count_nonzero(named & ~found)),
                        int(np.count_nonzero(found & ~linked)),
                        int(np.count_nonzero(before & (status == Status.PREDECESSOR_NOT_RUN))))


_NOT_RUN = int(Status.PREDECESSOR_NOT_RUN)


@kernel
def _resolve_links(pred_row, status, blocked):
    """One pass in job order over int64 (n,) ``pred_row`` (each job's predecessor row, -1:
    none; always an earlier row, so its outcome is settled when the job is visited): a
    replayed job whose predecessor is replayed is ``blocked`` (bool (n,)); one whose
    predecessor is not gets ``status`` (int8 (n,)) PREDECESSOR_NOT_RUN."""
    for j in range(pred_row.shape[0]):
        p = pred_row[j]
        if p < 0 or status[j] != _REPLAYED:
            continue
        if status[p] == _REPLAYED:
            blocked[j] = True
        else:
            status[j] = _NOT_RUN


def check_sorted(table: JobTable) -> None:
    s, i = table.submit, table.job_id
    if table.n_jobs > 1 and not np.all((s[1:] > s[:-1]) | ((s[1:] == s[:-1]) & (i[1:] > i[:-1]))):
        raise UsageError("the job table must be sorted by (submit, job_id) with distinct ids")


class PolicyDriven(NamedTuple):
    """The scheduler state of a run whose decisions a Python policy makes (no kernel
    implements a pass for it)."""

    flag: np.ndarray


class Run(NamedTuple):
    """A run ready for its first event: the ``setup`` its factories saw, the ``core``
    (armed), the predictor's, scheduler's and allocator's states, the status of every job
    (int8 (n,), :class:`Status`), the jitted scheduler (its queue order and ``grow``; None when a
    Python policy decides), the resolved options and the run's provenance."""

    setup: core_mod.Setup
    core: core_mod.Core
    pred: tuple
    sched: tuple
    alloc: tuple
    status: np.ndarray
    jitted: core_mod.JittedScheduler | None
    sched_options: dict
    alloc_options: dict
    provenance: dict


_QUEUE_ORDERS = {"fifo": core_mod.QueueOrder.FIFO, "sjf": core_mod.QueueOrder.PRED}


def start_run(
    table: JobTable,
    machine: Machine,
    scheduler: str | None,
    allocator: str = "ff",
    predictor: str = "requested",
    *,
    period: int | None = None,
    queue_order: str = "fifo",
    meta: dict | None = None,
    options: dict | None = None,
    site=None,
    stepped: bool = False,
) -> Run:
    """Everything a run needs before its first event, in one pipeline: the inputs checked,
    the job matrix and every job's status and pool type in one pass (:func:`screen`), the
    site's rules compiled (jobs they refuse for ever left out), the dropped jobs marked
    once, then the predictor, the allocator and the scheduler built from the
    :class:`schedbench.core.Setup`, and the core armed.  Used by the one-call replay
    (:func:`schedbench.engine.replay.replay`) and by
    :class:`schedbench.engine.simulation.Simulation`.

    ``scheduler``: a registered name (a jitted scheduler's state is built; a Python
    policy's options are resolved, its decisions come from Python) or None (decisions from
    Python, queue kept in ``queue_order``, "fifo" or "sjf").  ``period``: decide every so
    many seconds (0: at every event; None: the scheduler's default).  ``options``:
    scheduler and allocator options by name.  ``site``: a :class:`schedbench.plan.site.Site`
    or the path of a site file.  ``stepped``: the run is stepped from Python (a
    Simulation), which takes maintenance windows only.  The options every run takes
    (:func:`schedbench.registry.engine_options`: ``on_overrun``) come with the others in
    ``options`` and are applied here (:func:`cut_overruns`)."""
    sched_entry = None if scheduler is None else registry.scheduler(scheduler)
    alloc_entry = registry.allocator(allocator)
    sched_opts, alloc_opts = registry.split_options(sched_entry or alloc_entry, alloc_entry, options or {})
    engine_opts = registry.engine_options(options)
    if sched_entry is None:
        sched_opts = {}
    if period is None:
        period = sched_entry.default_period if sched_entry is not None else 0
    if not 0 <= period <= MAX_INT:  # past int64, the kernel's parameters raised OverflowError
        raise UsageError(f"the decision period must be 0 to {MAX_INT:,} seconds, not {period}")
    if queue_order not in _QUEUE_ORDERS:
        raise UsageError(f"queue_order must be 'fifo' or 'sjf', not {queue_order!r}")
    jitted_entry = sched_entry is not None and sched_entry.kind is registry.Kind.JITTED
    planning = sched_entry is not None and sched_entry.capabilities.plans
    if site is not None:
        from ..plan import (
            site as site_mod,  # here: its dataclasses cost every command's start-up 7 ms
        )

        if not isinstance(site, site_mod.Site):
            site = site_mod.load(site)
        if stepped and (site.plan_only or planning):
            planners = ", ".join(n for n in registry.scheduler_names() if registry.scheduler(n).capabilities.plans)
            raise UsageError("a Simulation takes maintenance windows only (limits, FreePools and kept cores "
                             f"act on a plan: replay {planners} with them)")
    if sched_entry is not None:
        registry.check_pair(scheduler, allocator, site=site, options=sched_opts)  # what needs no jobs, before any work
    check_sorted(table)
    registry.predictor(predictor)  # an unknown name is a usage error before any work
    # The input's digest (SHA-256 of every column; hashlib releases the GIL) is computed in
    # a second thread while this one builds the run.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="schedbench-digest") as pool:
        input_digest = pool.submit(digest, table)
        classes = node_classes(table, meta, machine)
        if classes is not None:
            table = classes.table  # the partitions' default memory and time limits filled in
        never = table.status == LOG_NEVER_STARTED if (meta or {}).get("format") == "sacct" else None
        J, status, pool_types = screen(table, machine, classes, never)
        elig = None if classes is None else classes.elig
        arrays = None
        if site is not None:
            from ..plan.site import compile_site

            arrays, rejected = compile_site(site, J, machine, status == Status.REPLAYED, elig)
            status[rejected] = Status.REJECTED_BY_LIMIT
        deps = dependencies(table, status) if engine_opts["dependencies"] == "on" else None
        J[status != Status.REPLAYED, J_STATE] = JobState.DROPPED
        if deps is not None:
            J[deps.blocked, J_STATE] = JobState.BLOCKED
        cut_overruns(J, status, engine_opts["on_overrun"])
        setup = core_mod.Setup(table, machine, J, meta or {}, arrays, pool_types, elig)
        if jitted_entry:  # a policy's pair on its workload is the policy's own business
            registry.check_pair(scheduler, allocator, site=site, workload=workload_of(setup))
        pred = registry.predictor(predictor).load()(table, meta)
        alloc = alloc_entry.load()(setup, **alloc_opts)
        if jitted_entry:
            jitted = sched_entry.load()(setup, **sched_opts)
            sched, order = jitted.state, jitted.queue_order
            if jitted.options:  # the values the factory resolved (defaults, the input's own) are recorded
                sched_opts = {**sched_opts, **jitted.options}
        else:
            jitted = None
            sched, order = PolicyDriven(np.zeros(1, dtype=np.int64)), _QUEUE_ORDERS[queue_order]
        windows = None
        if arrays is not None and not planning:
            windows = (arrays.mspan, arrays.mwin)  # the core hides them (a planner books around them)
        core = core_mod.new_core(J, machine.capacity, period=period, queue_order=order, maintenance=windows,
                                 elig=elig, successors=None if deps is None else deps.successors)
        core_mod.arm(core)
        prov = provenance(table, machine, scheduler or "python", allocator, predictor, period, sched_opts,
                          alloc_opts, input_digest.result(), site, **engine_opts)
        slurm_accounts = (setup.meta or {}).get("slurm_accounts")
        if slurm_accounts and sched_entry is not None and sched_entry.capabilities.slurm_accounts:
            prov["slurm_accounts"] = slurm_accounts  # its shares and QOS priorities change the schedule
        if deps is not None:
            prov["dependency_links"] = deps.counts()
    return Run(setup, core, pred, sched, alloc, status, jitted, sched_opts, alloc_opts, prov)


def workload_of(setup) -> registry.Workload:
    """What the registry's capabilities ask of a prepared run (:func:`registry.workload_shape`):
    whether its replayed jobs are all pool jobs, and whether the site's rules bind nodes
    (as the conservative factory decides)."""
    return registry.workload_shape(setup.all_pool, setup.site_binds_nodes)


def result(core, status, table, machine, scheduler, allocator, predictor, simulate_s, passes, options) -> ReplayResult:
    """The :class:`ReplayResult` of a finished ``core`` (arrays are copies or views that
    no later replay touches).  A started job whose run in the core is shorter than the
    table's was cut at its request (:func:`cut_overruns`): ``killed``."""
    J = core.jobs
    status = status.copy()
    blocked = J[:, J_STATE] == JobState.BLOCKED  # its predecessor never ended
    status[blocked] = Status.PREDECESSOR_NOT_RUN
    never = (status == Status.REPLAYED) & (J[:, J_START] < 0)
    status[never] = Status.NOT_STARTED
    eligible = None
    if options.get("dependencies", "off") == "on":  # J_SUBMIT is each job's arrival
        eligible = np.where((J[:, J_STATE] == JobState.DROPPED) | blocked, -1, J[:, J_SUBMIT])
    rows = int(core.scal[C_TL])
    tl = core.timeline[:, :rows]  # views: only the rows written were ever touched in memory
    timeline = {"time": tl[0], "queue": tl[1], "running": tl[2], "used": tl[3:].T}
    started = J[:, J_START] >= 0
    killed = started & (J[:, J_RUN] < table.run)
    return ReplayResult(
        table, machine, scheduler, allocator, predictor,
        J[:, J_START].copy(), J[:, J_END].copy(), J[:, J_PRED].copy(),
        np.where(started, J[:, J_NODES], 0), status, timeline, simulate_s, passes,
        np.where(started, J[:, J_PTR], -1), core.log[: int(core.scal[C_LOG])], options, killed=killed,
        eligible=eligible,
    )


def provenance(table: JobTable, machine: Machine, scheduler: str, allocator: str, predictor: str,
               period: int, sched_options: dict, alloc_options: dict, input_digest: str | None = None,
               site: Site | None = None, on_overrun: str = "run", dependencies: str = "off") -> dict:
    """Every setting that can change a schedule, and a digest of the input job table
    (``input_digest``, :func:`schedbench.io.jobs.digest` of ``table``, computed here unless
    the caller has it); with site policies, their summary under "site"; "dependencies"
    only when they are honoured ("on": a run without keeps its former record)."""
    prov = {
        "scheduler": scheduler,
        "allocator": allocator,
        "predictor": predictor,
        "period": int(period),
        "machine": machine.spec,
        "scheduler_options": _plain(sched_options),
        "allocator_options": _plain(alloc_options),
        "on_overrun": on_overrun,
        "input_digest": digest(table) if input_digest is None else input_digest,
        "schedbench_version": __version__,
    }
    if dependencies != "off":
        prov["dependencies"] = dependencies
    if site is not None:
        prov["site"] = site.summary()
    return prov


def _plain(options: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()}
