"""Compression's pruning: a job can start earlier only if at some instant before its
booking at least its size is free, so the largest free amount before each booking is
read from a prefix maximum of the plan (``sched.pmf``), built only as far as the bookings
asked about reach, and cut back only to the instant where a job's booking changed.
On nodes the same holds per node: a node hosts at most what its most free amount before
the booking hosts, read from a prefix minimum of its used vector (``sched.npmf``),
rebuilt only after a booking on that node changed; and nothing when none of its free runs
begun before the booking lasts the job's length (on one-core nodes nearly every node is
free at some instant before a booking, but seldom for long: HPC2N)."""

from __future__ import annotations

import numpy as np

from ..._jit import inline_kernel, internal_kernel
from ...plan.rusv import (
    INF,
    M_AVL,
    M_N,
    S_ITEMS,
    S_START,
    S_STOP,
    kernel_first_stop_after,
    kernel_value_at,
)
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
def _first_row_reaching_size(pmf, m, size):
    """The first of the m prefix-maximum rows whose maximum is at least ``size`` (m when
    none; the maxima never fall)."""
    lo, hi = 0, m
    while lo < hi:
        mid = (lo + hi) >> 1
        if pmf[1, mid] < size:
            lo = mid + 1
        else:
            hi = mid
    return lo


@inline_kernel
def _free_start(sched, k, size, now, limit):
    """Where a search for ``size`` items of type k before ``limit`` (> now) may begin,
    from the prefix maxima in sched.pmf (begun again when they were for another type):
    -1 when no instant of [now, limit) has that many free, else the instant before which
    none has.  Extends sched.pmf as needed.

    One search: the first prefix-maximum row reaching ``size`` starts at that instant
    (no instant before it has that much free) and holds an instant that has.  When the
    row reaches past ``limit``, that instant is its start (a row is a gap, all free, then
    a plan row, or only a plan row), so the amount there decides; so it does when the
    rows end before ``limit`` (the plan does: all free after it)."""
    sc = sched.scal
    if sc[S_PMF_TYPE] != k:
        sc[S_PMF_N] = 0
        sc[S_PMF_TYPE] = k
    slots = sched.slots[k]
    meta = sched.meta[k]
    pmf = sched.pmf
    m = sc[S_PMF_N]
    if m == 0 or pmf[0, m - 1] < limit:
        _extend_pmf(slots, meta, pmf, sc, now, limit)
        m = sc[S_PMF_N]
    lo = _first_row_reaching_size(pmf, m, size)
    t0 = pmf[0, lo - 1] if lo > 0 else now
    if t0 >= limit:
        return np.int64(-1)
    if lo < m and pmf[0, lo] <= limit:
        return t0
    # the row reaches past limit, or the rows end (the plan does, before limit): the
    # amount free at t0
    return t0 if meta[M_AVL] - kernel_value_at(slots, meta, t0) >= size else np.int64(-1)


@internal_kernel
def _build_npmf(slots, meta, out, now, cap):
    """A node vector's prefix rows for compression, from its first row ending after now:
    out[i, 0] the stop of row i, out[i, 1] the least amount used at any instant of [now,
    that stop) (gaps hold 0), out[i, 2] (i >= 1) the longest *free run* begun before that
    stop; returns the rows written.  A free run is a maximal stretch of instants at which
    the vector is below ``cap`` (its capacity: some unit free), its length counted from
    now if it began earlier; the run after the last row, and one still open there, last
    for ever (INF).  Row 0's column 2 holds two answers in one (:func:`_full_until`,
    :func:`_longest_run_before`): the vector is at cap from now until now + x when it is
    x > 0; when it is -x <= 0 it is not at cap at now, and its run from now lasts x.

    Runs begin at now or at the stop of a row at cap (each row's prefix maximum is
    known only once the runs begun before its stop have ended: the rows of a run are
    filled in when it ends)."""
    n = meta[M_N]
    least = INF
    covered = now
    full_until = now
    begun = np.int64(-1)  # the open run's start (-1: none open, the vector at cap)
    first = 0  # the first row whose stop is after the open run's start
    longest = np.int64(0)  # the longest run ended so far
    m = 0
    for i in range(kernel_first_stop_after(slots, n, now), n):
        start = slots[i, S_START]
        items = slots[i, S_ITEMS]
        if start > covered:
            least = 0
            if begun < 0:
                begun, first = covered, m  # the gap opens a run
        least = min(least, items)
        if items >= cap:
            if begun >= 0:  # this row ends the open run: the rows since its start hold it
                longest = max(longest, start - begun)
                out[first:m, 2] = longest
                begun = -1
        elif begun < 0:
            begun, first = max(start, now), m
        covered = slots[i, S_STOP]
        if least >= cap:
            full_until = covered
        out[m, 0] = covered
        out[m, 1] = least
        out[m, 2] = longest
        m += 1
    if begun >= 0:
        out[first:m, 2] = INF
    if m == 0:
        out[0, 2] = 0  # not at cap at now; its run lasts for ever (no row reaches any t)
    else:
        out[0, 2] = full_until - now if full_until > now else -out[0, 2]
    return m


@inline_kernel
def _full_until(npmf, now):
    """The instant until which a node vector is at capacity from now on (now when it is
    not at now), from its prefix rows (:func:`_build_npmf`, m > 0), or now when none."""
    return now + max(npmf[0, 2], 0)


@inline_kernel
def _first_row_reaching(npmf, m, t):
    """The first of a node vector's m prefix rows whose stop is >= t (m when none)."""
    lo, hi = 0, m
    while lo < hi:
        mid = (lo + hi) >> 1
        if npmf[mid, 0] < t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@inline_kernel
def _longest_run_before(npmf, m, lo):
    """The longest free run of a node vector begun before t (:func:`_build_npmf`, its m
    prefix rows), lo the first row reaching t (:func:`_first_row_reaching`): a run begins
    at now or at a row's stop, so those begun before t are those begun before row lo's
    stop; INF when no row reaches t (the run after the last row begins before t)."""
    if lo >= m:
        return INF
    if lo == 0:
        return max(-npmf[0, 2], 0)
    return npmf[lo, 2]


@inline_kernel
def _least_used_before(slots, meta, npmf, lo, now, t):
    """The least amount a used vector holds at any instant of [now, t) (t > now), from its
    prefix-minimum rows, lo the first reaching t (:func:`_first_row_reaching`).  Reads the
    vector itself only at the instant the rows stop short of t: the rows stay right while
    the vector holds the same amounts, however it is cut into rows."""
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


@inline_kernel
def _below_cap_at(slots, meta, t, cap):
    """Whether a used vector holds less than ``cap`` at instant t."""
    n = meta[M_N]
    i = kernel_first_stop_after(slots, n, t)
    return i >= n or slots[i, S_START] > t or slots[i, S_ITEMS] < cap
