"""CPH (Netti et al. §2.2, after Borghesi et al.'s hybrid CP scheduler, their reference
[4]): constraint programming on the machine's aggregated resources, then the run's
allocator on the nodes.

At every decision point:

1. **Phase 1, the aggregated schedule.**  The window (the first ``cp_jobs`` queued jobs in
   PRB order) is scheduled by constraint programming so as to minimise the total
   (weighted) waiting time, with one cumulative constraint per resource type over the
   whole machine: capacity = the free amounts of every node plus what the running jobs
   hold, summed over the nodes (cores, GPUs, MICs, memory); the running jobs hold theirs
   until their predicted end.  Nodes, partitions and maintenance windows play no part.
2. **Phase 2, the allocator.**  The window's jobs that the schedule starts now are offered,
   in window order, to the run's allocator: a job that fits on the nodes starts, one that
   does not is postponed (the aggregated schedule can be wrong on nodes: four free cores
   spread over two nodes do not host a one-node job of four cores).  The others wait for
   the next decision point, where the schedule is made afresh.

**Solver: OR-Tools CP-SAT** (``ortools`` from PyPI, one of the registries this project's
machines reach; a dependency in pyproject.toml).  The authors modelled CPH in OR-Tools'
original CP solver (interval variables, ``Cumulative``, a time limit); CP-SAT is that
library's current CP engine and states the same model (fixed-size interval variables and
``add_cumulative``) without a time grid.  python-mip (CBC) was the alternative: a MIP needs
either a time-indexed model (one binary per job and instant: the schedules span hours to
days in seconds, so it would need a coarse discretisation that changes the problem) or
big-M sequencing constraints whose LP bound is useless for cumulative resources; CP-SAT
solves the exact model in seconds of integer time.  CP-SAT runs in a child process
(:class:`_SolverProcess`), since ortools and python-mip's CBC cannot be loaded in one
process.  **Determinism**: one search worker,
a fixed seed (``cp_seed``), and a limit in CP-SAT's *deterministic time*
(``cp_det_time``, its work count scaled to about a second per unit; never the wall
clock), so a run gives the same schedule on every machine with the same ``ortools``.  The
best solution found within the limit is used.  **Heuristic start**: a serial list
schedule in window order (each job at the earliest instant its demand fits under the
capacity for its whole predicted run, given the jobs placed before it) is always
feasible; it is the solver's hint, and the schedule used when the solver returns none or
a worse one (``status`` "heuristic" in decisions.parquet).

The choices the paper leaves unsaid, and where each comes from (the authors' code is
AccaSim's published ``extra/dispatching_methods/cph_scheduler.py``; "ours" where neither
settles it):

* **Objective** (paper: "minimizing the total job waiting time"; code: weighted):
  ``sum_j w_j (start_j - submit_j)`` over the window, w_j = floor(max_ewt / ewt_j), ewt_j
  the expected wait of job j's queue (``view.qwait``) and max_ewt the largest over the
  queued and running jobs (code).  ``cp_weights=none`` gives every job weight 1, the
  paper's text.
* **Time**: integer seconds from now, no discretisation (code).  Each job's duration is its
  prediction (at least 1 s); a running job holds its resources for its predicted
  remaining time, or 1 s when it has outlived its prediction (code).  The horizon is the
  longest remaining time plus the window's durations, which contains every active
  schedule, so it cuts off no optimum (ours; the code's, the sum of every remaining and
  queued duration, is longer and gives the same optima).
* **Window**: the code gives the first 100 queued jobs in its priority order variables
  and pins the rest one after another beyond its horizon, where they constrain nothing and
  add a constant to the objective; here they are left out (the same optima).
  ``cp_jobs`` (default 100) sets the size.  A window job whose demand of some type exceeds
  the aggregated capacity cannot be scheduled; it is left out of the model (ours; the
  code's model would be infeasible).
* **Order** (code: PRB's priority, queue wait over expected wait, ties by demand): the
  window and phase 2 use the order of schedbench's ``prb`` (wait / expected wait, highest
  first; ties by units x (cores + GPUs + MICs) x prediction, smallest first; then
  (submit, id)).  The code's key adds 1 s to every wait and its demand also sums memory;
  we keep ``prb``'s so that CPH's priorities are PRB's.
* **Limit** (paper: "a time limit"; code: 1 s, doubled until a solution is found, at most
  150 s): a deterministic limit of ``cp_det_time`` units (default 1) per solve, and the
  heuristic schedule whenever no solution is found, so no retry is needed.
* **Phase 2** (paper: "if a job can be mapped to a node then it will be dispatched,
  otherwise it will be postponed"; code: the jobs the schedule starts now, in its
  priority order, through the allocator with skipping): each job is offered in window
  order; one that fits (the engine's node-level test, on the nodes the earlier starts
  left) starts on the allocator's nodes, so every allocator works, including those
  without a node order; one that does not is postponed and the next is offered.
* **Decision points**: every event instant (the period 0 default), as AccaSim dispatches.
  At one where no window job fits on the free nodes, nothing can start whatever phase 1
  plans, so the solver is not asked (ours: the same schedule for less time; status
  "no-fit" in decisions.parquet, without objective values).  On the April 2015 chain of
  ``make study`` (993 jobs, First-Fit) this skipped 167 of 937 decisions and cut CP-SAT's
  time from 460 to 306 s, same starts and ends.
"""

from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import time
from typing import NamedTuple

import numpy as np

from ..errors import UsageError

WEIGHTS = ("queue", "none")


class Phase1(NamedTuple):
    """A phase-1 schedule: ``starts`` int64 (W,) seconds from now (-1 for a job left out),
    ``status`` ("optimal", "feasible" = the limit stopped the search, "heuristic" = the
    list schedule was used), ``objective`` (sum w_j start_j of the modelled jobs),
    ``heuristic`` (the list schedule's value)."""

    starts: np.ndarray
    status: str
    objective: int
    heuristic: int


def list_schedule(capacity, held_until, held, duration, demand) -> np.ndarray:
    """The serial list schedule: each job in turn at the earliest instant from which its
    demand fits under ``capacity`` for its whole duration, given the jobs placed before it.

    capacity int64 (4,); held_until int64 (r,) s from now and held int64 (r, 4): amounts
    already in use until those instants; duration int64 (W,) s (> 0); demand int64 (W, 4),
    each row within capacity.  Returns the starts, int64 (W,), s from now."""
    times = [np.zeros(1, np.int64), np.asarray(held_until, np.int64)]
    deltas = [np.zeros((1, 4), np.int64), -np.asarray(held, np.int64).reshape(-1, 4)]
    base = np.asarray(held, np.int64).reshape(-1, 4).sum(axis=0)  # in use at 0
    starts = np.empty(len(duration), np.int64)
    for a in range(len(duration)):
        t = np.concatenate(times)
        d = np.concatenate(deltas)
        instants, inverse = np.unique(t, return_inverse=True)
        step = np.zeros((instants.size, 4), np.int64)
        np.add.at(step, inverse, d)
        usage = base + np.cumsum(step, axis=0)  # usage[i] holds on [instants[i], instants[i+1])
        blocked = np.any(usage + demand[a] > capacity, axis=1)
        blocked_before = np.concatenate([[0], np.cumsum(blocked)])
        # the pieces a run from instants[i] meets: i .. last[i] - 1
        last = np.searchsorted(instants, instants + duration[a], side="left")
        ok = blocked_before[last] == blocked_before[: instants.size]
        s = int(instants[int(np.argmax(ok))])  # the last piece (all released) is always ok
        starts[a] = s
        times.append(np.array([s, s + duration[a]], np.int64))
        deltas.append(np.vstack([demand[a], -demand[a]]))
    return starts


def phase1(capacity, held_until, held, duration, demand, weight, det_time: float = 1.0, seed: int = 0) -> Phase1:
    """Phase 1: starts (s from now) minimising ``sum weight_j start_j`` under one cumulative
    constraint per resource type (see :func:`list_schedule` for the arrays; weight int64
    (W,) >= 0).  Jobs whose demand exceeds the capacity are left out (start -1).  CP-SAT
    with one worker, seed ``seed`` and a deterministic-time limit ``det_time``, in the
    solver process (:class:`_SolverProcess`)."""
    capacity = np.asarray(capacity, np.int64)
    held_until = np.asarray(held_until, np.int64)
    held = np.asarray(held, np.int64).reshape(-1, 4)
    duration = np.maximum(np.asarray(duration, np.int64), 1)
    demand = np.asarray(demand, np.int64).reshape(-1, 4)
    weight = np.asarray(weight, np.int64)
    starts = np.full(duration.size, -1, np.int64)
    fits = np.all(demand <= capacity, axis=1)
    idx = np.flatnonzero(fits)
    if idx.size == 0:
        return Phase1(starts, "optimal", 0, 0)
    dur, dem, w = duration[idx], demand[idx], weight[idx]
    hint = list_schedule(capacity, held_until, held, dur, dem)
    hint_value = int(w @ hint)
    # the running jobs, one block per distinct release instant
    releases, inverse = np.unique(held_until, return_inverse=True)
    held_at = np.zeros((releases.size, 4), np.int64)
    np.add.at(held_at, inverse, held)
    keep = releases > 0
    status, solved, value = _solver().solve(capacity, releases[keep], held_at[keep], dur, dem, w, hint,
                                            float(det_time), int(seed))
    if status in ("optimal", "feasible") and value <= hint_value:
        starts[idx] = solved
        return Phase1(starts, status, value, hint_value)
    starts[idx] = hint
    return Phase1(starts, "heuristic", hint_value, hint_value)


def _cpsat(capacity, releases, held_at, dur, dem, w, hint, det_time, seed):
    """The CP-SAT model and solve (run in the solver process): (status "optimal",
    "feasible" or "none", starts list, objective).  Arrays as in :func:`phase1`; releases
    int64 (r,) > 0 and held_at int64 (r, 4): amounts held from 0 until each release."""
    from ortools.sat.python import cp_model

    # every active schedule starts each job by the last release plus the others' durations
    horizon = int(releases.max(initial=0)) + int(dur.sum())
    m = cp_model.CpModel()
    fixed = [m.new_fixed_size_interval_var(0, int(r), f"held{i}") for i, r in enumerate(releases)]
    s = [m.new_int_var(0, horizon - int(d), f"s{a}") for a, d in enumerate(dur)]
    jobs = [m.new_fixed_size_interval_var(s[a], int(dur[a]), f"j{a}") for a in range(dur.size)]
    for k in range(4):
        if dem[:, k].sum() == 0:
            continue  # nobody in the window asks this type
        m.add_cumulative(fixed + jobs, [int(v) for v in held_at[:, k]] + [int(v) for v in dem[:, k]],
                         int(capacity[k]))
    m.minimize(sum(int(w[a]) * s[a] for a in range(dur.size)))
    for a in range(dur.size):
        m.add_hint(s[a], int(hint[a]))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    solver.parameters.max_deterministic_time = det_time
    status = solver.solve(m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return "none", None, None
    return ("optimal" if status == cp_model.OPTIMAL else "feasible", [solver.value(v) for v in s],
            int(round(solver.objective_value)))


class _SolverProcess:
    """CP-SAT in a child process, one per Python process, started at the first solve.

    Why a process: ortools and python-mip's CBC (cbcbox) each ship a ``libOsi.so.0`` (and
    CoinUtils, Clp) built against different C++ ABIs under the same sonames; the dynamic
    loader keeps whichever loads first, and the other package then fails to load (either
    order: measured with ortools 9.15 and cbcbox).  The child imports ortools and never
    mip, so ipsched, aucsched and cph can share a sweep, a test run or a notebook.  Each
    solve is one pickled request and answer over the child's stdin/stdout."""

    def __init__(self):
        self.proc = None

    def solve(self, *request):
        if self.proc is None or self.proc.poll() is not None:
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if isinstance(p, str) and p))
            self.proc = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, env=env)
            atexit.register(self.close)
        try:
            pickle.dump(request, self.proc.stdin)
            self.proc.stdin.flush()
            answer = pickle.load(self.proc.stdout)
        except (BrokenPipeError, EOFError):
            answer = ("error", "the CP-SAT solver process ended", None)
        if answer[0] == "error":
            self.close()
            raise UsageError(f"cph: {answer[1]} (cph needs OR-Tools: pip install ortools)")
        return answer

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None


_SOLVER = _SolverProcess()


def _solver() -> _SolverProcess:
    return _SOLVER


def _serve() -> None:
    """The solver process: answer each pickled request on stdin with :func:`_cpsat`'s
    answer on stdout, until stdin closes."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything a library prints goes to stderr, not into the answers
    try:
        import ortools.sat.python.cp_model  # noqa: F401
    except ImportError as exc:
        pickle.dump(("error", f"cannot import OR-Tools CP-SAT ({exc})", None), out)
        out.flush()
        return
    while True:
        try:
            request = pickle.load(sys.stdin.buffer)
        except EOFError:
            return
        pickle.dump(_cpsat(*request), out)
        out.flush()


def prb_order(view, jobs: np.ndarray) -> np.ndarray:
    """``jobs`` (queued job indices) in schedbench's PRB order at ``view.time``: wait /
    expected wait of the queue highest first, then demand units x (cores + GPUs + MICs) x
    prediction smallest first, then job index ((submit, id) order)."""
    key = -(view.time - view.submit[jobs]) / view.qwait[jobs].astype(np.float64)
    demand = (view.units[jobs] * view.request[jobs, :3].sum(axis=1)).astype(np.float64) * view.pred[jobs]
    return jobs[np.lexsort((jobs, demand, key))]


class CPH:
    """The CPH policy (see the module docstring); options as registered."""

    waits_for_events = False  # a schedule depends on the time (priorities, remaining runs)
    placement = "the run's allocator places the jobs phase 1 starts now"

    def __init__(self, context, cp_jobs=100, cp_det_time=1.0, cp_weights="queue", cp_seed=0):
        if int(cp_jobs) <= 0:
            raise UsageError("option cp_jobs must be a positive job count")
        if not float(cp_det_time) > 0:
            raise UsageError("option cp_det_time must be a positive deterministic time")
        self.window = int(cp_jobs)
        self.det_time = float(cp_det_time)
        if cp_weights not in WEIGHTS:
            raise UsageError(f"option cp_weights={cp_weights!r}: choose from {', '.join(WEIGHTS)}")
        self.weights = cp_weights
        self.seed = int(cp_seed)
        self.fits = context.fits
        self.rows: list[tuple] = []

    def _weights(self, view, jobs: np.ndarray) -> np.ndarray:
        if self.weights == "none":
            return np.ones(jobs.size, np.int64)
        max_ewt = int(max(view.qwait[view.queue].max(initial=1), view.qwait[view.running].max(initial=1)))
        return max_ewt // np.maximum(view.qwait[jobs], 1)

    def decide(self, view):
        if view.queue.size == 0:
            return
        now = view.time
        jobs = prb_order(view, view.queue.astype(np.int64))[: self.window]
        if not any(self.fits(int(j)) for j in jobs):
            # nothing phase 1 plans now could be placed, and nothing else starts: the
            # decision is empty whatever the solver says, so it is not asked
            self.rows.append((now, int(view.queue.size), int(jobs.size), 0, "no-fit", None, None, 0, 0, 0, 0.0))
            return
        running = view.running.astype(np.int64)
        held = view.units[running, None] * view.request[running]
        held_until = np.maximum(view.start[running] + view.pred[running] - now, 1)
        capacity = view.free.sum(axis=0) + held.sum(axis=0)
        weight = self._weights(view, jobs)
        t0 = time.perf_counter()
        plan = phase1(capacity, held_until, held, view.pred[jobs], view.units[jobs, None] * view.request[jobs],
                      weight, self.det_time, self.seed)
        solve_s = time.perf_counter() - t0
        started = postponed = 0
        now_jobs = jobs[plan.starts == 0]
        for j in now_jobs:  # window order
            if self.fits(int(j)):  # on the nodes the starts before it left
                started += 1
                yield int(j)
            else:
                postponed += 1
        modelled = int((plan.starts >= 0).sum())
        waited = int(weight[plan.starts >= 0] @ (now - view.submit[jobs[plan.starts >= 0]]))
        self.rows.append((now, int(view.queue.size), int(jobs.size), modelled, plan.status,
                          plan.objective + waited, plan.heuristic + waited, int(now_jobs.size), started, postponed,
                          solve_s))

    def report(self):
        import polars as pl

        names = ("time", "queued", "window", "modelled", "status", "objective", "heuristic", "planned_now",
                 "started", "postponed", "solve_s")
        types = (pl.Int64, pl.Int64, pl.Int64, pl.Int64, pl.Utf8, pl.Int64, pl.Int64, pl.Int64, pl.Int64, pl.Int64,
                 pl.Float64)
        table = pl.DataFrame({n: pl.Series(list(col), dtype=t) for n, t, col in
                              zip(names, types, zip(*self.rows, strict=True) if self.rows else [()] * len(names),
                                  strict=True)})
        statuses: dict[str, int] = {}
        for r in self.rows:
            statuses[r[4]] = statuses.get(r[4], 0) + 1
        times = table["solve_s"].to_numpy()
        summary = {
            "solver": "cp-sat",
            "workers": 1,
            "seed": self.seed,
            "det_time": self.det_time,
            "window": self.window,
            "weights": self.weights,
            "placement": self.placement,
            "decisions": len(self.rows),
            "statuses": statuses,
            "postponed": int(table["postponed"].sum()) if self.rows else 0,
            "solve_s_total": float(times.sum()),
            "solve_s_max": float(times.max()) if times.size else None,
        }
        return summary, {"decisions": table}


def cph(context, **options) -> CPH:
    return CPH(context, **options)


if __name__ == "__main__":
    _serve()
