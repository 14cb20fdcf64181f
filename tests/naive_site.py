"""Slow, obviously-correct reference of conservative backfilling under site policies
(limits, FreePools, kept GPU-node cores, maintenance windows), for the engine's
``--site`` (schedbench.plan.site).  It extends tests/naive_conservative.py's replay and
imports nothing from schedbench.

``replay_site(jobs, nodes, allocator, site) -> NaiveResult``: ``jobs`` as
naive_conservative.replay_nodes plus ``user`` and ``group``; ``site`` a dict::

    limits:      [dict(who="user"|"group", ident=int|None (each consumer), k=type,
                       items=int|None, duration=int|None, area=int|None,
                       valid="always" | [(a, b), ...])]
    freepools:   [dict(k=type, keep=int, max_cores=None, max_duration=None,
                       users=None|set, groups=None|set, valid=...)]
                 or with any_of=[dict(max_cores=..., ...), ...] instead of the four
                 conditions (the site file's unless_any)
    maintenance: [dict(nodes=[node, ...], valid=[(a, b), ...])]
    gpu_node_cores: int

Readings (S1-S6), from schedbench.plan.site's docstring and Keller's §3, §5.1, §6:

S1  A job's booking [t, t + d) must meet, at every second x of it: for every limit of its
    consumer on a type k it requests (demand = units * unit[k]) while x is valid, the
    consumer's booked demand of k at x (its other jobs' bookings, running or queued) plus
    the job's <= items; a job whose estimate exceeds the limit's duration, whose demand
    times estimate exceeds its area, or whose demand exceeds its items, books no valid
    second at all.
S2  FreePools: a job that does not meet every given ``unless`` condition (cores =
    units * unit[0] <= max_cores, estimate <= max_duration, user in users, group in
    groups) keeps, at every valid second, the plan's booked total of k plus its demand
    <= the machine's total of k minus keep.  With ``any_of`` a job that meets every
    condition of one of its tables may use the pool (conditions OR-ed across tables).
S3  Maintenance: a node with a window meeting [t, t + d) offers nothing to the job.
    Kept cores: a job without GPUs sees every GPU node with ``gpu_node_cores`` fewer
    cores (not below 0).  Either one makes the plan hold nodes (node mode, C9), except
    windows that every node has alike (the same seconds down): they bind no node, so
    the plan stays on the totals when C9 allows, and no job starts at a t whose [t, t +
    d) meets one of them.
S4  Earliest fit: the first candidate t, in increasing order, among now, every booking
    end, every validity or window end after now, where the plan (C5, with S3's view)
    places the job and S1, S2 hold (checked second by second).  A feasible start t > now
    whose t - 1 is not feasible is such an end: the second t - 1 breaks a rule that t's
    window does not contain.
S5  Rejected (status "rejected_by_limit"), never simulated: jobs refused outright (S1)
    by an always-valid limit; jobs of an always-valid FreePool they do not match whose
    demand exceeds total - keep; jobs without GPUs that no empty machine with the kept
    cores taken out can host.  Checked after naive.py's drops, in that order.
S6  Everything else is naive_conservative's (C1-C14), but for C6:
S7  Compress may find a job's earliest fit *later* than its booking: a job moved before
    it (one a FreePool lets in, or another job of its consumer) can make its booking
    break a FreePool or a limit.  The spec's rule stands: the job keeps its booking
    (site constraints are checked when a booking is made; a job never moves later in a
    compress).
"""

from __future__ import annotations

import bisect

from naive import (
    DROPPED_NO_RUNTIME,
    DROPPED_NO_SIZE,
    DROPPED_TOO_WIDE,
    NTYPES,
    REPLAYED,
    _NodeRequest,
    _Nodes,
)
from naive_conservative import (
    _Conservative,
    _Job,
    _NodesPlan,
    _result,
    _single_unit_type,
    _TotalsPlan,
)

REJECTED_BY_LIMIT = "rejected_by_limit"
FOREVER = 1 << 61


def _intervals(valid):
    return [(-FOREVER, FOREVER)] if valid == "always" else list(valid)


def _inside(x, valid):
    return any(a <= x < b for a, b in _intervals(valid))


def _demand(job, k):
    return job.need.units * job.need.unit[k]


def _refused(lim, job):
    dk = _demand(job, lim["k"])
    return (
        (lim.get("duration") is not None and job.estimate > lim["duration"])
        or (lim.get("area") is not None and dk * job.estimate > lim["area"])
        or (lim.get("items") is not None and dk > lim["items"])
    )


def _member(rule_who, rule_ident, job, other):
    """Whether ``other`` is of the same consumer as ``job`` under a rule on users/groups."""
    a = job.user if rule_who == "user" else job.group
    b = other.user if rule_who == "user" else other.group
    return a == b and (rule_ident is None or a == rule_ident)


def _applies(lim, job):
    own = job.user if lim["who"] == "user" else job.group
    return _demand(job, lim["k"]) > 0 and (lim["ident"] is None or own == lim["ident"])


def _matches(pool, job):
    if pool.get("any_of") is not None:  # S2: unless_any, one table met is enough
        return any(_matches(table, job) for table in pool["any_of"])
    conds = []
    if pool.get("max_cores") is not None:
        conds.append(_demand(job, 0) <= pool["max_cores"])
    if pool.get("max_duration") is not None:
        conds.append(job.estimate <= pool["max_duration"])
    if pool.get("users") is not None:
        conds.append(job.user in pool["users"])
    if pool.get("groups") is not None:
        conds.append(job.group in pool["groups"])
    return bool(conds) and all(conds)


class _SiteConservative(_Conservative):
    STRICT_C6 = False  # S7

    def __init__(self, jobs, plan, real, mode, site, caps):
        super().__init__(jobs, plan, real, mode)
        self.site = site
        self.caps = caps
        self.totals = [sum(c[k] for c in caps) for k in range(NTYPES)]
        ends = set()
        for rule in site.get("limits", []) + site.get("freepools", []) + site.get("maintenance", []):
            ends |= {b for _, b in _intervals(rule["valid"]) if b < FOREVER}
        self.rule_ends = sorted(ends)

    def booked(self, x, k, who=None, ident=None, job=None):
        """Booked demand of type k at second x (of job's consumer when ``who``)."""
        total = 0
        for idx, b in self.book.items():
            other = self.by_idx[idx]
            if b.frm <= x < b.to and (who is None or _member(who, ident, job, other)):
                total += _demand(other, k)
        return total

    def rules_ok(self, job, t):
        if not self.site.get("limits") and not self.site.get("freepools"):
            return True  # no rule to break at any second (a site of maintenance windows only)
        for x in range(t, t + job.d):
            for lim in self.site.get("limits", []):
                if not _applies(lim, job) or not _inside(x, lim["valid"]):
                    continue
                if _refused(lim, job):
                    return False
                if lim.get("items") is not None:
                    used = self.booked(x, lim["k"], lim["who"], lim["ident"], job)
                    if used + _demand(job, lim["k"]) > lim["items"]:
                        return False
            for pool in self.site.get("freepools", []):
                k = pool["k"]
                if _demand(job, k) == 0 or _matches(pool, job) or not _inside(x, pool["valid"]):
                    continue
                if self.booked(x, k) + _demand(job, k) > self.totals[k] - pool["keep"]:
                    return False
        return True

    def clear_of_windows(self, job, t):
        """S3 in totals mode: every node has the same windows, so one meeting [t, t + d)
        rules t out (node mode: the view does it node by node)."""
        if self.mode == "nodes":
            return True
        return not any(a < t + job.d and t < b for mw in self.site.get("maintenance", []) for a, b in mw["valid"])

    def view(self, job, least, t):
        """S3 on the window's least free amounts (node mode)."""
        if self.mode != "nodes":
            return least
        out = [list(r) for r in least]
        for mw in self.site.get("maintenance", []):
            if any(a < t + job.d and t < b for a, b in mw["valid"]):
                for node in mw["nodes"]:
                    out[node] = [0] * NTYPES
        keep = self.site.get("gpu_node_cores", 0)
        if keep and job.need.unit[1] == 0:
            for node, c in enumerate(self.caps):
                if c[1] > 0:
                    out[node][0] = max(0, out[node][0] - keep)
        return out

    def earliest_fit(self, job, now):
        assert job.idx not in self.book
        prof = self.profile(now)
        xs = [x for x, _ in prof]
        cands = sorted({now} | {b.to for b in self.book.values() if b.to > now} | {e for e in self.rule_ends if e > now})
        for t in cands:
            i = bisect.bisect_right(xs, t) - 1
            j = bisect.bisect_left(xs, t + job.d)
            least = self.plan.least([state for _, state in prof[i : max(j, i + 1)]])
            amount = self.plan.place(job, self.view(job, least, t))
            if amount is not None and self.rules_ok(job, t) and self.clear_of_windows(job, t):
                return t, amount
        raise AssertionError("no fit even after the last booking and rule end")


def merged(intervals):
    """Sorted disjoint (a, b) intervals covering the same seconds (touching ones joined)."""
    out = []
    for a, b in sorted(iv for iv in intervals if iv[1] > iv[0]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _seconds_down(windows, node):
    """The node's windows as :func:`merged` intervals."""
    return merged(iv for mw in windows if node in mw["nodes"] for iv in mw["valid"])


def _windows_differ(windows, n_nodes):
    """S3: whether some second is down on some nodes and not on others."""
    return any(_seconds_down(windows, i) != _seconds_down(windows, 0) for i in range(1, n_nodes))


def replay_site(jobs, nodes, allocator, site) -> object:
    """Conservative backfilling under ``site`` (module docstring) on heterogeneous nodes."""
    caps = [tuple(int(x) for x in nd) for nd in nodes]
    real = _Nodes(caps, allocator)
    empty = [list(c) for c in caps]
    keep = site.get("gpu_node_cores", 0)
    kept = [list(c) for c in caps]
    for c in kept:
        if c[1] > 0:
            c[0] = max(0, c[0] - keep)
    totals = [sum(c[k] for c in caps) for k in range(NTYPES)]
    ids, status, sim = [], [], []
    for i, d in enumerate(jobs):
        unit = tuple(int(x) for x in d["unit"])
        units = int(d["units"])
        pred = int(d["pred"])
        job = _Job(idx=i, job_id=int(d["job_id"]), submit=int(d["submit"]), run=int(d["run"]), pred=pred,
                   estimate=int(d.get("estimate", pred)),
                   need=_NodeRequest(units=units, unit=unit, req_nodes=int(d.get("req_nodes", -1))))
        job.user, job.group = int(d.get("user", -1)), int(d.get("group", -1))
        ids.append(job.job_id)
        if job.run < 0:
            status.append(DROPPED_NO_RUNTIME)
        elif units <= 0 or max(unit[:3]) <= 0:
            status.append(DROPPED_NO_SIZE)
        elif real.try_alloc(job, empty) is None:
            status.append(DROPPED_TOO_WIDE)
        elif any(lim["valid"] == "always" and _applies(lim, job) and _refused(lim, job)
                 for lim in site.get("limits", [])):
            status.append(REJECTED_BY_LIMIT)
        elif any(p["valid"] == "always" and _demand(job, p["k"]) > 0 and not _matches(p, job)
                 and _demand(job, p["k"]) > totals[p["k"]] - p["keep"] for p in site.get("freepools", [])):
            status.append(REJECTED_BY_LIMIT)
        elif keep and unit[1] == 0 and real.try_alloc(job, kept) is None:
            status.append(REJECTED_BY_LIMIT)
        else:
            status.append(REPLAYED)
            sim.append(job)
    types = [_single_unit_type(j) for j in sim]
    per_node = _windows_differ(site.get("maintenance", []), len(caps)) or (keep > 0 and any(c[1] > 0 for c in caps))
    if not per_node and all(k is not None for k in types):
        for j, k in zip(sim, types, strict=True):
            j.total = (k, j.need.units)
        rep = _SiteConservative(sim, _TotalsPlan(totals), real, "totals", site, caps)
    else:
        rep = _SiteConservative(sim, _NodesPlan(_Nodes(caps, allocator)), real, "nodes", site, caps)
    rep.run()
    return _result(len(jobs), ids, status, sim, rep.log, with_alloc=True)
