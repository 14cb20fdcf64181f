"""Room on the plan: the loop returns to Python before a pass that might overflow the
vectors (the ``sched_has_room`` hook), and :func:`_grow` moves them to larger arrays (or
raises the error a pass left)."""

from __future__ import annotations

import numpy as np

from ..._jit import inline_kernel
from ...core.api import C_QN, C_RN, implements, sched_has_room
from ...errors import UsageError
from ...plan.rusv import M_N
from .state import (
    S_AMAX,
    S_CAP_NEED,
    S_GROW,
    S_PMF_N,
    ConservativeNodes,
    ConservativePool,
    _reset_indexes,
)


@inline_kernel
def _has_room(sched, core):
    """Whether every plan vector has room for the next pass (a vector holds at most 2b + 1
    rows for b bookings, and an operation needs as many again) and no pass left an error
    for :func:`_grow` to raise (sched.scal[S_GROW] < 0)."""
    need = 4 * (core.scal[C_QN] + core.scal[C_RN] + sched.scal[S_AMAX]) + 16
    if need > sched.slots.shape[1]:  # every vector has the same rows
        sched.scal[S_CAP_NEED] = need
        sched.scal[S_GROW] = 1
        return False
    return sched.scal[S_GROW] >= 0


for _cls in (ConservativePool, ConservativeNodes):
    implements(sched_has_room, _cls)(_has_room)
del _cls


def _regrown(a: np.ndarray, n: np.ndarray, new_cap: int) -> np.ndarray:
    """The (v, cap, 3) vectors ``a`` in a new (v, new_cap, 3) array: vector i's first n[i]
    rows (its used ones; none when n[i] < 0); the rest are not set.

    A new array, each vector's rows copied alone, rather than ``a.resize``: the memory a
    plan costs follows the rows its vectors use, not the room its queue asks for (resize
    zero-fills every new row: on a 10,000-job queue planned on a pool, 83 MB for a plan of
    two rows, most of the replay's time; on nodes every node's vector has the whole plan's
    room, most of it never used).  ``np.empty``, not ``np.zeros``: no kernel reads a row
    past a vector's used ones (its spare rows are written before they are read), and
    calloc zeroes the whole array when the allocator hands back memory a replay freed, as
    it does in a process that replays more than once: on Eurora's 64 nodes, 11-21 ms of
    growth in a 0.24-0.42 s replay (docs/internals/performance.md, "Growth without
    zeroing")."""
    out = np.empty((a.shape[0], new_cap, 3), dtype=a.dtype)
    for i in np.flatnonzero(n > 0):
        out[i, : n[i]] = a[i, : n[i]]
    return out


def _grow(state, core):
    """Room for the next pass: when the loop asked for it, or when the next pass might
    need more (a pass stepped from Python: :class:`Simulation`), the plan's vectors move
    to larger arrays, and the state holding them is returned (the core's ``run`` and
    :class:`Simulation` replay on with it); None when nothing moved.  Raises the error a
    pass left."""
    sc = state.scal
    if sc[S_GROW] == 0:
        need = 4 * (int(core.scal[C_QN]) + int(core.scal[C_RN]) + int(sc[S_AMAX])) + 16
        if need > state.slots.shape[1]:
            sc[S_CAP_NEED] = need
            sc[S_GROW] = 1
    if sc[S_GROW] == -1:
        raise AssertionError("conservative: a job planned to start now did not fit")
    if sc[S_GROW] == -2:
        raise UsageError("conservative on nodes books nodes in the allocator's order: "
                         "this allocator gives none (use ff, bf or balanced)")
    if sc[S_GROW] != 1:
        return None
    cap = state.slots.shape[1]
    new_cap = max(int(sc[S_CAP_NEED]), cap + cap // 2)
    site = state.site
    grown = dict(
        slots=_regrown(state.slots, state.meta[:, M_N], new_cap),
        site=site._replace(lslots=_regrown(site.lslots, site.lmeta[:, M_N], new_cap)),
        # the prefix maxima are rebuilt as asked (S_PMF_N below), and a pool's slot indexes
        # start again (their rows moved): nothing of pmf is kept
        pmf=np.zeros((state.pmf.shape[0], new_cap), dtype=state.pmf.dtype),
    )
    if isinstance(state, ConservativePool):
        _reset_indexes(grown["pmf"])
    if isinstance(state, ConservativeNodes):
        grown["nslots"] = _regrown(state.nslots, state.nmeta[:, M_N], new_cap)
        grown["npmf"] = _regrown(state.npmf, state.npmf_n, new_cap)  # built rows stay valid: their stops are instants
    sc[S_PMF_N] = 0
    sc[S_GROW] = 0
    return state._replace(**grown)
