"""Replay a job table on a machine with a registered ``scheduler+allocator`` pair.

:func:`replay` runs the core's replay loop compiled for a jitted scheduler
(:mod:`schedbench.core.loop`) or, for a Python policy,
:class:`schedbench.engine.simulation.Simulation`; either way it returns a
:class:`schedbench.engine.prepare.ReplayResult`.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from .. import core, registry
from ..errors import UsageError
from ..io.jobs import JobTable, digest
from ..io.machine import Machine
from .prepare import STATUS_NAMES, ReplayResult, Status, build, provenance, result

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
    event instant; None: the scheduler's default, 5 s for ipsched and aucsched, else 0); ``meta``: the workload's metadata (queue names and limits);
    ``options`` (and keyword arguments): scheduler and allocator options by name, e.g.
    ``critical=("gpus",)``, ``priority_bound=5``.  ``progress``, if given, is called with
    the number of started jobs from time to time.  ``site``: site policies, a
    :class:`schedbench.plan.site.Site` or the path of a site file (see that module: limits,
    FreePools and kept GPU-node cores act on the ``conservative`` plan; maintenance
    windows too, and other schedulers refuse them for now)."""
    sched = registry.scheduler(scheduler)
    alloc = registry.allocator(allocator)
    sched_opts, alloc_opts = registry.split_options(sched, alloc, {**(options or {}), **more_options})
    if period is None:
        period = sched.default_period
    planning = False
    if site is not None:
        from ..plan import (
            site as site_mod,  # here: its dataclasses cost every command's start-up 7 ms
        )

        if not isinstance(site, site_mod.Site):
            site = site_mod.load(site)
        planning = scheduler in site_mod.PLANNING_SCHEDULERS
        if site.plan_only and not planning:
            raise UsageError(
                f"limits, FreePools and kept GPU-node cores act on a plan: use them with "
                f"{', '.join(site_mod.PLANNING_SCHEDULERS)}, not {scheduler} (maintenance windows bind every "
                "jitted scheduler)"
            )
    if sched.kind is registry.Kind.PYTHON:
        prov = provenance(table, machine, scheduler, allocator, predictor, period, sched_opts, alloc_opts, site=site)
        from .simulation import Simulation

        sim = Simulation(table, machine, allocator=allocator, predictor=predictor, period=period, meta=meta,
                         options=alloc_opts, site=site)
        policy = sched.load()(sim, **sched_opts)
        res = sim.run(policy, name=scheduler,
                      progress=False if progress is None else (lambda now, started: progress(started)))
        return res._replace(options=prov)
    if period < 0:
        raise UsageError("the decision period must be >= 0 seconds")
    # The input's digest (SHA-256 of every column; hashlib releases the GIL) is computed in
    # a second thread while this one builds the run, and before the timed simulation.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="schedbench-digest") as pool:
        input_digest = pool.submit(digest, table)
        prep = build(table, machine, alloc, alloc_opts, predictor, meta=meta, site=site)
        jitted = sched.load()(prep.setup, **sched_opts)
        arrays = prep.setup.site
        windows = None
        if arrays is not None and not planning:
            windows = (arrays.mspan, arrays.mwin)  # the core hides them (a planner books around them)
        c = core.new_core(prep.setup.jobs, machine.capacity, period=period, queue_order=jitted.queue_order,
                          maintenance=windows)
        core.arm(c)
        args = (c, prep.pred, jitted.state, prep.alloc)
        core.loop_for(jitted.state).compile(tuple(numba.typeof(a) for a in (*args, 1)))  # load or compile, untimed
        prov = provenance(table, machine, scheduler, allocator, predictor, period, sched_opts, alloc_opts,
                          input_digest.result(), site)
    t0 = time.perf_counter()
    c, passes = core.run(c, prep.pred, jitted.state, prep.alloc, progress,
                         chunk=100_000 if progress else 1 << 62, grow=jitted.grow)
    simulate_s = time.perf_counter() - t0
    return result(c, prep.status, table, machine, scheduler, allocator, predictor, simulate_s, passes, prov)
