"""A naive oracle of the ``slurm`` scheduler, written from its rules (issue 26 item 4 and
the module docstring of ``schedbench.schedulers.slurm``), event by event and slow.

At every decision instant (a submission, an end, every backfill-grid instant while jobs
wait, again at the same instant after zero-length jobs ended) it: frees the ended jobs,
queues the arrivals, runs the main scheduler, then, at a grid instant (or always with
``bf_interval`` 0), a backfill cycle built from scratch.  Priorities are evaluated
from their definitions at the last calc instant (fair-share usage recomputed from the
whole history every time).  A job that starts is placed by the run's allocator (first
fit in node index order by default, as ``ff``; ``replay``'s ``allocator``), the plan's
placements are first fit, both on the job's eligible nodes (``Job.nodes_ok``: its
partitions' nodes that carry its features); the plan is per node, or on the totals when
every job is single units of one type spread freely over every node (as the scheduler
documents).  A job
belongs to one or more partitions (``Job.parts``): the main loop passes it over when all
of them are blocked and blocks all of them when it does not start.

Job dependencies (``replay(..., dependencies=True)``; ``Job.job_id``, ``preceding`` and
``think``, SWF fields 1, 17 and 18): a job whose ``preceding`` id names a job before it in
the list is not queued until that job ends plus max(think, 0) (Slurm's reason
Dependency): that instant, its ``eligible`` time, replaces its submit for its arrival
and its age; ties between equal priorities still go by list position (Slurm's submit
time, then job id).  A ``preceding`` that is negative, names no job or not an earlier one
is no link.  A job whose predecessor is never run (it cannot run, or is itself such a
job) never runs either: ``status`` "predecessor_not_run".  A job released with think 0
by a zero-length job's end joins before the extra pass at that instant.

Netti et al.'s Weighted and Priority-Weighted (``allocator`` "weighted" or
"priority-weighted"; ``weight_rule``, ``window``, ``priority_bound``), as
docs/reference/allocators.md gives them for slurm: a job that starts is placed along
``naive_alloc.order_weighted`` (the "text" rule: every job queued at that moment, this one
included) or ``naive_alloc.order_weighted_authors`` (the "authors" rule: the next
``window`` jobs still queued after this one in slurm's scheduling order, the order the
main loop and the backfill cycle walk), ranking every node with the machine's totals in
the weights; ``place`` skips the nodes the job may not use, as for the other
allocators.  Priority-Weighted's p_k (GPUs, MICs; from 1, within [1, priority_bound])
move once per attempt, after that attempt's node order:
an attempt is a job the main loop offers (+1 when it does not fit now, -1 when it
starts; jobs it passes over because their partitions are blocked, or beyond
``default_queue_depth``, are not offered) or a job a backfill cycle starts now (-1,
whichever nodes it gets); a backfill test that finds no start now (a reservation, or
nothing within the window) is no attempt.  Reservations never ask the allocator: their
nodes are first fit in index order on the plan.

Maintenance windows (``maintenance``: per node a list of [a, b) windows, as
``naive.replay_nodes`` takes them; docs/reference/site-file.md, "Which scheduler applies
what", the queue schedulers' rules, which naive.py writes as M1 and M2): in the main loop
a job sees every node with a window meeting [now, now + max(est, 1)) as having nothing
free, both for whether it fits and for its placement, so that Weighted's free and load
totals count those nodes as taken (M1); while jobs wait, every window end after now is a
decision instant (M2).  The backfill cycle has no rule for windows (neither the replay
contract nor the engine's slurm plan has one: ``slurm`` refuses a site with maintenance
windows), so windows are modelled only with the backfill off (``bf_interval`` -1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from naive_alloc import (
    CRITICAL,
    move_priorities,
    node_order,
    order_weighted,
    order_weighted_authors,
)


# eq=False: jobs compare by identity, as naive._Job's (why: there)
@dataclass(eq=False)
class Job:
    submit: int
    run: int
    est: int
    units: int
    req: tuple  # per-unit (cores, GPUs, MICs, MiB)
    req_nodes: int = -1
    user: int = 0
    account: int = 0
    parts: tuple = (0,)  # partition indices
    nodes_ok: frozenset | None = None  # eligible nodes (None: every node)
    tier: int = 0
    part_factor: float = 0.0
    qos_factor: float = 0.0
    start: int | None = None
    nodes: list = field(default_factory=list)  # (node, units)
    job_id: int = -1  # job dependencies (module docstring): this job's id,
    preceding: int = -1  # the id of the job it waits for (-1: none),
    think: int = -1  # the think time after that job's end (s; negative: 0),
    eligible: int | None = None  # filled in: when it joined the queue,
    status: str = "replayed"  # and "predecessor_not_run" when it never could


def _arrival(j):
    """When the job joins the queue: its eligible time with dependencies, else its submit."""
    return j.submit if j.eligible is None else j.eligible


def _link(jobs, valid):
    """Job dependencies: the jobs of ``valid`` that can run (a job whose predecessor
    cannot is marked "predecessor_not_run") and, by id() of a predecessor, its
    successors."""
    can = {id(j) for j in valid}
    first = {}
    for i, j in enumerate(jobs):
        first.setdefault(j.job_id, i)
    successors = {}
    for i, j in enumerate(jobs):
        p = first.get(j.preceding) if j.preceding >= 0 else None
        if id(j) not in can or p is None or p >= i:
            continue
        if id(jobs[p]) not in can:
            can.discard(id(j))
            j.status = "predecessor_not_run"
        else:
            successors.setdefault(id(jobs[p]), []).append(j)
    return [j for j in valid if id(j) in can], successors


def _ceil(t, res):
    return -(-t // res) * res


def _host(free, req):
    h = math.inf
    for k in range(4):
        if req[k] > 0:
            h = min(h, free[k] // req[k])
    return h


def place(free, job, order=None):
    """The allocation rule on ``free`` (list of [4] lists), visiting nodes in ``order``
    (default: index order, first fit), on the job's eligible nodes: [(node, units)] or
    None."""
    out = []
    ok = job.nodes_ok
    order = range(len(free)) if order is None else order
    if job.req_nodes > 0:
        per = job.units // job.req_nodes
        for i in order:
            f = free[i]
            if ok is not None and i not in ok:
                continue
            if _host(f, job.req) >= per:
                out.append((i, per))
                if len(out) == job.req_nodes:
                    return out
        return None
    left = job.units
    for i in order:
        f = free[i]
        if ok is not None and i not in ok:
            continue
        h = _host(f, job.req)
        if h > 0:
            take = min(h, left)
            out.append((i, take))
            left -= take
            if left == 0:
                return out
    return None


def replay(jobs, caps, *, weight_age=0.0, weight_fairshare=0.0, weight_jobsize=0.0, weight_partition=0.0,
           weight_qos=0.0, max_age=604800, decay_half_life=604800, favor_small=False, calc_period=300,
           default_queue_depth=100, bf_interval=30, bf_max_job_test=500, bf_window=86400, bf_resolution=60,
           bf_max_job_user=0, priority_type="multifactor", shares=None, dependencies=False, allocator="ff",
           weight_rule="authors", window=100, priority_bound=10, maintenance=None):
    """Replay ``jobs`` (list of :class:`Job`, in (submit, id) order) on nodes ``caps``
    (list of 4-tuples); fills each job's ``start`` (None: never); with ``dependencies``
    also ``eligible`` and ``status`` (module docstring).  ``allocator`` (ff, bf, balanced
    or keller) places the jobs that start: its order over every node's free amounts, the
    nodes a job may not use skipped; the backfill's plan always visits nodes in index
    order.  "weighted" and "priority-weighted" (options ``weight_rule``, ``window``,
    ``priority_bound``) as the module docstring says.  ``maintenance``: per node a list
    of [a, b) windows (module docstring; only with ``bf_interval`` -1)."""
    m = len(caps)
    if maintenance is not None:
        assert bf_interval < 0, "naive_slurm models maintenance windows with the backfill off only"
        assert len(maintenance) == m
    netti = allocator in ("weighted", "priority-weighted")
    prio = {k: 1 for k in CRITICAL}

    def allocate(free, j, after):
        """The allocator's node order for job j; ``after``: the jobs behind j in the
        scheduling order (queued or not: those no longer queued are dropped here)."""
        if not netti:
            return node_order(allocator, free, [list(c) for c in caps])
        p = prio if allocator == "priority-weighted" else None
        cap = [list(c) for c in caps]
        if weight_rule == "authors":
            behind = [(q.est, q.units, list(q.req)) for q in after if q in queue][:window]
            return order_weighted_authors(free, cap, j.units, list(j.req), behind, p)
        return order_weighted(free, cap, j.units, list(j.req), [(q.est, q.units, list(q.req)) for q in queue], p)

    def move(j, step):
        """Priority-Weighted: an attempt of j moved p_k of each critical type it needs."""
        if allocator == "priority-weighted":
            move_priorities(prio, j.req, step, priority_bound)
    n_cores = sum(c[0] for c in caps)
    valid = [j for j in jobs if j.run >= 0 and j.units > 0 and place([list(c) for c in caps], j) is not None]
    successors = {}
    if dependencies:
        valid, successors = _link(jobs, valid)
        released = {id(s) for ss in successors.values() for s in ss}
        for j in valid:
            if id(j) not in released:
                j.eligible = j.submit
    if not valid:
        return jobs
    pool = all(j.req_nodes <= 0 and sum(1 for r in j.req if r > 0) == 1 and max(j.req) == 1
               and (j.nodes_ok is None or len(j.nodes_ok) == m) for j in valid)
    t0 = min(j.submit for j in valid)
    accounts = sorted({j.account for j in jobs})
    sh = {a: (shares or {}).get(a, 1.0) for a in accounts}
    total_sh = sum(sh.values())
    basic = priority_type == "basic"

    def size_factor(j):
        cpus = j.units * j.req[0]
        mn = j.req_nodes if j.req_nodes > 0 else 1
        if favor_small:
            v = (m - mn) / m
            if cpus:
                v = (v + (n_cores - cpus) / n_cores) / 2
        else:
            v = mn / m
            if cpus:
                v = (v + cpus / n_cores) / 2
        return min(max(v, 0.0), 1.0)

    def usage_at(r):
        """Decayed usage per account at calc instant r (from the whole history)."""
        u = dict.fromkeys(accounts, 0.0)
        k = 1
        while t0 + k * calc_period <= r:
            a, b = t0 + (k - 1) * calc_period, t0 + k * calc_period
            decay = 2.0 ** (-(r - b) / decay_half_life) if decay_half_life > 0 else 1.0
            for j in valid:
                if j.start is None:
                    continue
                end = j.start + j.run
                ov = min(end, b) - max(j.start, a)
                if ov > 0:
                    u[j.account] += decay * j.units * j.req[0] * ov
            k += 1
        # what the engine folds in: decay of the sum, not a sum of decays (same value up to rounding)
        return u

    def fs_factor(r):
        u = usage_at(r)
        tot = sum(u.values())
        out = {}
        for a in accounts:
            s = sh[a] / total_sh if total_sh > 0 else 0.0
            out[a] = 0.0 if s <= 0 else 2.0 ** (-((u[a] / tot) if tot > 0 else 0.0) / s)
        return out

    def last_calc(t):
        return t0 + ((t - t0) // calc_period) * calc_period

    def priority(j, t):
        if basic:
            return 0.0
        r = last_calc(t)
        arrived = _arrival(j)
        at = arrived if arrived > r else r
        fsr = last_calc(at)
        age = min(max(at - arrived, 0), max_age) / max_age
        fs = fs_factor(fsr)[j.account] if weight_fairshare > 0 else 0.0
        return (weight_jobsize * size_factor(j) + weight_partition * j.part_factor + weight_qos * j.qos_factor
                + weight_age * age + weight_fairshare * fs)

    free = [list(c) for c in caps]
    running = []  # jobs
    queue = []
    idx = {id(j): i for i, j in enumerate(jobs)}
    waiting = {id(s) for ss in successors.values() for s in ss}
    pending_arrivals = sorted((j for j in valid if id(j) not in waiting), key=lambda j: (j.submit, idx[id(j)]))

    def release(j, t):
        """Job dependencies: the jobs waiting for j, which ends at t, become eligible."""
        for s in successors.get(id(j), ()):
            s.eligible = t + max(s.think, 0)
            pending_arrivals.append(s)
        pending_arrivals.sort(key=lambda j: (_arrival(j), idx[id(j)]))

    def take(nodes, j, sign):
        for i, u in nodes:
            for k in range(4):
                free[i][k] -= sign * u * j.req[k]

    def start(j, nodes, t):
        j.start, j.nodes = t, nodes
        take(nodes, j, 1)
        running.append(j)
        queue.remove(j)

    def ordered(t):
        pr = {id(j): priority(j, t) for j in queue}
        return sorted(queue, key=lambda j: (-j.tier, -pr[id(j)], idx[id(j)]))

    def visible(t, j):
        """The free amounts job j sees at t: with maintenance windows, every node whose
        window meets [t, t + max(est, 1)) has nothing free (module docstring, M1)."""
        if maintenance is None:
            return free
        end = t + max(j.est, 1)
        return [[0] * 4 if any(a < end and t < b for a, b in maintenance[i]) else list(free[i]) for i in range(m)]

    def main(t):
        blocked = set()
        order = ordered(t)
        for r, j in enumerate(order[:default_queue_depth]):
            if blocked.issuperset(j.parts):
                continue
            seen = visible(t, j)
            if place(seen, j) is None:  # whether it fits does not depend on the order
                move(j, 1)
                blocked.update(j.parts)
            else:
                nodes = place(seen, j, allocate(seen, j, order[r + 1:]))
                move(j, -1)
                start(j, nodes, t)

    def backfill(t):
        # holds: (start, end, {node: amounts}) ; running jobs hold [t, rounded expected end)
        holds = []
        for j in running:
            e = _ceil(max(j.start + j.est, t + 1), bf_resolution)
            holds.append((t, e, j, j.nodes))
        tested = 0
        per_user = {}
        order = ordered(t)
        for j in order:
            if bf_max_job_user > 0:
                if per_user.get(j.user, 0) >= bf_max_job_user:
                    continue
                per_user[j.user] = per_user.get(j.user, 0) + 1
            tested += 1
            if tested > bf_max_job_test:
                break
            d = max(j.est, 1)
            cands = sorted({t} | {h[1] for h in holds if h[1] > t})
            found = None
            for s in cands:
                if s > t + bf_window:
                    break
                points = sorted({s} | {h[0] for h in holds if s < h[0] < s + d} | {h[1] for h in holds if s < h[1] < s + d})
                if pool:
                    ok = True
                    for x in points:
                        used = [0] * 4
                        for (hs, he, hj, hn) in holds:
                            if hs <= x < he:
                                for k in range(4):
                                    used[k] += sum(u for _, u in hn) * hj.req[k]
                        cap = [sum(c[k] for c in caps) for k in range(4)]
                        if any(j.req[k] > 0 and cap[k] - used[k] < j.units * j.req[k] for k in range(4)):
                            ok = False
                            break
                    if ok:
                        found = (s, None)
                        break
                else:
                    least = [list(c) for c in caps]
                    for i in range(m):
                        for x in points:
                            av = list(caps[i])
                            for (hs, he, hj, hn) in holds:
                                if hs <= x < he:
                                    for node, u in hn:
                                        if node == i:
                                            for k in range(4):
                                                av[k] -= u * hj.req[k]
                            least[i] = [min(a, b) for a, b in zip(least[i], av, strict=True)]
                    nodes = place(least, j)
                    if nodes is not None:
                        found = (s, nodes)
                        break
            if found is None:
                continue
            s, plan_nodes = found
            e = _ceil(s + d, bf_resolution)
            if s == t:
                nodes = place(free, j, allocate(free, j, order[order.index(j) + 1:]))
                move(j, -1)
                if not pool and not _fits_plan(nodes, j, t, e, holds, caps):
                    nodes = plan_nodes  # the allocator's nodes would enter a reservation
                start(j, nodes, t)
                holds.append((t, e, j, nodes))
            else:
                if pool:
                    plan_nodes = [(0, j.units)]
                holds.append((s, e, j, plan_nodes))

    def _fits_plan(nodes, j, t, e, holds, caps):
        points = sorted({t} | {h[0] for h in holds if t < h[0] < e} | {h[1] for h in holds if t < h[1] < e})
        for node, u in nodes:
            for x in points:
                av = list(caps[node])
                for (hs, he, hj, hn) in holds:
                    if hs <= x < he:
                        for nd, uu in hn:
                            if nd == node:
                                for k in range(4):
                                    av[k] -= uu * hj.req[k]
                if any(av[k] < u * j.req[k] for k in range(4)):
                    return False
        return True

    t = t0
    while pending_arrivals or queue or running:
        first_round = True
        while True:
            for j in [j for j in running if j.start + j.run == t]:
                running.remove(j)
                take(j.nodes, j, -1)
                release(j, t)
            if first_round or dependencies:  # later rounds: jobs just released by zero-length ends
                while pending_arrivals and _arrival(pending_arrivals[0]) == t:
                    queue.append(pending_arrivals.pop(0))
            first_round = False
            before = {id(j) for j in running}
            main(t)
            if queue and (bf_interval == 0 or (bf_interval > 0 and (t - t0) % bf_interval == 0)):
                backfill(t)
            if not any(j.run == 0 and id(j) not in before for j in running):
                break
        nxt = []
        if pending_arrivals:
            nxt.append(_arrival(pending_arrivals[0]))
        nxt += [j.start + j.run for j in running]
        if queue and bf_interval > 0:
            nxt.append(t0 + ((t - t0) // bf_interval + 1) * bf_interval)
        if queue and maintenance is not None:  # M2: a window end is a decision instant while jobs wait
            nxt += [b for wins in maintenance for _, b in wins if b > t]
        if not nxt:
            break
        t = min(nxt)
    return jobs
