"""Conservative backfilling on a plan of resource usage vectors (Keller's OpenCCS; Mu'alem
and Feitelson), exactly as ``../shared/spec/replay-semantics.md`` says ("Conservative
backfilling").

Every queued job holds a booking ``[begin, end)`` in a plan of the future, ``d(j) =
max(pred(j), 1)`` long, and starts exactly when its booking begins.  The plan is one
used-items RUSV (:mod:`schedbench.plan.rusv`) per resource type, Keller's system resource set
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

import inspect
from typing import NamedTuple

import numpy as np
from numba.extending import overload

from .._jit import inline_kernel, internal_kernel
from ..core import JittedScheduler
from ..core.api import (
    C_QH,
    C_QN,
    C_QSPAN,
    C_RN,
    W_COUNT,
    W_NODE,
    commit,
    implements,
    place,
    plan_order,
    queue_tidy,
    sched_enqueued,
    sched_has_room,
    sched_released,
    sched_wake,
    schedule,
    try_start,
    window_meets,
)
from ..core.layout import (
    J_EST,
    J_NODES,
    J_PRED,
    J_PTR,
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
from ..errors import UsageError
from ..plan.rusv import (
    INF,
    M_AVL,
    M_KIND,
    M_MAX_AVL,
    M_MIN_DIST,
    M_N,
    S_ITEMS,
    S_START,
    S_STOP,
    Kind,
    kernel_add,
    kernel_add_two,
    kernel_earliest_fit,
    kernel_earliest_fit_valid,
    kernel_first_stop_after,
    kernel_max_in,
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
S_PMF_TYPE = 12  # the resource type sched.pmf was built for
S_USED = 13  # nodes of the last node fit's placement
S_BN = 14  # rows used in sched.bnodes
S_SITE = 15  # 1 when some job has site constraints (limits, FreePools)
N_SCAL = 16

# Columns of sched.book, int64 (n, 4): booking begin and end (s; -1 when none), first row
# and row count of the booked nodes in sched.bnodes (node mode).
B_BEGIN, B_END, B_PTR, B_COUNT = range(4)


class SitePlan(NamedTuple):
    """The site policies on the plan (:mod:`schedbench.plan.site`, :class:`SiteArrays` for
    the arrays' meaning), plus lslots int64 (nvec, cap, 3) and lmeta int64 (nvec, 5): one
    used RUSV per consumer and resource type that has an items limit (Keller's usdRS),
    holding that consumer's bookings.  ``gpu`` int64 (1,): cores of a GPU node kept for
    GPU jobs."""

    valid: np.ndarray
    vptr: np.ndarray
    cptr: np.ndarray
    crow: np.ndarray
    jvptr: np.ndarray
    jvrow: np.ndarray
    lslots: np.ndarray
    lmeta: np.ndarray
    mspan: np.ndarray
    mwin: np.ndarray
    mends: np.ndarray
    gpu: np.ndarray


class ConservativePool(NamedTuple):
    """Conservative backfilling on resource totals.

    slots int64 (N_RES, cap, 3) and meta int64 (N_RES, 5): the plan, one used RUSV per
    resource type; book int64 (n, 4): each job's booking (``B_*``); ptype int64 (n,): the
    job's resource type and size int64 (n,): its units; wake int64 (2n + 16, 2): lazy
    min-heap of (time, code), code j >= 0 a planned start of job j, -(j + 1) the expiry
    of job j's booking; arrivals, starting int64 (n,): buffers; pmf int64 (2, cap): the
    plan's prefix maximum of free items (stop, max free over [now, stop)); scal int64
    (N_SCAL,); site: :class:`SitePlan`."""

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
    site: SitePlan


class ConservativeNodes(NamedTuple):
    """Conservative backfilling with node bookings.  As :class:`ConservativePool`, plus:
    slots/meta hold N_RES + 1 vectors, the last counting the bookings that end at each
    instant (its covered seconds are exactly the booking ends, the candidate starts);
    nslots int64 (m * N_RES, cap, 3) and nmeta int64 (m * N_RES, 5): one used RUSV per
    node and resource type (Keller's nRS, row node * N_RES + k); bnodes int64 (rows, 3):
    (node, units, job) of queued jobs' booked nodes, appended, compacted when full;
    wfree int64 (m, N_RES): each node's least free amount over a candidate window; order,
    tmp int64 (m,) and key float64 (m,): the allocator's order over it."""

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
    site: SitePlan
    nslots: np.ndarray
    nmeta: np.ndarray
    bnodes: np.ndarray
    wfree: np.ndarray
    order: np.ndarray
    key: np.ndarray
    tmp: np.ndarray


_OVERLOAD_OPTIONS = dict(nogil=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)


def _by_state(stub, pool_impl, node_impl):
    """Make ``stub`` callable from kernels: it compiles to ``pool_impl`` or ``node_impl``
    by the class of its first argument (as the core's hooks do)."""

    def typing(*args):
        cls = getattr(args[0], "instance_class", None)
        return (node_impl if cls is ConservativeNodes else pool_impl).py_func

    typing.__signature__ = inspect.signature(stub)
    overload(stub, jit_options=_OVERLOAD_OPTIONS)(typing)
    return stub


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
def _consumer_add(site, j, k, lo, end, amount):
    """Add ``amount`` items of type k over [lo, end) to the usage vectors of job j's
    consumers that have an items limit on type k."""
    for r in range(site.jvptr[j], site.jvptr[j + 1]):
        if site.jvrow[r, 1] == k:
            v = site.jvrow[r, 0]
            kernel_add(site.lslots[v], site.lmeta[v], lo, end, amount)


@inline_kernel
def _pool_add(sched, j, begin, end, sign):
    """Add (sign 1) or remove (sign -1) job j's booking [begin, end) on its type's vector
    (from the trim instant on: earlier rows are gone)."""
    k = sched.ptype[j]
    lo = max(begin, sched.scal[S_TRIM])
    if lo < end:
        kernel_add(sched.slots[k], sched.meta[k], lo, end, sign * sched.size[j])
        _consumer_add(sched.site, j, k, lo, end, sign * sched.size[j])
    sched.scal[S_PMF_OK] = 0


@inline_kernel
def _move_on(slots, meta, lo0, e0, lo1, end, size):
    """Move ``size`` items from [lo0, e0) to [lo1, end) on one vector: one operation, or
    the two single ones the room rule (:func:`_room`) is sized for when it refuses."""
    if not kernel_add_two(slots, meta, lo0, e0, -size, lo1, end, size):
        kernel_add(slots, meta, lo0, e0, -size)
        kernel_add(slots, meta, lo1, end, size)


@inline_kernel
def _pool_move(sched, j, b0, e0, begin, end):
    """Move job j's booking [b0, e0) to [begin, end) on its type's vector and its
    consumers' (one operation each: :func:`schedbench.plan.rusv._add_two`)."""
    k = sched.ptype[j]
    size = sched.size[j]
    trim = sched.scal[S_TRIM]
    lo0 = max(b0, trim)
    lo1 = max(begin, trim)
    _move_on(sched.slots[k], sched.meta[k], lo0, e0, lo1, end, size)
    site = sched.site
    for r in range(site.jvptr[j], site.jvptr[j + 1]):
        if site.jvrow[r, 1] == k:
            v = site.jvrow[r, 0]
            _move_on(site.lslots[v], site.lmeta[v], lo0, e0, lo1, end, size)
    sched.scal[S_PMF_OK] = 0


@internal_kernel
def _node_add_rows(sched, jobs, j, rows, p, count, begin, end, sign):
    """Add or remove job j's booking [begin, end) on the nodes rows[p : p + count] (node,
    units), on the totals, and its end on the ends vector."""
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
    jobs = core.jobs
    if jobs[j, J_STATE] == JobState.RUNNING or jobs[j, J_STATE] == JobState.DONE:
        _node_add_rows(sched, jobs, j, core.log, jobs[j, J_PTR], jobs[j, J_NODES], begin, end, sign)
    else:
        _node_add_rows(sched, jobs, j, sched.bnodes, sched.book[j, B_PTR], sched.book[j, B_COUNT], begin, end, sign)


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
    _node_add_rows(sched, core.jobs, j, sched.bnodes, p, used, begin, end, 1)


_by_state(_book_new, _book_new_pool, _book_new_nodes)


def _move(sched, core, j, b0, e0, begin, end):
    """Move queued job j's booking [b0, e0) to [begin, end) (nodes: to the placement in
    core.work that the last fit found)."""


@inline_kernel
def _move_pool(sched, core, j, b0, e0, begin, end):
    _pool_move(sched, j, b0, e0, begin, end)


@inline_kernel
def _move_nodes(sched, core, j, b0, e0, begin, end):
    _book_nodes(sched, core, j, b0, e0, -1)
    _book_new_nodes(sched, core, j, begin, end)


_by_state(_move, _move_pool, _move_nodes)


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
        i = kernel_first_stop_after(slots, n, covered)
        if i >= n or slots[i, S_START] > covered:
            return meta[M_AVL]
        free = meta[M_AVL] - slots[i, S_ITEMS]
        if free > best:
            best = free
    return best


@inline_kernel
def _totals_fit(sched, jobs, j, t, limit, ex0, ex1):
    """Earliest t' >= t at which job j's total demand of every type fits the totals over
    [t', t' + d), counting its own booking [ex0, ex1) as absent; -1 when none before
    ``limit``.  (Pool jobs have one type; node jobs may have several: iterate to the
    first instant all agree on.)"""
    d = _d(jobs, j)
    while True:
        moved = False
        for k in range(N_RES):
            r = jobs[j, J_REQ + k]
            if r == 0:
                continue
            size = r * jobs[j, J_UNITS]
            ex = size if ex1 > ex0 else 0
            t2 = kernel_earliest_fit(sched.slots[k], sched.meta[k], size, d, t, limit, ex0, ex1, ex)
            if t2 < 0:
                return -1
            if t2 != t:
                t = t2
                moved = True
        if not moved:
            return t


@inline_kernel
def _next_end_after(sched, t):
    """The first booking or maintenance-window end > t (the ends vector covers exactly
    the booking ends), or -1."""
    slots = sched.slots[N_RES]
    n = sched.meta[N_RES, M_N]
    i = kernel_first_stop_after(slots, n, t + 1)
    nxt = -1 if i >= n else max(slots[i, S_START], t + 1)
    mends = sched.site.mends
    lo, hi = 0, mends.shape[0]
    while lo < hi:  # first window end > t
        mid = (lo + hi) >> 1
        if mends[mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    if lo < mends.shape[0] and (nxt < 0 or mends[lo] < nxt):
        nxt = mends[lo]
    return nxt


@internal_kernel
def _nodes_at(sched, core, alloc, j, t):
    """Whether the allocator places job j on the nodes' least free amounts over [t, t +
    d) (into core.work; the nodes used in sched.scal[S_USED])."""
    jobs = core.jobs
    d = _d(jobs, j)
    wfree = sched.wfree
    cap = core.cap
    site = sched.site
    keep = site.gpu[0] if jobs[j, J_REQ + 1] == 0 else 0  # expensive resources (Keller §6)
    for node in range(wfree.shape[0]):
        down = window_meets(site.mspan, site.mwin, node, t, t + d)
        for k in range(N_RES):
            v = node * N_RES + k
            if cap[node, k] == 0 or down:
                wfree[node, k] = 0
            else:
                wfree[node, k] = cap[node, k] - kernel_max_in(sched.nslots[v], sched.nmeta[v], t, t + d)
        if keep > 0 and cap[node, 1] > 0:
            wfree[node, 0] = max(0, wfree[node, 0] - keep)
    if plan_order(alloc, wfree, sched.order, sched.key, sched.tmp) < 0:
        sched.scal[S_GROW] = -2  # the allocator gives no planning order
        return False
    used = place(wfree, sched.order, np.int64(0), jobs[j, J_UNITS], jobs[j, J_REQ : J_REQ + N_RES],
                 jobs[j, J_REQ_NODES], core.work[W_NODE], core.work[W_COUNT])
    sched.scal[S_USED] = used
    return used >= 0


@internal_kernel
def _node_fit(sched, core, alloc, j, now, limit):
    """The spec's earliest fit on nodes: the first candidate (now, then each booking end)
    at which the nodes take the job, skipping candidates the totals rule out; -1 when
    none before ``limit``.  The placement is left in core.work."""
    jobs = core.jobs
    t = now
    while True:
        t = _totals_fit(sched, jobs, j, t, limit, 0, 0)
        if t < 0:
            return -1
        # an instant the totals allow is a candidate: the totals only fall at booking ends
        if _nodes_at(sched, core, alloc, j, t):
            return t
        if sched.scal[S_GROW] == -2:
            return -1
        t = _next_end_after(sched, t)
        if t < 0 or t >= limit:
            return -1


@inline_kernel
def _constraints_fit(sched, jobs, j, t, limit):
    """Earliest t' >= t at which job j's site constraints (limits, FreePools) all hold
    over [t', t' + d), or -1 when none before ``limit`` (each constraint gives its own
    earliest instant; iterate to the first all agree on)."""
    site = sched.site
    c0 = site.cptr[j]
    c1 = site.cptr[j + 1]
    if c0 == c1:
        return t
    d = _d(jobs, j)
    while True:
        moved = False
        for c in range(c0, c1):
            vec = site.crow[c, 0]
            s = site.crow[c, 2]
            k = site.crow[c, 3]
            size = jobs[j, J_UNITS] * jobs[j, J_REQ + k]
            valid = site.valid[site.vptr[s] : site.vptr[s + 1]]
            if vec >= 0:
                t2 = kernel_earliest_fit_valid(site.lslots[vec], site.lmeta[vec], size, d, t, limit, site.crow[c, 1], valid)
            else:
                t2 = kernel_earliest_fit_valid(sched.slots[-vec - 1], sched.meta[-vec - 1], size, d, t, limit,
                                               site.crow[c, 1], valid)
            if t2 < 0:
                return -1
            if t2 != t:
                t = t2
                moved = True
        if not moved:
            return t


def _plan_fit(sched, core, alloc, j, t, limit):
    """Earliest fit of queued job j at or after t on the plan alone (its own booking not
    in the plan); -1 when none before ``limit``."""


@inline_kernel
def _plan_fit_pool(sched, core, alloc, j, t, limit):
    k = sched.ptype[j]
    return kernel_earliest_fit(sched.slots[k], sched.meta[k], sched.size[j], _d(core.jobs, j), t, limit,
                               np.int64(0), np.int64(0), np.int64(0))


@inline_kernel
def _plan_fit_nodes(sched, core, alloc, j, t, limit):
    return _node_fit(sched, core, alloc, j, t, limit)


_by_state(_plan_fit, _plan_fit_pool, _plan_fit_nodes)


@inline_kernel
def _fit_before(sched, core, alloc, j, now, limit):
    """Earliest fit of queued job j at or after now on the plan and the site's
    constraints, -1 when none before ``limit``: the plan's earliest fit and the
    constraints' take turns until they agree (each returns the first instant >= its
    argument that it allows, so none skips the first instant both allow)."""
    t = now
    while True:
        t = _plan_fit(sched, core, alloc, j, t, limit)
        if t < 0:
            return -1
        t2 = _constraints_fit(sched, core.jobs, j, t, limit)
        if t2 == t or t2 < 0:
            return t2
        t = t2


@inline_kernel
def _fit(sched, core, alloc, j, now):
    """Earliest fit of queued job j at or after now (its own booking not in the plan)."""
    return _fit_before(sched, core, alloc, j, now, INF)


def _earlier_fit(sched, core, alloc, j, now, b0, e0):
    """Earliest fit of queued job j booked at [b0, e0) if it is before b0, else -1; the
    plan is unchanged (node placement left in core.work)."""


@inline_kernel
def _earlier_fit_pool(sched, core, alloc, j, now, b0, e0):
    k = sched.ptype[j]
    sc = sched.scal
    if sc[S_PMF_OK] == 0 or sc[S_PMF_TYPE] != k:
        _build_pmf(sched.slots[k], sched.meta[k], sched.pmf, sc, now)
        sc[S_PMF_TYPE] = k
    if _most_free_before(sched.slots[k], sched.meta[k], sched.pmf, sc, now, b0) < sched.size[j]:
        return -1  # no instant before its booking has its size free
    if sched.site.cptr[j] == sched.site.cptr[j + 1]:
        return kernel_earliest_fit(sched.slots[k], sched.meta[k], sched.size[j], _d(core.jobs, j), now, b0, b0, e0,
                                   sched.size[j])
    pmf_ok = sc[S_PMF_OK]
    _pool_add(sched, j, b0, e0, -1)  # out of the plan and its consumers' vectors
    t = _fit_before(sched, core, alloc, j, now, b0)
    _pool_add(sched, j, b0, e0, 1)
    sc[S_PMF_OK] = pmf_ok  # the plan is as it was
    return t


@inline_kernel
def _earlier_fit_nodes(sched, core, alloc, j, now, b0, e0):
    jobs = core.jobs
    if _totals_fit(sched, jobs, j, now, b0, b0, e0) < 0:
        return -1
    _book_nodes(sched, core, j, b0, e0, -1)
    t = _fit_before(sched, core, alloc, j, now, b0)
    # put the booking back as it was (the caller moves it when t >= 0); the placement
    # found stays in core.work: booking rows come from bnodes, not from work
    _book_nodes(sched, core, j, b0, e0, 1)
    return t


_by_state(_earlier_fit, _earlier_fit_pool, _earlier_fit_nodes)


@inline_kernel
def _set_booking(jobs, sched, j, begin, end):
    """Record job j's booking and push its planned start when it changed."""
    book = sched.book
    old = book[j, B_BEGIN]
    book[j, B_BEGIN] = begin
    book[j, B_END] = end
    if begin != old:
        _wake_push(jobs, book, sched.wake, sched.scal, begin, j)


@inline_kernel
def _book_at_fit(sched, core, alloc, j, now):
    """Book job j (unbooked) at its earliest fit."""
    t = _fit(sched, core, alloc, j, now)
    if t < 0:  # only when the allocator gives no planning order (reported by _grow)
        return
    end = t + _d(core.jobs, j)
    _book_new(sched, core, j, t, end)
    _set_booking(core.jobs, sched, j, t, end)


# --------------------------------------------------------------------------- hooks


@inline_kernel
def _flags_at(sc, now):
    """Reset the per-instant flags when the instant changed."""
    if sc[S_NOW] != now:
        sc[S_NOW] = now
        sc[S_RELEASE] = 0
        sc[S_EXTENDED] = 0


@internal_kernel
def _enqueued(sched, core, j):
    sc = sched.scal
    sched.arrivals[sc[S_NARR]] = j
    sc[S_NARR] += 1


@internal_kernel
def _released(sched, core, j, now):
    sc = sched.scal
    _flags_at(sc, now)
    begin = sched.book[j, B_BEGIN]
    end = sched.book[j, B_END]
    _book(sched, core, j, begin, end, -1)
    if end > now:
        sc[S_RELEASE] = 1
    sched.book[j, B_BEGIN] = -1
    sched.book[j, B_END] = -1


@internal_kernel
def _wake(sched, core):
    return _next_wake(core.jobs, sched.book, sched.wake, sched.scal)


# --------------------------------------------------------------------------- the pass


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
        _wake_push(jobs, sched.book, sched.wake, sched.scal, new_end, -(j + 1))


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


@internal_kernel
def _compress(sched, core, alloc, now):
    """After a release: each queued job but this instant's arrivals, in queue order, moves
    to its earliest fit when that is earlier than its booking."""
    jobs = core.jobs
    queue = core.queue
    book = sched.book
    qh = core.scal[C_QH]
    span = core.scal[C_QSPAN]
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


@internal_kernel
def _book_arrivals(sched, core, alloc, now):
    """Book each arrival of this instant at its earliest fit, in (submit, id) order."""
    sc = sched.scal
    for a in range(sc[S_NARR]):
        _book_at_fit(sched, core, alloc, sched.arrivals[a], now)
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
    _heapsort(starting, m)
    last = -1
    for i in range(m):
        j = starting[i]
        if j == last or jobs[j, J_STATE] != JobState.QUEUED or sched.book[j, B_BEGIN] != now:
            continue
        last = j
        if _start(sched, core, alloc, j, now):
            end = sched.book[j, B_END]
            if now + jobs[j, J_RUN] > end:
                _wake_push(jobs, sched.book, sched.wake, sc, end, -(j + 1))
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
    sc[S_PMF_OK] = 0
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
    implements(sched_enqueued, _cls)(_enqueued)
    implements(sched_released, _cls)(_released)
    implements(sched_wake, _cls)(_wake)
del _cls


@inline_kernel
def _has_room(sched, core):
    """Whether every plan vector has room for the next pass (a vector holds at most 2b + 1
    rows for b bookings, and an operation needs as many again) and no pass left an error
    for :func:`_grow` to raise (sched.scal[S_GROW] < 0)."""
    need = 4 * (core.scal[C_QN] + core.scal[C_RN] + sched.scal[S_AMAX]) + 16
    if need > sched.slots.shape[1]:  # every vector has the same rows
        sched.scal[S_CAP_NEED] = need
        sched.scal[S_GROW] = 1
        return False
    return sched.scal[S_GROW] >= 0


for _cls in (ConservativePool, ConservativeNodes):
    implements(sched_has_room, _cls)(_has_room)
del _cls


def _grow_vectors(a: np.ndarray, new_cap: int) -> None:
    """Enlarge the (v, cap, 3) vectors ``a`` to (v, new_cap, 3) in place."""
    v, cap, _ = a.shape
    if new_cap <= cap or v == 0:
        return
    a.resize((v, new_cap, 3), refcheck=False)
    flat = a.reshape(-1)
    for i in range(v - 1, 0, -1):  # move each vector's rows to its new place, last first
        flat[i * new_cap * 3 : i * new_cap * 3 + cap * 3] = flat[i * cap * 3 : (i + 1) * cap * 3].copy()


def _grow(state, core) -> None:
    """Enlarge the plan's vectors in place when the loop asked for room, or when the next
    pass might need more (a pass stepped from Python: :class:`Simulation`)."""
    sc = state.scal
    if sc[S_GROW] == 0:
        need = 4 * (int(core.scal[C_QN]) + int(core.scal[C_RN]) + int(sc[S_AMAX])) + 16
        if need > state.slots.shape[1]:
            sc[S_CAP_NEED] = need
            sc[S_GROW] = 1
    if sc[S_GROW] == -1:
        raise AssertionError("conservative: a job planned to start now did not fit")
    if sc[S_GROW] == -2:
        raise UsageError("conservative on nodes books nodes in the allocator's order: "
                         "this allocator gives none (use ff, bf or balanced)")
    if sc[S_GROW] != 1:
        return
    cap = state.slots.shape[1]
    new_cap = max(int(sc[S_CAP_NEED]), cap + cap // 2)
    _grow_vectors(state.slots, new_cap)
    _grow_vectors(state.site.lslots, new_cap)
    state.pmf.resize((2, new_cap), refcheck=False)
    if isinstance(state, ConservativeNodes):
        _grow_vectors(state.nslots, new_cap)
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


def _vectors(avl: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """Empty used vectors, one per entry of ``avl``: slots (v, cap, 3), meta (v, 5)."""
    meta = np.zeros((avl.size, 5), dtype=np.int64)
    meta[:, M_MAX_AVL] = avl
    meta[:, M_AVL] = avl
    meta[:, M_MIN_DIST] = 1
    meta[:, M_KIND] = int(Kind.USED)
    return np.zeros((avl.size, cap, 3), dtype=np.int64), meta


def _site_plan(arrays, n: int, m: int, cap: int) -> SitePlan:
    """The scheduler's view of the site's arrays (:func:`schedbench.plan.site.compile_site`);
    empty arrays when there is no site."""
    i64 = np.int64
    if arrays is None:
        e2 = np.zeros((0, 2), dtype=i64)
        lslots, lmeta = _vectors(np.zeros(0, dtype=i64), cap)
        return SitePlan(e2, np.zeros(1, i64), np.zeros(n + 1, i64), np.zeros((0, 4), i64), np.zeros(n + 1, i64), e2,
                        lslots, lmeta, np.zeros((m, 2), i64), e2.copy(), np.zeros(0, i64), np.zeros(1, i64))
    lslots, lmeta = _vectors(np.full(arrays.nvec, np.iinfo(np.int64).max >> 2, dtype=i64), cap)
    return SitePlan(arrays.valid, arrays.vptr, arrays.cptr, arrays.crow, arrays.jvptr, arrays.jvrow, lslots, lmeta,
                    arrays.mspan, arrays.mwin, arrays.mends, np.array([arrays.gpu_node_cores], dtype=i64))


def conservative(setup) -> JittedScheduler:
    J = setup.jobs
    n = J.shape[0]
    capacity = setup.machine.capacity
    arrays = getattr(setup, "site", None)
    ptype = _pool_types(J)
    if arrays is not None and (arrays.mwin.size or (arrays.gpu_node_cores and (capacity[:, 1] > 0).any())):
        ptype = None  # windows and kept cores are per node: bookings must hold nodes
    cap = 64
    scal = np.zeros(N_SCAL, dtype=np.int64)
    scal[S_NOW] = -1
    scal[S_AMAX] = _most_arrivals(J)
    site = _site_plan(arrays, n, capacity.shape[0], cap)
    scal[S_SITE] = int(site.crow.shape[0] > 0)
    common = dict(
        book=np.full((n, 4), -1, dtype=np.int64), ptype=ptype if ptype is not None else np.zeros(n, np.int64),
        size=J[:, J_UNITS].copy(), wake=np.zeros((2 * n + 16, 2), dtype=np.int64),
        arrivals=np.zeros(n, dtype=np.int64), starting=np.zeros(2 * n + 16, dtype=np.int64),
        pmf=np.zeros((2, cap), dtype=np.int64), scal=scal, site=site,
    )
    if ptype is not None:
        slots, meta = _vectors(capacity.sum(axis=0), cap)
        return JittedScheduler(ConservativePool(slots=slots, meta=meta, **common), grow=_grow)
    m = capacity.shape[0]
    totals = np.concatenate([capacity.sum(axis=0), [np.iinfo(np.int64).max >> 2]])
    slots, meta = _vectors(totals, cap)
    nslots, nmeta = _vectors(capacity.reshape(-1), cap)
    rows = 2 * int(np.minimum(J[:, J_UNITS], m).clip(min=1).sum()) + 64
    state = ConservativeNodes(
        slots=slots, meta=meta, **common, nslots=nslots, nmeta=nmeta,
        bnodes=np.zeros((rows, 3), dtype=np.int64), wfree=np.zeros((m, N_RES), dtype=np.int64),
        order=np.arange(m, dtype=np.int64), key=np.zeros(m), tmp=np.zeros(m, dtype=np.int64),
    )
    return JittedScheduler(state, grow=_grow)
