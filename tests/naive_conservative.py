"""Slow, obviously-correct reference replay ("oracle") of conservative backfilling.

Follows the "Conservative backfilling" section of /work/shared/spec/replay-semantics.md
literally, with plain lists and loops, for clarity and not for speed.  It imports nothing
from ``schedbench`` (it is compared job by job with the numba engine); it reuses from
tests/naive.py only the result type, the drop reasons and the node allocation code
(``_Nodes``: capacity of a node, first-fit / best-fit orders, all-or-nothing allocation).

Two entry points, shaped as naive.py's:

``replay_pool(job_id, submit, run, size, pred, estimate, machine_procs) -> NaiveResult``
    a pool of ``machine_procs`` identical processors.

``replay_nodes(jobs, nodes, allocator) -> NaiveResult``
    heterogeneous nodes with (cores, gpus, mics, mem) capacities; ``jobs`` as in
    naive.replay_nodes plus an ``estimate`` key (C11).

Readings chosen where the spec leaves room (C1-C14; naive.py's R4, R5 and R8 also hold):

C1  The plan is a set of bookings [from, to) x amount, one per running and per queued
    job.  d(j) = max(pred(j), 1).  A job starts exactly at its booking's ``from``; a
    running job keeps its booking (extended at expiries) until it ends.

C2  Event instants: the submit of a simulated job, the actual end (start + run) of a
    running job, the ``to`` of a running job's booking (an expiry when the job is still
    running then; if it ends then, it is just an end), and the ``from`` of a queued job's
    booking.  One round runs at each such instant; nothing happens in between.  Dropped
    jobs are removed beforehand: their submits are not events.

C3  Order inside a round: (1) ends: every running job with end == now ends, frees its
    resources, and its booking is removed; if that booking's ``to`` > now there is a
    *release*.  (2) expiries: every running job whose booking's ``to`` == now (and that
    did not end in (1)) gets the new end ``start + estimate`` if that is > now, else
    ``now + max(1, now - start)``; its booking's ``to`` becomes it (same ``from``, same
    amount / nodes) and the round is *extended*.  The order among expiring jobs does not
    matter (no decision depends on it).  (3) arrivals: jobs with submit == now join the
    queue, which is kept in (submit, id, input position) order.  (4) the pass:
      a. if extended: remove the bookings of every queued job that is not an arrival of
         this round (all of them first), then book each again at its earliest fit, in
         queue order.  Else if released: compress - for each queued non-arrival in queue
         order: remove its booking, compute its earliest fit, book it there if that is
         strictly earlier than its old ``from``, else put the old booking back (same
         ``from``, same nodes).  (A release in an extended round is covered by the
         rebooking: "Otherwise".)
      b. each arrival, in queue order, is booked at its earliest fit;
      c. every queued job whose booking's ``from`` == now starts, in queue order.

C4  Zero-length jobs: naive.py's R3.  After a pass, every job started in that pass with
    run == 0 ends (all together): resources freed, booking [now, now + d) removed, which
    is a release (d >= 1).  Then ONE more pass runs at the same instant with no arrivals
    (the round's arrivals are already booked and count as ordinary queued jobs, so they
    are compressed too), no extension (this instant's expiries were handled in the
    first pass: an extended booking ends after now, a new one at now + d > now) and a
    release: a compress.  Repeat while a pass starts a zero-length job.

C5  Earliest fit of job j at ``now``: the first candidate t, in increasing order, among
    {now} U {every booking's ``to`` > now} at which the job can be placed on the plan's
    free amounts *minimised over [t, t + d(j))*.  Pool: the window minimum of the free
    processors is machine minus the window maximum of the booked ones, so this is the
    spec's "smallest t >= now with booked + size <= machine throughout [t, t + d)":
    restricting t to the candidates loses nothing because the booked amount only goes
    DOWN at a booking end - if t > now fits and t - 1 does not, the instant that fails
    for t - 1 but is not in t's window is t - 1 itself, so booked(t - 1) > booked(t) and
    some booking ends at t.  The same argument per node and type (an allocation that
    succeeds still succeeds with more free resources, whatever the order) shows the node
    rule's candidates lose nothing either.  After the last booking end the plan is
    empty, and every simulated job fits an empty machine, so a fit always exists.
    The window minimum uses the plan's free amounts at t and at every booking ``from``
    inside (t, t + d): between two booking edges they do not change.

C6  Compress never moves a job later: its old booking is still valid on the plan at the
    moment it is re-examined (the plan only lost bookings, and the jobs moved before it
    were fitted around it), so by C5 its earliest fit is <= its old ``from``.  This is
    asserted.  On nodes, an equal earliest fit may pick other nodes; the old nodes are
    kept then (the spec's "else at its old start again").

C7  Invariant: after every pass no instant of the plan books more than the machine
    (per type on totals, per node and type on nodes).  Running jobs' bookings that were
    extended overlap only each other in the future, and they all hold resources now, so
    they fit together.  The plan profile asserts it whenever it is computed.

C8  Nodes, totals mode: when every SIMULATED job asks for free-spread (req_nodes <= 0)
    single units (per-unit request has exactly one positive entry, equal to 1), the plan
    is kept on each type's totals (sum over nodes of that type's capacity); a job only
    meets jobs of its own type there.  Jobs may use different types (each job "one
    resource type"); dropped jobs do not decide the mode.  The allocator picks the nodes
    at start, on the free resources of that instant, in the order jobs start (queue
    order); the totals guarantee it succeeds (asserted).

C9  Nodes, node mode (otherwise): each booking holds its nodes (list of (node, units)).
    The earliest fit is C5's candidate loop where, at candidate t, each node's free
    amount OF EACH TYPE is its own minimum over [t, t + d) (types minimised separately),
    and naive.py's allocator (R8) runs on those amounts: first-fit visits nodes by
    index; best-fit visits them by (window-minimum free cores + gpus + mics, index);
    balanced in Netti et al.'s Balanced order of those amounts (naive_alloc).
    The job starts on the nodes of its booking.

C10 Rebooking in node mode (extended rounds) gives a job the nodes its new earliest fit
    finds; compress keeps the old nodes when it keeps the old start (C6).

C11 replay_nodes' ``estimate`` key (used only by expiries) defaults to ``pred`` when a
    job dict has none.  replay_pool takes ``estimate`` as a column.

C12 Drops as naive.py's R5 (pool: run < 0, size <= 0, size > machine; nodes: run < 0,
    units <= 0 or nothing requested, not placeable on the empty machine).

C13 ``passes`` of the result lists every booking made, in order, as
    (now, job_id, from): arrivals, rebookings of extended rounds, and compress moves
    (a compress that keeps the old booking records nothing).  The first entry of a job
    is its first booking.

C14 Ties: queue order is (submit, id, input position); the candidates are visited in
    increasing time; nothing else is ordered.

C15 Job dependencies (replay_pool's ``preceding`` and ``think``): naive.py's D1-D3.  A
    job arrives when its predecessor ends plus its think time, and that arrival stands for
    its submit (queue order: (arrival, batch, submit as logged, id, input position)).
    Jobs released with think 0 by the zero-length ends of C4 are the arrivals of the extra
    pass: booked in step b after the compress, behind the queue's earlier arrivals, those
    of an earlier extra pass at the same instant included (batch counts the rounds).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from naive import (
    DROPPED_NO_RUNTIME,
    DROPPED_NO_SIZE,
    DROPPED_TOO_WIDE,
    NTYPES,
    REPLAYED,
    NaiveResult,
    _NodeRequest,
    _Nodes,
    link_jobs,
)
from naive_alloc import node_order

ALLOCATORS = ("ff", "bf", "balanced")


class _OrderedNodes(_Nodes):
    """C9's allocator: its order (:func:`naive_alloc.node_order`; Balanced's with GPUs and
    MICs critical) of the amounts it is given: a window's least free amounts when booking,
    the free resources at a start."""

    def order(self, free):
        return node_order(self.allocator, free, self.cap)


# eq=False: jobs compare by identity, as naive._Job's (why: there)
@dataclass(eq=False)
class _Job:
    idx: int  # input position
    job_id: int
    submit: int
    run: int
    pred: int
    estimate: int
    need: object  # pool: int processors; nodes: a naive._NodeRequest (naive._Nodes reads it)
    total: tuple = None  # plan on totals: (type, units); node mode: None
    start: int | None = None
    alloc: object = None
    logged: int | None = None  # C15: the input's submit (``submit`` becomes the arrival)
    successors: list = None  # C15: (job, think) released by this job's end
    waits: bool = False  # C15: arrives when its predecessor's end releases it
    batch: int = 0  # C15: the zero-length round (C4) whose ends released it, counted over the replay

    def __post_init__(self):
        if self.logged is None:
            self.logged = self.submit
        if self.successors is None:
            self.successors = []

    @property
    def end(self):
        return self.start + self.run

    @property
    def d(self):
        return max(self.pred, 1)

    def queue_key(self):
        return (self.submit, self.batch, self.logged, self.job_id, self.idx)


@dataclass
class _Booking:
    frm: int
    to: int
    amount: object  # totals: (type, units); nodes: [(node, units), ...]


# ---------------------------------------------------------------------------------------
# Plans.  A "free state" is what the plan leaves free at one instant: per-type totals
# (a list of ints) or per-node, per-type amounts (a list of 4-lists).
# ---------------------------------------------------------------------------------------


class _TotalsPlan:
    def __init__(self, totals):
        self.totals = list(totals)

    def empty(self):
        return list(self.totals)

    @staticmethod
    def minus(free, job, amount):
        k, n = amount
        out = list(free)
        out[k] -= n
        assert out[k] >= 0, "plan over-commit"
        return out

    @staticmethod
    def plus(free, job, amount):
        k, n = amount
        out = list(free)
        out[k] += n
        return out

    @staticmethod
    def least(states):
        """Per type, the least of ``states`` (free states of one width)."""
        return [min(col) for col in zip(*states, strict=True)]

    @staticmethod
    def place(job, free):
        k, n = job.total
        return (k, n) if n <= free[k] else None


class _NodesPlan:
    def __init__(self, nodes: _Nodes):
        self.nodes = nodes  # its allocator and capacities; its own .free is not used here

    def empty(self):
        return [list(c) for c in self.nodes.cap]

    @staticmethod
    def minus(free, job, alloc):
        out = [list(r) for r in free]
        _Nodes.sub(out, job, alloc)  # asserts >= 0
        return out

    @staticmethod
    def plus(free, job, alloc):
        out = [list(r) for r in free]
        _Nodes.add(out, job, alloc)
        return out

    @staticmethod
    def least(states):
        """Per node and type, the least of ``states`` (free states of one shape): each
        node's rows across the states, then each type's amounts across those rows."""
        return [list(map(min, zip(*rows, strict=True))) for rows in zip(*states, strict=True)]

    def place(self, job, free):
        return self.nodes.try_alloc(job, free)  # R8, order computed on ``free`` (C9)


# ---------------------------------------------------------------------------------------
# The replay.
# ---------------------------------------------------------------------------------------


class _Conservative:
    STRICT_C6 = True  # C6 holds without site policies (naive_site.py relaxes it, S7)

    def __init__(self, jobs, plan, real, mode):
        self.jobs = jobs  # simulated jobs only
        self.plan = plan  # _TotalsPlan or _NodesPlan
        self.real = real  # actual free resources: [int] (pool) or a naive._Nodes
        self.mode = mode  # "pool", "totals" (nodes, C8) or "nodes" (C9)
        self.book = {}  # job.idx -> _Booking, for running and queued jobs
        self.queue = []
        self.running = []
        self.log = []  # C13

    # -- the plan ----------------------------------------------------------------------

    def profile(self, now):
        """[(x, free state on [x, next x))] from ``now`` on, x increasing, first x = now.
        Built by a sweep over booking edges (ends before starts at one instant)."""
        free = self.plan.empty()
        starts, ends = {}, {}
        for idx, b in self.book.items():
            assert b.to > now, "a booking in the plan ended in the past"
            job = self.by_idx[idx]
            if b.frm <= now:
                free = self.plan.minus(free, job, b.amount)
            else:
                starts.setdefault(b.frm, []).append((job, b))
            ends.setdefault(b.to, []).append((job, b))
        out = [(now, free)]
        for x in sorted(set(starts) | set(ends)):
            for job, b in ends.get(x, []):
                free = self.plan.plus(free, job, b.amount)
            for job, b in starts.get(x, []):
                free = self.plan.minus(free, job, b.amount)
            out.append((x, free))
        return out

    def earliest_fit(self, job, now):
        """(t, amount) of C5 on the current plan (which must not hold ``job``)."""
        assert job.idx not in self.book
        prof = self.profile(now)
        xs = [x for x, _ in prof]
        candidates = sorted({now} | {b.to for b in self.book.values() if b.to > now})
        for t in candidates:
            i = bisect.bisect_left(xs, t)  # t is a profile point (now or a booking end)
            assert xs[i] == t
            j = bisect.bisect_left(xs, t + job.d)
            least = self.plan.least([state for _, state in prof[i : max(j, i + 1)]])
            amount = self.plan.place(job, least)
            if amount is not None:
                return t, amount
        raise AssertionError("no fit even after the last booking end")

    def book_at_fit(self, job, now):
        t, amount = self.earliest_fit(job, now)
        self.book[job.idx] = _Booking(t, t + job.d, amount)
        self.log.append((now, job.job_id, t))

    # -- resources ---------------------------------------------------------------------

    def start(self, job, now):
        b = self.book[job.idx]
        assert b.frm == now
        job.start = now
        if self.mode == "pool":
            _, n = b.amount
            assert n <= self.real[0], "over-commit"
            self.real[0] -= n
            job.alloc = n
        elif self.mode == "totals":
            alloc = self.real.try_alloc(job, self.real.free)
            assert alloc is not None, "totals plan let in a job the nodes cannot take"
            self.real.take(job, alloc)
            job.alloc = alloc
        else:
            self.real.take(job, b.amount)  # asserts the nodes are free
            job.alloc = b.amount
        self.queue.remove(job)
        self.running.append(job)

    def finish(self, job, now):
        """End ``job``; True when its booking reached past now (a release)."""
        if self.mode == "pool":
            self.real[0] += job.alloc
        else:
            self.real.give(job, job.alloc)
        self.running.remove(job)
        for succ, think in job.successors:  # C15
            succ.submit = now + think
            self.pending.append(succ)
        if job.successors:  # pending stays sorted otherwise: a sort per end made replays quadratic
            self.pending.sort(key=_Job.queue_key)
        b = self.book.pop(job.idx)
        return b.to > now

    # -- the loop (C2-C4) --------------------------------------------------------------

    def run(self):
        self.by_idx = {j.idx: j for j in self.jobs}
        pending = sorted((j for j in self.jobs if not j.waits), key=_Job.queue_key)
        self.pending = pending  # C15: finish() adds the jobs an end releases
        rounds = 0  # C15: zero-length rounds so far
        now = None
        while pending or self.running or self.queue:
            times = [j.end for j in self.running]
            times += [self.book[j.idx].to for j in self.running]
            times += [self.book[j.idx].frm for j in self.queue]
            if pending:
                times.append(pending[0].submit)
            nxt = min(times)
            assert now is None or nxt > now, "time went backwards"
            now = nxt
            # 1 ends
            released = False
            for j in [j for j in self.running if j.end == now]:
                released |= self.finish(j, now)
            # 2 expiries
            extended = False
            for j in self.running:
                b = self.book[j.idx]
                if b.to == now:
                    if j.start + j.estimate > now:
                        b.to = j.start + j.estimate
                    else:
                        b.to = now + max(1, now - j.start)
                    extended = True
            # 3 arrivals
            arrivals = []
            while pending and pending[0].submit == now:
                arrivals.append(pending.pop(0))
            self.queue.extend(arrivals)
            self.queue.sort(key=_Job.queue_key)
            # 4 the pass, then C4
            started = self.one_pass(now, arrivals, released, extended)
            while True:
                zero = [j for j in started if j.run == 0]
                if not zero:
                    break
                for j in zero:
                    assert self.finish(j, now)  # always a release: d >= 1
                late = []  # C15: released by these ends with think 0
                rounds += 1  # a later round's arrivals join behind an earlier one's (naive.py D3)
                while pending and pending[0].submit == now:
                    late.append(pending.pop(0))
                    late[-1].batch = rounds
                self.queue.extend(late)
                self.queue.sort(key=_Job.queue_key)
                started = self.one_pass(now, late, True, False)

    def one_pass(self, now, arrivals, released, extended):
        new = set(j.idx for j in arrivals)
        old = [j for j in self.queue if j.idx not in new]
        if extended:  # 4a, rebook
            for j in old:
                del self.book[j.idx]
            for j in old:
                self.book_at_fit(j, now)
        elif released:  # 4a, compress
            for j in old:
                ob = self.book.pop(j.idx)
                t, amount = self.earliest_fit(j, now)
                assert t <= ob.frm or not self.STRICT_C6, "compress would move a job later (C6)"
                if t < ob.frm:
                    self.book[j.idx] = _Booking(t, t + j.d, amount)
                    self.log.append((now, j.job_id, t))
                else:
                    self.book[j.idx] = ob
        for j in sorted(arrivals, key=_Job.queue_key):  # 4b
            self.book_at_fit(j, now)
        started = []
        for j in list(self.queue):  # 4c
            if self.book[j.idx].frm == now:
                self.start(j, now)
                started.append(j)
        return started


def _result(n, ids, status, simulated, log, with_alloc):
    start = [None] * n
    end = [None] * n
    alloc = [None] * n
    for j in simulated:
        start[j.idx] = j.start
        end[j.idx] = j.end
        if with_alloc:
            alloc[j.idx] = sorted(j.alloc)
    return NaiveResult(
        job_id=list(ids), start=start, end=end, status=list(status), alloc=alloc, passes=log
    )


def replay_pool(job_id, submit, run, size, pred, estimate, machine_procs, preceding=None, think=None) -> NaiveResult:
    """Conservative backfilling on a pool of ``machine_procs`` identical processors.

    Inputs are equal-length sequences of ints (numpy arrays are fine); ``pred`` is the
    duration the scheduler believes (bookings last max(pred, 1)), ``estimate`` the user's
    requested time (used only at expiries).  See the module docstring (C1-C7, C12-C14).
    ``preceding`` and ``think``: each job's predecessor id and think time (C15), or None."""
    cols = [[int(x) for x in c] for c in (job_id, submit, run, size, pred, estimate)]
    ids, sub, rn, sz, pr, est = cols
    machine_procs = int(machine_procs)
    n = len(ids)
    if any(len(c) != n for c in cols):
        raise ValueError("input sequences differ in length")
    status, jobs = [], []
    for i in range(n):
        if rn[i] < 0:
            status.append(DROPPED_NO_RUNTIME)
        elif sz[i] <= 0:
            status.append(DROPPED_NO_SIZE)
        elif sz[i] > machine_procs:
            status.append(DROPPED_TOO_WIDE)
        else:
            status.append(REPLAYED)
            jobs.append(
                _Job(
                    idx=i,
                    job_id=ids[i],
                    submit=sub[i],
                    run=rn[i],
                    pred=pr[i],
                    estimate=est[i],
                    need=sz[i],
                    total=(0, sz[i]),
                )
            )
    jobs = link_jobs(ids, jobs, status, preceding, think)
    rep = _Conservative(jobs, _TotalsPlan([machine_procs]), [machine_procs], "pool")
    rep.run()
    return _result(n, ids, status, jobs, rep.log, with_alloc=False)


def _single_unit_type(job):
    """The type index when the job asks for free-spread single units of one type (C8)."""
    req = job.need
    positive = [k for k in range(NTYPES) if req.unit[k] > 0]
    if req.req_nodes <= 0 and len(positive) == 1 and req.unit[positive[0]] == 1:
        return positive[0]
    return None


def replay_nodes(jobs, nodes, allocator) -> NaiveResult:
    """Conservative backfilling on heterogeneous nodes.

    ``nodes``: list of (cores, gpus, mics, mem) capacities.  ``jobs``: list of dicts with
    job_id, submit, run, pred, estimate (optional, C11), units, unit (per-unit (cores,
    gpus, mics, mem)) and req_nodes (<= 0: free spread; > 0: exactly that many nodes).
    ``allocator``: "ff", "bf" or "balanced".  ``alloc`` of the result holds each replayed job's
    [(node index, units), ...].  See the module docstring (C1-C14)."""
    if allocator not in ALLOCATORS:
        raise ValueError(f"unknown allocator {allocator!r}")
    caps = [tuple(int(x) for x in nd) for nd in nodes]
    for c in caps:
        if len(c) != NTYPES or min(c) < 0:
            raise ValueError(f"bad node capacity {c}")
    real = _OrderedNodes(caps, allocator)
    empty = [list(c) for c in caps]
    ids, status, sim = [], [], []
    for i, d in enumerate(jobs):
        unit = tuple(int(x) for x in d["unit"])
        if len(unit) != NTYPES or min(unit) < 0:
            raise ValueError(f"bad per-unit request {unit} for job {d['job_id']}")
        req_nodes = int(d.get("req_nodes", -1))
        units = int(d["units"])
        pred = int(d["pred"])
        job = _Job(
            idx=i,
            job_id=int(d["job_id"]),
            submit=int(d["submit"]),
            run=int(d["run"]),
            pred=pred,
            estimate=int(d.get("estimate", pred)),
            need=_NodeRequest(units=units, unit=unit, req_nodes=req_nodes),
        )
        ids.append(job.job_id)
        if job.run < 0:
            status.append(DROPPED_NO_RUNTIME)
            continue
        if units <= 0 or max(unit) <= 0:
            status.append(DROPPED_NO_SIZE)
            continue
        if req_nodes > 0 and units % req_nodes != 0:
            raise ValueError(
                f"job {job.job_id}: units {units} not divisible by req_nodes {req_nodes}"
            )
        if real.try_alloc(job, empty) is None:
            status.append(DROPPED_TOO_WIDE)
            continue
        status.append(REPLAYED)
        sim.append(job)
    types = [_single_unit_type(j) for j in sim]
    if all(k is not None for k in types):
        for j, k in zip(sim, types, strict=True):
            j.total = (k, j.need.units)
        totals = [sum(c[k] for c in caps) for k in range(NTYPES)]
        rep = _Conservative(sim, _TotalsPlan(totals), real, "totals")
    else:
        rep = _Conservative(sim, _NodesPlan(_OrderedNodes(caps, allocator)), real, "nodes")
    rep.run()
    return _result(len(jobs), ids, status, sim, rep.log, with_alloc=True)
