"""The wake heap: a lazy min-heap of the instants at which conservative backfilling must
pass although no job ends or arrives then (planned starts, expiring bookings).  Entries
are (time, code), code j >= 0 the planned start of job j, -(j + 1) the expiry of job j's
booking; an entry whose booking moved since is stale and dropped when met, or all at once
when they have grown many (:func:`_wake_push`; the entry count that triggers it is
scal[S_WDROP])."""

from __future__ import annotations

from ..._jit import inline_kernel, internal_kernel
from ...core.layout import J_STATE, JobState
from .state import B_BEGIN, B_END, S_WDROP, S_WN


@inline_kernel
def _wake_less(wake, a, b):
    return wake[a, 0] < wake[b, 0] or (wake[a, 0] == wake[b, 0] and wake[a, 1] < wake[b, 1])


@internal_kernel
def _wake_sift_down(wake, n, i):
    while True:
        c = 2 * i + 1
        if c >= n:
            return
        if c + 1 < n and _wake_less(wake, c + 1, c):
            c += 1
        if not _wake_less(wake, c, i):
            return
        for k in range(2):
            tmp = wake[i, k]
            wake[i, k] = wake[c, k]
            wake[c, k] = tmp
        i = c


@inline_kernel
def _wake_valid(jobs, book, t, code):
    """Whether a wake entry still stands: job j queued with its booking beginning at t, or
    job -(code + 1) running with its booking ending at t."""
    if code >= 0:
        return jobs[code, J_STATE] == JobState.QUEUED and book[code, B_BEGIN] == t
    j = -code - 1
    return jobs[j, J_STATE] == JobState.RUNNING and book[j, B_END] == t


@internal_kernel
def _wake_pop(wake, scal):
    """Remove the top entry of the wake heap."""
    n = scal[S_WN] - 1
    scal[S_WN] = n
    if n > 0:
        wake[0, 0] = wake[n, 0]
        wake[0, 1] = wake[n, 1]
        _wake_sift_down(wake, n, 0)


WAKE_SLACK = 4096
"""Stale entries the wake heap may gather beyond twice its standing ones before it drops
them (scal[S_WDROP] keeps the entry count that triggers the next drop)."""


@internal_kernel
def _wake_push(jobs, book, wake, scal, t, code):
    """Push (t, code); when the heap is full, or past scal[S_WDROP] (twice the
    entries that stood at the last drop, plus WAKE_SLACK), drop its stale entries first.
    (At most one entry per job stands, so the heap of 2n rows has room then.)  Every move
    of a booking pushes an entry and leaves the old one stale: dropping them only when
    the heap was full let it grow to the 2n rows of the whole log, and every pop sifted
    through that many (on HPC2N, 405,758 rows for at most 2,501 jobs in the plan).
    Which entries stand, hence every pop's answer, does not depend on when they drop."""
    n = scal[S_WN]
    cap = wake.shape[0]
    if n >= cap or n >= scal[S_WDROP]:
        w = 0
        for r in range(n):
            if _wake_valid(jobs, book, wake[r, 0], wake[r, 1]):
                wake[w, 0] = wake[r, 0]
                wake[w, 1] = wake[r, 1]
                w += 1
        n = w
        for i in range(n // 2 - 1, -1, -1):
            _wake_sift_down(wake, n, i)
        scal[S_WDROP] = min(cap, 2 * n + WAKE_SLACK)
    i = n
    wake[i, 0] = t
    wake[i, 1] = code
    while i > 0:
        p = (i - 1) >> 1
        if not _wake_less(wake, i, p):
            break
        for k in range(2):
            tmp = wake[i, k]
            wake[i, k] = wake[p, k]
            wake[p, k] = tmp
        i = p
    scal[S_WN] = n + 1


@internal_kernel
def _next_wake(jobs, book, wake, scal):
    """The earliest standing wake instant (stale entries on top are dropped), or -1."""
    while scal[S_WN] > 0:
        if _wake_valid(jobs, book, wake[0, 0], wake[0, 1]):
            return wake[0, 0]
        _wake_pop(wake, scal)
    return -1
