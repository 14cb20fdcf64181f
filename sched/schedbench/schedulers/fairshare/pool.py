"""The totals plan of ``priority`` and ``sfs``, for workloads of pool jobs only (the
package docstring): one used RUSV per resource type."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._jit import inline_kernel, internal_kernel
from ...core.api import (
    C_FREE,
    C_QH,
    C_QN,
    C_RN,
    attempt_failed,
    implements,
    sched_released,
    sched_started_outside,
    schedule,
)
from ...core.layout import J_PRED, J_START, J_STATE, J_UNITS, N_RES, JobState
from ...plan.rusv import INF, M_AVL, M_N, kernel_add, kernel_earliest_fit, kernel_max_in
from .common import (
    P_BACKFILL,
    P_DEPTH,
    P_SFS,
    P_STANDING,
    _fits_at,
    _local_pass,
    _not_offered,
    _offer,
    _prepare_pass,
    _released_body,
    _started_outside_body,
)


class FairShare(NamedTuple):
    """The common fields (:mod:`.common`), then jtype int64 (n,): each job's resource
    type; slots int64 (N_RES, cap, 3) and meta int64 (N_RES, 5): the plan, one used RUSV
    per type; tmp int64 (2, N_RES): scratch."""

    acct: np.ndarray
    size: np.ndarray
    target: np.ndarray
    occ: np.ndarray
    usage: np.ndarray
    shares: np.ndarray
    factor: np.ndarray
    w: np.ndarray
    par: np.ndarray
    qkey: np.ndarray
    jtype: np.ndarray
    slots: np.ndarray
    meta: np.ndarray
    tmp: np.ndarray


@internal_kernel
def _plan_running(sched, core, now):
    """Reset the plan to the running jobs: units over [now, max(start + pred, now)).
    The running list is sorted by (start + pred, index), so each type's vector is the step
    function of its jobs' remaining units, written in one walk."""
    jobs = core.jobs
    rn = core.scal[C_RN]
    run_list = core.run_list
    cur = sched.tmp[0]
    prev = sched.tmp[1]
    for k in range(N_RES):
        sched.meta[k, M_N] = 0
        cur[k] = 0
        prev[k] = now
    # unsigned rows and job indices: numba leaves out the wrap-around of each access (these
    # two walks were the hottest blocks of SFS's loop on HPC2N)
    u1 = np.uint64(1)
    urn = np.uint64(rn)
    r = np.uint64(0)
    while r < urn:
        j = np.uint64(run_list[r, 1])
        if jobs[j, J_START] + jobs[j, J_PRED] > now:
            cur[sched.jtype[j]] += jobs[j, J_UNITS]
        r += u1
    r = np.uint64(0)
    while r < urn:
        j = np.uint64(run_list[r, 1])
        r += u1
        end = jobs[j, J_START] + jobs[j, J_PRED]
        if end <= now:
            continue
        k = sched.jtype[j]
        if end > prev[k]:
            i = sched.meta[k, M_N]
            sched.slots[k, i, 0] = prev[k]
            sched.slots[k, i, 1] = end
            sched.slots[k, i, 2] = cur[k]
            sched.meta[k, M_N] = i + 1
            prev[k] = end
        cur[k] -= jobs[j, J_UNITS]


@inline_kernel
def _started(sched, jobs, j, now, planned):
    """Job j started now: its account's occupancy holds it, and the plan when ``planned``
    (built already in this pass)."""
    sched.occ[sched.acct[j]] += sched.size[j]
    end = now + jobs[j, J_PRED]
    if planned and end > now:
        k = sched.jtype[j]
        kernel_add(sched.slots[k], sched.meta[k], now, end, jobs[j, J_UNITS])


@inline_kernel
def _reserve(sched, k, size, p, now):
    """Book a reservation of ``size`` units of type ``k`` for max(``p``, 1) s at its earliest
    fit on the plan (s)."""
    d = max(p, 1)
    t = kernel_earliest_fit(sched.slots[k], sched.meta[k], size, d, now, INF, 0, 0, 0)
    kernel_add(sched.slots[k], sched.meta[k], t, t + d, size)


@inline_kernel
def _delays_none(sched, k, size, p, now):
    """Whether ``size`` units of type ``k`` from ``now`` for ``p`` s leave every reservation
    on the plan its room (the backfill test)."""
    return kernel_max_in(sched.slots[k], sched.meta[k], now, now + p) + size <= sched.meta[k, M_AVL]


@internal_kernel
def _standing_pass(sched, core, alloc, now):
    """sfs's pass 1 with standing reservations (package docstring): the first ``depth``
    jobs of the priority order that cannot start now get their reservations on the plan of
    the running jobs (earliest fit, in order); then pass 1's jobs start only when they fit
    now and delay none of them (pass 2's backfill test)."""
    par = sched.par
    jobs = core.jobs
    queue = core.queue
    scal = core.scal
    qh = scal[C_QH]
    n = scal[C_QN]
    made = 0
    for r in range(qh, qh + n):
        if made >= par[P_DEPTH]:
            break
        j = queue[r]
        if _fits_at(core, alloc, j, now):
            continue
        if made == 0:
            _plan_running(sched, core, now)
        _reserve(sched, sched.jtype[j], jobs[j, J_UNITS], jobs[j, J_PRED], now)
        made += 1
    for r in range(qh, qh + n):
        j = queue[r]
        a = sched.acct[j]
        if jobs[j, J_STATE] != JobState.QUEUED or sched.occ[a] > sched.target[a]:
            continue
        k = sched.jtype[j]
        size = jobs[j, J_UNITS]
        p = jobs[j, J_PRED]
        if size > scal[C_FREE + k]:
            _not_offered(alloc, jobs, j)
            continue
        if made > 0 and p > 0 and not _delays_none(sched, k, size, p, now):
            attempt_failed(alloc, jobs, j)  # it would delay a standing reservation
            continue
        if _offer(core, alloc, j, now):
            _started(sched, jobs, j, now, made > 0)


@implements(schedule, FairShare)
@inline_kernel
def _pass(sched, core, pred, alloc, now):
    """schedule() for priority and sfs on pool jobs (package docstring)."""
    if not _prepare_pass(sched, core, alloc, now):
        return
    par = sched.par
    jobs = core.jobs
    queue = core.queue
    scal = core.scal
    qh = scal[C_QH]
    n = scal[C_QN]
    if par[P_SFS] != 0:
        if par[P_STANDING] != 0:
            _standing_pass(sched, core, alloc, now)
        else:
            _local_pass(sched, core, alloc, now)
    reserved = 0
    for r in range(qh, qh + n):
        j = queue[r]
        if jobs[j, J_STATE] != JobState.QUEUED:
            continue
        k = sched.jtype[j]
        size = jobs[j, J_UNITS]
        p = jobs[j, J_PRED]
        ok = size <= scal[C_FREE + k]
        if not ok:
            _not_offered(alloc, jobs, j)
            if reserved >= par[P_DEPTH]:
                continue  # a backfill candidate that cannot fit now
        elif reserved > 0 and p > 0:  # it must delay no reservation
            ok = _delays_none(sched, k, size, p, now)
            if not ok:
                attempt_failed(alloc, jobs, j)  # a backfill refusal, as on nodes
        if ok and _offer(core, alloc, j, now):
            _started(sched, jobs, j, now, reserved > 0)
        elif par[P_BACKFILL] == 0:
            break  # strict priority: nothing passes the first job that cannot start
        elif reserved < par[P_DEPTH]:
            if reserved == 0:  # the plan: every running job, those started in this pass too
                _plan_running(sched, core, now)
            _reserve(sched, k, size, p, now)
            reserved += 1


@implements(sched_released, FairShare)
@inline_kernel
def _released(sched, core, j, now):
    _released_body(sched, core, j, now)


@implements(sched_started_outside, FairShare)
@inline_kernel
def _started_outside(sched, core, j):
    _started_outside_body(sched, core, j)
