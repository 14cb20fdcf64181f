"""The factory: conservative backfilling's state for a run (pool or nodes)."""

from __future__ import annotations

import numpy as np

from ...core import JittedScheduler
from ...core.layout import J_STATE, J_SUBMIT, J_UNITS, N_RES, JobState
from .growth import _grow
from .site import _site_plan
from .state import (
    ENDS_LOG,
    N_SCAL,
    S_AMAX,
    S_FULL_AT_OF,
    S_LIVE,
    S_LIVE_KEY,
    S_NOW,
    S_SITE,
    S_WINDOW_GAP,
    S_WINDOWS,
    W_COLUMNS,
    W_FREED_TO,
    W_ORDER,
    ConservativeNodes,
    ConservativePool,
    _pool_pmf,
    _vectors,
)
from .wake import H_AT


def _most_arrivals(J: np.ndarray) -> int:
    live = J[J[:, J_STATE] != JobState.DROPPED, J_SUBMIT]
    if live.size == 0:
        return 0
    return int(np.unique(live, return_counts=True)[1].max())


def _wvalid(m: int) -> np.ndarray:
    """sched.wvalid for m nodes (:class:`ConservativeNodes`): nothing computed (columns
    0-1 and W_FREED_TO at -1), every full-until order the node index order, the rest 0."""
    wvalid = np.zeros((m, W_COLUMNS), dtype=np.int64)
    wvalid[:, :2] = -1
    wvalid[:, W_FREED_TO] = -1
    for col in W_ORDER:
        wvalid[:, col] = np.arange(m)
    return wvalid


def conservative(setup) -> JittedScheduler:
    J = setup.jobs
    n = J.shape[0]
    capacity = setup.machine.capacity
    arrays = getattr(setup, "site", None)
    # a pool plan books by type; windows and kept cores are per node: bookings must hold nodes
    ptype = np.maximum(setup.pool_type, 0) if setup.all_pool and not setup.site_binds_nodes else None
    cap = 64
    scal = np.zeros(N_SCAL, dtype=np.int64)
    scal[S_NOW] = -1
    scal[S_LIVE] = -1
    scal[list(S_FULL_AT_OF)] = -1
    scal[S_LIVE_KEY] = -1
    wake = np.zeros((n + 16, 3), dtype=np.int64)
    wake[:, H_AT] = -1  # no job has an entry
    scal[S_AMAX] = _most_arrivals(J)
    site = _site_plan(arrays, n, capacity.shape[0], cap)
    scal[S_SITE] = int(site.crow.shape[0] > 0)
    common = dict(
        book=np.full((n, 6), -1, dtype=np.int64), ptype=ptype if ptype is not None else np.zeros(n, np.int64),
        size=J[:, J_UNITS].copy(), wake=wake,
        arrivals=np.zeros(n, dtype=np.int64), starting=np.zeros(2 * n + 16, dtype=np.int64),
        pmf=np.zeros((2, cap), dtype=np.int64), scal=scal, site=site,
    )
    if ptype is not None:
        # windows on a pool are on every node alike (else the site binds nodes): times
        # that no booking may meet, a constraint like the limits (site._constraints_fit)
        scal[S_WINDOWS] = int(site.mwin.shape[0] > 0)
        if scal[S_WINDOWS]:
            win = site.mwin[site.mspan[0, 0] : site.mspan[0, 1]]
            scal[S_WINDOW_GAP] = int((win[1:, 0] - win[:-1, 1]).max()) if len(win) > 1 else 0
        slots, meta = _vectors(capacity.sum(axis=0), cap)
        common["pmf"] = _pool_pmf(slots.shape[0], cap)  # with the slot indexes
        return JittedScheduler(ConservativePool(slots=slots, meta=meta, **common), grow=_grow)
    m = capacity.shape[0]
    totals = np.concatenate([capacity.sum(axis=0), [np.iinfo(np.int64).max >> 2]])
    slots, meta = _vectors(totals, cap)
    nslots, nmeta = _vectors(capacity.reshape(-1), cap)
    rows = 2 * int(np.minimum(J[:, J_UNITS], m).clip(min=1).sum()) + 64
    state = ConservativeNodes(
        slots=slots, meta=meta, **common, nslots=nslots, nmeta=nmeta,
        bnodes=np.zeros((rows, 3), dtype=np.int64), wfree=np.zeros((m, N_RES), dtype=np.int64),
        wvalid=_wvalid(m),
        order=np.arange(m, dtype=np.int64), key=np.zeros(m),
        tmp=np.zeros(m, dtype=np.int64), npmf=np.zeros_like(nslots), npmf_n=np.full(m * N_RES, -1, dtype=np.int64),
        ends_log=np.zeros(4 * ENDS_LOG, dtype=np.int64),
    )
    return JittedScheduler(state, grow=_grow)
