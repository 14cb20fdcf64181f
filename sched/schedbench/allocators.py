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
resources only, never on the order); they differ in *which* nodes it gets:

* **ff** (First-Fit): node index order.
* **bf** (Best-Fit): non-decreasing free computing resources (cores + GPUs + MICs; memory
  not counted), ties by index, recomputed before each allocation.
* **balanced** (Netti et al. §3): every node goes to the bin of the critical resource type
  it has the most of *free* (ties: lower type index), or to the null bin when it has none
  free; the null bin comes first (index order), then nodes are taken one at a time from
  the currently largest remaining bin (ties: lower type index; inside a bin, index order).
  Critical types default to GPUs and MICs.
* **weighted** (§3, Eq. 1): nodes in non-decreasing rank R_i = Σ_k w_k · imp_ik over the
  types node i has (capacity > 0), ties by index.  imp_ik is what remains free of type k
  on node i after it takes min(units it can host, the job's units) units of this job;
  w_k = mean_req_k · load_k / cap_k, where mean_req_k is the mean over queued jobs of
  their total request of k (units × per-unit amount) weighted by predicted duration,
  load_k = used_k / cap_k now, and cap_k the machine's capacity of k.  Nodes that cannot
  host a unit are ranked too but never used.
* **priority-weighted** (§3): weighted with w_k multiplied by p_k for critical types; p_k
  starts at 1, +1 whenever a job needing k is offered for allocation and does not fit,
  −1 when such a job is allocated, kept within [1, bound] (bound 10 by default).  An
  offer is a scheduler's attempt to start a job now (the head of FCFS/SJF/PRB, EASY's
  head and the backfill candidates that fit the totals).
"""

from __future__ import annotations

import enum

import numpy as np

from ._jit import inline_kernel, kernel
from .layout import N_RES, V_CAP, V_CRIT, V_FREE, V_PRIO, V_TMP, V_WPRED, V_WSUM

N_COMPUTE = 3  # resource columns that count as computing resources (not memory)
_BIG = np.iinfo(np.int64).max


class Allocator(enum.IntEnum):
    FIRST_FIT = 0
    BEST_FIT = 1
    BALANCED = 2
    WEIGHTED = 3
    PRIORITY_WEIGHTED = 4


ALLOCATORS: dict[str, Allocator] = {
    "ff": Allocator.FIRST_FIT,
    "bf": Allocator.BEST_FIT,
    "balanced": Allocator.BALANCED,
    "weighted": Allocator.WEIGHTED,
    "priority-weighted": Allocator.PRIORITY_WEIGHTED,
}
DEFAULT_CRITICAL: tuple[str, ...] = ("gpus", "mics")
DEFAULT_PRIORITY_BOUND = 10


@inline_kernel
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
def _balanced(free, scal, order, key, tmp):
    """Balanced order (module docstring) into ``order``; key (float64) and tmp (int64),
    both (n_nodes,), are scratch; scal[V_TMP:] holds the bins' cursors."""
    n = free.shape[0]
    for i in range(n):
        best = 0  # null bin
        most = 0
        for k in range(N_RES):
            if scal[V_CRIT + k] and free[i, k] > most:
                most = free[i, k]
                best = 1 + k
        key[i] = best
    _argsort_stable(key, order, tmp)  # nodes grouped by bin, index order inside
    # bin b occupies order[start_b : end_b]; cursors live in scal[V_TMP + b]
    for b in range(N_RES + 1):
        scal[V_TMP + b] = 0
        scal[V_TMP + 8 + b] = 0
    for p in range(n):
        b = int(key[order[p]])
        scal[V_TMP + 8 + b] += 1  # sizes
    start = 0
    for b in range(N_RES + 1):
        scal[V_TMP + b] = start  # cursor
        start += scal[V_TMP + 8 + b]
    for p in range(n):
        tmp[p] = order[p]
    w = 0
    while w < scal[V_TMP + 8]:  # the null bin first
        order[w] = tmp[scal[V_TMP] + w]
        w += 1
    scal[V_TMP + 8] = 0
    while w < n:
        pick = -1
        for b in range(1, N_RES + 1):
            if scal[V_TMP + 8 + b] > 0 and (pick < 0 or scal[V_TMP + 8 + b] > scal[V_TMP + 8 + pick]):
                pick = b
        order[w] = tmp[scal[V_TMP + pick]]
        scal[V_TMP + pick] += 1
        scal[V_TMP + 8 + pick] -= 1
        w += 1


@kernel
def _weighted(code, free, cap, scal, units, req, order, key, tmp):
    """Weighted / Priority-Weighted order (module docstring) into ``order``."""
    n = free.shape[0]
    wpred = scal[V_WPRED]
    for i in range(n):
        h = _host(free, i, req)
        if h > units:
            h = units
        r = 0.0
        for k in range(N_RES):
            total = scal[V_CAP + k]
            if cap[i, k] <= 0 or total <= 0 or wpred <= 0:
                continue
            mean_req = scal[V_WSUM + k] / wpred
            load = (total - scal[V_FREE + k]) / total
            w = mean_req * load / total
            if code == Allocator.PRIORITY_WEIGHTED and scal[V_CRIT + k]:
                w *= scal[V_PRIO + k]
            r += w * (free[i, k] - h * req[k])
        key[i] = r
    _argsort_stable(key, order, tmp)


@kernel
def _order(code, free, cap, order, key, tmp, scal, units, req):
    """Fill ``order`` (int64 (n_nodes,)) with the node visiting order of allocator
    ``code`` for a job of ``units`` units of shape ``req`` on the free resources ``free``
    of nodes of capacity ``cap`` (int64 (n_nodes, 4)); ``scal`` is the engine's scalar
    state (queue sums, loads, priorities); ``key`` (float64 (n_nodes,)) and ``tmp``
    (int64 (n_nodes,)) are scratch."""
    n = free.shape[0]
    if code == Allocator.BEST_FIT:
        for i in range(n):
            key[i] = free[i, 0] + free[i, 1] + free[i, 2]
        _argsort_stable(key, order, tmp)
    elif code == Allocator.BALANCED:
        _balanced(free, scal, order, key, tmp)
    elif code == Allocator.WEIGHTED or code == Allocator.PRIORITY_WEIGHTED:
        _weighted(code, free, cap, scal, units, req, order, key, tmp)
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


@inline_kernel
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


@inline_kernel
def _fits(free, free_total, units, req, req_nodes, ident, out_node, out_count):
    """Whether the job fits on ``free`` now (order-independent, so nodes are visited in
    index order ``ident``); scans nodes only when the totals cannot decide.  Buffers as
    in :func:`_place`."""
    d = _totals_decide(units, req, req_nodes, free_total)
    if d >= 0:
        return d == 1
    # np.int64(0), not 0: a literal argument would compile a second copy of _place
    return _place(free, ident, np.int64(0), units, req, req_nodes, out_node, out_count) >= 0
