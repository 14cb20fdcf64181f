"""Hot-path timings: the replay engine, every allocator's kernels, and a calibration.

* ``test_engine_easy_ff_100k``: a whole EASY + first-fit replay of a fixed, seeded
  100,000-job SWF-like trace on ``1024x(cores=8)``;
* ``test_allocator[NAME]``: for every registered allocator, its ``choose`` kernel (called
  from a jitted loop) for 200 jobs of Eurora-like shapes on a half-busy 5,000-node
  heterogeneous machine, committing each placement (a job that does not fit is skipped);
* ``test_calibration_scalar``: a fixed scalar numba workload (heap pushes and pops of 2^20
  keys), the yardstick ``bench/check.py`` divides every other timing by, so that
  baselines compare across machines of different speeds.

Everything is compiled (or loaded from numba's cache) before it is timed.
Run: ``make bench-perf`` (or ``pytest bench -m benchmark --benchmark-only``).

``SCHEDBENCH_BENCH_SPIN_S``: seconds of busy CPU work added to every timed engine replay
(CPU work, not a sleep: ``bench/check.py`` times CPU time); only for showing that
``make bench-check`` catches a slowdown, never set otherwise.
"""

from __future__ import annotations

import os
import time

import numba
import numpy as np
import pytest

from schedbench import core, registry
from schedbench.core import layout
from schedbench.core.api import C_FREE, W_COUNT, W_NODE, choose
from schedbench.core.layout import J_REQ, N_RES
from schedbench.engine.replay import replay, warm_up
from schedbench.io import jobs
from schedbench.io.machine import from_spec
from schedbench.workloads import eurora_like

ENGINE_JOBS = 100_000
ENGINE_MACHINE = "1024x(cores=8)"
ALLOC_NODES_SPEC = "2000x(cores=16,mem=64G)+2000x(cores=16,gpus=2,mem=64G)+1000x(cores=32,mics=2,mem=128G)"
ALLOC_JOBS = 200
ALLOCATORS = registry.allocator_names()
_SPIN_S = float(os.environ.get("SCHEDBENCH_BENCH_SPIN_S", "0") or 0)


# -- engine ---------------------------------------------------------------------------------


def synthetic_trace(n: int = ENGINE_JOBS, cores: int = 8192, load: float = 0.9, seed: int = 7) -> jobs.JobTable:
    """A seeded SWF-like table: power-of-two widths (1..1024 cores), lognormal run times
    (median ~18 min, capped at 1 day), over-estimated requests, Poisson arrivals at the
    given offered load of ``cores`` cores."""
    rng = np.random.default_rng(seed)
    procs = 2 ** rng.integers(0, 11, n)
    run = np.clip(rng.lognormal(7.0, 1.6, n), 1, 86400).astype(np.int64)
    estimate = np.minimum(86400, (run * rng.uniform(1.0, 4.0, n)).astype(np.int64) + 60)
    span = float(np.sum(procs * run)) / (cores * load)
    submit = np.sort(rng.uniform(0, span, n)).astype(np.int64)
    return jobs.from_columns(
        n,
        job_id=np.arange(1, n + 1),
        submit=submit,
        run=run,
        procs_req=procs,
        time_req=estimate,
        user=rng.integers(0, 200, n),
        status=np.ones(n, dtype=np.int64),
    )


@pytest.fixture(scope="module")
def engine_case():
    table = synthetic_trace()
    machine = from_spec(ENGINE_MACHINE)
    warm_up("easy", "ff")
    replay(table.head(2000), machine, "easy", "ff")  # compile outside the timing
    return table, machine


def _replay_easy_ff(table, machine):
    if _SPIN_S:
        end = time.process_time() + _SPIN_S
        while time.process_time() < end:
            pass
    return replay(table, machine, "easy", "ff")


@pytest.mark.benchmark
def test_engine_easy_ff_100k(benchmark, engine_case):
    table, machine = engine_case
    result = benchmark.pedantic(_replay_easy_ff, args=(table, machine), rounds=3, warmup_rounds=0)
    assert np.count_nonzero(result.start >= 0) == ENGINE_JOBS


# -- allocators -----------------------------------------------------------------------------


@numba.njit(cache=False)
def _drive(alloc, c, n):
    """Place jobs 0..n-1 of core ``c`` one after another with the allocator's ``choose``
    kernel, committing each placement to the free resources; a job that does not fit is
    skipped.  Returns the jobs placed."""
    placed = 0
    for j in range(n):
        used = choose(alloc, c, j)
        if used < 0:
            continue
        for p in range(used):
            node = c.work[W_NODE, p]
            for k in range(N_RES):
                amount = c.work[W_COUNT, p] * c.jobs[j, J_REQ + k]
                c.free[node, k] -= amount
                c.scal[C_FREE + k] -= amount
        placed += 1
    return placed


@pytest.fixture(scope="module")
def alloc_case():
    machine = from_spec(ALLOC_NODES_SPEC)
    cap = np.ascontiguousarray(machine.capacity.astype(np.int64))
    rng = np.random.default_rng(11)
    # Half-busy machine: each node has a random share of each resource in use.
    free0 = np.ascontiguousarray((cap * rng.uniform(0.3, 1.0, cap.shape)).astype(np.int64))
    table, _ = eurora_like.generate(ALLOC_JOBS, np.random.default_rng(5), load=0.8)
    J = layout.job_matrix(table)
    J[:, layout.J_PRED] = J[:, layout.J_EST]
    setup = core.Setup(table, machine, J, {})

    def fresh(name):
        """A core on the half-busy machine and a new allocator state whose queue holds
        every job (the Weighted allocators' request sums)."""
        c = core.new_core(J.copy(), cap)
        c.free[:] = free0
        c.scal[C_FREE : C_FREE + N_RES] = free0.sum(axis=0)
        entry = registry.allocator(name)
        alloc = entry.load()(setup, **entry.resolve({}))
        if alloc.sums.size:  # weighted, priority-weighted (the shared state's other families have it empty)
            alloc.sums[0] = J[:, layout.J_PRED].sum()
            alloc.sums[1:] = (J[:, layout.J_UNITS, None] * J[:, layout.J_REQ : layout.J_REQ + N_RES]
                              * J[:, layout.J_PRED, None]).sum(axis=0)
        return (alloc, c, ALLOC_JOBS), {}

    for name in ALLOCATORS:
        _drive(*fresh(name)[0])  # compile outside the timing
    return fresh


@pytest.mark.benchmark
@pytest.mark.parametrize("name", ALLOCATORS)
def test_allocator(benchmark, alloc_case, name):
    placed = benchmark.pedantic(_drive, setup=lambda: alloc_case(name), rounds=15, warmup_rounds=1)
    assert 0 < placed <= ALLOC_JOBS


# -- calibration ----------------------------------------------------------------------------

CALIBRATION_KEYS = 1 << 20


@numba.njit(cache=True)
def _heap_churn(heap, n):
    """A fixed scalar workload shaped like the engine's: ``n`` pushes of pseudo-random int64
    keys (a 64-bit LCG) onto an array-backed binary min-heap, then ``n`` pops; branchy
    integer code over one array, no SIMD, no allocation.  Returns the checksum of the
    popped keys (so that nothing is optimised away).  heap: int64 (>= n,)."""
    x = np.int64(88172645463325252)
    for size in range(n):
        x = x * 6364136223846793005 + 1442695040888963407
        key = (x >> 20) & 0xFFFFFFFF
        i = size
        while i > 0:
            parent = (i - 1) >> 1
            if heap[parent] <= key:
                break
            heap[i] = heap[parent]
            i = parent
        heap[i] = key
    total = np.int64(0)
    size = n
    while size > 0:
        total = total * 31 + heap[0]
        size -= 1
        last = heap[size]
        i = 0
        while True:
            child = 2 * i + 1
            if child >= size:
                break
            if child + 1 < size and heap[child + 1] < heap[child]:
                child += 1
            if heap[child] >= last:
                break
            heap[i] = heap[child]
            i = child
        heap[i] = last
    return total


@pytest.mark.benchmark
def test_calibration_scalar(benchmark):
    """The yardstick of ``bench/check.py``: :func:`_heap_churn` over 2^20 keys.  A scalar
    numba loop like the kernels it calibrates: the numpy sort used before ran 4x faster on
    another host CPU of the same machine class (a SIMD sort), while the kernels did not."""
    heap = np.empty(CALIBRATION_KEYS, np.int64)
    first = _heap_churn(heap, CALIBRATION_KEYS)  # compile outside the timing
    value = benchmark.pedantic(_heap_churn, args=(heap, CALIBRATION_KEYS), rounds=7, warmup_rounds=1)
    assert value == first
