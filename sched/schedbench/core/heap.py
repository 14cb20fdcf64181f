"""The event queue: an array-backed binary heap keyed by (time, event rank, sequence).

Ranks order the events of one instant (every ending job frees its resources first, then
every arriving job joins the queue in (submit, id) order, then the decision tick); the
sequence number makes equal (time, rank) events leave in push order, as in SimPy.  A row
is (time * 4 + rank, sequence, job): two integer comparisons order two events.
"""

from __future__ import annotations

import enum

from .._jit import inline_kernel
from .state import C_HN, C_SEQ


class Event(enum.IntEnum):
    """Event ranks: lower ranks are processed first at one instant."""

    END = 0
    SUBMIT = 1
    TICK = 2


def event_key(time: int, rank: int) -> int:
    """A heap row's first column: (time, rank) as one integer."""
    return time * 4 + rank


@inline_kernel
def _push(heap, scal, time, rank, job):
    """Push an event (time s, :class:`Event` rank, job index or -1) onto ``heap`` (int64
    (capacity, 3)); ``scal`` is the core's scalars (heap size, sequence)."""
    i = scal[C_HN]
    scal[C_HN] = i + 1
    key = time * 4 + rank
    seq = scal[C_SEQ]
    scal[C_SEQ] = seq + 1
    while i > 0:  # sift up: move parents down until the new row's place is found
        parent = (i - 1) >> 1
        pk = heap[parent, 0]
        if pk < key or (pk == key and heap[parent, 1] < seq):
            break
        heap[i, 0] = pk
        heap[i, 1] = heap[parent, 1]
        heap[i, 2] = heap[parent, 2]
        i = parent
    heap[i, 0] = key
    heap[i, 1] = seq
    heap[i, 2] = job


@inline_kernel
def _pop(heap, scal):
    """Remove the smallest event; returns (time, rank, job)."""
    key0, job0 = heap[0, 0], heap[0, 2]
    n = scal[C_HN] - 1
    scal[C_HN] = n
    if n > 0:
        key, seq, job = heap[n, 0], heap[n, 1], heap[n, 2]
        i = 0
        while True:  # sift down the last row from the root
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and (
                heap[child + 1, 0] < heap[child, 0]
                or (heap[child + 1, 0] == heap[child, 0] and heap[child + 1, 1] < heap[child, 1])
            ):
                child += 1
            ck = heap[child, 0]
            if ck > key or (ck == key and heap[child, 1] > seq):
                break
            heap[i, 0] = ck
            heap[i, 1] = heap[child, 1]
            heap[i, 2] = heap[child, 2]
            i = child
        heap[i, 0] = key
        heap[i, 1] = seq
        heap[i, 2] = job
    return key0 >> 2, key0 & 3, job0
