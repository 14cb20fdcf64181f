"""Compression's pruning: a job can start earlier only if at some instant before its
booking at least its size is free, so the largest free amount before each booking is
read from a prefix maximum of the plan (``sched.pmf``), built only as far as the bookings
asked about reach, and cut back only to the instant where a job's booking changed.
On nodes the same holds per node: a node hosts at most what its most free amount before
the booking hosts, read from a prefix minimum of its used vector (``sched.npmf``),
rebuilt only after a booking on that node changed."""

from __future__ import annotations

import numpy as np

from ..._jit import inline_kernel, internal_kernel
from ...plan.rusv import INF, M_AVL, M_N, S_ITEMS, S_START, S_STOP, kernel_first_stop_after
from .state import S_PMF_N, S_PMF_TYPE


@internal_kernel
def _extend_pmf(slots, meta, pmf, scal, now, t):
    """Extend the prefix maxima until they reach t or the plan's last row: pmf[0, i],
    pmf[1, i] (i < scal[S_PMF_N]) hold a plan row's stop and the most items free at any
    instant of [now, that stop) (gaps count as all free).  Rows are added from the plan
    row reaching past the last one's stop, so rows kept across a change of the plan after
    their stops (:func:`_cut_pmf`) stay right however the plan is cut into rows."""
    m = scal[S_PMF_N]
    n = meta[M_N]
    avl = meta[M_AVL]
    best = pmf[1, m - 1] if m > 0 else -1
    covered = pmf[0, m - 1] if m > 0 else now
    i = kernel_first_stop_after(slots, n, covered)
    while i < n and covered < t:
        if slots[i, S_START] > covered:
            best = avl
        free = avl - slots[i, S_ITEMS]
        if free > best:
            best = free
        covered = slots[i, S_STOP]
        pmf[0, m] = covered
        pmf[1, m] = best
        m += 1
        i += 1
    scal[S_PMF_N] = m


@inline_kernel
def _cut_pmf(pmf, scal, t):
    """The plan changed at instants >= t only: keep the prefix maxima whose stops are at
    or before t (they read nothing later), drop the rest."""
    m = scal[S_PMF_N]
    if m > 0 and pmf[0, m - 1] > t:
        lo, hi = 0, m
        while lo < hi:  # first row whose stop is > t
            mid = (lo + hi) >> 1
            if pmf[0, mid] <= t:
                lo = mid + 1
            else:
                hi = mid
        scal[S_PMF_N] = lo


@inline_kernel
def _most_free_before(slots, meta, pmf, scal, now, t):
    """The most items free at any instant of [now, t) (t > now), from the prefix maxima,
    extended first when they stop short of t."""
    m = scal[S_PMF_N]
    if m == 0 or pmf[0, m - 1] < t:
        _extend_pmf(slots, meta, pmf, scal, now, t)
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
def _short_until(pmf, scal, now, size):
    """An instant before which fewer than ``size`` items are free at every instant from
    now (the stop of the last prefix-maximum row below size; now when none): no window
    starting before it takes a job of that size."""
    lo, hi = 0, scal[S_PMF_N]
    while lo < hi:  # first row whose maximum reaches size (the maxima never fall)
        mid = (lo + hi) >> 1
        if pmf[1, mid] < size:
            lo = mid + 1
        else:
            hi = mid
    return pmf[0, lo - 1] if lo > 0 else now


@inline_kernel
def _free_start(sched, k, size, now, limit):
    """Where a search for ``size`` items of type k before ``limit`` (> now) may begin,
    from the prefix maxima in sched.pmf (begun again when they were for another type):
    -1 when no instant of [now, limit) has that many free, else the instant before which
    none has (:func:`_short_until`).  Extends sched.pmf as needed."""
    sc = sched.scal
    if sc[S_PMF_TYPE] != k:
        sc[S_PMF_N] = 0
        sc[S_PMF_TYPE] = k
    if _most_free_before(sched.slots[k], sched.meta[k], sched.pmf, sc, now, limit) < size:
        return np.int64(-1)
    return _short_until(sched.pmf, sc, now, size)


@internal_kernel
def _build_npmf(slots, meta, out, now, cap):
    """out[i, 0], out[i, 1]: the stop of row i of a used vector (from the first row ending
    after now) and the least amount used at any instant of [now, that stop) (gaps hold
    0); out[0, 2]: the instant until which the vector is at ``cap`` (its capacity) from
    now on (now when it is not at now), so that a node full before a booking is known
    without a search; returns the rows written."""
    n = meta[M_N]
    least = INF
    covered = now
    full_until = now
    m = 0
    for i in range(kernel_first_stop_after(slots, n, now), n):
        if slots[i, S_START] > covered:
            least = 0
        least = min(least, slots[i, S_ITEMS])
        covered = slots[i, S_STOP]
        if least >= cap:
            full_until = covered
        out[m, 0] = covered
        out[m, 1] = least
        m += 1
    out[0, 2] = full_until
    return m


@inline_kernel
def _least_used_before(slots, meta, npmf, m, now, t):
    """The least amount a used vector holds at any instant of [now, t) (t > now), from its
    m prefix-minimum rows.  Reads the vector itself only at the instant the rows stop
    short of t: the rows stay right while the vector holds the same amounts, however it
    is cut into rows."""
    lo, hi = 0, m
    while lo < hi:  # first row whose stop is >= t
        mid = (lo + hi) >> 1
        if npmf[mid, 0] < t:
            lo = mid + 1
        else:
            hi = mid
    least = npmf[lo - 1, 1] if lo > 0 else INF
    covered = npmf[lo - 1, 0] if lo > 0 else now
    if covered < t:
        # [covered, t) lies in one row or one gap: its amount at covered
        n = meta[M_N]
        i = kernel_first_stop_after(slots, n, covered)
        if i >= n or slots[i, S_START] > covered:
            return np.int64(0)
        least = min(least, slots[i, S_ITEMS])
    return least
