"""The wake heap: a min-heap of the instants at which conservative backfilling must pass
although no job ends or arrives then (planned starts, expiring bookings).  Entries are
(time, code), code j >= 0 the planned start of job j, -(j + 1) the expiry of job j's
booking, in rows [0, scal[S_WN]) of columns 0-1; column 2, row j, is the row of job j's
entry (-1: none).  A job has at most one entry: pushing one for a job that has an entry
moves that entry (a booking moved, or a started job's expiry), so the heap holds at
most one row per job.  An entry goes stale only when its job ends before its booking
does; such entries are dropped when met (:func:`_wake_valid`).

The heap was lazy before (a move pushed a new entry and left the old one stale): on
HPC2N under conservative on a pool, 1.5 M moves left as many stale entries, which had
to be popped or dropped, in a heap of about 6,000 rows instead of a few hundred."""

from __future__ import annotations

from ..._jit import inline_kernel, internal_kernel
from ...core.layout import J_STATE, JobState
from .state import B_BEGIN, B_END, S_WN

H_TIME, H_CODE, H_AT = range(3)
"""Columns of the wake array: an entry's time and code (rows [0, scal[S_WN])), and, row
j, the row of job j's entry (-1: none)."""


@inline_kernel
def _job_of(code):
    return code if code >= 0 else -code - 1


@inline_kernel
def _wake_less(wake, a, b):
    return wake[a, H_TIME] < wake[b, H_TIME] or (wake[a, H_TIME] == wake[b, H_TIME] and
                                                 wake[a, H_CODE] < wake[b, H_CODE])


@inline_kernel
def _wake_swap(wake, a, b):
    """Swap the entries in rows a and b, keeping their jobs' rows."""
    for k in range(2):
        tmp = wake[a, k]
        wake[a, k] = wake[b, k]
        wake[b, k] = tmp
    wake[_job_of(wake[a, H_CODE]), H_AT] = a
    wake[_job_of(wake[b, H_CODE]), H_AT] = b


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
        _wake_swap(wake, i, c)
        i = c


@inline_kernel
def _wake_sift_up(wake, i):
    while i > 0:
        p = (i - 1) >> 1
        if not _wake_less(wake, i, p):
            return
        _wake_swap(wake, i, p)
        i = p


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
    wake[_job_of(wake[0, H_CODE]), H_AT] = -1
    n = scal[S_WN] - 1
    scal[S_WN] = n
    if n > 0:
        wake[0, H_TIME] = wake[n, H_TIME]
        wake[0, H_CODE] = wake[n, H_CODE]
        wake[_job_of(wake[0, H_CODE]), H_AT] = 0
        _wake_sift_down(wake, n, 0)


@internal_kernel
def _wake_push(wake, scal, t, code):
    """Set the entry of code's job to (t, code): moved where the job has one, else added."""
    j = _job_of(code)
    i = wake[j, H_AT]
    if i < 0:
        i = scal[S_WN]
        scal[S_WN] = i + 1
        wake[j, H_AT] = i
        wake[i, H_TIME] = t
        wake[i, H_CODE] = code
        _wake_sift_up(wake, i)
        return
    earlier = t < wake[i, H_TIME] or (t == wake[i, H_TIME] and code < wake[i, H_CODE])
    wake[i, H_TIME] = t
    wake[i, H_CODE] = code
    if earlier:
        _wake_sift_up(wake, i)
    else:
        _wake_sift_down(wake, scal[S_WN], i)


@internal_kernel
def _next_wake(jobs, book, wake, scal):
    """The earliest standing wake instant (stale entries on top are dropped), or -1."""
    while scal[S_WN] > 0:
        if _wake_valid(jobs, book, wake[0, H_TIME], wake[0, H_CODE]):
            return wake[0, H_TIME]
        _wake_pop(wake, scal)
    return -1
