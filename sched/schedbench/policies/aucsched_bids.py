"""AUCSCHED's bid generator (Soner & Özturan §4.1–4.3), a numba kernel over arrays.

For each job of the window, in priority order, the bids are node sets on the 1-D node
array (node index order, SLURM's linear mode):

* **nodesets** (§4.1): maximal runs of consecutive nodes that can each take the job: host
  at least one unit (a job of free shape, the paper's type 1, "-n") or its per-node share
  (a job that fixes its nodes, types 2 and 3, "-N" with "--gres=gpu:G"), counted in the
  job's own units (:mod:`schedbench.io.jobs`).  For the paper's jobs these are its nodesets
  (n_i, n_j, c, g) at g = the job's GPUs per node, split where a node lacks the cores.
* **A**: within a nodeset that has room, the fewest nodes aligned to its beginning, and
  the fewest aligned to its end (one bid when both are the same nodes).
* **B**: the same, "without limiting the nodes to the beginning or end": the paper leaves
  the positions open; we make one B bid per nodeset, its fewest nodes from the nodeset's
  middle node (``lo + (hi - lo - k) // 2`` with k the A bid's length), when they touch
  neither end.
* **C** (only for jobs that do not ask for contiguity, ``contiguous`` column): a nodeset
  without room combined with the following nodesets until there is room, the last one
  contributing its first nodes only; fewer nodesets first.
* **spread bids** (our extension, ``spread_bids``): the paper's A, B and C bids take the
  fewest nodes that hold a job, so a core-only job always fills its nodes and can never
  leave cores beside another job's GPUs, yet both of the paper's own examples need that:
  the PRACE paper's Table 1 (J1's 4,096 cores 4 to a node beside J2's and J3's GPUs) and
  this paper's Figures 4-5 (J1's 512 cores on nodes 1-64 and 81-144, 5 to a node beside J2
  and 3 beside J3, with J4's one core on each).  Three bid sets (for jobs of free shape):

  - ``"span"`` (:data:`SPAN` bids): from each nodeset in node order, every
    node of the widest run of consecutive nodesets (a C-type combination) that has no more
    nodes than the job has units, when it holds the job and not every node would be full;
    the IP chooses the load of each node (one unit or more, eq. (14)'s r_jn).  A job asking
    for contiguity spans one nodeset only.  Emitted after the C bids; F uses A's constants
    on one nodeset and C's on several.  It reproduces both examples.
  - ``"nodeset"`` (:data:`SPREAD` bids, the option's old ``true``): a whole nodeset with
    room when it has more nodes than the A bid and no more than the job has units, emitted
    after that nodeset's A bids, F as A.  It reproduces Table 1 but not Figures 4-5, whose
    nodesets J1 would fill.
  - ``"none"`` (the default): the paper's bids as its text defines them; neither example.

* **SLURM** (§4.2, optional): the placement the run's allocator gives the job on the free
  nodes less the SLURM placements of the window's earlier jobs (Best-Fit with ``-a bf``),
  when the job fits there (never for a job asking for contiguity).

Nodesets are visited best fit first (least room, then node index) for A and B.  A job's
bids are emitted SLURM, A (each nodeset's followed by its nodeset bid), B, C, span until
MAXBIDSPERJOB.  Every bid uses all of its nodes
(R_jc^node = |N_c|), each with at least one unit (one share for a fixed shape).
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from ..core.api import argsort_stable, place, plan_order

SLURM, A, B, C, SPREAD, SPAN = 0, 1, 2, 3, 4, 5  # bid kinds
NO_SPREAD, NODESET_BIDS, SPAN_BIDS = 0, 1, 2  # the spread bid sets (``spread`` of the kernel)
SPREAD_SETS = {"none": NO_SPREAD, "nodeset": NODESET_BIDS, "span": SPAN_BIDS}
"""The values of aucsched's ``spread_bids`` option and their kernel codes."""


@kernel
def _paper_nodesets(free):
    """|S|: the number of the paper's nodesets over every GPU level g = 0 .. max free
    GPUs (maximal runs of nodes with free cores > 0 and free GPUs >= g).  free: int64
    (m, 4)."""
    m = free.shape[0]
    top = 0
    for n in range(m):
        if free[n, 1] > top:
            top = free[n, 1]
    count = 0
    for g in range(top + 1):
        inside = False
        for n in range(m):
            ok = free[n, 0] > 0 and free[n, 1] >= g
            if ok and not inside:
                count += 1
            inside = ok
    return count


@kernel
def _emit(lo, hi, job, kind, sets, bid_job, bid_kind, bid_sets, bid_ptr, bid_node, nb, nn):
    """Append bid (nodes lo..hi inclusive) as bid ``nb`` starting at node slot ``nn``;
    returns the new node slot count, or -1 when bid_node has no room."""
    if nn + hi - lo + 1 > bid_node.shape[0] or nb >= bid_job.shape[0]:
        return -1
    bid_job[nb] = job
    bid_kind[nb] = kind
    bid_sets[nb] = sets
    bid_ptr[nb] = nn
    for n in range(lo, hi + 1):
        bid_node[nn] = n
        nn += 1
    bid_ptr[nb + 1] = nn
    return nn


@kernel
def _generate(host, units, req, req_nodes, contiguous, free, alloc, slurm, spread, max_bids,
              block_lo, block_hi, block_room, key, order, tmp, hyp, node_order, node_key, node_tmp, eligible,
              out_node, out_count, bid_job, bid_kind, bid_sets, bid_ptr, bid_node):
    """Bids of the window's jobs.

    host int64 (W, m): units node n can host for job a, 0 where it cannot take the job
    (less than its share, or in maintenance); units, req_nodes int64 (W,); contiguous bool
    (W,), true for a job that asks for consecutive nodes (View.contiguous); req
    int64 (W, 4); free int64 (m, 4): the free amounts; alloc: the run's allocator state
    (its ``plan_order`` gives the SLURM bids); slurm: 1 to make SLURM bids; spread: the
    spread bids of free-shape jobs (NO_SPREAD; NODESET_BIDS: a whole nodeset with room;
    SPAN_BIDS: the nodes of consecutive nodesets, see the module docstring); max_bids:
    MAXBIDSPERJOB.  Scratch: block_lo, block_hi, block_room, order, tmp int64 (m,), key
    float64 (m,); hyp int64 (m, 4); node_order, node_tmp int64 (m,), node_key float64 (m,);
    eligible uint8 (W, m): the nodes of each job's partition and features (a SLURM bid
    is placed on them only; it is dropped when it uses a node in maintenance);
    out_node, out_count int64 (m,).  Output: bid_job, bid_kind, bid_sets int64 (cap,),
    bid_ptr int64 (cap + 1,), bid_node int64 (node cap,): bid b uses nodes
    ``bid_node[bid_ptr[b]:bid_ptr[b + 1]]``.  Returns the number of bids, -1 when the output arrays are too
    small, -2 when the allocator has no node order for SLURM bids.
    """
    W, m = host.shape
    nb = 0
    nn = 0
    bid_ptr[0] = 0
    for n in range(m):
        for k in range(4):
            hyp[n, k] = free[n, k]
    ordered = False  # whether node_order is the allocator's order of hyp as it is now
    for a in range(W):
        first = nb
        fixed = req_nodes[a] > 0
        need = req_nodes[a] if fixed else units[a]  # nodes (fixed) or units (free) to cover
        # SLURM bid
        if slurm == 1 and contiguous[a] <= 0:
            if not ordered:  # only a SLURM bid changes hyp
                if plan_order(alloc, hyp, node_order, node_key, node_tmp) < 0:
                    return -2
                ordered = True
            used = place(hyp, node_order, np.int64(0), units[a], req[a], req_nodes[a], out_node, out_count, eligible[a])
            ok = used > 0
            for i in range(max(used, 0)):
                if host[a, out_node[i]] == 0:
                    ok = False
            if ok:
                if nn + used > bid_node.shape[0] or nb >= bid_job.shape[0]:
                    return -1
                bid_job[nb] = a
                bid_kind[nb] = SLURM
                bid_sets[nb] = 1
                bid_ptr[nb] = nn
                for i in range(used):
                    node = out_node[i]
                    bid_node[nn] = node
                    nn += 1
                    for k in range(4):
                        hyp[node, k] -= out_count[i] * req[a, k]
                bid_ptr[nb + 1] = nn
                ordered = False
                nb += 1
        # nodesets of this job
        nblocks = 0
        inside = False
        for n in range(m + 1):
            ok = n < m and host[a, n] > 0
            if ok and not inside:
                block_lo[nblocks] = n
                block_room[nblocks] = 0
            if ok:
                block_room[nblocks] += 1 if fixed else host[a, n]
            if not ok and inside:
                block_hi[nblocks] = n - 1
                nblocks += 1
            inside = ok
        if nblocks == 0:
            continue
        for i in range(nblocks):
            key[i] = block_room[i] * 1.0
        argsort_stable(key[:nblocks], order[:nblocks], tmp[:nblocks])
        # A then B, best fit first
        for kind in (A, B):
            for p in range(nblocks):
                if nb - first >= max_bids:
                    break
                i = order[p]
                if block_room[i] < need:
                    continue
                lo = block_lo[i]
                hi = block_hi[i]
                # the fewest nodes from lo
                e = lo
                if fixed:
                    e = lo + need - 1
                else:
                    got = 0
                    while got < need:
                        got += host[a, e]
                        e += 1
                    e -= 1
                length = e - lo + 1
                if kind == A:
                    nn = _emit(lo, e, a, A, 1, bid_job, bid_kind, bid_sets, bid_ptr, bid_node, nb, nn)
                    if nn < 0:
                        return -1
                    nb += 1
                    # the fewest nodes ending at hi
                    s = hi
                    if fixed:
                        s = hi - need + 1
                    else:
                        got = 0
                        while got < need:
                            got += host[a, s]
                            s -= 1
                        s += 1
                    if (s != lo or e != hi) and nb - first < max_bids:  # not the same nodes
                        nn = _emit(s, hi, a, A, 1, bid_job, bid_kind, bid_sets, bid_ptr, bid_node, nb, nn)
                        if nn < 0:
                            return -1
                        nb += 1
                    # our extension: the whole nodeset, one unit or more on each node
                    if (spread == NODESET_BIDS and not fixed and hi - lo + 1 > length and hi - lo + 1 <= units[a]
                            and nb - first < max_bids):
                        nn = _emit(lo, hi, a, SPREAD, 1, bid_job, bid_kind, bid_sets, bid_ptr, bid_node, nb, nn)
                        if nn < 0:
                            return -1
                        nb += 1
                else:
                    s = lo + (hi - lo + 1 - length) // 2
                    if s <= lo:
                        continue
                    e = s
                    if fixed:
                        e = s + need - 1
                    else:
                        got = 0
                        while got < need and e <= hi:
                            got += host[a, e]
                            e += 1
                        if got < need:
                            continue
                        e -= 1
                    if e >= hi:
                        continue
                    nn = _emit(s, e, a, B, 1, bid_job, bid_kind, bid_sets, bid_ptr, bid_node, nb, nn)
                    if nn < 0:
                        return -1
                    nb += 1
        # C: combinations of consecutive nodesets, fewer nodesets first
        if contiguous[a] <= 0:
            for span in range(2, nblocks + 1):
                if nb - first >= max_bids:
                    break
                for i in range(nblocks - span + 1):
                    if nb - first >= max_bids:
                        break
                    if block_room[i] >= need:
                        continue
                    room = 0
                    for q in range(i, i + span - 1):
                        room += block_room[q]
                    last = i + span - 1
                    if room >= need or room + block_room[last] < need:
                        continue  # fewer nodesets suffice, or these do not
                    if nn + (block_hi[last] - block_lo[i] + 1) > bid_node.shape[0] or nb >= bid_job.shape[0]:
                        return -1
                    bid_job[nb] = a
                    bid_kind[nb] = C
                    bid_sets[nb] = span
                    bid_ptr[nb] = nn
                    for q in range(i, last):
                        for n in range(block_lo[q], block_hi[q] + 1):
                            bid_node[nn] = n
                            nn += 1
                    n = block_lo[last]
                    while room < need:
                        room += 1 if fixed else host[a, n]
                        bid_node[nn] = n
                        nn += 1
                        n += 1
                    bid_ptr[nb + 1] = nn
                    nb += 1
        # span: every node of consecutive nodesets, the loads left to the IP
        if spread == SPAN_BIDS and not fixed:
            for i in range(nblocks):
                if nb - first >= max_bids:
                    break
                nodes = 0
                room = 0
                last = i - 1
                for q in range(i, nblocks):  # the widest span from nodeset i, one unit or more a node
                    size = block_hi[q] - block_lo[q] + 1
                    if nodes + size > units[a] or (q > i and contiguous[a] > 0):
                        break
                    nodes += size
                    room += block_room[q]
                    last = q
                if last < i or room < units[a]:
                    continue
                fewest = 0  # the fewest nodes from its first that hold the job
                got = 0
                for q in range(i, last + 1):
                    for n in range(block_lo[q], block_hi[q] + 1):
                        if got < units[a]:
                            got += host[a, n]
                            fewest += 1
                if fewest >= nodes:
                    continue  # every node full: an A or C bid already
                if nn + nodes > bid_node.shape[0] or nb >= bid_job.shape[0]:
                    return -1
                bid_job[nb] = a
                bid_kind[nb] = SPAN
                bid_sets[nb] = last - i + 1
                bid_ptr[nb] = nn
                for q in range(i, last + 1):
                    for n in range(block_lo[q], block_hi[q] + 1):
                        bid_node[nn] = n
                        nn += 1
                bid_ptr[nb + 1] = nn
                nb += 1
    return nb


# F_jc constants (Table 9): (k1, k2, k3) per bid kind, for type 1 jobs and types 2/3.
_K = {
    False: {A: (0.0, 0.25, 0.0), B: (0.25, 0.25, 0.0), C: (0.5, 0.25, 0.25)},
    True: {A: (0.0, 0.0, 0.0), B: (0.5, 0.0, 0.0), C: (0.5, 0.0, 0.5)},
}


def preference(kind: np.ndarray, fixed: np.ndarray, nodes: np.ndarray, sets: np.ndarray, n_nodes: int,
               n_sets: int) -> np.ndarray:
    """F_jc by eq. (19) with Table 9's constants, float64 per bid; SLURM bids 1
    (k1 = k2 = k3 = 0); a spread bid on one nodeset has A's constants, a span bid on
    several C's.  kind, fixed (bool: the job fixes its nodes), nodes (|N_c|), sets
    (|S_c|): (bids,)."""
    out = np.ones(kind.shape[0])
    for b in range(kind.shape[0]):
        if kind[b] == SLURM:
            continue
        k = int(kind[b])
        if k == SPREAD or (k == SPAN and sets[b] == 1):  # one whole nodeset: aligned to both of its ends
            k = A
        elif k == SPAN:
            k = C
        k1, k2, k3 = _K[bool(fixed[b])][k]
        out[b] = 1.0 - k1 - k2 * nodes[b] / (n_nodes + 1) - k3 * sets[b] / (n_sets + 1)
    return out


class Bids:
    """Scratch and output arrays of :func:`generate`, reused across decision points."""

    def __init__(self, n_nodes: int):
        m = n_nodes
        self.block_lo, self.block_hi, self.block_room = (np.zeros(m + 1, np.int64) for _ in range(3))
        self.key = np.zeros(m + 1)
        self.order, self.tmp = np.zeros(m + 1, np.int64), np.zeros(m + 1, np.int64)
        self.hyp = np.zeros((m, 4), np.int64)
        self.node_order, self.node_tmp = np.zeros(m, np.int64), np.zeros(m, np.int64)
        self.node_key = np.zeros(m)
        self.out_node, self.out_count = np.zeros(m, np.int64), np.zeros(m, np.int64)
        self.cap_bids = 0
        self.cap_nodes = 0

    def generate(self, host, units, req, req_nodes, contiguous, free, alloc, slurm: bool, max_bids: int,
                 spread: bool | str = False, eligible=None):
        """(bid_job, bid_kind, bid_sets, bid_ptr, bid_node) arrays of the
        window's bids (see :func:`_generate`); ``None`` when the allocator has no node
        order for SLURM bids.  ``spread``: a key of :data:`SPREAD_SETS` (True: "nodeset",
        False: "none").  ``eligible``: bool or uint8 (W, m), the nodes of each job's
        partition and features (None: every node)."""
        code = SPREAD_SETS[spread] if isinstance(spread, str) else (NODESET_BIDS if spread else NO_SPREAD)
        eligible = (np.ones(host.shape, np.uint8) if eligible is None
                    else np.ascontiguousarray(eligible, dtype=np.uint8))
        W = host.shape[0]
        need_bids = W * max_bids
        if need_bids > self.cap_bids:
            self.cap_bids = need_bids
            self.bid_job, self.bid_kind, self.bid_sets = (np.zeros(need_bids, np.int64) for _ in range(3))
            self.bid_ptr = np.zeros(need_bids + 1, np.int64)
        if self.cap_nodes == 0:
            self.cap_nodes = max(1024, 4 * host.shape[1])
            self.bid_node = np.zeros(self.cap_nodes, np.int64)
        while True:
            nb = _generate(
                host, units, req, req_nodes, contiguous, free, alloc, np.int64(1 if slurm else 0),
                np.int64(code), np.int64(max_bids),
                self.block_lo, self.block_hi, self.block_room, self.key, self.order, self.tmp, self.hyp,
                self.node_order, self.node_key, self.node_tmp, eligible, self.out_node, self.out_count,
                self.bid_job, self.bid_kind, self.bid_sets, self.bid_ptr, self.bid_node,
            )
            if nb == -2:
                return None
            if nb >= 0:
                break
            self.cap_nodes *= 2
            self.bid_node = np.zeros(self.cap_nodes, np.int64)
        end = self.bid_ptr[nb]
        return (self.bid_job[:nb], self.bid_kind[:nb], self.bid_sets[:nb], self.bid_ptr[: nb + 1],
                self.bid_node[:end])

    @staticmethod
    def paper_nodesets(free: np.ndarray) -> int:
        return int(_paper_nodesets(free))
