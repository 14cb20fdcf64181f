"""The discrete-event replay engine (``../shared/spec/replay-semantics.md``).

State is a namedtuple of a few typed arrays (:class:`State`).  The event queue is an
array-backed binary heap keyed by (time, event rank, sequence) with ranks END < SUBMIT <
TICK, so at one instant every ending job frees its resources first, then every arriving
job joins the queue in (submit, id) order, then one scheduling pass runs.  A job of run
time 0 ends at its start instant through a new END event at that instant, which is
processed, with another pass, right after the pass that started it.

Hot kernels take the arrays they touch, never the whole namedtuple (numba passes a
namedtuple by value), and never allocate (see :mod:`schedbench._jit`): every buffer is
part of the state.

Two modes share this state:

* jitted: :func:`schedbench.schedulers._run` loops advance → pass → record in numba;
* step by step: :class:`schedbench.simulation.Simulation` returns to Python at each
  decision point, where a ``decide(view) -> starts`` policy answers.

Jobs arrive in the order of the job table, which must be sorted by (submit, job_id) (the
readers guarantee it): job index order is therefore (submit, id) order.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

from ._jit import inline_kernel, kernel
from .allocators import Allocator as _Allocator
from .allocators import _fits, _order, _place
from .layout import (
    J_END,
    J_LEN,
    J_NODES,
    J_PRED,
    J_PTR,
    J_REQ,
    J_REQ_NODES,
    J_RUN,
    J_RUN_KEY,
    J_START,
    J_STATE,
    J_SUBMIT,
    J_UNITS,
    N_RCOLS,
    N_RES,
    N_SCAL,
    N_TL,
    N_WORK,
    R_JOB,
    R_KEY,
    V_CAP,
    V_CRIT,
    V_EASY_VALID,
    V_FREE,
    V_HINT,
    V_HN,
    V_LAST_PASS,
    V_NEXT,
    V_PASSES,
    V_PBOUND,
    V_PERIOD,
    V_POOL,
    V_PRED_KIND,
    V_PRIO,
    V_QH,
    V_QN,
    V_QSPAN,
    V_RN,
    V_SEQ,
    V_SJF,
    V_STARTED,
    V_TICK0,
    V_TL,
    V_WPRED,
    V_WSUM,
    W_COUNT,
    W_IDENT,
    W_NODE,
    W_ORDER,
    W_TMP,
)
from .predictors import _learn, _predict


class Event(enum.IntEnum):
    """Event ranks: lower ranks are processed first at one instant."""

    END = 0
    SUBMIT = 1
    TICK = 2


class JobState(enum.IntEnum):
    PENDING = 0
    QUEUED = 1
    RUNNING = 2
    DONE = 3
    DROPPED = 4


PRIORITY_WEIGHTED = int(_Allocator.PRIORITY_WEIGHTED)
# EASY's min-tree holds int32 (cores, GPUs, MICs, pred) per job: half the memory of int64.
TREE_PRED = 3
_TREE_INF = np.int32(np.iinfo(np.int32).max)
_TREE_CLAMP = np.iinfo(np.int32).max - 1


class State(NamedTuple):
    """Engine state for ``n`` jobs on ``m`` nodes (all int64).

    jobs (n, N_JCOLS): see the J_* columns.  queue (n,): job indices from scal[V_QH], in
    queue order, with holes for started jobs.  run_list (n, N_RCOLS): running jobs
    (R_* columns) sorted by (start + pred, index).  heap (n + 4, 4): rows (time, rank, sequence, job).  pool (p,
    3): (node, units, job) allocation segments of running jobs.  cap, free, scratch (m,
    4).  work (N_WORK, m): node buffers; fkey (m,) float64: node sort keys; stack (128,):
    the backfill tree walk; qkey (n,) float64 and qwork (2, n): queue sorting buffers.
    timeline (N_TL, rows), column-major so that each column is contiguous.  tree (2P, 4)
    int32: min-tree over job indices of (request totals of cores, GPUs, MICs; pred) of
    queued jobs (and of jobs started in order, see :func:`_tree_set`), for EASY's
    backfill scan (no rows when unused).  memo: an online predictor's memory.
    scal (N_SCAL,): counters and totals (V_*).
    """

    jobs: np.ndarray
    queue: np.ndarray
    run_list: np.ndarray
    heap: np.ndarray
    pool: np.ndarray
    cap: np.ndarray
    free: np.ndarray
    scratch: np.ndarray
    work: np.ndarray
    fkey: np.ndarray
    stack: np.ndarray
    qkey: np.ndarray
    qwork: np.ndarray
    timeline: np.ndarray
    tree: np.ndarray
    memo: np.ndarray
    scal: np.ndarray


# --------------------------------------------------------------------------- heap


@inline_kernel
def _heap_less(heap, a, b):
    """Whether heap row ``a`` orders before row ``b``: (time, rank, sequence).  heap:
    int64 (capacity, 4)."""
    if heap[a, 0] != heap[b, 0]:
        return heap[a, 0] < heap[b, 0]
    if heap[a, 1] != heap[b, 1]:
        return heap[a, 1] < heap[b, 1]
    return heap[a, 2] < heap[b, 2]


@inline_kernel
def _heap_swap(heap, a, b):
    """Exchange heap rows ``a`` and ``b``."""
    for c in range(4):
        heap[a, c], heap[b, c] = heap[b, c], heap[a, c]


@inline_kernel
def _push(heap, scal, time, rank, job):
    """Push an event (time s, :class:`Event` rank, job index or -1); the sequence number
    makes equal (time, rank) events leave in push order."""
    i = scal[V_HN]
    scal[V_HN] = i + 1
    heap[i, 0] = time
    heap[i, 1] = rank
    heap[i, 2] = scal[V_SEQ]
    heap[i, 3] = job
    scal[V_SEQ] += 1
    while i > 0:
        parent = (i - 1) >> 1
        if _heap_less(heap, i, parent):
            _heap_swap(heap, i, parent)
            i = parent
        else:
            break


@inline_kernel
def _pop(heap, scal):
    """Remove the smallest event; returns (time, rank, job)."""
    t, r, j = heap[0, 0], heap[0, 1], heap[0, 3]
    n = scal[V_HN] - 1
    scal[V_HN] = n
    if n > 0:
        for c in range(4):
            heap[0, c] = heap[n, c]
        i = 0
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and _heap_less(heap, child + 1, child):
                child += 1
            if _heap_less(heap, child, i):
                _heap_swap(heap, i, child)
                i = child
            else:
                break
    return t, r, j


# --------------------------------------------------------------------------- backfill tree


@inline_kernel
def _tree_set(tree, jobs, j, queued):
    """Set leaf ``j`` of the min-tree to job j's (units * request of cores, GPUs, MICs,
    pred) when ``queued``, else to +inf (int32 max), and update its ancestors up to the
    first one that does not change.  Values are clamped below the int32 sentinel: a
    clamped value only prunes less.

    A job that starts keeps its leaf unless it started behind the head (EASY's backfill,
    a Python policy): jobs started in queue order sit at indices below the head, and
    every backfill scan starts after the head, so no scan ever covers them.  A stale leaf
    could only weaken pruning, never admit a job: the scan checks each job's state."""
    size = tree.shape[0] >> 1
    i = size + j
    for k in range(TREE_PRED):
        v = jobs[j, J_UNITS] * jobs[j, J_REQ + k]
        tree[i, k] = min(v, _TREE_CLAMP) if queued else _TREE_INF
    tree[i, TREE_PRED] = min(jobs[j, J_PRED], _TREE_CLAMP) if queued else _TREE_INF
    i >>= 1
    while i >= 1:
        same = True
        for k in range(TREE_PRED + 1):
            a = tree[2 * i, k]
            b = tree[2 * i + 1, k]
            m = a if a < b else b
            if m != tree[i, k]:
                tree[i, k] = m
                same = False
        if same:  # the minima above depend on this node only through its values
            break
        i >>= 1


@inline_kernel
def _tree_ok(tree, i, scal, kind, extra, horizon):
    """Whether tree node ``i`` may hold a job that fits the free totals and, when ``kind``
    >= 0, uses at most ``extra`` of resource ``kind`` or has pred <= ``horizon``.  A
    necessary condition at inner nodes (per-type minima), exact at leaves (memory is
    left to the exact fit test)."""
    for k in range(TREE_PRED):
        if tree[i, k] > scal[V_FREE + k]:
            return False
    if kind >= 0 and tree[i, kind] > extra and tree[i, TREE_PRED] > horizon:
        return False
    return True


@inline_kernel
def _tree_next(tree, stack, scal, lo, kind, extra, horizon):
    """Smallest queued job index >= ``lo`` that passes :func:`_tree_ok`, or -1.  Jobs it
    skips cannot start in this pass: the free totals and ``extra`` only shrink."""
    size = tree.shape[0] >> 1
    if lo >= size:
        return -1
    # canonical cover of [lo, size), left to right, kept in stack[64:]
    left = stack[64:]
    nl = 0
    a = lo + size
    b = 2 * size
    while a < b:
        if a & 1:
            left[nl] = a
            nl += 1
            a += 1
        a >>= 1
        b >>= 1
    for c in range(nl):
        sp = 0
        stack[sp] = left[c]
        sp += 1
        while sp > 0:
            sp -= 1
            i = stack[sp]
            if not _tree_ok(tree, i, scal, kind, extra, horizon):
                continue
            if i >= size:
                return i - size
            stack[sp] = 2 * i + 1  # right child visited after the left one
            stack[sp + 1] = 2 * i
            sp += 2
    return -1


# --------------------------------------------------------------------------- queue


@inline_kernel
def _queue_sums(jobs, scal, j, sign):
    """Add (sign 1) or remove (sign -1) job ``j`` from the queue's duration-weighted
    request sums (the Weighted allocators' mean request)."""
    p = jobs[j, J_PRED]
    scal[V_WPRED] += sign * p
    for k in range(N_RES):
        scal[V_WSUM + k] += sign * p * jobs[j, J_UNITS] * jobs[j, J_REQ + k]


@inline_kernel
def _enqueue(jobs, queue, tree, memo, scal, j, now):
    """Job ``j`` joins the queue.  FIFO order is arrival order (an append); SJF order
    (pred, submit, id) is kept by insertion (equal preds keep arrival order)."""
    jobs[j, J_PRED] = _predict(jobs, memo, scal, j, now)
    jobs[j, J_STATE] = JobState.QUEUED
    _queue_sums(jobs, scal, j, 1)
    qh = scal[V_QH]
    span = scal[V_QSPAN]
    pos = qh + span
    if scal[V_SJF]:
        p = jobs[j, J_PRED]
        lo, hi = qh, qh + span
        while lo < hi:
            mid = (lo + hi) >> 1
            if jobs[queue[mid], J_PRED] <= p:
                lo = mid + 1
            else:
                hi = mid
        pos = lo
        for k in range(qh + span, pos, -1):
            queue[k] = queue[k - 1]
    queue[pos] = j
    scal[V_QSPAN] = span + 1
    scal[V_QN] += 1
    if tree.shape[0] > 0:
        _tree_set(tree, jobs, j, True)


@inline_kernel
def _queue_tidy(jobs, queue, scal):
    """Skip started jobs at the head; compact when holes outnumber queued jobs (amortised
    O(1) per start, order kept)."""
    qh = scal[V_QH]
    span = scal[V_QSPAN]
    while span > 0 and jobs[queue[qh], J_STATE] != JobState.QUEUED:
        qh += 1
        span -= 1
    if span - scal[V_QN] > scal[V_QN] + 32:
        w = qh
        for r in range(qh, qh + span):
            if jobs[queue[r], J_STATE] == JobState.QUEUED:
                queue[w] = queue[r]
                w += 1
        span = w - qh
    scal[V_QH] = qh
    scal[V_QSPAN] = span


@kernel
def _queue_compact(jobs, queue, scal):
    """Drop every hole: afterwards queue[V_QH : V_QH + V_QN] are exactly the queued jobs,
    in their current order."""
    qh = scal[V_QH]
    w = qh
    for r in range(qh, qh + scal[V_QSPAN]):
        if jobs[queue[r], J_STATE] == JobState.QUEUED:
            queue[w] = queue[r]
            w += 1
    scal[V_QSPAN] = w - qh


@inline_kernel
def _queue_head(jobs, queue, scal):
    """First queued job in queue order, or -1."""
    _queue_tidy(jobs, queue, scal)
    return queue[scal[V_QH]] if scal[V_QSPAN] > 0 else -1


# --------------------------------------------------------------------------- running set


@inline_kernel
def _run_pos(run_list, rn, key, j):
    """Position of (key, j) in the first ``rn`` rows of the sorted running list."""
    lo, hi = 0, rn
    while lo < hi:
        mid = (lo + hi) >> 1
        if run_list[mid, R_KEY] < key or (run_list[mid, R_KEY] == key and run_list[mid, R_JOB] < j):
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel
def _compact_pool(jobs, run_list, pool, scal):
    """Slide the allocation rows of running jobs to the front of the pool, in place (a
    row only ever moves down).  The pool holds twice the largest possible live total, so
    this is amortised O(1) per start."""
    fill = scal[V_POOL]
    for r in range(fill):
        pool[r, 2] = -1  # stale unless a running job claims it below
    for i in range(scal[V_RN]):
        j = run_list[i, R_JOB]
        for u in range(jobs[j, J_LEN]):
            pool[jobs[j, J_PTR] + u, 2] = j
    w = 0
    for r in range(fill):
        j = pool[r, 2]
        if j < 0:
            continue
        if r == jobs[j, J_PTR]:  # first row of j's segment (later rows sit above w)
            jobs[j, J_PTR] = w
        pool[w, 0] = pool[r, 0]
        pool[w, 1] = pool[r, 1]
        pool[w, 2] = j
        w += 1
    scal[V_POOL] = w


@kernel
def _commit(jobs, run_list, heap, pool, free, work, scal, j, now, used):
    """Start job ``j`` at ``now`` on the ``used`` nodes of work[W_NODE] / work[W_COUNT].
    EASY's min-tree keeps the leaf of j: see :func:`_tree_set` for who clears it."""
    if scal[V_POOL] + used > pool.shape[0]:
        _compact_pool(jobs, run_list, pool, scal)
    p = scal[V_POOL]
    jobs[j, J_PTR] = p
    jobs[j, J_LEN] = used
    scal[V_POOL] = p + used
    for u in range(used):
        pool[p + u, 0] = work[W_NODE, u]
        pool[p + u, 1] = work[W_COUNT, u]
        pool[p + u, 2] = j
    for k in range(N_RES):  # type by type: most jobs request one or two types
        r = jobs[j, J_REQ + k]
        if r == 0:
            continue
        total = 0
        for u in range(used):
            amount = work[W_COUNT, u] * r
            free[work[W_NODE, u], k] -= amount
            total += amount
        scal[V_FREE + k] -= total
    jobs[j, J_START] = now
    jobs[j, J_END] = now + jobs[j, J_RUN]
    jobs[j, J_NODES] = used
    jobs[j, J_STATE] = JobState.RUNNING
    key = now + jobs[j, J_PRED]
    jobs[j, J_RUN_KEY] = key
    rn = scal[V_RN]
    pos = _run_pos(run_list, rn, key, j)
    for r in range(rn, pos, -1):
        for c in range(N_RCOLS):
            run_list[r, c] = run_list[r - 1, c]
    run_list[pos, R_KEY] = key
    run_list[pos, R_JOB] = j
    scal[V_RN] = rn + 1
    scal[V_QN] -= 1
    scal[V_EASY_VALID] = 0
    _queue_sums(jobs, scal, j, -1)
    scal[V_STARTED] += 1
    _push(heap, scal, now + jobs[j, J_RUN], Event.END, j)


@inline_kernel
def _fits_now(jobs, free, work, scal, j):
    """Whether queued job ``j`` fits on the free nodes now (totals first, nodes only when
    the totals cannot decide)."""
    return _fits(
        free, scal[V_FREE : V_FREE + N_RES], jobs[j, J_UNITS], jobs[j, J_REQ : J_REQ + N_RES],
        jobs[j, J_REQ_NODES], work[W_IDENT], work[W_NODE], work[W_COUNT],
    )


@inline_kernel
def _prioritise(jobs, scal, j, step):
    """Priority-Weighted: move the priority of every critical type job ``j`` needs by
    ``step``, within [1, bound]."""
    for k in range(N_RES):
        if scal[V_CRIT + k] and jobs[j, J_REQ + k] > 0:
            p = scal[V_PRIO + k] + step
            scal[V_PRIO + k] = min(max(p, 1), scal[V_PBOUND])


@inline_kernel
def _try_start(jobs, run_list, heap, pool, cap, free, work, fkey, scal, j, now, alloc):
    """Start job ``j`` now with allocator ``alloc`` if it fits; returns whether it did.
    Nodes are ordered and chosen only here, once the totals admit the job."""
    if not _fits_now(jobs, free, work, scal, j):
        if alloc == PRIORITY_WEIGHTED:
            _prioritise(jobs, scal, j, 1)
        return False
    if alloc == PRIORITY_WEIGHTED:
        _prioritise(jobs, scal, j, -1)
    used = _choose(jobs, cap, free, work, fkey, scal, j, alloc)
    if used < 0:  # unreachable: whether a job fits does not depend on the order
        return False
    _commit(jobs, run_list, heap, pool, free, work, scal, j, now, used)
    return True


@inline_kernel
def _first_fit_start(free, scal, jobs, j):
    """First node index worth visiting in index order for job ``j``: past the leading
    nodes with none of some resource it requests.  Advances the per-type hints, which
    stay valid lower bounds because only :func:`_finish` can give a node back resources
    (and lowers them)."""
    n = free.shape[0]
    first = 0
    for k in range(N_RES):
        if jobs[j, J_REQ + k] > 0:
            h = scal[V_HINT + k]
            while h < n and free[h, k] == 0:
                h += 1
            scal[V_HINT + k] = h
            if h > first:
                first = h
    return first


@inline_kernel
def _choose(jobs, cap, free, work, fkey, scal, j, alloc):
    """Place job ``j`` on the free nodes with allocator ``alloc`` into work[W_NODE] /
    work[W_COUNT] without committing; returns the nodes used or -1."""
    if alloc == 0:
        order = work[W_IDENT]
        first = _first_fit_start(free, scal, jobs, j)
    else:
        _order(
            alloc, free, cap, work[W_ORDER], fkey, work[W_TMP], scal, jobs[j, J_UNITS],
            jobs[j, J_REQ : J_REQ + N_RES],
        )
        order = work[W_ORDER]
        first = np.int64(0)  # not a literal: that would compile a second _place
    return _place(
        free, order, first, jobs[j, J_UNITS], jobs[j, J_REQ : J_REQ + N_RES], jobs[j, J_REQ_NODES],
        work[W_NODE], work[W_COUNT],
    )


@inline_kernel
def _finish(jobs, run_list, pool, free, memo, scal, j, now):
    """Job ``j`` ends at ``now``: free its nodes, leave the running set, teach predictors."""
    p = jobs[j, J_PTR]
    n_used = jobs[j, J_LEN]
    for k in range(N_RES):
        r = jobs[j, J_REQ + k]
        if r == 0:
            continue
        total = 0
        lowest = scal[V_HINT + k]
        for u in range(n_used):
            node = pool[p + u, 0]
            amount = pool[p + u, 1] * r
            free[node, k] += amount
            total += amount
            if node < lowest:
                lowest = node
        scal[V_FREE + k] += total
        scal[V_HINT + k] = lowest
    rn = scal[V_RN]
    pos = _run_pos(run_list, rn, jobs[j, J_RUN_KEY], j)
    for r in range(pos, rn - 1):
        for c in range(N_RCOLS):
            run_list[r, c] = run_list[r + 1, c]
    scal[V_RN] = rn - 1
    scal[V_EASY_VALID] = 0
    jobs[j, J_STATE] = JobState.DONE
    _learn(jobs, memo, scal, j, now)


# --------------------------------------------------------------------------- events


@inline_kernel
def _push_next_arrival(jobs, heap, scal):
    n = jobs.shape[0]
    i = scal[V_NEXT]
    while i < n and jobs[i, J_STATE] == JobState.DROPPED:
        i += 1
    scal[V_NEXT] = i
    if i < n:
        _push(heap, scal, jobs[i, J_SUBMIT], Event.SUBMIT, i)


@kernel
def _next_tick(jobs, scal, now):
    """Next decision instant of the periodic mode after ``now``, or -1 when no work is
    left; idle stretches jump to the first period boundary at or after the next arrival."""
    period = scal[V_PERIOD]
    if scal[V_QN] > 0 or scal[V_RN] > 0:
        return now + period
    i = scal[V_NEXT]
    if i < jobs.shape[0]:
        t0 = scal[V_TICK0]
        t = jobs[i, J_SUBMIT]
        if t > now:
            return t0 + ((t - t0 + period - 1) // period) * period
        return now + period
    return -1


@inline_kernel
def _advance(jobs, queue, run_list, heap, pool, free, tree, memo, scal):
    """Process events up to the next decision point; returns its time, or -1 when the
    replay is over.  Every event instant is a decision point, or, in the periodic mode,
    every tick plus the instant of the last pass again when zero-length jobs end there."""
    periodic = scal[V_PERIOD] > 0
    while scal[V_HN] > 0:
        t = heap[0, 0]
        tick = False
        while scal[V_HN] > 0 and heap[0, 0] == t:
            _, rank, j = _pop(heap, scal)
            if rank == Event.END:
                _finish(jobs, run_list, pool, free, memo, scal, j, t)
            elif rank == Event.SUBMIT:
                scal[V_NEXT] = j + 1
                _enqueue(jobs, queue, tree, memo, scal, j, t)
                _push_next_arrival(jobs, heap, scal)
            else:
                tick = True
        if periodic and tick:
            nt = _next_tick(jobs, scal, t)
            if nt >= 0:
                _push(heap, scal, nt, Event.TICK, -1)
        if not periodic or tick or scal[V_LAST_PASS] == t:
            return t
    return -1


@inline_kernel
def _record(timeline, scal, now):
    """One timeline row per decision instant (a later pass at the same instant overwrites
    it): queue length, running jobs and the used amount of each resource."""
    row = scal[V_TL]
    if row > 0 and timeline[0, row - 1] == now:
        row -= 1
    elif row >= timeline.shape[1]:
        return  # sized from the trace: every row is a distinct event instant
    timeline[0, row] = now
    timeline[1, row] = scal[V_QN]
    timeline[2, row] = scal[V_RN]
    for k in range(N_RES):
        timeline[3 + k, row] = scal[V_CAP + k] - scal[V_FREE + k]
    scal[V_TL] = row + 1
    scal[V_LAST_PASS] = now
    scal[V_PASSES] += 1


# --------------------------------------------------------------------------- setup


def new_state(
    jobs: np.ndarray,
    cap: np.ndarray,
    *,
    period: int = 0,
    pred_kind: int = 0,
    sjf: bool = False,
    backfill_tree: bool = False,
    memo: np.ndarray | None = None,
    critical: tuple[int, ...] = (1, 2),
    priority_bound: int = 10,
) -> State:
    """Fresh engine state.  ``jobs``: int64 (n, N_JCOLS) with the input columns filled
    (J_SUBMIT … J_REQ_NODES, J_USER, J_QUEUE, J_PKEY…) and J_STATE PENDING or DROPPED;
    ``cap``: int64 (m, 4)."""
    n = jobs.shape[0]
    m = cap.shape[0]
    i64 = np.int64
    live = jobs[:, J_STATE] != JobState.DROPPED
    # Live (job, node) pairs never exceed the machine's computing units plus one per node
    # (every unit holds a computing resource); twice that keeps compaction rare.
    pool_rows = max(2 * (int(cap[:, :3].sum()) + m), 1024)
    first = int(jobs[live, J_SUBMIT].min()) if live.any() else 0
    span = int(jobs[live, J_SUBMIT].max()) - first if live.any() else 0
    ticks = span // period + 2 if period > 0 else 0
    tl_rows = 2 * n + 16 + ticks
    tree_rows = 0
    if backfill_tree:
        size = 1
        while size < max(n, 1):
            size <<= 1
        tree_rows = 2 * size
    work = np.empty((N_WORK, m), i64)
    work[W_IDENT] = np.arange(m)
    work[W_ORDER] = np.arange(m)
    scal = np.zeros(N_SCAL, i64)
    scal[V_FREE : V_FREE + N_RES] = cap.sum(axis=0)
    scal[V_CAP : V_CAP + N_RES] = cap.sum(axis=0)
    scal[V_LAST_PASS] = -1
    scal[V_PERIOD] = period
    scal[V_TICK0] = first
    scal[V_PRED_KIND] = pred_kind
    scal[V_SJF] = int(sjf)
    for k in critical:
        scal[V_CRIT + k] = 1
    scal[V_PRIO : V_PRIO + N_RES] = 1
    scal[V_PBOUND] = priority_bound
    S = State(
        jobs=jobs,
        queue=np.empty(n, i64),
        run_list=np.empty((n, N_RCOLS), i64),
        heap=np.empty((n + 4, 4), i64),
        pool=np.empty((pool_rows, 3), i64),
        cap=np.ascontiguousarray(cap, dtype=i64),
        free=np.array(cap, dtype=i64, copy=True),
        scratch=np.empty((m, N_RES), i64),
        work=work,
        fkey=np.zeros(m, np.float64),
        stack=np.empty(128, i64),
        qkey=np.zeros(n, np.float64),
        qwork=np.empty((2, n), i64),
        timeline=np.empty((N_TL, tl_rows), i64),
        tree=np.full((tree_rows, TREE_PRED + 1), _TREE_INF, np.int32),
        memo=memo if memo is not None else np.zeros((1, 1), i64),
        scal=scal,
    )
    _push_next_arrival(S.jobs, S.heap, S.scal)
    if period > 0 and S.scal[V_HN] > 0:
        _push(S.heap, S.scal, first, Event.TICK, -1)
    return S

