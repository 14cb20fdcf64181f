"""Brute-force oracle of CPH's phase 1 (schedbench.policies.cph.phase1), written
independently of it: the least ``sum weight_j start_j`` over every schedule of a tiny
window on aggregated resources.

For an objective that never decreases when a start is delayed, some optimal schedule is
active (no job can start earlier without moving another), and every active schedule is
the serial list schedule of some job order.  So the optimum is the best list schedule
over all orders, each computed here second by second on a usage timeline.
"""

from __future__ import annotations

from itertools import permutations


def _earliest(usage: list[list[int]], capacity, demand, duration) -> int:
    """The first second t from which demand fits under capacity for ``duration`` seconds
    on ``usage`` (a list of per-second amounts; seconds past its end are empty)."""
    t = 0
    while True:
        ok = True
        for u in range(t, t + duration):
            used = usage[u] if u < len(usage) else [0] * len(capacity)
            if any(used[k] + demand[k] > capacity[k] for k in range(len(capacity))):
                ok = False
                break
        if ok:
            return t
        t += 1


def list_schedule(capacity, held, jobs, order) -> list[int]:
    """Starts (s from now) of ``jobs`` [(duration, demand, weight)] placed in ``order``
    after ``held`` [(release, amounts)] (amounts in use from 0 until release)."""
    n_types = len(capacity)
    usage: list[list[int]] = []

    def add(start, duration, demand):
        while len(usage) < start + duration:
            usage.append([0] * n_types)
        for u in range(start, start + duration):
            for k in range(n_types):
                usage[u][k] += demand[k]

    for release, amounts in held:
        add(0, release, amounts)
    starts = [0] * len(jobs)
    for a in order:
        duration, demand, _ = jobs[a]
        starts[a] = _earliest(usage, capacity, demand, duration)
        add(starts[a], duration, demand)
    return starts


def optimum(capacity, held, jobs) -> tuple[int, list[list[int]]]:
    """(least sum weight x start, every list schedule reaching it) of ``jobs`` (see
    :func:`list_schedule`); every job must fit the capacity alone."""
    best = None
    schedules: list[list[int]] = []
    for order in permutations(range(len(jobs))):
        starts = list_schedule(capacity, held, jobs, order)
        value = sum(w * s for (_, _, w), s in zip(jobs, starts, strict=True))
        if best is None or value < best:
            best, schedules = value, [starts]
        elif value == best and starts not in schedules:
            schedules.append(starts)
    return best, schedules
