"""``slurm``: Slurm's multifactor priority, its main scheduler and its backfill scheduler.

Every parameter is a scheduler option named after Slurm's (``-O bf_interval=30``).  Its
value is the option when given, else the key of the same name in ``meta["slurm"]`` (what
the slurm.conf reader found), else Slurm's default.  Times are seconds throughout, also
where slurm.conf counts minutes (PriorityCalcPeriod, bf_window).

Priority (``priority_type="multifactor"``; Slurm's priority/multifactor)
    ``sum(weight_X * factor_X)``, each factor in [0, 1]:

    * age = min(now - submit, max_age) / max_age (with job dependencies, now - the time the
      job became eligible);
    * fair-share, Slurm's classic factor 2^(-U/S) per account (the job matrix's group):
      U = the account's decayed usage / every account's, S = its shares / all shares
      (``meta["slurm_accounts"]["shares"]``, {account name: shares} through
      ``meta["accounts"]``; an account without an entry has 1 share, Slurm's default).
      Usage is allocated cores x seconds and accrues *while jobs run*, as Slurm's decay
      thread charges running jobs at every period: at each calc instant r the usage of
      every account is multiplied by 2^(-(r - r_prev) / decay_half_life) (0: no decay,
      as PriorityDecayHalfLife=0 means) and the cores x
      seconds its jobs ran during (r_prev, r] are added.  Simplified: accounts are flat
      (no user level inside an account, no parent accounts, no damping factor, no
      PriorityUsageResetPeriod);
    * job size, as priority_multifactor.c computes it without SMALL_RELATIVE_TO_TIME:
      (min_nodes / nodes + cpus / cluster cpus) / 2 with min_nodes the job's node count
      (1 when it asks for none), or with ``favor_small`` ((nodes - min_nodes) / nodes +
      (cluster cpus - cpus) / cluster cpus) / 2;
    * partition: the job's partition's PriorityJobFactor / the largest one (a job
      submitted to several partitions, ``a,b``, takes the largest of theirs);
    * QOS: the job's QOS priority (``meta["slurm_accounts"]["qos_priority"]`` through
      ``meta["qos"]``) / the largest one.

    Slurm recomputes priorities every PriorityCalcPeriod: here at the instants
    t0 + k * calc_period (t0 = the first submission), as of that instant, and a pass
    between two instants uses the last ones (stale, as in Slurm); a job gets its priority
    when it arrives (age 0, the current fair-share factor).  ``priority_type="basic"``
    (priority/basic) ignores the weights: jobs go by submission.  Without partitions or
    metadata the partition and QOS factors are 0.  The scheduling order is partition
    PriorityTier (high first; a job of several partitions takes the highest of theirs),
    then priority (high first), then (submit, job id) as logged: the job index, as
    Slurm breaks ties by submit time, then job id.

Job dependencies (``--dependencies on``)
    A job whose preceding job (SWF field 17) is in the trace is pending with reason
    Dependency until that job ends plus its think time (field 18): the main loop and the
    backfill cycles do not see it (it is not in the order).  From then on it is eligible:
    the engine sets its J_SUBMIT to that instant and it joins the queue through the
    ``sched_enqueued`` hook, which logs it in ``arrived`` (so the next pass gives it its
    priority, although arrivals are then not a range of job indices).  Its age factor
    counts from that eligible time, as in Slurm, where the age of a job waiting for a
    dependency does not grow; ties and priority/basic still follow its logged
    (submit, job id), Slurm's submit time and id of a job submitted with a dependency.

Partitions and features
    A job runs only on its eligible nodes (its partitions' nodes that carry its
    features: the engine's node classes, ``Core.elig``), in the main loop, in the fit
    tests and in the backfill plan alike.  Slurm queues a job of several partitions once
    per partition, each record with that partition's tier and factor, and tries it in
    each; here it is one job, placed on the union of their nodes, ordered by its best
    record (the largest tier and job factor).

Main scheduler (Slurm's event-triggered schedule())
    At every decision point, jobs in that order, at most ``default_queue_depth`` of them:
    each that fits now starts; once one does not, the later jobs of its partition are
    left alone in this pass (Slurm stops scheduling a partition whose top job is left
    pending; it also skips the partition's nodes for other partitions, which is not
    modelled: partitions here block only their own jobs).  A job of several partitions
    that does not start blocks all of them (it was tried on all their nodes), and is
    passed over only when all of them are blocked.  Slurm also runs the full queue every
    sched_interval; the depth is the event-triggered one.

Backfill scheduler (sched/backfill)
    A cycle runs at the instants t0 + k * ``bf_interval`` while jobs wait (every decision
    point when ``bf_interval`` is 0; never when it is -1, or when slurm.conf's
    SchedulerType is sched/builtin and no ``bf_interval`` option is given).  It plans from scratch: the free resources now and
    each running job's expected end (start + its limit, the job's J_PRED; one that ran
    past it ends at the next resolution step after now), rounded up to a multiple of
    ``bf_resolution`` as Slurm rounds its node-space map.  It walks the waiting jobs in
    the scheduling order, skipping a user's jobs beyond ``bf_max_job_user`` (> 0) and
    stopping after ``bf_max_job_test`` jobs tested.  For each job it finds the earliest
    breakpoint of the plan from which the job fits for its limit on the resources left
    by the running jobs and the reservations made earlier in the cycle; when that is now
    the job starts (on the allocator's nodes when they delay no reservation, else on
    nodes the plan found free); when it is within ``bf_window`` of now the job reserves
    its nodes from then until its end rounded up to ``bf_resolution``; later, nothing.
    The plan is per node (cores, GPUs, MICs, memory over time), so it is exact on
    heterogeneous nodes and for jobs limited to some nodes; when every job is a pool job
    (single units of one type spread freely over every node) one aggregate "node"
    holding the totals is the same plan at less cost.
    Simplified: no preemption, licences, QOS or association limits, advance
    reservations, bf_continue or cycle time limits (a cycle is instantaneous), and the
    candidate node order on the plan is the index order: a reservation's nodes are the
    plan's first fit whatever the allocator, which is asked only for a job starting now
    (and overruled when its nodes would enter a reservation).  So slurm needs no planning
    order and takes every allocator, Weighted and Priority-Weighted included; with an
    allocator that reads the queue behind the job it places (the authors' Weighted
    window) the core's queue is put in slurm's scheduling order at each pass.

    A cycle that cannot change anything is skipped: when nothing arrived, started or
    ended since the last one, the priority order did not change and neither a running
    job's expected end nor a new plan breakpoint entering the window has been reached,
    the cycle would start nothing (its plan is the previous one's), so the replay does
    not even stop there; a cycle in which no tested job fits the free resources now is
    left out altogether (its reservations would be thrown away unused), and after such a
    cycle, until a job ends or the order is re-sorted (or, when that cycle left waiting
    jobs untested, a job starts), only the jobs that arrived since are tested.  A cycle also stops planning once no job left can start now: every one
    asks, of some type, more than the plan's least free total over [now, now + the least
    limit among the jobs left asking for that type) (reservations made later only take
    more).  The naive oracle (``tests/naive_slurm.py``) runs every cycle in full and
    gives the same schedules.

Relation to ``easy`` and ``conservative``
    With only the age weight (or none), one partition, ``bf_interval=0``, no per-user
    limit, ``bf_max_job_test``, ``default_queue_depth`` and ``bf_window`` larger than the
    queue and the plan's horizon, ``max_age`` longer than any wait, and
    ``bf_resolution=1``, the order is the submission order (ages at one calc instant
    follow submission, a job arriving since has age 0, ties go by job index) and every
    event re-plans every waiting job in that order on the running jobs' predicted ends:
    conservative backfilling re-planned at every event.  A job starts when it fits now
    for its whole predicted run without entering any earlier job's reservation.  EASY
    reserves for the first waiting job only; here every waiting job holds one, so fewer
    jobs backfill than under EASY.  The ``conservative`` scheduler books each job at its
    arrival and keeps (and compresses) its bookings; on a pool (the plan on totals) where
    every job ends exactly at its limit (at least 1 s), a re-plan in submission order
    books each waiting job where conservative booked it, so the starts are equal job by
    job (``tests/schedulers/test_slurm.py`` checks it, hypothesis).  When jobs end early,
    or on nodes (the plan may pick other nodes than conservative's booking), they can
    differ.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import inline_kernel, internal_kernel
from ..core import JittedScheduler
from ..core.api import (
    C_FREE,
    C_QH,
    C_QN,
    C_RN,
    W_COUNT,
    W_NODE,
    attempt_succeeded,
    choose,
    commit,
    fits_now,
    host,
    implements,
    place,
    queue_compact,
    reads_queue_order,
    sched_enqueued,
    sched_released,
    sched_started_outside,
    sched_wake,
    schedule,
    totals_decide,
    try_start,
)
from ..core.layout import (
    J_CLASS,
    J_GROUP,
    J_NODES,
    J_PRED,
    J_PTR,
    J_REQ,
    J_REQ_NODES,
    J_RUN_KEY,
    J_STATE,
    J_SUBMIT,
    J_UNITS,
    J_USER,
    N_RES,
    JobState,
)
from ..core.state import C_LAST_PASS
from ..errors import UsageError

INF = np.int64(1) << np.int64(62)

# Slurm's defaults (slurm.conf(5); backfill.c's BACKFILL_* and DEF_BF_MAX_JOB_TEST).
DEFAULTS = {
    "priority_type": "multifactor",
    "weight_age": 0.0,
    "weight_fairshare": 0.0,
    "weight_jobsize": 0.0,
    "weight_partition": 0.0,
    "weight_qos": 0.0,
    "max_age": 7 * 86400,
    "decay_half_life": 7 * 86400,
    "favor_small": False,
    "calc_period": 300,
    "default_queue_depth": 100,
    "bf_interval": 30,
    "bf_max_job_test": 500,
    "bf_window": 86400,
    "bf_resolution": 60,
    "bf_max_job_user": 0,
}

# Slots of Slurm.par, int64
P_BASIC = 0  # 1: priority/basic (weights ignored)
P_MAX_AGE = 1
P_HALF = 2
P_CALC = 3  # calc_period, s
P_DEPTH = 4
P_BF_INT = 5
P_BF_TEST = 6
P_BF_WIN = 7
P_BF_RES = 8
P_BF_USER = 9
P_T0 = 10  # origin of the calc and backfill grids (first submission)
P_ON = 11  # entries of Slurm.order in use (holes of started jobs included)
P_SEEN = 12  # arrivals (entries of Slurm.arrived) given a priority so far
P_DIRTY = 13  # 1: something changed since the last backfill cycle
P_REQUIRED = 14  # instant from which a cycle is needed even without a change
P_NEXT_CALC = 15  # next priority calc instant
P_PRIO_AT = 16  # calc instant of the current priorities (-1: none yet)
P_AGING = 17  # 1: priorities change with time (age or fair-share weight)
P_USAGE = 18  # 1: track fair-share usage (fair-share weight > 0)
P_T_ACC = 19  # instant up to which running usage is accrued
P_R_PREV = 20  # last calc instant whose usage is folded in
P_STAMP = 21  # pass counter (partition blocking and per-user counts)
P_POOL = 22  # 1: the plan holds one aggregate node (every job a pool job)
P_NB = 23  # breakpoints of the plan in use
P_USED = 24  # nodes of the last plan placement (Slurm.pnode / pcount)
P_HEAD = 25  # the order in use is Slurm.order[P_HEAD : P_HEAD + P_ON]
P_HOLE_LO = 26  # ranks (from P_HEAD) of the first and last started job still in the
P_HOLE_HI = 27  # order (INF, -1: none): compaction touches only what they bound
P_NOFIT = 28  # 1: none of the jobs the last cycle tested fitted the free resources now, and
#               since then no job ended and the order was not re-sorted; 2: the same, but
#               that cycle left waiting jobs untested, so a start (which lets one of them
#               in) also clears it
P_CYCLE_SEEN = 29  # par[P_SEEN] at that cycle: the jobs that arrived since are arrived[it:]
P_ARRIVED = 30  # entries of Slurm.arrived written (jobs that joined the queue)
N_PAR = 31

# Slots of Slurm.w, float64: weights
W_AGE, W_FS, W_JS, W_PART, W_QOS = range(5)


class Plan(NamedTuple):
    """The backfill plan, apart from the rest of the state so that the kernels called
    per tested job take these arrays only (a call passes every array of a namedtuple
    argument, and the whole state is about 30 of them).  par: the state's par (the same
    array); bt int64 (cap,): breakpoints; btot int64 (cap, 4): the free totals from each
    breakpoint; bavail int64 (cap, m, 4): the free resources of each node from each
    breakpoint (cap, 0, 4 on the aggregate plan, where btot is the plan); scratch int64
    (mm, 4); ident, pnode, pcount int64 (mm,): node order and placement buffers; rowok int64
    (cap,): the per-node search's verdict on each breakpoint (:func:`_earliest_on_nodes`)."""

    par: np.ndarray
    bt: np.ndarray
    btot: np.ndarray
    bavail: np.ndarray
    scratch: np.ndarray
    ident: np.ndarray
    pnode: np.ndarray
    pcount: np.ndarray
    rowok: np.ndarray


class Slurm(NamedTuple):
    """par int64 (N_PAR,): P_* slots; w float64 (5,): weights; stat float64 (n,): each
    job's constant priority terms (size, partition, QOS); prio float64 (n,): current
    priorities; tier, acct, user, cores int64 (n,): partition tier, account index, user
    index and allocated cores of each job; pstart int64 (n+1,), plist int64: job j's
    partitions are plist[pstart[j]:pstart[j+1]]; order int64 (n,):
    waiting jobs in scheduling order (par[P_ON] entries from par[P_HEAD], holes for
    started ones);
    shares, usage, acc, runc, fsf float64 (A,): per account normalised shares, decayed
    usage (core-s), usage of the open calc period, running cores, fair-share factor;
    blocked int64 (P,): stamp of the pass that blocked each partition; ustamp, ucount
    int64 (U,): per-user tested jobs in the current cycle; arrived int64 (n,): the jobs in
    the order they joined the queue (par[P_ARRIVED] entries; with job dependencies not
    job index order, see the module docstring); cand, crank int64
    (bf_max_job_test,): the cycle's tested jobs and their ranks in the order; sufa, sufd
    int64 (bf_max_job_test, 4) and sufm int64 (bf_max_job_test,): see :func:`_suffixes`;
    plan: the backfill plan (:class:`Plan`)."""

    par: np.ndarray
    w: np.ndarray
    stat: np.ndarray
    prio: np.ndarray
    tier: np.ndarray
    pstart: np.ndarray
    plist: np.ndarray
    acct: np.ndarray
    user: np.ndarray
    cores: np.ndarray
    order: np.ndarray
    shares: np.ndarray
    usage: np.ndarray
    acc: np.ndarray
    runc: np.ndarray
    fsf: np.ndarray
    blocked: np.ndarray
    ustamp: np.ndarray
    ucount: np.ndarray
    arrived: np.ndarray
    cand: np.ndarray
    crank: np.ndarray
    sufa: np.ndarray
    sufd: np.ndarray
    sufm: np.ndarray
    plan: Plan


# --------------------------------------------------------------------------- priorities


@inline_kernel
def _roundup(t, res):
    return ((t + res - 1) // res) * res


@internal_kernel
def _refresh_fsf(sched):
    """fsf[a] = 2^(-U_a / S_a) (U the account's share of all usage, 0 while none)."""
    total = 0.0
    for a in range(sched.usage.shape[0]):
        total += sched.usage[a]
    for a in range(sched.usage.shape[0]):
        if sched.shares[a] <= 0.0:
            sched.fsf[a] = 0.0
        else:
            u = sched.usage[a] / total if total > 0.0 else 0.0
            sched.fsf[a] = 2.0 ** (-u / sched.shares[a])


@inline_kernel
def _accrue(sched, t):
    """Charge the running cores of every account up to ``t``."""
    par = sched.par
    dt = t - par[P_T_ACC]
    if dt > 0:
        for a in range(sched.acc.shape[0]):
            sched.acc[a] += sched.runc[a] * float(dt)
        par[P_T_ACC] = t


@internal_kernel
def _clock(sched, t):
    """Fold in the usage of every calc instant up to ``t`` (decay, then the period's
    usage), then accrue up to ``t``."""
    par = sched.par
    if par[P_USAGE] == 0:
        return
    while par[P_NEXT_CALC] <= t:
        r = par[P_NEXT_CALC]
        _accrue(sched, r)
        f = 2.0 ** (-float(r - par[P_R_PREV]) / float(par[P_HALF]))
        for a in range(sched.usage.shape[0]):
            sched.usage[a] = sched.usage[a] * f + sched.acc[a]
            sched.acc[a] = 0.0
        par[P_R_PREV] = r
        par[P_NEXT_CALC] = r + par[P_CALC]
        _refresh_fsf(sched)
    _accrue(sched, t)


@inline_kernel
def _priority(sched, jobs, j, at):
    """Job j's priority as of ``at`` (s)."""
    par = sched.par
    if par[P_BASIC] != 0:
        return 0.0
    w = sched.w
    age = float(min(max(at - jobs[j, J_SUBMIT], 0), par[P_MAX_AGE])) / float(par[P_MAX_AGE])
    return sched.stat[j] + w[W_AGE] * age + w[W_FS] * sched.fsf[sched.acct[j]]


@inline_kernel
def _before(sched, a, b):
    """Whether job a goes before job b: tier high first, priority high first, index."""
    ta, tb = sched.tier[a], sched.tier[b]
    if ta != tb:
        return ta > tb
    pa, pb = sched.prio[a], sched.prio[b]
    if pa != pb:
        return pa > pb
    return a < b


@inline_kernel
def _order(sched):
    """The order in use (a view from par[P_HEAD]; par[P_ON] entries)."""
    return sched.order[sched.par[P_HEAD]:]


@inline_kernel
def _hole(sched, r):
    """The job at rank r of the order started: the next compaction must reach it."""
    par = sched.par
    par[P_HOLE_LO] = min(par[P_HOLE_LO], r)
    par[P_HOLE_HI] = max(par[P_HOLE_HI], r)


@internal_kernel
def _compact(sched, jobs):
    """Drop the started jobs from the order, moving the shorter side of the holes' span:
    the jobs before the last hole forwards (the head advances; the usual case, as the
    jobs that start are mostly near the front) or those after the first hole back."""
    par = sched.par
    lo, hi = par[P_HOLE_LO], par[P_HOLE_HI]
    if hi < 0:
        return
    par[P_HOLE_LO] = INF
    par[P_HOLE_HI] = -1
    order = _order(sched)
    n_on = par[P_ON]
    if hi + 1 <= n_on - lo:
        w = hi
        for r in range(hi, -1, -1):
            j = order[r]
            if jobs[j, J_STATE] == JobState.QUEUED:
                order[w] = j
                w -= 1
        par[P_HEAD] += w + 1
        par[P_ON] = n_on - (w + 1)
    else:
        w = lo
        for r in range(lo, n_on):
            j = order[r]
            if jobs[j, J_STATE] == JobState.QUEUED:
                order[w] = j
                w += 1
        par[P_ON] = w


@internal_kernel
def _resort(sched):
    """Insertion sort of the order (after a recalc it is nearly sorted); returns whether
    anything moved."""
    order = _order(sched)
    moved = False
    for r in range(1, sched.par[P_ON]):
        j = order[r]
        p = r - 1
        while p >= 0 and _before(sched, j, order[p]):
            order[p + 1] = order[p]
            p -= 1
        if p != r - 1:
            moved = True
        order[p + 1] = j
    return moved


@internal_kernel
def _insert(sched, j):
    """Put a new waiting job at its place in the (compacted) order."""
    order = _order(sched)
    lo, hi = 0, sched.par[P_ON]
    while lo < hi:
        mid = (lo + hi) >> 1
        if _before(sched, order[mid], j):
            lo = mid + 1
        else:
            hi = mid
    for k in range(sched.par[P_ON], lo, -1):
        order[k] = order[k - 1]
    order[lo] = j
    sched.par[P_ON] += 1


@internal_kernel
def _update_priorities(sched, core, now):
    """Recompute the waiting jobs' priorities at the last calc instant <= now (when
    they age), give arrivals theirs, keep the order sorted; marks the plan dirty when
    the order changed."""
    par = sched.par
    jobs = core.jobs
    _clock(sched, now)
    _compact(sched, jobs)
    if par[P_AGING] != 0 and now >= par[P_T0]:
        r = par[P_T0] + ((now - par[P_T0]) // par[P_CALC]) * par[P_CALC]
        if r > par[P_PRIO_AT]:
            par[P_PRIO_AT] = r
            if par[P_USAGE] == 0:
                par[P_NEXT_CALC] = r + par[P_CALC]
            order = _order(sched)
            for k in range(par[P_ON]):
                j = order[k]
                sched.prio[j] = _priority(sched, jobs, j, r)
            if _resort(sched):
                par[P_DIRTY] = 1
                par[P_NOFIT] = 0
    for k in range(par[P_SEEN], par[P_ARRIVED]):
        j = sched.arrived[k]
        if jobs[j, J_STATE] == JobState.QUEUED:
            sched.prio[j] = _priority(sched, jobs, j, jobs[j, J_SUBMIT])
            _insert(sched, j)
            par[P_DIRTY] = 1
    par[P_SEEN] = par[P_ARRIVED]


@inline_kernel
def _priorities_due(sched, core, now):
    """Whether :func:`_update_priorities` has anything to do at now: usage to accrue,
    started jobs to drop from the order, a calc instant passed (when priorities age) or
    arrivals.  Checked before the call, as a call passes every array of the state and
    the core and most passes have nothing to do."""
    par = sched.par
    if par[P_USAGE] != 0 or par[P_HOLE_HI] >= 0 or par[P_SEEN] < par[P_ARRIVED]:
        return True
    return par[P_AGING] != 0 and now >= par[P_T0] and (
        par[P_T0] + ((now - par[P_T0]) // par[P_CALC]) * par[P_CALC] > par[P_PRIO_AT])


@inline_kernel
def _started(sched, core, j, now):
    """Job j started at now: its account's running cores grow."""
    sched.par[P_DIRTY] = 1
    if sched.par[P_NOFIT] == 2:
        sched.par[P_NOFIT] = 0  # a job the last cycle left untested may now be tested
    if sched.par[P_USAGE] != 0:
        _clock(sched, now)
        sched.runc[sched.acct[j]] += float(sched.cores[j])


# --------------------------------------------------------------------------- main scheduler


@internal_kernel
def _offer(core, alloc, j, now):
    """try_start in one place (each inlined copy of the allocator costs compile time)."""
    return try_start(core, alloc, j, now)


@inline_kernel  # once per pass: a call would pass every array of the state and the core
def _main(sched, core, alloc, now):
    """Slurm's main loop: priority order, at most default_queue_depth jobs; a job that
    cannot start blocks its partitions for the rest of the pass, and a job whose
    partitions are all blocked is passed over."""
    par = sched.par
    par[P_STAMP] += 1
    stamp = par[P_STAMP]
    jobs = core.jobs
    blocked = sched.blocked
    order = _order(sched)
    visited = 0
    n_blocked = 0
    for r in range(par[P_ON]):
        if n_blocked == blocked.shape[0]:
            break  # every partition is blocked: nothing more can start
        if visited >= par[P_DEPTH]:
            break
        j = order[r]
        if jobs[j, J_STATE] != JobState.QUEUED:
            continue
        visited += 1
        open_part = False
        for q in range(sched.pstart[j], sched.pstart[j + 1]):
            if blocked[sched.plist[q]] != stamp:
                open_part = True
                break
        if not open_part:
            continue
        if _offer(core, alloc, j, now):
            _started(sched, core, j, now)
            _hole(sched, r)
        else:
            for q in range(sched.pstart[j], sched.pstart[j + 1]):
                p = sched.plist[q]
                if blocked[p] != stamp:
                    blocked[p] = stamp
                    n_blocked += 1


# --------------------------------------------------------------------------- the backfill plan


@inline_kernel
def _fit_on(avail, jobs, j, ident, out_node, out_count, elig):
    """Place job j on the free amounts ``avail`` (int64 (mm, 4)) in index order into
    out_node / out_count, on the nodes of its class (elig: the core's uint8 (k, m) node
    classes); the nodes used or -1.  Every fit test of the per-node plan goes through here
    (the aggregate plan is used only when every job may use every node)."""
    return place(avail, ident, np.int64(0), jobs[j, J_UNITS], jobs[j, J_REQ : J_REQ + N_RES],
                  jobs[j, J_REQ_NODES], out_node, out_count, elig[jobs[j, J_CLASS]])


@internal_kernel
def _plan_reset(sched, core, now):
    """The plan of the running jobs: free resources now, each running job's resources
    back at its expected end rounded up to bf_resolution (at least one step after now)."""
    par = sched.par
    jobs = core.jobs
    plan = sched.plan
    bt, bav = plan.bt, plan.bavail
    res = par[P_BF_RES]
    pool = par[P_POOL] != 0
    mm = bav.shape[1]
    btot = plan.btot
    bt[0] = now
    for k in range(N_RES):
        btot[0, k] = core.scal[C_FREE + k]
    if not pool:
        for i in range(mm):
            for k in range(N_RES):
                bav[0, i, k] = core.free[i, k]
    nb = 1
    log = core.log
    for r in range(core.scal[C_RN]):
        j = core.run_list[r, 1]
        key = jobs[j, J_RUN_KEY]
        # the running list is sorted by key: a key within the last breakpoint (a
        # multiple of res once there are two) rounds up to it, no division needed
        e = bt[nb - 1] if nb > 1 and key <= bt[nb - 1] else _roundup(max(key, now + 1), res)
        if e > bt[nb - 1]:
            bt[nb] = e
            for i in range(mm):
                for k in range(N_RES):
                    bav[nb, i, k] = bav[nb - 1, i, k]
            for k in range(N_RES):
                btot[nb, k] = btot[nb - 1, k]
            nb += 1
        b = nb - 1
        for k in range(N_RES):
            btot[b, k] += jobs[j, J_UNITS] * jobs[j, J_REQ + k]
        if not pool:
            p = jobs[j, J_PTR]
            for u in range(jobs[j, J_NODES]):
                node = log[p + u, 0]
                for k in range(N_RES):
                    bav[b, node, k] += log[p + u, 1] * jobs[j, J_REQ + k]
    par[P_NB] = nb


@inline_kernel  # the per-job kernels of a cycle are inlined: a call's arguments cost as much
def _breakpoint(plan, t):
    """Index of the plan's breakpoint at ``t`` (> bt[0]), inserted (with the free
    amounts of the one before) when missing."""
    par = plan.par
    bt, bav = plan.bt, plan.bavail
    nb = par[P_NB]
    lo, hi = 0, nb
    while lo < hi:
        mid = (lo + hi) >> 1
        if bt[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    if lo < nb and bt[lo] == t:
        return lo
    mm = bav.shape[1]
    btot = plan.btot
    for b in range(nb, lo - 1, -1):  # row lo - 1 copied into lo: the free amounts just before t
        bt[b] = bt[b - 1]
        for i in range(mm):
            for k in range(N_RES):
                bav[b, i, k] = bav[b - 1, i, k]
        for k in range(N_RES):
            btot[b, k] = btot[b - 1, k]
    bt[lo] = t
    par[P_NB] = nb + 1
    return lo


@inline_kernel
def _take(plan, jobs, j, b0, end, nodes, counts, used):
    """Take job j's placement (``used`` nodes of nodes / counts, plan nodes) from the
    plan over [bt[b0], end); ``end`` must be a breakpoint or beyond the last."""
    bt, bav, btot = plan.bt, plan.bavail, plan.btot
    pool = plan.par[P_POOL] != 0
    b = b0
    while b < plan.par[P_NB] and bt[b] < end:
        for k in range(N_RES):
            btot[b, k] -= jobs[j, J_UNITS] * jobs[j, J_REQ + k]
        if not pool:
            for u in range(used):
                for k in range(N_RES):
                    bav[b, nodes[u], k] -= counts[u] * jobs[j, J_REQ + k]
        b += 1


@inline_kernel
def _earliest(plan, jobs, elig, j, d, horizon):
    """The first breakpoint b (bt[b] <= horizon) from which job j fits on the plan for
    ``d`` s, with its placement on the plan nodes in pnode / pcount (par[P_USED] nodes),
    or -1 when none within the horizon."""
    par = plan.par
    if par[P_POOL] == 0:
        return _earliest_on_nodes(plan, jobs, elig, j, d, horizon)
    bt, btot = plan.bt, plan.btot
    nb = par[P_NB]
    # a pool job asks for one type only (and for 1 of it per unit)
    kind = 0
    for k in range(N_RES):
        if jobs[j, J_REQ + k] > 0:
            kind = k
    need = jobs[j, J_UNITS] * jobs[j, J_REQ + kind]
    b = 0
    while b < nb and bt[b] <= horizon:
        end = bt[b] + d
        # one aggregate node: the job fits iff every breakpoint in the window has
        # enough, so the next candidate follows the first that has not
        bad = -1
        bb = b
        while bb < nb and (bb == b or bt[bb] < end):
            if btot[bb, kind] < need:
                bad = bb
                break
            bb += 1
        if bad < 0:
            par[P_USED] = 1
            plan.pnode[0] = 0
            plan.pcount[0] = jobs[j, J_UNITS]
            return b
        b = bad + 1
    return -1


@inline_kernel
def _row_may_host(free, el, req, per, want):
    """Whether the free amounts ``free`` (int64 (mm, 4): one breakpoint's row of the plan)
    could host the job on its eligible nodes (el: uint8 (mm,)): ``want`` units when
    ``per`` is -1 (a free spread), else ``want`` nodes hosting ``per`` units each (compared
    without dividing).  Stops at the first node that makes it true, or once the nodes left
    are too few."""
    mm = free.shape[0]
    got = 0
    if per < 0:
        for i in range(mm):
            if el[i] != 0:
                got += host(free, i, req)
                if got >= want:
                    return 1
        return 0
    n0, n1, n2, n3 = per * req[0], per * req[1], per * req[2], per * req[3]
    for i in range(mm):
        if (el[i] != 0 and free[i, 0] >= n0 and free[i, 1] >= n1 and free[i, 2] >= n2
                and free[i, 3] >= n3):
            got += 1
            if got >= want:
                return 1
        elif got + (mm - 1 - i) < want:
            return 0
    return 0


@internal_kernel
def _earliest_on_nodes(plan, jobs, elig, j, d, horizon):
    """:func:`_earliest` on the per-node plan.

    A window's least free amounts are at most those of each of its breakpoints, so a
    breakpoint that could not host the job alone (its totals short of the job's ask, or
    its nodes: :func:`_row_may_host`) rules out every window that holds it, and the next
    candidate follows it, as on the aggregate plan.  Each breakpoint is judged once per
    call (plan.rowok), and only a window whose breakpoints all pass is computed per node
    (its least free amounts, in scratch), for the job's eligible nodes and requested
    types: the ones placement reads."""
    par = plan.par
    bt, btot, bav, scratch, rowok = plan.bt, plan.btot, plan.bavail, plan.scratch, plan.rowok
    nb = par[P_NB]
    mm = bav.shape[1]
    el = elig[jobs[j, J_CLASS]]
    units = jobs[j, J_UNITS]
    req = jobs[j, J_REQ : J_REQ + N_RES]
    req_nodes = jobs[j, J_REQ_NODES]
    per = units // req_nodes if req_nodes > 0 else -1
    want = req_nodes if req_nodes > 0 else units
    known = 0  # rowok[b:known] is this call's verdict on those breakpoints
    b = 0
    while b < nb and bt[b] <= horizon:
        end = bt[b] + d
        known = max(known, b)
        bad = -1
        bb = b
        while bad < 0 and bb < nb and (bb == b or bt[bb] < end):
            if bb == known:
                ok = 0
                if totals_decide(units, req, req_nodes, btot[bb]) != 0:
                    ok = _row_may_host(bav[bb], el, req, per, want)
                rowok[bb] = ok
                known += 1
            if rowok[bb] == 0:
                bad = bb
            bb += 1
        if bad >= 0:
            b = bad + 1
            continue
        for i in range(mm):
            if el[i] != 0:
                for k in range(N_RES):
                    scratch[i, k] = bav[b, i, k]
        bb = b + 1
        while bb < nb and bt[bb] < end:
            for i in range(mm):
                if el[i] != 0:
                    for k in range(N_RES):
                        if req[k] > 0 and bav[bb, i, k] < scratch[i, k]:
                            scratch[i, k] = bav[bb, i, k]
            bb += 1
        used = _fit_on(scratch, jobs, j, plan.ident, plan.pnode, plan.pcount, elig)
        if used >= 0:
            par[P_USED] = used
            return b
        b += 1
    return -1


@internal_kernel
def _allocator_ok(sched, core, j, used, end):
    """Whether the allocator's placement (core.work) stays within the plan over
    [now, end): it then delays no reservation."""
    jobs = core.jobs
    bt, bav = sched.plan.bt, sched.plan.bavail
    b = 0
    while b < sched.par[P_NB] and bt[b] < end:
        for u in range(used):
            node = core.work[W_NODE, u]
            for k in range(N_RES):
                if bav[b, node, k] < core.work[W_COUNT, u] * jobs[j, J_REQ + k]:
                    return False
        b += 1
    return True


@internal_kernel
def _start_planned(sched, core, alloc, j, now, end):
    """Start job j now: on the allocator's nodes when they delay no reservation, else
    on the plan's; then take it from the plan.  A successful allocation attempt either
    way (Priority-Weighted hears of it after its node order was computed)."""
    jobs = core.jobs
    used = choose(alloc, core, j)
    attempt_succeeded(alloc, jobs, j)
    pool = sched.par[P_POOL] != 0
    if not pool and not _allocator_ok(sched, core, j, used, end):
        used = sched.par[P_USED]
        for u in range(used):
            core.work[W_NODE, u] = sched.plan.pnode[u]
            core.work[W_COUNT, u] = sched.plan.pcount[u]
    commit(core, alloc, j, now, used)
    _started(sched, core, j, now)
    if pool:
        _take(sched.plan, jobs, j, 0, end, sched.plan.pnode, sched.plan.pcount, 1)
    else:
        _take(sched.plan, jobs, j, 0, end, core.work[W_NODE], core.work[W_COUNT], used)


@internal_kernel
def _suffixes(sched, jobs, last):
    """For the tested jobs c <= ``last`` (from the back): sufa[c, k] / sufd[c, k], the
    least total amount of type k asked (INF: none asks for it) and the least limit (s)
    among jobs c.. that ask for type k; sufm[c], the set (bit v) of the sets v (bit k:
    type k asked) of types that jobs c.. ask for."""
    sufa, sufd, sufm = sched.sufa, sched.sufd, sched.sufm
    for c in range(last, -1, -1):
        j = sched.cand[c]
        d = max(jobs[j, J_PRED], 1)
        v = 0
        for k in range(N_RES):
            a = jobs[j, J_UNITS] * jobs[j, J_REQ + k]
            if c == last:
                sufa[c, k] = INF
                sufd[c, k] = INF
            else:
                sufa[c, k] = sufa[c + 1, k]
                sufd[c, k] = sufd[c + 1, k]
            if a > 0:
                v |= 1 << k
                sufa[c, k] = min(sufa[c, k], a)
                sufd[c, k] = min(sufd[c, k], d)
        sufm[c] = (np.int64(0) if c == last else sufm[c + 1]) | (np.int64(1) << v)


@inline_kernel
def _suffix_moved(sched, c):
    """Whether what the tested jobs from c on ask (:func:`_suffixes`) differs from c - 1 on."""
    if sched.sufm[c] != sched.sufm[c - 1]:
        return True
    for k in range(N_RES):
        if sched.sufa[c, k] != sched.sufa[c - 1, k] or sched.sufd[c, k] != sched.sufd[c - 1, k]:
            return True
    return False


@inline_kernel
def _none_can_start(plan, sufa, sufd, sufm, c):
    """Whether no tested job from c on can start now on the plan: each asks for some type
    k of which every such job asks more than the plan's least total over [now, now +
    their least limit) (a job starts now only if its totals fit over its whole limit, and
    later reservations only take more)."""
    bt, btot = plan.bt, plan.btot
    nb = plan.par[P_NB]
    short = 0  # bit k: type k is short for every job from c on that asks for it
    for k in range(N_RES):
        a = sufa[c, k]
        if a >= INF:
            continue
        until = bt[0] + sufd[c, k]
        least = btot[0, k]
        b = 1
        while b < nb and bt[b] < until and least >= a:
            least = min(least, btot[b, k])
            b += 1
        if least < a:
            short |= 1 << k
    sets = sufm[c]
    for v in range(1 << N_RES):
        if (sets >> v) & 1 and (v & short) == 0:
            return False
    return True


@internal_kernel
def _backfill(sched, core, alloc, now):
    """One backfill cycle at now (module docstring)."""
    par = sched.par
    jobs = core.jobs
    if par[P_NOFIT] != 0:
        # every job tested then still does not fit (the free resources only shrank): the
        # cycle can start something only if a job that arrived since fits now
        arrived_fits = False
        for k in range(par[P_CYCLE_SEEN], par[P_SEEN]):
            j = sched.arrived[k]
            if jobs[j, J_STATE] == JobState.QUEUED and fits_now(core, j):
                arrived_fits = True
                break
        par[P_CYCLE_SEEN] = par[P_SEEN]
        if not arrived_fits:
            par[P_DIRTY] = 0
            par[P_REQUIRED] = INF
            return
    par[P_STAMP] += 1
    stamp = par[P_STAMP]
    # the tested jobs, and the last of them that fits the free resources now: no job
    # after it can start in this cycle (free resources only shrink)
    last_fit = -1
    limit_user = par[P_BF_USER]
    _compact(sched, jobs)  # drop the jobs the main loop started: every entry is waiting
    order = _order(sched)
    if limit_user == 0:
        n_cand = min(par[P_ON], par[P_BF_TEST])
        every = n_cand == par[P_ON]  # whether every waiting job is tested
        for r in range(n_cand):
            sched.cand[r] = order[r]
            sched.crank[r] = r
    else:
        n_cand = 0
        every = True
        for r in range(par[P_ON]):
            if n_cand >= par[P_BF_TEST]:
                every = False
                break
            j = order[r]
            u = sched.user[j]
            if sched.ustamp[u] != stamp:
                sched.ustamp[u] = stamp
                sched.ucount[u] = 0
            if sched.ucount[u] >= limit_user:
                every = False
                continue
            sched.ucount[u] += 1
            sched.cand[n_cand] = j
            sched.crank[n_cand] = r
            n_cand += 1
    # the last tested job that fits now, from the back (usually near the end)
    for c in range(n_cand - 1, -1, -1):
        if fits_now(core, sched.cand[c]):
            last_fit = c
            break
    par[P_DIRTY] = 0
    par[P_NOFIT] = 0 if last_fit >= 0 else (1 if every else 2)
    par[P_CYCLE_SEEN] = par[P_SEEN]
    if last_fit < 0:
        par[P_REQUIRED] = INF  # nothing can start until something changes
        return
    _plan_reset(sched, core, now)
    _suffixes(sched, jobs, last_fit)
    plan = sched.plan
    res = par[P_BF_RES]
    horizon = now + par[P_BF_WIN]
    changed = True
    for c in range(last_fit + 1):
        # the test needs redoing only when the plan or what the jobs left ask changed
        if changed or _suffix_moved(sched, c):
            if _none_can_start(plan, sched.sufa, sched.sufd, sched.sufm, c):
                break  # the rest would only reserve, and nothing after them could start
        changed = False
        j = sched.cand[c]
        d = max(jobs[j, J_PRED], 1)
        b = _earliest(plan, jobs, core.elig, j, d, horizon)
        if b < 0:
            continue
        changed = True
        start = plan.bt[b]
        end = _roundup(start + d, res)
        _breakpoint(plan, end)
        if b == 0:
            _start_planned(sched, core, alloc, j, now, end)
            _hole(sched, sched.crank[c])
        else:
            _take(plan, jobs, j, b, end, plan.pnode, plan.pcount, par[P_USED])
    # the cycle's plan holds until a running job's expected end or a new breakpoint
    # entering the window
    req = INF
    nb = par[P_NB]
    if nb > 1:
        req = plan.bt[1]
    for b in range(1, nb):
        if plan.bt[b] > horizon:
            req = min(req, plan.bt[b] - par[P_BF_WIN])
            break
    par[P_REQUIRED] = req


# --------------------------------------------------------------------------- hooks


@inline_kernel
def _grid_at_or_after(t0, step, t):
    if t <= t0:
        return t0
    return t0 + ((t - t0 + step - 1) // step) * step


@internal_kernel
def _queue_in_order(sched, core):
    """Put the core's queue in slurm's scheduling order (for an allocator that reads the
    jobs queued behind the one it places: the authors' Weighted window).  Every queued job
    is in the order once the pass's arrivals got their priorities."""
    jobs = core.jobs
    queue_compact(jobs, core.queue, core.scal)
    w = core.scal[C_QH]
    order = _order(sched)
    for r in range(sched.par[P_ON]):
        j = order[r]
        if jobs[j, J_STATE] == JobState.QUEUED:
            core.queue[w] = j
            w += 1


@implements(schedule, Slurm)
@inline_kernel
def _pass(sched, core, pred, alloc, now):
    par = sched.par
    if _priorities_due(sched, core, now):
        _update_priorities(sched, core, now)
    if par[P_ON] == 0:
        return
    if reads_queue_order(alloc):
        _queue_in_order(sched, core)
    _main(sched, core, alloc, now)
    if core.scal[C_QN] == 0:
        return
    step = par[P_BF_INT]
    if step == 0:
        _backfill(sched, core, alloc, now)
    elif step > 0 and (now - par[P_T0]) % step == 0 and (par[P_DIRTY] != 0 or now >= par[P_REQUIRED]):
        _backfill(sched, core, alloc, now)


@implements(sched_wake, Slurm)
@inline_kernel
def _wake(sched, core):
    par = sched.par
    step = par[P_BF_INT]
    if step <= 0 or core.scal[C_QN] == 0:
        return -1
    last = core.scal[C_LAST_PASS]
    nxt = _grid_at_or_after(par[P_T0], step, last + 1)
    if par[P_DIRTY] != 0:
        return nxt
    need = par[P_REQUIRED]
    if par[P_AGING] != 0:
        need = min(need, par[P_T0] + ((max(last, par[P_T0]) - par[P_T0]) // par[P_CALC] + 1) * par[P_CALC])
    if need >= INF:
        return -1
    return _grid_at_or_after(par[P_T0], step, max(need, nxt))


@implements(sched_enqueued, Slurm)
@inline_kernel
def _enqueued(sched, core, j):
    """Job j joined the queue: logged for the next pass, which gives it its priority."""
    par = sched.par
    sched.arrived[par[P_ARRIVED]] = j
    par[P_ARRIVED] += 1


@implements(sched_released, Slurm)
@inline_kernel
def _released(sched, core, j, now):
    par = sched.par
    par[P_DIRTY] = 1
    par[P_NOFIT] = 0
    if par[P_USAGE] != 0:
        _clock(sched, now)
        sched.runc[sched.acct[j]] -= float(sched.cores[j])


@implements(sched_started_outside, Slurm)
@inline_kernel
def _started_outside(sched, core, j):
    par = sched.par
    par[P_DIRTY] = 1
    if par[P_NOFIT] == 2:
        par[P_NOFIT] = 0
    par[P_HOLE_LO] = 0  # its rank is not known here
    par[P_HOLE_HI] = max(par[P_ON] - 1, par[P_HOLE_HI])
    if par[P_USAGE] != 0:
        sched.runc[sched.acct[j]] += float(sched.cores[j])


# --------------------------------------------------------------------------- Python side


def resolve(setup, given: dict) -> dict:
    """The parameters of a run: the explicit option, else ``meta["slurm"]``'s value, else
    Slurm's default (:data:`DEFAULTS`), each checked."""
    conf = (setup.meta or {}).get("slurm") or {}
    out = {}
    for name, default in DEFAULTS.items():
        value = given.get(name)
        if value is None:
            value = conf.get(name, default)
            if name == "bf_interval" and str(conf.get("scheduler_type", "backfill")).lower() == "builtin":
                value = -1  # SchedulerType=sched/builtin: no backfill scheduler
        try:
            if isinstance(default, bool):
                value = value if isinstance(value, bool) else str(value).strip().lower() in ("1", "true", "yes", "on")
            elif isinstance(default, float):
                value = float(value)
            elif isinstance(default, int):
                value = int(value)
            else:
                value = str(value).strip().lower().removeprefix("priority/")
        except (TypeError, ValueError):
            raise UsageError(f"slurm: {name}={value!r} is not a {type(default).__name__}") from None
        out[name] = value
    if out["priority_type"] not in ("multifactor", "basic"):
        raise UsageError(f"slurm: priority_type must be multifactor or basic, not {out['priority_type']!r}")
    for name in ("weight_age", "weight_fairshare", "weight_jobsize", "weight_partition", "weight_qos"):
        if not (np.isfinite(out[name]) and out[name] >= 0):
            raise UsageError(f"slurm: {name} must be a finite number >= 0")
    for name in ("max_age", "calc_period", "default_queue_depth", "bf_max_job_test", "bf_resolution"):
        if out[name] < 1:
            raise UsageError(f"slurm: {name} must be >= 1")
    for name in ("decay_half_life", "bf_window", "bf_max_job_user"):
        if out[name] < 0:
            raise UsageError(f"slurm: {name} must be >= 0")
    if out["bf_interval"] < -1:
        raise UsageError("slurm: bf_interval must be >= 0, or -1 (no backfill)")
    return out


def _partitions(setup):
    """Each job's partitions (a job submitted to "a,b" has two; one without, or with none
    the machine knows, the default one, else the first) as ``(pstart int64 (n+1,), plist
    int64)`` (job j's indices into ``machine.partitions`` are plist[pstart[j]:pstart[j+1]]),
    its PriorityTier and normalised PriorityJobFactor (the largest over its partitions),
    and the number of partitions (at least 1)."""
    n = setup.jobs.shape[0]
    parts = tuple(setup.machine.partitions or ())
    if not parts:
        return np.arange(n + 1, dtype=np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n), 1
    by_name = {p.name: i for i, p in enumerate(parts)}
    default = next((i for i, p in enumerate(parts) if p.default), 0)
    tiers = np.array([p.tier for p in parts], dtype=np.int64)
    factors = np.array([p.job_factor for p in parts], dtype=np.float64)
    top = factors.max()
    norm = factors / top if top > 0 else np.zeros_like(factors)
    # one entry per partition code: its partition indices
    index_of_code: dict[int, list[int]] = {}
    for name, code in ((setup.meta or {}).get("partitions") or {}).items():
        index_of_code[int(code)] = sorted({by_name[s.strip()] for s in str(name).split(",") if s.strip() in by_name})
    codes, inverse = np.unique(np.asarray(setup.table.partition, dtype=np.int64), return_inverse=True)
    lists = [index_of_code.get(int(c)) or [default] for c in codes]
    counts = np.array([len(x) for x in lists], dtype=np.int64)[inverse.reshape(-1)]
    pstart = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=pstart[1:])
    plist = np.concatenate([np.array(lists[c], dtype=np.int64) for c in inverse.reshape(-1)]) if n else \
        np.zeros(0, np.int64)
    tier = np.array([tiers[x].max() for x in lists], dtype=np.int64)[inverse.reshape(-1)]
    pfac = np.array([norm[x].max() for x in lists])[inverse.reshape(-1)]
    return pstart, plist, tier, pfac, len(parts)


def _named_factor(setup, codes, table_key, meta_key):
    """Per job: the value of its code in ``meta["slurm_accounts"][table_key]`` ({name:
    value}) through ``meta[meta_key]`` ({name: code}); None when absent."""
    meta = setup.meta or {}
    values = (meta.get("slurm_accounts") or {}).get(table_key) or {}
    names = meta.get(meta_key) or {}
    if not values or not names:
        return None
    by_code = {int(code): float(values[name]) for name, code in names.items() if name in values}
    return by_code


def slurm(setup, **given) -> JittedScheduler:
    opts = resolve(setup, given)
    J = setup.jobs
    n = J.shape[0]
    machine = setup.machine
    cap = machine.capacity
    m = cap.shape[0]
    pstart, plist, tier, pfac, n_parts = _partitions(setup)
    # QOS factor
    qfac = np.zeros(n)
    qos = _named_factor(setup, setup.table.queue, "qos_priority", "qos")
    if qos:
        top = max(qos.values())
        if top > 0:
            qcodes = np.asarray(setup.table.queue, dtype=np.int64)
            qfac = np.array([qos.get(int(c), 0.0) / top for c in qcodes]) if n else qfac
    # job size factor (priority_multifactor.c, without SMALL_RELATIVE_TO_TIME)
    cores = (J[:, J_UNITS] * J[:, J_REQ]).astype(np.int64)
    min_nodes = np.where(J[:, J_REQ_NODES] > 0, J[:, J_REQ_NODES], 1).astype(np.float64)
    cluster_cpus = float(max(int(cap[:, 0].sum()), 1))
    if opts["favor_small"]:
        js = np.where(cores > 0, ((m - min_nodes) / m + (cluster_cpus - cores) / cluster_cpus) / 2, (m - min_nodes) / m)
    else:
        js = np.where(cores > 0, (min_nodes / m + cores / cluster_cpus) / 2, min_nodes / m)
    js = np.clip(js, 0.0, 1.0)
    w = np.array([opts["weight_age"], opts["weight_fairshare"], opts["weight_jobsize"], opts["weight_partition"],
                  opts["weight_qos"]])
    basic = opts["priority_type"] == "basic"
    stat = np.zeros(n) if basic else w[W_JS] * js + w[W_PART] * pfac + w[W_QOS] * qfac
    # accounts (the job matrix's group) and their shares
    groups = np.asarray(J[:, J_GROUP], dtype=np.int64)
    acct_codes, acct = np.unique(groups, return_inverse=True)
    shares = np.ones(acct_codes.size)
    given_shares = _named_factor(setup, None, "shares", "accounts")
    if given_shares:
        shares = np.array([given_shares.get(int(c), 1.0) for c in acct_codes])
    shares = shares / shares.sum() if shares.sum() > 0 else shares
    users, user = np.unique(np.asarray(J[:, J_USER], dtype=np.int64), return_inverse=True)
    live = J[:, J_STATE] != JobState.DROPPED
    t0 = int(J[live, J_SUBMIT].min()) if live.any() else 0
    pool = bool(setup.all_pool)  # a job limited to some nodes is never a pool job
    mm = 1 if pool else m
    units = int(cap[:, :3].sum()) if m else 1
    test = int(opts["bf_max_job_test"])
    rows = min(units, n) + 2 * min(test, n) + 4
    aging = not basic and (w[W_AGE] > 0 or w[W_FS] > 0)
    usage = not basic and w[W_FS] > 0
    par = np.zeros(N_PAR, np.int64)
    par[P_BASIC] = int(basic)
    par[P_MAX_AGE] = opts["max_age"]
    par[P_HALF] = opts["decay_half_life"] or INF  # 0: no decay
    par[P_CALC] = opts["calc_period"]
    par[P_DEPTH] = opts["default_queue_depth"]
    par[P_BF_INT] = opts["bf_interval"]
    par[P_BF_TEST] = test
    par[P_BF_WIN] = opts["bf_window"]
    par[P_BF_RES] = opts["bf_resolution"]
    par[P_BF_USER] = opts["bf_max_job_user"]
    par[P_T0] = t0
    par[P_REQUIRED] = INF
    par[P_NEXT_CALC] = t0 + opts["calc_period"]
    par[P_PRIO_AT] = t0 if aging else INF  # first recalc: t0 + calc_period
    par[P_AGING] = int(aging)
    par[P_USAGE] = int(usage)
    par[P_T_ACC] = t0
    par[P_R_PREV] = t0
    par[P_POOL] = int(pool)
    par[P_HOLE_LO] = INF
    par[P_HOLE_HI] = -1
    fsf = np.ones(acct_codes.size)
    fsf[shares <= 0] = 0.0
    state = Slurm(
        par=par, w=w, stat=np.ascontiguousarray(stat, dtype=np.float64), prio=np.zeros(n),
        tier=np.ascontiguousarray(tier, dtype=np.int64), pstart=pstart, plist=plist,
        acct=acct.astype(np.int64), user=user.astype(np.int64), cores=cores, order=np.zeros(n, np.int64),
        shares=shares.astype(np.float64), usage=np.zeros(acct_codes.size), acc=np.zeros(acct_codes.size),
        runc=np.zeros(acct_codes.size), fsf=fsf, blocked=np.zeros(max(n_parts, 1), np.int64),
        ustamp=np.zeros(max(users.size, 1), np.int64), ucount=np.zeros(max(users.size, 1), np.int64),
        arrived=np.zeros(n, np.int64), cand=np.zeros(max(test, 1), np.int64),
        crank=np.zeros(max(test, 1), np.int64), sufa=np.zeros((max(test, 1), N_RES), np.int64),
        sufd=np.zeros((max(test, 1), N_RES), np.int64), sufm=np.zeros(max(test, 1), np.int64),
        plan=Plan(
            par=par, bt=np.zeros(rows, np.int64), btot=np.zeros((rows, N_RES), np.int64),
            bavail=np.zeros((rows, 0 if pool else m, N_RES), np.int64), scratch=np.zeros((mm, N_RES), np.int64),
            ident=np.arange(mm, dtype=np.int64), pnode=np.zeros(mm, np.int64), pcount=np.zeros(mm, np.int64),
            rowok=np.zeros(rows, np.int64),
        ),
    )
    return JittedScheduler(state, options=opts)
