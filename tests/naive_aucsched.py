"""A slow, obviously-correct AUCSCHED bid generator written from the paper's §4.1–4.2 and
the choices documented in :mod:`schedbench.policies.aucsched_bids`, and brute-force
optima of tiny IPSCHED and AUCSCHED problems.  Plain Python lists, no numba."""

from __future__ import annotations

import itertools

SLURM, A, B, C, SPREAD, SPAN = 0, 1, 2, 3, 4, 5


def host(free_node, req):
    return min(free_node[k] // req[k] for k in range(4) if req[k] > 0)


def nodesets(hosts, fixed):
    """[(lo, hi, room)] maximal runs of nodes with host > 0; room in nodes (fixed) or units."""
    out = []
    n = 0
    m = len(hosts)
    while n < m:
        if hosts[n] == 0:
            n += 1
            continue
        lo = n
        while n < m and hosts[n] > 0:
            n += 1
        hi = n - 1
        out.append((lo, hi, (hi - lo + 1) if fixed else sum(hosts[lo : hi + 1])))
    return out


def fewest_from(hosts, start, step, need, fixed, limit):
    """Nodes from ``start`` walking by ``step`` (+1 or -1) until ``need`` is covered,
    not passing ``limit``; None if it cannot."""
    got, nodes, n = 0, [], start
    while got < need:
        if (step > 0 and n > limit) or (step < 0 and n < limit):
            return None
        nodes.append(n)
        got += 1 if fixed else hosts[n]
        n += step
    return sorted(nodes)


def slurm_placement(free, order_key, units, req, req_nodes):
    """The spec's allocation rule visiting nodes by ``order_key(free)``."""
    order = order_key(free)
    if req_nodes > 0:
        per = units // req_nodes
        nodes = [n for n in order if host(free[n], req) >= per][:req_nodes]
        return (nodes, [per] * len(nodes)) if len(nodes) == req_nodes else None
    left, nodes, counts = units, [], []
    for n in order:
        h = host(free[n], req)
        if h > 0:
            take = min(h, left)
            nodes.append(n)
            counts.append(take)
            left -= take
            if left == 0:
                return nodes, counts
    return None


def best_fit_order(free):
    return sorted(range(len(free)), key=lambda n: (free[n][0] + free[n][1] + free[n][2], n))


def bids(hosts_all, jobs, free, max_bids, slurm=True, spread=False, order_key=best_fit_order):
    """[(job position, kind, nodesets used, sorted nodes)] in emission order.  ``jobs``:
    [(units, req (4,), req_nodes, contiguous)]; hosts_all[a][n]: units node n can host for
    job a (0 where it cannot take it).  ``spread``: "none", "nodeset" (True) or "span"."""
    if isinstance(spread, bool):
        spread = "nodeset" if spread else "none"
    hyp = [list(r) for r in free]
    out = []
    for a, (units, req, req_nodes, contiguous) in enumerate(jobs):
        mine = []
        fixed = req_nodes > 0
        need = req_nodes if fixed else units
        hosts = hosts_all[a]
        if slurm and not contiguous:
            spot = slurm_placement(hyp, order_key, units, req, req_nodes)
            if spot is not None and all(hosts[n] > 0 for n in spot[0]):
                mine.append((a, SLURM, 1, spot[0]))
                for n, c in zip(*spot, strict=True):
                    for k in range(4):
                        hyp[n][k] -= c * req[k]
        sets = nodesets(hosts, fixed)
        best = sorted(range(len(sets)), key=lambda i: (sets[i][2], i))
        for i in best:
            lo, hi, room = sets[i]
            if room < need:
                continue
            first = fewest_from(hosts, lo, +1, need, fixed, hi)
            last = fewest_from(hosts, hi, -1, need, fixed, lo)
            mine.append((a, A, 1, first))
            if last != first:
                mine.append((a, A, 1, last))
            if spread == "nodeset" and not fixed and hi - lo + 1 > len(first) and hi - lo + 1 <= units:
                mine.append((a, SPREAD, 1, list(range(lo, hi + 1))))
        for i in best:
            lo, hi, room = sets[i]
            if room < need:
                continue
            length = len(fewest_from(hosts, lo, +1, need, fixed, hi))
            s = lo + (hi - lo + 1 - length) // 2
            if s <= lo:
                continue
            mid = fewest_from(hosts, s, +1, need, fixed, hi)
            if mid is None or mid[-1] >= hi:
                continue
            mine.append((a, B, 1, mid))
        if not contiguous:
            for span in range(2, len(sets) + 1):
                for i in range(len(sets) - span + 1):
                    if sets[i][2] >= need:
                        continue
                    room = sum(s[2] for s in sets[i : i + span - 1])
                    last = sets[i + span - 1]
                    if room >= need or room + last[2] < need:
                        continue
                    nodes = [n for s in sets[i : i + span - 1] for n in range(s[0], s[1] + 1)]
                    n = last[0]
                    while room < need:
                        room += 1 if fixed else hosts[n]
                        nodes.append(n)
                        n += 1
                    mine.append((a, C, span, nodes))
        if spread == "span" and not fixed:
            for i in range(len(sets)):
                nodes, room, used = [], 0, 0
                for q in range(i, len(sets)):  # the widest run of nodesets from i with <= units nodes
                    lo, hi, r = sets[q]
                    if len(nodes) + hi - lo + 1 > units or (q > i and contiguous):
                        break
                    nodes += range(lo, hi + 1)
                    room += r
                    used += 1
                if not nodes or room < units:
                    continue
                cumulative = list(itertools.accumulate(hosts[n] for n in nodes))
                fewest = next(k + 1 for k, c in enumerate(cumulative) if c >= units)
                if fewest < len(nodes):  # not every node full
                    mine.append((a, SPAN, used, nodes))
        out.extend(mine[:max_bids])
    return out


def paper_nodesets(free):
    """|S| over GPU levels 0 .. max free GPUs (the paper's Figure 2)."""
    top = max(r[1] for r in free)
    count = 0
    for g in range(top + 1):
        inside = False
        for r in free:
            ok = r[0] > 0 and r[1] >= g
            count += ok and not inside
            inside = ok
    return count


def _placements(units, req, req_nodes, free, nodes):
    """Every placement of a job on ``nodes`` as {node: units}: a fixed shape's share on
    exactly req_nodes of them, or a free spread of units."""
    if req_nodes > 0:
        per = units // req_nodes
        for pick in itertools.combinations(nodes, req_nodes):
            yield {n: per for n in pick}
        return
    caps = [min(host(free[n], req), units) for n in nodes]
    for counts in itertools.product(*(range(c + 1) for c in caps)):
        if sum(counts) == units:
            yield {n: c for n, c in zip(nodes, counts, strict=True) if c}


def ipsched_optimum(jobs, prio, free, n_nodes, weights=None):
    """Largest sum_j w_j (s_j - nodes_j / (2 n_nodes)) over feasible joint placements
    (brute force).  jobs: [(units, req, req_nodes)]."""
    weights = weights or prio
    best = 0.0
    options = []
    for units, req, req_nodes in jobs:
        options.append([None, *_placements(units, req, req_nodes, free, list(range(len(free))))])
    for choice in itertools.product(*options):
        used = [[0] * 4 for _ in free]
        value = 0.0
        ok = True
        for (_units, req, _), w, place in zip(jobs, weights, choice, strict=True):
            if place is None:
                continue
            for n, c in place.items():
                for k in range(4):
                    used[n][k] += c * req[k]
            value += w * (1 - len(place) / (2 * n_nodes))
        for n in range(len(free)):
            if any(used[n][k] > free[n][k] for k in range(4)):
                ok = False
        if ok:
            best = max(best, value)
    return best


_TABLE9 = {  # (k1, k2, k3) by (fixed shape, kind)
    (False, A): (0.0, 0.25, 0.0), (False, B): (0.25, 0.25, 0.0), (False, C): (0.5, 0.25, 0.25),
    (True, A): (0.0, 0.0, 0.0), (True, B): (0.5, 0.0, 0.0), (True, C): (0.5, 0.0, 0.5),
}


def preference(kind, fixed, nodes, sets, n_nodes, n_sets):
    """F_jc of eq. (19): SLURM bids 1, a spread bid on one nodeset as A, a span bid on
    several nodesets as C."""
    if kind == SLURM:
        return 1.0
    if kind == SPREAD or (kind == SPAN and sets == 1):
        kind = A
    elif kind == SPAN:
        kind = C
    k1, k2, k3 = _TABLE9[(fixed, kind)]
    return 1.0 - k1 - k2 * nodes / (n_nodes + 1) - k3 * sets / (n_sets + 1)


def _bid_placements(units, req_nodes, hosts, nodes):
    """Every load of a bid: a fixed shape's share on each of its nodes, or a free shape's
    units with one or more on every node of the bid (R_jc^node = |N_c|), at most
    ``hosts[n]`` on node n."""
    if req_nodes > 0:
        yield {n: units // req_nodes for n in nodes}
        return
    caps = [min(hosts[n], units) for n in nodes]
    for counts in itertools.product(*(range(1, c + 1) for c in caps)):
        if sum(counts) == units:
            yield dict(zip(nodes, counts, strict=True))


def aucsched_optimum(jobs, prio, free, hosts_all, all_bids):
    """Largest sum of (P_j + alpha F_jc) over the chosen bids, at most one per job, every
    chosen bid loaded within the nodes' free amounts (depth-first with capacity pruning).
    jobs: [(units, req, req_nodes)]; prio: P_j; hosts_all[a][n]: the units node n can host
    for job a; all_bids: [(job position, kind, nodesets used, nodes)] as :func:`bids`."""
    n_sets = paper_nodesets(free)
    alpha = min(prio[a] for a, *_ in all_bids) / (len(all_bids) + 1)
    by_job = [[] for _ in jobs]
    for a, kind, sets, nodes in all_bids:
        units, req, req_nodes = jobs[a]
        value = prio[a] + alpha * preference(kind, req_nodes > 0, len(nodes), sets, len(free), n_sets)
        by_job[a].append((value, [*_bid_placements(units, req_nodes, hosts_all[a], nodes)]))
    left = [list(r) for r in free]

    def best(a):
        if a == len(jobs):
            return 0.0
        top = best(a + 1)  # job a starts nowhere
        req = jobs[a][1]
        for value, loads in by_job[a]:
            for load in loads:
                if all(left[n][k] >= c * req[k] for n, c in load.items() for k in range(4)):
                    for n, c in load.items():
                        for k in range(4):
                            left[n][k] -= c * req[k]
                    top = max(top, value + best(a + 1))
                    for n, c in load.items():
                        for k in range(4):
                            left[n][k] += c * req[k]
        return top

    return best(0)
