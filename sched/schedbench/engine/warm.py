"""Compiling a replay's loop ahead of its replay: the set-up of a run, then its loop compiled
(or loaded from numba's cache) for that run's types, without replaying anything.

A jitted replay runs one compiled loop per scheduler state class, specialised on the types
of the run's core, predictor, scheduler and allocator states
(:func:`schedbench.core.loop_for`).  Those types follow from the scheduler, the allocator,
the predictor, the options and the workload's shape: a scheduler's factory builds a pool
state when every job is single units of one type spread freely, a per-node state
otherwise.  Two shapes cover the built-in workloads, the *modes*: ``pool`` (an SWF log such
as KTH-SP2: jobs are processor counts) and ``nodes`` (the generated heterogeneous
workloads of ``make bench``: CPU, GPU and MIC jobs on typed nodes).  :func:`mode_input` is a
tiny workload of each, whose runs take the same types as the real ones.

:func:`ready` is what :func:`schedbench.engine.replay.replay` does up to its first event:
:func:`schedbench.engine.prepare.start_run`, then the loop's compile for the run's types
(:func:`loop_and_signature`, which the replay calls too).  The compile is made
under a lock of numba's cache folder keyed on the loop and its signature: a second
process asking for the same loop waits for the first and loads its result from the cache.
"""

from __future__ import annotations

import os
import tempfile
import time
from functools import cache

import numba
import numpy as np
from numba.core import event

from .. import core
from .._jit import compile_lock
from ..io.jobs import JobTable
from ..io.machine import Machine
from .prepare import start_run

MODES: tuple[str, ...] = ("pool", "nodes")

# A pool workload as `schedbench replay LOG.swf` reads it (the parser's kernels compile with
# it): jobs of 1 to 4 processors on a 4-processor machine, two users, two queues.
_TINY_SWF = """\
; MaxProcs: 4
; UnixStartTime: 0
1 0 -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1
2 0 -1 30 4 -1 -1 4 40 -1 1 2 1 -1 1 -1 -1 -1
3 5 -1 50 2 -1 -1 2 20 -1 1 1 1 -1 2 -1 -1 -1
5 9 -1 15 3 -1 -1 3 60 -1 1 2 1 -1 1 -1 -1 -1
"""

_NODES_JOBS = 48  # enough for every class (CPU, GPU, MIC) of the Eurora-like generator


@cache
def mode_input(mode: str) -> tuple[JobTable, Machine, dict]:
    """(table, machine, meta) of a tiny workload of ``mode`` ("pool" or "nodes", see the
    module docstring), built once per process."""
    if mode == "pool":
        from ..io.load import load

        with tempfile.TemporaryDirectory(prefix="schedbench-warm-") as tmp:
            path = os.path.join(tmp, "tiny.swf")
            with open(path, "w") as fh:
                fh.write(_TINY_SWF)
            table, machine, meta, _ = load(path)
        return table, machine, meta
    if mode == "nodes":
        from ..io.machine import from_spec
        from ..workloads import eurora_like

        table, meta = eurora_like.generate(_NODES_JOBS, np.random.default_rng(1), load=0.9)
        return table, from_spec(eurora_like.MACHINE_SPEC), meta
    raise ValueError(f"mode {mode!r}: choose from {', '.join(MODES)}")


def loop_and_signature(run) -> tuple[object, tuple]:
    """The loop :func:`schedbench.engine.replay.replay` runs for ``run`` (a
    :class:`schedbench.engine.prepare.Run` of a jitted scheduler) and the argument types it
    is compiled for."""
    args = (run.core, run.pred, run.sched, run.alloc)
    return core.loop_for(run.sched, run.pred, run.alloc), tuple(numba.typeof(a) for a in (*args, 1, 1))


_READY: set[str] = set()  # loops compiled or loaded in this process, by name and signature


def ready(table: JobTable, machine: Machine, scheduler: str, allocator: str, predictor: str = "requested", *,
          meta: dict | None = None, options: dict | None = None, period: int | None = None,
          wait: bool = True) -> bool | None:
    """Compile (or load from the cache) the loop a replay of ``table`` on ``machine`` with
    these settings runs; nothing is replayed.  False when this process had it already;
    without ``wait``, None when another process is compiling it (it will be in the cache).
    A pair its capabilities rule out raises :class:`schedbench.registry.Impossible`."""
    run = start_run(table, machine, scheduler, allocator, predictor, meta=meta, options=options, period=period)
    loop, signature = loop_and_signature(run)
    name = f"{loop.py_func.__qualname__}{signature}"
    if name in _READY:
        return False
    with compile_lock(name, wait) as held:
        if not held:
            return None
        core.compile_loop(loop, signature)
    _READY.add(name)
    return True


class CompileTime(event.Listener):
    """Seconds numba spends compiling while installed (outermost compiles only: a compile
    nests those of the kernels it calls): ``with event.install_listener("numba:compile",
    timer := CompileTime()): ...``; loads from the cache count nothing."""

    def __init__(self):
        self.seconds = 0.0
        self.compiles = 0
        self._depth = 0
        self._t0 = 0.0

    def on_start(self, ev):
        if self._depth == 0:
            self._t0 = time.perf_counter()
        self._depth += 1
        self.compiles += 1

    def on_end(self, ev):
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._t0

    def installed(self):
        return event.install_listener("numba:compile", self)
