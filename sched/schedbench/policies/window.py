"""What IPSCHED, AUCSCHED and their SLURM-backfill baseline share (Soner & Özturan,
``soner-ozturan-ipsched-aucsched.md`` §3–5): job priorities, the priority-ordered job
window, and reproducible IP solving with python-mip and a log of every solve.

**Priorities** (their Table 10, "priority type"):

* ``basic`` (SLURM's priority/basic): the first submitted job gets the highest priority
  and every later one a priority lower by 1.  Two scales (``priority_scale``):

  - ``slurm`` (IPSCHED's default; AUCSCHED's is ``rank`` for now): SLURM's own numbers, ``P_j = 0xffff0000 - 1 - j`` for the job
    in row ``j`` of the (submit, id)-ordered table (slurmctld starts its lowest priority
    at TOP_PRIORITY = 0xffff0000 and priority/basic gives each new job one less than
    the last).  The paper ran SLURM, so these are the priorities its IPs saw: all within
    a few thousand of 4.29e9, so that objective (1) values a job started almost
    regardless of which one, and its optimum starts as many jobs as fit; the paper
    explains IPSCHED's low waits by exactly this.
  - ``rank``: ``P_j = n - j`` for a table of ``n`` jobs, the same order on a scale where
    the first job of a window can be worth many times the last, so that (1) trades one
    early job for several later ones.  This reading gave the study's IPSCHED columns
    before issue 29.

  Only the scale differs: the order, and so backfill and the window's members, are the
  same under both.
* ``multifactor`` (SLURM's priority/multifactor with only the age and size factors, "job
  age factor weight and job size factor weight were taken as equal, and for each minute a
  job spent in the queue, its priority was increased by one"):
  ``P_j = 1 + min(age_j, A) + A * cores_j / cores_machine`` with ``age_j`` the minutes
  since submission (not rounded) and both weights ``A = 10080``, SLURM's default
  PriorityMaxAge of 7 days in minutes (so the age factor grows by one per minute until a
  week).  The paper gives neither weight's value, only their equality and the slope; the
  ``1 +`` keeps every priority positive, which AUCSCHED's alpha needs (eq. 17).  As long as
  no job waits a week, the order between two queued jobs never changes with time.

The **window** is the ``size`` queued jobs of highest priority (ties by submit time, then
job index): the paper's MAX_JOB_COUNT (default 200).

**Solving** (:class:`Solver`): CBC through python-mip by default, HiGHS as an option; one
thread, a fixed seed and a deterministic effort limit (a branch-and-bound node count,
``max_nodes``), never a wall-clock limit, decide the outcome, so a schedule is
byte-identical across runs and machines.  When the limit stops the solver before it
proves optimality the paper's rule applies by default (``on_limit="halve"``: start
nothing and halve the window for the next decision point; the paper used a time limit of
SCHED_INTERVAL); ``on_limit="incumbent"`` starts the best solution found instead.  The
window returns to its full size after a solve that finished (the paper: "halved for the
next scheduling interval").  Every solve is a row of ``decisions.parquet`` (see
:meth:`Solver.table`).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from .._jit import kernel
from ..core.api import host as _units_on_node
from ..errors import UsageError

PRIORITY_TYPES = ("basic", "multifactor")
PRIORITY_SCALES = ("slurm", "rank")
SLURM_TOP_PRIORITY = 0xFFFF0000  # slurmctld's TOP_PRIORITY: priority/basic counts down from it
MAX_AGE_MIN = 10080.0  # SLURM's default PriorityMaxAge, 7 days, in minutes
SOLVERS = ("cbc", "highs")
ON_LIMIT = ("halve", "incumbent")
NO_OBJECTIVE = 1e30
"""An objective at or above this is a solver's infinity, not a solution's value (CBC
reports 1e50 without a solution); real ones stay far below it (SLURM's priorities, 4.3e9,
times a window's cores)."""


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise UsageError(f"option {name}={value!r}: choose from {', '.join(choices)}")
    return value


def priorities(view, jobs: np.ndarray, kind: str, total_cores: int, scale: str = "slurm") -> np.ndarray:
    """Priorities (float64, same shape as ``jobs``) of the job indices ``jobs`` at
    ``view.time`` (see the module docstring); ``scale`` ("slurm" or "rank") applies to
    ``basic`` only.  Both scales are integers far below 2**53, so exact in float64."""
    if kind == "basic":
        top = SLURM_TOP_PRIORITY - 1 if scale == "slurm" else view.submit.shape[0]
        return (top - jobs).astype(np.float64)
    age = np.minimum((view.time - view.submit[jobs]) / 60.0, MAX_AGE_MIN)
    cores = view.units[jobs] * view.request[jobs, 0]
    return 1.0 + age + MAX_AGE_MIN * cores / max(total_cores, 1)


def window(view, size: int, kind: str, total_cores: int, scale: str = "slurm") -> tuple[np.ndarray, np.ndarray]:
    """(job indices, priorities) of the ``size`` highest-priority queued jobs, highest
    first (ties by submit time, then job index)."""
    queue = view.queue
    if queue.size == 0:
        return queue.astype(np.int64), np.zeros(0)
    p = priorities(view, queue, kind, total_cores, scale)
    order = np.lexsort((queue, view.submit[queue], -p))[:size]
    return queue[order].astype(np.int64), p[order]


class Solve(NamedTuple):
    """One solve: ``status`` python-mip's status name; ``use``: read the variables' values
    (optimal, or an incumbent with ``on_limit="incumbent"``); ``finished``: the solver
    proved its answer (the node limit did not stop it)."""

    status: str
    objective: float | None
    use: bool
    finished: bool


class SolveRow(NamedTuple):
    """One row of decisions.parquet (see :meth:`Solver.table`)."""

    time: int
    window: int
    jobs: int
    variables: int
    constraints: int
    status: str
    objective: float | None
    start_objective: float | None
    solve_s: float
    bids: int
    proof: str
    cuts: int | None


class Solver:
    """python-mip models with reproducible settings, and the log of every solve.

    ``solver``: "cbc" or "highs"; ``max_nodes``: the branch-and-bound node limit (the
    deterministic effort limit); ``on_limit``: "halve" or "incumbent"; ``seed``: the
    solver's random seed."""

    def __init__(self, solver: str = "cbc", max_nodes: int = 200, on_limit: str = "halve", seed: int = 0):
        self.solver = check_choice("solver", solver, SOLVERS)
        self.on_limit = check_choice("on_limit", on_limit, ON_LIMIT)
        if max_nodes <= 0:
            raise UsageError("option max_nodes must be a positive node count")
        self.max_nodes = int(max_nodes)
        self.seed = int(seed)
        self.rows: list[SolveRow] = []

    def model(self):
        import mip

        m = mip.Model(sense=mip.MAXIMIZE, solver_name=mip.CBC if self.solver == "cbc" else mip.HIGHS)
        m.verbose = 0
        m.threads = 1
        m.seed = self.seed
        return m

    def solve(self, m, now: int, window: int, jobs: int, extra: dict | None = None, *,
              start: list | None = None, start_objective: float | None = None,
              resolution: float | None = None) -> Solve:
        """Optimise ``m`` within the node limit, log the solve, and say whether its
        solution is to be used.  ``window``: the window size; ``jobs``: the jobs in the
        model (those that fit alone).

        ``start``: a feasible solution [(variable, value)] (the integer variables with
        nonzero values; the others are 0 or computed) given to the solver as its first
        incumbent, ``start_objective`` its objective value (logged).  ``resolution``: the
        smallest objective difference the answer must not give away; the solver stops
        only when the gap between its bound and its incumbent is below half of it (no
        relative gap: python-mip's default of 1e-4 of the objective would accept, with
        priorities near 4.29e9 and a window of 200 jobs, any solution within about 8.6e7,
        that is dozens of nodes of c_j).  Without it python-mip's default gaps apply."""
        import mip

        if start:
            m.start = start
        if resolution is not None:
            m.max_mip_gap = 0.0
            m.max_mip_gap_abs = resolution / 2
        t0 = time.perf_counter()
        status = m.optimize(max_nodes=self.max_nodes)
        solve_s = time.perf_counter() - t0
        found = status in (mip.OptimizationStatus.OPTIMAL, mip.OptimizationStatus.FEASIBLE)
        if found and (m.objective_value is None or not abs(m.objective_value) < NO_OBJECTIVE):
            # CBC can end "optimal" holding no solution (objective 1e50, values that break
            # the rows) after rejecting a start: nothing to use, the limit's rule applies
            status = mip.OptimizationStatus.NO_SOLUTION_FOUND
            found = False
        finished = status in (mip.OptimizationStatus.OPTIMAL, mip.OptimizationStatus.INFEASIBLE)
        use = status == mip.OptimizationStatus.OPTIMAL or (found and self.on_limit == "incumbent")
        objective = float(m.objective_value) if found else None
        self.rows.append(SolveRow(now, window, jobs, m.num_cols, m.num_rows, status.name.lower(), objective,
                                  start_objective, solve_s, (extra or {}).get("bids", -1), "solver",
                                  int(m.cuts) if self.solver == "cbc" else None))
        return Solve(status.name.lower(), objective, use, finished)

    def proven(self, now: int, window: int, jobs: int, objective: float, solve_s: float) -> Solve:
        """Log a decision point whose start (objective ``objective``) an upper bound
        proved optimal without building a model (``proof`` "bound", no variables or
        constraints; ``solve_s``: the bound's seconds), and return it as an optimal
        solve."""
        self.rows.append(SolveRow(now, window, jobs, 0, 0, "optimal", objective, objective, solve_s, -1, "bound", None))
        return Solve("optimal", objective, True, True)

    def table(self):
        """decisions.parquet: one row per solve: time (s), window (jobs in the window),
        jobs (in the model: those that fit alone), variables, constraints, status
        (python-mip's: optimal, feasible = limit hit with an incumbent, no_solution_found
        = limit hit without one, or an answer whose objective is the solver's infinity,
        infeasible), objective (null without a solution), start_objective (the
        objective of the solution the solver started from, null without one: IPSCHED's
        first-fit placement), solve_s (wall-clock seconds, for
        information only: they decide nothing), bids (AUCSCHED; -1 for IPSCHED), proof
        ("solver": the solver's answer; "bound": the start reached an upper bound, so
        no model was built or solved, and variables and constraints are 0), cuts (CBC's
        cut setting for the solve: 0 none, -1 CBC's automatic choice; null for HiGHS and
        for rows without a solve).  A decision point solved twice (AUCSCHED's
        ``cuts="off-first"`` when the first solve stops at the node limit) has a row per
        solve, the one that decided last."""
        import polars as pl

        types = {"status": pl.Utf8, "objective": pl.Float64, "start_objective": pl.Float64, "solve_s": pl.Float64,
                 "proof": pl.Utf8, "cuts": pl.Int8}
        return pl.DataFrame(
            {name: pl.Series([getattr(r, name) for r in self.rows], dtype=types.get(name, pl.Int64))
             for name in SolveRow._fields}
        )

    def summary(self) -> dict:
        """The solver settings and solve statistics for summary.json."""
        times = np.array([r.solve_s for r in self.rows])
        statuses: dict[str, int] = {}
        for r in self.rows:
            statuses[r.status] = statuses.get(r.status, 0) + 1
        proofs = sum(r.proof == "bound" for r in self.rows)
        return {
            "solver": self.solver,
            "threads": 1,
            "seed": self.seed,
            "max_nodes": self.max_nodes,
            "on_limit": self.on_limit,
            "solves": len(self.rows),
            "statuses": statuses,
            "proved_by_bound": proofs,
            "solve_s_median": float(np.median(times)) if times.size else None,
            "solve_s_max": float(times.max()) if times.size else None,
        }


class WindowState:
    """The window size and the halving rule (see the module docstring)."""

    def __init__(self, size: int):
        if size <= 0:
            raise UsageError("option max_jobs (MAX_JOB_COUNT) must be positive")
        self.full = int(size)
        self.size = int(size)

    def after(self, finished: bool, on_limit: str, used: int) -> None:
        """After a solve over a window of ``used`` jobs (fewer than the size when the
        queue is shorter): back to full size, or half the jobs used."""
        if finished:
            self.size = self.full
        elif on_limit == "halve":
            self.size = max(1, used // 2)

    @property
    def at_full_size(self) -> bool:
        return self.size == self.full


# --------------------------------------------------------------------------- candidates


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
    """Nodes job j may not use now (bool (n_nodes,)): outside its partition or features, or
    with a maintenance window meeting its predicted run from now; None when every node
    may take it."""
    cls = int(view.node_class[j])
    if view.maint_windows.size == 0:
        return None if cls == 0 else ~view.eligible[cls]
    end = view.time + max(int(view.pred[j]), 1)
    w = view.maint_windows
    meets = np.concatenate(([0], np.cumsum((w[:, 0] < end) & (w[:, 1] > view.time))))
    down = meets[view.maint_span[:, 1]] > meets[view.maint_span[:, 0]]  # some window of the node meets it
    return down if cls == 0 else down | ~view.eligible[cls]


def candidates(view, jobs: np.ndarray):
    """For the window's ``jobs``: (host int64 (jobs, nodes) with 0 where a node cannot
    take the job, need int64 (jobs,): the units a used node must host at least (1, or a
    fixed shape's per-node share), fits bool (jobs,): the job fits alone)."""
    units = view.units[jobs]
    req_nodes = view.req_nodes[jobs]
    fixed = req_nodes > 0
    need = np.where(fixed, units // np.maximum(req_nodes, 1), 1)
    host = host_matrix(view.free, view.request[jobs], units, need)
    for a, j in enumerate(jobs):
        down = blocked_nodes(view, int(j))
        if down is not None:
            host[a, down] = 0
    fits = np.where(fixed, (host > 0).sum(axis=1) >= req_nodes, host.sum(axis=1) >= units)
    return host, need, fits


def first_fit(free: np.ndarray, request: np.ndarray, units: np.ndarray, need: np.ndarray, req_nodes: np.ndarray,
              host: np.ndarray, order: np.ndarray | None = None,
              widest: bool = False) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """The window's jobs placed one after the other in priority order, each on the
    lowest-indexed nodes that can take it on what the jobs before it left free, and
    skipped when it no longer fits: [(window position, nodes int64, units per node
    int64)].  A job fixing its nodes (``req_nodes > 0``) takes ``need`` units on each of
    its first ``req_nodes`` such nodes; one of free shape fills each node up to what it
    can host.  A node where ``host`` is 0 never takes the job.  This is the start
    SLURM's scheduling pass would make now without reservations; the solvers begin from
    it.  free int64 (nodes, 4); request int64 (W, 4); units, need, req_nodes int64 (W,);
    host int64 (W, nodes).

    ``order``: the window positions to place, in that order (default: all, in window
    order).  ``widest``: a job of free shape takes the nodes that can host the most of
    it first (ties: the lowest index), so that it uses the fewest nodes it can on what is
    left; its nodes are then listed in ascending order."""
    left = free.astype(np.int64).copy()
    placed = []
    for a in range(request.shape[0]) if order is None else order.tolist():
        typed = request[a] > 0
        can = np.min(left[:, typed] // request[a, typed], axis=1) if typed.any() else np.full(left.shape[0], units[a])
        can = np.where(host[a] > 0, np.minimum(can, units[a]), 0)
        can[can < need[a]] = 0
        if req_nodes[a] > 0:
            nodes = np.flatnonzero(can)[: req_nodes[a]]
            if nodes.size < req_nodes[a]:
                continue
            counts = np.full(nodes.size, need[a], dtype=np.int64)
        else:
            # nodes in index order, or (widest) most units first, then index
            by = np.lexsort((np.arange(can.size), -can)) if widest else np.arange(can.size)
            total = np.cumsum(can[by])
            if total[-1] < units[a]:
                continue
            last = int(np.searchsorted(total, units[a]))
            taken = by[: last + 1]
            taken = taken[can[taken] > 0]
            counts = can[taken].copy()
            counts[-1] -= total[last] - units[a]  # the last node taken gets what is left
            ascending = np.argsort(taken, kind="stable")
            nodes, counts = taken[ascending], counts[ascending]
        left[nodes] -= counts[:, None] * request[a]
        placed.append((a, nodes, counts))
    return placed


def knapsack(value: np.ndarray, demand: np.ndarray, capacity: int,
             max_cells: int = 1 << 17) -> tuple[float, np.ndarray] | None:
    """The 0/1 knapsack ``max sum_j value_j s_j`` subject to ``sum_j demand_j s_j <=
    capacity`` (value float64 >= 0, demand int64 >= 0, both (W,)), solved exactly by
    dynamic programming over the capacity in steps of the demands' greatest common
    divisor: (optimum, chosen bool (W,)), or None when the capacity is more than
    ``max_cells`` steps (no answer from this row).  Items are taken in order and one is
    taken only where it strictly improves on leaving it, so among optimal sets the
    chosen one is fixed by the order.  O(W x cells) time and bits."""
    positive = demand[demand > 0]
    if positive.sum() <= capacity:
        return float(value.sum()), np.ones(value.size, dtype=bool)
    step = int(np.gcd.reduce(positive))
    cells = int(capacity) // step
    if cells > max_cells:
        return None
    steps = (demand // step).tolist()
    best = np.zeros(cells + 1)  # best[c]: the best value of the items so far within c steps
    take = np.zeros((value.size, cells + 1), dtype=bool)
    for i, (v, d) in enumerate(zip(value.tolist(), steps, strict=True)):
        if d == 0:
            best += v
            take[i] = True
        elif d <= cells:
            with_it = best[:-d] + v
            better = with_it > best[d:]
            take[i, d:] = better
            best[d:] = np.where(better, with_it, best[d:])
    chosen = np.zeros(value.size, dtype=bool)
    c = cells
    for i in range(value.size - 1, -1, -1):
        if take[i, c]:
            chosen[i] = True
            c -= steps[i]
    return float(best[-1]), chosen


def knapsack_bound(values: np.ndarray, demand: np.ndarray, capacity: np.ndarray) -> tuple[float, list[np.ndarray]]:
    """(upper bound, [chosen sets, tightest first]) of ``max sum_j values_j s_j`` over
    jobs that fit every row: each row k (``demand[:, k] <= capacity[k]``, demand int64
    (W, rows), capacity int64 (rows,)) is a 0/1 :func:`knapsack` solved exactly, and the
    least optimum (or the sum of all values) bounds the window's IP from above.  The sets
    are the rows' chosen jobs (window positions, int64) where a row leaves some out,
    tightest bound first (ties: the lower row).  IPSCHED's and AUCSCHED's proof before
    the model."""
    found = [(float(values.sum()), -1, None)]
    for k in range(demand.shape[1]):
        answer = knapsack(values, demand[:, k], int(capacity[k]))
        if answer is not None and not answer[1].all():
            found.append((answer[0], k, np.flatnonzero(answer[1])))
    found.sort(key=lambda f: (f[0], f[1]))
    return found[0][0], [chosen for _, _, chosen in found if chosen is not None]


def fewest_nodes(host: np.ndarray, units: np.ndarray, req_nodes: np.ndarray) -> np.ndarray:
    """The fewest nodes each job can use alone (int64 (W,)): its ``req_nodes`` when it
    fixes them, else the least k whose k largest ``host`` entries reach ``units``
    (host int64 (W, nodes), capped at units; every job fits alone)."""
    most_first = -np.sort(-host, axis=1)
    k = (np.cumsum(most_first, axis=1) < units[:, None]).sum(axis=1) + 1
    return np.where(req_nodes > 0, req_nodes, k)


def fitting_window(view, size: int, kind: str, total_cores: int, scale: str = "slurm"):
    """The window's jobs that fit alone, highest priority first: (job indices, priorities,
    host (jobs, nodes), need (jobs,), size of the whole window), or None when none does."""
    jobs, prio = window(view, size, kind, total_cores, scale)
    if jobs.size == 0:
        return None
    host, need, fits = candidates(view, jobs)
    keep = np.flatnonzero(fits)
    if keep.size == 0:
        return None
    return jobs[keep], prio[keep], host[keep], need[keep], int(jobs.size)


# --------------------------------------------------------------------------- the policies' base


class WindowPolicy:
    """What IPSCHED and AUCSCHED share: their options, the window and its halving rule,
    ``waits_for_events`` and ``report``.  A subclass implements
    ``_allocate(view, jobs, prio, host, need, window_size) -> starts`` over the window's
    jobs that fit alone (:func:`fitting_window`), solving through :meth:`_solve`, and
    ``_settings() -> dict`` for summary.json."""

    placement = ""

    def __init__(self, context, priority_type, max_jobs, solver, max_nodes, on_limit, solver_seed,
                 priority_scale="slurm"):
        self.kind = check_choice("priority_type", priority_type, PRIORITY_TYPES)
        self.scale = check_choice("priority_scale", priority_scale, PRIORITY_SCALES)
        self.solver = Solver(solver, max_nodes, on_limit, solver_seed)
        self.win = WindowState(max_jobs)
        self.n_nodes = context.machine.n_nodes
        self.total_cores = int(context.machine.totals[0])
        self._finished = True

    @property
    def waits_for_events(self) -> bool:
        # Every started job adds a positive value to the objective, so the optimum starts
        # one whenever one fits alone: an empty answer depends on the free nodes and the
        # queue only, unless a limit was hit (then the window is being halved).
        return self._finished and self.win.at_full_size

    def decide(self, view):
        found = fitting_window(view, self.win.size, self.kind, self.total_cores, self.scale)
        if found is None:
            self._finished = True
            return []
        return self._allocate(view, *found)

    def _solve(self, m, now: int, window_size: int, jobs: int, extra: dict | None = None, *, again: bool = False,
               **start) -> Solve:
        """Solve ``m`` and apply the window rule; ``start``: :meth:`Solver.solve`'s
        start, start_objective and resolution.  ``again``: the caller solves the decision
        point again if the node limit stops this solve, so the rule waits for that one."""
        result = self.solver.solve(m, now, window_size, jobs, extra, **start)
        if again and not result.finished:
            return result
        self._finished = result.finished
        self.win.after(result.finished, self.solver.on_limit, window_size)
        return result

    def _proven(self, now: int, window_size: int, jobs: int, objective: float, solve_s: float) -> Solve:
        """:meth:`_solve` for a start an upper bound proved optimal (no model)."""
        result = self.solver.proven(now, window_size, jobs, objective, solve_s)
        self._finished = True
        self.win.after(True, self.solver.on_limit, window_size)
        return result

    def _settings(self) -> dict:
        return {"max_jobs": self.win.full}

    def report(self) -> tuple[dict, dict]:
        """(summary.json block, {name: table}) of the run."""
        return (
            {"placement": self.placement, "priority_type": self.kind, "priority_scale": self.scale, **self._settings(),
             **self.solver.summary()},
            {"decisions": self.solver.table()},
        )
