"""Step-by-step replay for Python-level policies (the Batsim-style decision interface).

Schedulers that cannot run inside numba (python-mip models, experiments) implement the
protocol of :mod:`schedbench.engine.policy`::

    class Policy:
        def decide(self, view: View) -> Iterable[Start]: ...

where a :class:`~schedbench.engine.policy.Start` is a job index (the run's allocator
picks the nodes) or ``(job, nodes, counts)`` (the policy picks them: ``counts[i]`` units
on node ``nodes[i]``); a bare int or tuple means the same.  ``decide``
may return a list or yield: each start is applied before the next is taken, so a policy
that yields can test the next job with :meth:`Simulation.fits` on the updated nodes.  The engine
advances to the next decision point (every event instant, or with ``period=N`` every N
seconds, as IPSCHED's 5 s cycle), hands the policy a read-only :class:`View`, applies its
starts in order and continues.  A start that does not fit raises :class:`PolicyError`.

The view shows what a real scheduler knows: the queue, the running jobs with their start
times and nodes, the free resources of every node, and each job's request, estimate and
prediction; never actual run times.

A policy whose answer depends only on the queue, the running jobs and the free nodes (not
on the time, nor on its own earlier calls) says so with a class or instance attribute
``waits_for_events = True``: in the periodic mode, after a decision point where it started
nothing, :meth:`Simulation.run` jumps to the first period instant at or after the next
arrival, end or maintenance-window end, since the ticks in between would give the same
empty answer.  The attribute is read after every decision point, so a policy whose state
just changed (a window halved after a solver limit) sets it false until the next start.

A policy may also have ``report() -> (dict, {name: polars.DataFrame})``: the dict goes
into summary.json as ``policy`` (its solver and settings) and each table is written as
``NAME.parquet`` beside jobs.parquet (ipsched's and aucsched's ``decisions``).

Register a policy with :func:`schedbench.registry.register_scheduler` (``kind="python"``,
a factory ``factory(context, **options) -> policy`` taking a
:class:`~schedbench.engine.policy.PolicyContext`, :meth:`Simulation.context`) and
``schedbench replay -s NAME`` runs it.
"""

from __future__ import annotations

import time

import numpy as np

from .. import core as core_mod
from .. import registry
from .._jit import bound
from ..core import api
from ..core.heap import Event
from ..core.layout import (
    J_CLASS,
    J_EST,
    J_GROUP,
    J_NODES,
    J_PRED,
    J_PTR,
    J_QUEUE,
    J_REQ,
    J_REQ_NODES,
    J_START,
    J_STATE,
    J_SUBMIT,
    J_UNITS,
    J_USER,
    N_RES,
    JobState,
)
from ..core.state import (
    C_DONE,
    C_FREE,
    C_HN,
    C_LAST_PASS,
    C_NEXT,
    C_QH,
    C_QN,
    C_RN,
    C_STARTED,
    W_COUNT,
    W_NODE,
)
from ..errors import UsageError
from ..io.jobs import JobTable, expected_queue_wait
from ..io.machine import Machine
from .policy import Policy, PolicyContext, PolicyError, View, allocator_order
from .prepare import ReplayResult, Run, result, start_run

_QUEUED = int(JobState.QUEUED)  # plain ints: an IntEnum member lookup costs microseconds
_TICK = int(Event.TICK)


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
        meta: dict | None = None,
        options: dict | None = None,
        site=None,
        **more_options,
    ):
        """``scheduler`` (a jitted scheduler's name) builds its state for
        :meth:`jitted_pass` and takes the queue order it needs; ``options`` (and keyword
        arguments): allocator and scheduler options by name (see :mod:`schedbench.registry`);
        ``meta``: the workload's metadata; ``site``: a :class:`schedbench.plan.site.Site` (or a
        path) holding maintenance windows only: the allocator never starts a job on a node
        whose window meets its predicted run, placements a policy gives are refused there,
        and every window end is a decision point while jobs wait (``View.maintenance``)."""
        if scheduler is not None and registry.scheduler(scheduler).kind is not registry.Kind.JITTED:
            raise UsageError(f"{scheduler!r} is a Python policy: pass it to run(), not as scheduler=")
        self._attach(start_run(
            table, machine, scheduler, allocator, predictor, period=period, queue_order=queue_order, meta=meta,
            options={**(options or {}), **more_options}, site=site, stepped=True,
        ))

    @classmethod
    def of(cls, run: Run) -> Simulation:
        """A Simulation stepping ``run`` (from :func:`schedbench.engine.prepare.start_run`;
        :func:`schedbench.engine.replay.replay` builds Python policies' runs so)."""
        sim = cls.__new__(cls)
        sim._attach(run)
        return sim

    def _attach(self, run: Run) -> None:
        prov = run.provenance
        self._provenance = prov
        self.scheduler_options, self.allocator_options = run.sched_options, run.alloc_options
        self.allocator, self.predictor, self.period = prov["allocator"], prov["predictor"], prov["period"]
        self.scheduler = prov["scheduler"] if run.jitted is not None else None
        self.table, self.machine = run.setup.table, run.setup.machine
        self._grow = None if run.jitted is None else run.jitted.grow
        self.sched, self.pred, self.alloc, self.status, self.core = run.sched, run.pred, run.alloc, run.status, run.core
        meta = run.setup.meta
        table = self.table
        self._bind()
        self.now: int | None = None
        J = self.core.jobs
        self._static = dict(
            capacity=_ro(self.core.cap),
            submit=_ro(J[:, J_SUBMIT]),
            start=_ro(J[:, J_START]),
            estimate=_ro(J[:, J_EST]),
            pred=_ro(J[:, J_PRED]),
            units=_ro(J[:, J_UNITS]),
            request=_ro(J[:, J_REQ : J_REQ + N_RES]),
            req_nodes=_ro(J[:, J_REQ_NODES]),
            user=_ro(J[:, J_USER]),
            group=_ro(J[:, J_GROUP]),
            queue_id=_ro(J[:, J_QUEUE]),
            qwait=_ro(expected_queue_wait(table, meta)),
            contiguous=_ro(np.asarray(table.contiguous, dtype=np.bool_)),
            alloc_start=_ro(J[:, J_PTR]),
            alloc_count=_ro(J[:, J_NODES]),
            maint_span=_ro(self.core.mspan),
            maint_windows=_ro(self.core.mwin),
            node_class=_ro(J[:, J_CLASS]),
            eligible=_ro(self.core.elig.astype(np.bool_)),
            alloc_log=_ro(self.core.log),
        )
        self._static_fields = tuple(self._static[f] for f in View._fields[4:])  # in View's order
        self.passes = 0
        self._started_in_pass = 0

    def context(self) -> PolicyContext:
        """What a Python policy's factory is given (:class:`PolicyContext`): the machine,
        the allocator, the fit test and the allocator's node order; not the job table."""
        return PolicyContext(self.machine, self.allocator, self.alloc, self.period, self.fits,
                             lambda free: allocator_order(self.alloc, free))

    # -- stepping ---------------------------------------------------------------------

    def _bind(self) -> None:
        """Forget the kernels bound to this run's types (see :func:`schedbench._jit.bound`)
        when ``self.core`` or ``self.sched`` is replaced; :meth:`_kernel` binds each again
        when first used."""
        C = self.core
        self._bound: dict[str, object] = {}
        self._fit_work = (C.work[api.W_IDENT], C.work[api.W_NODE2], C.work[api.W_COUNT2])
        self._free_total = C.scal[C_FREE : C_FREE + N_RES]  # the core keeps the machine's free amounts

    def _kernel(self, name: str):
        """The kernel ``name`` (advance, start, skip or fits) bound to this run's types,
        compiled (or loaded) when first asked for: a jitted scheduler stepped with
        :meth:`step` needs none of them, and each costs seconds to compile per scheduler
        state class."""
        k = self._bound.get(name)
        if k is None:
            C, i = self.core, np.int64(0)
            if name == "advance":
                k = bound(api.advance, C, self.pred, self.sched, self.alloc)
            elif name == "start":
                k = bound(api.start_from_policy, C, self.sched, self.alloc, i, i, i)
            elif name == "skip":
                k = bound(api.skip_idle_ticks, C)
            else:
                req = C.jobs[0, J_REQ : J_REQ + N_RES] if C.jobs.shape[0] else np.zeros(N_RES, np.int64)
                k = bound(api.fits, C.free, self._free_total, i, req, i, *self._fit_work, C.elig[0], False)
            self._bound[name] = k
        return k

    def _grow_log(self) -> None:
        self.core = core_mod.grow_log(self.core)
        self._bind()

    def _make_room(self) -> None:
        """Room for one more decision point: the allocation log's, and the scheduler's
        arrays' (its ``grow``), as the replay loop's caller gives it (:func:`schedbench.core.run`)."""
        if not core_mod.log_room(self.core):
            self._grow_log()
        if self._grow is not None:
            grown = self._grow(self.sched, self.core)
            if grown is not None:  # new arrays: the kernels bound to the old ones go
                self.sched = grown
                self._bind()

    def advance(self) -> int | None:
        """Process events up to the next decision point; its time, or None at the end."""
        self._make_room()
        t = self._kernel("advance")(self.core, self.pred, self.sched, self.alloc)
        self.now = None if t < 0 else int(t)
        self._started_in_pass = 0
        return self.now

    def step(self) -> int | None:
        """One whole decision point of the jitted scheduler this Simulation was built with
        (``scheduler=NAME``): :meth:`advance`, :meth:`jitted_pass` and :meth:`end_pass` in
        one call of its compiled replay loop, limited to one pass, so that stepping a
        replay compiles nothing beyond the loop a one-call replay uses.  Returns the
        decision point's time, or None at the end."""
        if self.scheduler is None:
            raise UsageError("create the Simulation with scheduler=NAME to step a jitted scheduler")
        loop = core_mod.loop_for(self.sched, self.pred, self.alloc)
        before = int(self.core.scal[C_STARTED])
        while True:
            self._make_room()
            # 0 passes: the end, or the loop returned for room (given on the next turn)
            if loop(self.core, self.pred, self.sched, self.alloc, 1, 0) == 1:
                self.now = int(self.core.scal[C_LAST_PASS])
                self.passes += 1
                self._started_in_pass = int(self.core.scal[C_STARTED]) - before
                return self.now
            if self.core.scal[C_DONE]:
                self.now = None
                self._started_in_pass = 0
                return None

    def queue(self) -> np.ndarray:
        C = self.core
        api.queue_compact(C.jobs, C.queue, C.scal)
        qh = int(C.scal[C_QH])
        return C.queue[qh : qh + int(C.scal[C_QN])].copy()

    def view(self) -> View:
        C = self.core
        s = self._static
        if s["alloc_log"].base is not C.log:  # the log grew: a new array
            s["alloc_log"] = _ro(C.log)
            self._static_fields = tuple(s[f] for f in View._fields[4:])
        running = C.run_list[: int(C.scal[C_RN]), 1].copy()
        running.flags.writeable = False
        free = C.free.copy()
        free.flags.writeable = False
        queue = self.queue()
        queue.flags.writeable = False
        # positional: a NamedTuple built from keywords costs microseconds per decision
        return tuple.__new__(View, (self.now, queue, running, free, *self._static_fields))

    def start(self, job: int, nodes=None, counts=None) -> None:
        """Start queued ``job`` now: on the allocator's nodes, or on ``nodes`` with
        ``counts`` units each."""
        C = self.core
        j = int(job)
        if self.now is None:
            raise PolicyError("no decision point: call advance() first")
        if not 0 <= j < C.jobs.shape[0] or C.jobs[j, J_STATE] != _QUEUED:
            raise PolicyError(f"job index {j} is not queued at time {self.now}")
        if not core_mod.log_room(C):
            self._grow_log()
            C = self.core
        used = -1 if nodes is None else self._check_placement(j, nodes, counts)
        if not self._kernel("start")(C, self.sched, self.alloc, j, self.now, used):
            raise PolicyError(f"job index {j} does not fit at time {self.now}")
        self._started_in_pass += 1

    def _check_placement(self, j: int, nodes, counts) -> int:
        C = self.core
        nodes = np.asarray(nodes, dtype=np.int64).ravel()
        counts = np.asarray(counts, dtype=np.int64).ravel()
        req = C.jobs[j, J_REQ : J_REQ + N_RES]
        units, req_nodes = int(C.jobs[j, J_UNITS]), int(C.jobs[j, J_REQ_NODES])
        m = C.cap.shape[0]
        problem = None
        if nodes.shape != counts.shape or nodes.size == 0:
            problem = "nodes and counts must be non-empty and of equal length"
        elif nodes.min() < 0 or nodes.max() >= m or np.unique(nodes).size != nodes.size:
            problem = "nodes must be distinct indices of the machine"
        elif counts.min() <= 0 or int(counts.sum()) != units:
            problem = f"counts must be positive and sum to the job's {units} units"
        elif req_nodes > 0 and (nodes.size != req_nodes or np.any(counts != units // req_nodes)):
            problem = f"the job fixes {req_nodes} nodes of {units // req_nodes} units"
        elif np.any(C.free[nodes] < counts[:, None] * req[None, :]):
            problem = "a node lacks the free resources"
        elif not C.elig[C.jobs[j, J_CLASS], nodes].all():
            problem = f"node {int(nodes[C.elig[C.jobs[j, J_CLASS], nodes] == 0][0])} is outside the job's partition or features"
        elif (down := self._in_maintenance(j, nodes)) is not None:
            problem = f"node {down} has a maintenance window during the job's predicted run"
        if problem:
            raise PolicyError(f"placement of job index {j} at time {self.now}: {problem}")
        C.work[W_NODE, : nodes.size] = nodes
        C.work[W_COUNT, : nodes.size] = counts
        return int(nodes.size)

    def _in_maintenance(self, j: int, nodes: np.ndarray) -> int | None:
        """The first of ``nodes`` whose maintenance window meets [now, now + max(pred, 1))."""
        C = self.core
        end = self.now + max(int(C.jobs[j, J_PRED]), 1)
        for node in nodes:
            lo, hi = C.mspan[node]
            w = C.mwin[lo:hi]
            if np.any((w[:, 0] < end) & (w[:, 1] > self.now)):
                return int(node)
        return None

    def fits(self, job: int, free: np.ndarray | None = None) -> bool:
        """Whether ``job`` fits now (or on ``free``, int64 (n_nodes, 4)): the engine's own
        node-level test, for policies that plan several starts in one decision.  Now
        means on the free nodes less those in maintenance during the job's predicted run."""
        C = self.core
        j = int(job)
        total = None
        if free is None:
            free = C.free
            total = self._free_total
            if C.mnodes.size and self.now is not None:  # nodes in maintenance during its run
                down = [n for n in C.mnodes if self._in_maintenance(j, np.array([n])) is not None]
                if down:
                    free = free.copy()
                    free[down] = 0
                    total = None
            test = self._kernel("fits")
        else:  # the caller's array may differ in layout or flags: numba's dispatch decides
            free = np.ascontiguousarray(free, dtype=np.int64)
            test = api.fits
        if total is None:
            total = free.sum(axis=0)
        row = C.jobs[j]
        cls = int(row[J_CLASS])
        return bool(test(free, total, row[J_UNITS], row[J_REQ : J_REQ + N_RES], row[J_REQ_NODES], *self._fit_work,
                         C.elig[cls], cls != 0))

    def jitted_pass(self) -> None:
        """Run one pass of the jitted scheduler this Simulation was built with at this
        decision point (to step through a jitted replay, e.g. to check invariants between
        passes)."""
        if self.scheduler is None:
            raise UsageError("create the Simulation with scheduler=NAME to step a jitted scheduler")
        self._make_room()  # the scheduler's arrays get room as in a jitted replay
        before = int(self.core.scal[C_STARTED])
        api.pass_at(self.core, self.pred, self.sched, self.alloc, self.now)
        self._started_in_pass += int(self.core.scal[C_STARTED]) - before

    def end_pass(self) -> None:
        """Close the decision point: record the timeline row."""
        api.record(self.core.timeline, self.core.scal, self.now)
        self.passes += 1

    def skip_idle_ticks(self) -> int | None:
        """In the periodic mode (``period`` > 0), after a decision point that started
        nothing: go on at the first period instant at or after the next arrival, end or
        (while jobs wait) maintenance-window end, instead of at every tick up to it.  Only
        for a policy whose answer depends on the queue, the running jobs and the free
        nodes alone, not on the time or its own history: the skipped decision points would
        have started nothing.  Returns the next decision instant, or None when the tick was
        dropped because no event is left (the queued jobs would wait forever) or nothing
        moved."""
        t = int(self._kernel("skip")(self.core))
        return t if t >= 0 else None

    @property
    def stuck(self) -> bool:
        """Nothing runs, nothing will arrive, no maintenance window is still to end, and
        the last pass started nothing: the queued jobs would wait forever."""
        C = self.core
        return (
            self._started_in_pass == 0
            and C.scal[C_RN] == 0
            and C.scal[C_QN] > 0
            and C.scal[C_NEXT] >= C.jobs.shape[0]
            and not np.any(C.heap[: C.scal[C_HN], 0] % 4 != _TICK)
            and not np.any(C.mends > (self.now if self.now is not None else -1))  # nodes come back later
        )

    # -- whole runs ---------------------------------------------------------------------

    def run(self, policy: Policy, name: str = "python", progress=None) -> ReplayResult:
        """Replay to the end with ``policy``; queued jobs it never starts are reported
        as ``not_started``.  In the periodic mode, a policy with a true
        ``waits_for_events`` attribute is not asked again after a decision point where it
        started nothing until something happens (:meth:`skip_idle_ticks`): same schedule,
        fewer decision points (and timeline rows).  ``progress``: None shows a bar over
        simulated time (from the first to the last submission) on stderr when it is a
        terminal, a line every 30 s when it is not (:mod:`schedbench.engine.progress`); False
        nothing; a callable ``progress(now, started)`` is called after every decision pass
        instead."""
        t0 = time.perf_counter()
        report, bar = self._progress_hook(progress)
        stuck_passes = 0
        while self.advance() is not None:
            for start in policy.decide(self.view()) or ():
                if isinstance(start, tuple | list):
                    self.start(*start)
                else:
                    self.start(start)
            self.end_pass()
            if report is not None:
                report(self.now, self.started)
            if self.stuck:
                # a policy whose state just changed (waits_for_events false: a window
                # halved after a solver limit) may start something at the next tick
                stuck_passes += 1
                if getattr(policy, "waits_for_events", None) is not False or stuck_passes > 64:
                    break
            else:
                stuck_passes = 0
            if self.period > 0 and self._started_in_pass == 0 and getattr(policy, "waits_for_events", False):
                self.skip_idle_ticks()
        if bar is not None:
            bar.close()
        simulate_s = time.perf_counter() - t0
        prov = {**self._provenance, "scheduler": name}
        res = result(
            self.core, self.status, self.table, self.machine, name, self.allocator,
            self.predictor, simulate_s, self.passes, prov,
        )
        report = getattr(policy, "report", None)
        if report is not None:
            summary, tables = report()
            res = res._replace(policy=summary, tables=tables)
        return res

    def _progress_hook(self, progress):
        """``(report(now, started) or None, bar to close or None)`` for :meth:`run`."""
        if progress is False or self.table.n_jobs == 0:
            return None, None
        if callable(progress):
            return progress, None
        from .progress import Progress

        first, last = int(self.table.submit.min()), int(self.table.submit.max())
        bar = Progress(last - first, "s of the submission span simulated", "s", "simulate")
        return (lambda now, started: bar.update(now - first)), bar

    @property
    def started(self) -> int:
        return int(self.core.scal[C_STARTED])
