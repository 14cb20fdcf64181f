"""The core's kernel API: what schedulers, allocators and :class:`Simulation` may call.

Names here are public aliases of the core's kernels (which stay ``_``-prefixed in their
own modules); nothing else of :mod:`schedbench.core` is meant to be imported from
outside it.  Array shapes and dtypes are those of :class:`Core`; times are seconds.

State and layout
    :class:`Core`, :class:`QueueOrder`, ``C_*`` slots of ``Core.scal``, ``W_*`` rows of
    ``Core.work``; job columns are in :mod:`schedbench.core.layout`.

Hooks (:mod:`schedbench.core.hooks`)
    :func:`implements` registers a kernel for a state class; :func:`schedule` and
    :func:`choose` are required, the others optional.  A jitted scheduler is its state
    class, its pass (``@implements(schedule, State)``), the optional hooks it needs and a
    factory returning :class:`schedbench.core.JittedScheduler`: the core's one replay
    loop (:mod:`schedbench.core.loop`) runs it.

Kernels
    ``advance(core, pred, sched, alloc) -> now``: process events up to the next decision
    point (inline): its time, -1 at the end, -2 when the allocation log needs room.
    ``record(timeline, scal, now)``: the timeline row of a decision point (inline).  The
    core's loop (:mod:`schedbench.core.loop`) calls advance, the ``schedule`` hook and
    record; schedulers call neither (:class:`Simulation` steps them one by one).
    ``try_start(core, alloc, j, now) -> bool``: offer queued job j to the allocator and
    start it if it fits (inline).
    ``commit(core, alloc, j, now, used)``: start job j on the placement in core.work.
    ``fits_now(core, j) -> bool``: whether job j fits on the free nodes now (inline).
    ``mask_maintenance(core, j, now)`` / ``unmask_maintenance(core, alloc, j)``: hide from job j the
    nodes whose maintenance windows meet its predicted run, and give them back
    (``try_start`` does both; a scheduler that tests fits and commits itself brackets
    them, when core.scal[C_MAINT] is set).  ``window_meets(mspan, mwin, node, t, end)``:
    whether a maintenance window of the node meets [t, end) (inline);
    ``first_window_after(mspan, mwin, node, t)``: the row of the node's first window ending
    after t (inline).
    ``fits(free, free_total, units, req, req_nodes, ident, out_node, out_count) -> bool``:
    the same test on any free-resource array (inline).
    ``place(free, order, first, units, req, req_nodes, out_node, out_count) -> used``:
    the spec's allocation rule along a node order.
    ``place_in_order(core, order, first, j) -> used``: :func:`place` job j on the free
    nodes into core.work (inline).
    ``host(free, node, req) -> units`` a node can host (inline).
    ``totals_decide(units, req, req_nodes, free_total) -> 0 | 1 | -1``: whether free totals
    alone prove a job does not fit (0), fits (1), or cannot tell (-1) (inline).
    ``queue_tidy(jobs, queue, scal) -> j or -1``: the queue's head, skipping started jobs
    (inline); ``queue_compact(jobs, queue, scal)``: drop the holes of started jobs.
    ``argsort_stable(key, order, tmp)``: a stable argsort that allocates nothing;
    ``sort_in_place(a, m)``: sort the int64 a[:m] in place, allocating nothing.

For :class:`schedbench.engine.simulation.Simulation` (called from Python)
    ``advance``; ``pass_at(core, pred, sched, alloc, now)``; ``start_from_policy(core,
    sched, alloc, j, now, used) -> bool``; ``record``; ``queue_tidy``;
    ``skip_idle_ticks(core) -> t``: move the periodic tick past decision points where
    nothing can change.
"""

from .hooks import (
    OrderReads,
    alloc_committed,
    alloc_enqueued,
    alloc_released,
    attempt_failed,
    attempt_succeeded,
    choose,
    counts_attempts,
    implements,
    learn,
    plan_order,
    plan_order_reads,
    predict,
    reads_queue_order,
    sched_enqueued,
    sched_has_room,
    sched_released,
    sched_started_outside,
    sched_wake,
    schedule,
)
from .placement import _fits as fits
from .placement import _fits_now as fits_now
from .placement import _host as host
from .placement import _place as place
from .placement import _place_in_order as place_in_order
from .placement import _totals_decide as totals_decide
from .queue import _queue_compact as queue_compact
from .queue import _queue_tidy as queue_tidy
from .sort import _argsort_stable as argsort_stable
from .sort import _heapsort as sort_in_place
from .state import (
    C_CAP,
    C_ENDED,
    C_FREE,
    C_MAINT,
    C_NEXT,
    C_QH,
    C_QN,
    C_QSPAN,
    C_REVISED,
    C_RN,
    C_STARTED,
    W_COUNT,
    W_COUNT2,
    W_IDENT,
    W_NODE,
    W_NODE2,
    Core,
    QueueOrder,
)
from .steps import _advance as advance
from .steps import _arrivals_left as arrivals_left
from .steps import _commit_placed as commit
from .steps import _first_window_after as first_window_after
from .steps import _mask as mask_maintenance
from .steps import _pass_at as pass_at
from .steps import _record as record
from .steps import _skip_idle_ticks as skip_idle_ticks
from .steps import _start_from_policy as start_from_policy
from .steps import _try_start as try_start
from .steps import _unmask as unmask_maintenance
from .steps import _window_meets as window_meets

__all__ = [
    "C_CAP", "C_ENDED", "C_FREE", "C_MAINT", "C_NEXT", "C_QH", "C_QN", "C_QSPAN", "C_REVISED", "C_RN", "C_STARTED",
    "W_COUNT", "W_COUNT2", "W_IDENT", "W_NODE", "W_NODE2", "Core", "QueueOrder",
    "advance", "alloc_committed", "alloc_enqueued", "alloc_released", "argsort_stable", "arrivals_left",
    "attempt_failed", "attempt_succeeded", "choose", "commit", "counts_attempts", "first_window_after", "fits", "fits_now", "host",
    "implements", "learn", "pass_at", "plan_order", "plan_order_reads", "OrderReads", "predict", "place", "place_in_order", "queue_compact",
    "queue_tidy", "reads_queue_order", "record", "sched_enqueued", "sched_has_room", "sched_released", "sched_started_outside", "sched_wake",
    "schedule", "skip_idle_ticks", "sort_in_place", "start_from_policy", "totals_decide", "try_start", "mask_maintenance", "unmask_maintenance", "window_meets",
]
