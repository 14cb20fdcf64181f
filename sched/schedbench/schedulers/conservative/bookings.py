"""Bookings on the plan: adding, removing and moving a job's booking on its type's
vector (pool) or on its booked nodes (nodes), the queued jobs' booked nodes (bnodes),
trimming the past off the vectors, and recording a booking."""

from __future__ import annotations

from ..._jit import inline_kernel, internal_kernel
from ...core.api import W_COUNT, W_NODE
from ...core.layout import J_NODES, J_PTR, J_REQ, J_STATE, N_RES, JobState
from ...plan.rusv import (
    M_N,
    kernel_add,
    kernel_add_indexed,
    kernel_add_two,
    kernel_add_two_indexed,
    kernel_first_stop_after,
)
from .pruning import _cut_pmf
from .site import _consumer_add
from .state import (
    B_BEGIN,
    B_COUNT,
    B_END,
    B_FREED,
    B_PTR,
    B_TRIED,
    ENDS_LOG,
    S_BN,
    S_ENDS_ADDED,
    S_FREED_ADDED,
    S_TRIM,
    S_USED,
    _by_state,
    _index_of,
)
from .wake import _wake_push


@internal_kernel
def _trim_vectors(slots, meta, now):
    """Drop the rows of every vector that end at or before ``now`` (nothing before now
    is read again)."""
    for k in range(slots.shape[0]):
        n = meta[k, M_N]
        i = kernel_first_stop_after(slots[k], n, now)
        if i > 32 or (i > 0 and 2 * i >= n):  # amortised: a move of the tail per trim
            for r in range(i, n):
                slots[k, r - i, 0] = slots[k, r, 0]
                slots[k, r - i, 1] = slots[k, r, 1]
                slots[k, r - i, 2] = slots[k, r, 2]
            meta[k, M_N] = n - i


@inline_kernel
def _pool_add(sched, j, begin, end, sign):
    """Add (sign 1) or remove (sign -1) job j's booking [begin, end) on its type's vector
    (from the trim instant on: earlier rows are gone)."""
    k = sched.ptype[j]
    lo = max(begin, sched.scal[S_TRIM])
    if lo < end:
        if _index_of(sched, k)[0, 0] > 0:
            kernel_add_indexed(sched.slots[k], sched.meta[k], _index_of(sched, k), lo, end, sign * sched.size[j])
        else:  # no index (a short plan): the plain kernel, no index code on the common path
            kernel_add(sched.slots[k], sched.meta[k], lo, end, sign * sched.size[j])
        _consumer_add(sched.site, j, k, lo, end, sign * sched.size[j])
        _cut_pmf(sched.pmf, sched.scal, lo)


@inline_kernel
def _move_on(slots, meta, lo0, e0, lo1, end, size):
    """Move ``size`` items from [lo0, e0) to [lo1, end) on one vector: one operation, or
    the two single ones the room rule (:func:`_room`) is sized for when it refuses."""
    if lo1 < e0 and lo0 < end:
        # the intervals overlap, where the booking's own items leave the vector as it
        # is: only the two ends change
        if lo1 != lo0:
            kernel_add(slots, meta, min(lo0, lo1), max(lo0, lo1), size if lo1 < lo0 else -size)
        if end != e0:
            kernel_add(slots, meta, min(e0, end), max(e0, end), size if end > e0 else -size)
    elif not kernel_add_two(slots, meta, lo0, e0, -size, lo1, end, size):
        kernel_add(slots, meta, lo0, e0, -size)
        kernel_add(slots, meta, lo1, end, size)


@internal_kernel
def _move_on_indexed(slots, meta, index, lo0, e0, lo1, end, size):
    """:func:`_move_on` keeping the vector's slot index."""
    if not kernel_add_two_indexed(slots, meta, index, lo0, e0, -size, lo1, end, size):
        kernel_add_indexed(slots, meta, index, lo0, e0, -size)
        kernel_add_indexed(slots, meta, index, lo1, end, size)


@inline_kernel
def _pool_move(sched, j, b0, e0, begin, end):
    """Move job j's booking [b0, e0) to [begin, end) on its type's vector (and its slot
    index) and its consumers' (one operation each: :func:`schedbench.plan.rusv._add_two`)."""
    k = sched.ptype[j]
    size = sched.size[j]
    trim = sched.scal[S_TRIM]
    lo0 = max(b0, trim)
    lo1 = max(begin, trim)
    if _index_of(sched, k)[0, 0] > 0:
        _move_on_indexed(sched.slots[k], sched.meta[k], _index_of(sched, k), lo0, e0, lo1, end, size)
    else:
        _move_on(sched.slots[k], sched.meta[k], lo0, e0, lo1, end, size)
    site = sched.site
    for r in range(site.jvptr[j], site.jvptr[j + 1]):
        if site.jvrow[r, 1] == k:
            v = site.jvrow[r, 0]
            _move_on(site.lslots[v], site.lmeta[v], lo0, e0, lo1, end, size)
    _cut_pmf(sched.pmf, sched.scal, min(lo0, lo1))


@internal_kernel
def _node_add_rows(sched, jobs, j, rows, p, count, begin, end, sign, forget):
    """Add or remove job j's booking [begin, end) on the nodes rows[p : p + count] (node,
    units), on the totals, and its end on the ends vector; ``forget``: the nodes' prefix
    minima (sched.npmf) no longer hold (False only when the change is undone before they
    are read again)."""
    lo = max(begin, sched.scal[S_TRIM])
    if lo >= end:
        return
    for k in range(N_RES):
        r = jobs[j, J_REQ + k]
        if r == 0:
            continue
        total = 0
        for u in range(p, p + count):
            v = rows[u, 0] * N_RES + k
            if forget:
                sched.npmf_n[v] = -1
            amount = rows[u, 1] * r
            kernel_add(sched.nslots[v], sched.nmeta[v], lo, end, sign * amount)
            total += amount
        kernel_add(sched.slots[k], sched.meta[k], lo, end, sign * total)
        _consumer_add(sched.site, j, k, lo, end, sign * total)
    if end >= sched.scal[S_TRIM]:
        kernel_add(sched.slots[N_RES], sched.meta[N_RES], end, end + 1, sign)


def _book(sched, core, j, begin, end, sign):
    """Add (sign 1) or remove (sign -1) job j's existing booking [begin, end): on its
    type's totals (pool), or on its booked nodes (nodes: a queued job's from bnodes, a
    running job's from the core's allocation log)."""


@inline_kernel
def _book_pool(sched, core, j, begin, end, sign):
    _pool_add(sched, j, begin, end, sign)


@inline_kernel
def _book_nodes(sched, core, j, begin, end, sign):
    _book_nodes_keeping(sched, core, j, begin, end, sign, True)
    if sign > 0:  # an extended booking: its end is a new candidate
        _note_end(sched, end)
    else:
        _note_freed(sched, core, j, begin, end)


@inline_kernel
def _log_freed(sched, node, begin, end):
    """Append (node, begin, end), room freed on ``node`` over [begin, end) (s), to the
    freed-room ring of sched.ends_log (int64 (4 ENDS_LOG,), :class:`ConservativeNodes`)."""
    sc = sched.scal
    i = sc[S_FREED_ADDED] % ENDS_LOG
    sched.ends_log[ENDS_LOG + i] = node
    sched.ends_log[2 * ENDS_LOG + i] = begin
    sched.ends_log[3 * ENDS_LOG + i] = end
    sc[S_FREED_ADDED] += 1


@internal_kernel
def _note_freed(sched, core, j, begin, end):
    """Job j's booking [begin, end) was removed (a release, a move, rebooking): log its
    nodes and span (the freed-room ring of sched.ends_log), so that compression knows
    where room was freed since a job's last try (:func:`fit._freed_floor`)."""
    jobs = core.jobs
    begin = max(begin, sched.scal[S_TRIM])
    if jobs[j, J_STATE] == JobState.RUNNING or jobs[j, J_STATE] == JobState.DONE:
        for u in range(jobs[j, J_PTR], jobs[j, J_PTR] + jobs[j, J_NODES]):
            _log_freed(sched, core.log[u, 0], begin, end)
    else:
        for u in range(sched.book[j, B_PTR], sched.book[j, B_PTR] + sched.book[j, B_COUNT]):
            _log_freed(sched, sched.bnodes[u, 0], begin, end)


@inline_kernel
def _note_end(sched, end):
    """Remember a new booking end (nodes): the candidate instants compression must test
    again for a job are the ones added since its last try (:func:`fit._new_end_from`)."""
    sc = sched.scal
    sched.ends_log[sc[S_ENDS_ADDED] % ENDS_LOG] = end
    sc[S_ENDS_ADDED] += 1


@inline_kernel
def _book_nodes_keeping(sched, core, j, begin, end, sign, forget):
    """:func:`_book_nodes`, forgetting the nodes' prefix minima or not (``forget``, as
    :func:`_node_add_rows`)."""
    jobs = core.jobs
    if jobs[j, J_STATE] == JobState.RUNNING or jobs[j, J_STATE] == JobState.DONE:
        _node_add_rows(sched, jobs, j, core.log, jobs[j, J_PTR], jobs[j, J_NODES], begin, end, sign, forget)
    else:
        _node_add_rows(sched, jobs, j, sched.bnodes, sched.book[j, B_PTR], sched.book[j, B_COUNT], begin, end, sign,
                       forget)


_by_state(_book, _book_pool, _book_nodes)


def _book_new(sched, core, j, begin, end):
    """Book job j at [begin, end): on its type's totals (pool), or on the nodes of the
    placement in core.work that the last fit found (nodes)."""


@inline_kernel
def _book_new_pool(sched, core, j, begin, end):
    _pool_add(sched, j, begin, end, 1)


@internal_kernel
def _compact_bnodes(sched, jobs):
    """Drop the rows of bookings that no longer stand (keeps each job's rows in order)."""
    bn = sched.bnodes
    book = sched.book
    w = 0
    r = 0
    n = sched.scal[S_BN]
    while r < n:
        j = bn[r, 2]
        if jobs[j, J_STATE] == JobState.QUEUED and book[j, B_PTR] == r:
            # a standing booking's block, moved whole (its pointer changes only after:
            # the rows after the first are recognised by the old pointer)
            count = book[j, B_COUNT]
            for u in range(count):
                bn[w + u, 0] = bn[r + u, 0]
                bn[w + u, 1] = bn[r + u, 1]
                bn[w + u, 2] = j
            book[j, B_PTR] = w
            w += count
            r += count
        else:
            r += 1
    sched.scal[S_BN] = w


@inline_kernel
def _book_new_nodes(sched, core, j, begin, end):
    used = sched.scal[S_USED]
    if sched.scal[S_BN] + used > sched.bnodes.shape[0]:
        _compact_bnodes(sched, core.jobs)
    p = sched.scal[S_BN]
    for u in range(used):
        sched.bnodes[p + u, 0] = core.work[W_NODE, u]
        sched.bnodes[p + u, 1] = core.work[W_COUNT, u]
        sched.bnodes[p + u, 2] = j
    sched.scal[S_BN] = p + used
    sched.book[j, B_PTR] = p
    sched.book[j, B_COUNT] = used
    _node_add_rows(sched, core.jobs, j, sched.bnodes, p, used, begin, end, 1, True)
    _note_end(sched, end)
    sched.book[j, B_TRIED] = sched.scal[S_ENDS_ADDED]  # its earliest fit: as good as a try
    sched.book[j, B_FREED] = sched.scal[S_FREED_ADDED]


_by_state(_book_new, _book_new_pool, _book_new_nodes)


def _move(sched, core, j, b0, e0, begin, end):
    """Move queued job j's booking [b0, e0) to [begin, end) (nodes: to the placement in
    core.work that the last fit found, the old booking already off the plan:
    :func:`fit._earlier_fit` leaves it so, since taking it off for the search and back
    on only to take it off again cost a third of the moves' adds)."""


@inline_kernel
def _move_pool(sched, core, j, b0, e0, begin, end):
    _pool_move(sched, j, b0, e0, begin, end)


@inline_kernel
def _move_nodes(sched, core, j, b0, e0, begin, end):
    _forget_prefix_rows(sched, core.jobs, j)
    _note_freed(sched, core, j, b0, e0)
    _book_new_nodes(sched, core, j, begin, end)


@inline_kernel
def _forget_prefix_rows(sched, jobs, j):
    """The prefix minima (sched.npmf) of queued job j's booked nodes no longer hold: its
    booking left them."""
    p = sched.book[j, B_PTR]
    for k in range(N_RES):
        if jobs[j, J_REQ + k] == 0:
            continue
        for u in range(p, p + sched.book[j, B_COUNT]):
            sched.npmf_n[sched.bnodes[u, 0] * N_RES + k] = -1


_by_state(_move, _move_pool, _move_nodes, inline_pool=True)


@inline_kernel
def _set_booking(jobs, sched, j, begin, end):
    """Record job j's booking and push its planned start when it changed."""
    book = sched.book
    old = book[j, B_BEGIN]
    book[j, B_BEGIN] = begin
    book[j, B_END] = end
    if begin != old:
        _wake_push(sched.wake, sched.scal, begin, j)
