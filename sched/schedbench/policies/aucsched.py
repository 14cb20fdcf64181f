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

import numpy as np

from ..errors import UsageError
from . import window as win
from .aucsched_bids import SPREAD_SETS, Bids, preference


class AucSched(win.WindowPolicy):
    """The AUCSCHED policy (see the module docstring); options as registered."""

    fill_exact_bids = True
    """Substitute the forced loads of bids that fill their nodes exactly (an equivalent,
    much smaller model; tests switch it off to check that the optimum is the same)."""

    def __init__(self, context, priority_type="basic", max_jobs=200, solver="cbc", max_nodes=200, on_limit="halve",
                 solver_seed=0, max_bids=10, slurm_bids=True, spread_bids="none", priority_scale="rank"):
        super().__init__(context, priority_type, max_jobs, solver, max_nodes, on_limit, solver_seed, priority_scale)
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
                "spread_bids": self.spread_bids,
                "bids_won": dict(zip(("slurm", "A", "B", "C", "spread", "span"), (int(v) for v in self.kinds), strict=True))}

    def _allocate(self, view, jobs, prio, host, need, window_size):
        out = self.bids.generate(
            np.ascontiguousarray(host), view.units[jobs], np.ascontiguousarray(view.request[jobs]),
            view.req_nodes[jobs], view.contiguous[jobs], view.free, self.alloc, self.slurm_bids, self.max_bids,
            self.spread_bids,
            eligible=view.eligible[view.node_class[jobs]],
        )
        if out is None:
            raise UsageError(f"aucsched's SLURM bids need an allocator with a node order (ff or bf), not "
                             f"{self.allocator!r}; or run it with --option slurm_bids=false")
        return self._auction(view, jobs, prio, host, need, out, window_size)

    def _auction(self, view, jobs, prio, host, need, bids, window_size):
        import mip

        bid_job, bid_kind, bid_sets, bid_ptr, bid_node = bids
        nb = bid_job.shape[0]
        if nb == 0:
            self._finished = True
            return []
        sizes = np.diff(bid_ptr)
        fixed_job = view.req_nodes[jobs] > 0
        F = preference(bid_kind, fixed_job[bid_job], sizes, bid_sets, self.n_nodes, Bids.paper_nodesets(view.free))
        alpha = float(prio[np.unique(bid_job)].min()) / (nb + 1)  # (17)
        m = self.solver.model()
        b = [m.add_var(var_type=mip.BINARY) for _ in range(nb)]
        units = view.units[jobs]
        request = view.request[jobs]
        loads: dict[int, list] = {}  # node -> [(job position, load expression, largest load)]
        load_of: dict[tuple[int, int], object] = {}  # (job position, node) -> its units there
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
            else:
                # A bid whose nodes hold exactly the job's units when each is filled
                # (most bids: the generator takes the fewest nodes) leaves (11) and (14)
                # one solution, every node full; a node that only such bids contain
                # gets that load as a constant times u, with no r variable.
                cap = np.minimum(host[a], units[a])
                exact = {int(c) for c in mine
                         if self.fill_exact_bids and int(cap[bid_node[bid_ptr[c] : bid_ptr[c + 1]]].sum()) == int(units[a])}
                loose = [c for c in mine if int(c) not in exact]
                inexact_on = {int(n) for c in loose for n in bid_node[bid_ptr[c] : bid_ptr[c + 1]]}
                total = []
                for n, cs in on.items():
                    u = mip.xsum(cs)  # (10): u_jn = sum of the chosen bid's containing it
                    top = int(cap[n]) - 1
                    if top > 0 and n in inexact_on:
                        r = m.add_var(var_type=mip.INTEGER, lb=0, ub=top)
                        m += r <= top * u  # (14)
                        load = u + r
                    else:
                        load = int(cap[n]) * u  # every unit it can take: r_jn = top
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
        m.objective = mip.maximize(mip.xsum((float(prio[bid_job[c]]) + alpha * float(F[c])) * b[c] for c in range(nb)))
        if not self._solve(m, view.time, window_size, int(np.unique(bid_job).size), {"bids": nb}).use:
            return []
        chosen = [c for c in range(nb) if b[c].x is not None and b[c].x > 0.5]
        chosen.sort(key=lambda c: bid_job[c])  # priority order
        starts = []
        for c in chosen:
            a = int(bid_job[c])
            nodes = bid_node[bid_ptr[c] : bid_ptr[c + 1]].copy()
            counts = np.array([round(load_of[(a, int(n))].x) for n in nodes], dtype=np.int64)
            self.kinds[bid_kind[c]] += 1
            starts.append((int(jobs[a]), nodes, counts))
        return starts


def aucsched(context, **options) -> AucSched:
    return AucSched(context, **options)
