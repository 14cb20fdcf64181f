"""Conservative backfilling on a plan of resource usage vectors (Keller's OpenCCS; Mu'alem
and Feitelson), exactly as the replay contract says (``docs/reference/replay-contract.md`` §7,
"Conservative backfilling: planning with bookings").

Every queued job holds a booking ``[begin, end)`` in a plan of the future, ``d(j) =
max(pred(j), 1)`` long, and starts exactly when its booking begins.  The plan is one
used-items RUSV (:mod:`schedbench.plan.rusv`) per resource type, Keller's system resource set
(sRS), holding the bookings of every running and every queued job.  At one instant: ends
remove their bookings (one that reached past now is a *release*); expiring bookings of
jobs still running are extended (to start + estimate when that is later, else the elapsed
time doubles); arrivals join the queue; then the pass: after an extension every queued job
is booked again in queue order; else after a release the queue is *compressed* (each job,
in queue order, moves to its earliest fit when that is earlier than its booking); then
each arrival is booked at its earliest fit; then every job whose booking begins now
starts, in queue order.  The scheduler asks the core for a pass at every planned start and
every expiry (:func:`schedbench.core.hooks.sched_wake`), from a min-heap of them with
one entry per job.

Compression prunes jobs that cannot move: a job can start earlier only if at some instant
before its booking at least its size is free, so the largest free amount before each
booking is read from a prefix maximum of the plan, built only as far as the bookings
asked about reach and cut back only to where a booking changed; the search then starts
where that maximum first reaches the job's size.

Two variants, as EASY's: when every job asks for single units of one resource type,
spread freely (every SWF job), and the site binds no node (maintenance windows on every
node alike rule out times only: :func:`.site._constraints_fit`),
:class:`ConservativePool` plans on that type's totals and the allocator picks the nodes
at start; otherwise :class:`ConservativeNodes` books nodes
too (spec: the earliest fit is the first candidate t -- now, then every booking end after
now -- at which the allocator, visiting nodes in its order with each node's free amount
taken as its minimum over [t, t + d), places the job; the job starts on its booked nodes).

Modules: :mod:`.state` (state classes, slots), :mod:`.wake` (the wake heap),
:mod:`.bookings` (bookings on the plan), :mod:`.pruning` (compression's prefix maximum),
:mod:`.site` (site constraints), :mod:`.fit` (the earliest fit), :mod:`.events` (arrivals,
ends, wake instants), :mod:`.scheduling_pass` (the pass), :mod:`.growth` (room on the
plan) and :mod:`.build` (the factory, :func:`conservative`).
"""

from __future__ import annotations

from . import events, scheduling_pass  # noqa: F401 (register the hooks' kernels)
from .build import conservative
from .state import ConservativeNodes, ConservativePool, SitePlan

__all__ = ["ConservativeNodes", "ConservativePool", "SitePlan", "conservative"]
