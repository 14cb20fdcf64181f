"""The engine's steps: arrivals, starts, ends, decision points, the timeline.

Every function here takes the :class:`schedbench.core.state.Core` (or the arrays of it
that it touches) and the states of the run's predictor, scheduler and allocator, which it
reaches only through :mod:`schedbench.core.hooks`.  At one instant every ending job frees
its resources first, then every arriving job joins the queue in (submit, id) order, then
one scheduling pass runs (``docs/reference/replay-contract.md`` §3).  A job of run time 0
ends at its start instant through a new END event at that instant, which is processed,
with another pass, right after the pass that started it.

Jobs arrive in the order of the job matrix, which must be sorted by (submit, job_id) (the
readers guarantee it): job index order is therefore (submit, id) order.  With job
dependencies, a BLOCKED job is skipped there: its predecessor's end releases it (a SUBMIT
event at that end plus its think time, its J_SUBMIT set to that instant), and the
arrivals of one instant, read or released, join the queue in job index order.
"""

from __future__ import annotations

import numpy as np

from .._jit import inline_kernel, internal_kernel, kernel
from .heap import Event, _pop, _push, _push_seq
from .hooks import (
    alloc_committed,
    alloc_enqueued,
    alloc_released,
    attempt_failed,
    attempt_succeeded,
    choose,
    learn,
    predict,
    revise,
    revises,
    sched_enqueued,
    sched_released,
    sched_started_outside,
    sched_wake,
    schedule,
)
from .layout import (
    J_END,
    J_NODES,
    J_PRED,
    J_PTR,
    J_REQ,
    J_RUN,
    J_RUN_KEY,
    J_START,
    J_STATE,
    J_SUBMIT,
    N_RES,
    JobState,
)
from .placement import _fits_now
from .queue import _queue_insert
from .state import (
    C_CAP,
    C_DONE,
    C_ENDED,
    C_FREE,
    C_HN,
    C_LAST_PASS,
    C_LIVE,
    C_LOG,
    C_MAINT,
    C_MNEXT,
    C_NEXT,
    C_PASSES,
    C_PERIOD,
    C_QN,
    C_REVISED,
    C_RN,
    C_STARTED,
    C_TICK0,
    C_TL,
    W_COUNT,
    W_NODE,
)

_NO_NODE = np.iinfo(np.int64).max

# --------------------------------------------------------------------------- running list


@inline_kernel
def _run_pos(run_list, rn, key, j):
    """Position of (key, j) in the first ``rn`` rows of the sorted running list (unsigned
    positions: no wrap-around on each access)."""
    u1 = np.uint64(1)
    lo, hi = np.uint64(0), np.uint64(rn)
    while lo < hi:
        mid = (lo + hi) >> u1
        if run_list[mid, 0] < key or (run_list[mid, 0] == key and run_list[mid, 1] < j):
            lo = mid + u1
        else:
            hi = mid
    return np.int64(lo)


@inline_kernel
def _shift_rows(rows, lo, hi, by):
    """Move rows[lo:hi] of an int64 (n, 2) array by ``by`` (+1 or -1) rows, in place.
    Unsigned indices: numba then leaves out the negative-index wrap-around of every access,
    which made this loop (a job's end removing it from the running list) 13 % of EASY's
    replay loop on HPC2N."""
    u1 = np.uint64(1)
    if by > 0:
        r = np.uint64(hi)
        stop = np.uint64(lo)
        while r > stop:
            rows[r, 0] = rows[r - u1, 0]
            rows[r, 1] = rows[r - u1, 1]
            r -= u1
    else:
        r = np.uint64(lo)
        stop = np.uint64(hi)
        while r < stop:
            rows[r - u1, 0] = rows[r, 0]
            rows[r - u1, 1] = rows[r, 1]
            r += u1


# --------------------------------------------------------------------------- starts and ends


@internal_kernel
def _commit(jobs, run_list, heap, log, free, work, scal, alloc, j, now, used):
    """Start job ``j`` at ``now`` on the ``used`` nodes of work[W_NODE] / work[W_COUNT]:
    append them to the allocation ``log``, take their resources from ``free``, insert the
    job into the running list, push its END event, tell the allocator.  The caller knows
    the placement fits and that the log has room (:func:`_advance` makes sure)."""
    p = scal[C_LOG]
    jobs[j, J_PTR] = p
    scal[C_LOG] = p + used
    for u in range(used):
        log[p + u, 0] = work[W_NODE, u]
        log[p + u, 1] = work[W_COUNT, u]
    for k in range(N_RES):  # type by type: most jobs request one or two types
        r = jobs[j, J_REQ + k]
        if r == 0:
            continue
        total = 0
        for u in range(used):
            amount = work[W_COUNT, u] * r
            free[work[W_NODE, u], k] -= amount
            total += amount
        scal[C_FREE + k] -= total
    jobs[j, J_START] = now
    jobs[j, J_END] = now + jobs[j, J_RUN]
    jobs[j, J_NODES] = used
    jobs[j, J_STATE] = JobState.RUNNING
    key = now + jobs[j, J_PRED]
    jobs[j, J_RUN_KEY] = key
    rn = scal[C_RN]
    pos = _run_pos(run_list, rn, key, j)
    _shift_rows(run_list, pos, rn, 1)
    run_list[pos, 0] = key
    run_list[pos, 1] = j
    scal[C_RN] = rn + 1
    scal[C_QN] -= 1
    scal[C_STARTED] += 1
    alloc_committed(alloc, jobs, j)
    _push(heap, scal, now + jobs[j, J_RUN], Event.END, j)


@inline_kernel
def _commit_placed(core, alloc, j, now, used):
    """:func:`_commit` job ``j`` on the placement in core.work."""
    _commit(core.jobs, core.run_list, core.heap, core.log, core.free, core.work, core.scal, alloc, j, now, used)


@inline_kernel
def _first_window_after(mspan, mwin, node, t):
    """The row of mwin holding ``node``'s first maintenance window ending after t
    (mspan[node, 1] when none).  mspan int64 (m, 2), mwin int64 (w, 2): node i's windows
    are mwin[mspan[i, 0] : mspan[i, 1]], sorted."""
    lo, hi = mspan[node, 0], mspan[node, 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if mwin[mid, 1] <= t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@inline_kernel
def _window_meets(mspan, mwin, node, t, end):
    """Whether a maintenance window of ``node`` meets [t, end) (arrays as
    :func:`_first_window_after`)."""
    lo = _first_window_after(mspan, mwin, node, t)
    return lo < mspan[node, 1] and mwin[lo, 0] < end


@internal_kernel
def _mask(core, j, now):
    """Hide from job ``j`` the nodes whose maintenance windows meet [now, now + max(pred,
    1)): their free amounts go to core.msave and out of core.free and the free totals
    until :func:`_unmask` (no job runs across a window on an affected node)."""
    end = now + max(core.jobs[j, J_PRED], 1)
    scal = core.scal
    for node in core.mnodes:
        if _window_meets(core.mspan, core.mwin, node, now, end):
            for k in range(N_RES):
                core.msave[node, k] = core.free[node, k]
                scal[C_FREE + k] -= core.free[node, k]
                core.free[node, k] = 0


@internal_kernel
def _unmask(core, alloc, j):
    """Give back what :func:`_mask` hid from job ``j`` (placements never take a hidden
    node), and tell the allocator, as for an end: its hints may have skipped them."""
    scal = core.scal
    lowest = _NO_NODE
    for node in core.mnodes:
        if core.msave[node, 0] >= 0:
            for k in range(N_RES):
                core.free[node, k] += core.msave[node, k]
                scal[C_FREE + k] += core.msave[node, k]
                core.msave[node, k] = -1
            if node < lowest:
                lowest = node
    if lowest != _NO_NODE:
        alloc_released(alloc, core.jobs, j, lowest)


@inline_kernel
def _try_start(core, alloc, j, now):
    """Offer queued job ``j`` to the allocator now: start it if it fits; returns whether
    it did.  Nodes are ordered and chosen only once the job is known to fit; nodes in
    maintenance during the job's predicted run are hidden from it; the allocator hears
    of the attempt's outcome (attempt_failed / attempt_succeeded) after its node order
    was computed (Netti et al. §3: the order uses the priorities as they were before
    this attempt)."""
    jobs = core.jobs
    maint = core.scal[C_MAINT] != 0
    if maint:
        _mask(core, j, now)
    if not _fits_now(core, j):
        attempt_failed(alloc, jobs, j)
        if maint:
            _unmask(core, alloc, j)
        return False
    used = choose(alloc, core, j)
    if used < 0:  # unreachable: whether a job fits does not depend on the order
        if maint:
            _unmask(core, alloc, j)
        return False
    attempt_succeeded(alloc, jobs, j)  # after choose: the node order sees the state before this attempt
    _commit(jobs, core.run_list, core.heap, core.log, core.free, core.work, core.scal, alloc, j, now, used)
    if maint:
        _unmask(core, alloc, j)
    return True


@inline_kernel
def _finish(core, pred, sched, alloc, j, now):
    """Job ``j`` ends at ``now``: free its nodes, leave the running set, tell the
    allocator, the scheduler and the predictor."""
    jobs = core.jobs
    log = core.log
    free = core.free
    scal = core.scal
    run_list = core.run_list
    p = jobs[j, J_PTR]
    n_used = jobs[j, J_NODES]
    lowest = _NO_NODE
    for k in range(N_RES):
        r = jobs[j, J_REQ + k]
        if r == 0:
            continue
        total = 0
        for u in range(n_used):
            node = log[p + u, 0]
            amount = log[p + u, 1] * r
            free[node, k] += amount
            total += amount
            if node < lowest:
                lowest = node
        scal[C_FREE + k] += total
    rn = scal[C_RN]
    pos = _run_pos(run_list, rn, jobs[j, J_RUN_KEY], j)
    _shift_rows(run_list, pos + 1, rn, -1)
    scal[C_RN] = rn - 1
    scal[C_ENDED] += 1
    jobs[j, J_STATE] = JobState.DONE
    alloc_released(alloc, jobs, j, lowest)
    sched_released(sched, core, j, now)
    learn(pred, jobs, j, now)
    _release_successors(core, j, now)


@inline_kernel
def _release_successors(core, j, now):
    """Job dependencies: each job waiting for job ``j``, which ends at ``now``, arrives at
    ``now`` plus its think time: its J_SUBMIT becomes that instant (the queue, the
    schedulers and the output read it as the job's arrival) and a SUBMIT event is pushed
    with its job index as sequence number (:func:`schedbench.core.heap._push_seq`)."""
    jobs = core.jobs
    succ = core.succ
    for r in range(core.succ_ptr[j], core.succ_ptr[j + 1]):
        s = succ[r, 0]
        t = now + succ[r, 1]
        jobs[s, J_SUBMIT] = t
        _push_seq(core.heap, core.scal, t, Event.SUBMIT, s, s)


@inline_kernel
def _enqueue(core, pred, sched, alloc, j, now):
    """Job ``j`` joins the queue at ``now`` with the prediction it keeps from then on."""
    jobs = core.jobs
    jobs[j, J_PRED] = predict(pred, jobs, j, now)
    jobs[j, J_STATE] = JobState.QUEUED
    alloc_enqueued(alloc, jobs, j)
    _queue_insert(jobs, core.queue, core.scal, j)
    sched_enqueued(sched, core, j)


# --------------------------------------------------------------------------- events


@inline_kernel
def _skip_dropped(jobs, scal):
    """Move scal[C_NEXT] to the next job index that arrives at its submit time (PENDING:
    not left out, not BLOCKED by a predecessor), or n."""
    n = jobs.shape[0]
    i = scal[C_NEXT]
    while i < n and jobs[i, J_STATE] != JobState.PENDING:
        i += 1
    scal[C_NEXT] = i


@inline_kernel
def _next_event_time(jobs, heap, scal):
    """Time of the next event: the heap's first or the next arrival (job scal[C_NEXT]),
    -1 when there is none.  Arrivals enter the heap only when a predecessor's end
    releases them: the job matrix is in (submit, id) order, so the next one is a read, and
    a SUBMIT event ranks between the END and the TICK events of its instant whatever their
    sequence numbers."""
    t = heap[0, 0] >> 2 if scal[C_HN] > 0 else -1
    i = scal[C_NEXT]
    if i < jobs.shape[0]:
        s = jobs[i, J_SUBMIT]
        if t < 0 or s < t:
            t = s
    return t


@inline_kernel
def _arrivals_left(jobs, heap, scal):
    """Whether a job is still to arrive: a read one (job scal[C_NEXT]) or one a
    predecessor's end released (a SUBMIT event in the heap, which is scanned: for the
    rare callers that ask while nothing runs, when the heap holds only arrivals and ticks)."""
    if scal[C_NEXT] < jobs.shape[0]:
        return True
    for k in range(scal[C_HN]):
        if heap[k, 0] & 3 == Event.SUBMIT:
            return True
    return False


@internal_kernel
def _next_tick(jobs, heap, scal, now):
    """Next decision instant of the periodic mode after ``now``, or -1 when no work is
    left; idle stretches jump to the first period boundary at or after the next arrival."""
    period = scal[C_PERIOD]
    if scal[C_QN] > 0 or scal[C_RN] > 0:
        return now + period
    t = _next_event_time(jobs, heap, scal)  # nothing runs: only arrivals are left (read or released)
    if t >= 0:
        t0 = scal[C_TICK0]
        if t > now:
            return t0 + ((t - t0 + period - 1) // period) * period
        return now + period
    return -1


@internal_kernel
def _maintenance_wake(core, wake):
    """``wake`` or the next maintenance-window end after the last decision point, if
    earlier and some job waits (nodes come back: a queued job may fit); the window
    ends up to it are consumed."""
    scal = core.scal
    mends = core.mends
    i = scal[C_MNEXT]
    last = scal[C_LAST_PASS]
    while i < mends.shape[0] and mends[i] <= last:
        i += 1
    scal[C_MNEXT] = i
    if i >= mends.shape[0] or scal[C_QN] == 0:
        return wake
    t = mends[i]
    nxt = _next_event_time(core.jobs, core.heap, scal)
    if 0 <= nxt < t:
        return wake  # an event comes first: this end waits for a later call
    if wake < 0 or t < wake:
        return t
    return wake


@inline_kernel
def _revise_overdue(core, pred, now):
    """Prediction correction (Tsafrir, Etsion and Feitelson 2007): at decision point
    ``now``, ask the predictor (:func:`schedbench.core.hooks.revise`) for a new duration of
    every running job whose predicted end is at or before ``now`` (it has outlived its
    prediction: jobs ending at ``now`` have already left), and move the predicted end of
    each one it raises to start + that duration, in J_RUN_KEY and in the sorted running
    list; scal[C_REVISED] counts the moves (schedulers that keep a pass from one decision
    point to the next compare it).  Rows still due after a move are asked again, and left
    where they are when the answer does not raise them."""
    jobs = core.jobs
    run_list = core.run_list
    scal = core.scal
    rn = scal[C_RN]
    r = 0
    while r < rn and run_list[r, 0] <= now:
        j = run_list[r, 1]
        key = jobs[j, J_START] + revise(pred, jobs, j, now)
        if key <= run_list[r, 0]:
            r += 1
            continue
        jobs[j, J_RUN_KEY] = key
        pos = _run_pos(run_list, rn, key, j)  # > r: the row's old key is smaller
        _shift_rows(run_list, r + 1, pos, -1)
        run_list[pos - 1, 0] = key
        run_list[pos - 1, 1] = j
        scal[C_REVISED] += 1


@inline_kernel
def _advance(core, pred, sched, alloc):
    """Process events up to the next decision point (:func:`_next_decision`) and, when the
    predictor revises predictions (:func:`schedbench.core.hooks.revises`), correct those
    the running jobs have outlived (:func:`_revise_overdue`); returns what
    :func:`_next_decision` returns."""
    now = _next_decision(core, pred, sched, alloc)
    if revises(pred) and now >= 0:
        _revise_overdue(core, pred, now)
    return now


@inline_kernel
def _next_decision(core, pred, sched, alloc):
    """Process events up to the next decision point; returns its time, -1 when the replay
    is over (and sets scal[C_DONE]), or -2, before any event, when the allocation log
    could overflow in the next pass or the timeline has no row left for it (the Python
    side grows them, :func:`schedbench.core.state.grow_log`, and calls again).  Every
    event instant is a decision point, or, in the periodic mode, every tick plus the
    instant of the last pass again when zero-length jobs end there; so is every instant
    the scheduler asks for (:func:`schedbench.core.hooks.sched_wake`).

    The replay loop (:mod:`schedbench.core.loop`) calls it before each pass.
    """
    heap = core.heap
    scal = core.scal
    if scal[C_LOG] + scal[C_LIVE] > core.log.shape[0] or scal[C_TL] >= core.timeline.shape[1]:
        return -2
    periodic = scal[C_PERIOD] > 0
    jobs = core.jobs
    n = jobs.shape[0]
    while True:
        wake = sched_wake(sched, core)
        if scal[C_MAINT] != 0 and not periodic:
            wake = _maintenance_wake(core, wake)
        t = _next_event_time(jobs, heap, scal)
        if t < 0:
            if wake < 0:
                break
            return wake
        if 0 <= wake < t:
            return wake
        # the events of instant t in (rank, sequence) order: ends, arrivals, the tick
        while scal[C_HN] > 0 and heap[0, 0] == t * 4 + Event.END:
            _, _, j = _pop(heap, scal)
            _finish(core, pred, sched, alloc, j, t)
        while True:  # arrivals in job index order: read ones (C_NEXT) and released ones (SUBMIT events)
            j = scal[C_NEXT]
            read = j < n and jobs[j, J_SUBMIT] == t
            if scal[C_HN] > 0 and heap[0, 0] == t * 4 + Event.SUBMIT and (not read or heap[0, 2] < j):
                _, _, r = _pop(heap, scal)
                _enqueue(core, pred, sched, alloc, r, t)
            elif read:
                scal[C_NEXT] = j + 1
                _enqueue(core, pred, sched, alloc, j, t)
                _skip_dropped(jobs, scal)
            else:
                break
        tick = False
        if scal[C_HN] > 0 and heap[0, 0] == t * 4 + Event.TICK:
            _pop(heap, scal)
            tick = True
        if periodic and tick:
            nt = _next_tick(core.jobs, heap, scal, t)
            if nt >= 0:
                _push(heap, scal, nt, Event.TICK, np.int64(-1))  # not a literal: one compiled _push
        if not periodic or tick or scal[C_LAST_PASS] == t or wake == t:
            return t
    scal[C_DONE] = 1
    return -1


@inline_kernel
def _record(timeline, scal, now):
    """One timeline row per decision instant (a later pass at the same instant overwrites
    it): queue length, running jobs and the used amount of each resource."""
    scal[C_LAST_PASS] = now  # the zero-length-job rule of the periodic mode reads it
    row = scal[C_TL]
    if row > 0 and timeline[0, row - 1] == now:
        row -= 1
    elif row >= timeline.shape[1]:
        return  # never in a replay: _advance asks for a larger timeline first
    timeline[0, row] = now
    timeline[1, row] = scal[C_QN]
    timeline[2, row] = scal[C_RN]
    for k in range(N_RES):
        timeline[3 + k, row] = scal[C_CAP + k] - scal[C_FREE + k]
    scal[C_TL] = row + 1
    scal[C_PASSES] += 1


# --------------------------------------------------------------------------- for Simulation


@kernel
def _pass_at(core, pred, sched, alloc, now):
    """One pass of the scheduler at ``now`` (a decision point :func:`_advance` returned),
    without recording it: :class:`schedbench.engine.simulation.Simulation` steps jitted
    schedulers with it."""
    schedule(sched, core, pred, alloc, now)


@kernel
def _skip_idle_ticks(core):
    """In the periodic mode, when the next event is the decision tick: move the tick to
    the first period instant at or after the next arrival or end (or, while jobs wait, the
    next maintenance-window end after the last decision point), so that the decision
    points in between, where nothing can have changed, are not visited.  Returns the new
    tick time, -1 when no event is left (the tick is dropped and the replay ends), or -2
    when nothing moved (no periodic mode, or an event comes before the tick).

    For :meth:`schedbench.engine.simulation.Simulation.skip_idle_ticks`: a pass that started
    nothing gives the same answer at every tick up to that instant when the policy's
    answer depends only on the queue, the running jobs and the free nodes."""
    heap = core.heap
    scal = core.scal
    period = scal[C_PERIOD]
    if period <= 0 or scal[C_HN] == 0 or (heap[0, 0] & 3) != Event.TICK:
        return -2
    tick = heap[0, 0] >> 2
    if _next_event_time(core.jobs, heap, scal) < tick or (
        scal[C_NEXT] < core.jobs.shape[0] and core.jobs[scal[C_NEXT], J_SUBMIT] == tick
    ):
        return -2  # an arrival comes first (at the tick's instant, by rank)
    _pop(heap, scal)
    nxt = _next_event_time(core.jobs, heap, scal)
    if scal[C_QN] > 0:  # a window's end gives nodes back to waiting jobs
        mends = core.mends
        last = scal[C_LAST_PASS]
        lo, hi = 0, mends.shape[0]
        while lo < hi:  # the first end after the last decision point
            mid = (lo + hi) >> 1
            if mends[mid] <= last:
                lo = mid + 1
            else:
                hi = mid
        if lo < mends.shape[0] and (nxt < 0 or mends[lo] < nxt):
            nxt = mends[lo]
    if nxt < 0:
        return -1
    t0 = scal[C_TICK0]
    t = t0 + ((nxt - t0 + period - 1) // period) * period
    if t < tick:
        t = tick
    _push(heap, scal, t, Event.TICK, np.int64(-1))
    return t


@kernel
def _start_from_policy(core, sched, alloc, j, now, used):
    """Start job ``j`` for a Python policy: on the allocator's nodes when ``used`` < 0
    (returns False when it does not fit), else on the ``used`` nodes the policy put in
    core.work; then tell the scheduler, whose pass did not choose the job."""
    if used < 0:
        if not _try_start(core, alloc, j, now):
            return False
    else:
        _commit_placed(core, alloc, j, now, used)
    sched_started_outside(sched, core, j)
    return True
