"""EASY backfilling as the AccaSim simulator runs it (``ebf-accasim``): the EBF of Netti et
al.'s experiments, from the authors' code rather than the paper's text.

The paper (§2) describes EBF as EASY backfilling: jobs behind a blocked head start only
where they do not delay the head's reservation.  That is :mod:`.easy`.  AccaSim's
``EASYBackfilling`` dispatcher, which the authors ran, behaves differently in three ways,
all reproduced here:

1. **The reservation is computed once per blocked job** (AccaSim keeps ``_reserved_slot``
   until the blocked job starts): the shadow time is the predicted end at which the head
   would fit, releasing running jobs in (predicted end, index) order as EASY does, computed
   on the pass where the job first blocks and never revised, even when jobs end early.
2. **The blocked job is retried only once its reserved time has come** (``reserved time
   <= now``): before that it waits even if it would fit.
3. **Backfill does not protect the reservation**: the backfill call passes
   ``reserved_nodes=[]`` to the allocator, so every queued job behind the blocked one
   (queue order, FIFO) that fits now starts, whatever its predicted run (greedy backfill).

Each pass at ``now``:

* if a job is blocked and its reserved time is ``<= now``, offer it to the allocator;
  if it starts, nothing is blocked any more;
* if nothing is blocked, start jobs in queue order while they fit; the first that does
  not fit becomes the blocked job and gets its reserved time (as above, ``now`` when only
  a maintenance window keeps it out); then offer every queued job behind it once;
* otherwise offer every queued job but the blocked one once, in queue order.

AccaSim's clock visits only event instants (arrivals, ends) while any remain, so a
reserved time between two of them is noticed at the next; once none remain it moves one
second at a time.  Here likewise: a blocked job's reserved time is a decision instant
only when nothing runs and nothing is left to arrive (no job read from the trace later, and
none that a predecessor's end released for later, after its think time), and then at the
earliest one second after the last pass.

Where AccaSim computes predicted ends as start + expected duration even for a job that
already outlived it, the shadow time here is at least ``now`` (the engine's predicted end
is max(start + pred, now)): in both, a reservation in the past means the job is retried at
the next pass.  The oracle is rule R7c of ``tests/naive.py``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import inline_kernel, internal_kernel
from ..core import JittedScheduler
from ..core.api import (
    C_FREE,
    C_MAINT,
    C_QH,
    C_QSPAN,
    C_RN,
    arrivals_left,
    counts_attempts,
    implements,
    sched_wake,
    schedule,
    try_start,
)
from ..core.layout import J_STATE, N_RES, JobState, pool_type
from .easy import N_ESCAL, _shadow_nodes, _shadow_pool
from .inorder import _start_in_order

# Slots of EbfAccasim.held, int64 (3,)
H_BLOCKED = 0  # the blocked job's index, -1 when none
H_RESERVED = 1  # its reserved time, s
H_LAST = 2  # the last pass's instant, s


class EbfAccasim(NamedTuple):
    """held int64 (3,): the blocked job, its reserved time and the last pass (H_* slots); scratch int64
    (m, 4) and scal int64 (N_ESCAL,): the shadow-time work space that
    :func:`schedbench.schedulers.easy._shadow_nodes` fills (free resources per node at the
    shadow time and their totals)."""

    held: np.ndarray
    scratch: np.ndarray
    scal: np.ndarray


def ebf_accasim(setup) -> JittedScheduler:
    return JittedScheduler(EbfAccasim(
        held=np.array([-1, 0, 0], dtype=np.int64),
        scratch=np.empty((setup.machine.n_nodes, N_RES), np.int64),
        scal=np.zeros(N_ESCAL, dtype=np.int64),
    ))


@inline_kernel
def _reserved_time(sched, core, head, now):
    """The blocked ``head``'s reserved time, s: EASY's shadow time (on the free totals when
    the head is made of single units of one type and no maintenance window hides nodes)."""
    kind = np.int64(pool_type(core.jobs, head))  # not a literal: one compiled version
    if kind >= 0 and core.scal[C_MAINT] == 0:
        shadow, _ = _shadow_pool(core, head, now, kind)
        return shadow
    return _shadow_nodes(sched, core, head, now)


@internal_kernel
def _offer_all_but(core, alloc, now, blocked):
    """Offer every queued job but ``blocked`` once, in queue order; start those that fit
    (AccaSim's allocator with ``skip=True`` and no reserved nodes).  Unless the allocator
    counts every attempt (Priority-Weighted), stops once no core, GPU or MIC is free: every
    job asks for one of them, so the rest would all fail."""
    jobs = core.jobs
    scal = core.scal
    queue = core.queue
    every = counts_attempts(alloc)
    for r in range(scal[C_QH], scal[C_QH] + scal[C_QSPAN]):
        if not every and scal[C_FREE] == 0 and scal[C_FREE + 1] == 0 and scal[C_FREE + 2] == 0:
            break
        j = queue[r]
        if j != blocked and jobs[j, J_STATE] == JobState.QUEUED:
            try_start(core, alloc, j, now)


@internal_kernel
def _retry_blocked(core, alloc, now, held):
    """Offer the blocked job (held[H_BLOCKED]) once its reserved time has come; unset it
    when it starts (or started outside a pass)."""
    b = held[H_BLOCKED]
    if core.jobs[b, J_STATE] != JobState.QUEUED or (held[H_RESERVED] <= now and try_start(core, alloc, b, now)):
        held[H_BLOCKED] = -1


@implements(schedule, EbfAccasim)
@inline_kernel
def _pass(sched, core, pred, alloc, now):
    """schedule() for ebf-accasim.  The blocked job's retry, the in-order starts and the
    greedy backfill each hold one inlined copy of try_start (numba mis-scopes the
    variables of two copies inlined into one function)."""
    held = sched.held
    held[H_LAST] = now
    if held[H_BLOCKED] >= 0:
        _retry_blocked(core, alloc, now, held)
    if held[H_BLOCKED] < 0:
        head = _start_in_order(core, alloc, now)
        if head < 0:
            return
        held[H_BLOCKED] = head
        held[H_RESERVED] = _reserved_time(sched, core, head, now)
    _offer_all_but(core, alloc, now, held[H_BLOCKED])


@implements(sched_wake, EbfAccasim)
@inline_kernel
def _wake(sched, core):
    """The blocked job's reserved time (at least a second after the last pass) once no job
    runs and none is left to arrive (AccaSim's one-second steps); else none."""
    held = sched.held
    if held[H_BLOCKED] < 0 or core.scal[C_RN] > 0 or arrivals_left(core.jobs, core.heap, core.scal):
        return -1
    return max(held[H_RESERVED], held[H_LAST] + 1)
