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

Those two are *pool mode*: every job is made of single cores, so the plan is one vector of
totals and nothing is mapped to nodes (the allocator picks the nodes at start); the
second is the RUSV kernels alone, without the scheduler around them.  OpenCCS always maps
(Keller §5.2).  Beside them, the same work through the conservative scheduler, in both
modes (node mode: jobs of 2-core chunks, so each booking holds nodes and each earliest
fit maps the job on every node's vectors):

* ``test_plan_array_10k_nodes``: the array of ``test_plan_array_10k`` with each job as
  four 2-core chunks (the same 8 cores; Keller's submission test used 2-core chunks);
* ``test_compression_pass[pool|nodes]``: one conservative pass after a release: a job
  holding the whole machine (estimate 1 day) ends after 1 hour while 10,000 jobs (2-510
  cores, 10 min - 24 h estimates; 1-core units or 2-core chunks) are planned behind it;
  every one of them moves earlier.  The pass is stepped with
  :class:`schedbench.engine.simulation.Simulation` and timed alone (the state restored
  before each round); ``extra_info["backfills_per_s"]`` = moves / fastest pass.

The planning tests also record each round's CPU time (``extra_info["cpu_s"]``), less
disturbed than the wall time when other processes share the cores.

Run: ``make bench-perf`` (or ``pytest bench -m benchmark --benchmark-only``).
"""

from __future__ import annotations

import time

import numba
import numpy as np
import pytest

from schedbench.engine.replay import replay, warm_up
from schedbench.engine.simulation import Simulation
from schedbench.io import jobs
from schedbench.io.machine import from_spec
from schedbench.plan import rusv
from schedbench.schedulers.conservative.state import B_BEGIN

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


def _cpu_timed(fn, benchmark):
    """fn, also recording each call's CPU time in ``extra_info["cpu_s"]`` (on a shared
    machine the wall time counts the other processes' turns too)."""
    cpu = benchmark.extra_info.setdefault("cpu_s", [])

    def timed():
        t0 = time.process_time()
        out = fn()
        cpu.append(time.process_time() - t0)
        return out

    return timed


def _array_table(n: int, chunk_cores: int = 1):
    """n identical jobs submitted together: 8 cores (as 8 // chunk_cores chunks), estimate
    1 h, run 50 min."""
    return jobs.from_columns(
        submit=np.zeros(n, np.int64), run=np.full(n, 3000, np.int64), estimate=np.full(n, 3600, np.int64),
        units=np.full(n, 8 // chunk_cores, np.int64), unit_cores=np.full(n, chunk_cores, np.int64),
    )


@pytest.mark.benchmark(group="planning")
def test_plan_array_10k(benchmark):
    """The whole replay of a 10,000-job array on 616 16-core nodes (9,856 cores).  The plan
    holds at most 2 rows (no slot index is built) while its arrays' room grows with the
    queue (the index's rows among them, plan-cost-curve.md): this times that growth, which
    zero-filled every new row (40-57 ms) until the rows moved to fresh arrays (15 ms)."""
    table, mach = _array_table(10_000), from_spec("616x(cores=16)")
    warm_up("conservative", "ff")
    res = benchmark.pedantic(_cpu_timed(lambda: replay(table, mach, "conservative", "ff"), benchmark),
                             rounds=3, iterations=1)
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

    moved = compress()
    assert benchmark.pedantic(compress, rounds=3, iterations=1) == moved
    benchmark.extra_info["moves"] = moved  # the jobs that found an earlier fit, not all n - 1
    if benchmark.stats is not None:  # None under --benchmark-disable
        benchmark.extra_info["backfills_per_s"] = moved / benchmark.stats.stats.min


@pytest.mark.benchmark(group="planning")
def test_plan_array_10k_nodes(benchmark):
    """test_plan_array_10k in node mode: each job four 2-core chunks."""
    table, mach = _array_table(10_000, chunk_cores=2), from_spec("616x(cores=16)")
    replay(_array_table(20, chunk_cores=2), mach, "conservative", "ff")  # compile the node variant
    res = benchmark.pedantic(_cpu_timed(lambda: replay(table, mach, "conservative", "ff"), benchmark),
                             rounds=2, iterations=1)
    assert (res.start >= 0).all()
    benchmark.extra_info["simulate_s"] = res.simulate_s


def _release_table(n: int, chunk_cores: int):
    """Job 0 holds all 9,856 cores from t = 0, estimate 1 day, and ends after 1 hour; n
    jobs of 2-510 cores (in units of chunk_cores cores) and 10 min - 24 h estimates,
    running as long as estimated, arrive at t = 1."""
    rng = np.random.default_rng(7)
    cores = np.concatenate([[616 * 16], 2 * rng.integers(1, 256, n)])
    estimate = np.concatenate([[86_400], rng.integers(600, 86_400, n)])
    run = estimate.copy()
    run[0] = 3600
    return jobs.from_columns(
        submit=np.minimum(np.arange(n + 1), 1), run=run, estimate=estimate, units=cores // chunk_cores,
        unit_cores=np.full(n + 1, chunk_cores),
    )


def _arrays_of(*states):
    """Every array in the (nested) named tuples of a run's state."""
    for x in states:
        if isinstance(x, np.ndarray):
            yield x
        elif isinstance(x, tuple):
            yield from _arrays_of(*x)


@pytest.mark.benchmark(group="planning")
@pytest.mark.parametrize("mode", ["pool", "nodes"])
def test_compression_pass(benchmark, mode):
    """The conservative pass that compresses 10,000 planned jobs (1,000 on nodes) after a
    release."""
    # On nodes every node's vector has as many rows as the plan (9 per planned job, 616 x 4
    # vectors, two such arrays): 10,000 jobs held 10.7 GB, and the snapshot below doubled
    # it past this machine's memory (the process was killed); 1,000 jobs hold 1.1 GB.
    n = 10_000 if mode == "pool" else 1_000
    sim = Simulation(_release_table(n, 1 if mode == "pool" else 2), from_spec("616x(cores=16)"),
                     scheduler="conservative", allocator="ff")
    assert type(sim.sched).__name__ == ("ConservativePool" if mode == "pool" else "ConservativeNodes")
    while sim.advance() < 3600:
        sim.jitted_pass()
        sim.end_pass()
    sim._make_room()  # any room the pass needs, before the snapshot
    state = list(_arrays_of(sim.core, sim.sched, sim.pred, sim.alloc))
    saved = [a.copy() for a in state]
    planned = sim.sched.book[:, B_BEGIN].copy()
    core = sim.core

    def restore():
        for a, b in zip(state, saved, strict=True):
            a[...] = b

    benchmark.pedantic(_cpu_timed(sim.jitted_pass, benchmark), setup=restore, rounds=3 if mode == "pool" else 2,
                       iterations=1)
    assert sim.core is core  # the log had room: the restored arrays are the ones the pass used
    moved = int((sim.sched.book[:, B_BEGIN] < planned).sum())
    assert moved == n  # every planned job moved up by the 23 hours given back
    benchmark.extra_info["moves"] = moved
    if benchmark.stats is not None:  # None under --benchmark-disable
        benchmark.extra_info["backfills_per_s"] = moved / benchmark.stats.stats.min
    benchmark.extra_info["backfills_per_cpu_s"] = moved / min(benchmark.extra_info["cpu_s"])
