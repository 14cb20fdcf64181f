"""A Slurm-style linear multifactor priority with depth-D reservations (``priority``) and
Simultaneous Fair-Share (``sfs``; Steffen, "A Better Way of Scheduling Jobs on HPC
Systems: Simultaneous Fair-Share", HPC-SYSROS 2019, §2 and §4).

Accounts
    A job's account is its SWF group (field 13), or its user (field 12) with
    ``account=user``.  Each account has an *allocation*: from an accounts file
    (``accounts=FILE.toml``, a table ``[accounts.ID]`` per account holding ``target = U``,
    an occupancy in units, or ``allocation = U*s`` over the trace's span, with an optional
    ``factor``), or, by default, the account's own work (units x run) in the trace.  Ideal
    occupancy = allocation / span of the trace (first submit to last end); target
    occupancy = factor x ideal (default factor 2, §4.1).  An account the file does not
    list has no allocation: target 0 and no share.  *Occupancy* counts units of the job's
    resource type (cores for SWF logs).

Priority (§2.3): ``w_age * minutes queued + w_size * units + w_fs * F``, with Slurm's
classic fair-share factor ``F = 2^(-U/S)``: U the account's share of the decayed usage of
all accounts, S its share of the allocations (F = 0 for an account without one).  Usage
is learned online: when a job ends, every account's usage decays by
``2^(-(now - last decay) / half_life)`` (default half-life 7 days) and the job's units x
run time is added to its account (a choice: Slurm accrues while jobs run; the paper
does not say).  Queue order: priority high to low, then (submit, id).

Each pass at ``now``, on a plan of the future (one used RUSV per resource type, built in
the pass when its first reservation is made: each running job holds its units over
[now, max(start + pred, now)), as EASY's predicted ends; a pass where nothing is free
does nothing):

* ``sfs`` first runs **pass 1** (§4.2.1) over the *local list*: queued jobs, in priority
  order, of accounts whose occupancy now (units of their running jobs) is at or below
  target; each job that fits now starts and its account's occupancy grows, and an account
  above target has its remaining jobs dropped from the local list (so the list is
  re-evaluated after every placement, as §5 does).
* **pass 2** (both; §4.2.2, and §2's linear scheduler): the full list in priority order.
  Before any reservation a job starts when it fits now; the first ``depth`` jobs that do
  not start get a reservation at their earliest fit on the plan (held for this pass only,
  ``[t, t + max(pred, 1))``); after the first reservation a job starts only when it fits
  now *and* the plan stays within the machine over ``[now, now + pred)`` with it, i.e. it
  delays no reservation (the **backfill**, §5.0.3: with reservations made, the rest of the
  list is the backfill pass, in priority order).  ``depth = 1`` with only the age weight is
  EASY (tests check it job by job).  ``backfill=false`` makes pass 2 strict: it stops at
  the first job that cannot start (no reservation matters then); Steffen's §9 linear
  scheduler behaves so (see ``docs/studies/steffen-sfs.md``).

The plan needs single units of one type spread freely (every SWF job, and whole-node jobs
on a pool of nodes), the jobs being placed by the run's allocator when they start;
node-level reservations (jobs with a node count or several types per unit) are not
implemented and such a workload is refused.  Maintenance windows still bind (the core
hides nodes in maintenance from every start) but the plan does not see them.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit import inline_kernel, internal_kernel
from ..core import JittedScheduler
from ..core.api import (
    C_FREE,
    C_QH,
    C_QN,
    C_RN,
    implements,
    queue_compact,
    sched_released,
    sched_started_outside,
    schedule,
    try_start,
)
from ..core.layout import (
    J_PRED,
    J_RUN,
    J_START,
    J_STATE,
    J_SUBMIT,
    J_UNITS,
    N_RES,
    JobState,
)
from ..errors import UsageError
from ..plan.accounts import accounts, allocations
from ..plan.rusv import (
    INF,
    M_AVL,
    M_MAX_AVL,
    M_MIN_DIST,
    M_N,
    kernel_add,
    kernel_earliest_fit,
    kernel_max_in,
)

DEFAULT_WEIGHTS = {"age": 1.0, "size": 1.0, "fairshare": 1440.0}

# Slots of FairShare.par, int64
P_DEPTH = 0  # reservations per pass
P_SFS = 1  # 1: run pass 1 (sfs)
P_HALF = 2  # usage half-life, s
P_LAST = 3  # instant of the last usage decay, s
P_DIRTY = 4  # 1: the fair-share factors need recomputing
P_BACKFILL = 5  # 0: strict priority (pass 2 stops at the first job that cannot start)


class FairShare(NamedTuple):
    """acct int64 (n,): each job's account index; target int64 (A,): target occupancy
    (units); occ int64 (A,): units of each account's running jobs; usage float64 (A,):
    decayed usage (units x s); shares float64 (A,): allocation shares (sum 1, or all 0);
    factor float64 (A,): fair-share factors 2^(-U/S); w float64 (3,): weights of age (per
    minute), size (per unit) and fair-share; par int64 (6,): P_* slots; qkey float64 (n,):
    the queued jobs' keys; jtype int64 (n,): each job's resource type; slots int64
    (N_RES, cap, 3) and meta int64 (N_RES, 5): the plan, one used RUSV per type; tmp
    int64 (2, N_RES): scratch."""

    acct: np.ndarray
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


# --------------------------------------------------------------------------- kernels


@internal_kernel
def _refresh_factors(usage, shares, factor):
    """factor[a] = 2^(-U_a / S_a), U_a = usage[a] / sum(usage) (0 while nothing ran)."""
    total = 0.0
    for a in range(usage.shape[0]):
        total += usage[a]
    for a in range(usage.shape[0]):
        if shares[a] <= 0.0:
            factor[a] = 0.0
        else:
            u = usage[a] / total if total > 0.0 else 0.0
            factor[a] = 2.0 ** (-u / shares[a])


@inline_kernel
def _key(jobs, j, now, w, factor, acct):
    """Minus job j's priority at ``now`` (smaller first)."""
    age = float(now - jobs[j, J_SUBMIT]) / 60.0
    return -(w[0] * age + w[1] * float(jobs[j, J_UNITS]) + w[2] * factor[acct[j]])


@internal_kernel
def _order_queue(jobs, queue, scal, sched, now):
    """Put the queue in priority order at ``now`` (ties by job index, i.e. (submit, id)).
    The queue keeps the previous pass's order and the age term grows alike for every job,
    so an insertion sort moves only arrivals and the jobs whose fair-share factor changed."""
    queue_compact(jobs, queue, scal)
    qh = scal[C_QH]
    n = scal[C_QN]
    qkey = sched.qkey
    for r in range(n):
        qkey[r] = _key(jobs, queue[qh + r], now, sched.w, sched.factor, sched.acct)
    for r in range(1, n):
        j = queue[qh + r]
        k = qkey[r]
        p = r - 1
        while p >= 0 and (k < qkey[p] or (k == qkey[p] and j < queue[qh + p])):
            queue[qh + p + 1] = queue[qh + p]
            qkey[p + 1] = qkey[p]
            p -= 1
        queue[qh + p + 1] = j
        qkey[p + 1] = k


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


@internal_kernel
def _offer(core, alloc, j, now):
    """try_start, in one place (each inlined copy of the allocator costs compile time)."""
    return try_start(core, alloc, j, now)


@inline_kernel
def _started(sched, jobs, j, now, planned):
    """Job j started now: its account's occupancy holds it, and the plan when ``planned``
    (built already in this pass)."""
    sched.occ[sched.acct[j]] += jobs[j, J_UNITS]
    end = now + jobs[j, J_PRED]
    if planned and end > now:
        k = sched.jtype[j]
        kernel_add(sched.slots[k], sched.meta[k], now, end, jobs[j, J_UNITS])


@implements(schedule, FairShare)
@inline_kernel
def _pass(sched, core, pred, alloc, now):
    """schedule() for priority and sfs (module docstring)."""
    par = sched.par
    if par[P_DIRTY] != 0:
        _refresh_factors(sched.usage, sched.shares, sched.factor)
        par[P_DIRTY] = 0
    jobs = core.jobs
    queue = core.queue
    scal = core.scal
    room = 0
    for k in range(N_RES):
        room += scal[C_FREE + k]
    if room == 0 or scal[C_QN] == 0:
        return  # nothing can start, and reservations live only within a pass
    _order_queue(jobs, queue, scal, sched, now)
    qh = scal[C_QH]
    n = scal[C_QN]
    if par[P_SFS] != 0:
        for r in range(qh, qh + n):
            j = queue[r]
            a = sched.acct[j]
            if jobs[j, J_STATE] == JobState.QUEUED and sched.occ[a] <= sched.target[a]:
                if jobs[j, J_UNITS] <= scal[C_FREE + sched.jtype[j]] and _offer(core, alloc, j, now):
                    _started(sched, jobs, j, now, False)
    reserved = 0
    for r in range(qh, qh + n):
        j = queue[r]
        if jobs[j, J_STATE] != JobState.QUEUED:
            continue
        k = sched.jtype[j]
        size = jobs[j, J_UNITS]
        p = jobs[j, J_PRED]
        if reserved >= par[P_DEPTH] and size > scal[C_FREE + k]:
            continue  # a backfill candidate that cannot fit now
        ok = size <= scal[C_FREE + k]
        if ok and reserved > 0 and p > 0:  # it must delay no reservation
            ok = kernel_max_in(sched.slots[k], sched.meta[k], now, now + p) + size <= sched.meta[k, M_AVL]
        if ok and _offer(core, alloc, j, now):
            _started(sched, jobs, j, now, reserved > 0)
        elif par[P_BACKFILL] == 0:
            break  # strict priority: nothing passes the first job that cannot start
        elif reserved < par[P_DEPTH]:
            if reserved == 0:  # the plan: every running job, those started in this pass too
                _plan_running(sched, core, now)
            d = max(p, 1)
            t = kernel_earliest_fit(sched.slots[k], sched.meta[k], size, d, now, INF, 0, 0, 0)
            kernel_add(sched.slots[k], sched.meta[k], t, t + d, size)
            reserved += 1


@implements(sched_released, FairShare)
@inline_kernel
def _released(sched, core, j, now):
    """Job j ended at now: its account's occupancy drops; usage decays to now and gains
    the job's units x run time."""
    jobs = core.jobs
    a = sched.acct[j]
    sched.occ[a] -= jobs[j, J_UNITS]
    par = sched.par
    if now > par[P_LAST]:
        f = 2.0 ** (-float(now - par[P_LAST]) / float(par[P_HALF]))
        for b in range(sched.usage.shape[0]):
            sched.usage[b] *= f
        par[P_LAST] = now
    sched.usage[a] += float(jobs[j, J_UNITS]) * float(now - jobs[j, J_START])
    par[P_DIRTY] = 1


@implements(sched_started_outside, FairShare)
@inline_kernel
def _started_outside(sched, core, j):
    sched.occ[sched.acct[j]] += core.jobs[j, J_UNITS]


# --------------------------------------------------------------------------- Python side


def parse_weights(text) -> dict[str, float]:
    """``"age=A,size=S,fairshare=F"`` (any subset; the others keep their defaults)."""
    if isinstance(text, dict):
        items = text.items()
    else:
        items = []
        for part in filter(None, (p.strip() for p in str(text).split(","))):
            name, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"expected NAME=NUMBER in {part!r}")
            items.append((name.strip(), value.strip()))
    out = dict(DEFAULT_WEIGHTS)
    for name, value in items:
        if name not in out:
            raise ValueError(f"unknown weight {name!r} (age, size, fairshare)")
        try:
            out[name] = float(value)
        except ValueError:
            raise ValueError(f"weight {name}={value!r} is not a number") from None
        if not math.isfinite(out[name]) or out[name] < 0:
            raise ValueError(f"weight {name}={value!r} must be a finite number >= 0")
    return out


def _build(setup, sfs: bool, priority_weights, depth, account, accounts_file, half_life, target_factor, backfill):
    J = setup.jobs
    n = J.shape[0]
    if int(depth) < 1:
        raise UsageError("depth must be >= 1")
    if int(half_life) < 1:
        raise UsageError("half_life must be >= 1 s")
    try:
        w = parse_weights(priority_weights)
    except ValueError as exc:
        raise UsageError(f"priority_weights: {exc}") from None
    if not setup.all_pool:
        raise UsageError(
            "priority and sfs plan on jobs of single units of one resource type spread freely "
            "(SWF logs, whole-node jobs on a pool of nodes); node-level reservations for jobs "
            "with a node count or several types per unit are not implemented"
        )
    jtype = np.maximum(setup.pool_type, 0)  # each job's resource type (dropped jobs: any, never read)
    ids, index = accounts(J, account)
    live = J[:, J_STATE] != JobState.DROPPED
    target, shares, _ = allocations(J[:, J_SUBMIT], J[:, J_RUN], J[:, J_UNITS], live, ids, index,
                                    accounts_file or None, float(target_factor))
    capacity = setup.machine.capacity.sum(axis=0)
    rows = 2 * (int(min(capacity.max(), n)) + int(depth)) + 16
    meta = np.zeros((N_RES, 5), dtype=np.int64)
    meta[:, M_MAX_AVL] = capacity
    meta[:, M_AVL] = capacity
    meta[:, M_MIN_DIST] = 1  # exact vectors
    par = np.array([int(depth), int(sfs), int(half_life), 0, 1, int(bool(backfill))], dtype=np.int64)
    state = FairShare(
        acct=index, target=np.floor(target + 1e-9).astype(np.int64), occ=np.zeros(ids.size, dtype=np.int64), usage=np.zeros(ids.size),
        shares=shares.astype(np.float64), factor=np.zeros(ids.size),
        w=np.array([w["age"], w["size"], w["fairshare"]], dtype=np.float64), par=par,
        qkey=np.zeros(n), jtype=jtype, slots=np.zeros((N_RES, rows, 3), dtype=np.int64), meta=meta,
        tmp=np.zeros((2, N_RES), dtype=np.int64),
    )
    return JittedScheduler(state)


# Factories: the options and their defaults are declared in schedbench.schedulers.


def priority(setup, priority_weights, depth, account, accounts, half_life, target_factor, backfill) -> JittedScheduler:
    return _build(setup, False, priority_weights, depth, account, accounts, half_life, target_factor, backfill)


def sfs(setup, priority_weights, depth, account, accounts, half_life, target_factor, backfill) -> JittedScheduler:
    return _build(setup, True, priority_weights, depth, account, accounts, half_life, target_factor, backfill)
