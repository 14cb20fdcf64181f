"""Slow, obviously-correct reference for ``priority`` and ``sfs`` on a pool of processors,
written from issue 12's text and Steffen's paper (§2.3, §4.2, §5), on top of
:mod:`naive`'s event loop (R1-R5: ends, arrivals, one pass, zero-length jobs).

Readings (F1-F7), each deliberate:

F1  Priority of job j at ``now``: ``w_age * (now - submit) / 60 + w_size * size + w_fs *
    F(account)``; F = 2^(-U/S), U = the account's decayed usage / the sum of all
    accounts' (0 while nothing has run), S = its allocation share (F = 0 when S = 0).
    The list is sorted by priority high to low, then (submit, id).
F2  Usage: when a job ends at ``now`` (before the pass, with the other ends of the
    instant, in the loop's order), every account's usage is multiplied by
    2^(-(now - last) / half_life) (``last`` = the previous such instant, first 0), then
    the job's size * (now - start) is added to its account.
F3  The plan of a pass: every running job holds its size over [now, start + pred) (nothing
    when that is <= now); a reservation holds [t, t + max(pred, 1)) where t is the first
    instant >= now at which the plan plus the job's size stays within the machine for that
    whole window; the candidates are now and every interval end on the plan (the plan's
    load only falls at an end).
F4  sfs pass 1: the list in priority order; a job whose account occupancy (sizes of its
    running jobs) is <= target and that fits the free processors starts.  The occupancy
    is read when the job is reached, so an account above target is out for the rest of
    the pass (§5).
F5  Pass 2 (priority and sfs): the list in priority order; before any reservation a job
    starts when it fits; once reservations exist a job starts only when it fits and the
    plan with it over [now, now + pred) stays within the machine; a job that does not
    start gets a reservation while fewer than ``depth`` exist.
F6  Occupancy counts jobs that started, whoever started them, until they end.
F7  backfill=False: pass 2 stops at the first job that does not start.
F8  standing=True (sfs): before pass 1, the first ``depth`` jobs of the list that do not
    fit the free processors get reservations on the plan of the running jobs, in order
    (F3); pass 1 then starts a job only when it fits and, when it has pred > 0 and
    reservations exist, the plan with it over [now, now + pred) stays within the machine
    (F5's test).  Pass 2 then starts from the plan of the running jobs alone and makes
    its own reservations (F5).
"""

from __future__ import annotations

import naive
from naive_alloc import (
    CRITICAL,
    _NettiNodes,
    node_order,
    order_ff,
    order_weighted,
    order_weighted_authors,
)


def _plan_max(intervals, t0, t1):
    """Largest load of ``intervals`` [(a, b, size)] at any instant of [t0, t1)."""
    points = {t0} | {a for a, _, _ in intervals if t0 < a < t1}
    return max(sum(s for a, b, s in intervals if a <= t < b) for t in points)


def _earliest(intervals, size, d, now, cap):
    for t in sorted({now} | {b for _, b, _ in intervals if b > now}):
        if _plan_max(intervals, t, t + d) + size <= cap:
            return t
    raise AssertionError("no fit on an empty plan")


class _FairShareReplay(naive._Replay):
    def __init__(self, jobs, procs, sfs, weights, depth, account_of, target, shares, half_life, backfill,
                 standing=False):
        super().__init__(jobs, naive._Pool(procs), "fcfs", is_pool=True)
        self.backfill = backfill
        self.standing = standing
        self.procs = procs
        self.sfs = sfs
        self.w = weights
        self.depth = depth
        self.account_of = account_of  # job idx -> account
        self.target = target
        self.shares = shares
        self.half = half_life
        self.usage = {a: 0.0 for a in target}
        self.last = 0
        self.occ = {a: 0 for a in target}
        self.pass1_starts = []  # (now, job id, account occupancy before, target)
        self.plans = []  # (now, [(from, to, size)]) at the end of every pass

    def start(self, job, alloc, now):
        super().start(job, alloc, now)
        self.occ[self.account_of[job.idx]] += job.need

    def finish(self, job):
        super().finish(job)
        a = self.account_of[job.idx]
        self.occ[a] -= job.need
        now = job.end
        if now > self.last:
            f = 2.0 ** (-float(now - self.last) / float(self.half))
            for b in self.usage:  # accounts in index order, as sums are taken
                self.usage[b] *= f
            self.last = now
        self.usage[a] += float(job.need) * float(now - job.start)

    def _factor(self, a):
        total = 0.0
        for b in self.usage:
            total += self.usage[b]
        if self.shares[a] <= 0.0:
            return 0.0
        u = self.usage[a] / total if total > 0.0 else 0.0
        return 2.0 ** (-u / self.shares[a])

    def _key(self, job, now):
        age = float(now - job.submit) / 60.0
        prio = self.w[0] * age + self.w[1] * float(job.need) + self.w[2] * self._factor(self.account_of[job.idx])
        return (-prio, job.idx)

    def one_pass(self, now):
        before = set(id(j) for j in self.running)
        order = sorted(self.queue, key=lambda j: self._key(j, now))
        plan = [(now, j.start + j.pred, j.need) for j in self.running if j.start + j.pred > now]
        if self.sfs and self.standing:  # F8
            made = 0
            for job in order:
                if made >= self.depth:
                    break
                if job.need <= self.m.free:
                    continue
                d = max(job.pred, 1)
                t = _earliest(plan, job.need, d, now, self.procs)
                plan.append((t, t + d, job.need))
                made += 1
            for job in order:
                a = self.account_of[job.idx]
                if self.occ[a] > self.target[a] or job.need > self.m.free:
                    continue
                if made and job.pred > 0 and _plan_max(plan, now, now + job.pred) + job.need > self.procs:
                    continue
                self.pass1_starts.append((now, job.job_id, self.occ[a], self.target[a]))
                self.start(job, job.need, now)
                if job.pred > 0:
                    plan.append((now, now + job.pred, job.need))
            self.plans.append((now, list(plan)))
            plan = [(now, j.start + j.pred, j.need) for j in self.running if j.start + j.pred > now]
        elif self.sfs:
            for job in order:
                a = self.account_of[job.idx]
                if self.occ[a] <= self.target[a] and job.need <= self.m.free:
                    self.pass1_starts.append((now, job.job_id, self.occ[a], self.target[a]))
                    self.start(job, job.need, now)
                    if job.pred > 0:
                        plan.append((now, now + job.pred, job.need))
        reservations = 0
        for job in order:
            if job not in self.queue:
                continue
            fits = job.need <= self.m.free
            if fits and reservations > 0 and job.pred > 0:
                fits = _plan_max(plan, now, now + job.pred) + job.need <= self.procs
            if fits:
                self.start(job, job.need, now)
                if job.pred > 0:
                    plan.append((now, now + job.pred, job.need))
            elif not self.backfill:
                break
            elif reservations < self.depth:
                d = max(job.pred, 1)
                t = _earliest(plan, job.need, d, now, self.procs)
                plan.append((t, t + d, job.need))
                reservations += 1
        # what the backfill promises: after every start of the pass, the plan (reservations
        # included) still fits the machine at every instant
        self.plans.append((now, list(plan)))
        return [j for j in self.running if id(j) not in before]


def replay_pool(job_id, submit, run, size, pred, account, procs, *, sfs, weights, depth, target, shares,
                half_life=7 * 86400, backfill=True, standing=False, preceding=None, think=None):
    """Replay on ``procs`` processors.  ``account``: each job's account index; ``target``
    and ``shares``: per account index (sequences); ``weights``: (age, size, fairshare);
    ``preceding``, ``think``: job dependencies (naive.py's D1-D3), or None."""
    ids = [int(x) for x in job_id]
    n = len(ids)
    status, jobs = [], []
    account_of = {}
    for i in range(n):
        if int(run[i]) < 0:
            status.append(naive.DROPPED_NO_RUNTIME)
        elif int(size[i]) <= 0:
            status.append(naive.DROPPED_NO_SIZE)
        elif int(size[i]) > procs:
            status.append(naive.DROPPED_TOO_WIDE)
        else:
            status.append(naive.REPLAYED)
            jobs.append(naive._Job(idx=i, job_id=ids[i], submit=int(submit[i]), run=int(run[i]),
                                   pred=int(pred[i]), need=int(size[i])))
            account_of[i] = int(account[i])
    accounts = range(len(target))
    jobs = naive.link_jobs(ids, jobs, status, preceding, think)
    rep = _FairShareReplay(jobs, int(procs), sfs, tuple(float(w) for w in weights), int(depth), account_of,
                           {a: int(target[a]) for a in accounts}, {a: float(shares[a]) for a in accounts},
                           int(half_life), bool(backfill), bool(standing))
    rep.run()
    naive.unreleased(jobs, status)
    res = naive._result(n, ids, status, jobs, rep.passes, with_alloc=False)
    res.pass1_starts, res.plans = rep.pass1_starts, rep.plans
    return res


# ---------------------------------------------------------------------------------------
# On nodes (issue 26): jobs with node counts, several resource types, and eligible nodes.
#
# N1  A job's size is its cores (units x cores per unit); a job without cores counts
#     units x its first positive per-unit amount.  Occupancy, usage, the size term and the
#     trace's work count sizes.
# N2  A job may use only its eligible nodes: every allocation it gets (now, or in a
#     reservation) is tried as if the other nodes had nothing free.
# N3  The plan of a pass at ``now``: free(node, type, s) for s >= now = capacity - the
#     allocations of the running jobs (those started in this pass too) with max(start +
#     pred, now) > s - the placements of the reservations with t <= s < t + d.  Over a
#     window the plan's free amount is the least value, per node and type, over every
#     instant of the window (read at its start and at every change point inside it);
#     a negative amount counts as 0.
# N4  A reservation (pass 2's first ``depth`` jobs that do not start) is the first instant
#     t in {now} and the plan's change points after now at which the job's allocation,
#     nodes in index order, succeeds on the plan's free amounts over [t, t + max(pred, 1)):
#     it holds that placement.
# N5  Once reservations exist, a job with pred > 0 that fits now (allocation A, with the
#     run's allocator) starts only when, A being taken away over [now, now + pred), each
#     reservation in turn still fits over its window beside the others: its placement is
#     kept when it still fits, else it is replaced by the allocation (index order) that
#     succeeds there; if some reservation gets none, the job does not start and the
#     reservations stay as they were.  A job with pred = 0 starts when it fits.
# N6  standing=True (sfs, F8 on nodes): before pass 1, the first ``depth`` jobs of the
#     list that do not fit now get reservations (N4, in order); pass 1 starts a job that
#     fits now only when, for pred > 0 and reservations held, they survive it (N5).  Pass 2
#     then starts with no reservation.
# N7  weighted / priority-weighted (Netti et al., docs/reference/allocators.md): an
#     *attempt* is every offer of a queued job for a start now: sfs's pass 1 offers, in
#     the pass's priority order, each job of an account at or below target; pass 2 offers
#     every queued job in that order (strict: up to the first that does not start,
#     included).  Every pass offers, even one where nothing is free, and every job it
#     offers is an attempt, whatever the free totals: one that does not fit now fails.
#     An offer fails when the job does not fit now or, with reservations held and
#     pred > 0, would delay one (N5); else it succeeds.  Making a reservation (and N6's
#     test of which jobs fit) is no attempt; a job offered in both passes of sfs makes
#     two attempts.  The node order of an attempt
#     is computed first, on the free amounts of every node, with the priorities p_k as
#     they stand; then p_k moves (+1 failed, -1 succeeded, within [1, bound]).  Weights:
#     ``text`` over every job queued at that moment (this one included); ``authors`` over
#     the next ``window`` jobs still queued after this one in the pass's priority order
#     (the order the pass offers in, fixed at its start).
# ---------------------------------------------------------------------------------------


def job_size(units, unit):
    """N1."""
    if unit[0] > 0:
        return units * unit[0]
    for amount in unit:
        if amount > 0:
            return units * amount
    return 0


class _Eligible(naive._Nodes):
    """N2: allocations on a job's eligible nodes only (``job.elig``: a set of node
    indices, or None for every node).  The allocator (ff, bf, balanced or keller) orders
    every node by the free amounts it is given, the ineligible ones included."""

    def try_alloc(self, job, free):
        self.every = free
        if job.elig is not None:
            free = [list(row) if i in job.elig else [0] * naive.NTYPES for i, row in enumerate(free)]
        return super().try_alloc(job, free)

    def order(self, free):
        return node_order(self.allocator, self.every, self.cap)


class _NettiEligible(_Eligible):
    """N2 and N7: ``_Eligible`` that also takes weighted and priority-weighted; during an
    attempt (``current`` set, with ``scan`` the pass's priority order and ``queue`` the
    jobs queued now) it orders every node by naive_alloc's order functions."""

    move = _NettiNodes.move  # N7's p_k rule (reads netti, prio, bound)

    def __init__(self, nodes, allocator, weight_rule="authors", window=100, bound=10):
        super().__init__(nodes, allocator)
        self.netti = allocator
        self.rule = weight_rule
        self.window = window
        self.bound = bound
        self.prio = {k: 1 for k in CRITICAL}
        self.current = None
        self.scan = []
        self.queue = []

    def order(self, free):
        if self.netti not in ("weighted", "priority-weighted"):
            return super().order(free)
        job = self.current
        if job is None:  # a test of fit only: it does not depend on the order
            return order_ff(self.every)
        free = self.every
        units, req = job.need.units, list(job.need.unit)
        prio = self.prio if self.netti == "priority-weighted" else None
        if self.rule == "authors":
            pos = next(i for i, q in enumerate(self.scan) if q is job)
            after = [(q.pred, q.need.units, list(q.need.unit)) for q in self.scan[pos + 1:] if q in self.queue]
            return order_weighted_authors(free, self.cap, units, req, after[: self.window], prio)
        queued = [(q.pred, q.need.units, list(q.need.unit)) for q in self.queue]
        return order_weighted(free, self.cap, units, req, queued, prio)


class _FairShareNodesReplay(_FairShareReplay):
    def __init__(self, jobs, nodes, allocator, netti=None, **kw):
        naive._Replay.__init__(self, jobs, _NettiEligible(nodes, allocator, **(netti or {})), "fcfs",
                               is_pool=False)
        self.m.queue = self.queue
        self.planner = _Eligible(nodes, "ff")  # reservations place in node index order
        self.cap = [list(n) for n in nodes]
        self.backfill = kw["backfill"]
        self.standing = kw["standing"]
        self.sfs = kw["sfs"]
        self.w = kw["weights"]
        self.depth = kw["depth"]
        self.account_of = kw["account_of"]
        self.target = kw["target"]
        self.shares = kw["shares"]
        self.half = kw["half_life"]
        self.usage = {a: 0.0 for a in self.target}
        self.last = 0
        self.occ = {a: 0 for a in self.target}
        self.pass1_starts = []
        self.plans = []  # (now, [(t, end, job, alloc)], [(job, start, pe)]) after every pass
        self.prio_trace = []  # (now, p_gpu, p_mic) after every pass

    def offer(self, job, now, order, holds):
        """N7: an attempt of ``job`` (N5 when ``holds``); returns (its allocation or None,
        the reservations as they then stand)."""
        self.m.current, self.m.scan = job, order
        try:
            alloc = self.fits_now(job)
        finally:
            self.m.current = None
        if alloc is not None and holds and job.pred > 0:
            new = self._survive(job, alloc, now, holds)
            if new is None:
                alloc = None
            else:
                holds = new
        self.m.move(job, 1 if alloc is None else -1)
        return alloc, holds

    # sizes instead of processors (N1)
    def start(self, job, alloc, now):
        naive._Replay.start(self, job, alloc, now)
        self.occ[self.account_of[job.idx]] += job.size

    def finish(self, job):
        naive._Replay.finish(self, job)
        a = self.account_of[job.idx]
        self.occ[a] -= job.size
        now = job.end
        if now > self.last:
            f = 2.0 ** (-float(now - self.last) / float(self.half))
            for b in self.usage:
                self.usage[b] *= f
            self.last = now
        self.usage[a] += float(job.size) * float(now - job.start)

    def _key(self, job, now):
        age = float(now - job.submit) / 60.0
        prio = self.w[0] * age + self.w[1] * float(job.size) + self.w[2] * self._factor(self.account_of[job.idx])
        return (-prio, job.idx)

    # the plan (N3)
    def _free_at(self, s, now, holds, extra):
        free = [list(c) for c in self.cap]
        for r in self.running:
            if r.predicted_end(now) > s:
                _sub(free, r, r.alloc)
        for job, alloc, a, b in list(holds) + list(extra):
            if a <= s < b:
                _sub(free, job, alloc)
        return free

    def _window(self, a, b, now, holds, extra):
        points = {a}
        for r in self.running:
            points.add(r.predicted_end(now))
        for _, _, x, y in list(holds) + list(extra):
            points.update((x, y))
        least = None
        for s in sorted(p for p in points if a <= p < b):
            free = self._free_at(s, now, holds, extra)
            least = free if least is None else [[min(u, v) for u, v in zip(x, y, strict=True)]
                                                for x, y in zip(least, free, strict=True)]
        return [[max(0, v) for v in row] for row in least]

    def _reserve(self, job, now, holds):
        """N4."""
        d = max(job.pred, 1)
        points = {now}
        for r in self.running:
            points.add(r.predicted_end(now))
        for _, _, x, y in holds:
            points.update((x, y))
        for t in sorted(p for p in points if p >= now):
            alloc = self.planner.try_alloc(job, self._window(t, t + d, now, holds, []))
            if alloc is not None:
                return (job, alloc, t, t + d)
        return None

    def _survive(self, job, alloc, now, holds):
        """N5: the reservations as they stand after ``job`` starts with ``alloc``, or None."""
        extra = [(job, alloc, now, now + job.pred)]
        new = list(holds)
        for i, (hjob, halloc, t, e) in enumerate(new):
            others = new[:i] + new[i + 1:]
            win = self._window(t, e, now, others, extra)
            if all(k * hjob.need.unit[x] <= win[node][x] for node, k in halloc for x in range(naive.NTYPES)):
                continue
            again = self.planner.try_alloc(hjob, win)
            if again is None:
                return None
            new[i] = (hjob, again, t, e)
        return new

    def one_pass(self, now):
        before = set(id(j) for j in self.running)
        order = sorted(self.queue, key=lambda j: self._key(j, now))
        if self.sfs and self.standing:  # N6
            holds = []
            made = 0
            for job in order:
                if made >= self.depth:
                    break
                if self.fits_now(job) is not None:
                    continue
                h = self._reserve(job, now, holds)
                if h is not None:
                    holds.append(h)
                made += 1
            for job in order:
                a = self.account_of[job.idx]
                if self.occ[a] > self.target[a]:
                    continue
                alloc, holds = self.offer(job, now, order, holds)
                if alloc is not None:
                    self.pass1_starts.append((now, job.job_id, self.occ[a], self.target[a]))
                    self.start(job, alloc, now)
            self.plans.append((now, list(holds), [(r, r.start, r.predicted_end(now)) for r in self.running]))
        elif self.sfs:
            for job in order:
                a = self.account_of[job.idx]
                if self.occ[a] <= self.target[a]:
                    alloc, _ = self.offer(job, now, order, [])
                    if alloc is not None:
                        self.pass1_starts.append((now, job.job_id, self.occ[a], self.target[a]))
                        self.start(job, alloc, now)
        holds = []
        reservations = 0
        for job in order:
            if job not in self.queue:
                continue
            alloc, holds = self.offer(job, now, order, holds)
            if alloc is not None:
                self.start(job, alloc, now)
            elif not self.backfill:
                break
            elif reservations < self.depth:
                h = self._reserve(job, now, holds)
                if h is not None:
                    holds.append(h)
                reservations += 1
        self.plans.append((now, list(holds), [(r, r.start, r.predicted_end(now)) for r in self.running]))
        self.prio_trace.append((now, self.m.prio[1], self.m.prio[2]))
        return [j for j in self.running if id(j) not in before]


def _sub(free, job, alloc):
    """Take a placement away, letting amounts go negative (a plan may be overdrawn while a
    candidate is tested)."""
    for node, k in alloc:
        for x in range(naive.NTYPES):
            free[node][x] -= k * job.need.unit[x]


def replay_nodes(jobs, nodes, allocator, *, sfs, weights, depth, target, shares, half_life=7 * 86400,
                 backfill=True, standing=False, weight_rule="authors", window=100, bound=10):
    """Replay ``jobs`` (dicts: job_id, submit, run, pred, units, unit = per-unit (cores,
    GPUs, MICs, MiB), req_nodes, elig = set of node indices or None, account = index) on
    ``nodes`` ((cores, GPUs, MICs, MiB) each) with allocator "ff", "bf", "balanced",
    "keller", "weighted" or "priority-weighted" (N7: ``weight_rule``, ``window`` and the
    priority ``bound``, critical types GPUs and MICs); the reservations place first fit.
    A job that no empty machine hosts on its eligible nodes, or that asks for nothing, is
    not replayed (status "dropped").  Returns a naive.NaiveResult plus pass1_starts,
    plans and prio_trace."""
    caps = [tuple(int(x) for x in nd) for nd in nodes]
    empty = [list(c) for c in caps]
    probe = _Eligible(caps, "ff")
    ids, status, sim, account_of = [], [], [], {}
    for i, d in enumerate(jobs):
        unit = tuple(int(x) for x in d["unit"])
        units = int(d["units"])
        job = naive._Job(idx=i, job_id=int(d["job_id"]), submit=int(d["submit"]), run=int(d["run"]),
                         pred=int(d["pred"]),
                         need=naive._NodeRequest(units=units, unit=unit, req_nodes=int(d.get("req_nodes", -1))))
        job.elig = d.get("elig")
        job.size = job_size(units, unit)
        ids.append(job.job_id)
        if job.run < 0 or units <= 0 or max(unit) <= 0 or probe.try_alloc(job, empty) is None:
            status.append("dropped")
            continue
        status.append(naive.REPLAYED)
        sim.append(job)
        account_of[i] = int(d["account"])
    accounts = range(len(target))
    rep = _FairShareNodesReplay(
        sim, caps, allocator, netti=dict(weight_rule=weight_rule, window=int(window), bound=int(bound)),
        sfs=sfs, weights=tuple(float(w) for w in weights), depth=int(depth),
        account_of=account_of, target={a: int(target[a]) for a in accounts},
        shares={a: float(shares[a]) for a in accounts}, half_life=int(half_life), backfill=bool(backfill),
        standing=bool(standing))
    rep.run()
    res = naive._result(len(jobs), ids, status, sim, rep.passes, with_alloc=True)
    res.pass1_starts, res.plans, res.prio_trace = rep.pass1_starts, rep.plans, rep.prio_trace
    return res
