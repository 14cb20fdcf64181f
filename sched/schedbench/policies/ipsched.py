"""IPSCHED (Soner & Özturan, ``soner-ozturan-ipsched-aucsched.md`` §3, and the PRACE
paper): every SCHED_INTERVAL seconds, one integer program allocates the free cores and
GPUs of every node to a window of the highest-priority queued jobs at once.

The model, with the paper's equation numbers (J: the window's jobs; N: the nodes; A_n:
node n's free amounts; P_j: priority, :mod:`schedbench.policies.window`)::

    max  sum_j P_j (s_j - c_j)                      (1)   objective="priority"
    or   sum_j P_j R_j^cpu (s_j - c_j)                    objective="cores" (Table 10, 5-6)
    sum_j x_nj            <= A_n^cpu    for all n   (2)
    sum_n x_nj             = R_j^cpu s_j for all j  (3)
    sum_j R_j^gpu t_nj    <= A_n^gpu    for all n   (4)
    c_j = sum_n t_nj / (2|N|)           for all j   (5)
    R_j,min^node s_j <= 2|N| c_j <= R_j,max^node s_j (6)
    t_nj = 1 if x_nj > 0 else 0                     (7)

s_j, t_nj binary; x_nj integer.  How this code states them:

* **Units, not cores.**  A job asks for ``units`` identical units (:mod:`schedbench.io.jobs`);
  x_nj counts job j's units on node n and (2) and (4) become one row per node and
  resource type k: ``sum_j req_jk x_nj <= A_nk``.  For the paper's jobs this is the same
  model: a core-only job has one core per unit (R_j^cpu = units); a job that fixes its
  nodes (``-N``, ``--gres=gpu:G``) has ``units / req_nodes`` units of (cores, G GPUs) per
  node, so its GPU use on a node is R_j^gpu t_nj as in (4).
* (5) is substituted into the objective (c_j is not a variable).
* (6): a job with ``req_nodes > 0`` has R_min = R_max = req_nodes (and each of its nodes
  hosts exactly ``units / req_nodes`` units); otherwise the range is [1, |N|], which (3)
  and (7) already imply.  The paper writes (6) without s_j, which would make an unselected
  job (c_j = 0) infeasible whenever R_min >= 1; it is read with s_j.
* (7) is linearised as ``t_nj <= x_nj <= min(host_nj, units_j) t_nj`` (host_nj: the units
  node n can host for job j).
* Valid inequalities, which change no optimum but tighten what CBC works with: per
  resource type, the sum of (2)/(4) over the nodes as a knapsack row on s alone,
  ``sum_j units_j req_jk s_j <= sum_n A_nk`` (written when the window's demand exceeds
  it; CBC derives cover cuts from it, which it cannot from the per-node rows), and
  ``sum_n t_nj >= ceil(units_j / max_n host_nj) s_j`` for a job of free shape.  On ESP
  cpu-gpu's first decision (20 jobs, empty Machine-L, 33,812 columns) CBC then proves the
  optimum at the root in 10-12 s instead of 28-34 s.
* Exact reductions, which change no optimum: a job that does not fit alone on the free
  nodes is left out (s_j = 0 in every feasible solution), as are the (j, n) pairs where
  node n cannot host one unit (or one node's share) of job j, and the rows of (2)/(4) that
  no choice of x can violate.

IPSCHED places the jobs itself (the layout matrix of its Algorithm 1): the run's
allocator is not used, and summary.json says so.  A node with a maintenance window
during a job's predicted run cannot host it.
"""

from __future__ import annotations

import numpy as np

from . import window as win

OBJECTIVES = ("priority", "cores")


class IPSched(win.WindowPolicy):
    """The IPSCHED policy (see the module docstring); options as registered."""

    placement = "ipsched places the jobs itself (the allocator is not used)"
    valid_cuts = True
    """Add the valid inequalities of the module docstring (tests switch them off to check
    that the optimum is the same)."""

    def __init__(self, context, priority_type="basic", max_jobs=200, objective="priority", solver="cbc",
                 max_nodes=200, on_limit="halve", solver_seed=0):
        super().__init__(context, priority_type, max_jobs, solver, max_nodes, on_limit, solver_seed)
        self.objective = win.check_choice("objective", objective, OBJECTIVES)

    def _settings(self) -> dict:
        return {"objective": self.objective, **super()._settings()}

    def _allocate(self, view, jobs, prio, host, need, window_size):
        import mip

        m = self.solver.model()
        N2 = 2.0 * self.n_nodes
        units = view.units[jobs]
        req_nodes = view.req_nodes[jobs]
        weight = prio * (units * view.request[jobs, 0] if self.objective == "cores" else 1)
        per_node: dict[int, list] = {}  # node -> [(job position, x term)]
        objective = []
        xs = []
        for a in range(jobs.size):
            s = m.add_var(var_type=mip.BINARY)
            nodes = np.flatnonzero(host[a])
            ts = [m.add_var(var_type=mip.BINARY) for _ in nodes]
            if req_nodes[a] > 0:
                m += mip.xsum(ts) == int(req_nodes[a]) * s  # (6) with R_min = R_max, and (3)
                x = [int(need[a]) * t for t in ts]
            else:
                x = [m.add_var(var_type=mip.INTEGER, lb=0, ub=int(host[a, n])) for n in nodes]
                m += mip.xsum(x) == int(units[a]) * s  # (3)
                if self.valid_cuts and nodes.size:
                    # valid: the job needs at least this many nodes; tightens the LP, whose
                    # fractional t would otherwise count units / host nodes
                    fewest = -(-int(units[a]) // int(min(host[a, nodes].max(), units[a])))
                    if fewest > 1:
                        m += mip.xsum(ts) >= fewest * s
                for xv, t, n in zip(x, ts, nodes, strict=True):  # (7)
                    m += xv <= int(host[a, n]) * t
                    m += t <= xv
            for xv, n in zip(x, nodes, strict=True):
                per_node.setdefault(int(n), []).append((a, xv))
            objective.append(float(weight[a]) * s)
            objective.append(-float(weight[a]) / N2 * mip.xsum(ts))  # -P_j c_j, (5)
            xs.append((s, nodes, x))
        request = view.request[jobs]
        if self.valid_cuts:
            # valid knapsack rows on s alone (the sum of (2)/(4) over the nodes): CBC
            # derives cover cuts from them, which it cannot from the per-node rows
            free_total = view.free.sum(axis=0)
            for k in range(request.shape[1]):
                demand = units * request[:, k]
                if demand.sum() > free_total[k]:
                    m += mip.xsum(int(demand[a]) * s for a, (s, _, _) in enumerate(xs) if demand[a] > 0) <= int(
                        free_total[k])
        for n, terms in per_node.items():  # (2) and (4), per resource type
            for k in range(request.shape[1]):
                worst = sum(int(request[a, k]) * int(host[a, n]) for a, _ in terms)
                if worst > view.free[n, k]:
                    m += mip.xsum(int(request[a, k]) * xv for a, xv in terms if request[a, k] > 0) <= int(
                        view.free[n, k])
        m.objective = mip.maximize(mip.xsum(objective))
        if not self._solve(m, view.time, window_size, int(jobs.size)).use:
            return []
        starts = []
        for a, (s, nodes, x) in enumerate(xs):
            if s.x is None or s.x < 0.5:
                continue
            counts = np.array([round(v.x) for v in x], dtype=np.int64)  # a Var or share * t
            used = counts > 0
            starts.append((int(jobs[a]), nodes[used], counts[used]))
        return starts


def ipsched(context, **options) -> IPSched:
    return IPSched(context, **options)
