"""The per-node plan of ``priority`` and ``sfs``, for any workload (the package
docstring, "On nodes").

The pass's plan is never written out as a whole: the free resources of every node at any
instant ``s >= now`` are those of now, plus the allocations of the running jobs predicted
to end by ``s`` (predicted end max(start + pred, now), as EASY's shadow), minus the
placements of the reservations active at ``s``.  The first part only grows with ``s``,
and a reservation's placement only leaves at its end, so over any window the least free
amount of each node and type is reached at the window's start or at the start of a
reservation inside it: a reservation's test looks at those instants only.  To read the
running jobs' part at a reservation's start without walking them again, each reservation
keeps it (``hold_base``), and every job started after it is taken out of it when predicted
to run past that start.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._jit import inline_kernel, internal_kernel
from ...core.api import (
    C_MAINT,
    C_QH,
    C_QN,
    C_RN,
    W_COUNT,
    W_IDENT,
    W_NODE,
    attempt_failed,
    attempt_succeeded,
    choose,
    commit,
    fits_now,
    implements,
    mask_maintenance,
    place,
    sched_released,
    sched_started_outside,
    schedule,
    unmask_maintenance,
)
from ...core.layout import (
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
)
from ...plan.rusv import INF
from .common import (
    P_BACKFILL,
    P_DEPTH,
    P_SFS,
    P_STANDING,
    _fits_at,
    _local_pass,
    _not_offered,
    _offer,
    _prepare_pass,
    _released_body,
    _started_outside_body,
    _totals_admit,
)


class FairShareNodes(NamedTuple):
    """The common fields (:mod:`.common`), then the pass's reservations (at most D =
    depth; reservation i of the pass is row i): hold_t int64 (D, 2): its window [t, t +
    max(pred, 1)); hold_job int64 (D,): its job; hold_used int64 (2, D), hold_node and
    hold_count int64 (2, D, m): its placement, nodes and the units each hosts (row 0 the
    plan's, row 1 a trial while a backfill candidate is tested); hold_base int64 (D, m,
    N_RES): free amounts at t left by the running jobs alone.  Scratch: cur, win, tmp
    int64 (m, N_RES); wtot int64 (N_RES,): the totals of win."""

    acct: np.ndarray
    size: np.ndarray
    target: np.ndarray
    occ: np.ndarray
    usage: np.ndarray
    shares: np.ndarray
    factor: np.ndarray
    w: np.ndarray
    par: np.ndarray
    qkey: np.ndarray
    hold_t: np.ndarray
    hold_job: np.ndarray
    hold_used: np.ndarray
    hold_node: np.ndarray
    hold_count: np.ndarray
    hold_base: np.ndarray
    cur: np.ndarray
    win: np.ndarray
    tmp: np.ndarray
    wtot: np.ndarray


# --------------------------------------------------------------------------- free amounts


@inline_kernel
def _add_rows(arr, jobs, j, nodes, counts, first, n, sign):
    """arr[nodes[u]] += sign * counts[u] * job j's per-unit request, u in [first, first +
    n): add (sign 1) or take away (sign -1) a placement of job j.  arr int64 (m, N_RES)."""
    for u in range(first, first + n):
        i = nodes[u]
        c = sign * np.int64(counts[u])
        for k in range(N_RES):
            arr[i, k] += c * jobs[j, J_REQ + k]


@inline_kernel
def _copy(dst, src):
    for i in range(dst.shape[0]):
        for k in range(N_RES):
            dst[i, k] = src[i, k]


@inline_kernel
def _min_into(dst, src):
    for i in range(dst.shape[0]):
        for k in range(N_RES):
            if src[i, k] < dst[i, k]:
                dst[i, k] = src[i, k]


@inline_kernel
def _take_holds(sched, jobs, nh, s, row, skip, arr):
    """Take away from arr the placements (row ``row``) of the reservations active at s,
    but reservation ``skip``."""
    for g in range(nh):
        if g != skip and sched.hold_t[g, 0] <= s and s < sched.hold_t[g, 1]:
            _add_rows(arr, jobs, sched.hold_job[g], sched.hold_node[row, g], sched.hold_count[row, g], 0,
                      sched.hold_used[row, g], -1)


@inline_kernel
def _clamp_totals(win, wtot):
    """No node offers less than nothing (an overdrawn amount hosts no unit of a type it
    is asked for, as 0 does), so that the totals bound the fit; wtot = the column sums."""
    for k in range(N_RES):
        wtot[k] = 0
    for i in range(win.shape[0]):
        for k in range(N_RES):
            if win[i, k] < 0:
                win[i, k] = 0
            wtot[k] += win[i, k]


@inline_kernel
def _totals_allow(jobs, j, wtot):
    for k in range(N_RES):
        if jobs[j, J_UNITS] * jobs[j, J_REQ + k] > wtot[k]:
            return False
    return True


@inline_kernel
def _place_on_win(sched, core, j, row, i):
    """Place job j on sched.win (node index order, its eligible nodes) into reservation
    i's placement of row ``row``; returns the nodes used, -1 when it does not fit."""
    jobs = core.jobs
    if not _totals_allow(jobs, j, sched.wtot):
        return -1
    return place(sched.win, core.work[W_IDENT], np.int64(0), jobs[j, J_UNITS], jobs[j, J_REQ : J_REQ + N_RES],
                 jobs[j, J_REQ_NODES], sched.hold_node[row, i], sched.hold_count[row, i], core.elig[jobs[j, J_CLASS]])


# --------------------------------------------------------------------------- reservations


@internal_kernel
def _reserve(sched, core, j, now, nh):
    """Give job j reservation nh: the earliest instant t >= now at which its allocation
    succeeds, on its eligible nodes in node index order, on the least free amounts over
    [t, t + max(pred, 1)) left by the running jobs and reservations 0..nh-1.  The
    candidates are now, the running jobs' predicted ends and the reservations' ends (the
    least free amounts over a window starting at t only grow between two of them).
    Returns whether one was found (always, unless the job cannot fit an empty machine)."""
    jobs = core.jobs
    run_list = core.run_list
    rn = core.scal[C_RN]
    log = core.log
    cur = sched.cur
    win = sched.win
    tmp = sched.tmp
    _copy(cur, core.free)
    d = max(jobs[j, J_PRED], 1)
    r = 0
    t = now
    while True:
        while r < rn and max(run_list[r, 0], now) <= t:
            q = run_list[r, 1]
            _add_rows(cur, jobs, q, log[:, 0], log[:, 1], jobs[q, J_PTR], jobs[q, J_NODES], 1)
            r += 1
        _copy(win, cur)
        _take_holds(sched, jobs, nh, t, 0, -1, win)
        for h in range(nh):
            s = sched.hold_t[h, 0]
            if t < s and s < t + d:
                _copy(tmp, sched.hold_base[h])
                _take_holds(sched, jobs, nh, s, 0, -1, tmp)
                _min_into(win, tmp)
        _clamp_totals(win, sched.wtot)
        used = _place_on_win(sched, core, j, 0, nh)
        if used >= 0:
            sched.hold_t[nh, 0] = t
            sched.hold_t[nh, 1] = t + d
            sched.hold_job[nh] = j
            sched.hold_used[0, nh] = used
            _copy(sched.hold_base[nh], cur)
            return True
        nxt = INF
        if r < rn:
            nxt = max(run_list[r, 0], now)
        for h in range(nh):
            e = sched.hold_t[h, 1]
            if t < e and e < nxt:
                nxt = e
        if nxt == INF:
            return False
        t = nxt


@internal_kernel
def _hold_window(sched, jobs, nh, i, row, c, c_nodes, c_counts, c_used, c_end):
    """Into sched.win (and its totals): per node and type, the least free amount over
    reservation i's window left by the running jobs, the other reservations (placements
    of row ``row``) and candidate c's placement (c_used entries of c_nodes / c_counts)
    over [now, c_end).  Read at the reservations' starts inside the window, its own
    first (module docstring)."""
    t0 = sched.hold_t[i, 0]
    t1 = sched.hold_t[i, 1]
    win = sched.win
    tmp = sched.tmp
    first = True
    for h in range(nh):
        s = sched.hold_t[h, 0]
        if s < t0 or s >= t1:
            continue
        _copy(tmp, sched.hold_base[h])
        _take_holds(sched, jobs, nh, s, row, i, tmp)
        if s < c_end:
            _add_rows(tmp, jobs, c, c_nodes, c_counts, 0, c_used, -1)
        if first:
            _copy(win, tmp)
            first = False
        else:
            _min_into(win, tmp)
    _clamp_totals(win, sched.wtot)


@inline_kernel
def _held_fits(sched, jobs, row, i):
    """Whether reservation i's placement (row ``row``) fits on sched.win."""
    j = sched.hold_job[i]
    for u in range(sched.hold_used[row, i]):
        node = sched.hold_node[row, i, u]
        cnt = sched.hold_count[row, i, u]
        for k in range(N_RES):
            if cnt * jobs[j, J_REQ + k] > sched.win[node, k]:
                return False
    return True



@inline_kernel
def _copy_holds(sched, nh, src, dst):
    """Copy the placements of the first ``nh`` reservations from layer ``src`` of
    sched.hold_used / hold_node / hold_count to layer ``dst`` (0: kept, 1: trial)."""
    for h in range(nh):
        u = sched.hold_used[src, h]
        sched.hold_used[dst, h] = u
        for x in range(u):
            sched.hold_node[dst, h, x] = sched.hold_node[src, h, x]
            sched.hold_count[dst, h, x] = sched.hold_count[src, h, x]

@internal_kernel
def _holds_survive(sched, core, c, now, nh, c_nodes, c_counts, c_used):
    """Whether every reservation still fits with candidate c placed (c_used entries of
    c_nodes / c_counts) over its predicted run [now, now + pred): in reservation order,
    each keeps its placement when that still fits, else gets a new one on its window
    (node index order), the later ones seeing it.  When they all fit, the plan keeps the
    new placements."""
    jobs = core.jobs
    c_end = now + jobs[c, J_PRED]
    meets = False
    for h in range(nh):
        if sched.hold_t[h, 0] < c_end:  # windows start at now or later
            meets = True
    if not meets:
        return True
    _copy_holds(sched, nh, 0, 1)
    for i in range(nh):
        _hold_window(sched, jobs, nh, i, 1, c, c_nodes, c_counts, c_used, c_end)
        if _held_fits(sched, jobs, 1, i):
            continue
        used = _place_on_win(sched, core, sched.hold_job[i], 1, i)
        if used < 0:
            return False
        sched.hold_used[1, i] = used
    _copy_holds(sched, nh, 1, 0)
    return True


@internal_kernel
def _backfill_one(sched, core, alloc, c, now, nh):
    """Start candidate c now when it fits now and every reservation still fits with the
    placement the allocator chooses for it (:func:`_holds_survive`); returns whether it
    started.  Nodes in maintenance during its predicted run are hidden from it, as
    try_start does."""
    jobs = core.jobs
    work = core.work
    maint = core.scal[C_MAINT] != 0
    if maint:
        mask_maintenance(core, c, now)
    ok = fits_now(core, c)
    used = np.int64(-1)
    if ok:
        used = choose(alloc, core, c)
        ok = used >= 0 and _holds_survive(sched, core, c, now, nh, work[W_NODE], work[W_COUNT], used)
    if ok:
        attempt_succeeded(alloc, jobs, c)
        commit(core, alloc, c, now, used)
    else:
        attempt_failed(alloc, jobs, c)
    if maint:
        unmask_maintenance(core, alloc, c)
    return ok


@inline_kernel
def _started(sched, core, j, now, nh):
    """Job j started now: its account's occupancy holds it, and the running jobs' part of
    every reservation its predicted run reaches loses its placement."""
    jobs = core.jobs
    sched.occ[sched.acct[j]] += sched.size[j]
    end = now + jobs[j, J_PRED]
    log = core.log
    for h in range(nh):
        if sched.hold_t[h, 0] < end:
            _add_rows(sched.hold_base[h], jobs, j, log[:, 0], log[:, 1], jobs[j, J_PTR], jobs[j, J_NODES], -1)


@internal_kernel
def _standing_pass(sched, core, alloc, now):
    """sfs's pass 1 with standing reservations (package docstring): the first ``depth``
    jobs of the priority order that cannot start now get their reservations (as pass 2
    makes them); then pass 1's jobs start only when they fit now and every reservation
    still fits (pass 2's backfill test, which may move their placements)."""
    par = sched.par
    jobs = core.jobs
    queue = core.queue
    scal = core.scal
    qh = scal[C_QH]
    n = scal[C_QN]
    made = 0
    nh = 0
    for r in range(qh, qh + n):
        if made >= par[P_DEPTH]:
            break
        j = queue[r]
        if _fits_at(core, alloc, j, now):
            continue
        if _reserve(sched, core, j, now, nh):
            nh += 1
        made += 1
    for r in range(qh, qh + n):
        j = queue[r]
        a = sched.acct[j]
        if jobs[j, J_STATE] != JobState.QUEUED or sched.occ[a] > sched.target[a]:
            continue
        if not _totals_admit(jobs, j, scal):
            _not_offered(alloc, jobs, j)
            continue
        if nh > 0 and jobs[j, J_PRED] > 0:
            started = _backfill_one(sched, core, alloc, j, now, nh)
        else:
            started = _offer(core, alloc, j, now)
        if started:
            _started(sched, core, j, now, nh)


@implements(schedule, FairShareNodes)
@inline_kernel
def _pass(sched, core, pred, alloc, now):
    """schedule() for priority and sfs on any workload (package docstring)."""
    if not _prepare_pass(sched, core, alloc, now):
        return
    par = sched.par
    jobs = core.jobs
    queue = core.queue
    scal = core.scal
    qh = scal[C_QH]
    n = scal[C_QN]
    if par[P_SFS] != 0:
        if par[P_STANDING] != 0:
            _standing_pass(sched, core, alloc, now)
        else:
            _local_pass(sched, core, alloc, now)
    reserved = 0
    nh = 0  # reservations holding a placement (all of them but for a job no empty machine fits)
    for r in range(qh, qh + n):
        j = queue[r]
        if jobs[j, J_STATE] != JobState.QUEUED:
            continue
        fit = _totals_admit(jobs, j, scal)
        if not fit:
            _not_offered(alloc, jobs, j)
            if reserved >= par[P_DEPTH]:
                continue  # a backfill candidate that cannot fit now
        if nh > 0 and jobs[j, J_PRED] > 0:  # it must delay no reservation
            started = fit and _backfill_one(sched, core, alloc, j, now, nh)
        else:
            started = fit and _offer(core, alloc, j, now)
        if started:
            _started(sched, core, j, now, nh)
        elif par[P_BACKFILL] == 0:
            break  # strict priority: nothing passes the first job that cannot start
        elif reserved < par[P_DEPTH]:
            if _reserve(sched, core, j, now, nh):
                nh += 1
            reserved += 1


@implements(sched_released, FairShareNodes)
@inline_kernel
def _released(sched, core, j, now):
    _released_body(sched, core, j, now)


@implements(sched_started_outside, FairShareNodes)
@inline_kernel
def _started_outside(sched, core, j):
    _started_outside_body(sched, core, j)
