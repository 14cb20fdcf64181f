"""The earliest fit of a queued job: on the totals, on the nodes (the allocator's order
over each node's least free amount over the window), on the site's constraints, and
before its current booking (compression); and booking a job at its earliest fit."""

from __future__ import annotations

import numpy as np

from ..._jit import inline_kernel, internal_kernel
from ...core.api import (
    W_COUNT,
    W_IDENT,
    W_NODE,
    OrderReads,
    host,
    place,
    plan_order,
    plan_order_reads,
    window_meets,
)
from ...core.layout import J_CLASS, J_REQ, J_REQ_NODES, J_UNITS, N_RES
from ...plan.rusv import (
    INF,
    M_N,
    S_ITEMS,
    S_START,
    S_STOP,
    X_ON,
    kernel_earliest_fit,
    kernel_earliest_fit_clipped,
    kernel_earliest_fit_indexed_call,
    kernel_first_stop_after,
    kernel_first_stop_after_from,
    kernel_index_keep,
    kernel_max_in,
)
from .bookings import _book_new, _book_nodes_keeping, _pool_add, _set_booking
from .pruning import (
    _below_cap_at,
    _build_npmf,
    _cut_pmf,
    _first_row_reaching,
    _free_start,
    _full_until,
    _least_used_before,
    _longest_run_before,
)
from .site import _clear_of_windows, _constraints_fit, _down_until, _unconstrained
from .state import (
    B_COUNT,
    B_FREED,
    B_PTR,
    B_TRIED,
    ENDS_LOG,
    S_ENDS_ADDED,
    S_FREED,
    S_FREED_ADDED,
    S_FULL_AT_OF,
    S_GROW,
    S_LIVE,
    S_LIVE_KEY,
    S_MEMO_CLASS,
    S_MEMO_D,
    S_MEMO_KEEP,
    S_MEMO_LIMIT,
    S_MEMO_REQ,
    S_MEMO_RN,
    S_MEMO_UNITS,
    S_PMF_N,
    S_STAMP,
    S_TRIM,
    S_TRY_LIMIT,
    S_USED,
    S_WINDOWS,
    W_FREED_FROM,
    W_FREED_TO,
    W_KEY,
    W_ORDER,
    W_ROW,
    _by_state,
    _d,
    _index_of,
    _orders_stale,
)


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
    lo = np.searchsorted(mends, t, side="right")  # first window end > t
    if lo < mends.shape[0] and (nxt < 0 or mends[lo] < nxt):
        nxt = mends[lo]
    return nxt


@internal_kernel
def _nodes_at(sched, core, alloc, j, t):
    """Whether the allocator places job j on the nodes' least free amounts over [t, t +
    d) (into core.work; the nodes used in sched.scal[S_USED]).  The job's types on its
    eligible nodes are already in wfree (:func:`_refresh_nodes` at t); the rest, which
    only the allocator's order reads, are computed here, as far as it reads them
    (:func:`plan_order_reads`: the nodes that host nothing get a zero row when the order
    of the others does not depend on theirs)."""
    jobs = core.jobs
    d = _d(jobs, j)
    wfree = sched.wfree
    cap = core.cap
    site = sched.site
    elig = core.elig[jobs[j, J_CLASS]]
    keep = site.gpu[0] if jobs[j, J_REQ + 1] == 0 else 0  # expensive resources (Keller §6)
    every = sched.scal[S_LIVE] < 0  # (else only compression's live nodes were computed)
    stamp = sched.scal[S_STAMP]
    reads = plan_order_reads(alloc)
    for node in range(wfree.shape[0]):
        # (a live node full at t may not have been refreshed there, :func:`_live_sorted`:
        # the search reset its exact-until to -1)
        computed = elig[node] != 0 and (every or sched.wvalid[node, 2] == stamp) and sched.wvalid[node, 0] > t
        if not computed and reads != OrderReads.EVERY_ROW:
            # it hosts nothing of the job at t (not eligible, left out by compression's
            # bound, or full at t), and the order of those that host some does not read
            # its row: most nodes during compression, each read of 4 vectors saved
            for k in range(N_RES):
                wfree[node, k] = 0
            continue
        if computed and reads == OrderReads.NOTHING:
            continue  # the job's types are exact, and nothing else is read
        down = window_meets(site.mspan, site.mwin, node, t, t + d)
        for k in range(N_RES):
            v = node * N_RES + k
            if computed and jobs[j, J_REQ + k] > 0:
                continue  # exact already, kept cores taken off
            if cap[node, k] == 0 or down:
                wfree[node, k] = 0
            else:
                wfree[node, k] = cap[node, k] - kernel_max_in(sched.nslots[v], sched.nmeta[v], t, t + d)
        if not (computed and jobs[j, J_REQ] > 0):
            _take_kept(wfree, cap, node, keep)
    if plan_order(alloc, wfree, sched.order, sched.key, sched.tmp) < 0:
        sched.scal[S_GROW] = -2  # the allocator gives no planning order
        return False
    used = place(wfree, sched.order, np.int64(0), jobs[j, J_UNITS], jobs[j, J_REQ : J_REQ + N_RES],
                 jobs[j, J_REQ_NODES], core.work[W_NODE], core.work[W_COUNT], core.elig[jobs[j, J_CLASS]])
    sched.scal[S_USED] = used
    return used >= 0


@inline_kernel
def _stays_at_most_before(slots, meta, now, before, d, high):
    """Whether some window [t, t + d), now <= t < before, keeps a used vector at or below
    ``high`` >= 0 throughout (gaps hold 0): a node hosts a unit of a job in a window only
    if each requested type stays at or below its capacity less the unit's request there.
    :func:`pruning._longest_run_before` answers this for ``high`` = capacity - 1 from
    prefix rows; other bars are :func:`_first_window_below` of the bar above ``high``."""
    i = kernel_first_stop_after(slots, meta[M_N], now)
    return _first_window_below(slots, meta, i, now, d, high + 1, before) < before


@inline_kernel
def _row_after(slots, n, i, t):
    """The first of a vector's rows [0, n) whose stop is > t, given a row i at or before
    it (a search's row cursor, sched.wvalid column W_ROW + k): a few steps forward, then
    a binary search of the rest (the candidates of one search are near each other)."""
    for _ in range(4):
        if i >= n or slots[i, S_STOP] > t:
            return i
        i += 1
    return kernel_first_stop_after_from(slots, i, n, t)


@inline_kernel
def _cursor_row(sched, node, k, t):
    """The first row of node ``node``'s vector of type k whose stop is > t, from the
    search's row cursor, which moves there (t never goes back within a search)."""
    v = node * N_RES + k
    i = _row_after(sched.nslots[v], sched.nmeta[v, M_N], sched.wvalid[node, W_ROW + k], t)
    sched.wvalid[node, W_ROW + k] = i
    return i


@inline_kernel
def _window_max(slots, meta, i, t, d):
    """(most used, exact until) of a node's used vector over the window [t, t + d), d >=
    1, i its first row whose stop is > t: its largest value, and an instant > t before
    which the largest value over [t', t' + d) is the same for every t' >= t (the window's
    first row may only leave at the first change of value after t, and a new value may
    only enter when t' + d passes the first change at or after t + d).  Where no row is
    stored the vector is 0 (used vectors)."""
    n = meta[M_N]
    if i >= n:
        return np.int64(0), INF
    first_change = slots[i, S_STOP] if slots[i, S_START] <= t else slots[i, S_START]
    end = t + d
    best = np.int64(0)  # gaps hold 0, and 0 is the least value
    covered = t
    while i < n and slots[i, S_START] < end:
        best = max(best, slots[i, S_ITEMS])
        covered = slots[i, S_STOP]
        i += 1
    if covered < end:
        change_after = slots[i, S_START] if i < n else INF  # the next row starts at or after end
    else:
        change_after = covered  # the last row read reaches end: its stop is the next change
    return best, min(first_change, change_after - d + 1)


@inline_kernel
def _first_window_below(slots, meta, i, t, d, high, limit):
    """The first t' >= t whose window [t', t' + d) holds no instant of a node's used
    vector at ``high`` or more, or an instant >= ``limit`` when there is none before it
    (i: the vector's first row whose stop is > t).  A row at ``high`` or more meets every
    window starting before its stop that reaches its start, so the answer is the stop of
    the last such row met, row by row."""
    n = meta[M_N]
    c = t
    while i < n and slots[i, S_START] < c + d and c < limit:
        if slots[i, S_ITEMS] >= high:
            c = slots[i, S_STOP]
        i += 1
    return c


@inline_kernel
def _live_count(sched):
    """How many nodes a search reads: the live ones during compression (sched.scal
    [S_LIVE], listed in sched.wvalid column 3), else every node."""
    live = sched.scal[S_LIVE]
    return live if live >= 0 else sched.wvalid.shape[0]


@inline_kernel
def _live_node(sched, p):
    """The node at position p of the nodes a search reads (:func:`_live_count`)."""
    return sched.wvalid[p, 3] if sched.scal[S_LIVE] >= 0 else p


@inline_kernel
def _live_sorted(sched):
    """Whether the nodes a search reads are compression's live nodes listed in a
    full-until order (key column sched.scal[S_LIVE_KEY]; :func:`_nodes_may_host_before`
    lists them so when the job requests the order's types and each node's share of it is
    at least one unit).  A node full until F on one of those types hosts nothing of the
    job in any window starting before F: at a candidate t only the prefix of the list
    with F <= t is read (:func:`_hosting_count`); the rest host nothing and are computed
    only when :func:`_fails_until` needs their no-rise instants."""
    return sched.scal[S_LIVE] >= 0 and sched.scal[S_LIVE_KEY] >= 0


@inline_kernel
def _hosting_count(sched, t):
    """How many of the nodes a search reads (:func:`_live_count`, in their order) may host
    some of the job at candidate t: with :func:`_live_sorted`, the live nodes not full at t
    on the types of their order's key (those full until after t come last); else all of
    them."""
    count = _live_count(sched)
    if not _live_sorted(sched):
        return count
    return _first_full_after(sched.wvalid, 3, sched.scal[S_LIVE_KEY], count, t)


@inline_kernel
def _first_full_after(wvalid, col, key, count, t):
    """The first of positions 0..count - 1 of a full-until order (node p at wvalid[p,
    col], ascending in its full-until instant wvalid[node, key]) whose node is full until
    after t; count when none."""
    lo, hi = 0, count
    while lo < hi:
        mid = (lo + hi) >> 1
        if wvalid[wvalid[mid, col], key] <= t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@inline_kernel
def _refresh_node(sched, core, j, node, t, d, keep):
    """Compute wfree's row of one node for the candidate window [t, t + d) of job j (the
    types it requests, as :func:`_nodes_at` computes them) and its exact-until instant
    (sched.wvalid column 0); its no-rise instant (column 1) is computed when a failed
    test needs it (:func:`_no_rise`)."""
    jobs = core.jobs
    wfree = sched.wfree
    cap = core.cap
    site = sched.site
    req = jobs[j, J_REQ : J_REQ + N_RES]
    down, until = _down_until(site.mspan, site.mwin, node, t, d)
    for k in range(N_RES):
        if req[k] == 0:
            continue
        if cap[node, k] == 0 or down:
            wfree[node, k] = 0
        else:
            v = node * N_RES + k
            used, exact = _window_max(sched.nslots[v], sched.nmeta[v], _cursor_row(sched, node, k, t), t, d)
            wfree[node, k] = cap[node, k] - used
            until = min(until, exact)
    _take_kept(wfree, cap, node, keep)
    sched.wvalid[node, 0] = until
    sched.wvalid[node, 1] = -1


@inline_kernel
def _no_rise(sched, core, j, node, t, d, keep, limit):
    """Set a node's no-rise instant (sched.wvalid column 1) from candidate t, where its
    wfree row is exact: before it no window starting at t or later hosts more of job j on
    the node (a unit more, or for an exact node count its share when it hosts less); an
    instant >= ``limit`` (the search's) when that is not before it."""
    jobs = core.jobs
    cap = core.cap
    site = sched.site
    req = jobs[j, J_REQ : J_REQ + N_RES]
    kept = _node_kept(cap, node, keep)
    down, until = _down_until(site.mspan, site.mwin, node, t, d)
    # hosting ``want`` units needs every requested type at or below cap - kept - want x
    # req throughout the window: no window starting before the first that keeps each
    # type there does (and while down, none before the maintenance window's end)
    req_nodes = jobs[j, J_REQ_NODES]
    want = host(sched.wfree, node, req) + 1
    if req_nodes > 0:
        want = max(want, jobs[j, J_UNITS] // req_nodes)
    no_rise = until if down else t
    for k in range(N_RES):
        if req[k] == 0:
            continue
        room = cap[node, k] - (kept if k == 0 else 0) - want * req[k]
        if room < 0:
            no_rise = INF  # more than it holds
            break
        v = node * N_RES + k
        no_rise = max(no_rise, _first_window_below(sched.nslots[v], sched.nmeta[v], _cursor_row(sched, node, k, t), t, d,
                                                   room + 1, limit))
    sched.wvalid[node, 1] = no_rise


@internal_kernel
def _refresh_nodes(sched, core, j, t, d):
    """Bring wfree up to date for a candidate window [t, t + d) of job j: the types it
    requests, on its eligible nodes that may host some of it at t
    (:func:`_hosting_count`), recomputing only the nodes whose exact-until (sched.wvalid
    column 0) has passed."""
    jobs = core.jobs
    wvalid = sched.wvalid
    elig = core.elig[jobs[j, J_CLASS]]
    keep = _kept_cores(sched, jobs, j)
    for p in range(_hosting_count(sched, t)):
        node = _live_node(sched, p)
        if elig[node] == 0 or wvalid[node, 0] > t:
            continue
        _refresh_node(sched, core, j, node, t, d, keep)


@inline_kernel
def _last_end_before(sched, t):
    """The last booking or maintenance-window end < t (the candidates after the first),
    or -1."""
    slots = sched.slots[N_RES]
    n = sched.meta[N_RES, M_N]
    i = kernel_first_stop_after(slots, n, t - 1)
    if i < n and slots[i, S_START] <= t - 1:
        return t - 1
    last = slots[i - 1, S_STOP] - 1 if i > 0 else -1
    mends = sched.site.mends
    lo, hi = 0, mends.shape[0]
    while lo < hi:  # first window end >= t
        mid = (lo + hi) >> 1
        if mends[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    if lo > 0:
        last = max(last, mends[lo - 1])
    return last


@internal_kernel
def _fails_until(sched, core, j, t, d, limit):
    """After a failed placement test at candidate t on wfree (the nodes that may host
    some of the job there computed, :func:`_hosting_count`): an instant before which
    every candidate fails too; any instant >= ``limit`` means that none before it fits.
    Until a node's no-rise instant (sched.wvalid column 1) it hosts at most the units it
    hosts now, after it at most what its whole capacity hosts; the job fails while those
    bounds, summed (or, for an exact node count, the nodes that can each host its share),
    stay short of it: the nodes taken in order of no-rise instant, the first at which
    they no longer do.  INF when never.

    The nodes that could host more go to sched.order (their no-rise instants) and
    sched.tmp (how much more); the earliest are taken off until the job is covered (few
    rounds: a node usually covers much of what is short).  The live nodes full at t
    (:func:`_live_sorted`) host nothing now and rise no earlier than their full-until
    instant, in whose order they are listed: each is computed only once the earliest
    no-rise instant in hand reaches that instant, so the rounds take off the same nodes
    at the same instants as if all had been computed; those full until ``limit`` or
    later are never needed."""
    jobs = core.jobs
    wfree = sched.wfree
    wvalid = sched.wvalid
    cap = core.cap
    rise = sched.order
    gain = sched.tmp
    elig = core.elig[jobs[j, J_CLASS]]
    req = jobs[j, J_REQ : J_REQ + N_RES]
    units = jobs[j, J_UNITS]
    req_nodes = jobs[j, J_REQ_NODES]
    share = units // req_nodes if req_nodes > 0 else 0
    keep = _kept_cores(sched, jobs, j)
    short = req_nodes if req_nodes > 0 else units
    n = 0
    # (the nodes compression's bound leaves out host nothing and may only rise at INF:
    # leaving them out changes neither the sum nor the first instant that covers it)
    hosting = _hosting_count(sched, t)
    for p in range(hosting):
        node = _live_node(sched, p)
        if elig[node] == 0:
            continue
        now_hosts = host(wfree, node, req)
        short -= np.int64(now_hosts >= share) if req_nodes > 0 else now_hosts
        g = _gain(cap, node, req, keep, req_nodes, share, now_hosts)
        if g > 0:
            if wvalid[node, 1] <= t:  # not computed since its row was, or passed
                _no_rise(sched, core, j, node, t, d, keep, limit)
            rise[n] = wvalid[node, 1]
            gain[n] = g
            n += 1
    if short <= 0:
        return INF  # not reached: the test failed
    count = _live_count(sched)
    key = sched.scal[S_LIVE_KEY]  # (read only when the live nodes are in that key's order)
    s = hosting  # the next live node full at t, not yet computed
    while True:
        first = INF
        for i in range(n):
            first = min(first, rise[i])
        while s < count and wvalid[wvalid[s, 3], key] <= first and wvalid[wvalid[s, 3], key] < limit:
            node = wvalid[s, 3]
            s += 1
            if wvalid[node, 0] <= t:
                _refresh_node(sched, core, j, node, t, d, keep)
            g = _gain(cap, node, req, keep, req_nodes, share, np.int64(0))
            if g > 0:
                if wvalid[node, 1] <= t:
                    _no_rise(sched, core, j, node, t, d, keep, limit)
                rise[n] = wvalid[node, 1]
                gain[n] = g
                n += 1
                first = min(first, wvalid[node, 1])
        if n == 0:
            return INF
        if first >= limit:
            return limit  # (the nodes not computed rise at limit or later)
        i = 0
        while i < n:  # take off every node rising at first
            if rise[i] == first:
                short -= gain[i]
                n -= 1
                rise[i] = rise[n]
                gain[i] = gain[n]
            else:
                i += 1
        if short <= 0:
            return first


@inline_kernel
def _gain(cap, node, req, keep, req_nodes, share, now_hosts):
    """How much more of the job a node could host at most than it hosts now: units (a
    free spread), or 1 when it could take its share and does not (an exact node count)."""
    most = np.int64(host(cap, node, req))
    kept = _node_kept(cap, node, keep)
    if kept > 0:
        most = min(most, (cap[node, 0] - kept) // req[0] if cap[node, 0] > kept else 0)
    if req_nodes > 0:
        return np.int64(1) if now_hosts < share <= most else np.int64(0)
    return max(most - now_hosts, np.int64(0))


@inline_kernel
def _live_fits(sched, core, j, elig, t):
    """Whether the nodes a search reads (:func:`_live_count`) take job j on wfree at
    candidate t: the allocation rule's answer, which does not depend on the order (all
    the nodes are read outside compression; during it the others host nothing of the
    job, nor do the live ones full at t, :func:`_hosting_count`)."""
    jobs = core.jobs
    if sched.scal[S_LIVE] < 0:
        return place(sched.wfree, core.work[W_IDENT], np.int64(0), jobs[j, J_UNITS], jobs[j, J_REQ : J_REQ + N_RES],
                     jobs[j, J_REQ_NODES], core.work[W_NODE], core.work[W_COUNT], elig) >= 0
    req = jobs[j, J_REQ : J_REQ + N_RES]
    units = jobs[j, J_UNITS]
    req_nodes = jobs[j, J_REQ_NODES]
    share = units // req_nodes if req_nodes > 0 else 0
    got = np.int64(0)
    for p in range(_hosting_count(sched, t)):
        h = host(sched.wfree, sched.wvalid[p, 3], req)
        got += np.int64(h >= share) if req_nodes > 0 else h
    return got >= (req_nodes if req_nodes > 0 else units)


@internal_kernel
def _node_fit(sched, core, alloc, j, now, limit):
    """The spec's earliest fit on nodes: the first candidate (now, then each booking end)
    at which the nodes take the job, skipping candidates the totals rule out; -1 when
    none before ``limit``.  The placement is left in core.work.

    Whether the nodes take the job does not depend on the allocator's order, and only
    gets likelier as a node's free amounts rise: so each candidate is tested in index
    order on the job's types, nodes recomputed only when their window changed
    (:func:`_refresh_nodes`); after a failed test, the candidates before enough nodes'
    least free amounts may rise are skipped (:func:`_fails_until`: they fail too); the
    allocator's order is computed only at the candidate that fits (:func:`_nodes_at`)."""
    jobs = core.jobs
    d = _d(jobs, j)
    elig = core.elig[jobs[j, J_CLASS]]
    wvalid = sched.wvalid
    # (the nodes compression's bound leaves out host nothing of the job at any candidate
    # before limit: never read)
    for p in range(_live_count(sched)):
        node = _live_node(sched, p)
        wvalid[node, 0] = -1
        for k in range(N_RES):
            wvalid[node, W_ROW + k] = 0  # (the plan may have changed since the last search)
    fail_until = np.int64(-1)  # every candidate before it fails
    t = now
    while True:
        t = _totals_fit(sched, jobs, j, t, limit, 0, 0)
        if t < 0:
            return -1
        # an instant the totals allow is a candidate: the totals only fall at booking ends
        if t >= fail_until:
            _refresh_nodes(sched, core, j, t, d)
            if _live_fits(sched, core, j, elig, t):
                ok = _nodes_at(sched, core, alloc, j, t)  # only fails for want of an order
                return t if ok else -1
            fail_until = _fails_until(sched, core, j, t, d, limit)
            if fail_until >= limit:
                return -1
            # resume at the last candidate end before it: the totals' earliest fit from
            # there is the first candidate the search would test at or after fail_until,
            # or one before it (skipped)
            e = _last_end_before(sched, fail_until)
            if e > t:
                if e >= limit:
                    return -1
                t = e
                continue
        t = _next_end_after(sched, t)
        if t < 0 or t >= limit:
            return -1


def _plan_fit(sched, core, alloc, j, t, limit):
    """Earliest fit of queued job j at or after t on the plan alone (its own booking not
    in the plan); -1 when none before ``limit``."""


@inline_kernel
def _pool_fit(sched, k, size, d, t, limit, ex0, ex1, ex_items):
    """The earliest fit on type k's vector (as ``rusv.kernel_earliest_fit``): through its
    slot index once the vector is long enough, the index built, dropped or trimmed first
    as the vector's rows ask (the rows before the trim instant are gone; no search starts
    before it).  A short plan (every plan of a real replay) takes the plain inlined search
    and nothing else: the indexed one is a call, so that its code does not crowd the
    compression's loop."""
    index = _index_of(sched, k)
    if index[0, 0] == 0 and sched.meta[k, M_N] <= index[X_ON, 0]:
        return kernel_earliest_fit(sched.slots[k], sched.meta[k], size, d, t, limit, ex0, ex1, ex_items)
    return _indexed_fit(sched.slots[k], sched.meta[k], index, size, d, t, limit, ex0, ex1, ex_items,
                        sched.scal[S_TRIM])


@inline_kernel
def _pool_move_fit(sched, k, size, d, t, limit, b0, e0):
    """:func:`_pool_fit` for a job of ``size`` items of type k booked at [b0, e0) (e0 = b0
    + d), before ``limit`` <= b0: a window overlapping the booking fits from b0 on (the
    plan, booking included, never exceeds the machine), so a short plan reads only the
    rows before b0 (``rusv.kernel_earliest_fit_clipped``)."""
    index = _index_of(sched, k)
    if index[0, 0] == 0 and sched.meta[k, M_N] <= index[X_ON, 0]:
        return kernel_earliest_fit_clipped(sched.slots[k], sched.meta[k], size, d, t, limit, b0)
    return _indexed_fit(sched.slots[k], sched.meta[k], index, size, d, t, limit, b0, e0, size, sched.scal[S_TRIM])


@internal_kernel
def _indexed_fit(slots, meta, index, size, d, t, limit, ex0, ex1, ex_items, trim):
    """:func:`_pool_fit` past the index's threshold.  The search is the RUSV module's own
    kernel, called: compiled once, for this and for the module's Python entry, rather than
    a copy inlined here."""
    kernel_index_keep(slots, meta, index, trim)
    return kernel_earliest_fit_indexed_call(slots, meta, index, size, d, t, limit, ex0, ex1, ex_items)


@inline_kernel
def _plan_fit_pool(sched, core, alloc, j, t, limit):
    return _pool_fit(sched, sched.ptype[j], sched.size[j], _d(core.jobs, j), t, limit, np.int64(0), np.int64(0),
                     np.int64(0))


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


# True: compression's tries search from now to the booking (on nodes, every node), with
# none of the shortcuts (failure memo, freed floor, limits, per-node bound; on a pool the
# prefix maxima and the limit): the spec's try as it reads.  A compile-time constant for
# bench/conservative_exhaustive.py, which sets it in a process of its own (with a numba
# cache of its own) and compares the schedules; never set in a replay.
EXHAUSTIVE_TRIES = False


def _earlier_fit(sched, core, alloc, j, now, b0, e0):
    """Earliest fit of queued job j booked at [b0, e0) if it is before b0, else -1.  The
    plan is unchanged, except that on nodes a job that fits earlier has its booking
    already off it (the caller moves it: :func:`bookings._move`; the placement is left in
    core.work).  sched.scal[S_FREED]: the latest instant
    at which the plan freed room since the job's booking was last chosen or tried, while
    every other change only took room.

    Pool: any instant may start a window, so a window that fits now and did not then
    holds freed room, and starts before that instant: the search stops there (none when it
    is not after now).  Nodes: only booking ends are candidates, and a new booking adds
    one: the candidates before that instant are searched, and after it only those from
    the earliest booking end added since the job's last try on (sched.ends_log)."""


@inline_kernel
def _earlier_fit_pool(sched, core, alloc, j, now, b0, e0):
    # inlined into the compression's loop (_by_state's inline_pool), which tries every
    # queued job: a call would pass every array of the scheduler's, the core's and the
    # allocator's states, and cost about as much as the try (HPC2N: 8.9 M tries)
    if EXHAUSTIVE_TRIES:
        return _exhaustive_try_pool(sched, core, alloc, j, now, b0, e0)
    if not _unconstrained(sched.site, j):
        return _earlier_fit_pool_site(sched, core, alloc, j, now, b0, e0)
    k = sched.ptype[j]
    limit = min(b0, sched.scal[S_FREED])
    if limit <= now:
        return -1
    # -1: no instant before the limit has its size free; else none has before t0, where
    # the search starts
    t0 = _free_start(sched, k, sched.size[j], now, limit)
    if t0 < 0:
        return -1
    t = _pool_move_fit(sched, k, sched.size[j], _d(core.jobs, j), t0, limit, b0, e0)
    if t < 0 or sched.scal[S_WINDOWS] == 0:
        return t
    return _earlier_fit_pool_windows(sched, core, j, t, limit, b0, e0)


@internal_kernel
def _earlier_fit_pool_windows(sched, core, j, t, limit, b0, e0):
    """:func:`_earlier_fit_pool` from t, the plan's first fit, on a site with maintenance
    windows: the plan and the windows take turns until they agree (a call: the windows'
    code stays out of the compression's loop).  The bound on where to search holds as
    without windows: they never change, so a window that fits now and did not then
    still holds freed room."""
    k = sched.ptype[j]
    size = sched.size[j]
    d = _d(core.jobs, j)
    while True:
        t2 = _clear_of_windows(sched, t, d, limit)
        if t2 == t:
            return t
        if t2 >= limit:
            return -1
        t = _pool_move_fit(sched, k, size, d, t2, limit, b0, e0)
        if t < 0:
            return -1


@internal_kernel
def _earlier_fit_pool_site(sched, core, alloc, j, now, b0, e0):
    """:func:`_earlier_fit` on a pool for a job with site constraints: its limits may be
    why it waited, so its whole span before its booking is searched, on the plan without
    its booking."""
    if b0 <= now:
        return -1
    t0 = _free_start(sched, sched.ptype[j], sched.size[j], now, b0)
    if t0 < 0:
        return -1
    return _pool_fit_off_booking(sched, core, alloc, j, t0, b0, e0)


@inline_kernel
def _pool_fit_off_booking(sched, core, alloc, j, t0, b0, e0):
    """The earliest fit of job j booked at [b0, e0) on a pool, at or after t0 and before
    b0, on the plan without its booking and with the site's constraints; the booking is
    put back (the plan is as it was)."""
    pmf_n = sched.scal[S_PMF_N]
    _pool_add(sched, j, b0, e0, -1)  # out of the plan and its consumers' vectors
    t = _fit_before(sched, core, alloc, j, t0, b0)
    _pool_add(sched, j, b0, e0, 1)
    sched.scal[S_PMF_N] = pmf_n  # the plan is as it was
    return t


@internal_kernel
def _exhaustive_try_pool(sched, core, alloc, j, now, b0, e0):
    """:func:`_earlier_fit` on a pool without its shortcuts (:data:`EXHAUSTIVE_TRIES`):
    the plan without job j's booking searched from now to it, with the site's
    constraints."""
    if b0 <= now:
        return -1
    return _pool_fit_off_booking(sched, core, alloc, j, now, b0, e0)


# The resource types (core.layout: cores, GPUs, MICs, memory) in the order the per-node
# bound tests them: on a GPU-bound plan most nodes fail on their GPUs (burst8-ff: 18 M of
# 40 M node reads), and then cost no test of their cores
ACCELERATORS_FIRST = (1, 2, 0, 3)


@inline_kernel
def _node_may_host_before(sched, cap, node, req, now, before, b0, d, own):
    """For :func:`_nodes_may_host_before`: false when ``node`` hosts nothing of a job
    (requesting ``req`` per unit, booked for d seconds) in any window [t, t + d), now <= t
    < before: one of the requested types is at capacity throughout [now, before), or has
    no free run (:func:`_build_npmf`) of d seconds begun before ``before`` (a window that
    hosts a unit lies in one).  Else wfree's row gets the node's most free amount of each
    requested type over [now, before) (GPU nodes' kept cores not yet taken off).
    ``own``: the job is booked on the node from b0 (>= before) on, which the search does
    not count: its run holding b0 - 1, if any, may last long enough.  Builds the node's
    prefix rows as needed."""
    wfree = sched.wfree
    # every type's fullness first: the nodes ruled out by one type (a GPU job's nodes with
    # their GPUs taken, read in the cores' full-until order) cost no run test of another;
    # and the accelerators before cores and memory, the scarce types that rule out most
    for k in ACCELERATORS_FIRST:
        if req[k] == 0:
            continue
        if cap[node, k] == 0:
            return False
        v = node * N_RES + k
        if sched.npmf_n[v] < 0:
            sched.npmf_n[v] = _build_npmf(sched.nslots[v], sched.nmeta[v], sched.npmf[v], now, cap[node, k])
        if _full_until(sched.npmf[v], now) >= before:  # full from now until then (most nodes): no search
            return False
    for k in ACCELERATORS_FIRST:
        if req[k] == 0:
            continue
        v = node * N_RES + k
        npmf = sched.npmf[v]
        m = sched.npmf_n[v]
        lo = _first_row_reaching(npmf, m, before)
        if _longest_run_before(npmf, m, lo) < d and not (
                own and _below_cap_at(sched.nslots[v], sched.nmeta[v], b0 - 1, cap[node, k])):
            return False
        wfree[node, k] = cap[node, k] - _least_used_before(sched.nslots[v], sched.nmeta[v], npmf, lo, now, before)
    return True


@inline_kernel
def _hosts_before(sched, cap, node, req, now, before, b0, d, own, keep, need):
    """The most units of a job (``req`` per unit, d seconds, ``keep`` cores kept on GPU
    nodes) ``node`` may host in a window starting in [now, before): 0 when
    :func:`_node_may_host_before` rules it out, or when the caller's ``need`` units (1,
    or an exact node count's share; 0: no test) fit in no such window on some requested
    type (:func:`_stays_at_most_before`; not on the job's own nodes, ``own``, whose run
    may go on into the booking the search takes off), else what its most free amounts
    host (left in wfree's row, kept cores taken off)."""
    if not _node_may_host_before(sched, cap, node, req, now, before, b0, d, own):
        return np.int64(0)
    _take_kept(sched.wfree, cap, node, keep)
    h = np.int64(host(sched.wfree, node, req))
    if h < need or need <= 0 or own:
        return h
    kept = _node_kept(cap, node, keep)
    for k in ACCELERATORS_FIRST:
        if req[k] == 0:
            continue
        v = node * N_RES + k
        high = cap[node, k] - need * req[k] - (kept if k == 0 else 0)
        if not _stays_at_most_before(sched.nslots[v], sched.nmeta[v], now, before, d, high):
            return np.int64(0)
    return h


@internal_kernel
def _nodes_may_host_before(sched, core, j, now, before, b0):
    """Whether job j may fit on the nodes at some instant of [now, before) (now < before
    <= b0; its booking begins at b0, so is not in the way): each node hosts at most what
    its most free amounts over [now, before) host (their prefix minima, sched.npmf, built
    as needed), and nothing when it has no free run of the job's length begun before
    ``before`` (:func:`_node_may_host_before`); false means no window starting before it
    takes the job.  The nodes that may host some, the live ones, are listed in
    sched.wvalid column 3 (the search before ``before`` reads only them; the caller ends
    the list, :func:`_clear_marks`).  Uses sched.wfree."""
    jobs = core.jobs
    cap = core.cap
    wfree = sched.wfree
    elig = core.elig[jobs[j, J_CLASS]]
    req = jobs[j, J_REQ : J_REQ + N_RES]
    units = jobs[j, J_UNITS]
    req_nodes = jobs[j, J_REQ_NODES]
    share = units // req_nodes if req_nodes > 0 else 0
    keep = _kept_cores(sched, jobs, j)
    short = req_nodes if req_nodes > 0 else units
    wvalid = sched.wvalid
    m = wfree.shape[0]
    # the nodes with one of the job's types full from now until ``before`` host nothing: a
    # suffix of the full-until order of those types, never read (a job without cores, or
    # one whose share per node is 0, reads every node); a GPU or MIC job's order leaves
    # out the nodes without that type too (burst-ff: 60 % of the nodes read)
    ordered = req[0] > 0 and (req_nodes <= 0 or share >= 1)
    count = m
    o = 0
    if req[1] > 0 and req[2] == 0:
        o = 1
    elif req[2] > 0 and req[1] == 0:
        o = 2
    if ordered:
        if sched.scal[S_FULL_AT_OF[o]] != now:
            _full_order(sched, core, now, o)
        count = _first_full_after(wvalid, W_ORDER[o], W_KEY[o], m, before - 1)  # the first full until then or later
    sched.scal[S_LIVE_KEY] = W_KEY[o] if ordered else -1
    stamp = sched.scal[S_STAMP] + 1
    sched.scal[S_STAMP] = stamp
    # the job's own nodes, marked -stamp: its booking is on their vectors from b0 on
    # (the search takes it off), so a free run there that reaches b0 may go on
    own_rows = sched.book[j, B_PTR]
    for r in range(own_rows, own_rows + sched.book[j, B_COUNT]):
        wvalid[sched.bnodes[r, 0], 2] = -stamp
    d = _d(jobs, j)
    live = 0
    for p in range(count):
        node = wvalid[p, W_ORDER[o]] if ordered else p
        if elig[node] == 0:
            continue
        h = _hosts_before(sched, cap, node, req, now, before, b0, d, wvalid[node, 2] == -stamp, keep,
                          share if req_nodes > 0 else np.int64(1))
        if (h >= share) if req_nodes > 0 else (h > 0):
            wvalid[live, 3] = node
            wvalid[node, 2] = stamp
            live += 1
        short -= np.int64(h >= share) if req_nodes > 0 else h
    sched.scal[S_LIVE] = live
    return short <= 0


@inline_kernel
def _type_full_until(sched, cap, node, k, now):
    """The instant until which type k is at capacity on ``node`` from now on (its prefix
    minima's, built as needed), INF when the node has none of it."""
    if cap[node, k] == 0:
        return INF
    v = node * N_RES + k
    if sched.npmf_n[v] < 0:
        sched.npmf_n[v] = _build_npmf(sched.nslots[v], sched.nmeta[v], sched.npmf[v], now, cap[node, k])
    return _full_until(sched.npmf[v], now)


@internal_kernel
def _full_order(sched, core, now, o):
    """Build sched.wvalid's full-until order o (0: cores, 1: cores and GPUs, 2: cores and
    MICs): column W_KEY[o], each node's instant until which one of those types is at
    capacity from now on (from its prefix minima, built as needed; INF for a node without
    one of them), and column W_ORDER[o], the nodes in that order (an insertion sort of
    the last order: after a move only the moved nodes are out of place)."""
    cap = core.cap
    wvalid = sched.wvalid
    key = W_KEY[o]
    col = W_ORDER[o]
    m = wvalid.shape[0]
    for node in range(m):
        until = _type_full_until(sched, cap, node, 0, now)
        if o > 0 and until < INF:
            until = max(until, _type_full_until(sched, cap, node, o, now))
        wvalid[node, key] = until
    for p in range(1, m):
        node = wvalid[p, col]
        at = wvalid[node, key]
        q = p
        while q > 0 and wvalid[wvalid[q - 1, col], key] > at:
            wvalid[q, col] = wvalid[q - 1, col]
            q -= 1
        wvalid[q, col] = node
    sched.scal[S_FULL_AT_OF[o]] = now


@inline_kernel
def _clear_marks(sched):
    """End compression's search: every node is read again."""
    sched.scal[S_LIVE] = -1
    sched.scal[S_LIVE_KEY] = -1


@inline_kernel
def _new_end_from(sched, j, lo, hi):
    """The earliest booking end in [lo, hi) added since job j was last booked or tried
    (sched.book column B_TRIED), INF when none, -1 when the ring has lost some of them
    (every candidate may be new)."""
    added = sched.scal[S_ENDS_ADDED]
    since = sched.book[j, B_TRIED]
    ring = ENDS_LOG
    if since < 0 or added - since > ring:
        return np.int64(-1)
    if lo >= hi:
        return INF  # (the room freed since reaches the booking: no span to search)
    first = INF
    # the ring's entries since..added, as (at most) two runs: no division per entry
    a = since % ring
    b = a + (added - since)
    for i in range(a, min(b, ring)):
        e = sched.ends_log[i]
        if lo <= e < hi and e < first:
            first = e
    for i in range(0, b - ring):
        e = sched.ends_log[i]
        if lo <= e < hi and e < first:
            first = e
    return first


@internal_kernel
def _own_nodes_may_host(sched, core, j, now, before, b0):
    """Whether one of the nodes job j is booked on (from b0) may host a unit of it, or
    its share for an exact node count, in a window starting in [now, before)
    (:func:`_node_may_host_before`, with the own-booking allowance).  When the job fails
    on the plan with its booking on (:func:`_failed_like`), a window that takes it once
    the booking is off gained room only on those nodes, which then host more of it."""
    jobs = core.jobs
    cap = core.cap
    req = jobs[j, J_REQ : J_REQ + N_RES]
    req_nodes = jobs[j, J_REQ_NODES]
    need = jobs[j, J_UNITS] // req_nodes if req_nodes > 0 else 1
    if need <= 0:
        return True  # (every node counts for such a share)
    keep = _kept_cores(sched, jobs, j)
    d = _d(jobs, j)
    p = sched.book[j, B_PTR]
    for r in range(p, p + sched.book[j, B_COUNT]):
        if _hosts_before(sched, cap, sched.bnodes[r, 0], req, now, before, b0, d, True, keep, need) >= need:
            return True
    return False


# More freed-room entries than this since a try, or entries on more nodes than
# FREED_NODES, and the floor is not computed (the ring holds ENDS_LOG).  Entries cost no
# node read; each node is tested once (docs/internals/performance.md, "The freed floor
# on a deep queue")
FREED_READ = 512
FREED_NODES = 32


@internal_kernel
def _freed_floor(sched, core, j, now, b0, since):
    """An instant before which no window of job j starting in [now, b0) can take it that
    did not at its last try or booking, from the room freed since (the freed-room log's
    entries from number ``since`` on): b0 or later when there is none; ``now`` without
    testing them when they are more than FREED_READ or on more than FREED_NODES nodes.

    At that try no window starting before its booking took the job (it was its earliest
    fit, or the try found none earlier), and since then the plan gained room only in
    the spans of the bookings removed, on their nodes: elsewhere every node's least free
    amount over any window is the same or less.  A window that takes the job now and did
    not then has one of those nodes hosting more of it, so it meets that node's freed
    span [from, to) and starts in [from - d + 1, to), and the node hosts at least a unit
    of the job (its share, for an exact node count) in a window starting before
    min(to, b0) (:func:`_hosts_before`).

    A node's entries are taken as one: the earliest start any of them allows, and the
    latest bar min(to, b0); a node that hosts nothing in windows starting before that
    bar hosts nothing before any of its entries' bars (the test only gets likelier as
    the bar rises).  So each node is tested once, in order of earliest start, and the
    answer is the first that passes.  (Site constraints may change without the plan:
    the caller asks only for jobs without them.)  Uses sched.tmp (the nodes) and
    sched.wvalid's W_FREED_FROM and W_FREED_TO columns (left at -1).  (Testing each
    entry, as before, capped them at 16: after a cascade of moves in a deep queue most
    tries had more, and went unbounded.)"""
    jobs = core.jobs
    cap = core.cap
    added = sched.scal[S_FREED_ADDED]
    if added - since > FREED_READ:
        return now
    req = jobs[j, J_REQ : J_REQ + N_RES]
    req_nodes = jobs[j, J_REQ_NODES]
    need = jobs[j, J_UNITS] // req_nodes if req_nodes > 0 else 1
    if need <= 0:
        return now  # (every node counts for such a share)
    elig = core.elig[jobs[j, J_CLASS]]
    d = _d(jobs, j)
    log = sched.ends_log
    keep = _kept_cores(sched, jobs, j)
    own0 = sched.book[j, B_PTR]
    own1 = own0 + sched.book[j, B_COUNT]
    wvalid = sched.wvalid
    nodes = sched.tmp
    count = 0
    over = False
    for i in range(since, added):
        r = i % ENDS_LOG
        node = log[ENDS_LOG + r]
        lo = max(now, log[2 * ENDS_LOG + r] - d + 1)
        hi = min(log[3 * ENDS_LOG + r], b0)
        if lo >= hi or elig[node] == 0:
            continue
        if wvalid[node, W_FREED_TO] < 0:
            if count == FREED_NODES:
                over = True
                break  # (the marks are cleared below)
            wvalid[node, W_FREED_FROM] = lo
            wvalid[node, W_FREED_TO] = hi
            nodes[count] = node
            count += 1
        else:
            wvalid[node, W_FREED_FROM] = min(wvalid[node, W_FREED_FROM], lo)
            wvalid[node, W_FREED_TO] = max(wvalid[node, W_FREED_TO], hi)
    low = now if over else INF
    tested = 0 if over else count
    for p in range(1, tested):  # by earliest start (insertion: a few nodes)
        node = nodes[p]
        lo = wvalid[node, W_FREED_FROM]
        q = p
        while q > 0 and wvalid[nodes[q - 1], W_FREED_FROM] > lo:
            nodes[q] = nodes[q - 1]
            q -= 1
        nodes[q] = node
    for p in range(tested):
        node = nodes[p]
        own = False
        for u in range(own0, own1):
            if sched.bnodes[u, 0] == node:
                own = True
        if _hosts_before(sched, cap, node, req, now, wvalid[node, W_FREED_TO], b0, d, own, keep, need) >= need:
            low = wvalid[node, W_FREED_FROM]
            break
    for p in range(count):
        wvalid[nodes[p], W_FREED_TO] = -1
    return low


@inline_kernel
def _kept_cores(sched, jobs, j):
    """The cores each GPU node keeps from job j (Keller's expensive resources, the site's
    ``gpu_node_cores``): the site's number when it asks for cores and no GPU, else 0."""
    return sched.site.gpu[0] if jobs[j, J_REQ + 1] == 0 and jobs[j, J_REQ] > 0 else np.int64(0)


@inline_kernel
def _node_kept(cap, node, keep):
    """The cores ``node`` keeps from a job that GPU nodes keep ``keep`` cores from
    (:func:`_kept_cores`): those on a GPU node, none elsewhere."""
    return keep if cap[node, 1] > 0 else np.int64(0)


@inline_kernel
def _take_kept(wfree, cap, node, keep):
    """Take the cores ``node`` keeps from the job (:func:`_node_kept`) off its free cores
    in wfree."""
    kept = _node_kept(cap, node, keep)
    if kept > 0:
        wfree[node, 0] = max(0, wfree[node, 0] - kept)


@inline_kernel
def _failed_like(sched, jobs, j, limit):
    """Whether the try remembered in sched.scal (S_MEMO_*), made since the plan last
    changed, found no window before its limit for a job that asked no more than job j
    over windows starting before ``limit`` (<= that limit): same node class and node
    count, the kept-cores rule alike, and units, booking length and each type's request
    per unit no smaller.  Then no window starting before ``limit`` takes j: that try
    searched the plan without its own booking, which has at least the room of j's plan
    over j's windows when j's own booking lies past them; a window taking j takes the
    smaller job too; and a window start taking it that is not a candidate there lies in
    a run of such starts that begins at a candidate or at now, which that try tested."""
    sc = sched.scal
    if sc[S_MEMO_LIMIT] < 0 or limit > sc[S_MEMO_LIMIT]:
        return False
    if jobs[j, J_CLASS] != sc[S_MEMO_CLASS] or jobs[j, J_REQ_NODES] != sc[S_MEMO_RN]:
        return False
    if jobs[j, J_UNITS] < sc[S_MEMO_UNITS] or _d(jobs, j) < sc[S_MEMO_D]:
        return False
    if _kept_cores(sched, jobs, j) != sc[S_MEMO_KEEP]:
        return False
    for k in range(N_RES):
        if jobs[j, J_REQ + k] < sc[S_MEMO_REQ + k]:
            return False
    return True


@inline_kernel
def _remember_failure(sched, jobs, j):
    """Remember the try of job j that just found nothing before its limit
    (sched.scal[S_TRY_LIMIT], -1 when it is not one to remember), unless the remembered
    one rules out every job this one would (it asked for no more, up to a later limit)."""
    sc = sched.scal
    limit = sc[S_TRY_LIMIT]
    if limit < 0 or _failed_like(sched, jobs, j, limit):
        return
    sc[S_MEMO_LIMIT] = limit
    sc[S_MEMO_CLASS] = jobs[j, J_CLASS]
    sc[S_MEMO_UNITS] = jobs[j, J_UNITS]
    sc[S_MEMO_D] = _d(jobs, j)
    sc[S_MEMO_RN] = jobs[j, J_REQ_NODES]
    sc[S_MEMO_KEEP] = _kept_cores(sched, jobs, j)
    for k in range(N_RES):
        sc[S_MEMO_REQ + k] = jobs[j, J_REQ + k]


@inline_kernel
def _exhaustive_try(sched, core, alloc, j, now, b0, e0):
    """Compression's try of job j booked at [b0, e0) without its shortcuts
    (:data:`EXHAUSTIVE_TRIES`): the same search with the booking off, from now to b0 on
    every node."""
    _clear_marks(sched)  # every node read
    return _nodes_fit_off_booking(sched, core, alloc, j, now, b0, INF, b0, e0)


@inline_kernel
def _earlier_fit_nodes(sched, core, alloc, j, now, b0, e0):
    sched.scal[S_TRY_LIMIT] = -1
    if EXHAUSTIVE_TRIES:
        return _exhaustive_try(sched, core, alloc, j, now, b0, e0)
    t = _earlier_fit_nodes_search(sched, core, alloc, j, now, b0, e0)
    if t < 0:
        _remember_failure(sched, core.jobs, j)
    else:
        sched.scal[S_MEMO_LIMIT] = -1  # the caller moves the job: the plan changes
    return t


@inline_kernel
def _earlier_fit_nodes_search(sched, core, alloc, j, now, b0, e0):
    # Which candidates to search (_earlier_fit's docstring): a candidate window that fits
    # now and did not at the job's last try holds room freed since (the plan only gained
    # room there, every other change took room), so starts before S_FREED; a candidate
    # at or after it can only fit if it was not one then: a booking end added since.  So
    # every candidate of [now, limit) is searched, then those of [resume, b0) (resume:
    # the earliest new end there; the old ones between fail, and are only tested).
    jobs = core.jobs
    sc = sched.scal
    limit = b0
    resume = INF
    site_free = _unconstrained(sched.site, j)
    if site_free:  # (site constraints: as the pool)
        limit = min(b0, sc[S_FREED])
        resume = _new_end_from(sched, j, max(limit, now + 1), b0)
        if resume < 0:  # lost track: search every candidate
            limit = b0
            resume = INF
    sched.book[j, B_TRIED] = sc[S_ENDS_ADDED]
    freed_since = sched.book[j, B_FREED]
    sched.book[j, B_FREED] = sc[S_FREED_ADDED]
    if limit <= now and resume >= b0:
        return -1  # (now itself: with no room freed from now on, it fails as the candidate before it did)
    sc[S_TRY_LIMIT] = limit if site_free else -1
    # A job asking for at least what an earlier try that found nothing asked fails on the
    # plan with its own booking on: it finds nothing when that booking is past every
    # window it would test, and else only in a window meeting it (starting at floor or
    # later), on one of its own nodes.
    floor = now
    if site_free and resume >= b0 and _failed_like(sched, jobs, j, limit):
        floor = b0 - _d(jobs, j) + 1
        if floor >= limit or not _own_nodes_may_host(sched, core, j, now, limit, b0):
            return -1
    # the first instant the totals allow (its own booking left out): no candidate before
    # it fits, and the search before limit starts there (its first step would find it
    # again, with the booking taken off the plan).  As on a pool, the totals' prefix
    # maxima of free cores (sched.pmf) rule out the jobs no instant before the booking
    # has room for, and tell where that search may start.  Every window the search
    # tests starts before ``before``: the bounds need only hold for those.
    before = limit if resume >= b0 else b0
    if site_free and freed_since >= 0:
        # the windows that meet room freed since the last try: none, or from later on
        low = _freed_floor(sched, core, j, now, b0, freed_since)
        if low >= b0 or (low >= limit and resume >= b0):
            return -1
        floor = max(floor, low)
    t0 = now
    cores = jobs[j, J_REQ] * jobs[j, J_UNITS]
    if cores > 0:
        t0 = _free_start(sched, 0, cores, now, before)
        if t0 < 0:
            return -1
    first = _totals_fit(sched, jobs, j, max(t0, floor), b0, b0, e0)
    if first < 0 or (first >= limit and resume >= b0):
        return -1
    t = np.int64(-1)
    if _nodes_may_host_before(sched, core, j, now, before, b0):
        t = _nodes_fit_off_booking(sched, core, alloc, j, first, limit, resume, b0, e0)
    _clear_marks(sched)
    return t


@inline_kernel
def _nodes_fit_off_booking(sched, core, alloc, j, first, limit, resume, b0, e0):
    """Compression's search for job j booked at [b0, e0), on the nodes the marks leave
    in (:func:`_nodes_may_host_before`, or every node after :func:`_clear_marks`): with
    its booking off, the candidates from ``first`` before ``limit``, then those from the
    first at or after ``resume`` before b0; -1 and the booking back when none fits, else
    the fit, the booking left off for the caller's move."""
    sc = sched.scal
    # the booking comes off and goes back as it was: the nodes' prefix minima still hold
    _book_nodes_keeping(sched, core, j, b0, e0, -1, False)
    t = np.int64(-1)
    if first < limit:
        t = _fit_before(sched, core, alloc, j, first, limit)
    if t < 0 and resume < b0:
        c = _next_end_after(sched, resume - 1)  # the first candidate >= resume
        if 0 <= c < b0:
            t = _fit_before(sched, core, alloc, j, c, b0)
    if t < 0:
        # put the booking back as it was
        _book_nodes_keeping(sched, core, j, b0, e0, 1, False)
    else:
        # the booking stays off: the caller moves the job to t (:func:`_move_nodes`
        # books the placement left in core.work and forgets the old nodes' prefix
        # minima)
        _orders_stale(sc)  # the move changes its nodes' full-until instants
        # and the totals from t on (the prefix maxima are read only here, and the
        # plan changes during compression only by its moves; each pass starts them
        # again)
        _cut_pmf(sched.pmf, sc, t)
    return t


# both inlined into the compression's loop, their one caller: on nodes too, a call passes
# every array of the node state, the core's and the allocator's, about 300 cycles a try
# (burst-ff: 382 k tries, most ending on the failure memo or the freed floor)
_by_state(_earlier_fit, _earlier_fit_pool, _earlier_fit_nodes, inline_pool=True, inline_nodes=True)


@inline_kernel
def _book_at_fit(sched, core, alloc, j, now):
    """Book job j (unbooked) at its earliest fit."""
    t = _fit(sched, core, alloc, j, now)
    if t < 0:  # only when the allocator gives no planning order (reported by _grow)
        return
    end = t + _d(core.jobs, j)
    _book_new(sched, core, j, t, end)
    _set_booking(core.jobs, sched, j, t, end)
