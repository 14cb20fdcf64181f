"""Replay a job table on a machine with a registered ``scheduler+allocator`` pair.

:func:`replay` runs the core's replay loop compiled for a jitted scheduler
(:mod:`schedbench.core.loop`) or, for a Python policy,
:class:`schedbench.engine.simulation.Simulation`; either way it returns a
:class:`schedbench.engine.prepare.ReplayResult`.
"""

from __future__ import annotations

import time

import numpy as np

from .. import core, registry
from ..io.jobs import JobTable
from ..io.machine import Machine
from .prepare import STATUS_NAMES, ReplayResult, Status, provenance, result, start_run
from .warm import loop_and_signature

__all__ = ["STATUS_NAMES", "ReplayResult", "Status", "provenance", "replay", "warm_up"]


_WARM: set[tuple[str, str]] = set()


def warm_up(scheduler: str = "easy", allocator: str = "ff") -> None:
    """Compile (or load from numba's cache) the loop of ``scheduler+allocator``, so that
    timings measure the replay and not the compiler."""
    if (scheduler, allocator) in _WARM:
        return
    from ..io.jobs import from_columns
    from ..io.machine import from_spec

    tiny = from_columns(submit=np.array([0, 0]), run=np.array([1, 0]), procs_req=np.array([1, 2]))
    replay(tiny, from_spec("2x(cores=1)"), scheduler, allocator)  # replay() compiles first
    _WARM.add((scheduler, allocator))


def replay(
    table: JobTable,
    machine: Machine,
    scheduler: str = "easy",
    allocator: str = "ff",
    predictor: str = "requested",
    *,
    period: int | None = None,
    meta: dict | None = None,
    options: dict | None = None,
    progress=None,
    site=None,
    **more_options,
) -> ReplayResult:
    """Replay ``table`` (sorted by (submit, job_id)) on ``machine`` with a registered
    ``scheduler+allocator`` pair.  ``period``: decide every so many seconds (0: at every
    event instant; None: the scheduler's default, 5 s for ipsched and aucsched, else 0);
    ``meta``: the workload's metadata (queue names and limits); ``options`` (and keyword
    arguments): scheduler and allocator options by name, e.g. ``critical=("gpus",)``,
    ``priority_bound=5``.  ``progress``, if given, is called with the number of started
    jobs from time to time.  ``site``: site policies, a :class:`schedbench.plan.site.Site`
    or the path of a site file (limits, FreePools and kept GPU-node cores act on a planning
    scheduler's plan, maintenance windows on every jitted scheduler).  A pair its
    capabilities rule out (:func:`schedbench.registry.check_pair`) is a usage error before
    any replay work.  The set-up is :func:`schedbench.engine.prepare.start_run`."""
    options = {**(options or {}), **more_options}
    if registry.scheduler(scheduler).kind is registry.Kind.PYTHON:
        from .simulation import Simulation

        run = start_run(table, machine, scheduler, allocator, predictor, period=period, meta=meta,
                        options=options, site=site)
        sim = Simulation.of(run)
        policy = registry.scheduler(scheduler).load()(sim.context(), **run.sched_options)
        return sim.run(policy, name=scheduler,
                       progress=False if progress is None else (lambda now, started: progress(started)))
    run = start_run(table, machine, scheduler, allocator, predictor, period=period, meta=meta, options=options,
                    site=site)
    args = (run.core, run.pred, run.sched, run.alloc)
    core.compile_loop(*loop_and_signature(run))  # load or compile, untimed
    t0 = time.perf_counter()
    # the loop returns to Python every ~0.5 s (core.RETURN_EVERY_S), progress or not: a Ctrl-C
    # stops the replay then, not at its end
    c, passes = core.run(*args, progress, return_every_s=core.RETURN_EVERY_S, grow=run.jitted.grow)
    simulate_s = time.perf_counter() - t0
    return result(c, run.status, table, machine, scheduler, allocator, predictor, simulate_s, passes,
                  run.provenance)
