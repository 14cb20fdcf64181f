"""What conservative backfilling does between passes, through the core's hooks: an
arrival joins this instant's arrivals, an end removes the job's booking (a *release*
when it reached past now), and the next wake instant is the wake heap's."""

from __future__ import annotations

from ..._jit import inline_kernel, internal_kernel
from ...core.api import implements, sched_enqueued, sched_released, sched_wake
from .bookings import _book
from .state import (
    B_BEGIN,
    B_END,
    S_EXTENDED,
    S_FREED_NOW,
    S_NARR,
    S_NOW,
    S_RELEASE,
    ConservativeNodes,
    ConservativePool,
)
from .wake import _next_wake


@inline_kernel
def _flags_at(sc, now):
    """Reset the per-instant flags when the instant changed."""
    if sc[S_NOW] != now:
        sc[S_NOW] = now
        sc[S_RELEASE] = 0
        sc[S_EXTENDED] = 0
        sc[S_FREED_NOW] = -1


@internal_kernel
def _enqueued(sched, core, j):
    sc = sched.scal
    sched.arrivals[sc[S_NARR]] = j
    sc[S_NARR] += 1


@internal_kernel
def _released(sched, core, j, now):
    sc = sched.scal
    _flags_at(sc, now)
    begin = sched.book[j, B_BEGIN]
    end = sched.book[j, B_END]
    _book(sched, core, j, begin, end, -1)
    if end > now:
        sc[S_RELEASE] = 1
        sc[S_FREED_NOW] = max(sc[S_FREED_NOW], end)
    sched.book[j, B_BEGIN] = -1
    sched.book[j, B_END] = -1


@internal_kernel
def _wake(sched, core):
    return _next_wake(core.jobs, sched.book, sched.wake, sched.scal)


for _cls in (ConservativePool, ConservativeNodes):
    implements(sched_enqueued, _cls)(_enqueued)
    implements(sched_released, _cls)(_released)
    implements(sched_wake, _cls)(_wake)
del _cls
