"""Sorts that allocate nothing (kernels run without numba's runtime): a stable argsort
and an in-place sort of int64 values."""

from __future__ import annotations

from .._jit import inline_kernel, internal_kernel, kernel

# Runs this short are insertion-sorted before the merges: a node order (tens of nodes)
# is then one or two merge passes instead of six, and runs of nodes with equal keys,
# common in a plan, cost one comparison a node
RUN = 16


@kernel
def _argsort_stable(key, order, tmp):
    """Stable argsort of ``key`` (float64 (n,)) into ``order`` (int64 (n,)): runs of RUN
    insertion-sorted, then a bottom-up merge sort using ``tmp`` (int64 (n,)), so that
    nothing is allocated."""
    n = key.shape[0]
    for lo in range(0, n, RUN):
        hi = min(lo + RUN, n)
        for i in range(lo, hi):
            k = key[i]
            q = i
            while q > lo and key[order[q - 1]] > k:
                order[q] = order[q - 1]
                q -= 1
            order[q] = i
    width = RUN
    in_tmp = False  # whether the latest pass wrote into tmp
    while width < n:
        src = tmp if in_tmp else order
        dst = order if in_tmp else tmp
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            a, b, w = lo, mid, lo
            while a < mid and b < hi:
                if key[src[b]] < key[src[a]]:
                    dst[w] = src[b]
                    b += 1
                else:
                    dst[w] = src[a]
                    a += 1
                w += 1
            while a < mid:
                dst[w] = src[a]
                a += 1
                w += 1
            while b < hi:
                dst[w] = src[b]
                b += 1
                w += 1
            lo = hi
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        for i in range(n):
            order[i] = tmp[i]


@internal_kernel
def _heapsort(a, m):
    """Sort a[:m] (int64 (>= m,)) in place, ascending, in O(m log m) without allocating
    (numba's sort needs its runtime); not stable, which equal integers do not need."""
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
