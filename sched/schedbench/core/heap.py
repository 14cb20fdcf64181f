"""The event queue: an array-backed binary heap keyed by (time, event rank, sequence).

Ranks order the events of one instant (every ending job frees its resources first, then
every arriving job joins the queue in (submit, id) order, then the decision tick); the
sequence number makes equal (time, rank) events leave in push order, as in SimPy.  A row
is (time * 4 + rank, sequence, job): two integer comparisons order two events.

END and TICK events are pushed, and SUBMIT events of jobs released by their predecessor's
end (job dependencies).  Other arrivals are read from the job matrix, which is in
(submit, id) order: :func:`schedbench.core.steps._advance` takes the next one between
the ENDs and the TICK of its instant, which is where its rank puts it (a push and a pop
per job saved: 7 % fewer perf samples in EASY's replay loop on HPC2N).
"""

from __future__ import annotations

import enum

import numpy as np

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
    (capacity, 3)); ``scal`` is the core's scalars (heap size, sequence): events of equal
    (time, rank) leave in push order."""
    seq = scal[C_SEQ]
    scal[C_SEQ] = seq + 1
    _push_seq(heap, scal, time, rank, seq, job)


@inline_kernel
def _push_seq(heap, scal, time, rank, seq, job):
    """Push an event with the sequence number ``seq`` (events of equal (time, rank) leave
    in increasing ``seq``): a released job's SUBMIT event is pushed with its job index, so
    that the arrivals of one instant join the queue in job index order whatever the order
    their predecessors ended in.

    Row indices are unsigned here and in :func:`_pop`: numba then leaves out the
    negative-index wrap-around of every access (the sift loops were about 15 % of EASY's
    replay loop on HPC2N)."""
    u1 = np.uint64(1)
    i = np.uint64(scal[C_HN])
    scal[C_HN] += 1
    key = time * 4 + rank
    while i > 0:  # sift up: move parents down until the new row's place is found
        parent = (i - u1) >> u1
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
    scal[C_HN] -= 1
    if scal[C_HN] > 0:
        u1 = np.uint64(1)
        n = np.uint64(scal[C_HN])
        key, seq, job = heap[n, 0], heap[n, 1], heap[n, 2]
        i = np.uint64(0)
        while True:  # sift down the last row from the root
            child = (i << u1) + u1
            if child >= n:
                break
            right = child + u1
            if right < n and (
                heap[right, 0] < heap[child, 0]
                or (heap[right, 0] == heap[child, 0] and heap[right, 1] < heap[child, 1])
            ):
                child = right
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
