"""AUCSCHED (Soner & Özturan, ``soner-ozturan-ipsched-aucsched.md`` §4): every
SCHED_INTERVAL seconds the window's jobs bid for blocks of consecutive nodes
(:mod:`schedbench.policies.aucsched_bids`) and one integer program picks at most one bid
per job.

The model, with the paper's equation numbers (J: the window's jobs; B_j: job j's bids;
N_c: the nodes of bid c; C_jn: j's bids that contain node n; A_n: node n's free amounts)::

    max  sum_j sum_{c in B_j} (P_j + alpha F_jc) b_jc                         (8)
    sum_{c in B_j} b_jc <= 1                               for all j         (9)
    sum_{n in N_c} u_jn = b_jc R_jc^node                   for all j, c      (10)
    sum_n (u_jn + r_jn) = sum_{c in B_j} b_jc R_jc^cpu     for all j         (11)
    sum_j (u_jn + r_jn) <= A_n^cpu                         for all n         (12)
    sum_j u_jn R_j^gpu <= A_n^gpu                          for all n         (13)
    0 <= r_jn <= u_jn min(A_n^cpu - 1, R_j,max^cpu - 1)    for all j, n      (14)
    u_jn + r_jn = sum_{c in C_jn} b_jc R_j^cpn   if R_j^cpn > 0             (15)

with F_jc by eq. (19) and Table 9 (:func:`~schedbench.policies.aucsched_bids.preference`;
SLURM bids F = 1) and alpha = P_min / (|B| + 1) (17), so that the preferences never
outweigh a job's priority (16).  How this code states it:

* **Units, not cores**, as in :mod:`schedbench.policies.ipsched`: u_jn + r_jn counts job
  j's units on node n and (12)–(13) are one row per node and resource type k,
  ``sum_j req_jk load_jn <= A_nk``; for the paper's jobs this is the same model.
* Every bid uses all of its nodes (R_jc^node = |N_c|: the paper's bids are the fewest
  nodes that hold the job, a spread bid has at most one node per unit), so (10) fixes
  u_jn = sum_{c in C_jn} b_jc, and u is
  substituted rather than a variable.  As printed, (10) for a bid that is *not* chosen
  would force u_jn = 0 on its nodes, which contradicts the chosen bid whenever two bids of
  a job share a node (A bids from both ends of a nodeset often do); the substitution is
  the reading that keeps the text's intent ("the number of nodes requested by a job is
  allocated exactly if the corresponding bid is selected").
* A job that fixes its nodes (``req_nodes > 0``, the paper's types 2 and 3 with
  R_j^cpn = its per-node share) has load ``share * u_jn`` by (15) and no r.  A job of free
  shape (type 1) has r_jn integer in [0, min(host_jn - 1, units_j - 1) u_jn] (14), host_jn
  being the units node n can host for it (A_n^cpu - 1 for one-core units).
* A bid whose nodes hold exactly the job's units when each is filled (most bids: the
  generator takes the fewest nodes) leaves (11) and (14) one solution, every node of it
  full; on a node that only such bids of the job contain, the load is that constant times
  u_jn and r_jn is not a variable, and a job with only such bids has no row (11).  The
  model is equivalent (the same optima; tested), and on ESP cpu-gpu it has about 50 times
  fewer variables (8,187 -> 165 at the first decision); the solver may pick another of
  several equal optima than the unreduced model would.
* The rows of (12)/(13) that no choice can violate are left out; a job without bids is
  not in the model.
* Valid rows that change no optimum (``knapsack_rows``): per resource type, the chosen
  bids' units fit in the free amounts of the nodes the bids use (the sum of (12)/(13)
  over the nodes, a knapsack row on b alone, from which CBC derives cover cuts).

**The proof before the model** (``use_bound``; issue 27).  Job j is worth at most its
best bid, ``v_j = max_c (P_j + alpha F_jc)``, and the jobs started must fit, per resource
type, in the free amounts of the nodes the bids use (a relaxation of (12)-(13)), and per
per-node share of the jobs that fix their nodes, in the shares the nodes can hold (whole
free nodes for ESP's GPU jobs); each such 0/1 knapsack over the v_j is solved exactly
(:func:`~schedbench.policies.window.knapsack`), and the least is an upper bound on (8).
Feasible choices come from a greedy (:meth:`AucSched._choose`): the jobs in window order,
each taking its most valuable bid that still fits (a fixed shape its share on each node;
a free shape one unit on each node of the bid, then the nodes filled in index order),
also over each type's knapsack set, then improved by leaving out, in turn, each job the
best choice started.  A choice within 1e-9 (relative: the sums' rounding) of the bound is
an optimum of (8)-(15): it starts with no IP (``proof`` "bound" in decisions.parquet).
Otherwise, for a job set S (the best choice's jobs, then each knapsack set, at most
``set_jobs`` jobs) the model restricted to S's bids is solved exactly (gap 1e-9 of the
objective, not python-mip's default relative 1e-4: a handful of jobs, milliseconds), and
every job set holding a job j outside S is bounded by v_j plus the knapsack bound of the
jobs that can start beside j (a pair of bids whose least loads overfill a node never
starts together) in what j leaves; while some such bound is above the best value, those
jobs join S.  When S's optimum reaches the largest of these bounds it is the window's optimum
(``proof`` "bound+set"; the small model's size is not logged).  Only then the window's
model is built and CBC solves it as before (``proof`` "solver", python-mip's default
relative gap 1e-4), from the best greedy choice as a MIP start (``use_start``).  Why
1e-9 and not CBC's 1e-4: a proved answer is then an optimum, worth at least CBC's answer
and at most CBC's gap above it, never a near-optimum that gives away a better bid.  On
ESP-RS (experiment 7, seed 1, Machine-L) the ten windows that took CBC 45-145 s are proved
in 6-81 ms, and 378 of the replay's 385 decisions need no window model (see
docs/reference/schedulers.md for the whole replay).  Among optima of equal
value the answer can differ from CBC's: the greedy takes jobs in window order and, per
job, the first of its most valuable bids.

**Cut passes** (``cuts``; the paper names no solver settings).  With CBC's automatic cut
generation, some windows of random-size ESP held 5-20 GB of memory while they were solved
(experiment 8 on ESP-RS, seed 3, peaked at 20 GB).  On one such window (6,962 columns,
5.6 GB, 17 CPU s) CBC's log puts most of the time in clique strengthening and the conflict
graph at the root; with both switched off it still held 4.8 GB, and switching off any
single cut generator left 5.6 GB.  Without cuts the same model took 0.18 GB and 1.4 CPU s
and the same optimum.  Three settings:

* ``"off"`` (the default): no cut passes.  Same optimum wherever both prove one (a test
  compares them at every decision point of generated runs); a window that CBC would prove
  only with cuts stops at the node limit instead and the limit rule applies (in the
  study's AUCSCHED replays on ESP-RS, 16 of 144 windows that stopped without cuts were
  proved with them).
* ``"off-first"``: no cuts; only when the node limit stops that solve is the model built
  and solved again exactly as ``"auto"`` solves it, so every optimum ``"auto"`` proves is
  proved; the failed first solves cost as much again (the study took 38 min instead of
  29, with 4.7 GB at most).
* ``"auto"``: CBC's automatic cuts at every solve (the behaviour before this option).

Where several optima exist CBC may return another of them under another setting, so
schedules can differ between the three.  Every solve is a row of decisions.parquet (column
``cuts``); with ``"off-first"`` the window rule (halving) follows the last solve of a
decision point.

**Spread bids** (``spread_bids``, :mod:`~schedbench.policies.aucsched_bids`).  The
model gives a job of free shape a load per node between 1 and what the node can host
(r_jn of (14)), but the paper's A, B and C bids take the fewest nodes that hold the job,
so every such bid fills its nodes and that freedom is never used; the paper's own worked
examples need it:

=====================  ===========================  =========================
``spread_bids``        Figures 4-5 (144 nodes)      Table 1 (PRACE, 1024 nodes)
=====================  ===========================  =========================
``"none"`` (the text)  J3, J4 wait 1000 s           J3 waits 1000 s
``"nodeset"``          J3, J4 wait 1000 s           all three at t = 0
``"span"``             all four at t = 0 (Fig. 5)   all three at t = 0
=====================  ===========================  =========================

(with or without SLURM bids; tests/policies/test_aucsched_spread.py).  ``"span"`` bids
every node of a run of consecutive nodesets (C's combination without its "fewest nodes")
and leaves the loads to the IP: in Figure 4 J1's bid is nodes 1-64 and 81-144, and the IP
puts 5 cores on each node beside J2 and 3 beside J3, Figure 5's allocation.  The model is
unchanged; only the bid set is wider.  ``"nodeset"`` (the option's former ``true``) bids
one whole nodeset, which in Figure 4 J1 fills.

MAXBIDSPERJOB (``max_bids``) defaults to 10: the paper gives no value (its Figure 4 shows
up to four bids per job).  ``slurm_bids=false`` runs "AUCSCHED without SLURM bids".
Which bid set is the default, and why, is in docs/reference/schedulers.md (the three on
workloads I-V and ESP).
"""

from __future__ import annotations

import time

import numpy as np

from .. import registry
from ..errors import UsageError
from . import window as win
from .aucsched_bids import SPREAD_SETS, Bids, preference

CUT_STAGES = {"off": (0,), "off-first": (0, -1), "auto": (-1,)}
"""``cuts`` option -> python-mip's ``cuts`` value per solve of a window's model, in order
(0: no cut passes; -1: CBC's automatic choice)."""


class AucSched(win.WindowPolicy):
    """The AUCSCHED policy (see the module docstring); options as registered."""

    fill_exact_bids = True
    """Substitute the forced loads of bids that fill their nodes exactly (an equivalent,
    much smaller model; tests switch it off to check that the optimum is the same)."""

    use_bound = True
    """Skip the IP where a greedy choice reaches the knapsack upper bound (see the module
    docstring; tests switch it off to compare with the solver's answers)."""

    use_start = True
    """Give the solver the best greedy choice as its first incumbent."""

    greedy_passes = 3
    """Passes of the greedy's improvement by leaving out jobs (see :meth:`_greedy`)."""

    set_jobs = 8
    """The most jobs of a set whose restricted model is solved (see :meth:`_job_set`)."""

    knapsack_rows = True
    """Add the valid knapsack rows on b to the model (see :meth:`_knapsack_rows`)."""

    def __init__(self, context, priority_type="basic", max_jobs=200, solver="cbc", max_nodes=200, on_limit="halve",
                 solver_seed=0, max_bids=10, slurm_bids=True, spread_bids="none", priority_scale="rank",
                 cuts="off"):
        super().__init__(context, priority_type, max_jobs, solver, max_nodes, on_limit, solver_seed, priority_scale)
        self.cuts = win.check_choice("cuts", cuts, tuple(CUT_STAGES))
        if max_bids <= 0:
            raise UsageError("option max_bids (MAXBIDSPERJOB) must be positive")
        self.max_bids = int(max_bids)
        self.slurm_bids = bool(slurm_bids)
        if isinstance(spread_bids, bool):  # the option's boolean form before the span bids
            spread_bids = "nodeset" if spread_bids else "none"
        if spread_bids not in SPREAD_SETS:
            raise UsageError(f"option spread_bids={spread_bids!r}: choose from {', '.join(SPREAD_SETS)}")
        self.spread_bids = spread_bids
        self.alloc, self.allocator = context.allocator_state, context.allocator
        self.bids = Bids(self.n_nodes)
        self.kinds = np.zeros(6, dtype=np.int64)  # bids won, by kind (SLURM, A, B, C, spread, span)

    @property
    def placement(self) -> str:
        return "aucsched places the jobs by its winning bids" + (
            "; the allocator makes the SLURM bids" if self.slurm_bids else "")

    def _settings(self) -> dict:
        return {**super()._settings(), "max_bids": self.max_bids, "slurm_bids": self.slurm_bids,
                "spread_bids": self.spread_bids, "cuts": self.cuts,
                "proved_by_job_set": sum(r.proof == "bound+set" for r in self.solver.rows),
                "bids_won": dict(zip(("slurm", "A", "B", "C", "spread", "span"), (int(v) for v in self.kinds), strict=True))}

    def _allocate(self, view, jobs, prio, host, need, window_size):
        out = self.bids.generate(
            np.ascontiguousarray(host), view.units[jobs], np.ascontiguousarray(view.request[jobs]),
            view.req_nodes[jobs], view.contiguous[jobs], view.free, self.alloc, self.slurm_bids, self.max_bids,
            self.spread_bids,
            eligible=view.eligible[view.node_class[jobs]],
        )
        if out is None:  # a plug-in allocator declared a planning order it does not give
            raise UsageError(f"aucsched's SLURM bids need an allocator with a planning order "
                             f"({registry.planning_order_givers()}), not {self.allocator!r}; or -O slurm_bids=false")
        return self._auction(view, jobs, prio, host, need, out, window_size)

    def _auction(self, view, jobs, prio, host, need, bids, window_size):
        t0 = time.perf_counter()
        bid_job, bid_kind, bid_sets, bid_ptr, bid_node = bids
        nb = bid_job.shape[0]
        if nb == 0:
            self._finished = True
            return []
        sizes = np.diff(bid_ptr)
        fixed_job = view.req_nodes[jobs] > 0
        F = preference(bid_kind, fixed_job[bid_job], sizes, bid_sets, self.n_nodes, Bids.paper_nodesets(view.free))
        alpha = float(prio[np.unique(bid_job)].min()) / (nb + 1)  # (17)
        worth = np.array([float(prio[bid_job[c]]) + alpha * float(F[c]) for c in range(nb)])  # (8)'s coefficients
        cap = np.minimum(host, view.units[jobs][:, None])  # the most units of job a that node n can take (14)
        bidders = int(np.unique(bid_job).size)
        start, start_value = None, None
        if self.use_bound or self.use_start:
            items = self._knapsack_items(view, jobs, bids, worth)
            bound, sets = _bound(*items)
            start, start_value, bound = self._greedy(view, jobs, need, cap, bids, worth, bound, sets)
            if self.use_bound:
                proof = "bound"
                if start_value < bound - _slack(bound):
                    proof = "bound+set"
                    for members in self._candidate_sets(bids, start, sets):
                        start, start_value, bound = self._job_set(view, jobs, need, cap, bids, worth, items, members,
                                                                  start, start_value)
                        if start_value >= bound - _slack(bound):
                            break
                if start_value >= bound - _slack(bound):
                    self._log_proof(view.time, window_size, bidders, start_value, time.perf_counter() - t0, proof)
                    return self._starts(jobs, bid_job, bid_kind, start)
        return self._solve_model(view, jobs, need, cap, bids, worth, window_size,
                                 start if self.use_start else None, start_value)

    def _log_proof(self, now, window_size, bidders, value, seconds, proof):
        """Log a decision proved without the window's model (``proof`` "bound" or
        "bound+set", see the module docstring) and apply the window rule."""
        self._proven(now, window_size, bidders, value, seconds)
        if proof != "bound":
            self.solver.rows[-1] = self.solver.rows[-1]._replace(proof=proof)

    # ------------------------------------------------------------------ bound and greedy

    def _greedy(self, view, jobs, need, cap, bids, worth, bound, sets):
        """(choice, its value, the upper bound ``bound``): the best of the greedy choices
        (:meth:`_choose`) in window order and over each knapsack set of ``sets``
        (:func:`_bound`), then improved by leaving out jobs: while a pass improves it
        (at most ``greedy_passes``), each job of the best choice in turn is left out of
        the window order (with those left out before) and the greedy choice made again.
        It stops at the first choice that reaches the bound."""
        best, best_value, out = [], 0.0, np.zeros(jobs.size, dtype=bool)

        def reached():
            return best_value >= bound - _slack(bound)

        for order in [None, *sets]:
            choice = self._choose(view, jobs, need, cap, bids, worth, order)
            value = float(sum(worth[c] for c, _, _ in choice))
            if value > best_value:
                best, best_value = choice, value
            if reached():
                return best, best_value, bound
        for _ in range(self.greedy_passes):
            improved = None
            for c, _, _ in best:
                skip = out.copy()
                skip[bids[0][c]] = True
                choice = self._choose(view, jobs, need, cap, bids, worth, np.flatnonzero(~skip))
                value = float(sum(worth[c] for c, _, _ in choice))
                if value > best_value:
                    best, best_value, improved = choice, value, skip
                    if reached():
                        return best, best_value, bound
            if improved is None:
                break
            out = improved
        return best, best_value, bound

    def _candidate_sets(self, bids, choice, sets):
        """Job sets whose restricted model may hold the optimum, in the order tried: the
        greedy choice's jobs, then each knapsack set of ``sets`` (tightest first), at
        most ``set_jobs`` jobs each."""
        bid_job = bids[0]
        found = [np.array(sorted({int(bid_job[c]) for c, _, _ in choice}), dtype=np.int64), *sets]
        seen = set()
        for members in found:
            key = tuple(members.tolist())
            if 0 < len(key) <= self.set_jobs and key not in seen:
                seen.add(key)
                yield members

    @staticmethod
    def _knapsack_items(view, jobs, bids, worth):
        """The knapsack bound's items and capacities: (each job's best bid value max_c
        (P_j + alpha F_jc), 0 without bids, float64 (W,); its demand int64 (W, rows);
        the capacities int64 (rows,)).  A row per resource type: the job's units of
        it against the free amounts of the nodes some bid uses.  A row per distinct
        per-node share sigma of the window's jobs that fix their nodes: a node n with
        free amounts A_n hosts at most ``min_k A_nk // sigma_k`` jobs whose share is at
        least sigma in every type, and each such job is on its node count of nodes, so
        the sum of their node counts is at most the sum of that over the nodes some bid
        uses (a job of free shape counts 0).  With ESP's whole-node GPU jobs this counts
        the whole free nodes, which the sums of free amounts overstate where core-only
        jobs left GPUs free."""
        bid_job, _, _, _, bid_node = bids
        values = np.zeros(jobs.size)
        np.maximum.at(values, bid_job, worth)
        request = view.request[jobs]
        units = view.units[jobs]
        demand = [units[:, None] * request]
        free = view.free[np.unique(bid_node)]
        capacity = [free.sum(axis=0)]
        req_nodes = view.req_nodes[jobs]
        fixed = (req_nodes > 0) & (values > 0)
        share = (units // np.maximum(req_nodes, 1))[:, None] * request  # per node, for a fixed shape
        for sigma in np.unique(share[fixed], axis=0):
            holds = (share >= sigma).all(axis=1) & fixed
            typed = sigma > 0
            if not typed.any():
                continue
            demand.append(np.where(holds, req_nodes, 0)[:, None])
            capacity.append(np.array([int((free[:, typed] // sigma[typed]).min(axis=1).sum())]))
        return values, np.hstack(demand).astype(np.int64), np.concatenate(capacity).astype(np.int64)

    def _job_set(self, view, jobs, need, cap, bids, worth, items, members, choice, value):
        """(choice, its value, an upper bound on (8)) from a set of window positions
        ``members`` (S) and the best ``choice`` known (value ``value``), ``items`` the
        knapsack bound's (:meth:`_knapsack_items`): the optimum of
        the model restricted to S's bids (every subset of S; solved exactly, a small
        model), against a bound on every job set holding a job j outside S: j's best
        value plus the knapsack bound of the other jobs in what j leaves.  While some
        such j's bound is above the best value, those j join S (the highest bounds
        first, while S has at most ``set_jobs`` jobs) and S's model is solved again."""
        import mip

        bid_job = bids[0]
        values, demand, free = items
        outside = np.full(jobs.size, -np.inf)  # the bound on the sets holding job j
        least = None
        for j in np.flatnonzero(values > 0):
            if (demand[j] <= free).all():
                rest = values.copy()
                rest[j] = 0.0
                outside[j] = float(values[j]) + _bound(rest, demand, free - demand[j])[0]
                if outside[j] > value + _slack(value):  # only the jobs that can start beside j
                    if least is None:
                        least = _least_loads(view, jobs, need, cap, bids)
                    rest[~_partners(view, jobs, bids, least, j)] = 0.0
                    outside[j] = float(values[j]) + _bound(rest, demand, free - demand[j])[0]
        members = np.asarray(members, dtype=np.int64)
        while True:
            out = outside.copy()
            out[members] = -np.inf
            other = float(out.max())
            if max(float(values[members].sum()), value) < other - _slack(other):
                return choice, value, other  # not even S at its best bids would reach it
            picked = np.flatnonzero(np.isin(bid_job, members))
            sub = _subset(bids, picked)
            # CBC's cut passes cost it seconds on these small models (ESP-RS, four jobs:
            # 2.6 s, 0.4 s without), but a few need them within the node limit
            at = {int(c): i for i, c in enumerate(picked)}
            for cuts in (0, -1):
                m, b, load_of, rest = self._model(view, jobs, need, cap, sub, worth[picked])
                m.max_mip_gap, m.max_mip_gap_abs = 0.0, 1e-9 * max(abs(value), 1.0)
                m.cuts = cuts
                if all(c in at for c, _, _ in choice):  # the best choice so far as the first incumbent
                    m.start = self._mip_start(b, rest, sub[0], [(at[c], n, k) for c, n, k in choice])
                status = m.optimize(max_nodes=self.solver.max_nodes)
                if status == mip.OptimizationStatus.OPTIMAL and m.objective_value is not None:
                    break
            else:
                return choice, value, np.inf
            best = float(m.objective_value)
            if best > value:
                choice = [(int(picked[c]), nodes, counts) for c, nodes, counts in self._read(jobs, sub, b, load_of)]
                value = float(sum(worth[c] for c, _, _ in choice))
            bound = max(other, float(m.objective_bound), best)
            if value >= bound - _slack(bound):
                return choice, value, bound
            above = np.flatnonzero(out > value + _slack(value))
            room = self.set_jobs - members.size
            if above.size == 0 or room <= 0:
                return choice, value, bound
            above = above[np.argsort(-out[above], kind="stable")][:room]
            members = np.sort(np.concatenate((members, above)))

    def _choose(self, view, jobs, need, cap, bids, worth, order=None):
        """A feasible choice of (8)-(15) built greedily: the window positions in
        ``order`` (default: all, window order), each taking its most valuable bid that
        fits in what the jobs before it left (ties: the earlier bid), or none:
        [(bid, nodes, units per node)].  A job fixing its nodes puts its share on each;
        one of free shape puts one unit on each node of the bid (u_jn = 1), then fills
        its nodes in index order up to what each can take, eq. (14)."""
        bid_job, _, _, bid_ptr, bid_node = bids
        left = view.free.astype(np.int64).copy()
        request = view.request[jobs]
        units = view.units[jobs]
        fixed = view.req_nodes[jobs] > 0
        by_job = np.argsort(bid_job, kind="stable")
        first = np.searchsorted(bid_job[by_job], np.arange(jobs.size + 1))
        chosen = []
        for a in range(jobs.size) if order is None else order.tolist():
            mine = by_job[first[a] : first[a + 1]]
            typed = request[a] > 0
            for c in mine[np.argsort(-worth[mine], kind="stable")].tolist():
                nodes = bid_node[bid_ptr[c] : bid_ptr[c + 1]]
                room = cap[a, nodes]
                if typed.any():
                    room = np.minimum(room, (left[nodes][:, typed] // request[a, typed]).min(axis=1))
                if fixed[a]:
                    if (room < need[a]).any():
                        continue
                    counts = np.full(nodes.size, int(need[a]), dtype=np.int64)
                else:
                    if (room < 1).any() or room.sum() < units[a]:
                        continue
                    beyond = int(units[a]) - nodes.size  # units beyond one a node, in node order
                    before = np.concatenate(([0], np.cumsum(room - 1)[:-1]))
                    counts = 1 + np.clip(beyond - before, 0, room - 1)
                left[nodes] -= counts[:, None] * request[a]
                chosen.append((c, nodes.copy(), counts))
                break
        return chosen

    def _starts(self, jobs, bid_job, bid_kind, choice):
        """The starts [(job, nodes, units per node)] of a choice, in priority order."""
        starts = []
        for c, nodes, counts in sorted(choice, key=lambda x: bid_job[x[0]]):
            self.kinds[bid_kind[c]] += 1
            starts.append((int(jobs[bid_job[c]]), nodes, counts))
        return starts

    # ------------------------------------------------------------------ the model

    def _solve_model(self, view, jobs, need, cap, bids, worth, window_size, start, start_value):
        """Solve the window's model (see ``cuts`` in the module docstring: with
        "off-first", a first solve without cuts, and only if the node limit stops it the
        same model built and solved again as "auto" solves it)."""
        bid_job, bid_kind = bids[0], bids[1]
        stages = CUT_STAGES[self.cuts] if self.solver.solver == "cbc" else (None,)
        for stage, cuts in enumerate(stages):
            m, b, load_of, rest = self._model(view, jobs, need, cap, bids, worth)
            if cuts is not None:
                m.cuts = cuts
            given = {}
            if start:
                given = {"start": self._mip_start(b, rest, bid_job, start), "start_objective": start_value}
            result = self._solve(m, view.time, window_size, int(np.unique(bid_job).size), {"bids": bid_job.size},
                                 again=stage < len(stages) - 1, **given)
            if result.finished:
                break
        if not result.use:
            return []
        return self._starts(jobs, bid_job, bid_kind, self._read(jobs, bids, b, load_of))

    @staticmethod
    def _read(jobs, bids, b, load_of):
        """The solved model's choice [(bid, nodes, units per node)]."""
        bid_job, _, _, bid_ptr, bid_node = bids
        choice = []
        for c in range(bid_job.size):
            if b[c].x is not None and b[c].x > 0.5:
                a = int(bid_job[c])
                nodes = bid_node[bid_ptr[c] : bid_ptr[c + 1]].copy()
                counts = np.array([round(load_of[(a, int(n))].x) for n in nodes], dtype=np.int64)
                choice.append((c, nodes, counts))
        return choice

    def _model(self, view, jobs, need, cap, bids, worth):
        """The IP (8)-(15) of the module docstring over ``bids``: (model, b per bid,
        {(job position, node): its load expression}, {(job position, node): r_jn where
        it is a variable})."""
        import mip

        bid_job, _, _, bid_ptr, bid_node = bids
        nb = bid_job.shape[0]
        fixed_job = view.req_nodes[jobs] > 0
        m = self.solver.model()
        b = [m.add_var(var_type=mip.BINARY) for _ in range(nb)]
        units = view.units[jobs]
        request = view.request[jobs]
        loads: dict[int, list] = {}  # node -> [(job position, load expression, largest load)]
        load_of: dict[tuple[int, int], object] = {}  # (job position, node) -> its units there
        rest: dict[tuple[int, int], object] = {}  # (job position, node) -> r_jn, where it is a variable
        for a in np.unique(bid_job):
            mine = np.flatnonzero(bid_job == a)
            m += mip.xsum(b[c] for c in mine) <= 1  # (9)
            on: dict[int, list] = {}  # node -> bids of job a that contain it (C_jn)
            for c in mine:
                for n in bid_node[bid_ptr[c] : bid_ptr[c + 1]]:
                    on.setdefault(int(n), []).append(b[c])
            if fixed_job[a]:
                for n, cs in on.items():  # (15): load = share * u_jn
                    load_of[(int(a), n)] = load = int(need[a]) * mip.xsum(cs)
                    loads.setdefault(n, []).append((a, load, int(need[a])))
                continue
            # A bid whose nodes hold exactly the job's units when each is filled
            # (some bids: the generator takes the fewest nodes) leaves (11) and (14)
            # one solution, every node full; a node that only such bids contain
            # gets that load as a constant times u, with no r variable.
            exact = {int(c) for c in mine
                     if self.fill_exact_bids and int(cap[a, bid_node[bid_ptr[c] : bid_ptr[c + 1]]].sum()) == int(units[a])}
            loose = [c for c in mine if int(c) not in exact]
            inexact_on = {int(n) for c in loose for n in bid_node[bid_ptr[c] : bid_ptr[c + 1]]}
            total = []
            for n, cs in on.items():
                u = mip.xsum(cs)  # (10): u_jn = sum of the chosen bid's containing it
                top = int(cap[a, n]) - 1
                if top > 0 and n in inexact_on:
                    r = rest[(int(a), n)] = m.add_var(var_type=mip.INTEGER, lb=0, ub=top)
                    m += r <= top * u  # (14)
                    load = u + r
                else:
                    load = int(cap[a, n]) * u  # every unit it can take: r_jn = top
                total.append(load)
                load_of[(int(a), n)] = load
                loads.setdefault(n, []).append((a, load, top + 1))
            if loose:  # (11); the exact bids meet it by construction
                m += mip.xsum(total) == int(units[a]) * mip.xsum(b[c] for c in mine)
        for n, terms in loads.items():  # (12), (13), per resource type
            for k in range(request.shape[1]):
                worst = sum(int(request[a, k]) * most for a, _, most in terms)
                if worst > view.free[n, k]:
                    m += mip.xsum(int(request[a, k]) * load for a, load, _ in terms if request[a, k] > 0) <= int(
                        view.free[n, k])
        if self.knapsack_rows:
            self._knapsack_rows(m, b, view, jobs, bids)
        m.objective = mip.maximize(mip.xsum(float(worth[c]) * b[c] for c in range(nb)))
        return m, b, load_of, rest

    @staticmethod
    def _knapsack_rows(m, b, view, jobs, bids) -> None:
        """Valid rows on b alone: per resource type, the chosen bids' units fit in the free
        amounts of the nodes the bids use (the sum of (12)/(13)); CBC derives cover cuts
        from them, which it cannot from the per-node rows."""
        import mip

        bid_job, _, _, _, bid_node = bids
        free = view.free[np.unique(bid_node)].sum(axis=0)
        demand = view.units[jobs][:, None] * view.request[jobs]
        by_job = demand[np.unique(bid_job)].sum(axis=0)
        for k in range(demand.shape[1]):
            if by_job[k] > free[k]:
                m += mip.xsum(int(demand[bid_job[c], k]) * b[c] for c in range(bid_job.size)
                              if demand[bid_job[c], k] > 0) <= int(free[k])

    @staticmethod
    def _mip_start(b, rest, bid_job, choice) -> list:
        """python-mip's start [(variable, value)] of a choice: b_c = 1 for its bids, and
        r_jn = load - 1 where r_jn is a variable (u_jn = 1 on the bid's nodes); the
        other variables are 0."""
        out = []
        for c, nodes, counts in choice:
            out.append((b[c], 1.0))
            a = int(bid_job[c])
            for n, load in zip(nodes.tolist(), counts.tolist(), strict=True):
                r = rest.get((a, n))
                if r is not None and load > 1:
                    out.append((r, float(load - 1)))
        return out


# (upper bound on (8), [knapsack sets, tightest first]) of :meth:`AucSched._knapsack_items`'s
# rows: job j worth at most its best bid, the rows a relaxation of (12)-(13)
_bound = win.knapsack_bound


def _least_loads(view, jobs, need, cap, bids) -> np.ndarray:
    """The least units each bid's job puts on each node in any solution that chooses the
    bid: int64 (bids, nodes), 0 off the bid.  A fixed shape its share; a free shape
    ``max(1, cap_n - over)``, ``over`` being the units the bid's nodes can take beyond the
    job's (the loads are at most cap_n and sum to the job's units, (11) and (14))."""
    bid_job, _, _, bid_ptr, bid_node = bids
    units = view.units[jobs]
    fixed = view.req_nodes[jobs] > 0
    out = np.zeros((bid_job.size, view.free.shape[0]), dtype=np.int64)
    for c in range(bid_job.size):
        a = int(bid_job[c])
        nodes = bid_node[bid_ptr[c] : bid_ptr[c + 1]]
        if fixed[a]:
            out[c, nodes] = need[a]
        else:
            room = cap[a, nodes]
            out[c, nodes] = np.maximum(1, room - (int(room.sum()) - int(units[a])))
    return out


def _partners(view, jobs, bids, least, j) -> np.ndarray:
    """bool (W,): the window positions that have a bid which, with some bid of job j, does
    not exceed a node's free amount by the two least loads (:func:`_least_loads`) alone;
    a job that has none never starts beside j."""
    bid_job = bids[0]
    mine = np.flatnonzero(bid_job == j)
    nodes = np.flatnonzero(least[mine].any(axis=0))
    request = view.request[jobs]
    clash = np.zeros((mine.size, bid_job.size), dtype=bool)
    for k in np.flatnonzero(request[j] > 0):
        use = least[:, nodes] * request[bid_job, k][:, None]  # (bids, j's nodes)
        clash |= (use[mine][:, None, :] + use[None, :, :] > view.free[nodes, k]).any(axis=2)
    ok = np.zeros(jobs.size, dtype=bool)
    np.logical_or.at(ok, bid_job, ~clash.all(axis=0))
    return ok


def _slack(bound: float) -> float:
    """How far below ``bound`` a choice may be and still count as reaching it: the
    floating-point sums' rounding, 1e-9 of the bound."""
    return 1e-9 * abs(bound)


def _subset(bids, picked):
    """The bids ``picked`` (int64 indices) of a bid tuple, as a bid tuple."""
    bid_job, bid_kind, bid_sets, bid_ptr, bid_node = bids
    sizes = np.diff(bid_ptr)[picked]
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    nodes = np.concatenate([bid_node[bid_ptr[c] : bid_ptr[c + 1]] for c in picked]) if picked.size else bid_node[:0]
    return bid_job[picked], bid_kind[picked], bid_sets[picked], ptr, nodes


def aucsched(context, **options) -> AucSched:
    return AucSched(context, **options)
