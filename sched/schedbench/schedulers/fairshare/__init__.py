"""A Slurm-style linear multifactor priority with depth-D reservations (``priority``) and
Simultaneous Fair-Share (``sfs``; Steffen, "A Better Way of Scheduling Jobs on HPC
Systems: Simultaneous Fair-Share", HPC-SYSROS 2019, §2 and §4), on any workload.

Sizes
    A job's *size* is its cores (units x cores per unit); a job that asks for no cores
    counts units x the per-unit amount of its first requested type (GPUs, MICs, then
    memory).  For the pool jobs of SWF logs (single units of one type) that is its units.
    Occupancy, usage, allocations and the size weight all count sizes.

Accounts
    A job's account is its SWF group (field 13; a Slurm log's account), or its user
    (field 12) with ``account=user``.  Each account has an *allocation*: from an accounts
    file (``accounts=FILE.toml``, a table ``[accounts.ID]`` per account holding ``target
    = U``, an occupancy in sizes, or ``allocation = U*s`` over the trace's span, with an
    optional ``factor``), or, by default, the account's own work (size x run) in the
    trace.  Ideal occupancy = allocation / span of the trace (first submit to last end);
    target occupancy = factor x ideal (default factor 2, §4.1).  An account the file does
    not list has no allocation: target 0 and no share.  *Occupancy* = the sizes of the
    account's running jobs.

Priority (§2.3): ``w_age * minutes queued + w_size * size + w_fs * F``, with Slurm's
classic fair-share factor ``F = 2^(-U/S)``: U the account's share of the decayed usage of
all accounts, S its share of the allocations (F = 0 for an account without one).  Usage
is learned online: when a job ends, every account's usage decays by
``2^(-(now - last decay) / half_life)`` (default half-life 7 days) and the job's size x
run time is added to its account (a choice: Slurm accrues while jobs run; the paper
does not say).  Queue order: priority high to low, then (submit, id).

Each pass at ``now``, on a plan of the future (built in the pass when its first
reservation is made: each running job, those started in this pass included, holds its
resources over [now, max(start + pred, now)), as EASY's predicted ends; a pass where
nothing is free starts nothing and is cut short, but for an allocator that counts
attempts, below):

* ``sfs`` first runs **pass 1** (§4.2.1) over the *local list*: queued jobs, in priority
  order, of accounts whose occupancy now is at or below target; each job that fits now
  starts and its account's occupancy grows, and an account above target has its
  remaining jobs dropped from the local list (so the list is re-evaluated after every
  placement, as §5 does).  With ``standing=true`` pass 1 honours **standing
  reservations** (§4.2.1 counts the jobs "already running or scheduled to run" in the
  slice, and a Moab reservation persists from one iteration to the next): first the
  first ``depth`` jobs of the full priority order that cannot start now get their
  reservations on the plan of the running jobs, as pass 2 makes them; then pass 1 starts
  a job only when it fits now and delays none of them (pass 2's backfill test).  The
  reservation is made again at every pass, for the jobs then at the top, at their
  earliest fit; every start respected it, so while the same job holds it, it moves later
  only when a running job outlives its prediction.  Pass 2 then plans afresh.
* **pass 2** (both; §4.2.2, and §2's linear scheduler): the full list in priority order.
  Before any reservation a job starts when it fits now; the first ``depth`` jobs that do
  not start get a reservation at their earliest fit on the plan (held for this pass only,
  ``[t, t + max(pred, 1))``); after the first reservation a job starts only when it fits
  now *and* it delays no reservation (below) over ``[now, now + pred)`` (the
  **backfill**, §5.0.3: with reservations made, the rest of the list is the backfill
  pass, in priority order).  ``depth = 1`` with only the age weight is EASY (tests check
  it job by job, on pools and on nodes).  ``backfill=false`` makes pass 2 strict: it stops
  at the first job that cannot start (no reservation matters then); Steffen's §9 linear
  scheduler behaves so (see ``docs/studies/steffen-sfs.md``).

The plan has two forms, the jobs being placed by the run's allocator when they start:

Pools (:mod:`.pool`, when every replayed job is single units of one type spread freely:
``Setup.all_pool``, e.g. every SWF log)
    One used RUSV per resource type: a reservation is the earliest ``t`` at which the
    type's load plus the job's units stays within the type's total over its window, and a
    candidate delays no reservation when the load plus its units stays within the total
    over ``[now, now + pred)``.
On nodes (:mod:`.nodes`, any other workload: node counts, several types, partitions and
features)
    The free resources of each node at every instant, left by the running jobs and the
    reservations' placements.  A reservation is the earliest ``t`` (now, a running job's
    predicted end or an earlier reservation's end) at which the job's allocation succeeds,
    on its eligible nodes (``core.elig`` row ``jobs[j, J_CLASS]``) in node index order, on
    the least free amount of each node and type over ``[t, t + max(pred, 1))``; it holds
    that placement.  A candidate that fits now gets the placement the allocator chooses
    for it; it delays no reservation when, with that placement taken away over ``[now,
    now + pred)``, every reservation, in order, still fits its window: it keeps its
    placement when that still fits, else it takes a new one there (node index order, the
    later reservations seeing it); the candidate starts only if they all fit, and the
    plan then keeps the new placements.  With one reservation this is EASY's
    node-feasible rule (its shadow time and its test of the head on the free resources
    at that instant minus each backfilled job).

Maintenance windows still bind (the core hides nodes in maintenance from every start)
but neither plan sees them.

Allocation attempts (the allocator hooks ``attempt_failed`` / ``attempt_succeeded``,
which Priority-Weighted counts): each job a pass offers, in its order, is one; it fails
when it does not fit now or would delay a reservation (on pools too, where that test
needs no placement), else it succeeds; making a reservation is none.  Both passes rule
out, without offering them, the jobs whose request exceeds the free totals, and skip a
pass where nothing is free; for an allocator whose ``counts_attempts`` is True they
report each such job as a failed attempt where the pass would have offered it, and run
the pass where nothing is free (every job it offers fails), as EASY reports the jobs its
min-tree skips.
"""

from __future__ import annotations

import math

import numpy as np

from ...core import JittedScheduler
from ...core.layout import J_REQ, J_RUN, J_STATE, J_SUBMIT, J_UNITS, N_RES, JobState
from ...errors import UsageError
from ...plan.accounts import accounts, allocations
from ...plan.accounts import job_sizes as sizes_of
from ...plan.rusv import M_AVL, M_MAX_AVL, M_MIN_DIST
from .common import N_PAR
from .nodes import FairShareNodes
from .pool import FairShare

DEFAULT_WEIGHTS = {"age": 1.0, "size": 1.0, "fairshare": 1440.0}


# --------------------------------------------------------------------------- Python side


def parse_weights(text) -> dict[str, float]:
    """``"age=A,size=S,fairshare=F"`` (any subset; the others keep their defaults)."""
    if isinstance(text, dict):
        items = text.items()
    else:
        items = []
        for part in filter(None, (p.strip() for p in str(text).split(","))):
            name, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"expected NAME=NUMBER in {part!r}")
            items.append((name.strip(), value.strip()))
    out = dict(DEFAULT_WEIGHTS)
    for name, value in items:
        if name not in out:
            raise ValueError(f"unknown weight {name!r} (age, size, fairshare)")
        try:
            out[name] = float(value)
        except ValueError:
            raise ValueError(f"weight {name}={value!r} is not a number") from None
        if not math.isfinite(out[name]) or out[name] < 0:
            raise ValueError(f"weight {name}={value!r} must be a finite number >= 0")
    return out


def job_sizes(J: np.ndarray) -> np.ndarray:
    """Each job's size, int64 (n,) (:func:`schedbench.plan.accounts.job_sizes` of the job
    matrix's units and per-unit requests)."""
    return sizes_of(J[:, J_UNITS], J[:, J_REQ : J_REQ + N_RES])


def _build(setup, sfs: bool, priority_weights, depth, account, accounts_file, half_life, target_factor, backfill,
           standing=False):
    J = setup.jobs
    n = J.shape[0]
    depth = int(depth)
    if depth < 1:
        raise UsageError("depth must be >= 1")
    if int(half_life) < 1:
        raise UsageError("half_life must be >= 1 s")
    try:
        w = parse_weights(priority_weights)
    except ValueError as exc:
        raise UsageError(f"priority_weights: {exc}") from None
    size = job_sizes(J)
    ids, index = accounts(J, account)
    live = J[:, J_STATE] != JobState.DROPPED
    target, shares, _ = allocations(J[:, J_SUBMIT], J[:, J_RUN], size, live, ids, index,
                                    accounts_file or None, float(target_factor))
    par = np.zeros(N_PAR, dtype=np.int64)
    par[:] = (depth, int(sfs), int(half_life), 0, 1, int(bool(backfill)), int(bool(standing)))
    common = dict(
        acct=index, size=size, target=np.floor(target + 1e-9).astype(np.int64),
        occ=np.zeros(ids.size, dtype=np.int64), usage=np.zeros(ids.size), shares=shares.astype(np.float64),
        factor=np.zeros(ids.size), w=np.array([w["age"], w["size"], w["fairshare"]], dtype=np.float64), par=par,
        qkey=np.zeros(n),
    )
    if setup.all_pool:
        capacity = setup.machine.capacity.sum(axis=0)
        rows = 2 * (int(min(capacity.max(), n)) + depth) + 16
        meta = np.zeros((N_RES, 5), dtype=np.int64)
        meta[:, M_MAX_AVL] = capacity
        meta[:, M_AVL] = capacity
        meta[:, M_MIN_DIST] = 1  # exact vectors
        state = FairShare(
            **common, jtype=np.maximum(setup.pool_type, 0),  # dropped jobs: any type, never read
            slots=np.zeros((N_RES, rows, 3), dtype=np.int64), meta=meta, tmp=np.zeros((2, N_RES), dtype=np.int64),
        )
    else:
        m = setup.machine.n_nodes
        state = FairShareNodes(
            **common, hold_t=np.zeros((depth, 2), dtype=np.int64), hold_job=np.zeros(depth, dtype=np.int64),
            hold_used=np.zeros((2, depth), dtype=np.int64), hold_node=np.zeros((2, depth, m), dtype=np.int64),
            hold_count=np.zeros((2, depth, m), dtype=np.int64),
            hold_base=np.zeros((depth, m, N_RES), dtype=np.int64), cur=np.zeros((m, N_RES), dtype=np.int64),
            win=np.zeros((m, N_RES), dtype=np.int64), tmp=np.zeros((m, N_RES), dtype=np.int64),
            wtot=np.zeros(N_RES, dtype=np.int64),
        )
    return JittedScheduler(state)


# Factories: the options and their defaults are declared in schedbench.schedulers.


def priority(setup, priority_weights, depth, account, accounts, half_life, target_factor, backfill) -> JittedScheduler:
    return _build(setup, False, priority_weights, depth, account, accounts, half_life, target_factor, backfill)


def sfs(setup, priority_weights, depth, account, accounts, half_life, target_factor, backfill,
        standing) -> JittedScheduler:
    return _build(setup, True, priority_weights, depth, account, accounts, half_life, target_factor, backfill,
                  standing)
