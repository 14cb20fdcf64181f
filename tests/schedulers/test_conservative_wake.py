"""Conservative's wake heap (:mod:`schedbench.schedulers.conservative.wake`) against a
dictionary of each job's entry: one entry per job, moved when pushed again."""

from __future__ import annotations

import functools

import numba
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedbench.schedulers.conservative.state import S_WN
from schedbench.schedulers.conservative.wake import H_AT, H_CODE, H_TIME

JOBS = 6


@functools.cache
def _runner():
    from schedbench.schedulers.conservative.wake import _wake_pop, _wake_push

    @numba.njit
    def run(wake, scal, ops, tops):
        """ops (q, 3): (1, t, code) a push, (0, -, -) a pop; tops[q] = (time, code) on top
        after op q (-1, -1 when empty)."""
        for q in range(ops.shape[0]):
            if ops[q, 0] == 1:
                _wake_push(wake, scal, ops[q, 1], ops[q, 2])
            elif scal[S_WN] > 0:
                _wake_pop(wake, scal)
            if scal[S_WN] > 0:
                tops[q, 0] = wake[0, H_TIME]
                tops[q, 1] = wake[0, H_CODE]
            else:
                tops[q, 0] = -1
                tops[q, 1] = -1

    return run


operations = st.lists(
    st.one_of(
        st.tuples(st.just(1), st.integers(0, 20), st.integers(-JOBS, JOBS - 1)),
        st.tuples(st.just(0), st.just(0), st.just(0)),
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(ops=operations)
def test_the_top_is_the_least_entry_and_each_job_has_one(ops):
    wake = np.zeros((JOBS + 16, 3), dtype=np.int64)
    wake[:, H_AT] = -1
    scal = np.zeros(S_WN + 1, dtype=np.int64)
    tops = np.zeros((len(ops), 2), dtype=np.int64)
    _runner()(wake, scal, np.array(ops, dtype=np.int64).reshape(-1, 3), tops)
    entries: dict[int, tuple[int, int]] = {}  # job -> (time, code)
    for q, (kind, t, code) in enumerate(ops):
        if kind == 1:
            entries[code if code >= 0 else -code - 1] = (t, code)
        elif entries:
            del entries[min(entries, key=entries.get)]
        want = min(entries.values()) if entries else (-1, -1)
        assert tuple(tops[q]) == want
    n = int(scal[S_WN])
    assert n == len(entries)
    assert sorted(map(tuple, wake[:n, :2].tolist())) == sorted(entries.values())
    for job in range(JOBS):
        at = wake[job, H_AT]
        if job in entries:
            assert tuple(wake[at, :2]) == entries[job]
        else:
            assert at == -1
