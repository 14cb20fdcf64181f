"""EASY backfilling (Lifka; Mu'alem and Feitelson), exactly as
the replay contract says (``docs/reference/replay-contract.md`` §4 and §8).

On heterogeneous nodes (the rule implemented, from the spec):

* the head's reservation is node-feasible: running jobs (those started earlier in this
  pass included) are released in (predicted end, index) order, predicted end = max(start
  + pred, now), with their actual node allocations; the shadow time is the first
  predicted end at which the head's allocation would succeed on the freed nodes, and every
  running job predicted to end at or before it counts as ended;
* a queued job that fits now starts if now + pred <= shadow; otherwise it starts only if
  the head's allocation would still succeed at the shadow time on the free resources of
  that instant minus the allocation this job would get now and minus the allocations of
  every job backfilled earlier in the pass that is predicted to run past the shadow time;
* when the head asks for single units of one resource type spread freely (every SWF job)
  the head's allocation succeeds iff that type's total suffices, so the node check is the
  classic ``extra`` rule on that type, which the kernel uses in that case.

The backfill scan visits the queue in order but skips, through a min-tree over queued
jobs, runs of jobs that cannot fit the free totals (free resources and ``extra`` only
shrink during a pass, so a skipped job could not have started later in it).  The tree's
leaves are arrival ranks (the order jobs joined the queue, which is the queue's order),
not job indices: with job dependencies a job released by its predecessor's end joins
behind jobs that come after it in the input.

Allocation attempts (the allocator hooks attempt_failed / attempt_succeeded, which
Priority-Weighted counts): the in-order starts up to the blocked head (included), then
every queued job behind the head in queue order: a candidate that does not fit now, or
whose placement would delay the head's reservation, is a failed attempt; a backfilled job
a successful one, reported after its nodes were chosen.  Jobs the min-tree lets the scan
skip are reported as failed attempts only to allocators whose ``counts_attempts`` is True
(the others never see them, so their scans keep the pruning and the pass reuse).

When every job the replay keeps is of that single-type kind (``Setup.all_pool``), the replay uses :class:`EasyPool`,
whose pass leaves out the node-feasible code (same schedule, less to compile).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import inline_kernel, internal_kernel
from ..core import JittedScheduler
from ..core.api import (
    C_ENDED,
    C_FREE,
    C_MAINT,
    C_REVISED,
    C_RN,
    C_STARTED,
    W_COUNT,
    W_COUNT2,
    W_IDENT,
    W_NODE,
    W_NODE2,
    attempt_failed,
    attempt_succeeded,
    choose,
    commit,
    counts_attempts,
    fits,
    fits_now,
    implements,
    mask_maintenance,
    sched_enqueued,
    sched_started_outside,
    schedule,
    unmask_maintenance,
)
from ..core.layout import (
    J_CLASS,
    J_NODES,
    J_PRED,
    J_PTR,
    J_REQ,
    J_REQ_NODES,
    J_STATE,
    J_UNITS,
    N_RES,
    JobState,
    pool_type,
)
from .inorder import _start_in_order

# Slots of Easy.scal, int64 (N_ESCAL,): the last backfill pass, reused while nothing
# started or ended since and no predicted end was raised (its head, shadow time, final
# extra, first unscanned arrival rank, and the core's start, end and revision counts
# when it ended), the shadow-time totals, and the arrival ranks given so far.
E_HEAD = 0
E_SHADOW = 1
E_EXTRA = 2
E_NEXT = 3
E_STARTED = 4
E_ENDED = 5
E_TOTALS = 6  # E_TOTALS + k: free amount of resource k at the shadow time
E_SEEN = 6 + N_RES  # arrival ranks given: the next job to join the queue gets this one
E_REVISED = 7 + N_RES
N_ESCAL = 8 + N_RES
E_ROWS = N_ESCAL  # EasySjbf.scal only: rows of EasySjbf.order in use

# The min-tree holds int32 (cores, GPUs, MICs, pred) per job: half the memory of int64.
TREE_PRED = 3
_TREE_INF = np.int32(np.iinfo(np.int32).max)
_TREE_CLAMP = np.iinfo(np.int32).max - 1


class Easy(NamedTuple):
    """tree int32 (2P, 4), P the power of two >= n: min-tree over arrival ranks of (request
    totals of cores, GPUs, MICs; pred) of queued jobs (see :func:`_tree_set`); rank int64
    (n,): each job's arrival rank (-1 before it joins the queue); by_rank int64 (n,): the
    job of each rank; scratch int64 (m, 4): free resources at the shadow time; scal int64
    (N_ESCAL,): E_* slots."""

    tree: np.ndarray
    rank: np.ndarray
    by_rank: np.ndarray
    scratch: np.ndarray
    scal: np.ndarray


class EasyPool(NamedTuple):
    """:class:`Easy` for a table whose every job is made of single units of one type,
    spread freely (every head's reservation is the ``extra`` rule)."""

    tree: np.ndarray
    rank: np.ndarray
    by_rank: np.ndarray
    scratch: np.ndarray
    scal: np.ndarray


class EasySjbf(NamedTuple):
    """EASY-SJBF.  order int64 (n, 2): (pred, job) rows of queued jobs sorted, ties in
    queue order (rows of jobs that started since stay until the next backfill scan drops
    them); scratch int64 (m, 4): free resources at the shadow time; scal int64
    (N_ESCAL + 1,): the E_* slots (only the shadow-time totals are used) and E_ROWS."""

    order: np.ndarray
    scratch: np.ndarray
    scal: np.ndarray


def easy_sjbf(setup) -> JittedScheduler:
    """EASY with shortest-job-backfilled-first (Tsafrir, Etsion and Feitelson 2007, the
    SJBF of EASY++): the head and its reservation exactly as :func:`easy`, then the queued
    jobs behind the head are tried in order of predicted run time (shortest first, ties in
    queue order), each under the same rule as in EASY's scan.  Allocation attempts are
    reported in that order (each candidate is either a failed or a successful attempt).
    With ``actual`` predictions it is the paper's PERFECT++ scheduler, with ``tsafrir``
    its EASY++."""
    scal = np.zeros(N_ESCAL + 1, dtype=np.int64)
    return JittedScheduler(EasySjbf(
        order=np.empty((max(setup.table.n_jobs, 1), 2), np.int64),
        scratch=np.empty((setup.machine.n_nodes, N_RES), np.int64),
        scal=scal,
    ))


def easy(setup) -> JittedScheduler:
    n = setup.table.n_jobs
    size = 1
    while size < max(n, 1):
        size <<= 1
    scal = np.zeros(N_ESCAL, dtype=np.int64)
    scal[E_STARTED] = -1  # no pass to reuse yet
    site = getattr(setup, "site", None)
    # maintenance windows hide nodes per job: the backfill must test each fit on nodes
    pool = setup.all_pool and (site is None or site.mwin.size == 0)
    state = (EasyPool if pool else Easy)(
        tree=np.full((2 * size, TREE_PRED + 1), _TREE_INF, np.int32),
        rank=np.full(max(n, 1), -1, np.int64),
        by_rank=np.zeros(max(n, 1), np.int64),
        scratch=np.empty((0 if pool else setup.machine.n_nodes, N_RES), np.int64),
        scal=scal,
    )
    return JittedScheduler(state)


# --------------------------------------------------------------------------- the min-tree


@inline_kernel
def _tree_set(tree, jobs, j, leaf, queued):
    """Set ``leaf`` (job j's arrival rank) of the min-tree to job j's (units * request of cores, GPUs, MICs,
    pred) when ``queued``, else to +inf (int32 max), and update its ancestors up to the
    first one that does not change.  Values are clamped below the int32 sentinel: a
    clamped value only prunes less.

    A job that starts keeps its leaf unless it started behind the head (EASY's backfill,
    a Python policy): jobs started in queue order sit at ranks below the head's, and
    every backfill scan starts after the head, so no scan ever covers them.  A stale leaf
    could only weaken pruning, never admit a job: the scan checks each job's state."""
    u1 = np.uint64(1)
    i = np.uint64((tree.shape[0] >> 1) + leaf)  # unsigned: no wrap-around on each access
    for k in range(TREE_PRED):
        v = jobs[j, J_UNITS] * jobs[j, J_REQ + k]
        tree[i, k] = min(v, _TREE_CLAMP) if queued else _TREE_INF
    tree[i, TREE_PRED] = min(jobs[j, J_PRED], _TREE_CLAMP) if queued else _TREE_INF
    i >>= u1
    while i >= u1:
        same = True
        left = i << u1
        for k in range(TREE_PRED + 1):
            a = tree[left, k]
            b = tree[left + u1, k]
            m = a if a < b else b
            if m != tree[i, k]:
                tree[i, k] = m
                same = False
        if same:  # the minima above depend on this node only through its values
            break
        i >>= u1


@inline_kernel
def _enqueued(sched, core, j):
    """Job ``j`` joined the queue: it gets the next arrival rank and that leaf of the
    min-tree."""
    r = sched.scal[E_SEEN]
    sched.rank[j] = r
    sched.by_rank[r] = j
    sched.scal[E_SEEN] = r + 1
    _tree_set(sched.tree, core.jobs, j, r, True)


@inline_kernel
def _started_outside(sched, core, j):
    _tree_set(sched.tree, core.jobs, j, sched.rank[j], False)


@inline_kernel
def _tree_ok(tree, i, cscal, kind, extra, horizon):
    """Whether tree node ``i`` may hold a job that fits the free totals (int64 (4,)) and,
    when ``kind`` >= 0, uses at most ``extra`` of resource ``kind`` or has pred <=
    ``horizon``.  A necessary condition at inner nodes (per-type minima), exact at leaves
    (memory is left to the exact fit test)."""
    for k in range(TREE_PRED):
        if tree[i, k] > cscal[C_FREE + k]:
            return False
    if kind >= 0 and tree[i, kind] > extra and tree[i, TREE_PRED] > horizon:
        return False
    return True


@inline_kernel
def _tree_next(tree, cscal, lo, kind, extra, horizon):
    """Smallest arrival rank >= ``lo`` of a queued job that passes :func:`_tree_ok`, or -1.  Jobs it
    skips cannot start in this pass: the free totals and ``extra`` only shrink.

    A walk from leaf ``lo`` in leaf order: down into the left child of a node that
    passes, else on to the next subtree to the right, climbing only as far as needed
    (so a next candidate close by costs a few nodes, not the tree's height; the
    cover of [lo, P) computed up front each call was 28 % of EASY's backfill scan on
    HPC2N).  Unsigned node numbers spare every access numba's negative-index wrap."""
    size = tree.shape[0] >> 1
    if lo >= size:
        return -1
    u1 = np.uint64(1)
    i = np.uint64(lo + size)
    usize = np.uint64(size)
    while True:
        if _tree_ok(tree, i, cscal, kind, extra, horizon):
            if i >= usize:
                return np.int64(i - usize)
            i = i << u1
            continue
        while i & u1:  # a right child: its parent's subtree is done
            i = i >> u1
        if i == 0:  # climbed past the root
            return -1
        i += u1


# --------------------------------------------------------------------------- the shadow time


@inline_kernel
def _add_to_scratch(jobs, j, nodes, counts, first, n, scratch, totals, sign):
    """Add (sign 1) or take away (sign -1) job ``j``'s units ``counts[first:first + n]``
    on nodes ``nodes[first:first + n]`` to the shadow-time resources (scratch, (m, 4), and
    their totals, (4,))."""
    for u in range(first, first + n):
        for k in range(N_RES):
            amount = sign * counts[u] * jobs[j, J_REQ + k]
            scratch[nodes[u], k] += amount
            totals[k] += amount


@inline_kernel
def _head_fits_scratch(jobs, scratch, totals, work, elig, head):
    """Whether the head's allocation would succeed on the shadow-time resources, on the
    nodes of its class (elig: the core's uint8 (k, m) node classes)."""
    cls = jobs[head, J_CLASS]
    return fits(
        scratch, totals, jobs[head, J_UNITS], jobs[head, J_REQ : J_REQ + N_RES],
        jobs[head, J_REQ_NODES], work[W_IDENT], work[W_NODE2], work[W_COUNT2], elig[cls], cls != 0,
    )


@inline_kernel
def _shadow_pool(core, head, now, kind):
    """Shadow time of a ``head`` made of single units of resource ``kind`` (see
    :func:`schedbench.core.layout.pool_type`): release running jobs in (predicted end, index) order, a whole
    group of equal predicted ends at a time, until that type's free total covers the
    head; returns (shadow, extra), extra = free units of that type then minus the head's."""
    jobs = core.jobs
    run_list = core.run_list
    rn = core.scal[C_RN]
    units = jobs[head, J_UNITS]
    avail = core.scal[C_FREE + kind]
    r = 0
    while r < rn:
        pe = max(run_list[r, 0], now)
        while r < rn and max(run_list[r, 0], now) == pe:
            j = run_list[r, 1]
            avail += jobs[j, J_UNITS] * jobs[j, J_REQ + kind]
            r += 1
        if avail >= units:
            return pe, avail - units
    return now, avail - units  # unreachable: too-wide jobs are dropped


@inline_kernel
def _shadow_nodes(sched, core, head, now):
    """Shadow time of any other ``head``: release running jobs as above, with their
    actual node allocations, until the head's allocation would succeed; leaves the free
    resources at that instant in sched.scratch and sched.scal[E_TOTALS:]."""
    jobs = core.jobs
    run_list = core.run_list
    rn = core.scal[C_RN]
    free = core.free
    scratch = sched.scratch
    totals = sched.scal[E_TOTALS : E_TOTALS + N_RES]
    log = core.log
    for i in range(free.shape[0]):
        for k in range(N_RES):
            scratch[i, k] = free[i, k]
    for k in range(N_RES):
        totals[k] = core.scal[C_FREE + k]
    r = 0
    while r < rn:
        pe = max(run_list[r, 0], now)
        while r < rn and max(run_list[r, 0], now) == pe:
            j = run_list[r, 1]
            _add_to_scratch(jobs, j, log[:, 0], log[:, 1], jobs[j, J_PTR], jobs[j, J_NODES], scratch, totals, 1)
            r += 1
        if _head_fits_scratch(jobs, scratch, totals, core.work, core.elig, head):
            return pe
    return now  # unreachable: too-wide jobs are dropped


# --------------------------------------------------------------------------- the pass


@inline_kernel
def _start_backfilled(sched, core, alloc, now, c, used):
    """Start candidate ``c`` on the placement ``choose`` made (``used`` nodes)."""
    attempt_succeeded(alloc, core.jobs, c)
    commit(core, alloc, c, now, used)
    _tree_set(sched.tree, core.jobs, c, sched.rank[c], False)


@inline_kernel
def _fail_skipped(sched, core, alloc, lo, hi):
    """Report to the allocator, as failed attempts in queue order, the queued jobs of
    arrival rank ``lo`` to ``hi`` - 1: those the min-tree let the scan skip (only called
    for allocators whose :func:`schedbench.core.api.counts_attempts` is True)."""
    jobs = core.jobs
    for r in range(lo, hi):
        s = sched.by_rank[r]
        if jobs[s, J_STATE] == JobState.QUEUED:
            attempt_failed(alloc, jobs, s)


@inline_kernel
def _remember(escal, core, head, shadow, extra):
    """Keep this pass's head, shadow time, extra and scan end (the ranks given) for the
    next pass."""
    escal[E_STARTED] = core.scal[C_STARTED]
    escal[E_ENDED] = core.scal[C_ENDED]
    escal[E_REVISED] = core.scal[C_REVISED]
    escal[E_HEAD] = head
    escal[E_SHADOW] = shadow
    escal[E_EXTRA] = extra
    escal[E_NEXT] = escal[E_SEEN]


@inline_kernel
def _admit_pool(core, alloc, c, kind, horizon, extra):
    """Whether queued job ``c`` may be backfilled behind a head made of single units of
    resource ``kind`` (the ``extra`` rule): returns what is left of ``extra`` once it
    starts, or -1 when it may not (a failed attempt, reported to the allocator)."""
    jobs = core.jobs
    if not fits_now(core, c):
        attempt_failed(alloc, jobs, c)
        return -1
    if jobs[c, J_PRED] > horizon:
        use = jobs[c, J_UNITS] * jobs[c, J_REQ + kind]
        if use > extra:
            attempt_failed(alloc, jobs, c)
            return -1
        return extra - use
    return extra


@inline_kernel
def _admit_nodes(sched, core, alloc, now, head, c, horizon):
    """Whether queued job ``c`` may be backfilled behind any other ``head`` (the
    node-feasible rule of the module docstring): returns the number of nodes of the
    placement ``choose`` left in core.work, or -1 when it may not (a failed attempt,
    reported; its maintenance mask undone).  When it may, the nodes in maintenance
    during its predicted run are still hidden: the caller commits, then unmasks."""
    jobs = core.jobs
    work = core.work
    totals = sched.scal[E_TOTALS : E_TOTALS + N_RES]
    maint = core.scal[C_MAINT] != 0
    if maint:  # nodes in maintenance during c's predicted run are hidden from it
        mask_maintenance(core, c, now)
    if not fits_now(core, c):
        attempt_failed(alloc, jobs, c)
        if maint:
            unmask_maintenance(core, alloc, c)
        return -1
    used = choose(alloc, core, c)
    if jobs[c, J_PRED] > horizon:
        # Place c as it would start now, take its nodes out of the shadow-time
        # resources, keep it only if the head still fits there.
        _add_to_scratch(jobs, c, work[W_NODE], work[W_COUNT], 0, used, sched.scratch, totals, -1)
        if not _head_fits_scratch(jobs, sched.scratch, totals, work, core.elig, head):
            _add_to_scratch(jobs, c, work[W_NODE], work[W_COUNT], 0, used, sched.scratch, totals, 1)
            attempt_failed(alloc, jobs, c)
            if maint:
                unmask_maintenance(core, alloc, c)
            return -1
    return used


@internal_kernel
def _backfill_pool(sched, core, alloc, now, head, kind):
    """EASY's backfill scan behind a blocked ``head`` made of single units of resource
    ``kind`` (spec "EASY": the ``extra`` rule on that type)."""
    jobs = core.jobs
    escal = sched.scal
    counting = counts_attempts(alloc)
    r = sched.rank[head]  # the scan's arrival rank
    if (
        escal[E_STARTED] == core.scal[C_STARTED] and escal[E_ENDED] == core.scal[C_ENDED]
        and escal[E_HEAD] == head and escal[E_SHADOW] > now and not counting
        and escal[E_REVISED] == core.scal[C_REVISED]
    ):
        # Nothing ended or started since the last pass, which had this head, and no
        # predicted end moved (prediction correction, core.steps._revise_overdue): the free
        # resources, the shadow time and extra are those it ended with, and every job it
        # scanned would be refused again (the horizon only shrank), so only jobs that
        # arrived since need a look.
        shadow = escal[E_SHADOW]
        extra = escal[E_EXTRA]
        r = escal[E_NEXT] - 1
    else:
        shadow, extra = _shadow_pool(core, head, now, kind)
    horizon = shadow - now
    while True:
        nxt = _tree_next(sched.tree, core.scal, r + 1, kind, extra, horizon)
        if counting:
            _fail_skipped(sched, core, alloc, r + 1, nxt if nxt >= 0 else escal[E_SEEN])
        r = nxt
        if r < 0:
            break
        c = sched.by_rank[r]
        if jobs[c, J_STATE] != JobState.QUEUED:
            continue
        left = _admit_pool(core, alloc, c, kind, horizon, extra)
        if left >= 0:
            extra = left
            _start_backfilled(sched, core, alloc, now, c, choose(alloc, core, c))
    _remember(escal, core, head, shadow, extra)


@internal_kernel
def _backfill_nodes(sched, core, alloc, now, head):
    """EASY's backfill scan behind any other blocked ``head``, with the node-feasible
    reservation (module docstring)."""
    jobs = core.jobs
    shadow = _shadow_nodes(sched, core, head, now)
    horizon = shadow - now
    counting = counts_attempts(alloc)
    r = sched.rank[head]  # the scan's arrival rank
    while True:
        nxt = _tree_next(sched.tree, core.scal, r + 1, -1, 0, horizon)
        if counting:
            _fail_skipped(sched, core, alloc, r + 1, nxt if nxt >= 0 else sched.scal[E_SEEN])
        r = nxt
        if r < 0:
            break
        c = sched.by_rank[r]
        if jobs[c, J_STATE] != JobState.QUEUED:
            continue
        used = _admit_nodes(sched, core, alloc, now, head, c, horizon)
        if used >= 0:
            _start_backfilled(sched, core, alloc, now, c, used)
            if core.scal[C_MAINT] != 0:
                unmask_maintenance(core, alloc, c)
    _remember(sched.scal, core, head, shadow, 0)


@inline_kernel
def _pass(sched, core, pred, alloc, now):
    head = _start_in_order(core, alloc, now)
    if head >= 0:
        kind = np.int64(pool_type(core.jobs, head))  # not a literal: one compiled version
        if kind >= 0 and core.scal[C_MAINT] == 0:  # windows hide nodes per job: test fits on nodes
            _backfill_pool(sched, core, alloc, now, head, kind)
        else:
            _backfill_nodes(sched, core, alloc, now, head)


@inline_kernel
def _pass_pool(sched, core, pred, alloc, now):
    head = _start_in_order(core, alloc, now)
    if head >= 0:
        _backfill_pool(sched, core, alloc, now, head, np.int64(pool_type(core.jobs, head)))


for _cls, _one_pass in ((Easy, _pass), (EasyPool, _pass_pool)):
    implements(schedule, _cls)(_one_pass)
    implements(sched_started_outside, _cls)(_started_outside)
    implements(sched_enqueued, _cls)(_enqueued)
del _cls, _one_pass


# --------------------------------------------------------------------------- EASY-SJBF (shortest job backfilled first)


@inline_kernel
def _sjbf_enqueued(sched, core, j):
    """Insert job ``j`` (just queued, its prediction set) into sched.order after every row
    of equal or smaller prediction: jobs join in index order, so equal predictions stay
    in queue order."""
    order = sched.order
    rows = sched.scal[E_ROWS]
    p = core.jobs[j, J_PRED]
    lo, hi = 0, rows
    while lo < hi:
        mid = (lo + hi) >> 1
        if order[mid, 0] <= p:
            lo = mid + 1
        else:
            hi = mid
    for r in range(rows, lo, -1):
        order[r, 0] = order[r - 1, 0]
        order[r, 1] = order[r - 1, 1]
    order[lo, 0] = p
    order[lo, 1] = j
    sched.scal[E_ROWS] = rows + 1


@inline_kernel
def _start_sjbf(core, alloc, now, c, used):
    """Start backfilled candidate ``c`` on the placement ``choose`` made (``used`` nodes)."""
    attempt_succeeded(alloc, core.jobs, c)
    commit(core, alloc, c, now, used)


@inline_kernel
def _next_candidate(sched, core, r, kept, head):
    """Row ``r`` of sched.order: its job when it is a queued job other than ``head`` (-1
    otherwise), after moving the row down to row ``kept`` when its job is still queued
    (rows of jobs that started since are dropped); returns (job or -1, new kept)."""
    order = sched.order
    c = order[r, 1]
    if core.jobs[c, J_STATE] != JobState.QUEUED:
        return -1, kept
    order[kept, 0] = order[r, 0]
    order[kept, 1] = c
    return (-1 if c == head else c), kept + 1


@internal_kernel
def _backfill_sjbf_pool(sched, core, alloc, now, head, kind):
    """EASY-SJBF's backfill behind a blocked ``head`` made of single units of resource
    ``kind`` (the ``extra`` rule), candidates in sched.order's order."""
    shadow, extra = _shadow_pool(core, head, now, kind)
    horizon = shadow - now
    kept = 0
    for r in range(sched.scal[E_ROWS]):
        c, kept = _next_candidate(sched, core, r, kept, head)
        if c < 0:
            continue
        left = _admit_pool(core, alloc, c, kind, horizon, extra)
        if left >= 0:
            extra = left
            _start_sjbf(core, alloc, now, c, choose(alloc, core, c))
            kept -= 1  # it runs: its row goes
    sched.scal[E_ROWS] = kept


@internal_kernel
def _backfill_sjbf_nodes(sched, core, alloc, now, head):
    """EASY-SJBF's backfill behind any other blocked ``head`` (the node-feasible rule),
    candidates in sched.order's order."""
    horizon = _shadow_nodes(sched, core, head, now) - now
    kept = 0
    for r in range(sched.scal[E_ROWS]):
        c, kept = _next_candidate(sched, core, r, kept, head)
        if c < 0:
            continue
        used = _admit_nodes(sched, core, alloc, now, head, c, horizon)
        if used >= 0:
            _start_sjbf(core, alloc, now, c, used)
            if core.scal[C_MAINT] != 0:
                unmask_maintenance(core, alloc, c)
            kept -= 1
    sched.scal[E_ROWS] = kept


@inline_kernel
def _pass_sjbf(sched, core, pred, alloc, now):
    head = _start_in_order(core, alloc, now)
    if head >= 0:
        kind = np.int64(pool_type(core.jobs, head))  # not a literal: one compiled version
        if kind >= 0 and core.scal[C_MAINT] == 0:  # windows hide nodes per job: test fits on nodes
            _backfill_sjbf_pool(sched, core, alloc, now, head, kind)
        else:
            _backfill_sjbf_nodes(sched, core, alloc, now, head)


implements(schedule, EasySjbf)(_pass_sjbf)
implements(sched_enqueued, EasySjbf)(_sjbf_enqueued)
