"""The engine core: jobs, queue, running list, event heap, allocation log, nodes, timeline.

The core replays events (the replay contract, ``docs/reference/replay-contract.md``) and knows no policy:
schedulers, allocators and predictors own namedtuples of their own and plug in through
the hooks of :mod:`schedbench.core.hooks`.  Their kernels use :mod:`schedbench.core.api`.

Every owner keeps its scalars in arrays of its own namedtuple: int64 counters and
totals (``Core.scal``, ``Easy.scal``, ...) and float64 arrays for real-valued weights and
keys (``Weighted.weights``, ``Prb.qkey``, ...); nothing is shared through the core.

Python side: :func:`new_core` builds the state, :func:`arm` pushes its first events and
:func:`run` drives the replay loop (:mod:`schedbench.core.loop`) compiled for a
scheduler to the end.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .heap import Event, event_key
from .layout import J_STATE, JobState
from .loop import cycle_counter, loop_for
from .state import (
    C_DONE,
    C_HN,
    C_LOG,
    C_NEXT,
    C_PERIOD,
    C_SEQ,
    C_STARTED,
    C_TICK0,
    Core,
    QueueOrder,
    grow_log,
    log_room,
    new_core,
)

if TYPE_CHECKING:
    from ..io.jobs import JobTable
    from ..io.machine import Machine


class Setup(NamedTuple):
    """What a scheduler's or an allocator's factory builds its state from: the job table
    (sorted by (submit, id)), the machine, the job matrix (:mod:`schedbench.core.layout`) and
    the workload's metadata (queue names and limits; may be empty); ``site``: the site
    policies' arrays (:class:`schedbench.plan.site.SiteArrays`) or None; ``pool_type``:
    int64 (n,), each job's pool type (:func:`schedbench.core.layout.pool_type`: the one
    resource type of a job made of single units spread freely, else -1), computed once by
    the set-up for every factory; ``elig``: uint8 (k, m) node classes (row
    ``jobs[j, J_CLASS]`` is 1 on the nodes job j may use; None: every job may use every
    node, :mod:`schedbench.plan.eligibility`)."""

    table: JobTable
    machine: Machine
    jobs: np.ndarray
    meta: dict
    site: object = None
    pool_type: np.ndarray | None = None
    elig: np.ndarray | None = None

    @property
    def all_pool(self) -> bool:
        """Whether every job the replay keeps is a pool job (schedulers then plan on the
        machine's totals instead of its nodes)."""
        live = self.jobs[:, J_STATE] != JobState.DROPPED
        return bool(np.all(self.pool_type[live] >= 0))

    @property
    def site_binds_nodes(self) -> bool:
        """Whether the site's rules act on particular nodes (maintenance windows on some
        nodes only, or cores kept on GPU nodes of this machine): a plan must then book
        nodes, even for pool jobs.  Windows on every node alike bind no node: they only
        rule out times (a pool plan books around them)."""
        s = self.site
        return s is not None and bool(s.windows_per_node or (s.gpu_node_cores and (self.machine.capacity[:, 1] > 0).any()))


class JittedScheduler(NamedTuple):
    """What a jitted scheduler's factory returns: its ``state`` (a namedtuple whose class
    implements :func:`schedbench.core.hooks.schedule`; the core's replay loop,
    :mod:`schedbench.core.loop`, runs it) and the ``queue_order`` (:class:`QueueOrder`)
    the core must keep.  A scheduler whose arrays can fill up implements
    :func:`schedbench.core.hooks.sched_has_room` and gives ``grow(state, core)``: the
    loop returns when they might fill, and :func:`run` calls ``grow`` to enlarge them
    before calling the loop again (:class:`schedbench.engine.simulation.Simulation` calls
    it before every pass it steps).  ``grow`` returns None when it changed nothing or
    enlarged arrays in place, else a state of the same class holding the new arrays, which
    the replay goes on with.  ``options``: the values of its options the
    factory resolved (from defaults or the input), recorded in the run's provenance in
    place of what was given; None when they are what was given."""

    state: Any
    queue_order: int = QueueOrder.FIFO
    grow: Any = None
    options: dict | None = None


def arm(core: Core) -> None:
    """Set the first events of a fresh core: the first arrival (scal[C_NEXT]; arrivals
    are read from the job matrix, never pushed, except those of jobs released by their
    predecessor's end) and, in the periodic mode, the first tick (at that arrival's
    instant, so after it by rank)."""
    J, heap, scal = core.jobs, core.heap, core.scal
    live = np.flatnonzero(J[:, J_STATE] == JobState.PENDING)  # BLOCKED jobs arrive when released
    if live.size == 0:
        scal[C_NEXT] = J.shape[0]
        return
    scal[C_NEXT] = int(live[0])
    if scal[C_PERIOD] > 0:
        heap[0] = (event_key(scal[C_TICK0], Event.TICK), 0, -1)
    scal[C_HN] = scal[C_SEQ] = 1 if scal[C_PERIOD] > 0 else 0


RETURN_EVERY_S = 0.5
"""Wall-clock seconds the replay loop runs between two returns to Python (see :func:`run`)."""

_FIRST_CHUNK = 64  # passes of the first call: its time sizes the next ones
_MAX_GROWTH = 8  # a chunk is at most this many times its predecessor (passes can get slower)
_CALIBRATION_S = 0.05  # wall time over which the cycle counter's rate is measured


def next_chunk(chunk: int, passes: int, elapsed_s: float, return_every_s: float) -> int:
    """The passes of the loop's next call, so that it lasts about ``return_every_s``: the
    last call ran ``passes`` (of ``chunk`` asked) in ``elapsed_s``.  Grows at most
    :data:`_MAX_GROWTH`-fold a call, shrinks at once (a pass can be slow: a conservative
    rebooking of a long queue), never below one pass."""
    if passes <= 0:
        return chunk  # an early return for room: nothing learnt
    per_pass = elapsed_s / passes
    if per_pass <= 0:
        return min(chunk * _MAX_GROWTH, 1 << 62)
    return max(1, min(int(return_every_s / per_pass), chunk * _MAX_GROWTH, 1 << 62))


def compile_loop(loop, signature: tuple) -> None:
    """Compile (or load from numba's cache) ``loop`` for ``signature``, and the clock
    :func:`run` reads between the loop's calls: everything a replay compiles, done before
    its timing starts.  (The clock was once left to :func:`run`'s first call: on a cold
    cache the first replay's ``simulate_s`` then held its compile, about 0.05 s.)"""
    loop.compile(signature)
    cycle_counter()


def run(core: Core, pred, sched, alloc, progress=None, return_every_s: float | None = RETURN_EVERY_S,
        grow=None, clock=time.perf_counter) -> tuple[Core, int]:
    """Replay to the end with the core's loop compiled for ``sched``
    (:func:`schedbench.core.loop.loop_for`); returns the core (its allocation log may
    have been replaced by a larger one) and the passes run.

    The loop returns to Python about every ``return_every_s`` of wall time (None: only
    when it must, to grow arrays).  A pass can cost microseconds or, with a long queue,
    a thousand times more, so the loop itself reads a clock: it stops after the pass at
    which the CPU's cycle counter (:func:`schedbench.core.loop.cycle_counter`) reaches a
    deadline; the counter's rate is measured against ``clock`` over the first calls
    (0.05 s), which are limited in passes instead (:func:`next_chunk`, starting small; also
    the fallback where a CPU has no counter).  A Ctrl-C then raises KeyboardInterrupt here
    within about that time, and ``progress(started_jobs)``, if given, is called after
    every call.  Chunking only splits the one loop, which resumes from the core's state:
    no clock reading can change a schedule.  ``grow`` is the scheduler's (see
    :class:`JittedScheduler`)."""
    loop = loop_for(sched, pred, alloc)
    total = 0
    chunk = 1 << 62 if return_every_s is None else _FIRST_CHUNK
    cycles_per_s, seen_cycles, seen_s = 0.0, 0, 0.0
    while True:
        until = 0
        if return_every_s is not None and cycles_per_s > 0:
            until = cycle_counter() + max(int(cycles_per_s * return_every_s), 1)
        t0, c0 = clock(), cycle_counter()
        passes = loop(core, pred, sched, alloc, chunk, until)
        elapsed = clock() - t0
        total += passes
        if return_every_s is not None and cycles_per_s == 0:
            seen_cycles += cycle_counter() - c0
            seen_s += elapsed
            chunk = next_chunk(chunk, passes, elapsed, return_every_s)
            if seen_s >= _CALIBRATION_S and seen_cycles > 0:
                cycles_per_s, chunk = seen_cycles / seen_s, 1 << 62  # the deadline rules from now on
        if progress is not None:
            progress(int(core.scal[C_STARTED]))
        if core.scal[C_DONE]:
            if core.log.flags.owndata:  # give back the unused rows (realloc, no copy)
                core.log.resize((max(int(core.scal[C_LOG]), 1), 2), refcheck=False)
            return core, total
        if not log_room(core):
            core = grow_log(core, in_place=True)  # no view of it exists during the loop
        if grow is not None:
            grown = grow(sched, core)
            if grown is not None:  # new arrays in a state of the same class: the same loop
                sched = grown


__all__ = ["Core", "JittedScheduler", "QueueOrder", "Setup", "arm", "compile_loop", "grow_log", "log_room", "loop_for", "new_core", "next_chunk", "run"]
