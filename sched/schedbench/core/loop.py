"""The replay loop: advance to the next decision point, the scheduler's pass, the timeline.

Every jitted scheduler runs this one loop; it reaches the scheduler only through the
hooks :func:`schedbench.core.hooks.schedule` (the pass, inlined into the loop like the
core's steps, see :mod:`schedbench._jit`) and :func:`schedbench.core.hooks.sched_has_room`
(whether its arrays can take another pass; a scheduler that never fills them leaves it
out and the test folds away).

One source, one compiled and cached dispatcher per scheduler module
(:func:`loop_for`).  A single dispatcher would keep every scheduler's signature in one
numba cache index, and loading that index unpickles, hence imports, the state class of
every scheduler ever replayed with this cache (about 40 ms of modules for a replay that
needs only EASY), and drops the whole index (every scheduler recompiles) when one of
those classes cannot be imported, as a test's plug-in cannot from the command line.
"""

from __future__ import annotations

import types

from .._jit import kernel
from .hooks import sched_has_room, schedule
from .steps import _advance, _record


def _run(core, pred, sched, alloc, max_passes):
    """Replay from the core's current state: up to ``max_passes`` decision points, each
    an advance, the scheduler's pass and its timeline row; returns the passes run.  It
    returns early at the end of the replay (core.scal[C_DONE] set), when the allocation
    log needs room (:func:`schedbench.core.steps._advance` returns -2) and when the
    scheduler's arrays do (:func:`schedbench.core.hooks.sched_has_room`): the Python
    side (:func:`schedbench.core.run`) grows them and calls again."""
    passes = 0
    while passes < max_passes and sched_has_room(sched, core):
        now = _advance(core, pred, sched, alloc)
        if now < 0:
            break
        schedule(sched, core, pred, alloc, now)
        _record(core.timeline, core.scal, now)
        passes += 1
    return passes


_LOOPS: dict[str, object] = {}


def loop_for(sched):
    """The compiled replay loop for the scheduler state ``sched``: :func:`_run`, as a
    dispatcher of its own (own cache index) for the module that defines the state's
    class."""
    module = type(sched).__module__
    loop = _LOOPS.get(module)
    if loop is None:
        func = types.FunctionType(_run.__code__, _run.__globals__, _run.__name__)
        # numba names the cache index after the qualname: one index per scheduler module
        func.__qualname__ = f"_run_for_{module.replace('.', '_')}"
        func.__doc__ = _run.__doc__
        loop = _LOOPS[module] = kernel(func)
    return loop
