"""Compression's pruning: a job can start earlier only if at some instant before its
booking at least its size is free, so the largest free amount before each booking is
read from a prefix maximum of the plan (``sched.pmf``), rebuilt only after a job moved."""

from __future__ import annotations

from ..._jit import inline_kernel, internal_kernel
from ...plan.rusv import M_AVL, M_N, S_ITEMS, S_START, S_STOP, kernel_first_stop_after
from .state import S_PMF_N, S_PMF_OK


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
