"""The spec's allocation rule (``docs/reference/replay-contract.md`` §8, "Machines
with nodes and several resource types"), shared by every allocator and by every fit test.

An allocation visits nodes in some order and gives each node as many of the job's
remaining units as it can host (``min`` over requested types of ``free // per-unit
request``) until none remain; when the nodes run out first nothing is allocated
(all-requested-computers-available).  A job with ``req_nodes > 0`` is instead placed on the
first ``req_nodes`` nodes, in that order, that can each host ``units / req_nodes`` units.
Whether a job fits depends on the free resources only, never on the order.

A job limited to some nodes (its partition and features: the job matrix's ``J_CLASS``
names a row of ``Core.elig``) is placed as if the other nodes were not there: every
placement takes the job's eligibility row, ``elig`` (uint8 (m,): 1 where the job may run),
and the machine totals can then only prove that it does not fit.
"""

from __future__ import annotations

import numpy as np

from .._jit import inline_kernel, internal_kernel
from .layout import J_CLASS, J_REQ, J_REQ_NODES, J_UNITS, N_RES
from .state import C_FREE, W_COUNT, W_IDENT, W_NODE

_BIG = np.iinfo(np.int64).max


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


@internal_kernel
def _place(free, order, first, units, req, req_nodes, out_node, out_count, elig):
    """Place ``units`` units of shape ``req`` visiting nodes in ``order`` from position
    ``first`` (the caller knows that earlier positions host nothing), on the nodes where
    ``elig`` (uint8 (n_nodes,)) is non-zero.

    free: int64 (n_nodes, 4), not modified; order: int64 (n_nodes,); req: int64 (4,);
    req_nodes: <= 0 for a free spread, else the exact node count; out_node, out_count:
    int64 buffers of at least min(units, n_nodes) entries that receive the chosen nodes and
    the units each hosts.  Returns the number of nodes used, or -1 when the job does not fit.

    Positions and node numbers are unsigned in the scans: numba then leaves out the
    negative-index wrap-around of every access.
    """
    n = np.uint64(free.shape[0])
    u1 = np.uint64(1)
    used = np.uint64(0)
    p = np.uint64(first)
    if req_nodes > 0:
        per = units // req_nodes
        want = np.uint64(req_nodes)
        while p < n:
            i = np.uint64(order[p])
            p += u1
            if elig[i] != 0 and _host(free, i, req) >= per:
                out_node[used] = i
                out_count[used] = per
                used += u1
                if used == want:
                    return np.int64(used)
        return -1
    remaining = units
    while p < n:
        i = np.uint64(order[p])
        p += u1
        if elig[i] == 0:
            continue
        h = _host(free, i, req)
        if h > 0:
            take = h if h < remaining else remaining
            out_node[used] = i
            out_count[used] = take
            used += u1
            remaining -= take
            if remaining == 0:
                return np.int64(used)
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
def _fits(free, free_total, units, req, req_nodes, ident, out_node, out_count, elig, restricted):
    """Whether the job fits on ``free`` now (order-independent, so nodes are visited in
    index order ``ident``); scans nodes only when the totals cannot decide.  Buffers and
    ``elig`` as in :func:`_place`; ``restricted``: whether ``elig`` leaves out any node
    (the totals then only prove that the job does not fit)."""
    d = _totals_decide(units, req, req_nodes, free_total)
    if d == 0 or (d == 1 and not restricted):
        return d == 1
    # np.int64(0), not 0: a literal argument would compile a second copy of _place
    return _place(free, ident, np.int64(0), units, req, req_nodes, out_node, out_count, elig) >= 0


@inline_kernel
def _fits_now(core, j):
    """Whether queued job ``j`` fits on the core's free nodes now (totals first, nodes
    only when the totals cannot decide)."""
    jobs = core.jobs
    req = jobs[j, J_REQ : J_REQ + N_RES]
    # _fits written out: one level of inlining less in every loop that tests a fit
    cls = jobs[j, J_CLASS]
    d = _totals_decide(jobs[j, J_UNITS], req, jobs[j, J_REQ_NODES], core.scal[C_FREE : C_FREE + N_RES])
    if d == 0 or (d == 1 and cls == 0):
        return d == 1
    return _place(
        core.free, core.work[W_IDENT], np.int64(0), jobs[j, J_UNITS], req, jobs[j, J_REQ_NODES],
        core.work[W_NODE], core.work[W_COUNT], core.elig[cls],
    ) >= 0


@inline_kernel
def _place_in_order(core, order, first, j):
    """Place job ``j`` on the core's free nodes visiting ``order`` (int64 (m,)) from
    position ``first``, into core.work[W_NODE] / [W_COUNT]; returns the nodes used or -1."""
    jobs = core.jobs
    return _place(  # np.int64: a literal ``first`` would compile a second copy of _place
        core.free, order, np.int64(first), jobs[j, J_UNITS], jobs[j, J_REQ : J_REQ + N_RES], jobs[j, J_REQ_NODES],
        core.work[W_NODE], core.work[W_COUNT], core.elig[jobs[j, J_CLASS]],
    )
