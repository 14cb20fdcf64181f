"""What the two plans of ``priority`` and ``sfs`` share (the package docstring): the
state's parameter slots, the fair-share factors, the priority order, and the accounts'
occupancy and usage.

Every state class holds at least: acct int64 (n,): each job's account index; size int64
(n,): each job's size (the package docstring: units of its type for pool jobs, else its
cores); target int64 (A,): target occupancy (in sizes); occ int64 (A,): sizes of each
account's running jobs; usage float64 (A,): decayed usage (size x s); shares float64
(A,): allocation shares (sum 1, or all 0); factor float64 (A,): fair-share factors
2^(-U/S); w float64 (3,): weights of age (per minute), size (per size unit) and
fair-share; par int64 (6,): P_* slots; qkey float64 (n,): the queued jobs' keys.
"""

from __future__ import annotations

from ..._jit import inline_kernel, internal_kernel
from ...core.api import (
    C_FREE,
    C_MAINT,
    C_QH,
    C_QN,
    attempt_failed,
    counts_attempts,
    fits_now,
    mask_maintenance,
    queue_compact,
    try_start,
    unmask_maintenance,
)
from ...core.layout import J_REQ, J_START, J_STATE, J_SUBMIT, J_UNITS, N_RES, JobState

# Slots of the state's par, int64
P_DEPTH = 0  # reservations per pass
P_SFS = 1  # 1: run pass 1 (sfs)
P_HALF = 2  # usage half-life, s
P_LAST = 3  # instant of the last usage decay, s
P_DIRTY = 4  # 1: the fair-share factors need recomputing
P_BACKFILL = 5  # 0: strict priority (pass 2 stops at the first job that cannot start)
P_STANDING = 6  # 1: sfs's pass 1 honours the standing reservations (package docstring)
N_PAR = 7


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
def _key(jobs, j, now, w, factor, acct, size):
    """Minus job j's priority at ``now`` (smaller first)."""
    age = float(now - jobs[j, J_SUBMIT]) / 60.0
    return -(w[0] * age + w[1] * float(size[j]) + w[2] * factor[acct[j]])


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
        qkey[r] = _key(jobs, queue[qh + r], now, sched.w, sched.factor, sched.acct, sched.size)
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


@inline_kernel
def _prepare_pass(sched, core, alloc, now):
    """Refresh the factors when usage changed; returns False when the pass can do nothing
    (an empty queue, or no free resource: reservations live only within a pass), else puts
    the queue in priority order and returns True.  With nothing free, an allocator that
    counts attempts (:func:`schedbench.core.api.counts_attempts`) still gets the pass: each
    job it offers is a failed attempt, as in any other pass."""
    par = sched.par
    if par[P_DIRTY] != 0:
        _refresh_factors(sched.usage, sched.shares, sched.factor)
        par[P_DIRTY] = 0
    scal = core.scal
    if scal[C_QN] == 0:
        return False
    room = 0
    for k in range(N_RES):
        room += scal[C_FREE + k]
    if room == 0 and not counts_attempts(alloc):
        return False
    _order_queue(core.jobs, core.queue, scal, sched, now)
    return True


@internal_kernel
def _offer(core, alloc, j, now):
    """try_start, in one place (each inlined copy of the allocator costs compile time)."""
    return try_start(core, alloc, j, now)


@inline_kernel
def _not_offered(alloc, jobs, j):
    """Job j is ruled out without being offered (beyond the free totals): a failed
    attempt for an allocator that counts every attempt
    (:func:`schedbench.core.api.counts_attempts`), nothing for the others."""
    if counts_attempts(alloc):
        attempt_failed(alloc, jobs, j)


@inline_kernel
def _totals_admit(jobs, j, scal):
    """Whether the machine's free totals leave room for job j (a necessary condition).
    A job it rules out is not offered: callers report it as a failed attempt to an
    allocator that counts attempts (:func:`schedbench.core.api.counts_attempts`), and
    to no other."""
    for k in range(N_RES):
        if jobs[j, J_UNITS] * jobs[j, J_REQ + k] > scal[C_FREE + k]:
            return False
    return True


@inline_kernel
def _local_pass(sched, core, alloc, now):
    """sfs's pass 1 (package docstring): the queued jobs, in priority order, of accounts at
    or below their target occupancy start when they fit; each start raises its account's
    occupancy, so a later job of an account that went above target is passed over."""
    jobs = core.jobs
    queue = core.queue
    qh = core.scal[C_QH]
    for r in range(qh, qh + core.scal[C_QN]):
        j = queue[r]
        a = sched.acct[j]
        if jobs[j, J_STATE] == JobState.QUEUED and sched.occ[a] <= sched.target[a]:
            if _totals_admit(jobs, j, core.scal):
                if _offer(core, alloc, j, now):
                    sched.occ[a] += sched.size[j]
            else:
                _not_offered(alloc, jobs, j)


@inline_kernel
def _fits_at(core, alloc, j, now):
    """Whether queued job j would start now (try_start's test, nothing started): it fits
    the free nodes with those in maintenance during its predicted run hidden.  A test,
    not an attempt: the allocator hears nothing."""
    if not _totals_admit(core.jobs, j, core.scal):
        return False
    maint = core.scal[C_MAINT] != 0
    if maint:
        mask_maintenance(core, j, now)
    ok = fits_now(core, j)
    if maint:
        unmask_maintenance(core, alloc, j)
    return ok


@inline_kernel
def _released_body(sched, core, j, now):
    """Job j ended at now: its account's occupancy drops; usage decays to now and gains
    the job's size x run time."""
    jobs = core.jobs
    a = sched.acct[j]
    sched.occ[a] -= sched.size[j]
    par = sched.par
    if now > par[P_LAST]:
        f = 2.0 ** (-float(now - par[P_LAST]) / float(par[P_HALF]))
        for b in range(sched.usage.shape[0]):
            sched.usage[b] *= f
        par[P_LAST] = now
    sched.usage[a] += float(sched.size[j]) * float(now - jobs[j, J_START])
    par[P_DIRTY] = 1


@inline_kernel
def _started_outside_body(sched, core, j):
    sched.occ[sched.acct[j]] += sched.size[j]
