"""PRB (Netti et al. §2.2): priority = wait / expected wait of the job's queue, highest
first; ties by demand = units x (cores + GPUs + MICs) per unit x pred, smallest first;
then (submit, id).  Each pass puts the queue in that order, then:

* **prb** (registry name ``prb``): tries every queued job in that order, starting each one
  that fits and skipping those that do not.  This is what the authors ran (AccaSim's
  ``extra/dispatching_methods/prb_scheduler.py`` allocates with ``skip=True``) and what
  the paper's text describes (it never says PRB blocks).
* **prb-blocking** (registry name ``prb-blocking``): starts jobs in that order while the
  next fits and stops at the first that does not, like FCFS and SJF (schedbench's ``prb``
  before the skipping rule; kept for comparison).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import inline_kernel, internal_kernel, kernel
from ..core import JittedScheduler
from ..core.api import (
    C_ENDED,
    C_FREE,
    C_MAINT,
    C_NEXT,
    C_QH,
    C_QSPAN,
    C_STARTED,
    counts_attempts,
    implements,
    reads_queue_order,
    schedule,
    try_start,
)
from ..core.layout import J_PRED, J_REQ, J_STATE, J_SUBMIT, J_UNITS, JobState
from ..io.jobs import expected_queue_wait
from .inorder import _start_in_order


class Prb(NamedTuple):
    """qwait int64 (n,): each job's expected queue wait (s, >= 1, see
    :func:`expected_queue_wait`); qkey float64 (n,): the queued jobs' priority keys;
    fresh int64 (n,): the arrivals a short pass offers (:func:`_offer_arrivals`); last
    int64 (4,): the core's ended and started counts and next arrival after the last pass
    (ended -1: none yet), and whether a short pass may be taken at all (0 when some job
    arrives at its predecessor's end: arrivals are then not a range of job indices)."""

    qwait: np.ndarray
    qkey: np.ndarray
    fresh: np.ndarray
    last: np.ndarray


class PrbBlocking(NamedTuple):
    """:class:`Prb`'s state for the blocking variant (same arrays; fresh and last unused:
    with blocking, a job behind the blocked one that time moved ahead may start without
    any end, so every pass is whole)."""

    qwait: np.ndarray
    qkey: np.ndarray
    fresh: np.ndarray
    last: np.ndarray


@inline_kernel
def _before(jobs, a, ka, b, kb):
    """Whether job ``a`` (priority key ``ka``) comes before job ``b`` (key ``kb``) in PRB
    order: smaller key (higher wait / expected wait), then smaller demand, then smaller
    job index, i.e. (submit, id)."""
    if ka != kb:
        return ka < kb
    da = float(jobs[a, J_UNITS] * (jobs[a, J_REQ] + jobs[a, J_REQ + 1] + jobs[a, J_REQ + 2])) * float(jobs[a, J_PRED])
    db = float(jobs[b, J_UNITS] * (jobs[b, J_REQ] + jobs[b, J_REQ + 1] + jobs[b, J_REQ + 2])) * float(jobs[b, J_PRED])
    if da != db:
        return da < db
    return a < b


@kernel
def _prb_order(jobs, queue, scal, qwait, qkey, now):
    """Put the queue (the core's jobs, queue, scal) in PRB order at ``now`` (s); qkey
    float64 (n,) is a buffer.  Changes queue, scal.

    The queue is kept in the previous pass's order, and that order changes little: the
    key -(now - submit) / qwait of two jobs of the same expected wait keeps their order
    for ever (the earlier submit first), two jobs of different expected waits swap at
    most once while both wait (two lines cross once), and an arrival, key 0, joins the
    tail.  An insertion sort on the exact order therefore moves only the arrivals and
    the jobs that crossed since the last pass: O(queue + moves), where sorting the whole
    queue again each pass cost 85 % of a PRB replay of HPC2N.  One walk drops the holes
    of started jobs, computes the keys and inserts (as queue_compact, then the keys,
    then the sort: the writes never pass the entry being read)."""
    qh = scal[C_QH]
    m = 0
    for r in range(qh, qh + scal[C_QSPAN]):
        j = queue[r]
        if jobs[j, J_STATE] != JobState.QUEUED:
            continue
        k = -float(now - jobs[j, J_SUBMIT]) / float(qwait[j])
        p = m - 1
        while p >= 0 and _before(jobs, j, k, queue[qh + p], qkey[p]):
            queue[qh + p + 1] = queue[qh + p]
            qkey[p + 1] = qkey[p]
            p -= 1
        queue[qh + p + 1] = j
        qkey[p + 1] = k
        m += 1
    scal[C_QSPAN] = m


@inline_kernel
def _offer_each(core, alloc, now, order, lo, hi, every):
    """Offer every queued job of order[lo:hi], in that order, to the allocator once;
    start those that fit, skip the others.  Starts leave holes in the queue, which later
    passes drop (:func:`_prb_order` compacts it).  Unless ``every`` (an allocator that
    counts each attempt), the offers stop once no core, GPU or MIC is free: every job
    asks at least one of them (jobs asking none are dropped before the replay), so the
    rest would all fail."""
    jobs = core.jobs
    scal = core.scal
    for r in range(lo, hi):
        if not every and scal[C_FREE] == 0 and scal[C_FREE + 1] == 0 and scal[C_FREE + 2] == 0:
            break
        j = order[r]
        if jobs[j, J_STATE] == JobState.QUEUED:
            try_start(core, alloc, j, now)


@internal_kernel
def _order_arrivals(sched, jobs, now, first, last):
    """Put the queued jobs of index in [first, last) (the arrivals since the last pass)
    in PRB order at ``now`` into sched.fresh; returns their count."""
    fresh = sched.fresh
    qkey = sched.qkey  # a free buffer between passes: _prb_order writes it afresh
    m = 0
    for j in range(first, last):
        if jobs[j, J_STATE] != JobState.QUEUED:
            continue
        k = -float(now - jobs[j, J_SUBMIT]) / float(sched.qwait[j])
        p = m - 1
        while p >= 0 and _before(jobs, j, k, fresh[p], qkey[p]):
            fresh[p + 1] = fresh[p]
            qkey[p + 1] = qkey[p]
            p -= 1
        fresh[p + 1] = j
        qkey[p + 1] = k
        m += 1
    return m


@implements(schedule, Prb)
@inline_kernel
def _pass(sched, core, pred, alloc, now):
    """schedule() for prb: the queue in PRB order at ``now`` (s), then every queued job
    offered once, in that order.

    When no job ended (and none started outside a pass) since the last pass, every job
    that pass offered in vain would fail again: the free resources only shrank, and a fit
    depends on them alone.  Then only the arrivals since are offered, in their PRB order,
    which starts the same jobs on the same nodes as the whole pass would (HPC2N
    simulate_s 0.28-0.29 -> 0.21 s).  Not with maintenance windows (nodes come back
    without an end), nor with an allocator that counts every attempt (Priority-Weighted),
    nor with job dependencies (a released job is not among the indices read since): those
    take the whole pass; so does an allocator that reads the queue's order (Weighted
    under the authors' rule weighs the jobs queued behind the one it places: the queue
    must be in the order the whole pass offers in, and putting it in order each pass
    cost prb+ff on HPC2N a fifth of its time)."""
    scal = core.scal
    last = sched.last
    every = counts_attempts(alloc)
    if (last[3] != 0 and last[0] == scal[C_ENDED] and last[1] == scal[C_STARTED] and scal[C_MAINT] == 0
            and not every and not reads_queue_order(alloc)):
        order, lo, hi = sched.fresh, 0, _order_arrivals(sched, core.jobs, now, last[2], scal[C_NEXT])
    else:
        _prb_order(core.jobs, core.queue, scal, sched.qwait, sched.qkey, now)
        order, lo, hi = core.queue, scal[C_QH], scal[C_QH] + scal[C_QSPAN]
    _offer_each(core, alloc, now, order, lo, hi, every)  # one inlined copy of try_start
    last[0] = scal[C_ENDED]
    last[1] = scal[C_STARTED]
    last[2] = scal[C_NEXT]


@implements(schedule, PrbBlocking)
@inline_kernel
def _pass_blocking(sched, core, pred, alloc, now):
    """schedule() for prb-blocking: the queue in PRB order at ``now`` (s), then starts in
    that order until the first job that does not fit."""
    _prb_order(core.jobs, core.queue, core.scal, sched.qwait, sched.qkey, now)
    _start_in_order(core, alloc, now)


def _buffers(setup) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n = setup.table.n_jobs
    released = bool((setup.jobs[:, J_STATE] == JobState.BLOCKED).any())  # job dependencies
    return (expected_queue_wait(setup.table, setup.meta), np.zeros(n), np.zeros(n, np.int64),
            np.array([-1, 0, 0, 0 if released else 1], np.int64))


def prb(setup) -> JittedScheduler:
    return JittedScheduler(Prb(*_buffers(setup)))


def prb_blocking(setup) -> JittedScheduler:
    return JittedScheduler(PrbBlocking(*_buffers(setup)))
