"""Conservative backfilling on a plan of resource usage vectors (Keller's OpenCCS; Mu'alem
and Feitelson), exactly as ``../shared/spec/replay-semantics.md`` says ("Conservative
backfilling").

Every queued job holds a booking ``[begin, end)`` in a plan of the future, ``d(j) =
max(pred(j), 1)`` long, and starts exactly when its booking begins.  The plan is one
used-items RUSV (:mod:`schedbench.rusv`) per resource type, Keller's system resource set
(sRS), holding the bookings of every running and every queued job.  At one instant: ends
remove their bookings (one that reached past now is a *release*); expiring bookings of
jobs still running are extended (to start + estimate when that is later, else the elapsed
time doubles); arrivals join the queue; then the pass: after an extension every queued job
is booked again in queue order; else after a release the queue is *compressed* (each job,
in queue order, moves to its earliest fit when that is earlier than its booking); then
each arrival is booked at its earliest fit; then every job whose booking begins now
starts, in queue order.  The scheduler asks the core for a pass at every planned start and
every expiry (:func:`schedbench.core.hooks.sched_wake`), from a lazy min-heap of them.

Compression prunes jobs that cannot move: a job can start earlier only if at some instant
before its booking at least its size is free, so the largest free amount before each
booking is read from a prefix maximum of the plan, rebuilt only after a job moved.

Two variants, as EASY's: when every job asks for single units of one resource type,
spread freely (every SWF job), :class:`ConservativePool` plans on that type's totals and
the allocator picks the nodes at start; otherwise :class:`ConservativeNodes` books nodes
too (spec: the earliest fit is the first candidate t -- now, then every booking end after
now -- at which the allocator, visiting nodes in its order with each node's free amount
taken as its minimum over [t, t + d), places the job; the job starts on its booked nodes).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import inline_kernel, internal_kernel, kernel
from ..core import JittedScheduler
from ..core.api import (
    C_QH,
    C_QN,
    C_RN,
    advance,
    implements,
    queue_tidy,
    record,
    sched_enqueued,
    sched_released,
    sched_wake,
    schedule,
    try_start,
)
from ..core.state import C_QSPAN
from ..layout import (
    J_EST,
    J_PRED,
    J_REQ,
    J_REQ_NODES,
    J_RUN,
    J_START,
    J_STATE,
    J_SUBMIT,
    J_UNITS,
    N_RES,
    JobState,
)
from ..rusv import (
    INF,
    M_AVL,
    M_N,
    S_ITEMS,
    S_START,
    S_STOP,
    Kind,
    _add,
    _earliest_fit,
    _first_stop_after,
)

# Slots of the scheduler's scal, int64 (N_SCAL,)
S_WN = 0  # wake-heap entries
S_NARR = 1  # arrivals of this instant (in sched.arrivals)
S_RELEASE = 2  # a booking reaching past now was removed at this instant
S_EXTENDED = 3  # a booking was extended at this instant
S_NOW = 4  # the instant the flags above belong to
S_TRIM = 5  # plan rows ending at or before this instant have been dropped
S_AMAX = 6  # most arrivals at one instant (sizes the room check)
S_GROW = 7  # the loop returned for more room
S_CAP_NEED = 8  # rows every vector needs before the next pass
S_NSTART = 9  # candidates in sched.starting
S_PMF_OK = 10  # sched.pmf describes the plan as it is
S_PMF_N = 11
N_SCAL = 12

# Columns of sched.book, int64 (n, 4): booking begin and end (s; -1 when none), first row
# and row count of the booked nodes in sched.bnodes (node mode).
B_BEGIN, B_END, B_PTR, B_COUNT = range(4)


class ConservativePool(NamedTuple):
    """Conservative backfilling on resource totals.

    slots int64 (N_RES, cap, 3) and meta int64 (N_RES, 5): the plan, one used RUSV per
    resource type; book int64 (n, 4): each job's booking (``B_*``); ptype int64 (n,): the
    job's resource type and size int64 (n,): its units; wake int64 (2n + 16, 2): lazy
    min-heap of (time, code), code j >= 0 a planned start of job j, -(j + 1) the expiry
    of job j's booking; arrivals, starting int64 (n,): buffers; pmf int64 (2, cap): the
    plan's prefix maximum of free items (stop, max free over [now, stop)); scal int64
    (N_SCAL,)."""

    slots: np.ndarray
    meta: np.ndarray
    book: np.ndarray
    ptype: np.ndarray
    size: np.ndarray
    wake: np.ndarray
    arrivals: np.ndarray
    starting: np.ndarray
    pmf: np.ndarray
    scal: np.ndarray


# --------------------------------------------------------------------------- wake heap


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


@internal_kernel
def _wake_push(jobs, book, wake, scal, t, code):
    """Push (t, code); when the heap is full, drop its stale entries first (at most one
    entry per job stands, so the heap of 2n rows always has room then)."""
    n = scal[S_WN]
    if n >= wake.shape[0]:
        w = 0
        for r in range(n):
            if _wake_valid(jobs, book, wake[r, 0], wake[r, 1]):
                wake[w, 0] = wake[r, 0]
                wake[w, 1] = wake[r, 1]
                w += 1
        n = w
        for i in range(n // 2 - 1, -1, -1):
            _wake_sift_down(wake, n, i)
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


# --------------------------------------------------------------------------- plan


@inline_kernel
def _d(jobs, j):
    """The booking length of job j: max(pred, 1)."""
    return max(jobs[j, J_PRED], 1)


@internal_kernel
def _trim(slots, meta, scal, now):
    """Drop the plan rows that end at or before ``now`` (nothing before now is read)."""
    for k in range(slots.shape[0]):
        n = meta[k, M_N]
        i = _first_stop_after(slots[k], n, now)
        if i > 0:
            for r in range(i, n):
                slots[k, r - i, 0] = slots[k, r, 0]
                slots[k, r - i, 1] = slots[k, r, 1]
                slots[k, r - i, 2] = slots[k, r, 2]
            meta[k, M_N] = n - i
    scal[S_TRIM] = now


@inline_kernel
def _pool_book(sched, j, begin, end, sign):
    """Add (sign 1) or remove (sign -1) job j's booking [begin, end) on its type's vector."""
    k = sched.ptype[j]
    lo = max(begin, sched.scal[S_TRIM])
    if lo < end:
        _add(sched.slots[k], sched.meta[k], lo, end, sign * sched.size[j])
    sched.scal[S_PMF_OK] = 0


@internal_kernel
def _build_pmf(slots, meta, pmf, scal, now):
    """pmf[0, i], pmf[1, i]: the stop of plan row i and the most items free at any
    instant of [now, that stop) (gaps count as all free)."""
    n = meta[M_N]
    avl = meta[M_AVL]
    best = -1
    covered = now
    m = 0
    for i in range(n):
        if slots[i, S_STOP] <= now:
            continue
        if slots[i, S_START] > covered:
            best = avl
        free = avl - slots[i, S_ITEMS]
        if free > best:
            best = free
        covered = slots[i, S_STOP]
        pmf[0, m] = covered
        pmf[1, m] = best
        m += 1
    scal[S_PMF_N] = m
    scal[S_PMF_OK] = 1


@inline_kernel
def _most_free_before(slots, meta, pmf, scal, now, t):
    """The most items free at any instant of [now, t) (t > now), from the prefix maxima."""
    m = scal[S_PMF_N]
    lo, hi = 0, m
    while lo < hi:  # first row whose stop is >= t
        mid = (lo + hi) >> 1
        if pmf[0, mid] < t:
            lo = mid + 1
        else:
            hi = mid
    best = pmf[1, lo - 1] if lo > 0 else -1
    covered = pmf[0, lo - 1] if lo > 0 else now
    if covered < t:
        # the part [covered, t): plan row lo (which reaches t) or a gap
        n = meta[M_N]
        i = _first_stop_after(slots, n, covered)
        if i >= n or slots[i, S_START] > covered:
            return meta[M_AVL]
        free = meta[M_AVL] - slots[i, S_ITEMS]
        if free > best:
            best = free
    return best


@inline_kernel
def _pool_fit(sched, jobs, j, now, limit, ex0, ex1):
    """Earliest fit of pool job j at or after now, before ``limit`` (-1: none), counting
    its own booking [ex0, ex1) as absent (ex1 <= ex0: none)."""
    k = sched.ptype[j]
    size = sched.size[j]
    ex = size if ex1 > ex0 else 0
    return _earliest_fit(sched.slots[k], sched.meta[k], size, _d(jobs, j), now, limit, ex0, ex1, ex)


@inline_kernel
def _set_booking(jobs, sched, j, begin, end):
    """Record job j's booking and push its planned start when it changed."""
    book = sched.book
    old = book[j, B_BEGIN]
    book[j, B_BEGIN] = begin
    book[j, B_END] = end
    if begin != old:
        _wake_push(jobs, book, sched.wake, sched.scal, begin, j)


# --------------------------------------------------------------------------- hooks


@inline_kernel
def _flags_at(sc, now):
    """Reset the per-instant flags when the instant changed."""
    if sc[S_NOW] != now:
        sc[S_NOW] = now
        sc[S_RELEASE] = 0
        sc[S_EXTENDED] = 0


@implements(sched_enqueued, ConservativePool)
@internal_kernel
def _enqueued(sched, core, j):
    sc = sched.scal
    sched.arrivals[sc[S_NARR]] = j
    sc[S_NARR] += 1


@implements(sched_released, ConservativePool)
@internal_kernel
def _released(sched, core, j, now):
    sc = sched.scal
    _flags_at(sc, now)
    begin = sched.book[j, B_BEGIN]
    end = sched.book[j, B_END]
    _pool_book(sched, j, begin, end, -1)
    if end > now:
        sc[S_RELEASE] = 1
    sched.book[j, B_BEGIN] = -1
    sched.book[j, B_END] = -1


@implements(sched_wake, ConservativePool)
@internal_kernel
def _wake(sched, core):
    return _next_wake(core.jobs, sched.book, sched.wake, sched.scal)


# --------------------------------------------------------------------------- the pass


@inline_kernel
def _expire(sched, jobs, j, now):
    """Job j's booking ends now and it still runs: extend it (spec, "Expiries")."""
    start = jobs[j, J_START]
    new_end = start + jobs[j, J_EST]
    if new_end <= now:
        new_end = now + max(1, now - start)
    _pool_book(sched, j, now, new_end, 1)
    sched.book[j, B_END] = new_end
    sched.scal[S_EXTENDED] = 1
    if jobs[j, J_START] + jobs[j, J_RUN] > new_end:
        _wake_push(jobs, sched.book, sched.wake, sched.scal, new_end, -(j + 1))


@internal_kernel
def _pop_due(sched, jobs, now):
    """Pop every wake entry due at or before now: extend expiring bookings, collect the
    jobs planned to start now into sched.starting."""
    sc = sched.scal
    book = sched.book
    wake = sched.wake
    while sc[S_WN] > 0 and wake[0, 0] <= now:
        t = wake[0, 0]
        code = wake[0, 1]
        _wake_pop(wake, sc)
        if not _wake_valid(jobs, book, t, code):
            continue
        if code < 0:
            _expire(sched, jobs, -code - 1, now)
        else:
            sched.starting[sc[S_NSTART]] = code
            sc[S_NSTART] += 1


@internal_kernel
def _rebook_all(sched, core, now):
    """After an extension: unbook every queued job but this instant's arrivals, then book
    each again at its earliest fit, in queue order."""
    jobs = core.jobs
    queue = core.queue
    book = sched.book
    qh = core.scal[C_QH]
    span = core.scal[C_QSPAN]
    for r in range(qh, qh + span):
        j = queue[r]
        if jobs[j, J_STATE] == JobState.QUEUED and book[j, B_BEGIN] >= 0:
            _pool_book(sched, j, book[j, B_BEGIN], book[j, B_END], -1)
    for r in range(qh, qh + span):
        j = queue[r]
        if jobs[j, J_STATE] == JobState.QUEUED and book[j, B_BEGIN] >= 0:
            t = _pool_fit(sched, jobs, j, now, INF, 0, 0)
            end = t + _d(jobs, j)
            _pool_book(sched, j, t, end, 1)
            _set_booking(jobs, sched, j, t, end)


@internal_kernel
def _compress(sched, core, now):
    """After a release: each queued job but this instant's arrivals, in queue order, moves
    to its earliest fit when that is earlier than its booking.  A job is skipped when no
    instant before its booking has its size free (prefix maxima of the plan, rebuilt only
    after a move)."""
    jobs = core.jobs
    queue = core.queue
    book = sched.book
    sc = sched.scal
    qh = core.scal[C_QH]
    span = core.scal[C_QSPAN]
    for r in range(qh, qh + span):
        j = queue[r]
        if jobs[j, J_STATE] != JobState.QUEUED:
            continue
        b0 = book[j, B_BEGIN]
        if b0 <= now:  # an arrival (-1), or planned to start now: cannot move earlier
            continue
        k = sched.ptype[j]
        if sc[S_PMF_OK] == 0:
            _build_pmf(sched.slots[k], sched.meta[k], sched.pmf, sc, now)
        if _most_free_before(sched.slots[k], sched.meta[k], sched.pmf, sc, now, b0) < sched.size[j]:
            continue
        e0 = book[j, B_END]
        t = _pool_fit(sched, jobs, j, now, b0, b0, e0)
        if t < 0:
            continue
        _pool_book(sched, j, b0, e0, -1)
        end = t + _d(jobs, j)
        _pool_book(sched, j, t, end, 1)
        _set_booking(jobs, sched, j, t, end)


@internal_kernel
def _book_arrivals(sched, core, now):
    """Book each arrival of this instant at its earliest fit, in (submit, id) order."""
    jobs = core.jobs
    sc = sched.scal
    for a in range(sc[S_NARR]):
        j = sched.arrivals[a]
        t = _pool_fit(sched, jobs, j, now, INF, 0, 0)
        end = t + _d(jobs, j)
        _pool_book(sched, j, t, end, 1)
        _set_booking(jobs, sched, j, t, end)
    sc[S_NARR] = 0


@internal_kernel
def _heapsort(a, m):
    """Sort a[:m] in place (int64, ascending; numba's sort needs its runtime)."""
    for i in range(m // 2 - 1, -1, -1):
        _sift(a, m, i)
    for end in range(m - 1, 0, -1):
        tmp = a[0]
        a[0] = a[end]
        a[end] = tmp
        _sift(a, end, 0)


@inline_kernel
def _sift(a, m, i):
    while True:
        c = 2 * i + 1
        if c >= m:
            return
        if c + 1 < m and a[c + 1] > a[c]:
            c += 1
        if a[c] <= a[i]:
            return
        tmp = a[i]
        a[i] = a[c]
        a[c] = tmp
        i = c


@inline_kernel
def _start_due(sched, core, alloc, now):
    """Start every queued job whose booking begins now, in queue order (job index order:
    the queue is in (submit, id) order)."""
    jobs = core.jobs
    sc = sched.scal
    _pop_due(sched, jobs, now)
    m = sc[S_NSTART]
    starting = sched.starting
    _heapsort(starting, m)
    last = -1
    for i in range(m):
        j = starting[i]
        if j == last or jobs[j, J_STATE] != JobState.QUEUED or sched.book[j, B_BEGIN] != now:
            continue
        last = j
        if try_start(core, alloc, j, now):
            end = sched.book[j, B_END]
            if now + jobs[j, J_RUN] > end:
                _wake_push(jobs, sched.book, sched.wake, sc, end, -(j + 1))
        else:
            sc[S_GROW] = -1  # unreachable: the plan never exceeds the machine
    sc[S_NSTART] = 0


@implements(schedule, ConservativePool)
@inline_kernel
def _pass_pool(sched, core, pred, alloc, now):
    sc = sched.scal
    _flags_at(sc, now)
    if sched.meta[0, M_N] > 0 and sched.slots[0, 0, S_STOP] <= now:
        _trim(sched.slots, sched.meta, sc, now)
    else:
        sc[S_TRIM] = now
    sc[S_PMF_OK] = 0
    _pop_due(sched, core.jobs, now)  # expiries first; planned starts are collected
    queue_tidy(core.jobs, core.queue, core.scal)  # bounds the holes compress walks over
    if sc[S_EXTENDED]:
        _rebook_all(sched, core, now)
    elif sc[S_RELEASE]:
        _compress(sched, core, now)
    _book_arrivals(sched, core, now)
    _start_due(sched, core, alloc, now)
    sc[S_RELEASE] = 0
    sc[S_EXTENDED] = 0


@inline_kernel
def _room(sched, core):
    """Whether every plan vector has room for the next pass: a vector holds at most 2b + 1
    rows for b bookings, and an operation needs as many again."""
    need = 4 * (core.scal[C_QN] + core.scal[C_RN] + sched.scal[S_AMAX]) + 16
    if need > sched.slots.shape[1]:
        sched.scal[S_CAP_NEED] = need
        sched.scal[S_GROW] = 1
        return False
    return True


@kernel
def _run_pool(core, pred, sched, alloc, max_passes):
    """The replay loop compiled for conservative backfilling on resource totals."""
    passes = 0
    while passes < max_passes:
        if not _room(sched, core):
            break
        now = advance(core, pred, sched, alloc)
        if now < 0:
            break
        _pass_pool(sched, core, pred, alloc, now)
        record(core.timeline, core.scal, now)
        passes += 1
    return passes


def _grow(state) -> None:
    """Enlarge the plan's vectors in place when the loop asked for room."""
    sc = state.scal
    if sc[S_GROW] != 1:
        if sc[S_GROW] == -1:
            raise AssertionError("conservative: a job planned to start now did not fit")
        return
    k, cap, _ = state.slots.shape
    new_cap = max(int(sc[S_CAP_NEED]), cap + cap // 2)
    flat = state.slots.reshape(-1)
    state.slots.resize((k, new_cap, 3), refcheck=False)
    flat = state.slots.reshape(-1)
    for v in range(k - 1, 0, -1):  # move each vector's rows to its new place, last first
        flat[v * new_cap * 3 : v * new_cap * 3 + cap * 3] = flat[v * cap * 3 : (v + 1) * cap * 3].copy()
    state.pmf.resize((2, new_cap), refcheck=False)
    sc[S_GROW] = 0


def _pool_types(J: np.ndarray) -> np.ndarray | None:
    """Each job's resource type when every job is single units of one type spread freely,
    else None."""
    req = J[:, J_REQ : J_REQ + N_RES]
    if not np.all((J[:, J_REQ_NODES] <= 0) & ((req > 0).sum(axis=1) <= 1) & (req.max(axis=1) <= 1)):
        return None
    return np.argmax(req > 0, axis=1).astype(np.int64)


def _most_arrivals(J: np.ndarray) -> int:
    live = J[J[:, J_STATE] != JobState.DROPPED, J_SUBMIT]
    if live.size == 0:
        return 0
    return int(np.unique(live, return_counts=True)[1].max())


def conservative(setup) -> JittedScheduler:
    J = setup.jobs
    n = J.shape[0]
    cap_total = setup.machine.capacity.sum(axis=0)
    ptype = _pool_types(J)
    if ptype is None:
        raise NotImplementedError("conservative on nodes: see ConservativeNodes")
    cap = 64
    meta = np.zeros((N_RES, 5), dtype=np.int64)
    meta[:, 1] = cap_total
    meta[:, 2] = cap_total
    meta[:, 3] = 1
    meta[:, 4] = int(Kind.USED)
    book = np.full((n, 4), -1, dtype=np.int64)
    scal = np.zeros(N_SCAL, dtype=np.int64)
    scal[S_NOW] = -1
    scal[S_AMAX] = _most_arrivals(J)
    state = ConservativePool(
        slots=np.zeros((N_RES, cap, 3), dtype=np.int64), meta=meta, book=book, ptype=ptype,
        size=J[:, J_UNITS].copy(), wake=np.zeros((2 * n + 16, 2), dtype=np.int64),
        arrivals=np.zeros(n, dtype=np.int64), starting=np.zeros(2 * n + 16, dtype=np.int64),
        pmf=np.zeros((2, cap), dtype=np.int64), scal=scal,
    )
    return JittedScheduler(state, _run_pool, grow=_grow)
