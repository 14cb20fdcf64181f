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
"""

from __future__ import annotations

import naive


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
    def __init__(self, jobs, procs, sfs, weights, depth, account_of, target, shares, half_life, backfill):
        super().__init__(jobs, naive._Pool(procs), "fcfs", is_pool=True)
        self.backfill = backfill
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
        if self.sfs:
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
                half_life=7 * 86400, backfill=True):
    """Replay on ``procs`` processors.  ``account``: each job's account index; ``target``
    and ``shares``: per account index (sequences); ``weights``: (age, size, fairshare)."""
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
    rep = _FairShareReplay(jobs, int(procs), sfs, tuple(float(w) for w in weights), int(depth), account_of,
                           {a: int(target[a]) for a in accounts}, {a: float(shares[a]) for a in accounts},
                           int(half_life), bool(backfill))
    rep.run()
    res = naive._result(n, ids, status, jobs, rep.passes, with_alloc=False)
    res.pass1_starts, res.plans = rep.pass1_starts, rep.plans
    return res
