"""The site policies on conservative's plan (:mod:`schedbench.plan.site`): each
consumer's usage vectors (items limits), the earliest instant a job's constraints
(limits, FreePools, and on a pool the maintenance windows) all hold, and the scheduler's
view of the site's arrays."""

from __future__ import annotations

import numpy as np

from ..._jit import inline_kernel, internal_kernel
from ...core.api import first_window_after
from ...core.layout import J_REQ, J_UNITS
from ...plan.rusv import INF, kernel_add, kernel_earliest_fit_valid
from .state import S_WINDOW_GAP, S_WINDOWS, SitePlan, _d, _vectors


@inline_kernel
def _consumer_add(site, j, k, lo, end, amount):
    """Add ``amount`` items of type k over [lo, end) to the usage vectors of job j's
    consumers that have an items limit on type k."""
    for r in range(site.jvptr[j], site.jvptr[j + 1]):
        if site.jvrow[r, 1] == k:
            v = site.jvrow[r, 0]
            kernel_add(site.lslots[v], site.lmeta[v], lo, end, amount)


@inline_kernel
def _constraints_fit(sched, jobs, j, t, limit):
    """Earliest t' >= t at which job j's site constraints (limits, FreePools; on a pool,
    the maintenance windows, which are then on every node alike) all hold over [t', t'
    + d), or -1 when none before ``limit`` (each constraint gives its own earliest
    instant; iterate to the first all agree on).  Inlined where a fit is searched,
    which it is in several places, for the common answer (no constraints); the search
    over the constraints' vectors is one kernel, compiled once.  (On nodes the node fit
    reads each node's windows itself.)"""
    if _unconstrained(sched.site, j) and sched.scal[S_WINDOWS] == 0:
        return t
    return _constrained_fit(sched, jobs, j, t, limit)


@inline_kernel
def _clear_of_windows(sched, t, d, limit):
    """The first t' >= t at which [t', t' + d) meets no maintenance window (a pool's:
    every node has the same ones, so node 0's are all of them), or an instant >= limit
    when there is none before it.  From the first window's start on, a booking longer
    than every gap between two windows meets one wherever it starts before the last one
    ends: it goes straight past them, rather than walking every window to the end of the
    expanded ones at each try (weekly windows are expanded from before any submission)."""
    site = sched.site
    if d > sched.scal[S_WINDOW_GAP] and t >= site.mwin[site.mspan[0, 0], 0]:
        return max(t, site.mwin[site.mspan[0, 1] - 1, 1])
    while t < limit:
        down, until = _down_until(site.mspan, site.mwin, 0, t, d)
        if not down:
            return t
        t = until  # the end of the window it meets
    return t


@inline_kernel
def _down_until(mspan, mwin, node, t, d):
    """(down, until): whether a maintenance window of ``node`` meets [t, t + d) (as
    :func:`window_meets`), and an instant > t before which that answer is the same for
    every window [t', t' + d), t' >= t."""
    lo = first_window_after(mspan, mwin, node, t)
    if lo >= mspan[node, 1]:
        return False, INF
    if mwin[lo, 0] < t + d:
        return True, mwin[lo, 1]  # it meets every window that starts before its end
    return False, mwin[lo, 0] - d + 1


@inline_kernel
def _unconstrained(site, j):
    """Whether job j has no site constraint (limits, FreePools) to honour."""
    return site.cptr[j] == site.cptr[j + 1]


@internal_kernel
def _constrained_fit(sched, jobs, j, t, limit):
    """:func:`_constraints_fit` for a job with constraints."""
    site = sched.site
    c0 = site.cptr[j]
    c1 = site.cptr[j + 1]
    d = _d(jobs, j)
    windows = sched.scal[S_WINDOWS] != 0
    while True:
        moved = False
        if windows:
            t2 = _clear_of_windows(sched, t, d, limit)
            if t2 >= limit:
                return -1
            t = t2  # the constraints below start here; a move of theirs loops back
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
