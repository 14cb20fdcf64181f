"""Conservative backfilling's state: the scheduler's scalars (``S_*``), the booking
columns (``B_*``), the two state classes and the site's arrays on the plan; and
:func:`_by_state`, which compiles a kernel stub to its pool or its node variant."""

from __future__ import annotations

import inspect
from typing import NamedTuple

import numpy as np
from numba.extending import overload

from ..._jit import inline_kernel
from ...core.layout import J_PRED, N_RES
from ...plan import rusv
from ...plan.rusv import M_AVL, M_KIND, M_MAX_AVL, M_MIN_DIST, X_WIDTH, Kind

# Slots of the scheduler's scal, int64 (N_SCAL,)
S_WN = 0  # wake-heap entries
S_NARR = 1  # arrivals of this instant (in sched.arrivals)
S_RELEASE = 2  # a booking reaching past now was removed at this instant
S_EXTENDED = 3  # a booking was extended at this instant
S_NOW = 4  # the instant the flags above belong to
S_TRIM = 5  # plan rows ending at or before this instant have been dropped
S_AMAX = 6  # most arrivals at one instant (sizes the room check)
S_GROW = 7  # the loop returned for more room
S_CAP_NEED = 8  # rows every vector needs before the next pass
S_NSTART = 9  # candidates in sched.starting
S_VACATED = 10  # the latest end of what the last (or running) compression's moves vacated (-1 after rebooking all)
S_PMF_N = 11  # rows of sched.pmf that describe the plan as it is (compression's prefix maxima)
S_PMF_TYPE = 12  # the resource type sched.pmf was built for
S_USED = 13  # nodes of the last node fit's placement
S_BN = 14  # rows used in sched.bnodes
S_SITE = 15  # 1 when some job has site constraints (limits, FreePools)
S_FREED_NOW = 16  # the latest end of the bookings released at this instant (-1 when none)
S_FREED = 17  # compression: the latest end of the room freed since the job being tried was last tried
S_ENDS_ADDED = 18  # nodes: booking ends ever written to sched.ends_log (the next one's number)
S_LIVE = 19  # nodes: compression's live nodes in sched.wvalid column 3 (-1: every node is live)
S_FULL_AT = 20  # nodes: the instant sched.wvalid columns 4-5 (the full-until order) were built at (-1: stale)
S_STAMP = 21  # nodes: the number of compression's last per-node bound (its live nodes hold it in wvalid column 2)
S_FULL_AT_GPU = 22  # nodes: as S_FULL_AT, for sched.wvalid's GPU order (W_KEY[1], W_ORDER[1])
# nodes, compression: the last try that found nothing since the plan last changed (fit._failed_like)
S_MEMO_LIMIT = 23  # the instant before which it found no window (-1: none remembered)
S_MEMO_CLASS = 24  # its job's node class, units, booking length, node count and cores kept on GPU nodes
S_MEMO_UNITS = 25
S_MEMO_D = 26
S_MEMO_RN = 27
S_MEMO_KEEP = 28
S_MEMO_REQ = 29  # .. S_MEMO_REQ + N_RES - 1: its request per unit
S_TRY_LIMIT = 33  # the running try's limit when it is one to remember (-1: not)
S_WINDOWS = 34  # pool: 1 when the site has maintenance windows (every node the same ones)
S_WINDOW_GAP = 35  # pool: the longest gap between two of those windows (s; a longer booking fits only after them)
S_FREED_ADDED = 36  # nodes: entries ever written to the freed-room ring of sched.ends_log
S_FULL_AT_MIC = 37  # nodes: as S_FULL_AT, for the MIC order (W_KEY[2], W_ORDER[2])
S_FULL_AT_OF = (S_FULL_AT, S_FULL_AT_GPU, S_FULL_AT_MIC)  # by order (W_KEY)
S_LIVE_KEY = 38  # nodes: the wvalid column of the key the live nodes are listed by (-1: not in key order)
N_SCAL = 39

W_ROW = 6  # sched.wvalid's first row-cursor column (nodes; see ConservativeNodes)
# sched.wvalid's full-until orders (nodes): order o's key column (the instant until which
# the node hosts nothing of a job of that order's types) and its node column; o = 0 the
# first type (cores), 1 cores and GPUs, 2 cores and MICs
W_KEY = (4, W_ROW + N_RES, W_ROW + N_RES + 2)
W_ORDER = (5, W_ROW + N_RES + 1, W_ROW + N_RES + 3)
# sched.wvalid's columns for one freed-floor computation (nodes; :func:`.fit._freed_floor`):
# a node's freed-room entries taken as one, the earliest window start they allow and the
# latest start bar (-1 outside that computation)
W_FREED_FROM = max(W_ORDER) + 1
W_FREED_TO = W_FREED_FROM + 1
W_COLUMNS = W_FREED_TO + 1

# Columns of sched.book, int64 (n, 6): booking begin and end (s; -1 when none), first row
# and row count of the booked nodes in sched.bnodes (node mode), the number of booking
# ends added before the job was last booked or tried (node mode; :func:`fit._new_end_from`),
# and sched.scal[S_FREED_ADDED] then (node mode, -1 before; :func:`fit._freed_floor`).
B_BEGIN, B_END, B_PTR, B_COUNT, B_TRIED, B_FREED = range(6)

# Entries each ring of sched.ends_log remembers (booking ends; freed room): older ones are overwritten
ENDS_LOG = 1 << 13


class SitePlan(NamedTuple):
    """The site policies on the plan (:mod:`schedbench.plan.site`, :class:`SiteArrays` for
    the arrays' meaning), plus lslots int64 (nvec, cap, 3) and lmeta int64 (nvec, 5): one
    used RUSV per consumer and resource type that has an items limit (Keller's usdRS),
    holding that consumer's bookings.  ``gpu`` int64 (1,): cores of a GPU node kept for
    GPU jobs."""

    valid: np.ndarray
    vptr: np.ndarray
    cptr: np.ndarray
    crow: np.ndarray
    jvptr: np.ndarray
    jvrow: np.ndarray
    lslots: np.ndarray
    lmeta: np.ndarray
    mspan: np.ndarray
    mwin: np.ndarray
    mends: np.ndarray
    gpu: np.ndarray


class ConservativePool(NamedTuple):
    """Conservative backfilling on resource totals.

    slots int64 (N_RES, cap, 3) and meta int64 (N_RES, 5): the plan, one used RUSV per
    resource type; book int64 (n, 6): each job's booking (``B_*``); ptype int64 (n,): the
    job's resource type and size int64 (n,): its units; wake int64 (n + 16, 3): min-heap
    of (time, code), code j >= 0 a planned start of job j, -(j + 1) the expiry of job j's
    booking, at most one entry per job, whose row column 2 keeps (:mod:`.wake`); arrivals, starting int64 (n,): buffers; pmf int64 (2 + N_RES
    X_WIDTH, cap): rows 0-1 the plan's prefix maximum of free items (stop, max free over
    [now, stop)), then each type's slot index (:mod:`schedbench.plan.rusv`, "the slot
    index"; :func:`_index_of`), kept by every booking, built when its vector passes
    INDEX_ON_ROWS rows; scal int64 (N_SCAL,); site: :class:`SitePlan`.  (The indexes
    share pmf's array rather than having a field: one more array in this state, passed
    to every kernel taking it, made a whole HPC2N replay 2.3x slower.)"""

    slots: np.ndarray
    meta: np.ndarray
    book: np.ndarray
    ptype: np.ndarray
    size: np.ndarray
    wake: np.ndarray
    arrivals: np.ndarray
    starting: np.ndarray
    pmf: np.ndarray
    scal: np.ndarray
    site: SitePlan


class ConservativeNodes(NamedTuple):
    """Conservative backfilling with node bookings.  As :class:`ConservativePool`, plus:
    slots/meta hold N_RES + 1 vectors, the last counting the bookings that end at each
    instant (its covered seconds are exactly the booking ends, the candidate starts);
    nslots int64 (m * N_RES, cap, 3) and nmeta int64 (m * N_RES, 5): one used RUSV per
    node and resource type (Keller's nRS, row node * N_RES + k); bnodes int64 (rows, 3):
    (node, units, job) of queued jobs' booked nodes, appended, compacted when full;
    wfree int64 (m, N_RES): each node's least free amount over a candidate window; wvalid
    int64 (m, 12 + N_RES): during one earliest-fit search, for each node the instant before which
    its row of wfree (the job's types) stays exact for every later candidate window
    (column 0; -1: not computed), and the instant before which it cannot rise (column 1);
    during compression's search, column 3 lists the eligible nodes that may host some of
    the job before its booking (the live ones, sched.scal[S_LIVE] of them; the search
    reads no other node), and column 2 holds sched.scal[S_STAMP] on them (and minus it
    on the job's own nodes that are not live); three full-until orders, o = 0 (cores),
    1 (cores and GPUs), 2 (cores and MICs): column W_KEY[o], the instant until which
    some of the order's types is at capacity on the node from now on (INF without one of
    them), and column W_ORDER[o] the nodes in that order (built at sched.scal[S_FULL_AT],
    S_FULL_AT_GPU, S_FULL_AT_MIC, when a search first needs it at an instant and after
    each move): the nodes full until a booking begins, a suffix of the order of the job's
    types, are left out of compression's bound without being read, and the live nodes
    are listed in that order (its key column in sched.scal[S_LIVE_KEY]); columns
    W_ROW + k (k < N_RES): during one earliest-fit search, a row of the node's vector of
    type k at or before the first whose stop is after the search's candidate (candidates
    only move forward, so the next search of that vector starts there: 0 at the search's
    start); columns W_FREED_FROM and W_FREED_TO, scratch of :func:`.fit._freed_floor`;
    order, tmp int64 (m,) and key float64 (m,): the allocator's order over it; npmf int64
    (m * N_RES, cap, 3) and npmf_n int64 (m * N_RES,): per node vector, compression's
    prefix minimum of the used amount and longest free run (:func:`.pruning._build_npmf`;
    -1: not built since the vector or the instant last changed); ends_log int64 (4 ENDS_LOG,),
    two rings: the end of every booking added (new, moved, extended), end number i at i %
    ENDS_LOG (sched.scal[S_ENDS_ADDED] so far), so that compression knows which candidate
    instants are new since a job's last try; and the room freed by every booking removed
    (released, moved, rebooked), one entry per node, entry i (sched.scal[S_FREED_ADDED]
    so far) at ENDS_LOG + i % ENDS_LOG (the node), 2 ENDS_LOG + i % ENDS_LOG and 3
    ENDS_LOG + i % ENDS_LOG (the span [from, to) of the removed booking, from trimmed to
    the plan's start), the only room freed since."""

    slots: np.ndarray
    meta: np.ndarray
    book: np.ndarray
    ptype: np.ndarray
    size: np.ndarray
    wake: np.ndarray
    arrivals: np.ndarray
    starting: np.ndarray
    pmf: np.ndarray
    scal: np.ndarray
    site: SitePlan
    nslots: np.ndarray
    nmeta: np.ndarray
    bnodes: np.ndarray
    wfree: np.ndarray
    wvalid: np.ndarray
    order: np.ndarray
    key: np.ndarray
    tmp: np.ndarray
    npmf: np.ndarray
    npmf_n: np.ndarray
    ends_log: np.ndarray


_OVERLOAD_OPTIONS = dict(nogil=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)


@inline_kernel
def _orders_stale(scal):
    """(nodes) Every full-until order of sched.wvalid is to be built again before use."""
    for slot in S_FULL_AT_OF:
        scal[slot] = -1


def _by_state(stub, pool_impl, node_impl, inline_pool=False, inline_nodes=False):
    """Make ``stub`` callable from kernels: it compiles to ``pool_impl`` or ``node_impl``
    by the class of its first argument (as the core's hooks do).  ``inline_pool`` /
    ``inline_nodes``: that variant is inlined where it is called (a thin one on a hot
    path, or one with a single caller, where a call, which passes every array of the
    states it takes, would cost more than its work); otherwise it stays a call."""

    def typing_for(nodes):
        # nodes: True (the node state only), False (any other), None (any)
        def typing(*args):
            on_nodes = getattr(args[0], "instance_class", None) is ConservativeNodes
            if nodes is not None and on_nodes != nodes:
                return None
            return (node_impl if on_nodes else pool_impl).py_func

        typing.__signature__ = inspect.signature(stub)
        return typing

    def inlined(yes):
        return {"inline": "always"} if yes else {}

    if inline_pool == inline_nodes:
        overload(stub, jit_options=_OVERLOAD_OPTIONS, **inlined(inline_pool))(typing_for(None))
    else:
        overload(stub, jit_options=_OVERLOAD_OPTIONS, **inlined(inline_pool))(typing_for(False))
        overload(stub, jit_options=_OVERLOAD_OPTIONS, **inlined(inline_nodes))(typing_for(True))
    return stub


def _vectors(avl: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """Empty used vectors, one per entry of ``avl``: slots (v, cap, 3), meta (v, 5)."""
    meta = np.zeros((avl.size, 5), dtype=np.int64)
    meta[:, M_MAX_AVL] = avl
    meta[:, M_AVL] = avl
    meta[:, M_MIN_DIST] = 1
    meta[:, M_KIND] = int(Kind.USED)
    return np.zeros((avl.size, cap, 3), dtype=np.int64), meta


# The pool's slot index: blocks of BLOCK_ROWS rows, built past INDEX_ON_ROWS rows and
# dropped below INDEX_OFF_ROWS (read here, in Python, so that a test may set them lower).
BLOCK_ROWS = rusv.BLOCK_ROWS
INDEX_ON_ROWS = rusv.INDEX_ON_ROWS
INDEX_OFF_ROWS = rusv.INDEX_OFF_ROWS


def _pool_pmf(vectors: int, cap: int) -> np.ndarray:
    """A pool's pmf array with ``vectors`` empty slot indexes (no blocks yet) after its
    two rows: int64 (2 + vectors X_WIDTH, cap), thresholds in each index's header."""
    pmf = np.zeros((2 + vectors * rusv.X_WIDTH, cap), dtype=np.int64)
    _reset_indexes(pmf)
    return pmf


def _reset_indexes(pmf: np.ndarray) -> None:
    """Empty every slot index in ``pmf`` (after it grew: each is built again at its
    vector's next search, if still long enough)."""
    for k in range((pmf.shape[0] - 2) // rusv.X_WIDTH):
        index = pmf[2 + k * rusv.X_WIDTH : 2 + (k + 1) * rusv.X_WIDTH]
        index[:, 0] = 0
        index[1, 0] = BLOCK_ROWS
        index[rusv.X_ON, 0] = INDEX_ON_ROWS
        index[rusv.X_OFF, 0] = INDEX_OFF_ROWS


@inline_kernel
def _index_of(sched, k):
    """Type k's slot index (pool): int64 (X_WIDTH, cap), rows of sched.pmf."""
    return sched.pmf[2 + k * X_WIDTH : 2 + (k + 1) * X_WIDTH]


@inline_kernel
def _d(jobs, j):
    """The booking length of job j: max(pred, 1)."""
    return max(jobs[j, J_PRED], 1)
