"""Hot-path timings: the replay engine, every allocator's kernels, and a calibration.

* ``test_engine_easy_ff_100k``: a whole EASY + first-fit replay of a fixed, seeded
  100,000-job SWF-like trace on ``1024x(cores=8)``;
* ``test_allocator[NAME]``: for every allocator of :data:`schedbench.allocators.ALLOCATORS`,
  ``_order`` then ``_place`` (the jitted kernels, called from a jitted loop) for 200 jobs
  of Eurora-like shapes on a 5,000-node heterogeneous machine, committing each placement
  (the machine starts again from its initial occupancy when a job does not fit);
* ``test_calibration_numpy``: a fixed numpy workload (sorting 2M floats, single-threaded),
  the yardstick ``bench/check.py`` divides every other timing by, so that baselines
  compare across machines of different speeds.

Everything is compiled (or loaded from numba's cache) before it is timed.
Run: ``make bench-perf`` (or ``pytest bench -m benchmark --benchmark-only``).

``SCHEDBENCH_BENCH_SPIN_S``: seconds of busy CPU work added to every timed engine replay
(CPU work, not a sleep: ``bench/check.py`` times CPU time); only for showing that
``make bench-check`` catches a slowdown, never set otherwise.
"""

from __future__ import annotations

import inspect
import os
import time

import numba
import numpy as np
import pytest

from schedbench import jobs, layout
from schedbench.allocators import ALLOCATORS, _order, _place
from schedbench.machine import from_spec
from schedbench.replay import replay, warm_up
from schedbench.workloads import eurora_like

ENGINE_JOBS = 100_000
ENGINE_MACHINE = "1024x(cores=8)"
ALLOC_NODES_SPEC = "2000x(cores=16,mem=64G)+2000x(cores=16,gpus=2,mem=64G)+1000x(cores=32,mics=2,mem=128G)"
ALLOC_JOBS = 200
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
    warm_up()
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
def _commit(free, scal, used, out_node, out_count, req):
    for p in range(used):
        i = out_node[p]
        for k in range(req.shape[0]):
            amount = out_count[p] * req[k]
            free[i, k] -= amount
            scal[layout.V_FREE + k] -= amount


# The kernels' parameters, by name, as the driver passes them (j: the job).  The driver is
# generated from the kernels' signatures so that it follows their evolution; a parameter
# it does not know stops the benchmark with a message saying so.
_ARGS = {
    "code": "code", "free": "free", "cap": "cap", "order": "order", "key": "key", "tmp": "tmp",
    "scal": "scal", "units": "units[j]", "req": "req[j]", "req_nodes": "req_nodes[j]",
    "out_node": "out_node", "out_count": "out_count", "first": "0",
}
_DRIVER = """
def drive(code, cap, free0, scal0, units, req, req_nodes, free, scal, order, key, tmp, out_node, out_count):
    free[:, :] = free0
    scal[:] = scal0
    placed = 0
    for j in range(units.shape[0]):
        _order({order_args})
        used = _place({place_args})
        if used < 0:
            free[:, :] = free0
            scal[:] = scal0
            continue
        _commit(free, scal, used, out_node, out_count, req[j])
        placed += 1
    return placed
"""


def make_driver():
    """A jitted loop calling ``_order`` then ``_place`` for each job, committing each
    placement; built from the kernels' current parameter lists."""
    calls = {}
    for name, fn in (("order_args", _order), ("place_args", _place)):
        params = list(inspect.signature(fn.py_func).parameters)
        unknown = [p for p in params if p not in _ARGS]
        if unknown:
            raise RuntimeError(
                f"{fn.py_func.__name__} has parameter(s) {unknown} this benchmark does not know: "
                "add them to _ARGS in bench/test_bench_engine.py"
            )
        calls[name] = ", ".join(_ARGS[p] for p in params)
    namespace = {"_order": _order, "_place": _place, "_commit": _commit}
    exec(_DRIVER.format(**calls), namespace)  # noqa: S102 - source built above from fixed pieces
    return numba.njit(cache=False)(namespace["drive"])


def _scal_for(cap: np.ndarray, free: np.ndarray, units, req, pred) -> np.ndarray:
    """Engine scalars an allocator may read: totals, and, when the layout has them,
    critical types (GPUs, MICs), priorities 1 and the queue's duration-weighted requests."""
    scal = np.zeros(max(layout.N_SCAL, 64), dtype=np.int64)
    n_res = cap.shape[1]
    scal[layout.V_FREE : layout.V_FREE + n_res] = free.sum(axis=0)
    scal[layout.V_CAP : layout.V_CAP + n_res] = cap.sum(axis=0)
    if hasattr(layout, "V_CRIT"):
        scal[layout.V_CRIT + 1] = 1
        scal[layout.V_CRIT + 2] = 1
    if hasattr(layout, "V_PRIO"):
        scal[layout.V_PRIO : layout.V_PRIO + n_res] = 1
    if hasattr(layout, "V_WSUM") and hasattr(layout, "V_WPRED"):
        scal[layout.V_WSUM : layout.V_WSUM + n_res] = (units[:, None] * req * pred[:, None]).sum(axis=0)
        scal[layout.V_WPRED] = int(pred.sum())
    return scal


@pytest.fixture(scope="module")
def alloc_case():
    machine = from_spec(ALLOC_NODES_SPEC)
    cap = np.ascontiguousarray(machine.capacity.astype(np.int64))
    n = cap.shape[0]
    rng = np.random.default_rng(11)
    # Half-busy machine: each node has a random share of each resource in use.
    free0 = np.ascontiguousarray((cap * rng.uniform(0.3, 1.0, cap.shape)).astype(np.int64))
    table, _ = eurora_like.generate(ALLOC_JOBS, np.random.default_rng(5), load=0.8)
    units = np.ascontiguousarray(table.units.astype(np.int64))
    req = np.ascontiguousarray(
        np.stack([table.unit_cores, table.unit_gpus, table.unit_mics, table.unit_mem], axis=1).clip(min=0).astype(np.int64)
    )
    req_nodes = np.where(table.req_nodes > 0, table.req_nodes, -1).astype(np.int64)
    scal0 = _scal_for(cap, free0, units, req, table.estimate.astype(np.int64))
    buffers = (
        np.empty_like(free0), np.empty_like(scal0), np.empty(n, np.int64), np.empty(n, np.float64),
        np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64),
    )
    drive = make_driver()
    args = (cap, free0, scal0, units, req, req_nodes, *buffers)
    for code in ALLOCATORS.values():
        drive(int(code), *args)  # compile outside the timing
    return drive, args


@pytest.mark.benchmark
@pytest.mark.parametrize("name", list(ALLOCATORS))
def test_allocator(benchmark, alloc_case, name):
    drive, args = alloc_case
    placed = benchmark.pedantic(drive, args=(int(ALLOCATORS[name]), *args), rounds=15, warmup_rounds=1)
    assert 0 < placed <= ALLOC_JOBS


# -- calibration ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def calibration_data():
    return np.random.default_rng(3).random(2_000_000)


def _calibration(data):
    return np.sort(data, kind="quicksort")[1000]


@pytest.mark.benchmark
def test_calibration_numpy(benchmark, calibration_data):
    value = benchmark.pedantic(_calibration, args=(calibration_data,), rounds=7, warmup_rounds=1)
    assert 0.0 <= value < 0.01
