"""The queue: job indices in queue order, with holes where jobs started.

FIFO order is arrival order (an append); PRED order (pred, submit, id) is kept by
insertion.  Started jobs leave holes that :func:`_queue_tidy` skips and compacts, so a
start is O(1) amortised wherever it happens in the queue.
"""

from __future__ import annotations

from .._jit import inline_kernel, internal_kernel, kernel
from .layout import J_PRED, J_STATE, JobState
from .state import C_QH, C_QN, C_QORDER, C_QSPAN, QueueOrder


@internal_kernel
def _queue_insert(jobs, queue, scal, j):
    """Put job ``j`` (int64 job matrix ``jobs``) into ``queue`` at its place in the core's
    queue order."""
    qh = scal[C_QH]
    span = scal[C_QSPAN]
    pos = qh + span
    if scal[C_QORDER] == QueueOrder.PRED:
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
    scal[C_QSPAN] = span + 1
    scal[C_QN] += 1


@inline_kernel
def _queue_tidy(jobs, queue, scal):
    """Skip started jobs at the head; compact when holes outnumber queued jobs (amortised
    O(1) per start, order kept).  Returns the first queued job in queue order, or -1."""
    qh = scal[C_QH]
    span = scal[C_QSPAN]
    while span > 0 and jobs[queue[qh], J_STATE] != JobState.QUEUED:
        qh += 1
        span -= 1
    if span - scal[C_QN] > scal[C_QN] + 32:
        w = qh
        for r in range(qh, qh + span):
            if jobs[queue[r], J_STATE] == JobState.QUEUED:
                queue[w] = queue[r]
                w += 1
        span = w - qh
    scal[C_QH] = qh
    scal[C_QSPAN] = span
    return queue[qh] if span > 0 else -1


@kernel
def _queue_compact(jobs, queue, scal):
    """Drop every hole: afterwards queue[C_QH : C_QH + C_QN] are exactly the queued jobs,
    in their current order."""
    qh = scal[C_QH]
    w = qh
    for r in range(qh, qh + scal[C_QSPAN]):
        if jobs[queue[r], J_STATE] == JobState.QUEUED:
            queue[w] = queue[r]
            w += 1
    scal[C_QSPAN] = w - qh
