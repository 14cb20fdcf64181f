"""The engine core: jobs, queue, running list, event heap, allocation log, nodes, timeline.

The core replays events (``../shared/spec/replay-semantics.md``) and knows no policy:
schedulers, allocators and predictors own namedtuples of their own and plug in through
the hooks of :mod:`schedbench.core.hooks`.  Their kernels use :mod:`schedbench.core.api`.

Python side: :func:`new_core` builds the state, :func:`arm` pushes its first events and
:func:`run` drives a scheduler's compiled loop to the end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .state import C_DONE, C_STARTED, Core, QueueOrder, grow_log, log_room, new_core
from .steps import _arm

if TYPE_CHECKING:
    from ..jobs import JobTable
    from ..machine import Machine


class Setup(NamedTuple):
    """What a scheduler's or an allocator's factory builds its state from: the job table
    (sorted by (submit, id)), the machine, the job matrix (:mod:`schedbench.layout`) and
    the workload's metadata (queue names and limits; may be empty)."""

    table: JobTable
    machine: Machine
    jobs: np.ndarray
    meta: dict


class JittedScheduler(NamedTuple):
    """What a jitted scheduler's factory returns: its ``state`` (a namedtuple whose class
    implements :func:`schedbench.core.hooks.schedule`), its compiled ``loop`` (the
    module's ``_run`` kernel, see :func:`schedbench.core.api.replay_loop`) and the
    ``queue_order`` (:class:`QueueOrder`) the core must keep."""

    state: Any
    loop: Any
    queue_order: int = QueueOrder.FIFO


def arm(core: Core) -> None:
    """Push the first events (first arrival, first tick) of a fresh core."""
    _arm(core.jobs, core.heap, core.scal)


def run(loop, core: Core, pred, sched, alloc, progress=None, chunk: int = 1 << 62) -> tuple[Core, int]:
    """Drive ``loop`` (a scheduler's compiled ``_run(core, pred, sched, alloc,
    max_passes)``) to the end of the replay; returns the core (its allocation log may have
    been replaced by a larger one) and the passes run.  With a ``progress(started_jobs)``
    callback, the loop returns to Python every ``chunk`` passes to report."""
    total = 0
    while True:
        total += loop(core, pred, sched, alloc, chunk)
        if progress is not None:
            progress(int(core.scal[C_STARTED]))
        if core.scal[C_DONE]:
            return core, total
        if not log_room(core):
            core = grow_log(core)


__all__ = ["Core", "JittedScheduler", "QueueOrder", "Setup", "arm", "grow_log", "log_room", "new_core", "run"]
