"""The core's state: jobs, queue, running list, event heap, allocation log, nodes, timeline.

:class:`Core` knows nothing of any scheduler, allocator or predictor: each of them owns a
namedtuple of its own, built by its own module, and the core reaches it only through the
hooks of :mod:`schedbench.core.hooks`.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

from .layout import J_STATE, J_SUBMIT, N_COMPUTE, N_RES, JobState

# Slots of Core.scal, int64 (N_CSCAL,).
C_QN = 0  # jobs in the queue
C_QH = 1  # queue head offset in Core.queue
C_QSPAN = 2  # queue entries from the head, holes (started jobs) included
C_RN = 3  # running jobs
C_NEXT = 4  # next job index to arrive
C_HN = 5  # heap size
C_SEQ = 6  # event sequence counter
C_LOG = 7  # allocation log rows written
C_LIVE = 8  # most log rows one pass can add: the machine's computing units
C_TL = 9  # timeline rows
C_LAST_PASS = 10  # time of the last pass (-1: none)
C_PERIOD = 11  # decision period in s (0: decide at every event instant)
C_TICK0 = 12  # origin of the decision period
C_PASSES = 13
C_STARTED = 14  # jobs started so far
C_ENDED = 15  # jobs ended so far
C_QORDER = 16  # QueueOrder
C_DONE = 17  # 1 once the replay is over
C_FREE = 18  # C_FREE + k: free amount of resource k over all nodes
C_CAP = 22  # C_CAP + k: capacity of resource k over all nodes
C_MAINT = 26  # 1 when nodes have maintenance windows (Core.mwin)
C_MNEXT = 27  # next maintenance-window end (index in Core.mends) not yet a decision point
C_REVISED = 28  # predicted ends of running jobs the predictor has raised (hooks.revise)
N_CSCAL = 29

# Rows of Core.work, int64 (N_WORK, n_nodes): node buffers of placements.
W_IDENT = 0  # 0 .. m-1: index order
W_NODE = 1  # a placement's nodes ...
W_COUNT = 2  # ... and the units each hosts (what the next commit starts the job on)
W_NODE2 = 3  # a second placement buffer, for fit tests that must not overwrite the first
W_COUNT2 = 4
N_WORK = 5

# Rows of Core.timeline, int64 (N_TL, capacity): time, queue, running, used cores, GPUs,
# MICs, MiB.
N_TL = 3 + N_RES


class QueueOrder(enum.IntEnum):
    """How the core keeps the queue (Core.scal[C_QORDER])."""

    FIFO = 0  # (submit, id): arrival order
    PRED = 1  # (pred, submit, id), kept by insertion (SJF)


class Core(NamedTuple):
    """Engine core for ``n`` jobs on ``m`` nodes.

    jobs int64 (n, N_JCOLS): see :mod:`schedbench.core.layout`.  queue int64 (n,): job indices
    from scal[C_QH] in queue order, with holes for started jobs.  run_list int64 (n, 2):
    running jobs as (start + pred, job) rows, sorted.  heap int64 (n + 4, 3): event rows
    (time * 4 + rank, sequence, job) (:mod:`schedbench.core.heap`).  log int32 (rows, 2): the allocation log, (node, units)
    rows, job j's are log[jobs[j, J_PTR] : + jobs[j, J_NODES]], in the order jobs
    started; it only grows (the Python side enlarges it by half when a pass might not
    fit, see :func:`schedbench.core.run`).  cap,
    free int64 (m, 4).  work int64 (N_WORK, m): placement buffers.  timeline int64 (N_TL,
    rows), column-major so that each column is contiguous.  scal int64 (N_CSCAL,): C_*.
    Maintenance windows (a site's, :mod:`schedbench.plan.site`): mspan int64 (m, 2) and mwin
    int64 (w, 2): node i's windows are mwin[mspan[i, 0] : mspan[i, 1]], sorted [start,
    end) (nodes may share rows);
    mends int64 (e,): every window end, sorted, unique; mnodes int64 (k,): the nodes with
    windows; msave int64 (m, 4): the free amounts of nodes a job may not use, while its
    fit is tested (-1: none saved).  elig uint8 (k, m): node classes, row c is 1 on the
    nodes a job of class c (jobs[j, J_CLASS]) may use; row 0, every node.
    Job dependencies: succ_ptr int64 (n + 1,) and succ int64 (k, 2): the jobs job j's end
    releases are the rows succ[succ_ptr[j] : succ_ptr[j + 1]], each (successor's job index,
    think time s); the successor arrives at that end plus its think time (all zeros, no
    rows: no dependencies)."""

    jobs: np.ndarray
    queue: np.ndarray
    run_list: np.ndarray
    heap: np.ndarray
    log: np.ndarray
    cap: np.ndarray
    free: np.ndarray
    work: np.ndarray
    timeline: np.ndarray
    scal: np.ndarray
    mspan: np.ndarray
    mwin: np.ndarray
    mends: np.ndarray
    mnodes: np.ndarray
    msave: np.ndarray
    elig: np.ndarray
    succ_ptr: np.ndarray
    succ: np.ndarray


def new_core(jobs: np.ndarray, cap: np.ndarray, *, period: int = 0, queue_order: int = QueueOrder.FIFO,
             maintenance: tuple[np.ndarray, np.ndarray] | None = None, elig: np.ndarray | None = None,
             successors: tuple[np.ndarray, np.ndarray] | None = None) -> Core:
    """A fresh core.  ``jobs``: the job matrix (:func:`schedbench.core.layout.job_matrix`),
    rows PENDING, BLOCKED or DROPPED; ``cap``: int64 (m, 4) node capacities; ``maintenance``:
    (mspan, mwin) of the nodes' maintenance windows (see :class:`Core`), or None; ``elig``:
    uint8 (k, m) node classes whose row 0 is all ones (None: one class, every node);
    ``successors``: (succ_ptr, succ) of the job dependencies (see :class:`Core`; rows of
    released jobs are BLOCKED), or None.  Nothing is queued yet: :func:`schedbench.core.api.arm` pushes the first events."""
    n = jobs.shape[0]
    m = cap.shape[0]
    i64 = np.int64
    live = jobs[:, J_STATE] != JobState.DROPPED
    first = int(jobs[live, J_SUBMIT].min()) if live.any() else 0
    span = int(jobs[live, J_SUBMIT].max()) - first if live.any() else 0
    ticks = span // period + 2 if period > 0 else 0
    # Live (job, node) pairs never exceed the machine's computing units (every unit of a
    # job asks for some computing resource), nor jobs x nodes (a pool of a billion cores
    # replaying a few jobs needs a few rows, not billions).
    units = max(min(int(cap[:, :N_COMPUTE].sum()), int(live.sum()) * m), 1)
    work = np.empty((N_WORK, m), i64)
    work[W_IDENT] = np.arange(m)
    scal = np.zeros(N_CSCAL, i64)
    scal[C_LIVE] = units
    scal[C_FREE : C_FREE + N_RES] = cap.sum(axis=0)
    scal[C_CAP : C_CAP + N_RES] = cap.sum(axis=0)
    scal[C_LAST_PASS] = -1
    scal[C_PERIOD] = period
    scal[C_TICK0] = first
    scal[C_QORDER] = queue_order
    if maintenance is None:
        mspan, mwin = np.zeros((m, 2), i64), np.zeros((0, 2), i64)
    else:
        mspan, mwin = (np.ascontiguousarray(a, dtype=i64) for a in maintenance)
    scal[C_MAINT] = int(mwin.shape[0] > 0)
    return Core(
        jobs=jobs,
        queue=np.empty(n, i64),
        run_list=np.empty((n, 2), i64),
        heap=np.empty((n + 4, 3), i64),
        log=np.empty((int(live.sum()) + 2 * units + 64, 2), np.int32),
        cap=np.ascontiguousarray(cap, dtype=i64),
        free=np.array(cap, dtype=i64, copy=True),
        work=work,
        timeline=np.empty((N_TL, 2 * n + 16 + ticks + int(mwin.shape[0])), i64),
        scal=scal,
        mspan=mspan,
        mwin=mwin,
        mends=np.unique(mwin[:, 1]).astype(i64),
        mnodes=np.flatnonzero(mspan[:, 1] > mspan[:, 0]).astype(i64),
        msave=np.full((m, N_RES), -1, i64),
        elig=np.ones((1, m), np.uint8) if elig is None else np.ascontiguousarray(elig, dtype=np.uint8),
        succ_ptr=np.zeros(n + 1, i64) if successors is None else np.ascontiguousarray(successors[0], dtype=i64),
        succ=np.zeros((0, 2), i64) if successors is None else np.ascontiguousarray(successors[1], dtype=i64),
    )


def grow_log(core: Core, in_place: bool = False) -> Core:
    """``core`` with an allocation log half as large again (at least one pass's worth
    more) when it is short, and a timeline half as large again when it is full (the
    periodic mode can decide at more instants than the trace has events: jobs wait and
    run past the last submission).  ``in_place``: resize the log itself (``realloc``: no
    second copy in memory), which is only safe while nothing else holds a view of it."""
    if int(core.scal[C_TL]) >= core.timeline.shape[1]:
        fill = int(core.scal[C_TL])
        timeline = np.empty((core.timeline.shape[0], fill * 3 // 2 + 16), np.int64)
        timeline[:, :fill] = core.timeline[:, :fill]
        core = core._replace(timeline=timeline)
    if int(core.scal[C_LOG]) + int(core.scal[C_LIVE]) <= core.log.shape[0]:
        return core
    rows = max(core.log.shape[0] * 3 // 2, int(core.scal[C_LOG]) + int(core.scal[C_LIVE]))
    if in_place and core.log.flags.owndata:
        core.log.resize((rows, 2), refcheck=False)
        return core
    log = np.empty((rows, 2), np.int32)
    fill = int(core.scal[C_LOG])
    log[:fill] = core.log[:fill]
    return core._replace(log=log)


def log_room(core: Core) -> bool:
    """Whether the allocation log and the timeline can take one more pass (Python-side
    check; :func:`grow_log` makes room)."""
    return (int(core.scal[C_LOG]) + int(core.scal[C_LIVE]) <= core.log.shape[0]
            and int(core.scal[C_TL]) < core.timeline.shape[1])
