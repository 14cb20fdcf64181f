"""Resource usage vectors (Keller, "A Data Structure for Planning Based Workload Management
of Heterogeneous HPC Systems", OpenCCS, §4): the plan's data structure.

A RUSV is a time-sorted vector of *slots* (start, stop, items) for one resource, storing
either used items (``Kind.USED``) or free items (``Kind.FREE``), with ``max_avl`` (the
resource's items), ``avl`` (``max_avl`` minus a defect) and ``min_dist``.  Readings of the
paper, each deliberate:

* Intervals are half-open seconds ``[start, stop)``; ``stop = INF`` stands for the paper's
  ``stop = 0`` ("for ever").  Where no slot is stored the value is the *implicit* one:
  0 used items, or ``avl`` free items.
* Normalisation after every operation (§4.1): a slot that is "free" is dropped (used
  items <= 0, or free items >= avl: so values are clamped to the implicit one, as the
  paper's rule implies), and two consecutive slots with equal items are joined when the
  gap between them is < ``min_dist`` (the paper's "distance <= minDist" on closed second
  intervals: with ``min_dist = 1`` only touching slots join, and the vector is exact; a
  larger ``min_dist`` coarsens it, filling short gaps at the neighbours' level).
* ``mf(R1, R2)`` ("minFree", used to put a limit into the user's view, §5.1): the used
  vector ``max(R1(t), R1.avl - R2(t))``, with R1 storing used and R2 free items (the
  allowance; where R2 stores nothing, no limit).  The paper's one-line formula is garbled;
  this is the operation its text describes: the smaller of the two free amounts.
* ``∩`` of two free vectors: ``min(R1(t), R2(t))``.
* ``get_free_slots(R, F, D, T1, T2)`` on a used vector: the maximal windows inside
  ``[T1, T2)`` where at least ``F`` items are free throughout and that last at least
  ``D`` seconds, each as (start, stop, least free items in it).

Kernels work on one vector: ``slots`` int64 (cap, 3) whose rows ``[0, meta[M_N])`` are
sorted and disjoint, and ``meta`` int64 (5,) (see ``M_*``).  They never allocate (the
engine's kernels run without numba's runtime): an operation that could overflow ``cap``
returns False and changes nothing; :func:`grow` enlarges a vector in place.  The Python
functions (:func:`new`, :func:`increment`, ...) validate their input and call them.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from .._jit import inline_kernel, kernel

INF = np.int64(1) << np.int64(62)
"""The stop of a slot that lasts for ever (the paper's ``stop = 0``)."""

M_N, M_MAX_AVL, M_AVL, M_MIN_DIST, M_KIND = range(5)
S_START, S_STOP, S_ITEMS = range(3)


class Kind(enum.IntEnum):
    USED = 0
    FREE = 1


class Rusv(NamedTuple):
    """slots int64 (cap, 3): (start s, stop s, items) in rows [0, n); meta int64 (5,):
    n, max_avl, avl, min_dist (s), kind (:class:`Kind`)."""

    slots: np.ndarray
    meta: np.ndarray


# --------------------------------------------------------------------------- kernels


@intrinsic
def _memmove_rows(typingctx, slots, dst, src, count):
    """Move rows [src, src + count) of a C-contiguous 2-D array to rows [dst, dst +
    count) as one ``memmove`` (the ranges may overlap); count >= 0.  Inserting or
    removing rows in a sorted vector moves its tail; a loop copying row by row, column by
    column ran about 5 times slower than memmove on a tail of 1,200 rows (2.3 against
    0.4-0.5 us), and that move is most of a booking in a long plan.  An intrinsic, not a
    ctypes call, so that the kernels stay in numba's cache."""
    if not (isinstance(slots, types.Array) and slots.ndim == 2 and slots.layout == "C"):
        return None
    sig = types.void(slots, dst, src, count)

    def codegen(context, builder, signature, args):
        array, d, s, c = args
        i64 = ir.IntType(64)
        d, s, c = (context.cast(builder, v, t, types.int64) for v, t in zip((d, s, c), signature.args[1:], strict=True))
        a = context.make_array(signature.args[0])(context, builder, value=array)
        row = builder.mul(cgutils.unpack_tuple(builder, a.shape, 2)[1],
                          ir.Constant(i64, context.get_abi_sizeof(context.get_data_type(signature.args[0].dtype))))
        base = builder.bitcast(a.data, cgutils.voidptr_t)
        cgutils.raw_memmove(builder, builder.gep(base, [builder.mul(d, row)]), builder.gep(base, [builder.mul(s, row)]),
                            c, row)
        return context.get_dummy_value()

    return sig, codegen


@inline_kernel
def _implicit(meta):
    """The value where no slot is stored: 0 used items, or avl free items."""
    return meta[M_AVL] if meta[M_KIND] == Kind.FREE else 0


@inline_kernel
def _is_free(meta, items):
    """Whether a slot of ``items`` is "free" and so not stored (clamped)."""
    if meta[M_KIND] == Kind.FREE:
        return items >= meta[M_AVL]
    return items <= 0


@inline_kernel
def _first_stop_after(slots, n, t):
    """Index of the first of rows [0, n) whose stop is > t (n when none)."""
    return _first_stop_after_from(slots, 0, n, t)


@inline_kernel
def _first_stop_after_from(slots, lo, n, t):
    """Index of the first of rows [lo, n) whose stop is > t (n when none), the rows
    before lo known to stop at or before t."""
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if slots[mid, S_STOP] <= t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@inline_kernel
def _first_start_at(slots, n, t):
    """Index of the first of rows [0, n) whose start is >= t (n when none)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        if slots[mid, S_START] < t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@inline_kernel
def _piece_at(slots, n, i, t, v0):
    """(value, end) of the piece of constant value starting at t, where row i is the
    first of rows [0, n) whose stop is > t and v0 the implicit value."""
    if i < n and slots[i, S_START] <= t:
        return slots[i, S_ITEMS], slots[i, S_STOP]
    return v0, (slots[i, S_START] if i < n else INF)


@kernel
def _normalise(slots, meta, a, b):
    """Drop the free slots of rows [a, b) and join equal close neighbours (also across
    row a - 1 and row b), closing the hole by moving the tail left.  Changes slots, meta[M_N]."""
    n = meta[M_N]
    a = max(a, 0)
    b = min(b, n)
    w = a
    # the last kept row before a, to join with
    prev = a - 1
    for r in range(a, b):
        items = slots[r, S_ITEMS]
        if _is_free(meta, items) or slots[r, S_START] >= slots[r, S_STOP]:
            continue
        if prev >= 0 and slots[prev, S_ITEMS] == items and slots[r, S_START] - slots[prev, S_STOP] < meta[M_MIN_DIST]:
            slots[prev, S_STOP] = slots[r, S_STOP]
            continue
        slots[w, S_START] = slots[r, S_START]
        slots[w, S_STOP] = slots[r, S_STOP]
        slots[w, S_ITEMS] = items
        prev = w
        w += 1
    r = b
    if r < n and prev >= 0 and slots[prev, S_ITEMS] == slots[r, S_ITEMS] and \
            slots[r, S_START] - slots[prev, S_STOP] < meta[M_MIN_DIST]:
        slots[prev, S_STOP] = slots[r, S_STOP]
        r += 1
    shift = r - w
    if shift > 0:
        _memmove_rows(slots, r - shift, r, n - r)
        meta[M_N] = n - shift


@inline_kernel
def _split_at(slots, meta, i, t):
    """Split row i at time t (start < t < stop) into two rows; moves the tail right by one."""
    n = meta[M_N]
    _memmove_rows(slots, i + 1, i, n - i)
    slots[i, S_STOP] = t
    slots[i + 1, S_START] = t
    meta[M_N] = n + 1


@kernel
def _add(slots, meta, start, stop, x):
    """⊕ (x > 0) or ⊖ (x < 0): add ``x`` items over [start, stop) (s), then normalise.
    Returns False, changing nothing, when ``slots`` could overflow.  Changes slots, meta.

    With ``min_dist`` 1 and spare rows after the vector, the rows from the neighbour
    before the interval to the one after it are rewritten, normalised, in the spare rows
    and copied back, and the tail moves once, by the difference in rows (none when a
    split at one end and a join at the other cancel, as when a booking is shortened);
    :func:`_add_in_place` moved it for each split, for the gaps filled and for the joins
    (HPC2N on a pool: 3.9 M additions, most of them a conservative compression's moves).
    Otherwise (a coarser vector, or no spare rows) it is :func:`_add_in_place`; both give
    the same rows."""
    if start >= stop or x == 0:
        return True
    if meta[M_MIN_DIST] == 1:
        n = meta[M_N]
        i0, r0, r1, base = _spare_rows(slots, n, start, stop, 2)
        if base >= 0:
            v0 = _implicit(meta)
            m = _emit_rows(slots, meta, base, 0, r0, min(i0, n))
            i = i0
            if i < n and slots[i, S_START] < start:  # the part of the first row before start
                m = _emit(slots, meta, base, m, slots[i, S_START], start, slots[i, S_ITEMS])
            t = start
            while t < stop:
                v, nxt = _piece_at(slots, n, i, t, v0)
                nxt = min(nxt, stop)
                m = _emit(slots, meta, base, m, t, nxt, _clamped(meta, v + x))
                if i < n and slots[i, S_STOP] <= nxt:
                    i += 1
                t = nxt
            if i < n and slots[i, S_START] < stop:  # the part of the last row after stop
                m = _emit(slots, meta, base, m, stop, slots[i, S_STOP], slots[i, S_ITEMS])
                i += 1
            _put_back(slots, meta, base, _emit_rows(slots, meta, base, m, i, r1), r0, r1)
            return True
    return _add_in_place(slots, meta, start, stop, x)


@kernel
def _add_in_place(slots, meta, start, stop, x):
    """:func:`_add` within the vector's rows: splits, then the gaps filled, then
    :func:`_normalise`, each moving the tail.  Returns False, changing nothing, when
    ``slots`` could overflow.  Changes slots, meta."""
    n = meta[M_N]
    i0 = _first_stop_after(slots, n, start)
    i1 = _first_start_at(slots, n, stop)
    if n + (i1 - i0) + 3 > slots.shape[0]:  # two splits and every gap in range filled
        return False
    if i0 < i1 and slots[i0, S_START] < start:
        _split_at(slots, meta, i0, start)
        i0 += 1
        i1 += 1
    if i0 < i1 and slots[i1 - 1, S_STOP] > stop:
        _split_at(slots, meta, i1 - 1, stop)
    n = meta[M_N]
    # rows [i0, i1) now lie inside [start, stop); count the uncovered gaps there
    gaps = 0
    prev = start
    for r in range(i0, i1):
        if slots[r, S_START] > prev:
            gaps += 1
        prev = slots[r, S_STOP]
    if prev < stop:
        gaps += 1
    if gaps > 0:
        _memmove_rows(slots, i1 + gaps, i1, n - i1)
    # rebuild [i0, i1 + gaps) right to left: each existing row plus x, each gap at v0 + x
    v0 = _implicit(meta)
    w = i1 + gaps - 1
    r = i1 - 1
    end = stop
    while w >= i0:
        if r >= i0 and slots[r, S_STOP] == end:
            s0 = slots[r, S_START]
            slots[w, S_START] = s0
            slots[w, S_STOP] = end
            slots[w, S_ITEMS] = slots[r, S_ITEMS] + x
            end = s0
            r -= 1
        else:
            g0 = slots[r, S_STOP] if r >= i0 else start
            slots[w, S_START] = g0
            slots[w, S_STOP] = end
            slots[w, S_ITEMS] = v0 + x
            end = g0
        w -= 1
    meta[M_N] = n + gaps
    _normalise(slots, meta, i0 - 1, i1 + gaps + 1)
    return True


@inline_kernel
def _emit(slots, meta, base, m, start, stop, items):
    """Append the piece [start, stop) x items to the normalised rows at slots[base :
    base + m] (dropped when free or empty, joined to a touching equal last row); returns
    the new count."""
    if start >= stop or _is_free(meta, items):
        return m
    if m > 0 and slots[base + m - 1, S_ITEMS] == items and slots[base + m - 1, S_STOP] == start:
        slots[base + m - 1, S_STOP] = stop
        return m
    slots[base + m, S_START] = start
    slots[base + m, S_STOP] = stop
    slots[base + m, S_ITEMS] = items
    return m + 1


@inline_kernel
def _clamped(meta, items):
    """What normalisation leaves of a slot of ``items``: the implicit value when free."""
    return _implicit(meta) if _is_free(meta, items) else items


@inline_kernel
def _spare_rows(slots, n, lo, hi, cuts):
    """Where a rewrite of the rows meeting [lo, hi) goes (:func:`_add`, :func:`_add_two`):
    (i0, r0, r1, base), i0 the first row whose stop is > lo, rows [r0, r1) those rows with
    a neighbour each side to join with, and base the first spare row to write them at,
    -1 when the vector has no room for them.  The spare rows lie just past the farthest
    the tail may move (each row and the gap before it give at most two pieces, and each
    of ``cuts`` interval ends one more): rows on the vector's own pages, where the end of
    its room is a page nothing touches (the arrays grow into new zeroed ones)."""
    i0 = _first_stop_after(slots, n, lo)
    i1 = _first_start_from(slots, n, i0, hi)  # an interval spans few rows
    r0 = max(i0 - 1, 0)
    r1 = min(i1 + 1, n)
    most = 2 * (r1 - r0) + 4 + cuts
    base = n + most
    return i0, r0, r1, (base if base + most <= slots.shape[0] else -1)


@inline_kernel
def _emit_rows(slots, meta, base, m, a, b):
    """Append rows [a, b) as they are to the rewritten rows at slots[base : base + m]
    (:func:`_emit`); returns the new count."""
    for r in range(a, b):
        m = _emit(slots, meta, base, m, slots[r, S_START], slots[r, S_STOP], slots[r, S_ITEMS])
    return m


@inline_kernel
def _put_back(slots, meta, base, m, r0, r1):
    """Replace rows [r0, r1) by the m rows rewritten at slots[base : base + m] (past the
    farthest the tail may move), moving the tail once."""
    n = meta[M_N]
    shift = m - (r1 - r0)
    if shift != 0:
        _memmove_rows(slots, r1 + shift, r1, n - r1)
    _memmove_rows(slots, r0, base, m)
    meta[M_N] = n + shift


@kernel
def _add_two(slots, meta, a0, a1, x, c0, c1, y):
    """⊕/⊖ ``x`` over [a0, a1), then ``y`` over [c0, c1) (s), exactly as two :func:`_add`
    calls; returns False, changing nothing, when it cannot be sure of room for both
    (stricter than each call alone: a caller sized for single operations calls them
    then).  Changes slots, meta.

    Moving a booking (-s over its old interval, +s over its new one) changes few rows
    and often none: the rows between the two intervals are rewritten in the spare rows
    after the vector and copied back, and the tail moves once by the difference in rows,
    where two operations moved it twice (most of the cost of a move in a long plan).
    With ``min_dist`` > 1 (joins that fill gaps depend on the order of operations), or
    without spare rows for that, it is the two operations."""
    n = meta[M_N]
    cap = slots.shape[0]
    lo = min(a0, c0)
    hi = max(a1, c1)
    if meta[M_MIN_DIST] == 1 and a0 < a1 and c0 < c1 and x != 0 and y != 0:
        i0, r0, r1, base = _spare_rows(slots, n, lo, hi, 4)
        if base >= 0:
            v0 = _implicit(meta)
            m = _emit_rows(slots, meta, base, 0, r0, min(i0, n))
            i = i0
            if i < n and slots[i, S_START] < lo:  # the part of the first row before lo
                m = _emit(slots, meta, base, m, slots[i, S_START], lo, slots[i, S_ITEMS])
            t = lo
            while t < hi:
                v, nxt = _piece_at(slots, n, i, t, v0)
                for b in (a0, a1, c0, c1, hi):
                    if t < b < nxt:
                        nxt = b
                if a0 <= t < a1:
                    v = _clamped(meta, v + x)
                if c0 <= t < c1:
                    v = _clamped(meta, v + y)
                m = _emit(slots, meta, base, m, t, nxt, v)
                if i < n and slots[i, S_STOP] <= nxt:
                    i += 1
                t = nxt
            if i < n and slots[i, S_START] < hi:  # the part of the last row after hi
                m = _emit(slots, meta, base, m, hi, slots[i, S_STOP], slots[i, S_ITEMS])
                i += 1
            _put_back(slots, meta, base, _emit_rows(slots, meta, base, m, i, r1), r0, r1)
            return True
    # the two operations, when both surely have room: the first leaves at most n1 rows
    n1 = n + (_first_start_at(slots, n, a1) - _first_stop_after(slots, n, a0)) + 3
    if 2 * n1 + 3 > cap:
        return False
    _add(slots, meta, a0, a1, x)
    _add(slots, meta, c0, c1, y)
    return True


@kernel
def _value_at(slots, meta, t):
    """The vector's items at time t."""
    n = meta[M_N]
    i = _first_stop_after(slots, n, t)
    if i < n and slots[i, S_START] <= t:
        return slots[i, S_ITEMS]
    return _implicit(meta)


@inline_kernel
def _max_in(slots, meta, t0, t1):
    """The largest value of the vector over [t0, t1) (t0 < t1)."""
    n = meta[M_N]
    i = _first_stop_after(slots, n, t0)
    v0 = _implicit(meta)
    best = v0 if i >= n or slots[i, S_START] > t0 else slots[i, S_ITEMS]
    covered = t0
    while i < n and slots[i, S_START] < t1:
        if slots[i, S_START] > covered:
            best = max(best, v0)  # a gap
        best = max(best, slots[i, S_ITEMS])
        covered = slots[i, S_STOP]
        i += 1
    if covered < t1:
        best = max(best, v0)
    return best


@kernel
def _max_used(slots, meta, t0, t1):
    """Kernel entry of :func:`_max_in`: the largest value over [t0, t1)."""
    return _max_in(slots, meta, t0, t1)


@inline_kernel
def _earliest_fit(slots, meta, size, d, t0, limit, ex0, ex1, ex_items):
    """Earliest start t >= t0 (s) such that the used vector plus ``size`` stays within
    ``avl`` over [t, t + d), counting ``ex_items`` fewer used over [ex0, ex1) (a booking
    being moved; 0 for none); -1 when there is none before ``limit``.  ``d`` >= 1.

    Windows that end before ex0 are tested from their right end: the last row in the
    window that leaves no room is found by a backward scan that stops at the rows an
    earlier window already cleared, and the next candidate is that row's stop.  Only a
    window's blocking row and the rows after it are read, so a long search reads each row
    about once, with a predictable branch, instead of stepping through every piece (a
    compression of 10,000 planned jobs spent 0.29 s in earliest fits, 0.05 s now).  The
    rest, where the moved booking counts, is one sweep over the pieces of constant
    value: a run of pieces that leave room is a fit as soon as it lasts d."""
    n = meta[M_N]
    room = meta[M_AVL] - size
    if room < 0:
        return -1
    plain = ex0 if ex_items != 0 else INF  # windows ending by here see the rows as they are
    i = _first_stop_after(slots, n, t0)
    cand = t0
    j = i  # rows [i, j) start before the window's end
    ok = i  # rows [ok, j) are known to leave room
    while cand + d <= plain:
        if cand >= limit:
            return -1
        end = cand + d
        while j < n and slots[j, S_START] < end:
            j += 1
        k = j - 1
        while k >= ok and slots[k, S_ITEMS] <= room:
            k -= 1
        if k < ok:
            return cand  # gaps leave room too
        if slots[k, S_STOP] > plain:
            # the blocking row reaches into the moved booking, where it may leave room
            cand = plain
            i = k
            break
        cand = slots[k, S_STOP]
        i = k + 1
        ok = j
    t = cand
    cand = -1
    while True:
        used, nxt = _piece_at(slots, n, i, t, 0)
        if ex_items != 0:
            if t < ex0:
                nxt = min(nxt, ex0)
            elif t < ex1:
                used -= ex_items
                nxt = min(nxt, ex1)
        if used <= room:
            if cand < 0:
                if t >= limit:
                    return -1
                cand = t
            if nxt - cand >= d:
                return cand
        else:
            cand = -1
        if i < n and slots[i, S_STOP] <= nxt:
            i += 1
        t = nxt


@inline_kernel
def _earliest_fit_clipped(slots, meta, size, d, t0, limit, clip):
    """Earliest start t in [t0, limit) (s) such that the used vector plus ``size`` stays
    within ``avl`` over [t, min(t + d, clip)); -1 when none.  ``d`` >= 1, ``limit`` <=
    ``clip``.

    A planner moving a booking of ``size`` items at [clip, clip + d) earlier searches
    this way: a window that starts before clip and overlaps the booking holds, from clip
    on, no more than the plan with the booking in it, which never exceeds ``avl``.  So the
    window's part from clip on always fits, and only the rows before clip are read, each
    window tested from its right end as in :func:`_earliest_fit`'s first phase (HPC2N on
    a pool: 96 % of compression's successful searches overlap their own booking, where
    :func:`_earliest_fit` sweeps piece by piece)."""
    n = meta[M_N]
    room = meta[M_AVL] - size
    if room < 0:
        return -1
    cand = t0
    j = _first_stop_after(slots, n, t0)
    ok = j  # rows [ok, j) are known to leave room
    while cand < limit:
        j = _first_start_from(slots, n, j, min(cand + d, clip))  # rows [.., j) start before the window's end
        k = j - 1
        while k >= ok and slots[k, S_ITEMS] <= room:
            k -= 1
        if k < ok:
            return cand  # gaps leave room too
        cand = slots[k, S_STOP]
        ok = j
    return -1


@kernel
def _earliest_fit_clipped_kernel(slots, meta, size, d, t0, limit, clip):
    """Kernel entry of :func:`_earliest_fit_clipped`."""
    return _earliest_fit_clipped(slots, meta, size, d, t0, limit, clip)


@kernel
def _earliest_fit_kernel(slots, meta, size, d, t0, limit, ex0, ex1, ex_items):
    """Kernel entry of :func:`_earliest_fit`."""
    return _earliest_fit(slots, meta, size, d, t0, limit, ex0, ex1, ex_items)


@inline_kernel
def _earliest_fit_valid(slots, meta, size, d, t0, limit, room, valid):
    """Earliest start t >= t0 (s) such that at every instant x of [t, t + d) that lies in
    one of the ``valid`` intervals the used vector plus ``size`` stays within ``room``
    (Keller's limit with a validity, §3 and §5.1: a limit binds only while it is valid);
    -1 when there is none before ``limit``.  ``room`` < ``size`` forbids every valid
    instant (a request the limit refuses outright must avoid the validity).

    valid int64 (v, 2): sorted disjoint [start, stop) intervals; d >= 1.  A violating
    instant x rules out every start in (x - d, x]; the next candidate is the end of the
    run of violating instants that x begins."""
    n = meta[M_N]
    nv = valid.shape[0]
    t = t0
    cap = room - size
    while True:
        if t >= limit:
            return -1
        end = t + d
        lo, hi = 0, nv
        while lo < hi:  # first interval whose stop is > t
            mid = (lo + hi) >> 1
            if valid[mid, 1] <= t:
                lo = mid + 1
            else:
                hi = mid
        nxt = -1
        v = lo
        while v < nv and valid[v, 0] < end and nxt < 0:
            p = max(valid[v, 0], t)
            q = min(valid[v, 1], end)
            if cap < 0:
                nxt = valid[v, 1]  # the whole interval violates
                break
            i = _first_stop_after(slots, n, p)
            while i < n and slots[i, S_START] < q:
                if slots[i, S_ITEMS] > cap:
                    # violating from max(start, p): run through touching violating rows
                    stop = slots[i, S_STOP]
                    i += 1
                    while i < n and slots[i, S_START] == stop and slots[i, S_ITEMS] > cap:
                        stop = slots[i, S_STOP]
                        i += 1
                    nxt = min(stop, valid[v, 1])
                    break
                i += 1
            v += 1
        if nxt < 0:
            return t
        t = nxt


@kernel
def _earliest_fit_valid_kernel(slots, meta, size, d, t0, limit, room, valid):
    """Kernel entry of :func:`_earliest_fit_valid`."""
    return _earliest_fit_valid(slots, meta, size, d, t0, limit, room, valid)


@kernel
def _get_free_slots(slots, meta, free_min, d, t1, t2, out):
    """getFreeSlots on a used vector: the maximal windows in [t1, t2) with at least
    ``free_min`` items free throughout, lasting >= d; written to ``out`` (int64 (m, 3):
    start, stop, least free items); returns their count, or -1 when ``out`` is too small."""
    n = meta[M_N]
    avl = meta[M_AVL]
    m = 0
    run0 = -1
    least = 0
    t = t1
    i = _first_stop_after(slots, n, t1)
    while t < t2:
        if i < n and slots[i, S_START] <= t:
            used = slots[i, S_ITEMS]
            nxt = min(slots[i, S_STOP], t2)
            i += 1
        else:
            used = 0
            nxt = min(slots[i, S_START], t2) if i < n else t2
        free = avl - used
        if free >= free_min:
            if run0 < 0:
                run0 = t
                least = free
            elif free < least:
                least = free
        elif run0 >= 0:
            if t - run0 >= d:
                if m >= out.shape[0]:
                    return -1
                out[m, 0] = run0
                out[m, 1] = t
                out[m, 2] = least
                m += 1
            run0 = -1
        t = nxt
    if run0 >= 0 and t2 - run0 >= d:
        if m >= out.shape[0]:
            return -1
        out[m, 0] = run0
        out[m, 1] = t2
        out[m, 2] = least
        m += 1
    return m


OP_MF, OP_INTERSECT = 0, 1


@kernel
def _combine(a_slots, a_meta, b_slots, b_meta, op, out, out_meta):
    """out = op(a, b) piece by piece over every instant either vector stores (op
    ``OP_MF``: max(a, a.avl - b); ``OP_INTERSECT``: min(a, b)), then normalised by
    ``out_meta``'s kind.  ``out`` needs 2 (na + nb) + 1 rows; returns False when short."""
    na = a_meta[M_N]
    nb = b_meta[M_N]
    if 2 * (na + nb) + 1 > out.shape[0]:
        return False
    va0 = _implicit(a_meta)
    vb0 = _implicit(b_meta)
    i = 0
    k = 0
    m = 0
    t = -INF
    while i < na or k < nb:
        # the piece starting at t: values of a and b there, and where it ends
        va, ta = _piece_at(a_slots, na, i, t, va0)
        vb, tb = _piece_at(b_slots, nb, k, t, vb0)
        nxt = min(ta, tb)
        if op == OP_MF:
            v = max(va, a_meta[M_AVL] - vb)
        else:
            v = min(va, vb)
        if t > -INF:
            out[m, S_START] = t
            out[m, S_STOP] = nxt
            out[m, S_ITEMS] = v
            m += 1
        if i < na and a_slots[i, S_STOP] <= nxt:
            i += 1
        if k < nb and b_slots[k, S_STOP] <= nxt:
            k += 1
        t = nxt
    out_meta[M_N] = m
    _normalise(out, out_meta, 0, m)
    return True


# --------------------------------------------------------------------------- the slot index
# A summary over the slots that lets the earliest fit skip what cannot hold a job (issue
# 27).  The time axis is cut into blocks of about ``block_rows`` rows.  For each of
# LEVELS free amounts T(k) (:func:`_threshold`: 1, 2, 3, 4, 6, 8, ...) a block keeps the
# runs of time where at least T(k) items are free: the one it starts with (pre), the one
# it ends with (suf) and its longest (best), in seconds (gaps count as all free).  A job
# of ``size`` items reads the largest level k with T(k) <= size, so those runs are at
# least as long as the job's own, and a block whose longest run and whose first run
# (added to the run carried from the blocks before) are both shorter than the job can
# start none of its windows there: it is skipped after three reads; only the blocks that
# might hold a start are searched row by row.  The search's cost thus follows the number
# of blocks, not rows.  Blocks are cut in *time*, not in rows, so an operation that
# inserts rows (moving the tail) leaves the blocks it does not cover valid.  A removal
# recomputes the blocks it covers; a booking (items added: runs only shrink) marks them
# loose (X_LOOSE): their runs stay upper bounds, which a search may read as they are (it
# row-scans more, never answers otherwise), and a search that row-scans a loose block
# for nothing recomputes it, so that the next searches skip it again.
# A block that grows past twice ``block_rows`` rows is split at its middle row.
#
# index int64 (X_WIDTH, cols): X_FIELDS fields of s = cols // X_PACK entries each, X_PACK
# side by side in a row of the array (field f: row f // X_PACK from column (f % X_PACK) s;
# :func:`_xi`, :func:`_x`).  Row k holds level k's fields: the blocks' pre, suf, best
# (s; INF for runs without end) and the groups' bounds (:func:`_xk`); row LEVELS the
# blocks' starts (X_START, s), their loose marks (X_LOOSE) and the groups' first blocks
# (X_GFIRST).  Entries 1..m are the blocks' (or groups'); entry 0 of the array's rows is
# the header (index[r, 0]: the count of blocks m, block_rows, X_ON, X_OFF, X_GROUPS,
# X_GROUP_BLOCKS).  Block b covers [start b, start b + 1) (the first from -INF, the last
# up to INF).  m = 0: no index (a free vector, or min_dist > 1, where joins change values
# outside an operation's interval); the indexed kernels then do what the plain ones do.
# Why packed (it was a row per field, 127 rows): a caller that keeps an index beside a
# vector of cap rows in an array of cap columns (the conservative pool does, for its 4
# vectors) needs only about cap / 32 entries per field (blocks of 64 rows, room for as
# many splits); a row per field made that array 4 x 127 rows of cap columns, and on a
# 10,000-job array (cap 80,016) 326 MB that numpy's resize zero-fills, most of the
# replay's time, while the index was never built (docs/studies/plan-cost-curve.md).
#
# Groups of blocks (a second level, so that a search skips many blocks at one read):
# blocks [first g, first g + 1) (field X_GFIRST) form group g (1..index[X_GROUPS,
# 0]; the last group runs to block m), cut every GROUP_BLOCKS blocks when the index is
# built, each group keeping per level an upper bound (X_GBOUND) of the longest run of
# its span at that level: b >= 0 when computed since the group last changed, -(b + 2)
# when it may since have shrunk, -1 when not known.  A booking (x > 0 on a used vector)
# only shortens runs, so every bound stays an upper bound: the groups it meets are marked
# as possibly loose; a removal (x < 0) marks them as not known.  A search that meets a
# group whose bound is not known, or loose and not short enough to skip it, computes that
# level from the blocks (exact again).  A split adds a block to
# its group (the group's span, hence its runs, stay the same).  A group whose bound,
# first run and carried run are all short of the job is skipped whole.
LEVELS = 31
X_PRE, X_SUF, X_BEST, X_GBOUND = range(4)  # level k's fields: these + X_LEVEL * k (row k)
X_LEVEL = 4
X_START = X_LEVEL * LEVELS  # then one row: the blocks' starts,
X_LOOSE = X_START + 1  # 1 when items were added in the block since its runs were computed,
X_GFIRST = X_START + 2  # a group's first block
X_FIELDS = X_START + 3
X_PACK_SHIFT = 2
X_PACK = 1 << X_PACK_SHIFT  # fields side by side in one row of the array
X_WIDTH = (X_FIELDS + X_PACK - 1) // X_PACK  # the array's rows
X_GROUPS = 4  # header row (column 0): the count of groups
X_GROUP_BLOCKS = 5  # header row: blocks a group when built (0: GROUP_BLOCKS)
GROUP_BLOCKS = 16


@inline_kernel
def _x(index, f):
    """Field f of a slot index: a view of its cols // X_PACK entries (int64; entry b of a
    block field is block b's, entry g of a group field group g's)."""
    s = index.shape[1] >> X_PACK_SHIFT
    c = (f & (X_PACK - 1)) * s
    return index[f >> X_PACK_SHIFT, c : c + s]


@inline_kernel
def _xi(index, f, b):
    """Where entry b of field f of a slot index is: (row, column) of the array."""
    return f >> X_PACK_SHIFT, (f & (X_PACK - 1)) * (index.shape[1] >> X_PACK_SHIFT) + b


@inline_kernel
def _xk(index, f, k, b):
    """Where entry b of level k's field f (X_PRE, X_SUF, X_BEST, X_GBOUND) is."""
    return k, f * (index.shape[1] >> X_PACK_SHIFT) + b


@inline_kernel
def _move_block(index, dst, src):
    """Block src's fields to entry dst (blocks shifted by a split or a trim)."""
    for k in range(LEVELS):
        for f in (X_PRE, X_SUF, X_BEST):
            index[_xk(index, f, k, dst)] = index[_xk(index, f, k, src)]
    for f in (X_START, X_LOOSE):
        index[_xi(index, f, dst)] = index[_xi(index, f, src)]


@inline_kernel
def _move_group(index, dst, src):
    """Group src's fields to entry dst (groups shifted by a trim)."""
    for k in range(LEVELS):
        index[_xk(index, X_GBOUND, k, dst)] = index[_xk(index, X_GBOUND, k, src)]
    index[_xi(index, X_GFIRST, dst)] = index[_xi(index, X_GFIRST, src)]


@inline_kernel
def _x_room(index):
    """Entries per field of a slot index: blocks and groups it can hold, plus the header."""
    return index.shape[1] >> X_PACK_SHIFT


@inline_kernel
def _threshold(k):
    """The free amount of level k: 1, 1, 2, 3, 4, 6, 8, 12, ... (2^a and 3 2^(a - 1),
    level 1 repeating level 0), 32,768 at level 30.  Two levels an octave: a job reads
    the level of the largest amount not above its size, at least 3/4 of it (with one
    level an octave, at least half: a search row-scanned 2.3 times as many blocks that
    could not hold the job at 30,000 planned jobs)."""
    return ((np.int64(2) + (k & 1)) << (k >> 1)) >> 1


@inline_kernel
def _last_at_most(row, n, x):
    """The last position p in 1..n of the ascending ``row`` (int64, positions 1..n used)
    with row[p] <= x, or 1 when none (position 1 is where the blocks and groups start)."""
    lo, hi = 2, n + 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if row[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


@inline_kernel
def _block_of(index, t):
    """The block (1..m) that holds time t: the last whose start is <= t."""
    return _last_at_most(_x(index, X_START), index[0, 0], t)


@inline_kernel
def _end_of(starts, m, b):
    """The end of block b of m, ``starts`` the X_START field."""
    return starts[b + 1] if b < m else INF


@inline_kernel
def _block_end(index, b):
    return _end_of(_x(index, X_START), index[0, 0], b)


@inline_kernel
def _span(a, b):
    """b - a (s), INF when either end is unbounded (no overflow)."""
    return INF if a <= -INF or b >= INF else b - a


@inline_kernel
def _levels_free(f, g):
    """How many levels have at least their amount free (the k < LEVELS with T(k) <= f),
    stepping from g, the count of a neighbouring piece (free amounts change little from
    one piece to the next)."""
    while g < LEVELS and _threshold(g) <= f:
        g += 1
    while g > 0 and _threshold(g - 1) > f:
        g -= 1
    return g


@kernel
def _index_summarise(slots, meta, index, b):
    """Set block b's runs from the rows; returns the first row reaching into it and the
    first row after it.  Levels [0, a) are in a run (its start kept in the suf column
    meanwhile), levels [g0, LEVELS) have met an instant without their amount free.  A
    call: it walks a block's rows, and each inlined copy cost about 1 CPU s of compile."""
    n = meta[M_N]
    avl = meta[M_AVL]
    t0 = index[_xi(index, X_START, b)]
    end = _block_end(index, b)
    index[_xi(index, X_LOOSE, b)] = 0
    for k in range(LEVELS):
        index[_xk(index, X_BEST, k, b)] = 0
    i = _first_stop_after(slots, n, t0)
    first = i
    a = 0
    g0 = LEVELS
    t = t0
    while t < end:
        v, nxt = _piece_at(slots, n, i, t, 0)
        nxt = min(nxt, end)
        g = _levels_free(avl - v, a)
        for k in range(g, a):  # runs that end here
            index[_xk(index, X_BEST, k, b)] = max(index[_xk(index, X_BEST, k, b)], _span(index[_xk(index, X_SUF, k, b)], t))
        for k in range(a, g):  # runs that start here
            index[_xk(index, X_SUF, k, b)] = t
        for k in range(g, g0):  # first instant without the level's amount
            index[_xk(index, X_PRE, k, b)] = _span(t0, t)
        g0 = min(g0, g)
        a = g
        if i < n and slots[i, S_STOP] <= nxt:
            i += 1
        t = nxt
    for k in range(LEVELS):
        if k < a:
            run = _span(index[_xk(index, X_SUF, k, b)], end)
            index[_xk(index, X_SUF, k, b)] = run
            index[_xk(index, X_BEST, k, b)] = max(index[_xk(index, X_BEST, k, b)], run)
        else:
            index[_xk(index, X_SUF, k, b)] = 0
        if k < g0:
            index[_xk(index, X_PRE, k, b)] = _span(t0, end)
    return first, i


@kernel
def _index_recompute(slots, meta, index, b):
    """Recompute block b from the rows; split it at its middle row when it holds more than
    twice block_rows rows and the index has room.  Changes index."""
    first, after = _index_summarise(slots, meta, index, b)
    m = index[0, 0]
    if after - first > 2 * index[1, 0] and m + 2 <= _x_room(index):
        cut = slots[(first + after) >> 1, S_START]
        if index[_xi(index, X_START, b)] < cut < _block_end(index, b):
            for k in range(m, b, -1):
                _move_block(index, k + 1, k)
            for g in range(1, index[X_GROUPS, 0] + 1):  # the new block joins block b's group
                if index[_xi(index, X_GFIRST, g)] > b:
                    index[_xi(index, X_GFIRST, g)] += 1
            index[_xi(index, X_START, b + 1)] = cut
            index[0, 0] = m + 1
            _index_summarise(slots, meta, index, b)
            _index_summarise(slots, meta, index, b + 1)


@kernel
def _index_build(slots, meta, index, block_rows):
    """Cut the vector into blocks of block_rows rows (the first from -INF) and summarise
    them; no index (m = 0) for a free vector, min_dist > 1, or an index too small.
    Changes index."""
    n = meta[M_N]
    m = 1 + (n - 1) // block_rows if block_rows > 0 and n > 0 else 1  # block b starts at row (b - 1) block_rows
    index[1, 0] = block_rows
    if (meta[M_KIND] != Kind.USED or meta[M_MIN_DIST] != 1 or block_rows < 1 or m + 1 > _x_room(index)
            or index.shape[0] != X_WIDTH):
        index[0, 0] = 0
        index[X_GROUPS, 0] = 0
        return
    index[0, 0] = m
    index[_xi(index, X_START, 1)] = -INF
    for b in range(2, m + 1):
        index[_xi(index, X_START, b)] = slots[(b - 1) * block_rows, S_START]
    for b in range(1, m + 1):
        _index_summarise(slots, meta, index, b)
    per = index[X_GROUP_BLOCKS, 0] if index[X_GROUP_BLOCKS, 0] > 0 else GROUP_BLOCKS
    groups = 1 + (m - 1) // per
    index[X_GROUPS, 0] = groups
    for g in range(1, groups + 1):
        index[_xi(index, X_GFIRST, g)] = 1 + (g - 1) * per
    for g in range(1, groups + 1):
        for k in range(LEVELS):
            index[_xk(index, X_GBOUND, k, g)] = _group_best(index, g, k)[0]


@inline_kernel
def _group_end(index, g):
    """The block after group g's last."""
    return index[_xi(index, X_GFIRST, g + 1)] if g < index[X_GROUPS, 0] else index[0, 0] + 1


@inline_kernel
def _group_of(index, b):
    """The group (1..groups) that holds block b."""
    return _last_at_most(_x(index, X_GFIRST), index[X_GROUPS, 0], b)


@inline_kernel
def _group_best(index, g, k):
    """The longest run (s) at level k inside group g's span, from its blocks' runs, and
    whether some block's runs are loose (the result is then an upper bound)."""
    run = 0
    best = 0
    loose = 0
    m = index[0, 0]
    starts = _x(index, X_START)
    pres = _x(index, X_PRE + X_LEVEL * k)
    loose_blocks = _x(index, X_LOOSE)
    for b in range(index[_xi(index, X_GFIRST, g)], _group_end(index, g)):
        loose |= loose_blocks[b]
        length = _span(starts[b], _end_of(starts, m, b))
        pre = pres[b]
        if pre >= length:
            run = min(run + length, INF)
        else:
            best = max(best, run + pre, index[_xk(index, X_BEST, k, b)])
            run = index[_xk(index, X_SUF, k, b)]
    return max(best, run), loose


INDEX_ON_ROWS = 1024
INDEX_OFF_ROWS = 512
"""A vector of more rows than INDEX_ON_ROWS gets its index built by :func:`_index_sync`,
one of fewer than INDEX_OFF_ROWS drops it: on short vectors the plain search reads
fewer rows than keeping the index costs (plan_cost_curve.py, with loose blocks and
groups: break-even near 800-1,000 rows; planning from 1,000 jobs planned, 1,000-2,000
rows, costs 0.67 us a job with the index against 1.03 with the scan)."""


@kernel
def _index_sync(slots, meta, index, block_rows):
    """Build ``index`` when the vector has grown past INDEX_ON_ROWS rows, drop it (no
    blocks: the indexed kernels do what the plain ones do) when it has shrunk below
    INDEX_OFF_ROWS; call before a search.  Changes index."""
    n = meta[M_N]
    if index[0, 0] == 0 and n > INDEX_ON_ROWS:
        _index_build(slots, meta, index, block_rows)
    elif index[0, 0] > 0 and n < INDEX_OFF_ROWS:
        index[0, 0] = 0


X_ON, X_OFF = 2, 3
"""Rows of the header column (column 0) holding a kept index's thresholds
(:func:`_index_keep`): build past index[X_ON, 0] rows, drop below index[X_OFF, 0]."""


@kernel
def _index_keep(slots, meta, index, t):
    """:func:`_index_sync` with the thresholds in the index's header (``X_ON``, ``X_OFF``,
    block rows in index[1, 0]), and the blocks that end at or before ``t`` dropped once
    they are many (a scheduler that trims the rows before now, its searches starting
    there: those blocks are never read again, and they would fill the index's room).
    Call before a search from t or later.  Changes index."""
    n = meta[M_N]
    m = index[0, 0]
    if m == 0:
        if n > index[X_ON, 0]:
            _index_build(slots, meta, index, index[1, 0])
        return
    if n < index[X_OFF, 0]:
        index[0, 0] = 0
        return
    gone = _block_of(index, t) - 1
    if gone >= 32 or (gone > 0 and 2 * gone >= m):  # amortised, as the rows' trim
        for b in range(1, m - gone + 1):
            _move_block(index, b, b + gone)
        index[_xi(index, X_START, 1)] = -INF  # the first block from -INF: no rows before it are read
        index[0, 0] = m - gone
        groups = index[X_GROUPS, 0]
        g0 = 1  # the group that holds the new first block; the ones before it go
        while g0 < groups and index[_xi(index, X_GFIRST, g0 + 1)] - gone <= 1:
            g0 += 1
        for g in range(g0, groups + 1):
            _move_group(index, g - g0 + 1, g)
            index[_xi(index, X_GFIRST, g - g0 + 1)] -= gone
        index[_xi(index, X_GFIRST, 1)] = 1
        index[X_GROUPS, 0] = groups - g0 + 1


@kernel
def _index_update(slots, meta, index, a, c, x):
    """Recompute every block that [a, c) meets (a < c), splits included, after x items
    were added over it; a removal (x < 0, runs may have grown) marks their groups' bounds
    as not known.  A call: inlined in its three callers it cost them about 1.5 CPU s of
    compile, for a call per booking that the block recomputes dwarf."""
    b = _block_of(index, a)
    first = b
    n = meta[M_N]
    starts = _x(index, X_START)
    while b <= index[0, 0] and starts[b] < c:
        m = index[0, 0]
        if x < 0 or _first_start_at(slots, n, _end_of(starts, m, b)) - _first_stop_after(slots, n, starts[b]) > \
                2 * index[1, 0]:
            _index_recompute(slots, meta, index, b)  # runs may have grown, or a split is due
        else:
            index[_xi(index, X_LOOSE, b)] = 1  # runs only shrank: the block's stay upper bounds
        b += 1 + index[0, 0] - m  # past both halves of a split block
    for g in range(_group_of(index, first), _group_of(index, b - 1) + 1):
        for k in range(LEVELS):
            at = _xk(index, X_GBOUND, k, g)
            if x < 0:
                index[at] = -1
            elif index[at] >= 0:
                index[at] = -index[at] - 2


@kernel
def _add_indexed(slots, meta, index, start, stop, x):
    """:func:`_add` keeping ``index`` a summary of the vector.  Changes slots, meta, index."""
    if not _add(slots, meta, start, stop, x):
        return False
    if index[0, 0] > 0 and start < stop and x != 0:
        _index_update(slots, meta, index, start, stop, x)
    return True


@kernel
def _add_two_indexed(slots, meta, index, a0, a1, x, c0, c1, y):
    """:func:`_add_two` keeping ``index`` a summary of the vector.  Changes slots, meta, index."""
    if not _add_two(slots, meta, a0, a1, x, c0, c1, y):
        return False
    if index[0, 0] > 0:
        if a0 < a1 and x != 0:
            _index_update(slots, meta, index, a0, a1, x)
        if c0 < c1 and y != 0:
            _index_update(slots, meta, index, c0, c1, y)
    return True


@inline_kernel
def _first_start_from(slots, n, j, t):
    """Index of the first of rows [j, n) whose start is >= t, rows before j starting
    before t: steps of 1, 2, 4, ... from j, then a binary search (cheap when the answer
    is near j, logarithmic when far)."""
    lo = j
    hi = j
    step = 1
    while hi < n and slots[hi, S_START] < t:
        lo = hi + 1
        hi = lo + step
        step <<= 1
    hi = min(hi, n)
    while lo < hi:
        mid = (lo + hi) >> 1
        if slots[mid, S_START] < t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@inline_kernel
def _earliest_fit_far(slots, meta, size, d, t0, limit):
    """:func:`_earliest_fit` without a moved booking, finding each window's end by
    galloping rather than by stepping through its rows: a window is read from its right
    end back to its last row without room only, so a search through a region where long
    windows keep failing reads a few rows per window instead of all of them (the clipped
    search with nothing to clip)."""
    return _earliest_fit_clipped(slots, meta, size, d, t0, limit, INF)


@kernel
def _exact_fit(slots, meta, size, d, t0, limit, ex0, ex1, ex_items):
    """The plain search, galloping when no booking is being moved.  A call, not inlined:
    the indexed search runs it once or twice a search, and each inlined copy of the two
    searches cost its kernel's compile about 3 CPU s."""
    if ex_items == 0:
        return _earliest_fit_far(slots, meta, size, d, t0, limit)
    return _earliest_fit(slots, meta, size, d, t0, limit, ex0, ex1, ex_items)


@inline_kernel
def _earliest_fit_indexed(slots, meta, index, size, d, t0, limit, ex0, ex1, ex_items):
    """:func:`_earliest_fit` (same arguments, same answer) reading only the blocks of
    ``index`` that might hold the start of a fitting window.

    The block holding t0 is searched row by row for starts before its end.  Then, block
    by block, ``carried`` bounds the run of room reaching the block's start from starts
    not yet ruled out: a block whose longest run at the job's level is shorter than d,
    and whose first run plus ``carried`` too, holds no start of a fit, and none of the
    starts carried into it fit unless the run goes on; otherwise the starts from its
    start - carried to its end are searched row by row (then none is carried).  Blocks
    that meet the moved booking [ex0, ex1) count as all free (their rows may be)."""
    m = index[0, 0]
    if m == 0 or size < 1 or meta[M_AVL] < size:
        return _earliest_fit_kernel(slots, meta, size, d, t0, limit, ex0, ex1, ex_items)
    k = 0
    while k + 1 < LEVELS and _threshold(k + 1) <= size:
        k += 1
    b = _block_of(index, t0)
    end = _block_end(index, b)
    found = _exact_fit(slots, meta, size, d, t0, min(limit, end), ex0, ex1, ex_items)
    if found >= 0 or limit <= end:
        return found
    carried = 0
    # the fields the search reads, as views (read through their rows, not the whole index)
    starts = _x(index, X_START)
    pres = _x(index, X_PRE + X_LEVEL * k)
    sufs = _x(index, X_SUF + X_LEVEL * k)
    bests = _x(index, X_BEST + X_LEVEL * k)
    gfirst = _x(index, X_GFIRST)
    gbound = _x(index, X_GBOUND + X_LEVEL * k)
    b += 1
    g = _group_of(index, b) if b <= m else 0
    gnext = _group_end(index, g) if b <= m else m + 1
    while b <= m:
        if b == gnext:
            g += 1
            gnext = _group_end(index, g)
        start = starts[b]
        if start - carried >= limit:
            return -1
        if b == gfirst[g] and gnext - b > 1:
            # the whole group at once, when its runs at level k are all short of d
            bound = gbound[g]
            if bound == -1 or bound <= -d - 2:  # not known, or loose and not short enough
                bound, loose = _group_best(index, g, k)
                gbound[g] = -bound - 2 if loose else bound
            elif bound < -1:
                bound = -bound - 2
            last = gnext - 1
            gend = _end_of(starts, m, last)
            if bound < d and not (ex_items != 0 and start < ex1 and gend > ex0):
                pre = pres[b]
                if (pre < _span(start, _end_of(starts, m, b)) and carried + pre < d
                        and pres[last] < _span(starts[last], gend)):
                    carried = sufs[last]
                    b = gnext
                    continue
        end = _end_of(starts, m, b)
        length = _span(start, end)
        if ex_items != 0 and start < ex1 and end > ex0:
            pre = length
            suf = length
            best = length
        else:
            pre = pres[b]
            suf = sufs[b]
            best = bests[b]
        if best >= d or carried + pre >= d:
            found = _exact_fit(slots, meta, size, d, start - carried, min(limit, end), ex0, ex1, ex_items)
            if found >= 0 or limit <= end:
                return found
            carried = 0
            if index[_xi(index, X_LOOSE, b)]:  # searched for nothing on loose runs: exact for the next searches
                _index_recompute(slots, meta, index, b)
                b += 1 + index[0, 0] - m  # past both halves of a split block
                m = index[0, 0]
                gnext = _group_end(index, g)
                continue
        elif pre >= length:
            carried = min(carried + length, INF)
        else:
            carried = suf
        b += 1
    return -1


@kernel
def _earliest_fit_indexed_kernel(slots, meta, index, size, d, t0, limit, ex0, ex1, ex_items):
    """Kernel entry of :func:`_earliest_fit_indexed`."""
    return _earliest_fit_indexed(slots, meta, index, size, d, t0, limit, ex0, ex1, ex_items)


# --------------------------------------------------------------------------- Python API


def new(max_avl: int, *, kind: Kind = Kind.USED, avl: int | None = None, min_dist: int = 1, cap: int = 16) -> Rusv:
    """An empty vector of a resource with ``max_avl`` items (``avl`` defaults to it)."""
    if max_avl < 0 or min_dist < 1 or cap < 4:
        raise ValueError("max_avl must be >= 0, min_dist >= 1 and cap >= 4")
    avl = max_avl if avl is None else avl
    if not 0 <= avl <= max_avl:
        raise ValueError(f"avl {avl} not in [0, max_avl {max_avl}]")
    meta = np.array([0, max_avl, avl, min_dist, int(kind)], dtype=np.int64)
    return Rusv(np.zeros((cap, 3), dtype=np.int64), meta)


def grow(r: Rusv, cap: int | None = None) -> None:
    """Enlarge ``r``'s slot array in place (to ``cap`` rows, default 1.5x + 16)."""
    old = r.slots.shape[0]
    cap = cap if cap is not None else old + old // 2 + 16
    if cap > old:
        r.slots.resize((cap, 3), refcheck=False)


def slots_of(r: Rusv) -> np.ndarray:
    """A copy of the stored slots, int64 (n, 3)."""
    return r.slots[: r.meta[M_N]].copy()


def _check(start: int, stop: int) -> None:
    if not -INF < start < stop <= INF:
        raise ValueError(f"a slot needs start < stop, not [{start}, {stop})")


BLOCK_ROWS = 64
"""Rows per block of a slot index when built (blocks split past twice as many)."""


def build_index(r: Rusv, block_rows: int = BLOCK_ROWS, group_blocks: int = GROUP_BLOCKS) -> np.ndarray:
    """A slot index of ``r`` (int64 (X_WIDTH, cols), see ``X_*``) with room for the
    vector's capacity, blocks of ``block_rows`` rows in groups of ``group_blocks``; an
    index with no blocks (plain searches) for a free vector or min_dist > 1.  Keep it
    current by passing it to every operation on ``r`` (``index=``)."""
    if block_rows < 1 or group_blocks < 1:
        raise ValueError("block_rows and group_blocks must be >= 1")
    index = np.zeros((X_WIDTH, _index_cap(r, block_rows)), dtype=np.int64)
    index[X_GROUP_BLOCKS, 0] = group_blocks
    _index_build(r.slots, r.meta, index, np.int64(block_rows))
    return index


def _index_cap(r: Rusv, block_rows: int) -> int:
    return index_columns(r.slots.shape[0], block_rows)


def index_columns(cap: int, block_rows: int = BLOCK_ROWS) -> int:
    """Columns of a slot index for a vector of ``cap`` rows: entries per field for the
    header, every block of a build, and room for as many splits, X_PACK fields a row."""
    return X_PACK * (2 * (cap // block_rows) + 16)


def index_field(index: np.ndarray, f: int) -> np.ndarray:
    """Field ``f`` of a slot index (``X_START``, ``X_PRE + X_LEVEL * k``, ``X_GFIRST``, ...): a
    view, entry b for block (or group) b; entry 0 is not the field's (the kernels' own
    accessor, run as Python)."""
    return _x.py_func(index, f)


def kept_index(cap: int, block_rows: int = BLOCK_ROWS, on_rows: int = INDEX_ON_ROWS,
               off_rows: int = INDEX_OFF_ROWS) -> np.ndarray:
    """An empty index (no blocks) for a vector of ``cap`` rows that :func:`_index_keep`
    builds past ``on_rows`` rows and drops below ``off_rows``."""
    if block_rows < 1 or off_rows > on_rows:
        raise ValueError("block_rows must be >= 1 and off_rows <= on_rows")
    index = np.zeros((X_WIDTH, index_columns(cap, block_rows)), dtype=np.int64)
    index[1, 0] = block_rows
    index[X_ON, 0] = on_rows
    index[X_OFF, 0] = off_rows
    return index


def _room_for_splits(r: Rusv, index: np.ndarray) -> None:
    """After ``r`` grew: a larger index, rebuilt (blocks beyond its room are not split)."""
    block_rows = max(int(index[1, 0]), 1)
    if index.shape[1] < _index_cap(r, block_rows):
        group_blocks = int(index[X_GROUP_BLOCKS, 0])
        index.resize((X_WIDTH, _index_cap(r, block_rows)), refcheck=False)
        index[X_GROUP_BLOCKS, 0] = group_blocks  # (resize moved the header's entries)
        _index_build(r.slots, r.meta, index, np.int64(block_rows))


def increment(r: Rusv, start: int, stop: int, items: int, index: np.ndarray | None = None) -> None:
    """``r ⊕ (start, stop, items)``: ``items`` more over [start, stop) (``index``, when
    given, is kept a summary of ``r``)."""
    _check(start, stop)
    args = (np.int64(start), np.int64(stop), np.int64(items))
    if index is None:
        while not _add(r.slots, r.meta, *args):
            grow(r)
        return
    while not _add_indexed(r.slots, r.meta, index, *args):
        grow(r)
    _room_for_splits(r, index)


def decrement(r: Rusv, start: int, stop: int, items: int, index: np.ndarray | None = None) -> None:
    """``r ⊖ (start, stop, items)``: ``items`` fewer over [start, stop)."""
    increment(r, start, stop, -items, index)


def copy(r: Rusv) -> Rusv:
    return Rusv(r.slots.copy(), r.meta.copy())


def plus(r1: Rusv, r2: Rusv) -> Rusv:
    """``r1 + r2``: r1 ⊕ every slot of r2 (a new vector)."""
    out = copy(r1)
    for start, stop, items in slots_of(r2):
        increment(out, int(start), int(stop), int(items))
    return out


def minus(r1: Rusv, r2: Rusv) -> Rusv:
    """``r1 - r2``: r1 ⊖ every slot of r2 (a new vector)."""
    out = copy(r1)
    for start, stop, items in slots_of(r2):
        decrement(out, int(start), int(stop), int(items))
    return out


def _combined(r1: Rusv, r2: Rusv, op: int, kind: Kind) -> Rusv:
    n = int(r1.meta[M_N] + r2.meta[M_N])
    out = new(int(r1.meta[M_MAX_AVL]), kind=kind, avl=int(r1.meta[M_AVL]),
              min_dist=int(r1.meta[M_MIN_DIST]), cap=max(4, 2 * n + 1))
    if not _combine(r1.slots, r1.meta, r2.slots, r2.meta, op, out.slots, out.meta):
        raise AssertionError("unreachable: the output is sized for every piece")
    return out


def mf(r1: Rusv, r2: Rusv) -> Rusv:
    """minFree: the used vector max(r1(t), r1.avl - r2(t)), r1 storing used items and r2
    free items (a limit's allowance); where r2 stores nothing there is no limit."""
    if r1.meta[M_KIND] != Kind.USED or r2.meta[M_KIND] != Kind.FREE:
        raise ValueError("mf takes a used vector and a free vector")
    return _combined(r1, r2, OP_MF, Kind.USED)


def intersect(r1: Rusv, r2: Rusv) -> Rusv:
    """``r1 ∩ r2`` of two free vectors: min(r1(t), r2(t))."""
    if r1.meta[M_KIND] != Kind.FREE or r2.meta[M_KIND] != Kind.FREE:
        raise ValueError("∩ takes two free vectors")
    return _combined(r1, r2, OP_INTERSECT, Kind.FREE)


def value_at(r: Rusv, t: int) -> int:
    return int(_value_at(r.slots, r.meta, np.int64(t)))


def max_in(r: Rusv, t0: int, t1: int) -> int:
    """The largest value of ``r`` over [t0, t1)."""
    _check(t0, t1)
    return int(_max_used(r.slots, r.meta, np.int64(t0), np.int64(t1)))


def get_free_slots(r: Rusv, free_min: int, d: int, t1: int, t2: int) -> np.ndarray:
    """getFreeSlots(R, F, D, T1, T2) on a used vector: int64 (m, 3) windows (start, stop,
    least free items) inside [t1, t2) with >= ``free_min`` free throughout, lasting >= d."""
    if r.meta[M_KIND] != Kind.USED:
        raise ValueError("getFreeSlots takes a used vector")
    _check(t1, t2)
    out = np.empty((int(r.meta[M_N]) + 1, 3), dtype=np.int64)
    m = _get_free_slots(r.slots, r.meta, np.int64(free_min), np.int64(d), np.int64(t1), np.int64(t2), out)
    return out[:m].copy()


def earliest_fit(r: Rusv, size: int, d: int, t0: int, limit: int = int(INF),
                 exclude: tuple[int, int, int] = (0, 0, 0), index: np.ndarray | None = None) -> int:
    """Earliest t >= t0 at which ``size`` more items fit in the used vector ``r`` for
    ``d`` >= 1 seconds, counting ``exclude = (start, stop, items)`` as not there; -1 when
    none before ``limit`` (or size > avl).  With ``index`` (a current :func:`build_index`
    of ``r``) the search skips the blocks that cannot matter; the answer is the same."""
    if r.meta[M_KIND] != Kind.USED or d < 1:
        raise ValueError("earliest_fit takes a used vector and d >= 1")
    ex0, ex1, exi = exclude
    args = (np.int64(size), np.int64(d), np.int64(t0), np.int64(limit), np.int64(ex0), np.int64(ex1), np.int64(exi))
    if index is None:
        return int(_earliest_fit_kernel(r.slots, r.meta, *args))
    return int(_earliest_fit_indexed_kernel(r.slots, r.meta, index, *args))


def earliest_fit_clipped(r: Rusv, size: int, d: int, t0: int, clip: int, limit: int | None = None) -> int:
    """Earliest t >= t0, before ``limit`` (default ``clip``, at most ``clip``), at which
    ``size`` more items fit in the used vector ``r`` over [t, min(t + d, clip)); -1 when
    none.  When ``r`` holds a booking of ``size`` items at [clip, clip + d) and never
    exceeds avl, this is :func:`earliest_fit` with that booking excluded."""
    limit = clip if limit is None else limit
    if r.meta[M_KIND] != Kind.USED or d < 1 or limit > clip:
        raise ValueError("earliest_fit_clipped takes a used vector, d >= 1 and limit <= clip")
    return int(_earliest_fit_clipped_kernel(r.slots, r.meta, np.int64(size), np.int64(d), np.int64(t0),
                                            np.int64(limit), np.int64(clip)))


def earliest_fit_valid(r: Rusv, size: int, d: int, t0: int, room: int, valid, limit: int = int(INF)) -> int:
    """Earliest t >= t0 such that ``size`` more items stay within ``room`` in the used
    vector ``r`` at every instant of [t, t + d) inside the ``valid`` intervals (int64 (v,
    2), sorted, disjoint, [start, stop)); -1 when none before ``limit``."""
    valid = np.ascontiguousarray(valid, dtype=np.int64).reshape(-1, 2)
    if r.meta[M_KIND] != Kind.USED or d < 1:
        raise ValueError("earliest_fit_valid takes a used vector and d >= 1")
    if valid.shape[0] and (np.any(valid[:, 0] >= valid[:, 1]) or np.any(valid[1:, 0] < valid[:-1, 1])):
        raise ValueError("valid intervals must be non-empty, sorted and disjoint")
    return int(_earliest_fit_valid_kernel(r.slots, r.meta, np.int64(size), np.int64(d), np.int64(t0),
                                          np.int64(limit), np.int64(room), valid))


# --------------------------------------------------------------------------- kernel API
# What planning schedulers call from their own kernels (public aliases of the kernels
# above; shapes as in the module docstring).
kernel_add = _add
kernel_add_two = _add_two
kernel_earliest_fit = _earliest_fit
kernel_earliest_fit_clipped = _earliest_fit_clipped
kernel_first_stop_after = _first_stop_after
kernel_first_stop_after_from = _first_stop_after_from
kernel_max_in = _max_in
kernel_value_at = _value_at
kernel_earliest_fit_valid = _earliest_fit_valid
# the same with a slot index (pass the index to every operation on an indexed vector)
kernel_index_build = _index_build
kernel_index_sync = _index_sync
kernel_index_keep = _index_keep
kernel_add_indexed = _add_indexed
kernel_add_two_indexed = _add_two_indexed
kernel_earliest_fit_indexed = _earliest_fit_indexed
kernel_earliest_fit_indexed_call = _earliest_fit_indexed_kernel  # the same, called rather than inlined
