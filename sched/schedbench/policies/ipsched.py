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

* **Units, not cores.**  A job asks for ``units`` identical units (:mod:`schedbench.jobs`);
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

from .._jit import kernel
from ..core.api import host as _units_on_node
from . import window as win

OBJECTIVES = ("priority", "cores")


@kernel
def _host_matrix(free, request, units, need, out):
    """out[a, n] = the units node n can host for job a (``min`` over requested types k of
    free[n, k] // request[a, k]), capped at units[a] and set to 0 when below need[a].
    free int64 (m, 4); request int64 (W, 4); units, need int64 (W,); out int64 (W, m)."""
    for a in range(request.shape[0]):
        for n in range(free.shape[0]):
            h = _units_on_node(free, n, request[a])
            if h > units[a]:
                h = units[a]
            out[a, n] = h if h >= need[a] else 0


def host_matrix(free: np.ndarray, request: np.ndarray, units=None, need=None) -> np.ndarray:
    """Units each node can host for each job: int64 (jobs, nodes), ``min`` over the
    requested types k of ``free[n, k] // request[j, k]`` (request int64 (jobs, 4)), capped
    at ``units`` and 0 below ``need`` (int64 (jobs,) each, when given)."""
    W = request.shape[0]
    units = np.full(W, np.iinfo(np.int64).max, dtype=np.int64) if units is None else units
    need = np.zeros(W, dtype=np.int64) if need is None else need
    out = np.empty((W, free.shape[0]), dtype=np.int64)
    _host_matrix(np.ascontiguousarray(free, dtype=np.int64), np.ascontiguousarray(request, dtype=np.int64),
                 np.ascontiguousarray(units, dtype=np.int64), np.ascontiguousarray(need, dtype=np.int64), out)
    return out


def blocked_nodes(view, j: int) -> np.ndarray | None:
    """Nodes whose maintenance window meets job j's predicted run from now (bool (n_nodes,)),
    or None when no node has a window."""
    if view.maint_windows.size == 0:
        return None
    end = view.time + max(int(view.pred[j]), 1)
    out = np.zeros(view.free.shape[0], dtype=bool)
    for n in range(view.free.shape[0]):
        w = view.maintenance(n)
        if w.size and np.any((w[:, 0] < end) & (w[:, 1] > view.time)):
            out[n] = True
    return out


def candidates(view, jobs: np.ndarray):
    """For the window's ``jobs``: (host int64 (jobs, nodes) with 0 where a node cannot
    take the job, need int64 (jobs,): the units a used node must host at least (1, or a
    fixed shape's per-node share), fits bool (jobs,): the job fits alone)."""
    units = view.units[jobs]
    req_nodes = view.req_nodes[jobs]
    fixed = req_nodes > 0
    need = np.where(fixed, units // np.maximum(req_nodes, 1), 1)
    host = host_matrix(view.free, view.request[jobs], units, need)
    if view.maint_windows.size:
        for a, j in enumerate(jobs):
            down = blocked_nodes(view, int(j))
            if down is not None:
                host[a, down] = 0
    fits = np.where(fixed, (host > 0).sum(axis=1) >= req_nodes, host.sum(axis=1) >= units)
    return host, need, fits


def fitting_window(view, size: int, kind: str, total_cores: int):
    """The window's jobs that fit alone, highest priority first: (job indices, priorities,
    host (jobs, nodes), need (jobs,), size of the whole window), or None when none does."""
    jobs, prio = win.window(view, size, kind, total_cores)
    if jobs.size == 0:
        return None
    host, need, fits = candidates(view, jobs)
    keep = np.flatnonzero(fits)
    if keep.size == 0:
        return None
    return jobs[keep], prio[keep], host[keep], need[keep], int(jobs.size)


class IPSched:
    """The IPSCHED policy (see the module docstring); options as registered."""

    def __init__(self, sim, priority_type="basic", max_jobs=200, objective="priority", solver="cbc",
                 max_nodes=200, on_limit="halve", solver_seed=0):
        self.kind = win.check_choice("priority_type", priority_type, win.PRIORITY_TYPES)
        self.objective = win.check_choice("objective", objective, OBJECTIVES)
        self.solver = win.Solver(solver, max_nodes, on_limit, solver_seed)
        self.win = win.WindowState(max_jobs)
        self.n_nodes = sim.machine.n_nodes
        self.total_cores = int(sim.machine.totals[0])
        self._finished = True

    @property
    def waits_for_events(self) -> bool:
        # With every P_j > 0 the optimum starts a job whenever one fits alone, so an empty
        # answer depends on the free nodes and the queue only, unless a limit was hit.
        return self._finished and self.win.at_full_size

    def decide(self, view):
        found = fitting_window(view, self.win.size, self.kind, self.total_cores)
        if found is None:
            self._finished = True
            return []
        return self._solve(view, *found)

    def _solve(self, view, jobs, prio, host, need, window_size):
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
                for xv, t, n in zip(x, ts, nodes, strict=True):  # (7)
                    m += xv <= int(host[a, n]) * t
                    m += t <= xv
            for xv, n in zip(x, nodes, strict=True):
                per_node.setdefault(int(n), []).append((a, xv))
            objective.append(float(weight[a]) * s)
            objective.append(-float(weight[a]) / N2 * mip.xsum(ts))  # -P_j c_j, (5)
            xs.append((s, nodes, x))
        request = view.request[jobs]
        for n, terms in per_node.items():  # (2) and (4), per resource type
            for k in range(request.shape[1]):
                worst = sum(int(request[a, k]) * int(host[a, n]) for a, _ in terms)
                if worst > view.free[n, k]:
                    m += mip.xsum(int(request[a, k]) * xv for a, xv in terms if request[a, k] > 0) <= int(
                        view.free[n, k])
        m.objective = mip.maximize(mip.xsum(objective))
        result = self.solver.solve(m, view.time, window_size, int(jobs.size))
        self._finished = result.finished
        self.win.after(result.finished, self.solver.on_limit, window_size)
        if not result.use:
            return []
        starts = []
        for a, (s, nodes, x) in enumerate(xs):
            if s.x is None or s.x < 0.5:
                continue
            counts = np.array([round(v.x) for v in x], dtype=np.int64)  # a Var or share * t
            used = counts > 0
            starts.append((int(jobs[a]), nodes[used], counts[used]))
        return starts

    def report(self) -> tuple[dict, dict]:
        """(summary.json block, {name: table}) of the run."""
        return (
            {"placement": "ipsched places the jobs itself (the allocator is not used)",
             "priority_type": self.kind, "objective": self.objective, "max_jobs": self.win.full,
             **self.solver.summary()},
            {"decisions": self.solver.table()},
        )


def ipsched(sim, **options) -> IPSched:
    return IPSched(sim, **options)
