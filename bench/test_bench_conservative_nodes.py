"""Conservative backfilling on nodes (issue 27 item 4): the plan books nodes, and each
earliest fit scans the candidate instants on every node's least free amounts; and, for
comparison, on a pool.

* ``test_conservative_eurora[ff|bf|balanced]``: the shared Eurora table (4,585 jobs on its
  64 CPU/GPU/MIC nodes, ``../shared/traces/eurora``), whole.  Goal (issue 27): under 0.4 s
  (ff) and 0.6 s (bf) of ``simulate_s``; it was 4.0 s / 8.1 s (balanced) / 9.4 s before
  the fit skipped what cannot change its answer.  CPU time of one replay on the shared
  2-core machine, interleaved with the code before compression's per-node bound: ff
  1.47-1.51 s -> 0.97-0.98 s, bf 1.93-1.99 s -> 1.11-1.12 s, balanced 1.78-1.79 s ->
  1.11-1.12 s (two rounds each).
* ``test_conservative_burst[ff|bf]``: a bursty Eurora-like workload the size of the
  5,917-job Eurora log issue 27 names, which we do not have (``conservative_nodes_speed.py``'s
  ``burst-ff`` / ``burst-bf``; it needs no shared trace).  Goal (issue 27, for that log):
  under 0.4 s (ff) and 0.6 s (bf); 71 s / 108 s on the log when filed.
* ``test_conservative_burst_seed0[ff|bf]``: the same parameters at seed 0
  (``burst-s0-*``): seed 1 is among the cheapest of the generator's workloads, seed 0
  near the median at that load (``bench/eurora_like_scan.py``; docs/studies/speed.md).
* ``test_conservative_hpc2n_maintenance``: the first 20,000 jobs of the HPC2N log under a
  weekly two-hour maintenance window on eight of its nodes (a site that binds nodes makes
  conservative plan on nodes even for a pool log), first-fit.
* ``test_conservative_hpc2n_maintenance_everywhere``: the same 20,000 jobs with that
  window on every node: windows alike on every node keep the pool plan (0.07 s against
  0.5 s on nodes for KTH-SP2 when added, ``conservative_nodes_speed.py --case kth-all``).
* ``test_conservative_hpc2n_pool``: the whole HPC2N log (202,871 jobs) on a pool,
  first-fit.  Goal (issue 27): under 1 s of ``simulate_s`` (2.2-2.4 s when filed).
* ``test_conservative_hpc2n_deep_queue``: the first 20,000 HPC2N jobs with submit times
  x 0.65 (``conservative_nodes_speed.deep_queue``) on a pool (mean wait 47 h; issue 31's RICC replay stood for a deep queue): 1.4 s of
  ``simulate_s`` when added, against 0.05 s at the log's own rate; the cost follows the
  queue's depth (``docs/internals/performance.md``, "A deep queue on a pool").

``extra_info["simulate_s"]`` is the median of the timed rounds.  Each is skipped when the
shared traces are absent.

Run: ``.venv/bin/python -m pytest bench/test_bench_conservative_nodes.py -m benchmark --benchmark-only``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from schedbench.engine.replay import replay
from schedbench.io import eurora, machine, swf
from schedbench.plan import site

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces"
EURORA = TRACES / "eurora"
HPC2N = TRACES / "swf" / "HPC2N-2002-2.2-cln.swf.gz"
MAINTENANCE = '[[maintenance]]\nnodes = "0-7"\nweekly = "Tue 06:00-08:00"\n'


def _timed(benchmark, table, mach, allocator, rounds, **kw):
    replay(table.head(300), mach, "conservative", allocator, **kw)  # compile outside the timing
    simulate: list[float] = []

    def once():
        result = replay(table, mach, "conservative", allocator, **kw)
        simulate.append(result.simulate_s)
        return result

    benchmark.pedantic(once, rounds=rounds, warmup_rounds=1)
    timed = sorted(simulate[1:] or simulate)
    benchmark.extra_info["simulate_s"] = timed[len(timed) // 2]
    benchmark.extra_info["jobs"] = table.n_jobs


@pytest.mark.skipif(not EURORA.exists(), reason="shared Eurora table not present")
@pytest.mark.benchmark
@pytest.mark.parametrize("allocator", ["ff", "bf", "balanced"])
def test_conservative_eurora(benchmark, allocator):
    table, meta = eurora.read_instances(EURORA / "job_instances")
    mach = machine.from_node_file(EURORA / "system_configs" / "nodes_#64")
    _timed(benchmark, table, mach, allocator, rounds=3, meta=meta)


@pytest.mark.benchmark
@pytest.mark.parametrize("allocator", ["ff", "bf"])
def test_conservative_burst(benchmark, allocator):
    _timed_case(benchmark, f"burst-{allocator}")


def _timed_case(benchmark, case: str) -> None:
    """:func:`_timed` on one of ``conservative_nodes_speed.py``'s cases."""
    from conservative_nodes_speed import _load

    table, mach, allocator, kw = _load(case)
    _timed(benchmark, table, mach, allocator, rounds=3, **kw)


@pytest.mark.benchmark
@pytest.mark.parametrize("allocator", ["ff", "bf"])
def test_conservative_burst_seed0(benchmark, allocator):
    """The bursty workload's parameters at seed 0: seed 1 (above) is among the cheapest of
    the generator's workloads (``bench/eurora_like_scan.py``), this one is typical."""
    _timed_case(benchmark, f"burst-s0-{allocator}")


@pytest.mark.skipif(not HPC2N.exists(), reason="shared HPC2N log not present")
@pytest.mark.benchmark
def test_conservative_hpc2n_maintenance(benchmark):
    _hpc2n_maintenance(benchmark, MAINTENANCE)


def _hpc2n_maintenance(benchmark, text):
    table, header = swf.read(HPC2N)
    table = table.head(20_000)
    mach = machine.from_swf_header(header.max_procs, header.max_nodes, int(table.units.max()))
    _timed(benchmark, table, mach, "ff", rounds=3, site=site.parse(text))


@pytest.mark.skipif(not HPC2N.exists(), reason="shared HPC2N log not present")
@pytest.mark.benchmark
def test_conservative_hpc2n_maintenance_everywhere(benchmark):
    _hpc2n_maintenance(benchmark, MAINTENANCE.replace('"0-7"', '"all"'))


@pytest.mark.skipif(not HPC2N.exists(), reason="shared HPC2N log not present")
@pytest.mark.benchmark
def test_conservative_hpc2n_pool(benchmark):
    table, header = swf.read(HPC2N)
    mach = machine.from_swf_header(header.max_procs, header.max_nodes, int(table.units.max()))
    _timed(benchmark, table, mach, "ff", rounds=3)


@pytest.mark.skipif(not HPC2N.exists(), reason="shared HPC2N log not present")
@pytest.mark.benchmark
def test_conservative_hpc2n_deep_queue(benchmark):
    from conservative_nodes_speed import deep_queue

    table, header = swf.read(HPC2N)
    table = deep_queue(table, 0.65)
    mach = machine.from_swf_header(header.max_procs, header.max_nodes, int(table.units.max()))
    _timed(benchmark, table, mach, "ff", rounds=2)
