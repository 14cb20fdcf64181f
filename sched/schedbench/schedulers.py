"""Jitted schedulers: one scheduling pass each, over the engine state.

FCFS, SJF and EASY follow ``../shared/spec/replay-semantics.md`` to the letter.
:data:`SCHEDULERS` maps CLI names to :class:`Scheduler` codes; :func:`_pass` dispatches.

EASY on heterogeneous nodes (the rule implemented, from the spec):

* the head's reservation is node-feasible: running jobs (those started earlier in this
  pass included) are released in (predicted end, index) order, predicted end = max(start
  + pred, now), with their actual node allocations; the shadow time is the first
  predicted end at which the head's allocation would succeed on the freed nodes, and every
  running job predicted to end at or before it counts as ended;
* a queued job that fits now starts if now + pred <= shadow; otherwise it starts only if
  the head's allocation would still succeed at the shadow time on the free resources of
  that instant minus the allocation this job would get now and minus the allocations of
  every job backfilled earlier in the pass that is predicted to run past the shadow time;
* when the head asks for single units of one resource type spread freely (every SWF job)
  the head's allocation succeeds iff that type's total suffices, so the node check is the
  classic ``extra`` rule on that type, which the kernel uses in that case.

The backfill scan visits the queue in order but skips, through a min-tree over queued
jobs, runs of jobs that cannot fit the free totals (free resources and ``extra`` only
shrink during a pass, so a skipped job could not have started later in it).
"""

from __future__ import annotations

import enum

from ._jit import inline_kernel, kernel
from .allocators import _argsort_stable, _fits
from .engine import (
    PRIORITY_WEIGHTED,
    JobState,
    _advance,
    _choose,
    _commit,
    _fits_now,
    _prioritise,
    _queue_compact,
    _queue_head,
    _record,
    _tree_next,
    _tree_set,
    _try_start,
)
from .layout import (
    J_LEN,
    J_PRED,
    J_PTR,
    J_QWAIT,
    J_REQ,
    J_REQ_NODES,
    J_STATE,
    J_SUBMIT,
    J_UNITS,
    N_RES,
    R_JOB,
    R_KEY,
    V_EASY_EXTRA,
    V_EASY_HEAD,
    V_EASY_NEXT,
    V_EASY_SHADOW,
    V_EASY_VALID,
    V_FREE,
    V_NEXT,
    V_QH,
    V_QN,
    V_RN,
    V_SHADOW,
    V_STARTED,
    W_COUNT,
    W_COUNT2,
    W_IDENT,
    W_NODE,
    W_NODE2,
)


class Scheduler(enum.IntEnum):
    FCFS = 0
    SJF = 1
    EASY = 2
    PRB = 3


SCHEDULERS: dict[str, Scheduler] = {
    "fcfs": Scheduler.FCFS,
    "sjf": Scheduler.SJF,
    "easy": Scheduler.EASY,
    "prb": Scheduler.PRB,
}


@inline_kernel
def _start_in_order(jobs, queue, run_list, heap, pool, cap, free, work, fkey, scal, now, alloc):
    """Start queued jobs in queue order while the next fits; returns the first job that
    does not fit, or -1 when the queue emptied."""
    while True:
        j = _queue_head(jobs, queue, scal)
        if j < 0:
            return -1
        if not _try_start(jobs, run_list, heap, pool, cap, free, work, fkey, scal, j, now, alloc):
            return j


@inline_kernel
def _pool_type(jobs, j):
    """The resource type of a job made of single units of one type spread freely (its
    placement is decided by that type's total), else -1."""
    if jobs[j, J_REQ_NODES] > 0:
        return -1
    kind = -1
    for k in range(N_RES):
        if jobs[j, J_REQ + k] > 0:
            if kind >= 0 or jobs[j, J_REQ + k] != 1:
                return -1
            kind = k
    return kind


@inline_kernel
def _add_to_scratch(jobs, j, nodes, counts, first, n, scratch, scal, sign):
    """Add (sign 1) or take away (sign -1) job ``j``'s units ``counts[first:first + n]``
    on nodes ``nodes[first:first + n]`` to the shadow-time resources (scratch, (m, 4), and
    their totals in scal[V_SHADOW:])."""
    for u in range(first, first + n):
        for k in range(N_RES):
            amount = sign * counts[u] * jobs[j, J_REQ + k]
            scratch[nodes[u], k] += amount
            scal[V_SHADOW + k] += amount


@inline_kernel
def _head_fits_scratch(jobs, scratch, work, scal, head):
    """Whether the head's allocation would succeed on the shadow-time resources."""
    return _fits(
        scratch, scal[V_SHADOW : V_SHADOW + N_RES], jobs[head, J_UNITS],
        jobs[head, J_REQ : J_REQ + N_RES], jobs[head, J_REQ_NODES], work[W_IDENT],
        work[W_NODE2], work[W_COUNT2],
    )


@inline_kernel
def _shadow(jobs, run_list, pool, free, scratch, work, scal, head, now, kind):
    """Shadow time of ``head``: release running jobs in (predicted end, index) order, a
    whole group of equal predicted ends at a time, until the head fits.  With ``kind`` >= 0
    (see :func:`_pool_type`) returns (shadow, extra), extra = free units of that type at
    the shadow time minus the head's; otherwise leaves the free resources at the shadow
    time in scratch and scal[V_SHADOW:] and returns (shadow, 0)."""
    rn = scal[V_RN]
    units = jobs[head, J_UNITS]
    r = 0
    if kind >= 0:
        avail = scal[V_FREE + kind]
        while r < rn:
            pe = max(run_list[r, R_KEY], now)
            while r < rn and max(run_list[r, R_KEY], now) == pe:
                j = run_list[r, R_JOB]
                avail += jobs[j, J_UNITS] * jobs[j, J_REQ + kind]
                r += 1
            if avail >= units:
                return pe, avail - units
        return now, avail - units  # unreachable: too-wide jobs are dropped
    for i in range(free.shape[0]):
        for k in range(N_RES):
            scratch[i, k] = free[i, k]
    for k in range(N_RES):
        scal[V_SHADOW + k] = scal[V_FREE + k]
    while r < rn:
        pe = max(run_list[r, R_KEY], now)
        while r < rn and max(run_list[r, R_KEY], now) == pe:
            j = run_list[r, R_JOB]
            _add_to_scratch(jobs, j, pool[:, 0], pool[:, 1], jobs[j, J_PTR], jobs[j, J_LEN], scratch, scal, 1)
            r += 1
        if _head_fits_scratch(jobs, scratch, work, scal, head):
            return pe, 0
    return now, 0  # unreachable: too-wide jobs are dropped


@kernel
def _backfill(jobs, queue, run_list, heap, pool, cap, free, scratch, work, fkey, stack, tree, scal, now, alloc, head):
    """EASY's backfill scan behind the blocked ``head`` (spec "EASY"; on nodes, see the
    module docstring).  Every candidate that starts is placed by one :func:`_choose` and
    committed by one :func:`_commit` call site, so both inline once here."""
    kind = _pool_type(jobs, head)
    c = head
    if (
        scal[V_EASY_VALID] and kind >= 0 and scal[V_EASY_HEAD] == head
        and scal[V_EASY_SHADOW] > now
    ):
        # Nothing ended or started since the last pass, which had this head: the free
        # resources, the shadow time and extra are those it ended with, and every job it
        # scanned would be refused again (the horizon only shrank), so only jobs that
        # arrived since need a look.
        shadow = scal[V_EASY_SHADOW]
        extra = scal[V_EASY_EXTRA]
        c = scal[V_EASY_NEXT] - 1
    else:
        shadow, extra = _shadow(jobs, run_list, pool, free, scratch, work, scal, head, now, kind)
    horizon = shadow - now
    while True:
        c = _tree_next(tree, stack, scal, c + 1, kind, extra, horizon)
        if c < 0:
            break
        if jobs[c, J_STATE] != JobState.QUEUED or not _fits_now(jobs, free, work, scal, c):
            continue
        node_check = False
        if jobs[c, J_PRED] > horizon:
            if kind >= 0:
                use = jobs[c, J_UNITS] * jobs[c, J_REQ + kind]
                if use > extra:
                    continue
                extra -= use
            else:
                # Node-feasible reservation: place c as it would start now, take its
                # nodes out of the shadow-time resources, keep it only if the head
                # still fits there.
                node_check = True
        used = _choose(jobs, cap, free, work, fkey, scal, c, alloc)
        if node_check:
            _add_to_scratch(jobs, c, work[W_NODE], work[W_COUNT], 0, used, scratch, scal, -1)
            if not _head_fits_scratch(jobs, scratch, work, scal, head):
                _add_to_scratch(jobs, c, work[W_NODE], work[W_COUNT], 0, used, scratch, scal, 1)
                continue
        if alloc == PRIORITY_WEIGHTED:
            _prioritise(jobs, scal, c, -1)
        _commit(jobs, run_list, heap, pool, free, work, scal, c, now, used)
        _tree_set(tree, jobs, c, False)
    scal[V_EASY_VALID] = 1
    scal[V_EASY_HEAD] = head
    scal[V_EASY_SHADOW] = shadow
    scal[V_EASY_EXTRA] = extra
    scal[V_EASY_NEXT] = scal[V_NEXT]


@kernel
def _sort_queue(queue, qh, n, qkey, qwork):
    """Stable sort of queue[qh : qh + n] by qkey[:n] (float64, ascending)."""
    _argsort_stable(qkey[:n], qwork[0, :n], qwork[1, :n])
    for r in range(n):
        qwork[1, r] = queue[qh + qwork[0, r]]
    for r in range(n):
        queue[qh + r] = qwork[1, r]


@kernel
def _prb_order(jobs, queue, scal, qkey, qwork, now):
    """Put the queue in PRB order: priority = wait / expected wait of the job's queue,
    highest first; ties by demand = units x (cores + GPUs + MICs) per unit x pred,
    smallest first; then (submit, id)."""
    _queue_compact(jobs, queue, scal)
    qh = scal[V_QH]
    n = scal[V_QN]
    for r in range(n):
        qkey[r] = queue[qh + r]  # job index: (submit, id) order
    _sort_queue(queue, qh, n, qkey, qwork)
    for r in range(n):
        j = queue[qh + r]
        per_unit = jobs[j, J_REQ] + jobs[j, J_REQ + 1] + jobs[j, J_REQ + 2]
        qkey[r] = float(jobs[j, J_UNITS] * per_unit) * float(jobs[j, J_PRED])
    _sort_queue(queue, qh, n, qkey, qwork)
    for r in range(n):
        j = queue[qh + r]
        qkey[r] = -float(now - jobs[j, J_SUBMIT]) / float(jobs[j, J_QWAIT])
    _sort_queue(queue, qh, n, qkey, qwork)


@inline_kernel
def _pass(jobs, queue, run_list, heap, pool, cap, free, scratch, work, fkey, stack, qkey, qwork, tree, scal, now, sched, alloc):
    """One pass of scheduler ``sched`` with allocator ``alloc`` at ``now``.  FCFS and SJF
    differ only in queue order, which the engine keeps on insertion; PRB reorders the
    queue by priority first; all of them then start jobs in order while the next fits (as
    SJF does in AccaSim), and EASY goes on to backfill behind the job that did not fit.
    One call site per step keeps the inlined loop small (see :mod:`schedbench._jit`)."""
    if sched == Scheduler.PRB:
        _prb_order(jobs, queue, scal, qkey, qwork, now)
    head = _start_in_order(jobs, queue, run_list, heap, pool, cap, free, work, fkey, scal, now, alloc)
    if sched == Scheduler.EASY and head >= 0:
        _backfill(jobs, queue, run_list, heap, pool, cap, free, scratch, work, fkey, stack, tree, scal, now, alloc, head)


@kernel
def _run(jobs, queue, run_list, heap, pool, cap, free, scratch, work, fkey, stack, qkey, qwork, timeline, tree, memo, scal, sched, alloc, max_passes):
    """Replay until the end or ``max_passes`` passes: advance to each decision point,
    run a pass, record the timeline.  Arrays as in :class:`schedbench.engine.State`.
    Returns the passes run; fewer than ``max_passes`` means the replay is over."""
    passes = 0
    while passes < max_passes:
        now = _advance(jobs, queue, run_list, heap, pool, free, tree, memo, scal)
        if now < 0:
            break
        _pass(jobs, queue, run_list, heap, pool, cap, free, scratch, work, fkey, stack, qkey, qwork, tree, scal, now, sched, alloc)
        _record(timeline, scal, now)
        passes += 1
    return passes


def run(state, sched: int, alloc: int, progress=None, chunk: int = 1 << 62) -> int:
    """Run the jitted loop on an :class:`schedbench.engine.State` to the end.  With a
    ``progress(started_jobs)`` callback, the loop returns to Python every ``chunk``
    passes to report."""
    total = 0
    while True:
        done = _run(*state, int(sched), int(alloc), chunk)
        total += done
        if progress is not None:
            progress(int(state.scal[V_STARTED]))
        if done < chunk:
            return total


def needs_sjf_queue(sched: int) -> bool:
    return sched == Scheduler.SJF


def needs_backfill_tree(sched: int) -> bool:
    return sched == Scheduler.EASY
