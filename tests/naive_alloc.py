"""Slow, obviously-correct references for node orders (Netti et al. §3) and PRB (§2.2),
written from the paper in plain Python, and a Python dispatcher that uses them through the
engine's decision interface so that whole replays can be compared with the jitted ones.

Nothing here imports the allocator kernels.
"""

from __future__ import annotations

import naive

RES = 4
CRITICAL = (1, 2)  # GPUs and MICs


def host(free_row, req) -> int:
    """Units of per-unit request ``req`` a node with ``free_row`` can host."""
    return min(free_row[k] // req[k] for k in range(RES) if req[k] > 0)


def order_ff(free):
    return list(range(len(free)))


def order_bf(free):
    return sorted(range(len(free)), key=lambda i: (free[i][0] + free[i][1] + free[i][2], i))


def order_balanced(free, critical=CRITICAL):
    """Null bin (no critical resource free) first; then one node at a time from the
    currently largest bin, ties by type index, index order inside a bin."""
    bins = {b: [] for b in [None, *critical]}
    for i, row in enumerate(free):
        have = [(row[k], k) for k in critical if row[k] > 0]
        if not have:
            bins[None].append(i)
        else:
            most = max(amount for amount, _ in have)
            bins[min(k for amount, k in have if amount == most)].append(i)
    order = list(bins.pop(None))
    while any(bins.values()):
        largest = max(len(nodes) for nodes in bins.values())
        k = min(k for k, nodes in bins.items() if len(nodes) == largest)
        order.append(bins[k].pop(0))
    return order


def move_priorities(prio, req, step, bound):
    """Priority-Weighted's rule for one attempt of a job requesting ``req`` per unit:
    each critical type it asks for moves by ``step`` (+1 failed, -1 allocated), kept
    within [1, bound]; ``prio`` ({type: p_k}) is changed in place."""
    for k in CRITICAL:
        if req[k] > 0:
            prio[k] = min(max(prio[k] + step, 1), bound)


def order_weighted(free, cap, units, req, queued, prio=None):
    """Rank R_i = sum_k w_k * imp_ik over types node i has; w_k = mean_req_k * load_k /
    cap_k (times p_k for critical types under Priority-Weighted).  ``queued``: list of
    (pred, units, per-unit request) of the jobs in the queue now."""
    total_cap = [sum(row[k] for row in cap) for k in range(RES)]
    total_free = [sum(row[k] for row in free) for k in range(RES)]
    wpred = sum(p for p, _, _ in queued)
    weights = []
    for k in range(RES):
        if total_cap[k] <= 0 or wpred <= 0:
            weights.append(None)
            continue
        mean_req = sum(p * u * r[k] for p, u, r in queued) / wpred
        load = (total_cap[k] - total_free[k]) / total_cap[k]
        w = mean_req * load / total_cap[k]
        if prio is not None and k in CRITICAL:
            w *= prio[k]
        weights.append(w)

    def rank(i):
        taken = min(host(free[i], req), units)
        r = 0.0
        for k in range(RES):
            if cap[i][k] > 0 and weights[k] is not None:
                r += weights[k] * (free[i][k] - taken * req[k])
        return r

    return sorted(range(len(free)), key=lambda i: (rank(i), i))


def order_weighted_authors(free, cap, units, req, window, prio=None):
    """The authors' Weighted (AccaSim): w_k = (1 + sum (pred + 1) * units * req_k) /
    (1 + sum (pred + 1)) * (used_k + 1) / cap_k**2 over ``window``, the (pred, units,
    per-unit request) of the next queued jobs after this one (at most the window size),
    times p_k for critical types under Priority-Weighted; ranks as order_weighted."""
    total_cap = [sum(row[k] for row in cap) for k in range(RES)]
    total_free = [sum(row[k] for row in free) for k in range(RES)]
    counters = [1.0] * RES
    length = 1.0
    for p, u, r in window:
        d = float(p + 1)
        length += d
        for k in range(RES):
            counters[k] += d * float(u * r[k])
    weights = []
    for k in range(RES):
        if total_cap[k] <= 0:
            weights.append(None)
            continue
        used = total_cap[k] - total_free[k]
        w = counters[k] / length * (float(used) + 1.0) / (float(total_cap[k]) * float(total_cap[k]))
        weights.append(w * (prio[k] if prio is not None and k in CRITICAL else 1))

    def rank(i):
        taken = min(host(free[i], req), units)
        r = 0.0
        for k in range(RES):
            if cap[i][k] > 0 and weights[k] is not None:
                r += weights[k] * (free[i][k] - taken * req[k])
        return r

    return sorted(range(len(free)), key=lambda i: (rank(i), i))


def place(free, order, units, req, req_nodes):
    """All-requested-computers-available placement: list of (node, units) or None."""
    out = []
    if req_nodes > 0:
        per = units // req_nodes
        for i in order:
            if host(free[i], req) >= per:
                out.append((i, per))
                if len(out) == req_nodes:
                    return out
        return None
    left = units
    for i in order:
        h = host(free[i], req)
        if h > 0:
            take = min(h, left)
            out.append((i, take))
            left -= take
            if left == 0:
                return out
    return None


def fits_empty(table, capacity) -> list[bool]:
    """Per job of a JobTable: can it be placed on the empty machine of node ``capacity``
    (rows of cores, GPUs, MICs, MiB)?  The reference placement, in index order."""
    cap = [[int(x) for x in row] for row in capacity]
    out = []
    for j in range(table.n_jobs):
        unit = [int(table.unit_cores[j]), int(table.unit_gpus[j]), int(table.unit_mics[j]), int(table.unit_mem[j])]
        out.append(place(cap, order_ff(cap), int(table.units[j]), unit, int(table.req_nodes[j])) is not None)
    return out


class ReferenceDispatcher:
    """FCFS / SJF / PRB (skipping) / PRB-blocking with a reference allocator, as a
    ``decide(view)`` policy that places jobs explicitly.

    PRB tries every queued job in priority order and skips those that do not fit; the
    others stop at the first that does not fit.  Priority-Weighted priorities move on
    every attempt, after the node order of that attempt was computed: +1 per critical type
    the job needs when it does not fit, -1 when it is placed, within [1, bound].
    ``weight_rule`` "text" weighs over every job still queued (this one included);
    "authors" over the next ``window`` jobs after this one in the pass's queue order."""

    def __init__(self, scheduler, allocator, bound=10, weight_rule="text", window=100):
        self.scheduler = scheduler
        self.allocator = allocator
        self.prio = {k: 1 for k in CRITICAL}
        self.bound = bound
        self.weight_rule = weight_rule
        self.window = window

    def _order(self, view, free, j, queued, after):
        req = [int(x) for x in view.request[j]]
        units = int(view.units[j])
        if self.allocator == "ff":
            return order_ff(free)
        if self.allocator == "bf":
            return order_bf(free)
        if self.allocator == "balanced":
            return order_balanced(free)
        prio = self.prio if self.allocator == "priority-weighted" else None
        cap = [[int(x) for x in row] for row in view.capacity]
        if self.weight_rule == "authors":
            return order_weighted_authors(free, cap, units, req, after[: self.window], prio)
        return order_weighted(free, cap, units, req, queued, prio)

    def _sorted_queue(self, view):
        q = [int(j) for j in view.queue]
        if self.scheduler == "fcfs":
            return q
        if self.scheduler == "sjf":
            return sorted(q, key=lambda j: (view.pred[j], j))

        def demand(j):
            per_unit = view.request[j][0] + view.request[j][1] + view.request[j][2]
            return float(view.units[j] * per_unit) * float(view.pred[j])

        return sorted(q, key=lambda j: (-float(view.time - view.submit[j]) / float(view.qwait[j]), demand(j), j))

    def _move(self, req, step):
        if self.allocator == "priority-weighted":
            move_priorities(self.prio, req, step, self.bound)

    def decide(self, view):
        free = [[int(x) for x in row] for row in view.free]
        queue = self._sorted_queue(view)
        waiting = list(queue)
        skipping = self.scheduler == "prb"
        for pos, j in enumerate(queue):
            req = [int(x) for x in view.request[j]]
            units, req_nodes = int(view.units[j]), int(view.req_nodes[j])
            # whether a job fits does not depend on the order
            if place(free, order_ff(free), units, req, req_nodes) is None:
                self._move(req, 1)
                if skipping:
                    continue
                return
            queued = [(int(view.pred[q]), int(view.units[q]), [int(x) for x in view.request[q]]) for q in waiting]
            after = [(int(view.pred[q]), int(view.units[q]), [int(x) for x in view.request[q]])
                     for q in queue[pos + 1:] if q in waiting]
            alloc = place(free, self._order(view, free, j, queued, after), units, req, req_nodes)
            self._move(req, -1)
            for node, count in alloc:
                for k in range(RES):
                    free[node][k] -= count * req[k]
            waiting.remove(j)
            yield j, [n for n, _ in alloc], [c for _, c in alloc]


# --------------------------------------------------------------------------- EASY (and FCFS/SJF) on
# the spec oracle of tests/naive.py, with the allocators above and Priority-Weighted's attempts


class _NettiNodes(naive._Nodes):
    """tests/naive.py's node machine with a Netti et al. allocator: feasibility checks
    (``current`` None) use index order; an allocation attempt of job ``current`` uses the
    allocator's order, computed from the replay's queue, ``scan`` (the pass's visiting
    order, for the authors' window) and the priorities as they are before the attempt."""

    def __init__(self, nodes, allocator, weight_rule, window, bound):
        super().__init__(nodes, "ff")
        self.netti = allocator
        self.rule = weight_rule
        self.window = window
        self.bound = bound
        self.prio = {k: 1 for k in CRITICAL}
        self.replay = None
        self.current = None
        self.scan = []

    def order(self, free):
        job = self.current
        if job is None:
            return order_ff(free)
        if self.netti in ("ff", "bf", "balanced", "keller"):
            return node_order(self.netti, free, self.cap)
        req = list(job.need.unit)
        units = job.need.units
        prio = self.prio if self.netti == "priority-weighted" else None
        queued = self.replay.queue
        if self.rule == "authors":
            pos = next(i for i, q in enumerate(self.scan) if q is job)
            after = [(q.pred, q.need.units, list(q.need.unit)) for q in self.scan[pos + 1:] if q in queued]
            return order_weighted_authors(free, self.cap, units, req, after[: self.window], prio)
        return order_weighted(free, self.cap, units, req, [(q.pred, q.need.units, list(q.need.unit)) for q in queued],
                              prio)

    def move(self, job, step):
        if self.netti == "priority-weighted":
            move_priorities(self.prio, job.need.unit, step, self.bound)


class _NettiReplay(naive._Replay):
    """tests/naive.py's replay (R1-R9) where every offer of a job is an allocation attempt
    of the allocator (naive.py's passes offer the in-order jobs up to the first that does
    not fit, PRB's and R7c's jobs as those rules visit them; EASY's pass, below, every
    queued job behind the head); a failed attempt (does not fit, or a backfill refused by
    the reservation) moves p_k by +1, an allocated job by -1 after its order."""

    def one_pass(self, now):
        started = super().one_pass(now)
        self.prio_trace.append((now, self.m.prio[1], self.m.prio[2]))
        return started

    def offer(self, job, scan):
        if self.m.try_alloc(job, self.m.free) is None:
            self.m.move(job, 1)
            return None
        self.m.current, self.m.scan = job, scan
        try:
            return self.m.try_alloc(job, self.m.free)
        finally:
            self.m.current = None

    def started(self, job, alloc, now):
        self.m.move(job, -1)
        self.start(job, alloc, now)

    def pass_easy(self, now):
        while self.queue:
            alloc = self.offer(self.queue[0], list(self.queue))
            if alloc is None:
                break
            self.started(self.queue[0], alloc, now)
        if not self.queue:
            return
        head = self.queue[0]
        by_pe = sorted(self.running, key=lambda j: (j.predicted_end(now), j.job_id, j.idx))
        trial = self.m.copy_free()
        shadow = None
        for r in by_pe:
            trial = self.released(trial, r)
            if self.m.try_alloc(head, trial) is not None:
                shadow = r.predicted_end(now)
                break
        assert shadow is not None
        at_shadow = self.m.copy_free()
        for r in self.running:
            if r.predicted_end(now) <= shadow:
                at_shadow = self.released(at_shadow, r)
        past_shadow = []
        scan = list(self.queue[1:])
        visit = scan
        if self.scheduler == "easy-sjbf":  # R7b's order of visits; the window still reads the queue's
            visit = sorted(scan, key=lambda j: (j.pred, j.queue_key()))
        for job in visit:
            alloc = self.offer(job, scan)
            if alloc is None:
                continue
            if now + job.pred <= shadow:
                self.started(job, alloc, now)
                continue
            trial = [list(n) for n in at_shadow]
            for other, oalloc in past_shadow:
                naive._Nodes.sub(trial, other, oalloc)
            naive._Nodes.sub(trial, job, alloc)
            if self.m.try_alloc(head, trial) is not None:
                self.started(job, alloc, now)
                past_shadow.append((job, alloc))
            else:
                self.m.move(job, 1)


def replay_nodes_netti(jobs, nodes, scheduler, allocator, weight_rule="authors", window=100, bound=10, qwait=None):
    """:func:`naive.replay_nodes` (same inputs and result) with any of ff, bf, balanced,
    weighted, priority-weighted and their options, or keller (default node priorities);
    ``scheduler``: fcfs, sjf, easy, ebf-accasim, prb, prb-blocking (``qwait``: each job's
    expected queue wait, s; None: 1) or easy-sjbf (whose backfill visits in R7b's order
    while the authors' window reads the jobs after the visited one in queue order).  The
    result also has ``prio_trace``: (time, p_gpu, p_mic) after each pass."""
    caps = [tuple(int(x) for x in nd) for nd in nodes]
    machine = _NettiNodes(caps, allocator, weight_rule, window, bound)
    empty = [list(c) for c in caps]
    ids, status, sim = [], [], []
    for i, d in enumerate(jobs):
        unit = tuple(int(x) for x in d["unit"])
        req_nodes = int(d.get("req_nodes", -1))
        units = int(d["units"])
        job = naive._Job(idx=i, job_id=int(d["job_id"]), submit=int(d["submit"]), run=int(d["run"]),
                         pred=int(d["pred"]), need=naive._NodeRequest(units=units, unit=unit, req_nodes=req_nodes),
                         qwait=1 if qwait is None else int(qwait[i]))
        ids.append(job.job_id)
        if job.run < 0:
            status.append(naive.DROPPED_NO_RUNTIME)
        elif units <= 0 or max(unit) <= 0:
            status.append(naive.DROPPED_NO_SIZE)
        elif machine.try_alloc(job, empty) is None:
            status.append(naive.DROPPED_TOO_WIDE)
        else:
            status.append(naive.REPLAYED)
            sim.append(job)
    rep = _NettiReplay(sim, machine, scheduler, is_pool=False)
    rep.prio_trace = []
    machine.replay = rep
    rep.run()
    out = naive._result(len(jobs), ids, status, sim, rep.passes, with_alloc=True)
    out.prio_trace = rep.prio_trace  # (time, p_gpu, p_mic) after each pass
    return out


# --------------------------------------------------------------------------- Keller's greedy mapper


def order_keller(cap, prio=None):
    """Keller §5.2: nodes from cheap to expensive by W_node * cores_system + prio_node *
    cores_system, W_node the largest share node i has of the machine's total of any type
    the machine has (exact fractions), ties by index.  ``cap``: rows of capacities;
    ``prio``: one integer per node (default 0)."""
    from fractions import Fraction

    prio = prio or [0] * len(cap)
    totals = [sum(row[k] for row in cap) for k in range(RES)]
    cores = totals[0]

    def weight(i):
        w = Fraction(0)
        for k in range(RES):
            if totals[k] > 0:
                w = max(w, Fraction(cap[i][k], totals[k]))
        return w * cores + prio[i] * cores

    return sorted(range(len(cap)), key=lambda i: (weight(i), i))


def node_order(allocator, free, cap):
    """The nodes in the order ff, bf, balanced or keller (default node priorities) visits
    them, on free amounts ``free`` (keller: fixed by the capacities ``cap``)."""
    if allocator == "keller":
        return order_keller(cap)
    return {"ff": order_ff, "bf": order_bf, "balanced": order_balanced}[allocator](free)


def replay_conservative_keller(jobs, nodes, prio=None):
    """Conservative backfilling on nodes with Keller's mapper: its order is fixed (it
    depends on the capacities only), so it is First-Fit on the nodes listed in that
    order.  Runs naive_conservative.replay_nodes with "ff" on the reordered machine and
    maps the allocations back to the original node indices."""
    import naive_conservative

    order = order_keller([list(c) for c in nodes], prio)
    out = naive_conservative.replay_nodes(jobs, [nodes[i] for i in order], "ff")
    out.alloc = [None if a is None else sorted((order[n], u) for n, u in a) for a in out.alloc]
    return out
