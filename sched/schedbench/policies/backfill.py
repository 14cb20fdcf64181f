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

from .._jit import kernel
from ..core.api import place, plan_order
from ..errors import UsageError
from . import window as win
from .window import blocked_nodes


@kernel
def _allocator_place(alloc, free, units, req, req_nodes, order, key, tmp, out_node, out_count, elig):
    """The run's allocator's placement of a job (units, req int64 (4,), req_nodes) on
    ``free`` (int64 (m, 4)) restricted to the nodes where ``elig`` (uint8 (m,)) is set,
    without changing anything: the nodes used (the first entries of out_node /
    out_count), -1 when it does not fit, -2 when the allocator has no node order for a
    given free state.  order, tmp int64 (m,), key float64 (m,): scratch."""
    if plan_order(alloc, free, order, key, tmp) < 0:
        return -2
    return place(free, order, np.int64(0), units, req, req_nodes, out_node, out_count, elig)


class Placer:
    """Where the run's allocator would put a job on a given free state."""

    def __init__(self, context):
        m = context.machine.n_nodes
        self.alloc = context.allocator_state
        self.name = context.allocator
        self.order, self.tmp = np.zeros(m, np.int64), np.zeros(m, np.int64)
        self.key = np.zeros(m)
        self.out_node, self.out_count = np.zeros(m, np.int64), np.zeros(m, np.int64)

    def __call__(self, view, j: int, free: np.ndarray):
        """(nodes, counts) of job j on ``free`` less the nodes in maintenance during its
        run, or None when it does not fit."""
        down = blocked_nodes(view, j)
        if down is not None and down.any():
            free = free.copy()
            free[down] = 0
        used = _allocator_place(self.alloc, free, view.units[j], view.request[j], view.req_nodes[j],
                                self.order, self.key, self.tmp, self.out_node, self.out_count,
                                view.eligible[view.node_class[j]].view(np.uint8))
        if used == -2:
            raise UsageError(f"backfill needs an allocator with a node order (ff or bf), not {self.name!r}")
        if used < 0:
            return None
        return self.out_node[:used].copy(), self.out_count[:used].copy()


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
        for j in order[i + 1 :]:
            j = int(j)
            spot = self.place(view, j, free)
            if spot is None:
                continue
            end = now + int(view.pred[j])
            if shadow is not None and end > shadow:
                after = at_shadow.copy()
                _take(after, view, j, *spot, -1)
                if np.any(after < 0) or self.fits(head, after) is False:
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
