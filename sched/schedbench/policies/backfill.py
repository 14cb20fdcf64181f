"""SLURM backfill as Soner & Özturan's baseline (their Table 10, experiments 1 and 2):
EASY backfilling over a priority order, with the run's allocator placing the jobs
(``-a bf``: Best-Fit, SLURM's select/cons_res choice).

The pass is the replay spec's "EASY on nodes" with the queue visited in priority order
instead of (submit, id) order (the replay contract, ``docs/reference/replay-contract.md``):

1. start jobs in priority order while they fit (on the allocator's nodes);
2. the first that does not fit, the head, gets a reservation: release the running jobs in
   (predicted end, id) order, predicted end = max(start + pred, now), with their actual
   nodes, until the head's allocation would succeed: that end is the shadow time;
3. every later job that fits now starts if now + pred <= shadow time, or else if the
   head's allocation would still succeed at the shadow time on the free resources of that
   instant less this job's nodes and those of the jobs started before it in this pass that
   run past the shadow time.

Priorities (``priority_type``) are those of :mod:`schedbench.policies.window`: with
``basic`` the order is the (submit, id) order, so ``backfill`` then gives exactly the
starts of the jitted ``easy`` (a test checks it job by job); ``multifactor`` orders by age
and size with equal weights.  Maintenance windows: a job is not placed on a node whose
window meets its predicted run; the reservation ignores them.
"""

from __future__ import annotations

import numpy as np

from .. import registry
from .._jit import kernel
from ..core.api import place, plan_order
from ..core.layout import N_RES
from ..errors import UsageError
from . import window as win
from .window import blocked_nodes


@kernel
def _refresh_order(alloc, free, ordered, order, key, tmp):
    """Put the allocator's node order over ``free`` (int64 (m, 4)) into ``order`` (int64
    (m,)) unless ``ordered`` (int64 (m, 4)), the free amounts it was last computed for,
    equals ``free``; then ``ordered`` holds a copy of ``free``.  Returns 0, or -2 when the
    allocator has no node order.  key float64 (m,), tmp int64 (m,): scratch.

    A pass tries most queued jobs on one unchanged free state (a job that does not fit
    changes nothing), and the order (a sort over the nodes for Best-Fit) cost more than
    the placement itself."""
    m, r = free.shape
    for i in range(m):
        for k in range(r):
            if free[i, k] != ordered[i, k]:
                if plan_order(alloc, free, order, key, tmp) < 0:
                    ordered[0, 0] = -1  # never a free amount: the next call tries again
                    return -2
                for i2 in range(m):
                    for k2 in range(r):
                        ordered[i2, k2] = free[i2, k2]
                return 0
    return 0


@kernel
def _allocator_place(alloc, free, ordered, units, req, req_nodes, order, key, tmp, out_node, out_count, elig):
    """The run's allocator's placement of a job (units, req int64 (4,), req_nodes) on
    ``free`` (int64 (m, 4)) restricted to the nodes where ``elig`` (uint8 (m,)) is set,
    without changing ``free``: the nodes used (the first entries of out_node /
    out_count), -1 when it does not fit, -2 when the allocator has no node order.
    ordered, order, key, tmp: as for :func:`_refresh_order`."""
    if _refresh_order(alloc, free, ordered, order, key, tmp) < 0:
        return -2
    return place(free, order, np.int64(0), units, req, req_nodes, out_node, out_count, elig)


@kernel
def _first_placed(alloc, free, ordered, order, key, tmp, jobs, plain, first, units, request, req_nodes, elig,
                  out_node, out_count):
    """The first position p >= ``first`` of ``jobs`` (int64 (n,), job indices) whose job
    the run's allocator can place on ``free`` (int64 (m, 4)) on the nodes where ``elig``
    (uint8 (m,)) is set, as :func:`_allocator_place` would one job at a time; ``plain``
    (uint8 (n,)) is 0 for a job that needs a free state or nodes of its own (maintenance,
    a node class), where the search stops for the caller to place it.

    units, req_nodes int64 (jobs,), request int64 (jobs, 4): every job's request.
    Returns (p, used): used nodes >= 0 (in out_node / out_count), -1 with p = n when no
    job from ``first`` on fits, -2 when the allocator has no node order, -3 at a job
    whose ``plain`` is 0.  Nothing but the scratch and the order cache changes."""
    n = jobs.shape[0]
    if _refresh_order(alloc, free, ordered, order, key, tmp) < 0:
        return first, np.int64(-2)
    for p in range(first, n):
        if plain[p] == 0:
            return p, np.int64(-3)
        j = jobs[p]
        used = place(free, order, np.int64(0), units[j], request[j], req_nodes[j], out_node, out_count, elig)
        if used >= 0:
            return p, used
    return n, np.int64(-1)


class Placer:
    """Where the run's allocator would put a job on a given free state."""

    def __init__(self, context):
        m = context.machine.n_nodes
        self.alloc = context.allocator_state
        self.name = context.allocator
        self.order, self.tmp = np.zeros(m, np.int64), np.zeros(m, np.int64)
        self.ordered = np.full((m, N_RES), -1, np.int64)  # the free amounts self.order is for (_refresh_order)
        self.key = np.zeros(m)
        self.out_node, self.out_count = np.zeros(m, np.int64), np.zeros(m, np.int64)

    def _no_order(self) -> UsageError:
        # unreachable for a registered allocator (the registry refuses the pair): a plug-in
        # that declares a planning order it does not give
        return UsageError(f"backfill needs an allocator with a planning order ({registry.planning_order_givers()}), "
                          f"not {self.name!r}")

    def __call__(self, view, j: int, free: np.ndarray):
        """(nodes, counts) of job j on ``free`` less the nodes in maintenance during its
        run, or None when it does not fit."""
        down = blocked_nodes(view, j)
        if down is not None and down.any():
            free = free.copy()
            free[down] = 0
        used = _allocator_place(self.alloc, free, self.ordered, view.units[j], view.request[j], view.req_nodes[j],
                                self.order, self.key, self.tmp, self.out_node, self.out_count,
                                view.eligible[view.node_class[j]].view(np.uint8))
        if used == -2:
            raise self._no_order()
        if used < 0:
            return None
        return self.out_node[:used].copy(), self.out_count[:used].copy()

    def first(self, view, jobs: np.ndarray, plain: np.ndarray, p: int, free: np.ndarray):
        """(p, spot) for the first position p' >= p of ``jobs`` whose job fits on ``free``
        (spot as :meth:`__call__` gives it), or (jobs.size, None).  ``plain`` (uint8, one
        per job) marks the jobs that need no free state or nodes of their own (see
        :func:`plain_jobs`); the others are placed one by one."""
        while p < jobs.size:
            if not plain[p]:
                spot = self(view, int(jobs[p]), free)
                if spot is not None:
                    return p, spot
                p += 1
                continue
            p, used = _first_placed(self.alloc, free, self.ordered, self.order, self.key, self.tmp, jobs, plain, p,
                                    view.units, view.request, view.req_nodes, view.eligible[0].view(np.uint8),
                                    self.out_node, self.out_count)
            if used == -2:
                raise self._no_order()
            if used >= 0:
                return p, (self.out_node[:used].copy(), self.out_count[:used].copy())
        return jobs.size, None


def plain_jobs(view, jobs: np.ndarray) -> np.ndarray:
    """uint8 per job of ``jobs``: 1 when the job may use every node and no maintenance
    window exists, so :meth:`Placer.first` places it on the pass's free state as it is."""
    if view.maint_windows.size:
        return np.zeros(jobs.size, np.uint8)
    return (view.node_class[jobs] == 0).astype(np.uint8)


def _take(free: np.ndarray, view, j: int, nodes, counts, sign: int) -> None:
    free[nodes] += sign * counts[:, None] * view.request[j][None, :]


class Backfill:
    """EASY over a priority order (see the module docstring)."""

    def __init__(self, context, priority_type="basic"):
        self.kind = win.check_choice("priority_type", priority_type, win.PRIORITY_TYPES)
        self.place = Placer(context)
        self.fits = context.fits
        self.total_cores = int(context.machine.totals[0])

    waits_for_events = False  # decide at every event (period 0) unless given a period

    def decide(self, view):
        order, _ = win.window(view, view.queue.size, self.kind, self.total_cores)
        free = view.free.copy()
        now = view.time
        starts = []
        started_end = []  # (predicted end, job, nodes, counts) of this pass's starts
        i = 0
        while i < order.size:
            j = int(order[i])
            spot = self.place(view, j, free)
            if spot is None:
                break
            _take(free, view, j, *spot, -1)
            starts.append((j, *spot))
            started_end.append((now + int(view.pred[j]), j, *spot))
            i += 1
        if i >= order.size:
            return starts
        head = int(order[i])
        shadow, at_shadow = self._shadow(view, head, free, started_end)
        plain = plain_jobs(view, order)
        p = i + 1
        while True:
            p, spot = self.place.first(view, order, plain, p, free)
            if spot is None:
                break
            j = int(order[p])
            p += 1
            end = now + int(view.pred[j])
            if shadow is not None and end > shadow:
                nodes, counts = spot
                left = at_shadow[nodes] - counts[:, None] * view.request[j][None, :]  # only its nodes change
                if (left < 0).any():
                    continue
                after = at_shadow.copy()
                after[nodes] = left
                if self.fits(head, after) is False:
                    continue
                at_shadow = after
            _take(free, view, j, *spot, -1)
            starts.append((j, *spot))
        return starts

    def _shadow(self, view, head: int, free: np.ndarray, started_end: list):
        """(shadow time, free amounts at that instant) of the head's reservation, or
        (None, None) when it would not fit even on every running job's nodes."""
        now = view.time
        ends = []
        for r in view.running:
            r = int(r)
            nodes, counts = view.nodes_of(r)
            ends.append((max(int(view.start[r]) + int(view.pred[r]), now), r, nodes.astype(np.int64), counts.astype(np.int64)))
        ends.extend(started_end)
        ends.sort(key=lambda e: (e[0], e[1]))
        f = free.copy()
        for k, (end, r, nodes, counts) in enumerate(ends):
            _take(f, view, r, nodes, counts, +1)
            if self.fits(head, f):
                for end2, r2, nodes2, counts2 in ends[k + 1 :]:  # every job ending at that instant too
                    if end2 > end:
                        break
                    _take(f, view, r2, nodes2, counts2, +1)
                return end, f
        return None, None


def backfill(context, **options) -> Backfill:
    return Backfill(context, **options)
