"""FCFS and SJF (the replay contract, ``docs/reference/replay-contract.md`` §4, "The queue and the three base policies").

* **fcfs**: start queued jobs in queue order ((submit, id)) while the next one fits; stop
  at the first that does not fit.
* **sjf**: the same over the queue in (pred, submit, id) order, as in AccaSim (which Netti
  et al. used); backfilling variants are separate schedulers.

The two differ only in the queue order, which the core keeps on insertion
(:class:`schedbench.core.QueueOrder`).  :func:`_start_in_order` is also the first step of
EASY and PRB.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import inline_kernel
from ..core import JittedScheduler, QueueOrder
from ..core.api import implements, queue_tidy, schedule, try_start


class InOrder(NamedTuple):
    """order int64 (1,): the QueueOrder the core keeps (informational: the pass is the
    same for both)."""

    order: np.ndarray


@inline_kernel
def _start_in_order(core, alloc, now):
    """Start queued jobs in queue order while the next fits; returns the first job that
    does not fit, or -1 when the queue emptied."""
    while True:
        j = queue_tidy(core.jobs, core.queue, core.scal)
        if j < 0:
            return -1
        if not try_start(core, alloc, j, now):
            return j


@implements(schedule, InOrder)
@inline_kernel
def _pass(sched, core, pred, alloc, now):
    _start_in_order(core, alloc, now)


def _build(order: int) -> JittedScheduler:
    return JittedScheduler(InOrder(np.array([order], dtype=np.int64)), order)


def fcfs(setup) -> JittedScheduler:
    return _build(QueueOrder.FIFO)


def sjf(setup) -> JittedScheduler:
    return _build(QueueOrder.PRED)
