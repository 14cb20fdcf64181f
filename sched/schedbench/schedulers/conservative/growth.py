"""Room on the plan: the loop returns to Python before a pass that might overflow the
vectors (the ``sched_has_room`` hook), and :func:`_grow` enlarges them in place (or
raises the error a pass left)."""

from __future__ import annotations

import numpy as np

from ..._jit import inline_kernel
from ...core.api import C_QN, C_RN, implements, sched_has_room
from ...errors import UsageError
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


def _grow_vectors(a: np.ndarray, new_cap: int) -> None:
    """Enlarge the (v, cap, 3) vectors ``a`` to (v, new_cap, 3) in place."""
    v, cap, _ = a.shape
    if new_cap <= cap or v == 0:
        return
    a.resize((v, new_cap, 3), refcheck=False)
    flat = a.reshape(-1)
    for i in range(v - 1, 0, -1):  # move each vector's rows to its new place, last first
        flat[i * new_cap * 3 : i * new_cap * 3 + cap * 3] = flat[i * cap * 3 : (i + 1) * cap * 3].copy()


def _grow(state, core) -> None:
    """Enlarge the plan's vectors in place when the loop asked for room, or when the next
    pass might need more (a pass stepped from Python: :class:`Simulation`)."""
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
        return
    cap = state.slots.shape[1]
    new_cap = max(int(sc[S_CAP_NEED]), cap + cap // 2)
    _grow_vectors(state.slots, new_cap)
    _grow_vectors(state.site.lslots, new_cap)
    state.pmf.resize((state.pmf.shape[0], new_cap), refcheck=False)
    if isinstance(state, ConservativePool):
        _reset_indexes(state.pmf)  # the rows moved: the pool's slot indexes start again
    if isinstance(state, ConservativeNodes):
        _grow_vectors(state.nslots, new_cap)
        _grow_vectors(state.npmf, new_cap)  # the rows stay valid: their stops are instants
    sc[S_PMF_N] = 0  # the prefix maxima are rebuilt as asked
    sc[S_GROW] = 0
