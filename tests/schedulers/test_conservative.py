"""Conservative backfilling: tiny self-checking traces with expected starts, worked out by
hand from the spec's "Conservative backfilling" section (each case says how)."""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import pytest

from schedbench.engine.replay import replay
from schedbench.errors import UsageError
from schedbench.io import jobs, machine
from schedbench.plan import rusv


def _pool(rows, procs=10, predictor="requested"):
    """rows: (submit, size, run, estimate); a pool of ``procs`` one-core nodes."""
    submit, size, run, est = (np.array(c, dtype=np.int64) for c in zip(*rows, strict=True))
    table = jobs.from_columns(submit=submit, run=run, estimate=est, units=size, unit_cores=np.ones_like(size),
                              job_id=np.arange(1, len(rows) + 1))
    res = replay(table, machine.from_spec(f"{procs}x(cores=1)"), "conservative", "ff", predictor)
    return res.start.tolist()


def test_release_compresses_and_small_jobs_backfill():
    # A (6 procs, booked [0, 20)) runs; B (6) is booked at 20; C (4) fits beside A at 2;
    # A ends early at 10: a release, B moves to 10.
    assert _pool([(0, 6, 10, 20), (1, 6, 5, 5), (2, 4, 5, 5)]) == [0, 10, 2]


def test_exact_predictions_never_release():
    # --predictor actual: A is booked [0, 10), B at 10 from the start, C at 2.
    assert _pool([(0, 6, 10, 20), (1, 6, 5, 5), (2, 4, 5, 5)], predictor="actual") == [0, 10, 2]


def test_expiry_doubles_the_elapsed_time_and_rebooks_the_queue():
    # A (10 procs, est 10) runs 30 s: at 10 its booking expires (start + est = now) and is
    # extended to 10 + 10 = 20, B is rebooked at 20; at 20 to 20 + 20 = 40, B at 40; A ends
    # at 30 (a release): B moves to 30.
    assert _pool([(0, 10, 30, 10), (1, 10, 5, 5)]) == [0, 30]


def test_zero_length_job_releases_at_its_start_instant():
    # A (4 procs, run 0, est 10) and B (4, est 5) arrive at 0: A booked [0, 10), B at 10;
    # A starts and ends at 0, a release: another pass at 0 moves B to 0.
    assert _pool([(0, 4, 0, 10), (0, 4, 5, 5)], procs=4) == [0, 0]


def test_equal_submit_times_book_in_id_order():
    # three 6-proc jobs at once on 10: booked [0,10), [10,20), [20,30) in id order.
    assert _pool([(0, 6, 10, 10), (0, 6, 10, 10), (0, 6, 10, 10)]) == [0, 10, 20]


def _nodes(rows, spec, allocator="ff"):
    """rows: (submit, units, cores, gpus, run, estimate)."""
    cols = [np.array(c, dtype=np.int64) for c in zip(*rows, strict=True)]
    table = jobs.from_columns(submit=cols[0], units=cols[1], unit_cores=cols[2], unit_gpus=cols[3], run=cols[4],
                              estimate=cols[5], job_id=np.arange(1, len(rows) + 1))
    return replay(table, machine.from_spec(spec), "conservative", allocator)


def test_bookings_hold_nodes():
    # 2 nodes of (4 cores, 1 GPU).  A: 1 unit (4c, 1g) on node 0, [0, 10).  B: 2 units
    # (4c, 1g): at 0 only node 1 is free, next candidate 10 (A's end): [10, 15) on both.
    # C at 1: 1 unit of 2 cores for 20 s: every window before 15 meets A or B on both
    # nodes; candidate 15 (B's end) fits, on node 0 (first fit).
    res = _nodes([(0, 1, 4, 1, 10, 10), (0, 2, 4, 1, 5, 5), (1, 1, 2, 0, 20, 20)], "2x(cores=4,gpus=1)")
    assert res.start.tolist() == [0, 10, 15]
    nodes = [res.alloc_log[res.alloc_ptr[j] : res.alloc_ptr[j] + res.nodes_used[j], 0].tolist() for j in range(3)]
    assert nodes == [[0], [0, 1], [0]]


def test_nodes_need_an_allocator_with_a_planning_order():
    with pytest.raises(UsageError, match="use ff, bf, balanced or keller"):
        _nodes([(0, 1, 4, 1, 10, 10), (0, 1, 4, 1, 10, 10)], "1x(cores=4,gpus=1)", allocator="weighted")


# Compression on nodes (issue 27): a try first bounds each node by its most free amount
# before the booking; the nodes full from now until the booking are marked and left out
# of the search (known from their prefix minima's full-until instant, without a search),
# and the search reads only the others.  Four nodes of 2 cores, units of 2 cores (whole
# nodes, so conservative plans on nodes).


def test_compression_rejects_a_try_on_the_marked_nodes_alone():
    # A: nodes 0-1 [0, 100).  B: nodes 2-3, estimate 50, ends at 10 (a release).  C (3
    # nodes, 20 s) is booked at 100; D (2 nodes, 30 s) at 50 on nodes 2-3.  At 10: for C
    # (booked at 100) nodes 0-1 are full until 100, so marked; nodes 2-3 host 2 of its 3:
    # no search, C stays.  For D (booked at 50) nodes 0-1 are marked too; nodes 2-3 take
    # it at 10.
    res = _nodes([(0, 2, 2, 0, 100, 100), (0, 2, 2, 0, 10, 50), (1, 3, 2, 0, 20, 20), (2, 2, 2, 0, 30, 30)],
                 "4x(cores=2)")
    assert res.start.tolist() == [0, 0, 100, 10]


def test_compression_searches_the_nodes_that_differ_from_the_marked_ones():
    # As above, but node 1 is busy only until 30 (A2): C is booked at 50 on nodes 1-3, D
    # at 70 on nodes 1-2.  At 10 (B ends): for C, node 0 (full until 100) is marked, node
    # 1 (full until 30) is not: candidate 10 fails (node 1 busy), 30 (A2's end) fits on
    # nodes 1-3: C moves to 30.  For D (booked at 70), node 0 is marked; 10 fails ([10,
    # 40) meets C on nodes 2-3), 30 fails (C), 50 fits: D moves to 50.
    res = _nodes([(0, 1, 2, 0, 100, 100), (0, 1, 2, 0, 30, 30), (0, 2, 2, 0, 10, 50), (1, 3, 2, 0, 20, 20),
                  (2, 2, 2, 0, 30, 30)], "4x(cores=2)")
    assert res.start.tolist() == [0, 0, 0, 30, 50]
    nodes = [res.alloc_log[res.alloc_ptr[j] : res.alloc_ptr[j] + res.nodes_used[j], 0].tolist() for j in range(5)]
    assert nodes[3:] == [[1, 2, 3], [1, 2]]


def _vector(rows):
    """A used vector holding ``rows`` (start, stop, items): its slots (one spare row) and
    meta."""
    from schedbench.plan.rusv import M_N

    slots = np.zeros((max(len(rows), 1) + 1, 3), dtype=np.int64)
    slots[: len(rows)] = np.array(rows, dtype=np.int64).reshape(-1, 3)
    meta = np.zeros(5, dtype=np.int64)
    meta[M_N] = len(rows)
    return slots, meta


@functools.cache
def _npmf_caller():
    """A jitted caller of _build_npmf (the kernel has no Python entry), compiled once: a
    caller defined per call compiled 200 times in the random-vector test (15 s).  Returns
    the full-until instant, and writes into ``runs`` the longest free run begun before
    each instant of ``ts``."""
    import numba

    from schedbench.schedulers.conservative.pruning import (
        _build_npmf,
        _first_row_reaching,
        _full_until,
        _longest_run_before,
    )

    @numba.njit
    def call(slots, meta, out, now, cap, ts, runs):
        m = _build_npmf(slots, meta, out, now, cap)
        for i in range(ts.size):
            runs[i] = _longest_run_before(out, m, _first_row_reaching(out, m, ts[i]))
        return _full_until(out, now)

    return call


def _npmf(rows, now, cap, ts=()):
    """_build_npmf's full-until instant of a used vector with ``rows`` (start, stop,
    items), and its longest free run begun before each instant of ``ts``."""
    call = _npmf_caller()
    slots, meta = _vector(rows)
    runs = np.zeros(len(ts), dtype=np.int64)
    full = call(slots, meta, np.zeros_like(slots), now, cap, np.array(ts, dtype=np.int64), runs)
    return full, runs.tolist()


def _full_until(rows, now, cap):
    return _npmf(rows, now, cap)[0]


@pytest.mark.parametrize(("rows", "now", "expected"), [
    ([(0, 10, 2), (10, 20, 2), (20, 30, 1)], 5, 20),  # full over two rows, then not
    ([(0, 10, 2), (12, 20, 2)], 5, 10),  # a gap (nothing used) ends it
    ([(6, 10, 2)], 5, 5),  # a gap at now: not full at now
    ([(0, 10, 1)], 5, 5),  # used below its capacity at now
    ([(0, 10, 2), (10, 20, 2)], 5, 20),  # full to the vector's end
    ([(0, 10, 2)], 25, 25),  # no row after now
])
def test_full_until_of_a_node_vector(rows, now, expected):
    assert _full_until(rows, now, 2) == expected


def _random_node_vectors(seed, n=200):
    """n random used vectors of a 2-unit node over [0, 41): (rows (start, stop, items > 0)
    with some gaps, now, the amount used at each instant)."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        stops = np.sort(rng.choice(np.arange(1, 40), size=rng.integers(1, 8), replace=False))
        starts = np.concatenate([[0], stops[:-1]]) + rng.integers(0, 2, size=stops.size)  # some gaps
        keep = starts < stops
        rows = [(int(a), int(b), int(rng.integers(0, 3))) for a, b in zip(starts[keep], stops[keep], strict=True)]
        rows = [r for r in rows if r[2] > 0]
        now = int(rng.integers(0, 40))
        used = np.zeros(41, dtype=np.int64)
        for a, b, items in rows:
            used[a:b] = items
        yield rows, now, used


def test_full_until_is_the_end_of_the_full_run_on_random_vectors():
    for rows, now, used in _random_node_vectors(5):
        x = now
        while x < 41 and used[x] == 2:
            x += 1
        assert _full_until(rows, now, 2) == (x if x > now else now), (rows, now)


def test_stays_at_most_before_on_random_vectors():
    """fit._stays_at_most_before against windows read instant by instant: whether
    some window [t, t + d), now <= t < before, holds the vector at or below ``high``
    throughout (the vector is 0 from 41 on)."""
    from schedbench.schedulers.conservative.fit import _stays_at_most_before

    rng = np.random.default_rng(17)
    checked = {True: 0, False: 0}
    for rows, now, used in _random_node_vectors(19):
        padded = np.concatenate([used, np.zeros(80, dtype=np.int64)])
        slots, meta = _vector(rows)
        for d in (1, 3, 8, 20):
            for high in (0, 1, 2):
                before = int(rng.integers(now + 1, 50))
                want = any(padded[t : t + d].max() <= high for t in range(now, before))
                got = bool(_stays_at_most_before(slots, meta, np.int64(now), np.int64(before), np.int64(d),
                                                 np.int64(high)))
                assert got == want, (rows, now, before, d, high)
                checked[want] += 1
    assert min(checked.values()) > 100  # both answers well represented


INF = int(rusv.INF)  # what the prefix rows hold for a run without end


@pytest.mark.parametrize(("rows", "now", "ts", "expected"), [
    # full [0, 10), free [10, 14) (a gap), full [14, 30), then free for ever
    ([(0, 10, 2), (14, 30, 2)], 5, [6, 10, 11, 14, 30, 31], [0, 0, 4, 4, 4, INF]),
    # below capacity at now: the run from now (counted from now) lasts until 8
    ([(0, 8, 1), (8, 20, 2)], 3, [4, 8, 9, 20, 21], [5, 5, 5, 5, INF]),
    # a row below capacity touching a full one opens a run at its stop: [10, 13) and then
    # a gap [13, 15) make one run of 5
    ([(0, 10, 2), (10, 13, 1), (15, 40, 2)], 0, [10, 11, 40, 41], [0, 5, 5, INF]),
    # a run still open at the last row lasts for ever
    ([(0, 10, 2), (10, 20, 1)], 0, [5, 11], [0, INF]),
    ([], 7, [8], [INF]),  # no row: free for ever
])
def test_longest_free_run_begun_before(rows, now, ts, expected):
    assert _npmf(rows, now, 2, ts)[1] == expected


def test_longest_free_run_begun_before_on_random_vectors():
    """Against the runs read instant by instant (each counted from now, the last one,
    past every row, for ever)."""
    for rows, now, used in _random_node_vectors(7):
        runs = []  # (start, length)
        x = now
        while x < 41:
            if used[x] < 2:
                a = x
                while x < 41 and used[x] < 2:
                    x += 1
                runs.append((a, INF if x == 41 else x - a))
            else:
                x += 1
        ts = list(range(now + 1, 43))
        expected = [max([length for a, length in runs if a < t], default=0) for t in ts]
        assert _npmf(rows, now, 2, ts)[1] == expected, (rows, now)


# The free-run bound (compression on nodes, pruning._build_npmf): a node hosts nothing of
# a job before its booking when no free run of the job's length begins there before the
# booking, though it may be free at some instant.  Two nodes of 2 cores, whole-node units.
# A: node 0, booked [0, 40), ends at 10 (a release); B: node 1 [0, 40); Q (2 nodes, 50 s)
# is booked [40, 90); J (1 node, d seconds) at 90 on node 0.  At 10 Q cannot move (node 1
# is busy until 40); node 0 is free over [10, 40) only, 30 seconds.


@pytest.mark.parametrize(("d", "j_start"), [
    (30, 10),  # a run of exactly d: J moves into it (a bound pruning at run <= d fails here)
    (31, 90),  # one second too long: node 0 hosts nothing before 90 (pruned), J stays
])
def test_compression_needs_a_free_run_of_the_jobs_length(d, j_start):
    res = _nodes([(0, 1, 2, 0, 10, 40), (0, 1, 2, 0, 40, 40), (1, 2, 2, 0, 50, 50), (2, 1, 2, 0, d, d)],
                 "2x(cores=2)")
    assert res.start.tolist() == [0, 0, 40, j_start]


def test_compression_lets_a_free_run_go_on_into_the_jobs_own_booking():
    # A: node 0 [0, 40), ends at 10; B: node 1 [0, 100); J (1 node, 50 s) is booked [40,
    # 90) on node 0.  At 10 node 0's run, with J's booking on, is [10, 40): 30 seconds,
    # but the search takes J's own booking off, and node 0 is free from 10 on: J moves to
    # 10 (a bound that did not let the run holding the booking's begin go on fails here).
    res = _nodes([(0, 1, 2, 0, 10, 40), (0, 1, 2, 0, 100, 100), (1, 1, 2, 0, 50, 50)], "2x(cores=2)")
    assert res.start.tolist() == [0, 0, 10]



def _first_window_below(rows, t, d, high, limit):
    """fit._first_window_below on a used vector with ``rows`` (start, stop, items), its
    first row reaching past t found from row 0 as a search's fresh cursor does."""
    from schedbench.schedulers.conservative.fit import _first_window_below as kernel
    from schedbench.schedulers.conservative.fit import _row_after

    slots, meta = _vector(rows)
    i = _row_after(slots, np.int64(len(rows)), np.int64(0), np.int64(t))
    return int(kernel(slots, meta, i, np.int64(t), np.int64(d), np.int64(high), np.int64(limit)))


def test_row_after_finds_the_first_row_past_t_from_any_row_before_it():
    """A search's row cursor: from every row at or before the answer, near it (the steps)
    or far (the binary search), the first row whose stop is > t."""
    from schedbench.schedulers.conservative.fit import _row_after

    rng = np.random.default_rng(5)
    for n in (0, 1, 3, 9, 40):
        stops = np.cumsum(rng.integers(1, 4, n)) if n else np.zeros(0, dtype=np.int64)
        slots = np.zeros((n + 1, 3), dtype=np.int64)
        slots[:n, 1] = stops
        slots[:n, 0] = stops - 1
        for t in range(-1, int(stops[-1]) + 2 if n else 2):
            answer = int(np.searchsorted(stops, t, side="right"))
            for i in range(answer + 1):
                assert _row_after(slots, np.int64(n), np.int64(i), np.int64(t)) == answer, (n, t, i)


@pytest.mark.parametrize(("rows", "t", "d", "high", "expected"), [
    # 2 fills the window [5, 8) and its row goes on to 10; the next row at 2 starts at
    # 12: a window of 3 starting at 10 or 11 still meets it, one starting at 20 is the
    # first without it
    ([(0, 10, 2), (12, 20, 2), (25, 30, 1)], 5, 3, 2, 20),
    # a window of 2 fits in the gap [10, 12)
    ([(0, 10, 2), (12, 20, 2), (25, 30, 1)], 5, 2, 2, 10),
    # with 1 as the bar the row at 1 from 25 counts too: [20, 23) still fits before it
    ([(0, 10, 2), (12, 20, 2), (25, 30, 1)], 5, 3, 1, 20),
    ([(0, 10, 2), (12, 20, 2), (25, 30, 1)], 5, 6, 1, 30),
    ([(0, 6, 2), (6, 30, 1)], 5, 3, 2, 6),  # a lower row after the window does not count
    ([(8, 9, 1)], 0, 3, 2, 0),  # nothing at the bar: the window at t itself
])
def test_first_window_below_a_bar(rows, t, d, high, expected):
    assert _first_window_below(rows, t, d, high, INF) == expected


def test_first_window_below_a_bar_on_random_vectors():
    """Against windows read instant by instant: the first start t' >= t whose window
    holds no instant at ``high`` or more; past the search's limit any instant >= it that
    is not late (the vector is 0 from 41 on)."""
    rng = np.random.default_rng(11)
    for rows, now, used in _random_node_vectors(13):
        padded = np.concatenate([used, np.zeros(60, dtype=np.int64)])
        for d in (1, 2, 5, 13):
            for high in (1, 2):
                limit = int(rng.integers(now + 1, 60))
                got = _first_window_below(rows, now, d, high, limit)
                first = next(x for x in range(now, 100) if padded[x : x + d].max() < high)
                if first < limit:
                    assert got == first, (rows, now, d, high, limit)
                else:
                    assert limit <= got <= first, (rows, now, d, high, limit)


@functools.cache
def _free_start_caller():
    """A jitted caller of pruning._free_start on a pool plan of one type (the kernel
    takes the scheduler's state; a namedtuple of the four arrays it reads stands in for
    it): answers each query (size, limit, cut) in turn on the same prefix maxima, cut
    back to ``cut`` first when it is >= 0, as a move would."""
    import numba

    from schedbench.schedulers.conservative.pruning import _cut_pmf, _free_start

    @numba.njit
    def call(state, now, queries, out):
        for q in range(queries.shape[0]):
            if queries[q, 2] >= 0:
                _cut_pmf(state.pmf, state.scal, queries[q, 2])
            out[q] = _free_start(state, 0, queries[q, 0], now, queries[q, 1])

    return call


class _PoolPlan(NamedTuple):
    slots: np.ndarray
    meta: np.ndarray
    pmf: np.ndarray
    scal: np.ndarray


def test_free_start_is_the_first_instant_with_the_size_free_on_random_plans():
    """Against the plan read instant by instant: the first instant of [now, limit) with
    ``size`` items free (-1 when none), for queries in any order on the same prefix
    maxima, extended and cut back between them."""
    from schedbench.plan.rusv import M_AVL
    from schedbench.schedulers.conservative.state import N_SCAL, S_PMF_TYPE

    rng = np.random.default_rng(17)
    avl = 4
    for rows, now, used in _random_node_vectors(19, n=300):  # used 0-2 of 4 items
        rows = [(a, b, items + int(rng.integers(0, 3))) for a, b, items in rows]  # up to 4
        for a, b, items in rows:
            used[a:b] = items
        slots, meta = _vector(rows)
        meta[M_AVL] = avl
        scal = np.zeros(N_SCAL, dtype=np.int64)
        scal[S_PMF_TYPE] = -1
        plan = _PoolPlan(slots[None], meta[None], np.zeros((2, len(rows) + 2), dtype=np.int64), scal)
        queries = np.column_stack([rng.integers(1, avl + 2, 12), rng.integers(now + 1, 50, 12),
                                   np.where(rng.random(12) < 0.3, rng.integers(now, 45, 12), -1)])
        out = np.zeros(12, dtype=np.int64)
        _free_start_caller()(plan, now, queries, out)
        free = avl - np.concatenate([used, np.zeros(20, dtype=np.int64)])
        for (size, limit, _), got in zip(queries.tolist(), out.tolist(), strict=True):
            first = next((x for x in range(now, limit) if free[x] >= size), -1)
            assert got == first, (rows, now, size, limit)


def test_a_node_used_below_the_jobs_bar_takes_it_at_the_first_such_window():
    # Node 0 (4 cores) runs A (2 cores, to 10), B (1 core, to 20) and C (1 core, to 30);
    # node 1 runs D (2 cores, a GPU) until 100.  J (3 cores on one node) needs node 0 at
    # 1 core used or less.  The totals allow 10 (4 cores free), where no node has 3: the
    # search skips to 20, node 0's first window below that bar (a bar one lower skips 20
    # too, and J starts at 30).
    res = _nodes([(0, 1, 2, 0, 10, 10), (0, 1, 1, 0, 20, 20), (0, 1, 1, 0, 30, 30), (0, 1, 2, 1, 100, 100),
                  (1, 1, 3, 0, 5, 5)], "2x(cores=4,gpus=1)")
    assert res.start.tolist() == [0, 0, 0, 0, 20]


def test_growing_the_plan_moves_each_vectors_used_rows_to_new_arrays():
    """Growth (``conservative.growth._grow``) gives the replay a state with new, larger
    arrays holding each vector's used rows (the rows after them are not set: no kernel
    reads them before writing them), keeps the scalars, and the stepped replay then ends
    as the one-call one.  On nodes (GPU jobs beside CPU jobs), so the node vectors grow
    too."""
    from schedbench.core import layout
    from schedbench.engine.simulation import Simulation
    from schedbench.schedulers.conservative import state as cstate

    rows = [(0, 1, 1, 1, 50, 100)] * 12 + [(i, 2, 2, 0, 30 + i, 60 + i) for i in range(12)]
    cols = [np.array(c, dtype=np.int64) for c in zip(*rows, strict=True)]
    table = jobs.from_columns(submit=cols[0], units=cols[1], unit_cores=cols[2], unit_gpus=cols[3], run=cols[4],
                              estimate=cols[5], job_id=np.arange(1, len(rows) + 1))
    mach = machine.from_spec("4x(cores=2,gpus=1)")
    sim = Simulation(table, mach, scheduler="conservative", allocator="ff")
    sim.step()
    old = sim.sched
    assert type(old).__name__ == "ConservativeNodes"
    used = {"slots": old.meta[:, rusv.M_N].copy(), "nslots": old.nmeta[:, rusv.M_N].copy(), "npmf": old.npmf_n.copy()}
    before = {name: getattr(old, name).copy() for name in used}
    assert used["nslots"].max() > 0
    cap = old.slots.shape[1]
    old.scal[cstate.S_GROW] = 1
    old.scal[cstate.S_CAP_NEED] = 3 * cap
    sim._make_room()
    new = sim.sched
    assert new is not old and type(new) is type(old) and new.scal is old.scal
    assert new.scal[cstate.S_GROW] == 0
    for name, n in used.items():
        a = getattr(new, name)
        assert a.shape[1] == 3 * cap
        for v in range(a.shape[0]):
            k = max(int(n[v]), 0)
            np.testing.assert_array_equal(a[v, :k], before[name][v, :k])
            a[v, k:] = -123_456_789  # what np.empty may hold: the replay must not read it
    for v in range(new.site.lslots.shape[0]):
        new.site.lslots[v, max(int(new.site.lmeta[v, rusv.M_N]), 0):] = -123_456_789
    while sim.step() is not None:
        pass
    r = replay(table, mach, "conservative", "ff")
    np.testing.assert_array_equal(sim.core.jobs[:, layout.J_START], r.start)
