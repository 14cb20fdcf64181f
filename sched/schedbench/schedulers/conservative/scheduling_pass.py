"""The pass (the ``schedule`` hook): expiries extend bookings, then after an extension
every queued job is booked again, else after a release the queue is compressed; then
each arrival is booked at its earliest fit; then every job whose booking begins now
starts, in queue order."""

from __future__ import annotations

from ..._jit import inline_kernel, internal_kernel
from ...core.api import (
    C_QH,
    C_QSPAN,
    W_COUNT,
    W_NODE,
    commit,
    implements,
    queue_tidy,
    schedule,
    sort_in_place,
    try_start,
)
from ...core.layout import J_EST, J_RUN, J_START, J_STATE, N_RES, JobState
from ...plan.rusv import kernel_add
from .bookings import _book, _move, _set_booking, _trim_vectors
from .events import _flags_at
from .fit import _book_at_fit, _earlier_fit
from .state import (
    B_BEGIN,
    B_COUNT,
    B_END,
    B_PTR,
    S_EXTENDED,
    S_FREED,
    S_FREED_NOW,
    S_GROW,
    S_MEMO_LIMIT,
    S_NARR,
    S_NSTART,
    S_PMF_N,
    S_RELEASE,
    S_TRIM,
    S_VACATED,
    S_WN,
    ConservativeNodes,
    ConservativePool,
    _by_state,
    _d,
    _orders_stale,
)
from .wake import _wake_pop, _wake_push, _wake_valid


@internal_kernel
def _expire(sched, core, j, now):
    """Job j's booking ends now and it still runs: extend it (spec, "Expiries")."""
    jobs = core.jobs
    start = jobs[j, J_START]
    new_end = start + jobs[j, J_EST]
    if new_end <= now:
        new_end = now + max(1, now - start)
    old_end = sched.book[j, B_END]
    _book(sched, core, j, now, new_end, 1)
    if sched.slots.shape[0] > N_RES:  # nodes: the end moved on the ends vector
        kernel_add(sched.slots[N_RES], sched.meta[N_RES], old_end, old_end + 1, -1)
    sched.book[j, B_END] = new_end
    sched.scal[S_EXTENDED] = 1
    if start + jobs[j, J_RUN] > new_end:
        _wake_push(sched.wake, sched.scal, new_end, -(j + 1))


@internal_kernel
def _pop_due(sched, core, now):
    """Pop every wake entry due at or before now: extend expiring bookings, collect the
    jobs planned to start now into sched.starting."""
    jobs = core.jobs
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
            _expire(sched, core, -code - 1, now)
        else:
            sched.starting[sc[S_NSTART]] = code
            sc[S_NSTART] += 1


@internal_kernel
def _rebook_all(sched, core, alloc, now):
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
            _book(sched, core, j, book[j, B_BEGIN], book[j, B_END], -1)
    for r in range(qh, qh + span):
        j = queue[r]
        if jobs[j, J_STATE] == JobState.QUEUED and book[j, B_BEGIN] >= 0:
            _book_at_fit(sched, core, alloc, j, now)
    sched.scal[S_VACATED] = -1  # every booking is an earliest fit on the plan as it is


@internal_kernel
def _compress(sched, core, alloc, now):
    """After a release: each queued job but this instant's arrivals, in queue order, moves
    to its earliest fit when that is earlier than its booking.

    Every job was booked, or tried, since the plan last freed room anywhere but at this
    instant's releases, the moves of the last compression and the moves of this one so
    far; the latest end of all that room (sched.scal[S_FREED]), bounds where a window that now fits
    and did not then may start (pool: :func:`_earlier_fit`)."""
    jobs = core.jobs
    queue = core.queue
    book = sched.book
    qh = core.scal[C_QH]
    span = core.scal[C_QSPAN]
    sc = sched.scal
    # kept in sched.scal, not in locals: a loop-carried local here made the compiled loop
    # about 3x slower (measured on KTH-SP2 and HPC2N, pool)
    sc[S_FREED] = max(sc[S_VACATED], sc[S_FREED_NOW])  # the last compression's moves, this instant's ends
    sc[S_MEMO_LIMIT] = -1  # (nodes) tries of an earlier pass saw another plan
    sc[S_VACATED] = -1
    for r in range(qh, qh + span):
        j = queue[r]
        if jobs[j, J_STATE] != JobState.QUEUED:
            continue
        b0 = book[j, B_BEGIN]
        if b0 <= now:  # an arrival (-1), or planned to start now: cannot move earlier
            continue
        e0 = book[j, B_END]
        t = _earlier_fit(sched, core, alloc, j, now, b0, e0)
        if t < 0:
            continue
        end = t + _d(jobs, j)
        _move(sched, core, j, b0, e0, t, end)
        _set_booking(jobs, sched, j, t, end)
        sc[S_FREED] = max(sc[S_FREED], e0)  # the move vacated room within [b0, e0)
        sc[S_VACATED] = max(sc[S_VACATED], e0)


@internal_kernel
def _book_arrivals(sched, core, alloc, now):
    """Book each arrival of this instant at its earliest fit, in (submit, id) order."""
    sc = sched.scal
    for a in range(sc[S_NARR]):
        _book_at_fit(sched, core, alloc, sched.arrivals[a], now)
    sc[S_NARR] = 0


def _start(sched, core, alloc, j, now):
    """Start job j now (its booking begins now); returns whether it could."""


@inline_kernel
def _start_pool(sched, core, alloc, j, now):
    return try_start(core, alloc, j, now)


@inline_kernel
def _start_nodes(sched, core, alloc, j, now):
    p = sched.book[j, B_PTR]
    used = sched.book[j, B_COUNT]
    for u in range(used):
        core.work[W_NODE, u] = sched.bnodes[p + u, 0]
        core.work[W_COUNT, u] = sched.bnodes[p + u, 1]
    commit(core, alloc, j, now, used)
    return True


_by_state(_start, _start_pool, _start_nodes)


@internal_kernel
def _start_due(sched, core, alloc, now):
    """Start every queued job whose booking begins now, in queue order (job index order:
    the queue is in (submit, id) order)."""
    jobs = core.jobs
    sc = sched.scal
    _pop_due(sched, core, now)
    m = sc[S_NSTART]
    starting = sched.starting
    sort_in_place(starting, m)
    last = -1
    for i in range(m):
        j = starting[i]
        if j == last or jobs[j, J_STATE] != JobState.QUEUED or sched.book[j, B_BEGIN] != now:
            continue
        last = j
        if _start(sched, core, alloc, j, now):
            end = sched.book[j, B_END]
            if now + jobs[j, J_RUN] > end:
                _wake_push(sched.wake, sc, end, -(j + 1))
        else:
            sc[S_GROW] = -1  # unreachable: the plan never exceeds the machine
    sc[S_NSTART] = 0


def _trim_nodes(sched, now):
    """Trim the node vectors too (nodes only)."""


@inline_kernel
def _trim_nodes_pool(sched, now):
    pass


@inline_kernel
def _trim_nodes_nodes(sched, now):
    _trim_vectors(sched.nslots, sched.nmeta, now)
    sched.npmf_n[:] = -1  # they start at the instant
    _orders_stale(sched.scal)  # (and the orders read from them)


_by_state(_trim_nodes, _trim_nodes_pool, _trim_nodes_nodes)


@inline_kernel
def _pass(sched, core, pred, alloc, now):
    """One pass at ``now`` (see the module docstring for the order)."""
    sc = sched.scal
    _flags_at(sc, now)
    _trim_vectors(sched.slots, sched.meta, now)
    _trim_nodes(sched, now)
    _trim_vectors(sched.site.lslots, sched.site.lmeta, now)
    sc[S_TRIM] = now
    sc[S_PMF_N] = 0  # the prefix maxima start at now
    _pop_due(sched, core, now)  # expiries first; planned starts are collected
    queue_tidy(core.jobs, core.queue, core.scal)  # bounds the holes compress walks over
    if sc[S_EXTENDED]:
        _rebook_all(sched, core, alloc, now)
    elif sc[S_RELEASE]:
        _compress(sched, core, alloc, now)
    _book_arrivals(sched, core, alloc, now)
    _start_due(sched, core, alloc, now)
    sc[S_RELEASE] = 0
    sc[S_EXTENDED] = 0


for _cls in (ConservativePool, ConservativeNodes):
    implements(schedule, _cls)(_pass)
del _cls
