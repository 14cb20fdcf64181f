"""core.sort's allocation-free sorts against numpy's."""

from __future__ import annotations

import numba
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedbench.core.sort import RUN, _argsort_stable, _heapsort

# few distinct values, so that ties (the stable order's whole point) are common; lengths
# around the insertion runs' size and a few merge passes past it
keys = st.lists(st.integers(-4, 4), max_size=5 * RUN + 3).map(lambda v: np.array(v, dtype=np.float64))


@settings(max_examples=200, deadline=None)
@given(keys)
def test_argsort_stable_is_numpys_stable_argsort(key):
    order = np.full(key.shape[0], -1, dtype=np.int64)
    tmp = np.empty(key.shape[0], dtype=np.int64)
    _argsort_stable(key, order, tmp)
    assert np.array_equal(order, np.argsort(key, kind="stable"))


def test_argsort_stable_keeps_equal_keys_in_index_order_across_runs():
    # equal keys in different insertion runs meet in a merge: the left run's go first
    key = np.array([1.0, 0.0] * (2 * RUN + 1))
    order = np.empty(key.shape[0], dtype=np.int64)
    _argsort_stable(key, order, np.empty_like(order))
    assert np.array_equal(order, np.concatenate([np.arange(1, key.shape[0], 2), np.arange(0, key.shape[0], 2)]))


@numba.njit
def _heapsort_from_python(a, m):
    # (an internal kernel has no Python wrapper of its own)
    _heapsort(a, m)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-50, 50), max_size=60), st.integers(0, 5))
def test_heapsort_sorts_the_first_m_values_and_leaves_the_rest(values, spare):
    a = np.array(values + [99] * spare, dtype=np.int64)
    m = len(values)
    _heapsort_from_python(a, m)
    assert np.array_equal(a[:m], np.sort(np.array(values, dtype=np.int64)))
    assert np.all(a[m:] == 99)
