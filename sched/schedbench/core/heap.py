"""The event queue: an array-backed binary heap keyed by (time, event rank, sequence).

Ranks order the events of one instant (every ending job frees its resources first, then
every arriving job joins the queue in (submit, id) order, then the decision tick); the
sequence number makes equal (time, rank) events leave in push order, as in SimPy.
"""

from __future__ import annotations

import enum

from .._jit import inline_kernel, internal_kernel
from .state import C_HN, C_SEQ


class Event(enum.IntEnum):
    """Event ranks: lower ranks are processed first at one instant."""

    END = 0
    SUBMIT = 1
    TICK = 2


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


@internal_kernel
def _push(heap, scal, time, rank, job):
    """Push an event (time s, :class:`Event` rank, job index or -1) onto ``heap`` (int64
    (capacity, 4)); ``scal`` is the core's scalars (heap size, sequence)."""
    i = scal[C_HN]
    scal[C_HN] = i + 1
    heap[i, 0] = time
    heap[i, 1] = rank
    heap[i, 2] = scal[C_SEQ]
    heap[i, 3] = job
    scal[C_SEQ] += 1
    while i > 0:
        parent = (i - 1) >> 1
        if _heap_less(heap, i, parent):
            _heap_swap(heap, i, parent)
            i = parent
        else:
            break


@internal_kernel
def _pop(heap, scal):
    """Remove the smallest event; returns (time, rank, job)."""
    t, r, j = heap[0, 0], heap[0, 1], heap[0, 3]
    n = scal[C_HN] - 1
    scal[C_HN] = n
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
