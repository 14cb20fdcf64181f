"""Slow, obviously-correct reference replay ("oracle") for schedbench.

This module follows /work/shared/spec/replay-semantics.md literally, for clarity and not
for speed: plain lists, dicts and loops. It is written independently of the numba engine
(it imports nothing from ``schedbench``) so that the two can be compared job by job.

Two entry points:

``replay_pool(job_id, submit, run, size, pred, machine_procs, scheduler) -> NaiveResult``
    a pool of ``machine_procs`` identical processors.

``replay_nodes(jobs, nodes, scheduler, allocator) -> NaiveResult``
    heterogeneous nodes with (cores, gpus, mics, mem) capacities ("Heterogeneous
    machines" section of the spec, allocation model of Netti et al. §3:
    all-requested-computers-available).

Readings chosen where the spec leaves room (every one is deliberate):

R1  Event instants.  A scheduling pass runs only at an instant where something happens:
    the submit of a simulated job or the (actual) end of a running job.  Nothing runs
    "between" events, even though an EASY decision depends on ``now`` (``now + pred <=
    shadow`` and ``max(start + pred, now)``), so a pass at a quiet instant could in
    principle decide differently.  Dropped jobs are removed before the replay: their
    submit times are not events.

R2  Order inside one instant: (a) every running job whose end == now ends and frees its
    resources; (b) every job whose submit == now joins the queue, in (submit, id) order;
    (c) one scheduling pass.  Then the zero-length rule (R3).

R3  Zero-length jobs ("another scheduling pass").  Most literal reading: after a pass,
    if any job *started in that pass* has end == now (run == 0), all of those ends are
    processed together (they free their resources) and ONE more pass runs at the same
    instant; no new submits can join (they all joined in R2(b)).  This repeats until a
    pass starts no job with end == now.  Consequences: (i) all zero-length jobs started
    in one pass end together, after that pass, and are processed in one batch followed
    by exactly one pass (not one pass per job); (ii) while a zero-length job is
    "running" (i.e. during the rest of the pass that started it) it holds its
    processors and it is a running job for EASY's reservation, with predicted end
    max(start + pred, now).  It terminates because every repetition starts >= 1 job.

R4  Ties.  The queue order is (submit, id, input position); SJF order is (pred, submit,
    id, input position); EASY's release order is (predicted end, id, input position).
    Input position only matters for duplicate ids.

R5  Drops, checked in this order: run < 0 -> "dropped_no_runtime"; size <= 0 (pool) or
    units <= 0 (nodes) -> "dropped_no_size"; cannot be placed on the empty machine ->
    "dropped_too_wide" (pool: size > machine_procs).  For nodes a job whose per-unit
    request has no positive component requests nothing; the spec's capacity
    formula (a min over an empty set) is undefined for it, so it is also
    "dropped_no_size" (doubtful point, see the report).

R6  FCFS / SJF: visit the queue in its order (SJF: (pred, submit, id)); start each job
    while it fits; stop at the first one that does not fit (no skipping).

R7  EASY on a pool (each pass):
      1. start jobs from the head while they fit;
      2. if the queue is non-empty, the head gets a reservation: the running jobs
         (including any started in step 1 of this pass) are released in (pe, id) order,
         pe = max(start + pred, now), adding their sizes to a copy of the free count,
         until the head fits; the pe of the job that made it fit is the shadow time.
         extra = free (after step 1) + sizes of all running jobs with pe <= shadow
         - head size.  (All of a group of jobs with equal pe count, even those after
         the one that made the head fit.)
      3. visit the queue after the head once, in queue order: a job that fits in the
         current free processors starts if now + pred <= shadow; else it starts if
         size <= extra, and then extra -= size.  Jobs that do not fit are skipped.
         shadow and extra are not recomputed during step 3.
    ``passes`` records (now, head id, shadow) for every pass that made a reservation
    (including the extra passes of R3).

C1  Prediction correction (replay_pool's ``revised``; the ``tsafrir`` predictor): a job
    still running at a decision instant at or after start + pred is believed to run
    max(pred, revised) from its start; its predicted end is then max(start + that, now).
C1b Stepwise correction (replay_pool's ``steps`` too; ``tsafrir-steps``): as C1, but the
    job is believed to run pred + s for the first s of ``steps`` with start + pred + s >
    now, at most ``revised`` (``revised`` when no step is left).

R7b EASY-SJBF ("easy-sjbf"; Tsafrir, Etsion and Feitelson 2007): R7 (pool) or R9
    (nodes), except that step 3 visits the queue after the head in (pred, queue order)
    order, shortest predicted run time first.

R7c EBF as AccaSim runs it ("ebf-accasim"; Netti et al.'s code): state kept between
    passes: a blocked job B (or none) and its reserved time T.  Each pass:
      1. if B is set and T <= now, try B; if it fits it starts and B is unset;
      2. if B is unset: start jobs from the head while they fit; if the queue is then
         non-empty the head becomes B and T its shadow time, computed as in R7/R9 step 2
         (T = now when only a maintenance window keeps it out, as M3);
      3. visit the queue once in queue order, skipping B: every job that fits starts
         (no protection of B's reservation: AccaSim passes no reserved nodes).
    While B is set, nothing runs and nothing is left to arrive, max(T, last instant + 1)
    is a decision instant (AccaSim's clock steps one second at a time once no event is
    left); otherwise T is not an instant of its own.

R8  Node allocation: capacity of a node for a job = min over types with per-unit request
    > 0 of floor(free / request).  Free spread (req_nodes <= 0): visit nodes in the
    allocator's order, give each node min(capacity, remaining) units, until none remain;
    if the nodes run out first, fail and allocate nothing.  Fixed shape (req_nodes > 0):
    units must be divisible by req_nodes (ValueError otherwise: the spec does not say
    what a non-divisible shape means); take the first req_nodes nodes in allocator order
    whose capacity >= units / req_nodes, each hosting exactly that many units; fail if
    there are fewer.  Orders: "ff" = node index; "bf" = (free cores + free gpus + free
    mics, index), memory not counted, computed on the free state the allocation is tried
    on, just before that allocation.  The returned allocation lists (node, units) pairs
    sorted by node index (not in visiting order).  Whether an allocation succeeds does not depend on
    the order (free spread: sum of capacities >= units; fixed: enough nodes with the
    per-node capacity); only the placement does.  Node entries with 0 units are not
    listed in an allocation.

R9  EASY on nodes (each pass):
      1. start jobs from the head while their allocation succeeds on the current free;
      2. if the queue is non-empty: release the running jobs (including step-1 ones) in
         (pe, id) order, adding their actual allocations to a copy of the free state,
         until the head's allocation would succeed on it: that pe is the shadow time.
         FS = free after step 1 + allocations of every job running after step 1 with
         pe <= shadow (a snapshot, taken once per pass, like ``extra``).
      3. visit the queue after the head once, in queue order.  A job whose allocation
         succeeds now (call it A, computed on the current free state with the allocator)
         starts, with allocation A, if now + pred <= shadow; otherwise it starts, with A,
         only if the head's allocation succeeds on FS minus A minus the allocations of
         every job started in step 3 of this pass with now + pred > shadow.  (Step-1
         jobs are already inside FS: they are not subtracted again.)  On a pool of
         1-core units this is exactly R7's extra rule.

R7d PRB (Netti et al. §2.2; "prb", "prb-blocking"; replay_pool's ``qwait``: each job's
    expected queue wait, s >= 1): each pass orders the queue by (-(now - submit) / qwait,
    demand = size x pred (on nodes: units x (cores + GPUs + MICs) per unit x pred), then
    input order: (submit as logged, id, input position)), the key a float division.  "prb" offers every job once in that order, starting those
    that fit and skipping the others; "prb-blocking" stops at the first that does not fit.

Maintenance windows (replay_nodes' ``maintenance``; schedbench.plan.site):
M1  Every allocation a job is *started* with sees the nodes whose windows meet [now, now
    + max(pred, 1)) as having nothing free; EASY's shadow time and FS (R9, steps 2-3)
    are computed on the free state as it is, windows ignored.
M2  While the queue is not empty, every window end after the last decision instant is a
    decision instant too.
M3  When only windows keep the head out (it fits the free state as it is) and nothing
    runs, the shadow time is now.

Job dependencies (replay_pool's ``preceding`` and ``think``: SWF fields 17 and 18):
D1  A job whose ``preceding`` id is a job earlier in the input (which is in (submit, id)
    order) waits for it: it arrives when that job ends plus max(think, 0), and that
    arrival replaces its submit time everywhere (queue order, priorities' age, waits).
    A ``preceding`` id that is negative, not in the input, or not earlier (the job itself
    or a later one) is no link: the job arrives at its submit.
D2  A job whose predecessor is not simulated (dropped, or itself "predecessor_not_run") is
    not simulated: "predecessor_not_run"; so is a job whose predecessor never ends.
D3  A job released by an end at ``now`` with think 0 joins at ``now``: in R2(b), or, when
    the end is a zero-length job's (R3), as a second batch of arrivals at ``now``, before
    the extra pass.  The queue is kept in (arrival, batch, submit, id) order (SJF: (pred,
    arrival, batch, submit, id)): a later batch of one instant joins behind the earlier
    ones (the engine's queue is in the order jobs joined it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SCHEDULERS = ("fcfs", "sjf", "easy", "easy-sjbf", "ebf-accasim", "prb", "prb-blocking")
ALLOCATORS = ("ff", "bf")
NTYPES = 4  # cores, gpus, mics, mem
COMPUTE_TYPES = 3  # cores, gpus, mics: what best-fit sums

REPLAYED = "replayed"
DROPPED_NO_RUNTIME = "dropped_no_runtime"
DROPPED_NO_SIZE = "dropped_no_size"
DROPPED_TOO_WIDE = "dropped_too_wide"
PREDECESSOR_NOT_RUN = "predecessor_not_run"


@dataclass
class NaiveResult:
    """Per input job, in input order: ``job_id``, ``start`` and ``end`` (None when
    dropped), ``status`` ("replayed" or the drop reason), ``alloc`` (replay_nodes only:
    list of (node index, units) pairs for replayed jobs, else None).  ``passes``: for
    EASY, one (time, head job_id, shadow_time) per pass that gave the head a reservation,
    in the order the passes ran."""

    job_id: list
    start: list
    end: list
    status: list
    alloc: list
    passes: list = field(default_factory=list)


# eq=False: a job is one object, so the queue's remove and membership tests compare
# identities, not every field (tens of millions of field comparisons on a deep queue)
@dataclass(eq=False)
class _Job:
    idx: int  # input position
    job_id: int
    submit: int
    run: int
    pred: int
    need: object  # pool: int processors; nodes: a _NodeRequest
    start: int | None = None
    alloc: object = None  # pool: int processors; nodes: list of (node, units)
    revised: int | None = None  # C1: duration believed once the job outlives pred
    steps: tuple = ()  # C1b: the raises tried before revised
    logged: int | None = None  # D1: the input's submit (``submit`` becomes the arrival)
    successors: list = field(default_factory=list)  # D1: (job, think) released by this job's end
    waits: bool = False  # D1: arrives when its predecessor's end releases it
    batch: int = 0  # D3: which group of arrivals it joined the queue with
    qwait: int = 1  # R7d: the expected wait of its queue (s)

    def __post_init__(self):
        if self.logged is None:
            self.logged = self.submit

    @property
    def end(self):
        return self.start + self.run

    def queue_key(self):
        return (self.submit, self.batch, self.logged, self.job_id, self.idx)

    def sjf_key(self):
        return (self.pred, self.submit, self.batch, self.logged, self.job_id, self.idx)

    def demand(self):
        """R7d's demand: size x pred (on nodes, the size is units x (cores + GPUs + MICs)
        per unit)."""
        if isinstance(self.need, _NodeRequest):
            return self.need.units * sum(self.need.unit[:COMPUTE_TYPES]) * self.pred
        return self.need * self.pred

    def predicted_end(self, now):
        believed = self.pred
        if self.revised is not None and self.start + self.pred <= now:  # C1
            raised = self.revised
            for s in self.steps:  # C1b
                if self.start + self.pred + s > now:
                    raised = min(self.pred + s, self.revised)
                    break
            believed = max(believed, raised)
        return max(self.start + believed, now)


@dataclass
class _NodeRequest:
    units: int
    unit: tuple  # per-unit (cores, gpus, mics, mem)
    req_nodes: int  # <= 0: free spread


# ---------------------------------------------------------------------------------------
# Machines.  A machine knows how to try an allocation on a given free state, and how to
# take / give back an allocation.  The free state is an int (pool) or a list of 4-lists
# (nodes).  Both machines expose the same small interface to the event loop.
# ---------------------------------------------------------------------------------------


class _Pool:
    def __init__(self, procs):
        self.free = procs

    def copy_free(self):
        return self.free

    def try_alloc(self, job, free):
        """Processors the job would take on ``free``, or None if it does not fit."""
        return job.need if job.need <= free else None

    def take(self, alloc):
        assert alloc <= self.free, "over-commit"
        self.free -= alloc

    def give(self, alloc):
        self.free += alloc


class _Nodes:
    def __init__(self, nodes, allocator):
        self.cap = [list(n) for n in nodes]
        self.free = [list(n) for n in nodes]
        self.allocator = allocator

    def copy_free(self):
        return [list(n) for n in self.free]

    @staticmethod
    def host(node_free, unit):
        """Units of ``unit`` a node with ``node_free`` can host (R8)."""
        counts = [node_free[k] // unit[k] for k in range(NTYPES) if unit[k] > 0]
        return max(0, min(counts))

    def order(self, free):
        idx = list(range(len(free)))
        if self.allocator == "ff":
            return idx
        return sorted(idx, key=lambda i: (sum(free[i][:COMPUTE_TYPES]), i))

    def try_alloc(self, job, free):
        """Allocation [(node, units), ...] on ``free`` for the job, or None (R8)."""
        req = job.need
        order = self.order(free)
        if req.req_nodes > 0:
            per = req.units // req.req_nodes
            chosen = [i for i in order if self.host(free[i], req.unit) >= per]
            if len(chosen) < req.req_nodes:
                return None
            return [(i, per) for i in chosen[: req.req_nodes]]
        remaining = req.units
        alloc = []
        for i in order:
            if remaining == 0:
                break
            k = min(self.host(free[i], req.unit), remaining)
            if k > 0:
                alloc.append((i, k))
                remaining -= k
        return alloc if remaining == 0 else None

    @staticmethod
    def sub(free, job, alloc):
        for i, k in alloc:
            for t in range(NTYPES):
                free[i][t] -= k * job.need.unit[t]
                assert free[i][t] >= 0, "over-commit"

    @staticmethod
    def add(free, job, alloc):
        for i, k in alloc:
            for t in range(NTYPES):
                free[i][t] += k * job.need.unit[t]

    def take(self, job, alloc):
        self.sub(self.free, job, alloc)

    def give(self, job, alloc):
        self.add(self.free, job, alloc)


# ---------------------------------------------------------------------------------------
# The event loop, shared by both machines.
# ---------------------------------------------------------------------------------------


class _Replay:
    def __init__(self, jobs, machine, scheduler, is_pool):
        if scheduler not in SCHEDULERS:
            raise ValueError(f"unknown scheduler {scheduler!r}")
        self.jobs = jobs  # simulated jobs only
        self.m = machine
        self.scheduler = scheduler
        self.is_pool = is_pool
        self.queue = []  # kept in (submit, id) order
        self.running = []
        self.passes = []
        self.maint = None  # per node [(a, b), ...]: maintenance windows (M1-M3), or None
        self.blocked = None  # R7c: the blocked job and its reserved time
        self.reserved = None
        self.now = None

    # -- resources --------------------------------------------------------------------

    def fits_now(self, job):
        if self.maint is None:
            return self.m.try_alloc(job, self.m.free)
        # M1: nodes with a window meeting [now, now + max(pred, 1)) offer nothing
        end = self.now + max(job.pred, 1)
        free = [
            [0] * NTYPES if any(a < end and self.now < b for a, b in wins) else list(row)
            for row, wins in zip(self.m.free, self.maint, strict=True)
        ]
        return self.m.try_alloc(job, free)

    def start(self, job, alloc, now):
        job.start = now
        job.alloc = alloc
        if self.is_pool:
            self.m.take(alloc)
        else:
            self.m.take(job, alloc)
        self.queue.remove(job)
        self.running.append(job)

    def finish(self, job):
        if self.is_pool:
            self.m.give(job.alloc)
        else:
            self.m.give(job, job.alloc)
        self.running.remove(job)
        self.release(job)

    # -- the loop (R1-R3) -------------------------------------------------------------

    def run(self):
        pending = sorted((j for j in self.jobs if not j.waits), key=_Job.queue_key)  # D1
        self.pending = pending
        self.batches = 0
        while pending or self.running or self.queue:
            times = [j.end for j in self.running]
            if pending:
                times.append(pending[0].submit)
            if self.scheduler == "ebf-accasim" and self.blocked is not None and not pending and not self.running:
                # R7c: with no event left, the clock steps a second at a time up to T
                times.append(max(self.reserved, self.now + 1))
            if self.maint is not None and self.queue:
                # M2: a window end is a decision instant while jobs wait
                times += [b for wins in self.maint for _, b in wins if self.now is None or b > self.now]
            assert times, "queue non-empty but nothing runs and nothing arrives"
            now = min(times)
            self.now = now
            # (a) ends
            for j in [j for j in self.running if j.end == now]:
                self.finish(j)
            # (b) submits
            self.join(pending, now)
            # (c) one pass, then R3
            started = self.one_pass(now)
            while True:
                zero = [j for j in started if j.end == now]
                if not zero:
                    break
                for j in zero:
                    self.finish(j)
                self.join(pending, now)  # D3: released by these ends, think 0
                started = self.one_pass(now)

    def join(self, pending, now):
        """The arrivals at ``now`` join the queue, as one batch (D3)."""
        self.batches += 1
        while pending and pending[0].submit == now:
            job = pending.pop(0)
            job.batch = self.batches
            self.queue.append(job)
        self.queue.sort(key=_Job.queue_key)

    def release(self, job):
        """D1: the jobs waiting for ``job``, which ends now, arrive after their think time."""
        for succ, think in job.successors:
            succ.submit = job.end + think
            succ.waits = False
            self.pending.append(succ)
        if job.successors:  # pending stays sorted otherwise: a sort per end made replays quadratic
            self.pending.sort(key=_Job.queue_key)

    def one_pass(self, now):
        """Run one scheduling pass at ``now``; return the jobs it started."""
        before = set(id(j) for j in self.running)
        if self.scheduler == "fcfs":
            self.pass_in_order(now, list(self.queue))
        elif self.scheduler == "sjf":
            self.pass_in_order(now, sorted(self.queue, key=_Job.sjf_key))
        elif self.scheduler == "ebf-accasim":
            self.pass_ebf_accasim(now)
        elif self.scheduler in ("prb", "prb-blocking"):
            self.pass_prb(now)
        else:
            self.pass_easy(now)  # easy and easy-sjbf
        return [j for j in self.running if id(j) not in before]

    # Passes offer each job through these two, which tests/naive_alloc.py's replay turns
    # into an allocator's attempts; ``scan``: the jobs the pass visits, in its order.
    def offer(self, job, scan):
        """The allocation ``job`` would get now, or None."""
        return self.fits_now(job)

    def started(self, job, alloc, now):
        self.start(job, alloc, now)

    def pass_in_order(self, now, order):
        for job in order:
            alloc = self.offer(job, order)
            if alloc is None:
                return
            self.started(job, alloc, now)

    def pass_prb(self, now):
        """R7d."""
        order = sorted(self.queue, key=lambda j: (-(now - j.submit) / j.qwait, j.demand(), j.logged, j.job_id, j.idx))
        for job in order:
            alloc = self.offer(job, order)
            if alloc is not None:
                self.started(job, alloc, now)
            elif self.scheduler == "prb-blocking":
                return

    def pass_ebf_accasim(self, now):
        # R7c step 1
        if self.blocked is not None and self.reserved <= now:
            alloc = self.offer(self.blocked, list(self.queue))
            if alloc is not None:
                self.started(self.blocked, alloc, now)
                self.blocked = None
        # step 2
        if self.blocked is None:
            self.pass_in_order(now, list(self.queue))
            if not self.queue:
                return
            self.blocked = self.queue[0]
            self.reserved = self.shadow_time(now, self.blocked)
        # step 3
        scan = list(self.queue)
        for job in [j for j in scan if j is not self.blocked]:
            alloc = self.offer(job, scan)
            if alloc is not None:
                self.started(job, alloc, now)

    def shadow_time(self, now, head):
        """R7/R9 step 2: the first predicted end at which the head fits (M3: now when
        nothing runs and only a window keeps it out)."""
        by_pe = sorted(self.running, key=lambda j: (j.predicted_end(now), j.job_id, j.idx))
        trial = self.m.copy_free()
        for r in by_pe:
            trial = self.released(trial, r)
            if self.m.try_alloc(head, trial) is not None:
                return r.predicted_end(now)
        assert self.maint is not None and not self.running, "head cannot fit even on the empty machine"
        return now

    def pass_easy(self, now):
        self.pass_in_order(now, list(self.queue))  # step 1
        if not self.queue:
            return
        head = self.queue[0]
        shadow = self.shadow_time(now, head)  # step 2
        self.passes.append((now, head.job_id, shadow))
        # free resources at the shadow time (snapshot): every job running now with
        # pe <= shadow counts as ended
        at_shadow = self.m.copy_free()
        for r in self.running:
            if r.predicted_end(now) <= shadow:
                at_shadow = self.released(at_shadow, r)
        behind = list(self.queue[1:])
        if self.scheduler == "easy-sjbf":  # R7b: shortest prediction first, ties in queue order
            behind.sort(key=lambda j: (j.pred, j.queue_key()))
        if self.is_pool:
            self.backfill_pool(now, behind, shadow, at_shadow - head.need)
        else:
            self.backfill_nodes(now, head, behind, shadow, at_shadow)

    def released(self, free, job):
        """A copy of ``free`` with ``job``'s allocation given back."""
        if self.is_pool:
            return free + job.alloc
        out = [list(n) for n in free]
        _Nodes.add(out, job, job.alloc)
        return out

    def backfill_pool(self, now, behind, shadow, extra):
        # step 3 (R7), over the jobs behind the head in the order given
        for job in behind:
            alloc = self.fits_now(job)
            if alloc is None:
                continue
            if now + job.pred <= shadow:
                self.start(job, alloc, now)
            elif job.need <= extra:
                self.start(job, alloc, now)
                extra -= job.need

    def backfill_nodes(self, now, head, behind, shadow, at_shadow):
        # step 3 (R9), over the jobs behind the head in the order given
        past_shadow = []  # (job, alloc) started in step 3 and predicted past shadow
        for job in behind:
            alloc = self.fits_now(job)
            if alloc is None:
                continue
            if now + job.pred <= shadow:
                self.start(job, alloc, now)
                continue
            trial = [list(n) for n in at_shadow]
            for other, oalloc in past_shadow:
                _Nodes.sub(trial, other, oalloc)
            _Nodes.sub(trial, job, alloc)
            if self.m.try_alloc(head, trial) is not None:
                self.start(job, alloc, now)
                past_shadow.append((job, alloc))


def placements(frame) -> dict:
    """Each job id's [(node, units), ...], sorted, from the engine's allocations frame
    (``schedbench.analysis.results.allocations_frame``): what an oracle's ``alloc`` holds."""
    out = {}
    for job_id, node, units in zip(frame["job_id"], frame["node"], frame["units"], strict=True):
        out.setdefault(int(job_id), []).append((int(node), int(units)))
    return {j: sorted(v) for j, v in out.items()}


def _result(n, ids, status, simulated, passes, with_alloc):
    start = [None] * n
    end = [None] * n
    alloc = [None] * n
    for j in simulated:
        start[j.idx] = j.start
        end[j.idx] = j.end
        if with_alloc:
            alloc[j.idx] = sorted(j.alloc)  # by node index, whatever the visiting order
    return NaiveResult(
        job_id=list(ids), start=start, end=end, status=list(status), alloc=alloc, passes=passes
    )


def link_jobs(ids, jobs, status, preceding, think):
    """D1-D2: give each simulated job (``jobs``, one per input position whose ``status`` is
    REPLAYED, in input order) the successors it releases, mark those as waiting, and set
    "predecessor_not_run" in ``status`` (a list, changed in place) for jobs whose
    predecessor is not simulated; returns the simulated jobs left.  ``preceding``, ``think``:
    per input position, or None (no dependencies)."""
    if preceding is None:
        return jobs
    by_idx = {j.idx: j for j in jobs}
    first = {}  # job id -> its first input position
    for i, jid in enumerate(ids):
        first.setdefault(int(jid), i)
    kept = []
    for i in range(len(status)):
        if status[i] != REPLAYED:
            continue
        p = int(preceding[i])
        pi = first.get(p) if p >= 0 else None
        if pi is not None and pi < i:
            if status[pi] != REPLAYED:
                status[i] = PREDECESSOR_NOT_RUN
                continue
            by_idx[pi].successors.append((by_idx[i], max(int(think[i]), 0)))
            by_idx[i].waits = True
        kept.append(by_idx[i])
    return kept


def unreleased(jobs, status):
    """D2: the simulated jobs still waiting at the end (their predecessor never ended)."""
    for j in jobs:
        if j.waits:
            status[j.idx] = PREDECESSOR_NOT_RUN


def replay_pool(job_id, submit, run, size, pred, machine_procs, scheduler, revised=None, preceding=None,
                think=None, qwait=None, steps=()) -> NaiveResult:
    """Replay a trace on a pool of ``machine_procs`` identical processors.

    Inputs are equal-length sequences of ints (numpy arrays are fine); ``pred`` is the
    duration the scheduler believes.  ``scheduler`` is one of :data:`SCHEDULERS`.  See the
    module docstring for the exact readings (R1-R7).  ``revised``: per job, the duration
    believed once it outlives ``pred`` (C1), or None for no correction; ``steps``: the
    raises C1b tries first (empty: C1 alone).  ``preceding``
    and ``think``: each job's predecessor id and think time (D1-D3), or None for no
    dependencies.  ``qwait``: each job's expected queue wait for PRB (R7d; None: 1 s)."""
    ids = [int(x) for x in job_id]
    sub = [int(x) for x in submit]
    rn = [int(x) for x in run]
    sz = [int(x) for x in size]
    pr = [int(x) for x in pred]
    machine_procs = int(machine_procs)
    n = len(ids)
    if not (len(sub) == len(rn) == len(sz) == len(pr) == n):
        raise ValueError("input sequences differ in length")
    status = []
    jobs = []
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
                _Job(idx=i, job_id=ids[i], submit=sub[i], run=rn[i], pred=pr[i], need=sz[i],
                     revised=None if revised is None else int(revised[i]), steps=tuple(steps),
                     qwait=1 if qwait is None else int(qwait[i]))
            )
    jobs = link_jobs(ids, jobs, status, preceding, think)
    rep = _Replay(jobs, _Pool(machine_procs), scheduler, is_pool=True)
    rep.run()
    unreleased(jobs, status)
    return _result(n, ids, status, jobs, rep.passes, with_alloc=False)


def replay_nodes(jobs, nodes, scheduler, allocator, maintenance=None) -> NaiveResult:
    """Replay on heterogeneous nodes.

    ``nodes``: list of (cores, gpus, mics, mem) capacities.  ``jobs``: list of dicts with
    job_id, submit, run, pred, units, unit (per-unit (cores, gpus, mics, mem)) and
    req_nodes (-1 / <= 0: free spread; > 0: exactly that many nodes, each hosting
    units / req_nodes units).  ``allocator``: "ff" or "bf".  Returns a NaiveResult whose
    ``alloc`` holds, for each replayed job, its [(node index, units), ...].  See the
    module docstring (R1-R6, R8, R9; R7d's expected queue waits are all 1 s here).
    ``maintenance``: per node a list of [a, b) windows (M1-M3 in the module docstring), or
    None."""
    if allocator not in ALLOCATORS:
        raise ValueError(f"unknown allocator {allocator!r}")
    caps = [tuple(int(x) for x in nd) for nd in nodes]
    for c in caps:
        if len(c) != NTYPES or min(c) < 0:
            raise ValueError(f"bad node capacity {c}")
    machine = _Nodes(caps, allocator)
    empty = [list(c) for c in caps]
    ids, status, sim = [], [], []
    for i, d in enumerate(jobs):
        unit = tuple(int(x) for x in d["unit"])
        if len(unit) != NTYPES or min(unit) < 0:
            raise ValueError(f"bad per-unit request {unit} for job {d['job_id']}")
        req_nodes = int(d.get("req_nodes", -1))
        units = int(d["units"])
        job = _Job(
            idx=i,
            job_id=int(d["job_id"]),
            submit=int(d["submit"]),
            run=int(d["run"]),
            pred=int(d["pred"]),
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
        if machine.try_alloc(job, empty) is None:
            status.append(DROPPED_TOO_WIDE)
            continue
        status.append(REPLAYED)
        sim.append(job)
    rep = _Replay(sim, machine, scheduler, is_pool=False)
    if maintenance is not None:
        rep.maint = [list(w) for w in maintenance]
    rep.run()
    return _result(len(jobs), ids, status, sim, rep.passes, with_alloc=True)
