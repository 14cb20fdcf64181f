"""Step-by-step replay for Python-level policies (the Batsim-style decision interface).

Schedulers that cannot run inside numba (python-mip models, experiments) implement

    class Policy:
        def decide(self, view: View) -> Iterable[Start]: ...

where a start is a job index (the run's allocator picks the nodes) or ``(job, nodes,
counts)`` (the policy picks them: ``counts[i]`` units on node ``nodes[i]``).  ``decide``
may return a list or yield: each start is applied before the next is taken, so a policy
that yields can test the next job with :meth:`Simulation.fits` on the updated nodes.  The engine
advances to the next decision point (every event instant, or with ``period=N`` every N
seconds, as IPSCHED's 5 s cycle), hands the policy a read-only :class:`View`, applies its
starts in order and continues.  A start that does not fit raises :class:`PolicyError`.

The view shows what a real scheduler knows: the queue, the running jobs with their start
times, the free resources of every node, and each job's request, estimate and prediction;
never actual run times.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import NamedTuple, Protocol

import numpy as np

from . import engine, layout
from .allocators import ALLOCATORS, N_RES, _fits
from .engine import (
    JobState,
)
from .errors import SchedbenchError, UsageError
from .jobs import JobTable
from .layout import (
    J_REQ,
    J_REQ_NODES,
    J_STATE,
    J_UNITS,
    R_JOB,
    V_HN,
    V_NEXT,
    V_QH,
    V_QN,
    V_QSPAN,
    V_RN,
    V_STARTED,
    W_COUNT,
    W_COUNT2,
    W_IDENT,
    W_NODE,
    W_NODE2,
)
from .machine import Machine
from .replay import ReplayResult, _lookup, build_state, result_from_state
from .schedulers import SCHEDULERS, _pass, needs_backfill_tree, needs_sjf_queue


class PolicyError(SchedbenchError):
    """A policy asked for something impossible (a job that is not queued, a placement
    that does not fit)."""


class View(NamedTuple):
    """What a policy sees at a decision point.  Arrays are read-only; job arrays are
    indexed by job index (row of the job table).

    time: s.  queue: job indices in queue order.  running: running job indices.
    free, capacity: int64 (n_nodes, 4) cores, GPUs, MICs, MiB.  submit, start, estimate,
    pred (s), units, req_nodes, user, queue_id, qwait (expected wait of the job's queue,
    s): int64 (n,); request: int64 (n, 4) per unit.
    """

    time: int
    queue: np.ndarray
    running: np.ndarray
    free: np.ndarray
    capacity: np.ndarray
    submit: np.ndarray
    start: np.ndarray
    estimate: np.ndarray
    pred: np.ndarray
    units: np.ndarray
    request: np.ndarray
    req_nodes: np.ndarray
    user: np.ndarray
    queue_id: np.ndarray
    qwait: np.ndarray


class Policy(Protocol):
    def decide(self, view: View) -> Iterable: ...


def _ro(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


class Simulation:
    """A replay driven from Python, one decision point at a time.

    ``queue_order`` "fifo" keeps the queue in (submit, id) order, "sjf" in (pred,
    submit, id) order.  Use :meth:`run` with a policy, or drive it by hand:
    ``while (t := sim.advance()) is not None: ...; sim.start(j); ...; sim.end_pass()``.
    """

    def __init__(
        self,
        table: JobTable,
        machine: Machine,
        *,
        allocator: str = "ff",
        predictor: str = "requested",
        period: int = 0,
        queue_order: str = "fifo",
        scheduler: str | None = None,
        **options,
    ):
        """``scheduler`` (a jitted scheduler's name) prepares the state for
        :meth:`jitted_pass` with that scheduler and sets the queue order it needs;
        ``options`` (meta, critical, priority_bound) go to
        :func:`schedbench.replay.build_state`."""
        if queue_order not in ("fifo", "sjf"):
            raise UsageError(f"queue_order must be 'fifo' or 'sjf', not {queue_order!r}")
        sched = None if scheduler is None else _lookup(SCHEDULERS, scheduler, "scheduler")
        if sched is not None and needs_sjf_queue(sched):
            queue_order = "sjf"
        self.allocator = allocator
        self.alloc = int(_lookup(ALLOCATORS, allocator, "allocator"))
        self.table = table
        self.machine = machine
        self.predictor = predictor
        self.state, self.status = build_state(
            table, machine, predictor, period=period, sjf=queue_order == "sjf",
            backfill_tree=sched is not None and needs_backfill_tree(sched), **options,
        )
        self.now: int | None = None
        J = self.state.jobs
        self._static = dict(
            capacity=_ro(self.state.cap),
            submit=_ro(J[:, layout.J_SUBMIT]),
            start=_ro(J[:, layout.J_START]),
            estimate=_ro(J[:, layout.J_EST]),
            pred=_ro(J[:, layout.J_PRED]),
            units=_ro(J[:, J_UNITS]),
            request=_ro(J[:, J_REQ : J_REQ + N_RES]),
            req_nodes=_ro(J[:, J_REQ_NODES]),
            user=_ro(J[:, layout.J_USER]),
            queue_id=_ro(J[:, layout.J_QUEUE]),
            qwait=_ro(J[:, layout.J_QWAIT]),
        )
        self.passes = 0
        self._started_in_pass = 0

    # -- stepping ---------------------------------------------------------------------

    def advance(self) -> int | None:
        """Process events up to the next decision point; its time, or None at the end."""
        S = self.state
        t = engine._advance(S.jobs, S.queue, S.run_list, S.heap, S.pool, S.free, S.tree, S.memo, S.scal)
        self.now = None if t < 0 else int(t)
        self._started_in_pass = 0
        return self.now

    def queue(self) -> np.ndarray:
        S = self.state
        engine._queue_tidy(S.jobs, S.queue, S.scal)
        qh, span = int(S.scal[V_QH]), int(S.scal[V_QSPAN])
        q = S.queue[qh : qh + span]
        return q[S.jobs[q, J_STATE] == JobState.QUEUED].copy()

    def view(self) -> View:
        S = self.state
        rn = int(S.scal[V_RN])
        return View(
            time=self.now,
            queue=_ro(self.queue()),
            running=_ro(S.run_list[:rn, R_JOB].copy()),
            free=_ro(S.free.copy()),
            **self._static,
        )

    def start(self, job: int, nodes=None, counts=None) -> None:
        """Start queued ``job`` now: on the allocator's nodes, or on ``nodes`` with
        ``counts`` units each."""
        S = self.state
        j = int(job)
        if self.now is None:
            raise PolicyError("no decision point: call advance() first")
        if not 0 <= j < S.jobs.shape[0] or S.jobs[j, J_STATE] != JobState.QUEUED:
            raise PolicyError(f"job index {j} is not queued at time {self.now}")
        if nodes is None:
            ok = engine._try_start(
                S.jobs, S.run_list, S.heap, S.pool, S.cap, S.free, S.work, S.fkey, S.scal, j,
                self.now, self.alloc,
            )
            if not ok:
                raise PolicyError(f"job index {j} does not fit at time {self.now}")
        else:
            used = self._check_placement(j, nodes, counts)
            # the nodes and counts are in work[W_NODE] / work[W_COUNT], validated above
            engine._commit(S.jobs, S.run_list, S.heap, S.pool, S.free, S.work, S.scal, j, self.now, used)
        if S.tree.shape[0] > 0:  # a policy may start any queued job: clear its leaf
            engine._tree_set(S.tree, S.jobs, j, False)
        self._started_in_pass += 1

    def _check_placement(self, j: int, nodes, counts) -> int:
        S = self.state
        nodes = np.asarray(nodes, dtype=np.int64).ravel()
        counts = np.asarray(counts, dtype=np.int64).ravel()
        req = S.jobs[j, J_REQ : J_REQ + N_RES]
        units, req_nodes = int(S.jobs[j, J_UNITS]), int(S.jobs[j, J_REQ_NODES])
        m = S.cap.shape[0]
        problem = None
        if nodes.shape != counts.shape or nodes.size == 0:
            problem = "nodes and counts must be non-empty and of equal length"
        elif nodes.min() < 0 or nodes.max() >= m or np.unique(nodes).size != nodes.size:
            problem = "nodes must be distinct indices of the machine"
        elif counts.min() <= 0 or int(counts.sum()) != units:
            problem = f"counts must be positive and sum to the job's {units} units"
        elif req_nodes > 0 and (nodes.size != req_nodes or np.any(counts != units // req_nodes)):
            problem = f"the job fixes {req_nodes} nodes of {units // req_nodes} units"
        elif np.any(S.free[nodes] < counts[:, None] * req[None, :]):
            problem = "a node lacks the free resources"
        if problem:
            raise PolicyError(f"placement of job index {j} at time {self.now}: {problem}")
        S.work[W_NODE, : nodes.size] = nodes
        S.work[W_COUNT, : nodes.size] = counts
        return int(nodes.size)

    def fits(self, job: int, free: np.ndarray | None = None) -> bool:
        """Whether ``job`` fits now (or on ``free``, int64 (n_nodes, 4)): the engine's own
        node-level test, for policies that plan several starts in one decision."""
        S = self.state
        free = S.free if free is None else np.ascontiguousarray(free, dtype=np.int64)
        j = int(job)
        return bool(
            _fits(
                free, free.sum(axis=0), S.jobs[j, J_UNITS], S.jobs[j, J_REQ : J_REQ + N_RES],
                S.jobs[j, J_REQ_NODES], S.work[W_IDENT], S.work[W_NODE2], S.work[W_COUNT2],
            )
        )

    def jitted_pass(self, scheduler: str) -> None:
        """Run one pass of a jitted scheduler at this decision point (to step through a
        jitted replay, e.g. to check invariants between passes)."""
        S = self.state
        sched = int(_lookup(SCHEDULERS, scheduler, "scheduler"))
        if needs_backfill_tree(sched) and S.tree.shape[0] == 0:
            raise UsageError(f"create the Simulation with scheduler={scheduler!r} to step it")
        before = int(S.scal[V_STARTED])
        _pass(
            S.jobs, S.queue, S.run_list, S.heap, S.pool, S.cap, S.free, S.scratch, S.work,
            S.fkey, S.stack, S.qkey, S.qwork, S.tree, S.scal, self.now, sched, self.alloc,
        )
        self._started_in_pass += int(S.scal[V_STARTED]) - before

    def end_pass(self) -> None:
        """Close the decision point: record the timeline row."""
        engine._record(self.state.timeline, self.state.scal, self.now)
        self.passes += 1

    @property
    def stuck(self) -> bool:
        """Nothing runs, nothing will arrive, and the last pass started nothing: the
        queued jobs would wait forever."""
        S = self.state
        return (
            self._started_in_pass == 0
            and S.scal[V_RN] == 0
            and S.scal[V_QN] > 0
            and S.scal[V_NEXT] >= S.jobs.shape[0]
            and not np.any(S.heap[: S.scal[V_HN], 1] != engine.Event.TICK)
        )

    # -- whole runs ---------------------------------------------------------------------

    def run(self, policy: Policy, name: str = "python") -> ReplayResult:
        """Replay to the end with ``policy``; queued jobs it never starts are reported
        as ``not_started``."""
        t0 = time.perf_counter()
        while self.advance() is not None:
            for start in policy.decide(self.view()) or ():
                if isinstance(start, tuple | list):
                    self.start(*start)
                else:
                    self.start(start)
            self.end_pass()
            if self.stuck:
                break
        simulate_s = time.perf_counter() - t0
        return result_from_state(
            self.state, self.status, self.table, self.machine, name, self.allocator,
            self.predictor, simulate_s, self.passes,
        )

    @property
    def started(self) -> int:
        return int(self.state.scal[V_STARTED])
