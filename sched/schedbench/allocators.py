"""Allocators: which nodes a starting job gets (``../shared/spec/replay-semantics.md``,
"Heterogeneous machines"; Netti et al. §3–4.1).

An allocation visits nodes in the allocator's order and gives each node as many of the
job's remaining units as it can host (``min`` over requested types of ``free // per-unit
request``) until none remain; when the nodes run out first nothing is allocated
(all-requested-computers-available).  A job with ``req_nodes > 0`` is instead placed on the
first ``req_nodes`` nodes, in the allocator's order, that can each host ``units /
req_nodes`` units.

Allocators are jitted and selected by an :class:`Allocator` code; :data:`ALLOCATORS` maps
CLI names to codes.  All of them agree on *whether* a job fits (that depends on the free
resources only, never on the order); they differ in *which* nodes it gets.
"""

from __future__ import annotations

import enum

import numpy as np

from ._jit import kernel
from .layout import N_RES

N_COMPUTE = 3  # resource columns that count as computing resources (not memory)
_BIG = np.iinfo(np.int64).max


class Allocator(enum.IntEnum):
    FIRST_FIT = 0
    BEST_FIT = 1


ALLOCATORS: dict[str, Allocator] = {
    "ff": Allocator.FIRST_FIT,
    "bf": Allocator.BEST_FIT,
}


@kernel
def _host(free, node, req):
    """Units node ``node`` can host: ``min`` over requested types of ``free[node, k] //
    req[k]``.  free: int64 (n_nodes, 4); req: int64 (4,), the per-unit request."""
    best = _BIG
    for k in range(N_RES):
        r = req[k]
        if r > 0:
            h = free[node, k] if r == 1 else free[node, k] // r
            if h < best:
                best = h
    return best


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


@kernel
def _order(code, free, cap, order, key, tmp):
    """Fill ``order`` (int64 (n_nodes,)) with the node visiting order of allocator ``code``
    on the free resources ``free`` of nodes of capacity ``cap`` (int64 (n_nodes, 4));
    ``key`` (float64 (n_nodes,)) and ``tmp`` (int64 (n_nodes,)) are scratch."""
    n = free.shape[0]
    if code == Allocator.BEST_FIT:
        # Non-decreasing free computing resources (cores + GPUs + MICs), ties by index.
        for i in range(n):
            key[i] = free[i, 0] + free[i, 1] + free[i, 2]
        _argsort_stable(key, order, tmp)
    else:
        for i in range(n):
            order[i] = i


@kernel
def _place(free, order, first, units, req, req_nodes, out_node, out_count):
    """Place ``units`` units of shape ``req`` visiting nodes in ``order`` from position
    ``first`` (the caller knows that earlier positions host nothing).

    free: int64 (n_nodes, 4), not modified; order: int64 (n_nodes,); req: int64 (4,);
    req_nodes: <= 0 for a free spread, else the exact node count; out_node, out_count:
    int64 buffers of at least min(units, n_nodes) entries that receive the chosen nodes and
    the units each hosts.  Returns the number of nodes used, or -1 when the job does not fit.
    """
    n = free.shape[0]
    used = 0
    if req_nodes > 0:
        per = units // req_nodes
        for p in range(first, n):
            i = order[p]
            if _host(free, i, req) >= per:
                out_node[used] = i
                out_count[used] = per
                used += 1
                if used == req_nodes:
                    return used
        return -1
    remaining = units
    for p in range(first, n):
        i = order[p]
        h = _host(free, i, req)
        if h > 0:
            take = h if h < remaining else remaining
            out_node[used] = i
            out_count[used] = take
            used += 1
            remaining -= take
            if remaining == 0:
                return used
    return -1


@kernel
def _totals_decide(units, req, req_nodes, free_total):
    """Fit test from the machine totals alone.

    Returns 0 when the totals prove the job cannot fit, 1 when they prove it fits (a free
    spread of units that each ask exactly one unit of a single resource type: every free
    unit of that type is usable), and -1 when only a node scan can tell.
    free_total: int64 (4,), the free amount of each type summed over nodes.
    """
    kinds = 0
    single_one = True
    for k in range(N_RES):
        r = req[k]
        if r > 0:
            kinds += 1
            if free_total[k] < units * r:
                return 0
            if r != 1:
                single_one = False
    if kinds == 1 and single_one and req_nodes <= 0:
        return 1
    return -1


@kernel
def _fits(free, free_total, units, req, req_nodes, ident, out_node, out_count):
    """Whether the job fits on ``free`` now (order-independent, so nodes are visited in
    index order ``ident``); scans nodes only when the totals cannot decide.  Buffers as
    in :func:`_place`."""
    d = _totals_decide(units, req, req_nodes, free_total)
    if d >= 0:
        return d == 1
    return _place(free, ident, 0, units, req, req_nodes, out_node, out_count) >= 0
