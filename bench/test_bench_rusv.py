"""RUSV hot path (Keller §4) and conservative planning, with pytest-benchmark.

* ``test_rusv_increment_decrement[S]``: one ⊕ then the matching ⊖ of a 1-hour booking in
  the middle of a used vector of about S slots (S = 100, 1k, 10k);
* ``test_rusv_earliest_fit[S]``: the earliest fit of a job that only fits past the vector's
  last booking (the longest scan) on the same vectors;
* ``test_rusv_earliest_fit_indexed[S]``: the same search with a slot index (issue 27: it
  skips the blocks that cannot start the job), and ``test_rusv_add_indexed[S]`` the ⊕/⊖
  pair keeping the index;
* ``test_plan_array_10k``: booking a 10,000-job array (same size and estimate, all
  submitted at once) on a 616-node machine through the conservative scheduler's whole
  replay (OpenCCS: about 30 s to plan it; our target: under 0.3 s);
* ``test_backfills_10k``: moving each of 10,000 planned jobs to its earliest fit (a
  compression after the first job ended early), as backfills per second (OpenCCS:
  500-1,500/s; target: 100,000/s).

Run: ``make bench-perf`` (or ``pytest bench -m benchmark --benchmark-only``).
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from schedbench.engine.replay import replay, warm_up
from schedbench.io import jobs
from schedbench.io.machine import from_spec
from schedbench.plan import rusv

SIZES = (100, 1_000, 10_000)


def _vector(slots: int, seed: int = 0) -> rusv.Rusv:
    """A used vector of about ``slots`` slots: random bookings of 1-64 of 1024 items."""
    rng = np.random.default_rng(seed)
    r = rusv.new(1024, cap=4 * slots + 16)
    t = 0
    while r.meta[rusv.M_N] < slots:
        start = t + int(rng.integers(0, 600))
        rusv.increment(r, start, start + int(rng.integers(60, 7200)), int(rng.integers(1, 64)))
        t = start
    return r


@pytest.mark.benchmark(group="rusv")
@pytest.mark.parametrize("slots", SIZES)
def test_rusv_increment_decrement(benchmark, slots):
    r = _vector(slots)
    mid = int(r.slots[r.meta[rusv.M_N] // 2, 0]) + 1
    args = (np.int64(mid), np.int64(mid + 3600))
    add = rusv.kernel_add  # the kernel: the Python wrapper's checks are not the hot path

    def step():
        add(r.slots, r.meta, *args, np.int64(5))
        add(r.slots, r.meta, *args, np.int64(-5))

    step()
    before = rusv.slots_of(r)
    benchmark(step)
    assert np.array_equal(rusv.slots_of(r), before)


@pytest.mark.benchmark(group="rusv")
@pytest.mark.parametrize("slots", SIZES)
def test_rusv_earliest_fit(benchmark, slots):
    r = _vector(slots)
    # 1000 items for 1 day: fits only where nothing else is booked
    fit = rusv.kernel_earliest_fit
    args = (r.slots, r.meta, np.int64(1000), np.int64(86_400), np.int64(0), np.int64(rusv.INF),
            np.int64(0), np.int64(0), np.int64(0))
    assert fit(*args) >= 0
    benchmark(fit, *args)


@pytest.mark.benchmark(group="rusv")
@pytest.mark.parametrize("slots", SIZES)
def test_rusv_earliest_fit_indexed(benchmark, slots):
    r = _vector(slots)
    index = rusv.build_index(r)
    fit = rusv._earliest_fit_indexed_kernel
    args = (r.slots, r.meta, index, np.int64(1000), np.int64(86_400), np.int64(0), np.int64(rusv.INF),
            np.int64(0), np.int64(0), np.int64(0))
    assert fit(*args) == rusv.earliest_fit(r, 1000, 86_400, 0) >= 0
    benchmark(fit, *args)


@pytest.mark.benchmark(group="rusv")
@pytest.mark.parametrize("slots", SIZES)
def test_rusv_add_indexed(benchmark, slots):
    r = _vector(slots)
    index = rusv.build_index(r)
    mid = int(r.slots[r.meta[rusv.M_N] // 2, 0]) + 1
    args = (np.int64(mid), np.int64(mid + 3600))
    add = rusv.kernel_add_indexed

    def step():
        add(r.slots, r.meta, index, *args, np.int64(5))
        add(r.slots, r.meta, index, *args, np.int64(-5))

    step()
    before = rusv.slots_of(r)
    benchmark(step)
    assert np.array_equal(rusv.slots_of(r), before)


def _array_table(n: int):
    """n identical jobs submitted together: 8 cores, estimate 1 h, run 50 min."""
    return jobs.from_columns(
        submit=np.zeros(n, np.int64), run=np.full(n, 3000, np.int64), estimate=np.full(n, 3600, np.int64),
        units=np.full(n, 8, np.int64), unit_cores=np.ones(n, np.int64),
    )


@pytest.mark.benchmark(group="planning")
def test_plan_array_10k(benchmark):
    """The whole replay of a 10,000-job array on 616 16-core nodes (9,856 cores)."""
    table, mach = _array_table(10_000), from_spec("616x(cores=16)")
    warm_up("conservative", "ff")
    res = benchmark.pedantic(lambda: replay(table, mach, "conservative", "ff"), rounds=3, iterations=1)
    assert (res.start >= 0).all()
    benchmark.extra_info["simulate_s"] = res.simulate_s


@numba.njit(cache=True)
def _compress(slots, meta, begins, lengths, sizes):
    """Each job but the first, in order: its earliest fit before its booking (its own
    booking counted as absent); moved there when found.  Returns the moves."""
    moved = 0
    for j in range(1, begins.shape[0]):
        b0, e0, s = begins[j], begins[j] + lengths[j], sizes[j]
        t = rusv.kernel_earliest_fit(slots, meta, s, lengths[j], 0, b0, b0, e0, s)
        if t >= 0:  # as conservative moves a booking: one operation
            rusv.kernel_add_two(slots, meta, b0, e0, -s, t, t + lengths[j], s)
            moved += 1
    return moved


@pytest.mark.benchmark(group="planning")
def test_backfills_10k(benchmark):
    """10,000 planned jobs of mixed sizes and estimates; the first running job ends early,
    and every queued job is moved to its earliest fit (a compression), timed per job."""
    rng = np.random.default_rng(7)
    n = 10_000
    cap = 616 * 16
    r = rusv.new(cap, cap=8 * n + 64)
    sizes = rng.integers(1, 512, n)
    lengths = rng.integers(600, 86_400, n)
    begins = np.empty(n, np.int64)
    for j in range(n):  # book each at its earliest fit, as arrivals are
        begins[j] = rusv.earliest_fit(r, int(sizes[j]), int(lengths[j]), 0)
        rusv.increment(r, int(begins[j]), int(begins[j] + lengths[j]), int(sizes[j]))
    rusv.decrement(r, int(begins[0]), int(begins[0] + lengths[0]), int(sizes[0]))  # the early end
    begins_all, lengths_all, sizes_all = begins.astype(np.int64), lengths.astype(np.int64), sizes.astype(np.int64)

    def compress():
        return _compress(r.slots.copy(), r.meta.copy(), begins_all, lengths_all, sizes_all)

    compress()
    benchmark.pedantic(compress, rounds=3, iterations=1)
    benchmark.extra_info["backfills_per_s"] = (n - 1) / benchmark.stats.stats.min
