"""RUSV kernels (Keller §4) against a naive per-second array model."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedbench.plan import rusv as R

H = 60  # every slot of these tests lies in [0, H)
AVL = 8

ops = st.lists(
    st.tuples(st.integers(0, H - 1), st.integers(1, 20), st.integers(-AVL, AVL)),
    max_size=25,
)


def naive_apply(v: np.ndarray, kind: R.Kind, start: int, stop: int, x: int) -> None:
    v[start:stop] += x
    if kind == R.Kind.USED:
        np.maximum(v, 0, out=v)
    else:
        np.minimum(v, AVL, out=v)


def values(r: R.Rusv, horizon: int = H + 5) -> np.ndarray:
    return np.array([R.value_at(r, t) for t in range(horizon)])


def build(kind: R.Kind, seq) -> tuple[R.Rusv, np.ndarray]:
    r = R.new(AVL, kind=kind, cap=4)  # small: the operations grow it
    v = np.full(H + 5, 0 if kind == R.Kind.USED else AVL)
    for start, length, x in seq:
        stop = min(start + length, H)
        R.increment(r, start, stop, x)
        naive_apply(v, kind, start, stop, x)
    return r, v


def assert_normal(r: R.Rusv) -> None:
    s = R.slots_of(r)
    kind = r.meta[R.M_KIND]
    for k, (a, b, items) in enumerate(s):
        assert a < b
        assert (items > 0) if kind == R.Kind.USED else (items < AVL)
        if k:
            pa, pb, pitems = s[k - 1]
            assert pb <= a
            assert not (pitems == items and a - pb < 1), "equal touching neighbours must be joined"


@settings(max_examples=150, deadline=None)
@given(seq=ops, kind=st.sampled_from(list(R.Kind)))
def test_increments_match_naive(seq, kind):
    r, v = build(kind, seq)
    assert_normal(r)
    assert np.array_equal(values(r), v)


@settings(max_examples=200, deadline=None)
@given(seq=ops, kind=st.sampled_from(list(R.Kind)),
       op=st.tuples(st.integers(0, H - 1), st.integers(1, 20), st.integers(-AVL, AVL).filter(bool)))
def test_addition_in_spare_rows_equals_the_one_in_place(seq, kind, op):
    """kernel_add with spare rows for its rewrite (one tail move) gives the rows of the
    in-place addition (a move per split, gap and join), which it falls back to without."""
    r, v = build(kind, seq)
    start, length, x = op
    stop = min(start + length, H)
    spare = R.copy(r)
    R.grow(spare, 4 * int(r.meta[R.M_N]) + 64)
    R.grow(r, int(r.meta[R.M_N]) + 8)  # room for the in-place addition only
    assert R.kernel_add(spare.slots, spare.meta, np.int64(start), np.int64(stop), np.int64(x))
    assert R._add_in_place(r.slots, r.meta, np.int64(start), np.int64(stop), np.int64(x))
    naive_apply(v, kind, start, stop, x)
    assert np.array_equal(R.slots_of(spare), R.slots_of(r))
    assert_normal(spare)
    assert np.array_equal(values(spare), v)


@settings(max_examples=100, deadline=None)
@given(seq=st.lists(st.tuples(st.integers(0, H - 1), st.integers(1, 20), st.integers(1, AVL)), max_size=20),
       extra=st.tuples(st.integers(0, H - 1), st.integers(1, 30), st.integers(1, AVL)))
def test_increment_then_decrement_restores(seq, extra):
    r, _ = build(R.Kind.USED, seq)
    before = R.slots_of(r)
    start, length, x = extra
    R.increment(r, start, start + length, x)
    R.decrement(r, start, start + length, x)
    assert np.array_equal(R.slots_of(r), before)


@settings(max_examples=100, deadline=None)
@given(a=ops, b=ops)
def test_intersection_is_commutative_and_a_minimum(a, b):
    r1, v1 = build(R.Kind.FREE, a)
    r2, v2 = build(R.Kind.FREE, b)
    x, y = R.intersect(r1, r2), R.intersect(r2, r1)
    assert np.array_equal(R.slots_of(x), R.slots_of(y))
    assert_normal(x)
    assert np.array_equal(values(x), np.minimum(v1, v2))


@settings(max_examples=100, deadline=None)
@given(a=ops, b=ops)
def test_min_free_matches_naive(a, b):
    used, vu = build(R.Kind.USED, a)
    allowance, va = build(R.Kind.FREE, b)
    out = R.mf(used, allowance)
    assert_normal(out)
    assert np.array_equal(values(out), np.maximum(vu, AVL - va))


@settings(max_examples=100, deadline=None)
@given(seq=ops, free_min=st.integers(0, AVL), d=st.integers(1, 15), t1=st.integers(0, 30), span=st.integers(1, 40))
def test_get_free_slots_returns_exactly_the_free_windows(seq, free_min, d, t1, span):
    r, v = build(R.Kind.USED, seq)
    t2 = t1 + span
    free = AVL - v[t1:t2] if t2 <= len(v) else AVL - np.concatenate([v, np.zeros(t2 - len(v), int)])[t1:t2]
    want = []
    t = 0
    while t < span:
        if free[t] >= free_min:
            u = t
            while u < span and free[u] >= free_min:
                u += 1
            if u - t >= d:
                want.append((t1 + t, t1 + u, int(free[t:u].min())))
            t = u
        else:
            t += 1
    got = [tuple(int(x) for x in row) for row in R.get_free_slots(r, free_min, d, t1, t2)]
    assert got == want


@settings(max_examples=150, deadline=None)
@given(seq=st.lists(st.tuples(st.integers(0, H - 1), st.integers(1, 20), st.integers(1, AVL)), max_size=20),
       size=st.integers(0, AVL + 1), d=st.integers(1, 15), t0=st.integers(0, 40),
       ex=st.tuples(st.integers(0, H - 1), st.integers(1, 20), st.integers(0, AVL)))
def test_earliest_fit_is_the_first_window_that_fits(seq, size, d, t0, ex):
    r, v = build(R.Kind.USED, seq)
    ex0, length, exi = ex
    ex1 = ex0 + length
    eff = np.concatenate([v, np.zeros(200, int)])
    eff[ex0:ex1] -= exi
    got = R.earliest_fit(r, size, d, t0, exclude=(ex0, ex1, exi))
    if size > AVL:
        assert got == -1
        return
    want = next(t for t in range(t0, 400) if (eff[t:t + d] + size <= AVL).all())
    assert got == want
    limited = R.earliest_fit(r, size, d, t0, limit=want, exclude=(ex0, ex1, exi))
    assert limited == -1


@settings(max_examples=150, deadline=None)
@given(seq=st.lists(st.tuples(st.integers(0, H - 1), st.integers(1, 20), st.integers(1, AVL)), max_size=20),
       size=st.integers(0, AVL + 1), d=st.integers(1, 15), t0=st.integers(0, 40), clip=st.integers(0, H + 5),
       short=st.integers(0, 10))
def test_clipped_fit_is_the_first_window_that_fits_before_the_clip(seq, size, d, t0, clip, short):
    """Windows [t, min(t + d, clip)) on any vector, even one above avl (then only the part
    before the clip counts)."""
    r, v = build(R.Kind.USED, seq)
    used = np.concatenate([v, np.zeros(200, int)])
    limit = max(clip - short, 0)
    got = R.earliest_fit_clipped(r, size, d, t0, clip, limit=limit)
    want = next((t for t in range(t0, limit) if (used[t:min(t + d, clip)] + size <= AVL).all()), -1)
    assert got == (-1 if size > AVL else want)


@settings(max_examples=200, deadline=None)
@given(bookings=st.lists(st.tuples(st.integers(0, H - 1), st.integers(1, 20), st.integers(1, AVL)), max_size=20),
       move=st.tuples(st.integers(0, H - 1), st.integers(1, 20), st.integers(1, AVL)), t0=st.integers(0, H),
       short=st.integers(0, 10))
def test_clipped_fit_is_a_moved_bookings_earliest_fit(bookings, move, t0, short):
    """What conservative compression relies on: on a plan that never exceeds avl (each
    booking at its earliest fit) and holds a booking of ``size`` items at [b0, b0 + d),
    the clipped search before b0 is the earliest fit with that booking excluded."""
    r = R.new(AVL, cap=4)
    for at, length, x in bookings:
        t = R.earliest_fit(r, x, length, at)
        R.increment(r, t, t + length, x)
    at, d, size = move
    b0 = R.earliest_fit(r, size, d, at)
    R.increment(r, b0, b0 + d, size)
    assert R.max_in(r, 0, 4 * H) <= AVL
    limit = max(b0 - short, 0)
    want = R.earliest_fit(r, size, d, t0, limit=limit, exclude=(b0, b0 + d, size))
    assert R.earliest_fit_clipped(r, size, d, t0, b0, limit=limit) == want


@st.composite
def validities(draw):
    """Sorted disjoint [start, stop) intervals inside [0, 2H)."""
    edges = sorted(set(draw(st.lists(st.integers(0, 2 * H), max_size=8))))
    pairs = [(edges[i], edges[i + 1]) for i in range(0, len(edges) - 1, 2)]
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


@settings(max_examples=200, deadline=None)
@given(seq=ops, size=st.integers(0, AVL), room=st.integers(-1, AVL), d=st.integers(1, 25),
       t0=st.integers(0, H), valid=validities())
def test_earliest_fit_under_a_limit_binds_only_while_valid(seq, size, room, d, t0, valid):
    r, v = build(R.Kind.USED, seq)
    used = np.concatenate([v, np.zeros(400, int)])
    inside = np.zeros(used.size, dtype=bool)
    for a, b in valid:
        inside[a:b] = True
    ok = ~inside | (used + size <= room)
    want = next(t for t in range(t0, used.size - 30) if ok[t:t + d].all())
    assert R.earliest_fit_valid(r, size, d, t0, room, valid) == want
    assert R.earliest_fit_valid(r, size, d, t0, room, valid, limit=want) == -1


def test_min_dist_joins_close_equal_slots():
    r = R.new(10, min_dist=5)
    R.increment(r, 0, 10, 3)
    R.increment(r, 13, 20, 3)  # gap 3 < 5: joined at 3 items
    assert R.slots_of(r).tolist() == [[0, 20, 3]]
    R.increment(r, 30, 40, 3)  # gap 10: kept apart
    assert R.slots_of(r).tolist() == [[0, 20, 3], [30, 40, 3]]


def test_bad_slots_are_refused():
    import pytest

    r = R.new(4)
    with pytest.raises(ValueError):
        R.increment(r, 5, 5, 1)
    with pytest.raises(ValueError):
        R.new(4, avl=5)


@settings(max_examples=200, deadline=None)
@given(seq=ops, kind=st.sampled_from(list(R.Kind)),
       first=st.tuples(st.integers(0, H - 1), st.integers(1, 20), st.integers(-AVL, AVL).filter(bool)),
       second=st.tuples(st.integers(0, H - 1), st.integers(1, 20), st.integers(-AVL, AVL).filter(bool)),
       spare=st.sampled_from([0, 8, 200]))
def test_two_operations_in_one_equal_them_one_after_the_other(seq, kind, first, second, spare):
    """kernel_add_two (a booking's move: one tail shift) == two kernel_add calls, on
    vectors with room for its in-place rewrite and without (then it falls back)."""
    r, v = build(kind, seq)
    (a0, la, x), (c0, lc, y) = first, second
    a1, c1 = min(a0 + la, H), min(c0 + lc, H)
    R.grow(r, int(r.meta[R.M_N]) * 2 + 8 + spare)
    two = R.copy(r)
    R.grow(two, 4 * int(r.meta[R.M_N]) + 64)
    assert R.kernel_add(two.slots, two.meta, a0, a1, x) and R.kernel_add(two.slots, two.meta, c0, c1, y)
    naive_apply(v, kind, a0, a1, x)
    naive_apply(v, kind, c0, c1, y)
    if R.kernel_add_two(r.slots, r.meta, np.int64(a0), np.int64(a1), np.int64(x), np.int64(c0), np.int64(c1),
                        np.int64(y)):
        assert np.array_equal(R.slots_of(r), R.slots_of(two))
        assert_normal(r)
        assert np.array_equal(values(r), v)
    else:  # no room for both: nothing changed
        before, _ = build(kind, seq)
        assert np.array_equal(R.slots_of(r), R.slots_of(before))


# --------------------------------------------------------------------------- the slot index

index_ops = st.lists(
    st.tuples(st.integers(0, H - 1), st.integers(1, 20), st.integers(-AVL, AVL).filter(bool), st.booleans()),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(seq=index_ops, block_rows=st.integers(1, 4), group_blocks=st.integers(1, 4), size=st.integers(0, AVL + 1),
       d=st.integers(1, 25), t0=st.integers(0, H), limit=st.one_of(st.none(), st.integers(0, 3 * H)),
       ex=st.tuples(st.integers(0, H - 1), st.integers(1, 20), st.integers(0, AVL)),
       searches=st.lists(st.tuples(st.integers(1, AVL), st.integers(1, 25), st.integers(0, H)), max_size=3))
def test_indexed_earliest_fit_equals_the_plain_one(seq, block_rows, group_blocks, size, d, t0, limit, ex, searches):
    """An index kept through ⊕/⊖ and moves (blocks of 1-4 rows in groups of 1-4, so that
    blocks split, bookings leave them loose and many blocks and groups are skipped) never
    changes the answer, with or without a moved booking; searches in between (which
    recompute loose blocks and groups) neither."""
    r = R.new(AVL, cap=4)
    index = R.build_index(r, block_rows, group_blocks)
    plain = R.new(AVL, cap=4)  # the same operations without the index (the tail moved per step)
    v = np.zeros(H + 5, int)
    for start, length, x, as_move in seq:
        stop = min(start + length, H)
        if as_move:  # a booking's move: -x where it was, +x one step later
            R.grow(r, 4 * int(r.meta[R.M_N]) + 64)
            R._room_for_splits(r, index)
            assert R.kernel_add_two_indexed(r.slots, r.meta, index, np.int64(start), np.int64(stop), np.int64(-x),
                                            np.int64(start + 1), np.int64(stop + 1), np.int64(x))
            naive_apply(v, R.Kind.USED, start, stop, -x)
            naive_apply(v, R.Kind.USED, start + 1, stop + 1, x)
            R.decrement(plain, start, stop, x)
            R.increment(plain, start + 1, stop + 1, x)
        else:
            R.increment(r, start, stop, x, index=index)
            naive_apply(v, R.Kind.USED, start, stop, x)
            R.increment(plain, start, stop, x)
        for s_size, s_d, s_t0 in searches:
            assert R.earliest_fit(r, s_size, s_d, s_t0, index=index) == R.earliest_fit(plain, s_size, s_d, s_t0)
    assert np.array_equal(values(r), v)  # the vector itself is the plain kernels'
    assert np.array_equal(R.slots_of(r), R.slots_of(plain))  # row for row
    ex0, length, exi = ex
    kw = {"exclude": (ex0, ex0 + length, exi), "limit": int(R.INF) if limit is None else limit}
    assert R.earliest_fit(r, size, d, t0, index=index, **kw) == R.earliest_fit(r, size, d, t0, **kw)


def test_index_skips_blocks_with_no_long_enough_run():
    """A hand-made plan: 1 item free on [0, 96) except 4-second holes of 8 free every 10 s;
    the last booking ends at 96.  A job of 4 items for 5 s fits at 96; the index's blocks (2
    rows) all have runs of at least 4 free shorter than 5 s, and the answer is the same."""
    r = R.new(8)
    for t in range(0, 100, 10):
        R.increment(r, t, t + 6, 7)
    index = R.build_index(r, 2)  # 10 rows, 2 a block: blocks from -INF, 20, 40, 60, 80
    blocks = int(index[0, 0])
    assert R.index_field(index, R.X_START)[1 : blocks + 1].tolist() == [-R.INF, 20, 40, 60, 80]
    k = 4  # level 4: 4 items (levels 1, 1, 2, 3, 4, ...)
    assert R._threshold.py_func(k) == 4
    assert R.index_field(index, R.X_BEST + R.X_LEVEL * k)[2:blocks].tolist() == [4] * 3  # the holes: 4 s with 8 free
    assert R.index_field(index, R.X_PRE + R.X_LEVEL * k)[2:blocks].tolist() == [0] * 3  # each block starts at 7 used
    assert R.index_field(index, R.X_SUF + R.X_LEVEL * k)[2:blocks].tolist() == [4] * 3
    assert R.index_field(index, R.X_BEST)[2:blocks].tolist() == [20] * 3  # 1 item free throughout
    assert R.index_field(index, R.X_BEST + R.X_LEVEL * k)[blocks] == R.INF  # the last block runs free for ever
    assert R.earliest_fit(r, 4, 5, 0, index=index) == R.earliest_fit(r, 4, 5, 0) == 96
    assert R.earliest_fit(r, 4, 4, 0, index=index) == 6
    assert R.earliest_fit(r, 1, 50, 0, index=index) == 0  # 1 item free throughout


def test_levels_are_two_an_octave():
    assert [R._threshold.py_func(k) for k in range(12)] == [1, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48]
    assert R._threshold.py_func(R.LEVELS - 1) == 32_768


def holes_plan():
    """1 item free on [0, 96) except 4-second holes of 8 free every 10 s ([6, 10), [16,
    20), ...); blocks of 2 rows from -INF, 20, 40, 60, 80, in groups of 2 blocks."""
    r = R.new(8)
    for t in range(0, 100, 10):
        R.increment(r, t, t + 6, 7)
    return r, R.build_index(r, 2, 2)


def test_groups_keep_their_longest_run_and_are_skipped_whole():
    r, index = holes_plan()
    assert int(index[R.X_GROUPS, 0]) == 3
    assert R.index_field(index, R.X_GFIRST)[1:4].tolist() == [1, 3, 5]
    # level 4 (4 items): group 1 holds the run from -INF, group 2 only 4-second holes, group 3 the free end
    assert R.index_field(index, R.X_GBOUND + R.X_LEVEL * 4)[1:4].tolist() == [R.INF, 4, R.INF]
    assert R.earliest_fit(r, 4, 5, 0, index=index) == R.earliest_fit(r, 4, 5, 0) == 96


def test_a_booking_leaves_runs_loose_and_a_removal_unknown():
    """A booking marks its blocks loose and their groups' bounds possibly loose (-(b + 2)),
    without recomputing them; a search that row-scans a loose block for nothing recomputes
    it; a removal recomputes its blocks and marks their groups' bounds unknown (-1), which
    the next search that meets them makes exact again."""
    r, index = holes_plan()
    R.increment(r, 47, 48, 1, index=index)  # block 3, group 2
    assert R.index_field(index, R.X_LOOSE)[1:6].tolist() == [0, 0, 1, 0, 0]
    assert R.index_field(index, R.X_GBOUND + R.X_LEVEL * 4)[2] == -(4 + 2)
    assert R.earliest_fit(r, 4, 5, 0, index=index) == R.earliest_fit(r, 4, 5, 0) == 96
    R.decrement(r, 47, 48, 1, index=index)
    assert R.index_field(index, R.X_LOOSE)[3] == 0 and R.index_field(index, R.X_GBOUND + R.X_LEVEL * 4)[2] == -1
    assert R.earliest_fit(r, 4, 5, 0, index=index) == 96
    assert R.index_field(index, R.X_GBOUND + R.X_LEVEL * 4)[2] == 4
    # fill both holes of block 2 ([20, 40)) to 3 free: its runs at level 4 say 4 s still
    R.increment(r, 26, 30, 5, index=index)
    R.increment(r, 36, 40, 5, index=index)
    assert R.index_field(index, R.X_LOOSE)[2] == 1 and R.index_field(index, R.X_BEST + R.X_LEVEL * 4)[2] == 4
    assert R.earliest_fit(r, 4, 4, 17, index=index) == R.earliest_fit(r, 4, 4, 17) == 46
    assert R.index_field(index, R.X_LOOSE)[2] == 0 and R.index_field(index, R.X_BEST + R.X_LEVEL * 4)[2] == 0  # scanned for nothing: exact


def test_no_index_for_a_free_vector_or_min_dist():
    assert R.build_index(R.new(8, kind=R.Kind.FREE))[0, 0] == 0
    r = R.new(8, min_dist=3)
    index = R.build_index(r)
    assert index[0, 0] == 0
    R.increment(r, 0, 10, 8, index=index)
    assert R.earliest_fit(r, 1, 5, 0, index=index) == 10


def test_index_sync_builds_past_the_threshold_and_drops_below():
    """Below INDEX_ON_ROWS the index stays empty (plain searches); past it, sync builds it
    and the searches agree; below INDEX_OFF_ROWS again, sync drops it."""
    rng = np.random.default_rng(3)
    r = R.new(64, cap=4 * R.INDEX_ON_ROWS + 64)
    index = np.zeros((R.X_WIDTH, R.index_columns(r.slots.shape[0])), dtype=np.int64)
    bookings = []
    t = 0
    while r.meta[R.M_N] <= R.INDEX_ON_ROWS:
        t += int(rng.integers(1, 50))
        b = (t, t + int(rng.integers(1, 200)), int(rng.integers(1, 64)))
        bookings.append(b)
        R.increment(r, *b, index=index)
        R.kernel_index_sync(r.slots, r.meta, index, np.int64(R.BLOCK_ROWS))
        assert (index[0, 0] > 0) == (r.meta[R.M_N] > R.INDEX_ON_ROWS)
    for size, d in [(1, 300), (32, 60), (63, 1000), (64, 5)]:
        assert R.earliest_fit(r, size, d, 0, index=index) == R.earliest_fit(r, size, d, 0)
    for b in bookings:
        R.decrement(r, *b, index=index)
        R.kernel_index_sync(r.slots, r.meta, index, np.int64(R.BLOCK_ROWS))
        assert R.earliest_fit(r, 40, 100, 0, index=index) == R.earliest_fit(r, 40, 100, 0)
    assert r.meta[R.M_N] == 0 and index[0, 0] == 0


def test_index_fields_are_packed_apart_from_the_header():
    """X_PACK fields share each row of the array: entries 1.. of every field are its own
    (no two fields, and no header entry index[r, 0], share an element)."""
    counts = np.zeros((R.X_WIDTH, R.index_columns(300)), dtype=np.int64)
    for f in range(R.X_FIELDS):
        R.index_field(counts, f)[1:] += 1
    assert counts.max() == 1 and counts[:, 0].sum() == 0
    assert R.X_WIDTH * R.X_PACK >= R.X_FIELDS and max(R.X_ON, R.X_OFF, R.X_GROUPS, R.X_GROUP_BLOCKS) < R.X_WIDTH


@pytest.mark.parametrize("cap", [1_027, 4_096, 80_016])
def test_an_index_fits_in_as_many_columns_as_its_vector_has_rows(cap):
    """A caller that keeps an index beside a vector of cap rows in an array of cap columns
    (the conservative pool) has room for every block of a build and as many splits, once
    the vector is long enough to be indexed; the searches through such an index agree."""
    assert cap >> R.X_PACK_SHIFT >= R.index_columns(cap) // R.X_PACK
    rng = np.random.default_rng(cap)
    r = R.new(64, cap=cap)
    while r.meta[R.M_N] < min(cap // 2, 1_500):
        t = int(rng.integers(0, 100_000))
        R.increment(r, t, t + int(rng.integers(1, 500)), int(rng.integers(1, 64)))
    index = np.zeros((R.X_WIDTH, cap), dtype=np.int64)
    R.kernel_index_build(r.slots, r.meta, index, np.int64(R.BLOCK_ROWS))
    assert index[0, 0] > 1
    for size, d in [(1, 300), (32, 60), (63, 1000), (64, 5)]:
        assert R.earliest_fit(r, size, d, 0, index=index) == R.earliest_fit(r, size, d, 0)
