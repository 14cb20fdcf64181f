"""Heterogeneity-aware allocators of Netti et al. (§3–4.1): Balanced, Weighted and
Priority-Weighted.  Each places jobs by the spec's allocation rule
(:func:`schedbench.core.api.place`) along its own node order:

* **balanced**: every node goes to the bin of the critical resource type it has the most
  of *free* (ties: lower type index), or to the null bin when it has none free; the null
  bin comes first (index order), then nodes are taken one at a time from the currently
  largest remaining bin (ties: lower type index; inside a bin, index order).  Critical
  types default to GPUs and MICs.
* **weighted** (Eq. 1): nodes in non-decreasing rank R_i = Σ_k w_k · imp_ik over the
  types node i has (capacity > 0), ties by index.  imp_ik is what remains free of type k
  on node i after it takes min(units it can host, the job's units) units of this job.
  Nodes that cannot host a unit are ranked too but never used.  Two rules for w_k
  (option ``weight_rule``):

  - ``text`` (the paper's §3): w_k = mean_req_k · load_k / cap_k, where
    mean_req_k is the mean over queued jobs (the job being placed included) of their
    total request of k (units × per-unit amount) weighted by predicted duration, load_k
    = used_k / cap_k now, and cap_k the machine's capacity of k.  w_k is 0 when no
    queued job asks for k or nothing of k is in use.
  - ``authors`` (the default; the authors' AccaSim code, ``extra/allocators/allocator_weighted.py``):
    the mean is taken over a window of the next ``window`` (default 100) queued jobs
    after the job being placed, in the scheduler's queue order (``easy-sjbf``: the
    arrival order, not its backfill's shortest-first visits; ``priority`` and ``sfs``:
    the priority order set at the start of the pass; ``slurm``: its scheduling order),
    each weighted by pred +
    1 s, with counters starting at 1, and the load is smoothed by one unit:
    w_k = (1 + Σ (pred + 1) · units · req_k) / (1 + Σ (pred + 1)) · (used_k + 1) / cap_k².
    w_k is never 0 on a type the machine has: accelerators stay weighted when no queued
    job asks for them (the text's rule gives 0 there).  The default because it is the
    rule the paper's figures came from and, measured on the Eurora-like generator
    (``docs/studies/netti-allocators.md``), it does not leave placements to the node
    order as often (the text's all-zero weights fall back on index order).

* **priority-weighted**: weighted (either rule) with w_k multiplied by p_k for critical
  types (Netti et al. §3, and the authors' code where the text is silent): p_k starts at
  1; at each allocation attempt of a job needing k, the node order is computed first
  with the current p_k, then p_k moves by +1 when the attempt fails or -1 when the job is
  allocated, kept within [1, bound] (bound 10 by default).  An attempt is a scheduler's
  offer of a queued job for a start now: FCFS/SJF/``prb-blocking``: the jobs tried in
  order up to the first that does not fit (included); ``prb``: every queued job, in
  priority order; EASY: the in-order jobs up to the blocked head (included), then every
  queued job behind the head (each backfill candidate: it fails when it does not fit
  now or would delay the head's reservation); ``ebf-accasim``: the blocked job's retry
  once its reserved time has come, the in-order starts as FCFS's, then every other queued
  job in queue order; ``priority`` / ``sfs``: each job a pass offers in its priority
  order (sfs's pass 1: the jobs of accounts at or below target; pass 2: every queued job,
  or up to the first that does not start with ``backfill=false``), failing when it does
  not fit now or would delay a reservation; a job beyond the free totals fails like any
  other that does not fit (the schedulers report it though they never ask for its
  placement), and so does every job of a pass where nothing is free; making a
  reservation is no attempt; ``slurm``: each job its main scheduler
  reaches (fails unless it starts) and each job a backfill cycle starts now (succeeds).

The factories return the shared :class:`schedbench.allocators.dispatch.Allocator` (one
replay loop for every allocator); the classes below name the fields each family uses.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import inline_kernel, internal_kernel, kernel
from ..core.api import (
    C_CAP,
    C_FREE,
    C_QH,
    C_QSPAN,
    alloc_committed,
    alloc_enqueued,
    argsort_stable,
    attempt_failed,
    attempt_succeeded,
    choose,
    counts_attempts,
    host,
    implements,
    place_in_order,
    plan_order,
    reads_queue_order,
)
from ..core.layout import J_PRED, J_REQ, J_STATE, J_UNITS, N_RES, JobState
from ..errors import UsageError
from ..io.machine import RESOURCE_NAMES
from .dispatch import Allocator, pack

WEIGHT_RULES: tuple[str, ...] = ("text", "authors")  # index = the rule's code in mode[0]
RULE_TEXT = 0
RULE_AUTHORS = 1


# Slots of Weighted.sums / PriorityWeighted.sums, int64 (1 + N_RES,)
S_PRED = 0  # sum over queued jobs of pred
S_REQ = 1  # S_REQ + k: sum over queued jobs of pred * units * request of k


class Balanced(NamedTuple):
    """crit int64 (4,): 1 where the type is critical.  order, tmp int64 (m,), key float64
    (m,): node-order buffers; bins int64 (16,): bin cursors and sizes."""

    crit: np.ndarray
    order: np.ndarray
    key: np.ndarray
    tmp: np.ndarray
    bins: np.ndarray


class Weighted(NamedTuple):
    """sums int64 (1 + 4,): the queue's duration-weighted request sums (S_*); prio int64
    (4,): weight multipliers (all 1); weights float64 (4,): the w_k of the latest
    ordering; order, key, tmp: node-order buffers; mode int64 (2,): the weight rule
    (RULE_TEXT or RULE_AUTHORS) and the authors' window (jobs)."""

    sums: np.ndarray
    prio: np.ndarray
    weights: np.ndarray
    order: np.ndarray
    key: np.ndarray
    tmp: np.ndarray
    mode: np.ndarray


class PriorityWeighted(NamedTuple):
    """As :class:`Weighted`, with prio int64 (4,) the priorities p_k (1 for types that
    are not critical), crit int64 (4,) and bound int64 (1,)."""

    sums: np.ndarray
    prio: np.ndarray
    weights: np.ndarray
    order: np.ndarray
    key: np.ndarray
    tmp: np.ndarray
    mode: np.ndarray
    crit: np.ndarray
    bound: np.ndarray


def critical_mask(critical) -> np.ndarray:
    """int64 (4,) flags of the critical resource names ``critical``."""
    names = tuple(critical)
    unknown = [c for c in names if c not in RESOURCE_NAMES]
    if unknown:
        raise UsageError(f"unknown critical resource(s) {unknown}; choose from {', '.join(RESOURCE_NAMES)}")
    mask = np.zeros(N_RES, dtype=np.int64)
    for c in names:
        mask[RESOURCE_NAMES.index(c)] = 1
    return mask


def _buffers(setup):
    m = setup.machine.n_nodes
    return np.arange(m, dtype=np.int64), np.zeros(m), np.empty(m, dtype=np.int64)


# Factories: the options and their defaults are declared in schedbench.allocators.


def balanced(setup, critical) -> Allocator:
    return pack(Balanced(critical_mask(critical), *_buffers(setup), np.zeros(16, dtype=np.int64)))


def _mode(weight_rule, window) -> np.ndarray:
    if weight_rule not in WEIGHT_RULES:
        raise UsageError(f"unknown weight rule {weight_rule!r}; choose from {', '.join(WEIGHT_RULES)}")
    if int(window) < 0:
        raise UsageError("the window must be >= 0 jobs")
    return np.array([WEIGHT_RULES.index(weight_rule), int(window)], dtype=np.int64)


def weighted(setup, weight_rule, window) -> Allocator:
    return pack(Weighted(
        np.zeros(1 + N_RES, dtype=np.int64), np.ones(N_RES, dtype=np.int64), np.zeros(N_RES), *_buffers(setup),
        _mode(weight_rule, window),
    ))


def priority_weighted(setup, critical, priority_bound, weight_rule, window) -> Allocator:
    if int(priority_bound) < 1:
        raise UsageError("the priority bound must be >= 1")
    return pack(PriorityWeighted(
        np.zeros(1 + N_RES, dtype=np.int64), np.ones(N_RES, dtype=np.int64), np.zeros(N_RES), *_buffers(setup),
        _mode(weight_rule, window), critical_mask(critical), np.array([int(priority_bound)], dtype=np.int64),
    ))


# --------------------------------------------------------------------------- Balanced


@kernel
def _balanced_order(free, crit, bins, order, key, tmp):
    """Balanced order (module docstring) of the nodes of ``free`` (int64 (m, 4)) into
    ``order``; key (float64 (m,)) and tmp (int64 (m,)) are scratch, bins (int64 (16,))
    holds the bins' cursors (0..4) and sizes (8..12)."""
    n = free.shape[0]
    for i in range(n):
        best = 0  # null bin
        most = 0
        for k in range(N_RES):
            if crit[k] and free[i, k] > most:
                most = free[i, k]
                best = 1 + k
        key[i] = best
    argsort_stable(key, order, tmp)  # nodes grouped by bin, index order inside
    # bin b occupies order[start_b : end_b]; its cursor is bins[b], its size bins[8 + b]
    for b in range(N_RES + 1):
        bins[b] = 0
        bins[8 + b] = 0
    for p in range(n):
        b = int(key[order[p]])
        bins[8 + b] += 1
    start = 0
    for b in range(N_RES + 1):
        bins[b] = start
        start += bins[8 + b]
    for p in range(n):
        tmp[p] = order[p]
    w = 0
    while w < bins[8]:  # the null bin first
        order[w] = tmp[bins[0] + w]
        w += 1
    bins[8] = 0
    while w < n:
        pick = -1
        for b in range(1, N_RES + 1):
            if bins[8 + b] > 0 and (pick < 0 or bins[8 + b] > bins[8 + pick]):
                pick = b
        order[w] = tmp[bins[pick]]
        bins[pick] += 1
        bins[8 + pick] -= 1
        w += 1


@implements(choose, Balanced)
@internal_kernel  # called, not inlined: the sort dwarfs the call (see .dispatch)
def _balanced_choose(alloc, core, j):
    """choose() for Balanced: job ``j``'s placement along the Balanced order of the free
    nodes (core.work; returns the nodes used, -1 when it does not fit)."""
    _balanced_order(core.free, alloc.crit, alloc.bins, alloc.order, alloc.key, alloc.tmp)
    return place_in_order(core, alloc.order, np.int64(0), j)


@implements(plan_order, Balanced)
@kernel
def _balanced_plan_order(alloc, free, order, key, tmp):
    """plan_order() for Balanced: the Balanced order of a planning window's least free
    amounts ``free`` (conservative on nodes books in it); returns 0."""
    _balanced_order(free, alloc.crit, alloc.bins, order, key, tmp)
    return 0


# --------------------------------------------------------------------------- Weighted


@kernel
def _text_weights(scal, sums, prio, weights):
    """The text's w_k (module docstring) into ``weights`` (float64 (4,)): scal int64: the
    core's scalars (free and total amounts); sums int64 (1 + 4,): the queue's request
    sums (S_*; pred in s); prio int64 (4,): weight multipliers.  0 for a type the machine
    lacks, and for all types when the queue's predicted durations sum to 0."""
    wpred = sums[S_PRED]
    for k in range(N_RES):
        total = scal[C_CAP + k]
        weights[k] = 0.0
        if total > 0 and wpred > 0:
            mean_req = sums[S_REQ + k] / wpred
            load = (total - scal[C_FREE + k]) / total
            w = mean_req * load / total
            w *= prio[k]
            weights[k] = w


@kernel
def _window_weights(jobs, queue, scal, j, window, prio, weights):
    """The authors' w_k (module docstring) for job ``j`` into ``weights`` (float64 (4,)):
    over the next ``window`` queued jobs after j in the core's ``queue`` (int64, from
    scal[C_QH], holes of started jobs skipped), each counting pred + 1 (s), sums starting
    at 1; jobs: the int64 job matrix; scal: the core's scalars; prio int64 (4,): weight
    multipliers.  0 for a type the machine lacks."""
    qh = scal[C_QH]
    end = qh + scal[C_QSPAN]
    r = qh
    while r < end and queue[r] != j:
        r += 1
    length = 1.0
    for k in range(N_RES):
        weights[k] = 1.0  # the counters, then the weights
    seen = 0
    r += 1
    while r < end and seen < window:
        q = queue[r]
        r += 1
        if jobs[q, J_STATE] != JobState.QUEUED:
            continue
        seen += 1
        d = float(jobs[q, J_PRED] + 1)
        length += d
        for k in range(N_RES):
            weights[k] += d * float(jobs[q, J_UNITS] * jobs[q, J_REQ + k])
    for k in range(N_RES):
        total = scal[C_CAP + k]
        if total <= 0:
            weights[k] = 0.0
            continue
        used = total - scal[C_FREE + k]
        weights[k] = weights[k] / length * (float(used) + 1.0) / (float(total) * float(total)) * prio[k]


@kernel
def _rank_order(free, cap, scal, weights, units, req, order, key, tmp):
    """Weighted order (module docstring) for a job of ``units`` units of shape ``req``
    (int64 (4,)) on the free nodes ``free`` of capacities ``cap`` (int64 (m, 4)) into
    ``order`` (int64 (m,)), with the w_k in ``weights`` (float64 (4,)).  scal: the core's
    scalars (total amounts); key (float64 (m,)) and tmp (int64 (m,)) are scratch."""
    n = free.shape[0]
    for i in range(n):
        h = host(free, i, req)
        if h > units:
            h = units
        r = 0.0
        for k in range(N_RES):
            if cap[i, k] <= 0 or scal[C_CAP + k] <= 0:
                continue
            r += weights[k] * (free[i, k] - h * req[k])
        key[i] = r
    argsort_stable(key, order, tmp)


@internal_kernel  # called, not inlined: the sort dwarfs the call (see .dispatch)
def _weighted_choose(alloc, core, j):
    """choose() for Weighted and Priority-Weighted: w_k by the state's rule (mode[0]) into
    alloc.weights, then job ``j``'s placement along the rank order of the free nodes
    (core.work; returns the nodes used, -1 when it does not fit)."""
    jobs = core.jobs
    if alloc.mode[0] == RULE_AUTHORS:
        _window_weights(jobs, core.queue, core.scal, j, alloc.mode[1], alloc.prio, alloc.weights)
    else:
        _text_weights(core.scal, alloc.sums, alloc.prio, alloc.weights)
    _rank_order(
        core.free, core.cap, core.scal, alloc.weights, jobs[j, J_UNITS], jobs[j, J_REQ : J_REQ + N_RES],
        alloc.order, alloc.key, alloc.tmp,
    )
    return place_in_order(core, alloc.order, np.int64(0), j)


@inline_kernel
def _queue_sums(sums, jobs, j, sign):
    """Add (sign 1) or remove (sign -1) job ``j`` from the queue's duration-weighted
    request sums."""
    p = jobs[j, J_PRED]
    sums[S_PRED] += sign * p
    for k in range(N_RES):
        sums[S_REQ + k] += sign * p * jobs[j, J_UNITS] * jobs[j, J_REQ + k]


@inline_kernel
def _sums_enqueued(alloc, jobs, j):
    """alloc_enqueued(): job ``j`` joins the queue's request sums."""
    _queue_sums(alloc.sums, jobs, j, 1)


@inline_kernel
def _sums_committed(alloc, jobs, j):
    """alloc_committed(): job ``j`` leaves the queue's request sums."""
    _queue_sums(alloc.sums, jobs, j, -1)


@inline_kernel
def _prioritise(alloc, jobs, j, step):
    """Move the priority of every critical type job ``j`` needs by ``step``, within
    [1, bound]."""
    for k in range(N_RES):
        if alloc.crit[k] and jobs[j, J_REQ + k] > 0:
            p = alloc.prio[k] + step
            alloc.prio[k] = min(max(p, 1), alloc.bound[0])


@inline_kernel
def _raise_priorities(alloc, jobs, j):
    """attempt_failed(): +1 on the priority of each critical type job ``j`` needs."""
    _prioritise(alloc, jobs, j, 1)


@inline_kernel
def _lower_priorities(alloc, jobs, j):
    """attempt_succeeded(): -1 on the priority of each critical type job ``j`` needs."""
    _prioritise(alloc, jobs, j, -1)


@inline_kernel
def _authors_window(alloc):
    """reads_queue_order(): under the authors' rule the weights come from the jobs queued
    behind the one placed (:func:`_window_weights`), in the queue's order."""
    return alloc.mode[0] == RULE_AUTHORS


for _cls in (Weighted, PriorityWeighted):
    implements(choose, _cls)(_weighted_choose)
    implements(reads_queue_order, _cls)(_authors_window)
    implements(alloc_enqueued, _cls)(_sums_enqueued)
    implements(alloc_committed, _cls)(_sums_committed)
implements(attempt_failed, PriorityWeighted)(_raise_priorities)
implements(attempt_succeeded, PriorityWeighted)(_lower_priorities)


@implements(counts_attempts, PriorityWeighted)
@inline_kernel
def _pw_counts_attempts(alloc):
    """Priority-Weighted hears of every attempt (backfill candidates skipped by EASY's
    min-tree included)."""
    return True


del _cls
