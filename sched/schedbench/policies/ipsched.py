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

**The model over node states** (``model="states"``, the default; ``model="nodes"`` is the
per-node model above).  Nodes with the same free amounts that the same window jobs may
use are interchangeable, so the IP counts nodes per *state* instead of naming them.  The
window's jobs take their turn in window order (any order gives the same optima); when
job j's turn comes, ``y_js`` nodes are in state s, and the integer ``z_jsh`` of them give
job j h units each (h in [need_j, host_js], just need_j for a fixed shape) and move to
the state ``s - h req_j``; the others stay in s.  Flow rows: ``sum_h z_jsh <= y_js`` and
``y_{j+1,s'}`` = the nodes that enter s'.  Then (3) is ``sum_sh h z_jsh = units_j s_j``,
(6) for a fixed shape ``sum_s z_js,need = R_j^node s_j``, and the nodes job j uses,
``sum_n t_nj`` in (5), are ``sum_sh z_jsh``.  Capacities (2)/(4) hold by construction
(h <= host_js), and every per-node solution is a flow, and every integer flow splits into
one path of states per node: the optima are the per-node model's (tested at every
decision point of generated runs, both objectives, with and without GPUs, partitions,
features and maintenance).  A state is (free amounts capped at what the jobs still to come
could take, since more never binds; which of those jobs may use the node, i.e. its
column of ``host > 0``: a node outside a job's partition or features, under maintenance
during its run, or too small for it never becomes able to host it, as free amounts only
decrease), so states merge as jobs pass.  On Machine-L (1024 nodes x (8 cores, 2 GPUs))
there are at most 27 free states per eligibility signature: Table 1's model has 28
columns instead of 4,099.  The same valid inequalities are added.  **Placement**: the
solver's state counts become nodes deterministically: in each state, the nodes in
ascending index order, the largest shares h first go to the lowest indices.  Where
several optima tie, the two models may pick different ones (Table 1: the per-node model
starts all three jobs, this one J1 on 512 whole nodes and J2, both 3.75).

**Priorities** (``priority_scale``, :mod:`schedbench.policies.window`): with ``basic``
priorities on SLURM's scale (the default, the paper's) every P_j is within a few thousand
of 4.29e9, so (1) is worth nearly the same per job and the optimum starts as many jobs
as fit (on Table 1, all three, where P_j = n - j ties that with J1 and J2 alone); on
``rank`` (P_j = n - j) an early job can outweigh several later ones.

**Solving from an incumbent.**  The solver starts from the window's first-fit placement
(:func:`~schedbench.policies.window.first_fit`, given as python-mip's MIP start: the
s_j, t_nj, x_nj of the per-node model, or the z counts of each node's path of states), so
a solve that meets the node limit always holds a solution, and the incumbent prunes
from the first node.  On the paper's Fig. 4 instance with the nodes 65-80 busy with
running jobs, CBC on the per-node model without it ends its 200 nodes unproven (the
paper's rule then starts nothing and J3 waits); from first-fit (J1, J2, J4) it proves
the optimum, all four jobs, at once.  **Gap**: a solve stops only when CBC's bound is
within half of one node's c_j of the window's least-weighted job (``min_j w_j / 4|N|``,
absolute, no relative gap), so that the answer never gives away a node, let alone a job;
priority steps of 1 on SLURM's scale are below it (and below any floating-point solver's
tolerances on objectives near 1e12): among placements of equally many jobs on equally
many nodes, which jobs start is the solver's choice.

**The bound before the model** (``use_bound``).  Before a model is built, placements
are compared with an upper bound on (1): job j is worth at most ``w_j (1 - f_j / 2|N|)``
(f_j: the fewest nodes it can use), and the jobs chosen must fit, per resource type, in
the sum of the free amounts (the knapsack row above, a relaxation of (2)-(4)); each
type's 0/1 knapsack is solved exactly by dynamic programming over the free amount in
steps of the demands' greatest common divisor
(:func:`~schedbench.policies.window.knapsack`), and the least is the bound.  A
placement whose value reaches it (to within 1e-9 of it, the sums' rounding, and never
more than the solver's gap) is an optimum, and is started with no IP (``proof``
"bound" in decisions.parquet; a few ms); the solver's answer on the same window is
worth the same or, since CBC stops within its gap, up to half a node of the
least-weighted job less.  In order: first-fit, against the bound with f_j =
``req_nodes`` or ``units_j`` over its largest host, rounded up; then, against the
bound with f_j from the sum of its largest hosts and the free amounts of the nodes some
job may use only, the *widest* placement (:func:`~schedbench.policies.window.first_fit`
with ``widest``: a free-shape job takes the nodes that host the most of it first) of
the whole window, then of each type's knapsack set, tightest bound first.  Otherwise
the solver runs from first-fit as below.  On ESP cpu-gpu (free nodes mostly whole,
sizes multiples of 256 cores) first-fit reaches the bound at 414 of experiment 6's 415
decision points (seed 1), where CBC spent 104 s of the 145 s replay proving it; with
random sizes (ESP-RS) first-fit spreads jobs over partly used nodes and the widest
placement of the knapsack set is the optimum (438 of 443 windows of an experiment 6
replay reach the bound).  Among optima of equal value the answer can differ from the
solver's: first-fit and the knapsack take jobs in window order (priority, then submit
time, then index) and nodes by index, CBC any of them (ESP's jobs are submitted
together, so equal-sized ones tie).  Where CBC would have hit its node limit on such a
window, the bound's answer starts jobs where the limit's rule started none.

IPSCHED places the jobs itself (the layout matrix of its Algorithm 1): the run's
allocator is not used, and summary.json says so.  A node with a maintenance window
during a job's predicted run cannot host it.
"""

from __future__ import annotations

import time

import numpy as np

from . import window as win

OBJECTIVES = ("priority", "cores")
MODELS = ("states", "nodes")


class IPSched(win.WindowPolicy):
    """The IPSCHED policy (see the module docstring); options as registered."""

    placement = "ipsched places the jobs itself (the allocator is not used)"
    valid_cuts = True
    """Add the valid inequalities of the module docstring (tests switch them off to check
    that the optimum is the same)."""

    use_bound = True
    """Skip the IP where the first-fit start reaches an upper bound (see the module
    docstring; tests switch it off to compare with the solver's answers)."""

    use_start = True
    """Give the solver the first-fit placement as its first incumbent (see the module
    docstring; measurements switch it off to compare)."""

    def __init__(self, context, priority_type="basic", max_jobs=200, objective="priority", solver="cbc",
                 max_nodes=200, on_limit="halve", solver_seed=0, model="states", priority_scale="slurm"):
        super().__init__(context, priority_type, max_jobs, solver, max_nodes, on_limit, solver_seed, priority_scale)
        self.objective = win.check_choice("objective", objective, OBJECTIVES)
        self.model = win.check_choice("model", model, MODELS)

    def _settings(self) -> dict:
        return {"objective": self.objective, "model": self.model, **super()._settings()}

    def _allocate(self, view, jobs, prio, host, need, window_size):
        t0 = time.perf_counter()
        weight = self._weights(view, jobs, prio)
        start = self._start(view, jobs, host, need, weight)
        if self.use_bound and self.use_start:
            proved = self._reach_bound(view, jobs, host, need, weight, start)
            if proved is not None:
                placed, value = proved
                self._proven(view.time, window_size, int(jobs.size), value, time.perf_counter() - t0)
                return [(int(jobs[a]), nodes, counts) for a, nodes, counts in placed]
        if self.model == "states":
            return self._allocate_states(view, jobs, host, need, window_size, weight, start)
        return self._allocate_nodes(view, jobs, host, need, window_size, weight, start)

    def _value(self, placed, weight) -> float:
        """Objective (1) of a placement [(position, nodes, counts)]."""
        N2 = 2.0 * self.n_nodes
        return sum(float(weight[a]) * (1.0 - nodes.size / N2) for a, nodes, _ in placed)

    def _reach_bound(self, view, jobs, host, need, weight, start):
        """(placement, its value) of a placement that reaches the upper bound of the
        module docstring to within the solver's gap, or None: first-fit against the
        bound with f_j from the largest host; then, against the bound with f_j from the
        host sums and only the nodes some job may use, the widest placement of the whole
        window and of each type's knapsack set (tightest first)."""
        placed, value, resolution = start
        units = view.units[jobs]
        req_nodes = view.req_nodes[jobs]
        coarse = np.where(req_nodes > 0, req_nodes, -(-units // np.maximum(host.max(axis=1), 1)))
        bound, _ = self._bound(view, jobs, weight, coarse, view.free)
        if value >= bound - _slack(bound, resolution):
            return placed, value
        tight, sets = self._bound(view, jobs, weight, win.fewest_nodes(host, units, req_nodes),
                                  view.free[host.any(axis=0)])
        bound = min(bound, tight)
        request = view.request[jobs]
        for order in [None, *sets]:
            other = win.first_fit(view.free, request, units, need, req_nodes, host, order=order, widest=True)
            value = self._value(other, weight)
            if value >= bound - _slack(bound, resolution):
                return other, value
        return None

    def _bound(self, view, jobs, weight, fewest, free):
        """(upper bound on (1), [knapsack sets, tightest first]): job j is worth at most
        ``w_j (1 - fewest_j / 2|N|)``, and per resource type the chosen jobs fit in the
        sum of ``free``'s amounts; each type's 0/1 knapsack is solved exactly
        (:func:`~schedbench.policies.window.knapsack`), and the least is the bound."""
        value = weight * (1.0 - fewest / (2.0 * self.n_nodes))
        return win.knapsack_bound(value, view.units[jobs][:, None] * view.request[jobs], free.sum(axis=0))

    def _weights(self, view, jobs, prio) -> np.ndarray:
        units = view.units[jobs]
        return prio * (units * view.request[jobs, 0] if self.objective == "cores" else 1)

    def _start(self, view, jobs, host, need, weight):
        """(first-fit placement [(position, nodes, counts)], its objective, the
        resolution): the solver's first incumbent, and the smallest objective change the
        answer must resolve, one node (c_j) of the window's least-weighted job."""
        if not self.use_start:
            return [], None, float(weight.min()) / (2.0 * self.n_nodes)
        placed = win.first_fit(view.free, view.request[jobs], view.units[jobs], need, view.req_nodes[jobs], host)
        return placed, self._value(placed, weight), float(weight.min()) / (2.0 * self.n_nodes)

    def _knapsack_rows(self, m, view, jobs, selected) -> None:
        """The valid knapsack rows on s alone (the sum of (2)/(4) over the nodes): CBC
        derives cover cuts from them, which it cannot from the per-node rows."""
        import mip

        free_total = view.free.sum(axis=0)
        request = view.request[jobs]
        for k in range(request.shape[1]):
            demand = view.units[jobs] * request[:, k]
            if demand.sum() > free_total[k]:
                m += mip.xsum(int(demand[a]) * s for a, s in enumerate(selected) if demand[a] > 0) <= int(
                    free_total[k])

    def _allocate_states(self, view, jobs, host, need, window_size, weight, start):
        import mip

        m = self.solver.model()
        units = view.units[jobs]
        fixed = view.req_nodes[jobs] > 0
        flow = _StateFlow(m, view.free, view.request[jobs], units, need, fixed, host)
        N2 = 2.0 * self.n_nodes
        selected = []
        objective = []
        for a in range(jobs.size):
            s = m.add_var(var_type=mip.BINARY)
            takes = flow.takes[a]  # [(z, h)]
            nodes = mip.xsum(z for z, _ in takes)
            if fixed[a]:
                m += nodes == int(view.req_nodes[jobs[a]]) * s  # (6) with R_min = R_max, and (3)
            else:
                m += mip.xsum(h * z for z, h in takes) == int(units[a]) * s  # (3)
                most = max(h for _, h in takes)
                fewest = -(-int(units[a]) // most)
                if self.valid_cuts and fewest > 1:
                    m += nodes >= fewest * s
            objective.append(float(weight[a]) * s)
            objective.append(-float(weight[a]) / N2 * nodes)  # -P_j c_j, (5)
            selected.append(s)
        if self.valid_cuts:
            self._knapsack_rows(m, view, jobs, selected)
        m.objective = mip.maximize(mip.xsum(objective))
        placed, value, resolution = start
        start = [(selected[a], 1.0) for a, _, _ in placed] + flow.start(placed)
        if not self._solve(m, view.time, window_size, int(jobs.size), start=start, start_objective=value,
                           resolution=resolution).use:
            return []
        chosen = [a for a, s in enumerate(selected) if s.x is not None and s.x >= 0.5]
        return flow.place(jobs, chosen)

    def _allocate_nodes(self, view, jobs, host, need, window_size, weight, start):
        import mip

        m = self.solver.model()
        N2 = 2.0 * self.n_nodes
        units = view.units[jobs]
        req_nodes = view.req_nodes[jobs]
        per_node: dict[int, list] = {}  # node -> [(job position, x term)]
        objective = []
        xs = []
        ts_of = []
        for a in range(jobs.size):
            s = m.add_var(var_type=mip.BINARY)
            nodes = np.flatnonzero(host[a])
            ts = [m.add_var(var_type=mip.BINARY) for _ in nodes]
            ts_of.append(ts)
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
            self._knapsack_rows(m, view, jobs, [s for s, _, _ in xs])
        for n, terms in per_node.items():  # (2) and (4), per resource type
            for k in range(request.shape[1]):
                worst = sum(int(request[a, k]) * int(host[a, n]) for a, _ in terms)
                if worst > view.free[n, k]:
                    m += mip.xsum(int(request[a, k]) * xv for a, xv in terms if request[a, k] > 0) <= int(
                        view.free[n, k])
        m.objective = mip.maximize(mip.xsum(objective))
        placed, value, resolution = start
        start = []
        for a, used, counts in placed:
            s, nodes, x = xs[a]
            at = dict(zip(nodes.tolist(), range(nodes.size), strict=True))
            start.append((s, 1.0))
            for n, c in zip(used.tolist(), counts.tolist(), strict=True):
                start.append((ts_of[a][at[n]], 1.0))
                if req_nodes[a] <= 0:
                    start.append((x[at[n]], float(c)))
        if not self._solve(m, view.time, window_size, int(jobs.size), start=start, start_objective=value,
                           resolution=resolution).use:
            return []
        starts = []
        for a, (s, nodes, x) in enumerate(xs):
            if s.x is None or s.x < 0.5:
                continue
            counts = np.array([round(v.x) for v in x], dtype=np.int64)  # a Var or share * t
            used = counts > 0
            starts.append((int(jobs[a]), nodes[used], counts[used]))
        return starts


def _slack(bound: float, resolution: float) -> float:
    """How far below ``bound`` a placement may be and still count as reaching it: the
    floating-point sums' rounding (1e-9 of the bound), and never more than the solver's
    gap (half of ``resolution``), so that a placement started this way is an optimum, not
    just within the gap of one."""
    return min(resolution / 2, 1e-9 * abs(bound))


def ipsched(context, **options) -> IPSched:
    return IPSched(context, **options)


class _StateFlow:
    """The node-state flow of the ``model="states"`` IP (see the module docstring): the
    window's jobs take their units one after the other, and ``count[j][s]`` nodes are in
    state ``s`` when job ``j``'s turn comes; ``z`` (integer) of them give job j ``h``
    units each and move to the state ``s - h request_j``, the others stay.

    A state is (free amounts, the later jobs that may use the node): free int64 (4,) capped
    at what the jobs from j on could take in all (more can never bind), and the node's
    column of ``host > 0`` from job j on (a node a job may not use, or cannot host one
    unit or share of it on its free amounts, never hosts it: amounts only decrease).
    Nodes in the same state are interchangeable for the jobs still to come, so the flow
    has the per-node model's optima (any per-node solution is one flow; an integer flow
    splits into one path of states per node).

    ``takes[a]``: [(z, h)] of job a; :meth:`place` turns the solution into nodes."""

    def __init__(self, m, free, request, units, need, fixed, host):
        import mip

        W = request.shape[0]
        self.W = W
        demand = units[:, None] * request  # (W, 4)
        # left[j]: what jobs j.. could take in all; a free amount at or above it never binds
        left = np.vstack([np.cumsum(demand[::-1], axis=0)[::-1], np.zeros((1, free.shape[1]), dtype=np.int64)])
        may = host > 0  # (W, nodes)
        capped = np.minimum(free, left[0])
        keys, group = np.unique(np.column_stack([capped, may.T]), axis=0, return_inverse=True)
        group = np.asarray(group).reshape(-1)
        # one stage's states: key -> [count (int or Var), upper bound, free (4,), may column (W,)]
        stage: dict = {}
        self.members: dict = {}  # stage-0 key -> node indices, ascending
        order = np.argsort(group, kind="stable")
        bounds = np.searchsorted(group[order], np.arange(keys.shape[0] + 1))
        for g in range(keys.shape[0]):
            nodes = order[bounds[g] : bounds[g + 1]]
            key = (tuple(keys[g, : free.shape[1]].tolist()), keys[g, free.shape[1] :].tobytes())
            stage[key] = [int(nodes.size), int(nodes.size), keys[g, : free.shape[1]], keys[g, free.shape[1] :] > 0]
            self.members[key] = nodes
        self.stages = []  # per job: [(key, [(z, h, next key)], stay key)]
        self.counted = []  # per job j: {key: y}, the continuous count variables of stage j + 1's states
        self.takes = [[] for _ in range(W)]
        for j in range(W):
            req = request[j]
            typed = req > 0
            nxt: dict = {}
            inflow: dict = {}  # next key -> [terms], upper bound
            moves = []
            for key, (count, ub, fr, col) in stage.items():
                options = []
                if col[j]:
                    h_max = int(min(units[j], (fr[typed] // req[typed]).min())) if typed.any() else int(units[j])
                    hs = [int(need[j])] if fixed[j] else range(h_max, 0, -1)
                    for h in hs:
                        if h > h_max or h < need[j]:
                            continue
                        bound = min(ub, int(units[j] // h) if not fixed[j] else int(units[j] // need[j]))
                        z = m.add_var(var_type=mip.INTEGER, lb=0, ub=bound)
                        self.takes[j].append((z, h))
                        options.append((z, h, self._enter(nxt, inflow, fr - h * req, col, j + 1, left, z, bound)))
                if options:
                    if not (isinstance(count, int) and sum(o[0].ub for o in options) <= count):
                        m += mip.xsum(z for z, _, _ in options) <= count  # the nodes in state s
                    stay_count = count - mip.xsum(z for z, _, _ in options)
                else:
                    stay_count = count
                stay = self._enter(nxt, inflow, fr, col, j + 1, left, stay_count, ub)
                moves.append((key, options, stay))
            counted = {}
            for key, terms in inflow.items():
                if len(terms) == 1 and not isinstance(terms[0], mip.LinExpr):
                    nxt[key][0] = terms[0]  # a constant or one variable: no row needed
                elif all(isinstance(t, int) for t in terms):
                    nxt[key][0] = sum(terms)
                else:
                    y = m.add_var(lb=0, ub=nxt[key][1])
                    m += y == mip.xsum(terms)
                    nxt[key][0] = y
                    counted[key] = y
            self.stages.append(moves)
            self.counted.append(counted)
            stage = nxt

    @staticmethod
    def _enter(nxt, inflow, fr, col, j, left, term, bound):
        """Add ``term`` nodes (upper bound ``bound``) to the stage-j state of free amounts
        ``fr`` and may column ``col``; returns its key."""
        fr = np.minimum(fr, left[j])
        key = (tuple(fr.tolist()), col[j:].tobytes())
        if key in nxt:
            nxt[key][1] += bound
        else:
            nxt[key] = [None, bound, fr, col]
        inflow.setdefault(key, []).append(term)
        return key

    def start(self, placed) -> list:
        """[(z, count)] of a placement [(position, nodes, units per node)] of some of the
        window's jobs that respects the free amounts and ``host`` (:func:`first_fit`'s):
        each node follows its path of states, and z counts the nodes that give job j h
        units from a state, and y the nodes in a state that several moves enter.  (A
        node's state keeps the free amounts capped at what the later jobs could take, so
        whatever the placement gives a job on it, the state has that option.)

        The y are continuous, yet they must be given: CBC's preprocessing makes them
        integer (they equal sums of integers) and then reads a start's missing
        variables as 0, which violates their rows; it then rejects the start, and its
        repair can end in a solution that breaks the model's rows under an "optimal"
        status (ESP cpu-gpu, seed 1, t = 2645: a 64-node job placed on 62 nodes)."""
        n_nodes = sum(nodes.size for nodes in self.members.values())
        share = np.zeros((self.W, n_nodes), dtype=np.int64)  # units each job gets on each node
        for a, nodes, counts in placed:
            share[a, nodes] = counts
        where = dict(self.members)  # state -> its nodes at this stage
        out = []
        for j, moves in enumerate(self.stages):
            nxt: dict = {}
            for key, options, stay in moves:
                nodes = where.get(key)
                if nodes is None or nodes.size == 0:
                    continue
                h = share[j, nodes]
                for z, taken, to in options:
                    mine = nodes[h == taken]
                    if mine.size:
                        out.append((z, float(mine.size)))
                        nxt.setdefault(to, []).append(mine)
                nxt.setdefault(stay, []).append(nodes[h == 0])
            where = {key: np.concatenate(parts) for key, parts in nxt.items()}
            out += [(y, float(where[key].size)) for key, y in self.counted[j].items() if key in where]
        return out

    def place(self, jobs, chosen):
        """Starts [(job, nodes, units per node)] of the chosen window positions: each
        state's nodes in ascending index order, the largest shares to the lowest indices."""
        members = dict(self.members)
        got: dict[int, list] = {a: [] for a in chosen}
        for j, moves in enumerate(self.stages):
            nxt: dict = {}
            for key, options, stay in moves:
                nodes = members.get(key, np.zeros(0, dtype=np.int64))
                at = 0
                for z, h, to in options:  # h descending
                    k = round(z.x)
                    if k:
                        if j in got:
                            got[j].append((nodes[at : at + k], h))
                        nxt.setdefault(to, []).append(nodes[at : at + k])
                        at += k
                nxt.setdefault(stay, []).append(nodes[at:])
            members = {key: np.sort(np.concatenate(parts)) for key, parts in nxt.items()}
        starts = []
        for a in chosen:
            nodes = np.concatenate([n for n, _ in got[a]])
            counts = np.concatenate([np.full(n.size, h, dtype=np.int64) for n, h in got[a]])
            order = np.argsort(nodes)
            starts.append((int(jobs[a]), nodes[order], counts[order]))
        return starts
