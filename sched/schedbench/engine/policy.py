"""The Python policy protocol: what a policy is given, what it sees, and what it answers.

A policy is registered with :func:`schedbench.registry.register_scheduler` (``kind="python"``)
under a factory ``factory(context: PolicyContext, **options) -> Policy``; the engine
(:class:`schedbench.engine.simulation.Simulation`) calls ``policy.decide(view)`` at every
decision point and applies the :class:`Start` items it answers, in order.

What a policy can reach is what a real scheduler knows: the machine, the queue, the
running jobs with their start times and nodes, the free resources of every node, each
job's request, estimate and prediction, and the run's allocator (its placement as a
call).  The job table, and so the jobs' actual run times, is not part of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

from .._jit import kernel
from ..core.api import plan_order
from ..errors import SchedbenchError

if TYPE_CHECKING:
    from ..io.machine import Machine


class PolicyError(SchedbenchError):
    """A policy asked for something impossible (a job that is not queued, a placement
    that does not fit)."""


class Start(NamedTuple):
    """One start a policy asks for: queued job index ``job`` on the allocator's nodes
    (``nodes`` None), or ``counts[i]`` units on node ``nodes[i]`` (int arrays of equal
    length).  A bare job index, or a ``(job, nodes, counts)`` tuple, means the same."""

    job: int
    nodes: np.ndarray | None = None
    counts: np.ndarray | None = None


class View(NamedTuple):
    """What a policy sees at a decision point.  Arrays are read-only; job arrays are
    indexed by job index (row of the job table).

    time: s.  queue: job indices in queue order.  running: running job indices.
    free, capacity: int64 (n_nodes, 4) cores, GPUs, MICs, MiB.  submit (a queued job's
    arrival: its submit time, or with job dependencies the instant its predecessor's end
    released it), start, estimate, pred (s), units, req_nodes, user, group, queue_id, qwait (expected wait of the job's
    queue, s): int64 (n,); request: int64 (n, 4) per unit; contiguous: bool (n,), true when
    the job asks for one block of consecutive nodes.  alloc_start, alloc_count int64 (n,) and alloc_log int32
    (rows, 2): a started job j ran or runs on the (node, units) rows
    ``alloc_log[alloc_start[j] : alloc_start[j] + alloc_count[j]]`` (:meth:`nodes_of`).
    maint_span int64 (n_nodes, 2), maint_windows int64 (w, 2): node i's maintenance
    windows [start, end) are ``maint_windows[maint_span[i, 0] : maint_span[i, 1]]``
    (:meth:`maintenance`; empty without a site).  node_class int64 (n,) and eligible bool
    (k, n_nodes): job j may run only on the nodes where ``eligible[node_class[j]]`` is True
    (its partition and features; class 0 is every node) (:meth:`eligible_nodes`).
    """

    time: int
    queue: np.ndarray
    running: np.ndarray
    free: np.ndarray
    capacity: np.ndarray
    submit: np.ndarray
    start: np.ndarray
    estimate: np.ndarray
    pred: np.ndarray
    units: np.ndarray
    request: np.ndarray
    req_nodes: np.ndarray
    user: np.ndarray
    group: np.ndarray
    queue_id: np.ndarray
    qwait: np.ndarray
    contiguous: np.ndarray
    alloc_start: np.ndarray
    alloc_count: np.ndarray
    alloc_log: np.ndarray
    maint_span: np.ndarray
    maint_windows: np.ndarray
    node_class: np.ndarray
    eligible: np.ndarray

    def eligible_nodes(self, job: int) -> np.ndarray:
        """bool (n_nodes,): the nodes job ``job`` may run on (its partition and features)."""
        return self.eligible[self.node_class[job]]

    def maintenance(self, node: int) -> np.ndarray:
        """Node ``node``'s maintenance windows, int64 (k, 2) [start, end), sorted."""
        lo, hi = self.maint_span[node]
        return self.maint_windows[lo:hi]

    def nodes_of(self, job: int) -> tuple[np.ndarray, np.ndarray]:
        """(nodes, units per node) of a started job, in allocation order."""
        if self.start[job] < 0:
            raise PolicyError(f"job index {job} has not started")
        rows = self.alloc_log[self.alloc_start[job] : self.alloc_start[job] + self.alloc_count[job]]
        return rows[:, 0], rows[:, 1]


class PolicyContext(NamedTuple):
    """What a policy's factory is given.

    machine: the :class:`schedbench.io.machine.Machine`.  allocator: the run's allocator
    name; allocator_state: its state, opaque, for kernels that call
    :func:`schedbench.core.api.plan_order` (e.g. AUCSCHED's SLURM bids).  period: the
    decision period (s; 0: every event).  fits(job, free=None) -> bool: the engine's
    node-level fit test, now (on the free nodes less those in maintenance during the
    job's predicted run) or on ``free`` (int64 (n_nodes, 4)).  plan_order(free) -> int64
    (n_nodes,) or None: the allocator's node order over ``free``, None when the allocator
    has none (weighted, priority-weighted)."""

    machine: Machine
    allocator: str
    allocator_state: Any
    period: int
    fits: Callable[..., bool]
    plan_order: Callable[[np.ndarray], np.ndarray | None]


class Policy(Protocol):
    """A Python policy.  Optional attributes: ``waits_for_events`` (bool; see
    :class:`schedbench.engine.simulation.Simulation`) and ``report() -> (dict, {name:
    polars.DataFrame})`` (summary.json's ``policy`` block and extra tables)."""

    def decide(self, view: View) -> Iterable[Start | int | tuple]: ...


@kernel
def _plan_order_of(alloc, free, order, key, tmp):
    """The allocator's node order over ``free`` (int64 (m, 4)) into ``order`` (int64
    (m,)); key float64 (m,), tmp int64 (m,): scratch.  Returns 0, or -1 when the allocator
    has no such order."""
    return plan_order(alloc, free, order, key, tmp)


def allocator_order(alloc, free: np.ndarray) -> np.ndarray | None:
    """The node order (int64 (m,)) of the allocator whose state is ``alloc`` over the free
    amounts ``free`` (int64 (m, 4)), or None when it has none."""
    free = np.ascontiguousarray(free, dtype=np.int64)
    m = free.shape[0]
    order, tmp, key = np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m)
    return order if _plan_order_of(alloc, free, order, key, tmp) == 0 else None
