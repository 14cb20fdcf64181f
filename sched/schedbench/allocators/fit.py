"""First-Fit and Best-Fit (``docs/reference/replay-contract.md`` §8).

* **ff** (First-Fit): node index order.
* **bf** (Best-Fit): non-decreasing free computing resources (cores + GPUs + MICs; memory
  not counted), ties by index, recomputed before each allocation.

Both place jobs by the spec's allocation rule (:func:`schedbench.core.api.place`).  Their
factories return the shared :class:`schedbench.allocators.dispatch.Allocator` (one replay
loop for every allocator); the classes below name the fields each family uses.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import inline_kernel, internal_kernel, kernel
from ..core.api import (
    W_IDENT,
    OrderReads,
    alloc_released,
    argsort_stable,
    choose,
    implements,
    place_in_order,
    plan_order,
    plan_order_reads,
)
from ..core.layout import J_REQ, N_RES
from .dispatch import Allocator, pack


class FirstFit(NamedTuple):
    """hint int64 (4,): no node below hint[k] has any free resource k (a lower bound that
    lets the index-order scan skip full nodes)."""

    hint: np.ndarray


class BestFit(NamedTuple):
    """Node-order buffers: order int64 (m,), key float64 (m,), tmp int64 (m,)."""

    order: np.ndarray
    key: np.ndarray
    tmp: np.ndarray


def first_fit(setup) -> Allocator:
    return pack(FirstFit(np.zeros(N_RES, dtype=np.int64)))


def best_fit(setup) -> Allocator:
    m = setup.machine.n_nodes
    return pack(BestFit(np.arange(m, dtype=np.int64), np.zeros(m), np.empty(m, dtype=np.int64)))


# --------------------------------------------------------------------------- First-Fit


@inline_kernel
def _first_fit_start(hint, free, jobs, j):
    """First node index worth visiting in index order for job ``j``: past the leading
    nodes with none of some resource it requests.  Advances ``hint``, which stays a valid
    lower bound because only an ending job gives a node back resources (and lowers it)."""
    n = free.shape[0]
    first = 0
    for k in range(N_RES):
        if jobs[j, J_REQ + k] > 0:
            h = hint[k]
            while h < n and free[h, k] == 0:
                h += 1
            hint[k] = h
            if h > first:
                first = h
    return first


@implements(choose, FirstFit)
@inline_kernel
def _ff_choose(alloc, core, j):
    first = _first_fit_start(alloc.hint, core.free, core.jobs, j)
    return place_in_order(core, core.work[W_IDENT], first, j)


@implements(plan_order, FirstFit)
@kernel
def _ff_plan_order(alloc, free, order, key, tmp):
    for i in range(free.shape[0]):
        order[i] = i
    return 0


@implements(plan_order_reads, FirstFit)
@inline_kernel
def _ff_plan_order_reads(alloc):
    return OrderReads.NOTHING


@implements(alloc_released, FirstFit)
@inline_kernel
def _ff_released(alloc, jobs, j, lowest):
    for k in range(N_RES):
        if jobs[j, J_REQ + k] > 0 and lowest < alloc.hint[k]:
            alloc.hint[k] = lowest


# --------------------------------------------------------------------------- Best-Fit


@kernel
def _best_fit_order(free, order, key, tmp):
    """Best-Fit order of the nodes of ``free`` (int64 (m, 4)) into ``order`` (int64 (m,));
    key (float64 (m,)) and tmp (int64 (m,)) are scratch."""
    for i in range(free.shape[0]):
        key[i] = free[i, 0] + free[i, 1] + free[i, 2]
    argsort_stable(key, order, tmp)


@implements(plan_order, BestFit)
@kernel
def _bf_plan_order(alloc, free, order, key, tmp):
    _best_fit_order(free, order, key, tmp)
    return 0


@implements(plan_order_reads, BestFit)
@inline_kernel
def _bf_plan_order_reads(alloc):
    return OrderReads.OWN_ROW


@implements(choose, BestFit)
@internal_kernel  # called, not inlined: the sort dwarfs the call (see .dispatch)
def _bf_choose(alloc, core, j):
    _best_fit_order(core.free, alloc.order, alloc.key, alloc.tmp)
    return place_in_order(core, alloc.order, np.int64(0), j)
