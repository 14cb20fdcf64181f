"""The moves of a vector's tail (one memmove, :func:`schedbench.plan.rusv._memmove_rows`):
the intrinsic against numpy's copy on overlapping ranges, and operations inside a long
vector that shift the rows after them, with the rows written out by hand."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from schedbench.plan import rusv as R


@numba.njit
def _move(slots, dst, src, count):
    R._memmove_rows(slots, dst, src, count)


@pytest.mark.parametrize(("dst", "src", "count"), [(3, 1, 5), (1, 3, 5), (0, 6, 4), (6, 0, 4), (2, 2, 3), (4, 1, 0)])
def test_memmove_rows_is_a_copy_of_whole_rows(dst, src, count):
    slots = np.arange(30, dtype=np.int64).reshape(10, 3)
    want = slots.copy()
    want[dst : dst + count] = slots[src : src + count].copy()  # what an overlapping move must give
    _move(slots, np.int64(dst), np.int64(src), np.int64(count))
    assert slots.tolist() == want.tolist()


def _comb(rows: int) -> R.Rusv:
    """Rows [10 i, 10 i + 5) x 1 item, i < rows, on 8 items."""
    r = R.new(8, cap=4)
    for i in range(rows):
        R.increment(r, 10 * i, 10 * i + 5, 1)
    return r


def test_a_booking_inside_a_long_vector_shifts_the_tail_right():
    r = _comb(200)
    R.increment(r, 13, 27, 2)  # splits [10, 15), fills the gap [15, 20), covers [20, 25), fills [25, 27)
    got = R.slots_of(r)
    assert got[:6].tolist() == [[0, 5, 1], [10, 13, 1], [13, 15, 3], [15, 20, 2], [20, 25, 3], [25, 27, 2]]
    assert got[6:].tolist() == [[10 * i, 10 * i + 5, 1] for i in range(3, 200)]


def test_a_release_inside_a_long_vector_shifts_the_tail_left():
    r = _comb(200)
    R.decrement(r, 10, 35, 1)  # rows [10, 15), [20, 25), [30, 35) leave
    got = R.slots_of(r)
    assert got.tolist() == [[0, 5, 1]] + [[10 * i, 10 * i + 5, 1] for i in range(4, 200)]


def test_a_move_inside_a_long_vector_shifts_the_tail_by_the_difference():
    r = _comb(200)
    R.grow(r, 1_000)  # room for the one-pass move (it rewrites the range in spare rows)
    # move 1 item from [40, 45) (its row leaves) to [12, 18) (a row split and a gap filled)
    assert R.kernel_add_two(r.slots, r.meta, np.int64(40), np.int64(45), np.int64(-1),
                            np.int64(12), np.int64(18), np.int64(1))
    got = R.slots_of(r)
    assert got[:7].tolist() == [[0, 5, 1], [10, 12, 1], [12, 15, 2], [15, 18, 1], [20, 25, 1], [30, 35, 1],
                                [50, 55, 1]]
    assert got[7:].tolist() == [[10 * i, 10 * i + 5, 1] for i in range(6, 200)]
