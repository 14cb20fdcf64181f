"""A stable argsort that allocates nothing (kernels run without numba's runtime)."""

from __future__ import annotations

from .._jit import kernel


@kernel
def _argsort_stable(key, order, tmp):
    """Stable argsort of ``key`` (float64 (n,)) into ``order`` (int64 (n,)), a bottom-up
    merge sort using ``tmp`` (int64 (n,)) so that nothing is allocated."""
    n = key.shape[0]
    for i in range(n):
        order[i] = i
    width = 1
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
