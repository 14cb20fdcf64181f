"""End-to-end replay timings and memory: what a user of ``schedbench replay`` waits for.

* ``test_replay_hpc2n_easy_ff``: :func:`schedbench.engine.replay.replay` of the HPC2N-2002-2.2
  cleaned log (202,871 jobs, ``../shared/traces/swf``) with EASY + first-fit, in this
  process, the log parsed and the kernels compiled (or loaded from numba's cache) before
  the timing; ``extra_info`` has the jobs replayed per second of the engine's loop;
* ``test_replay_hpc2n_ff[prb|sfs]``: the same with PRB (its queue order kept
  incrementally) and with SFS;
* ``test_cli_replay_hpc2n``: the whole ``schedbench replay HPC2N... -o DIR -q`` command
  in a fresh interpreter, warm (one untimed run first fills numba's cache and the page
  cache): imports, parse, replay, the four files and exit.  Goal (issue 15): at most
  0.9 s of wall time on the 2-core development machine (``extra_info["wall_s_median"]``;
  not asserted: wall time depends on the load);
* ``test_cli_replay_77k``: the same command on the first 77,222 jobs of HPC2N (CTC-SP2's
  job count; the goal for a whole CTC-SP2 replay is 0.75 s of wall time), and
  ``test_cli_replay_ctc_sp2`` on CTC-SP2 itself when it is in the trace cache
  (``schedbench traces fetch CTC-SP2-1996-3.1-cln``), skipped otherwise;
* ``test_cli_replay_1m_peak_rss``: peak resident memory (the child's ``ru_maxrss``) of
  ``schedbench replay`` of a seeded 1,000,000-job Parquet table on ``256x(cores=4)``,
  generated once per session.  Asserted under 1.25 GiB (see PEAK_RSS_LIMIT).

The two command benchmarks run a subprocess: ``bench/check.py``, which times CPU time of
the pytest process (``time.process_time``), judges them on the child's own CPU time
(``extra_info["cpu_s_min"]``, from ``wait4``); their wall time and the child's peak
memory are in ``extra_info`` too (``--benchmark-json``).  Both are skipped when the shared HPC2N log is
absent (the 1M-job one needs no shared file).

Run: ``.venv/bin/python -m pytest bench/test_bench_replay.py -m benchmark --benchmark-only``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from schedbench.engine.replay import Status, replay, warm_up
from schedbench.io import jobs
from schedbench.io import load as workload_io

HPC2N = Path(__file__).resolve().parents[2] / "shared" / "traces" / "swf" / "HPC2N-2002-2.2-cln.swf.gz"
needs_hpc2n = pytest.mark.skipif(not HPC2N.exists(), reason="shared HPC2N log not present")

MILLION = 1_000_000
MILLION_MACHINE = "256x(cores=4)"
# bytes: the engine issue's target for the 1M-job replay was 1 GiB (815-823 MB measured);
# since every allocation is recorded for allocations.parquet (11.9M (node, units) rows,
# 91 MB, for this table's 1M jobs on 4-core nodes) and jobs.parquet has the allocation
# shape columns, it measures 1.00-1.07 GB.
PEAK_RSS_LIMIT = 5 << 28


# -- in process -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hpc2n_case():
    table, machine, meta, _ = workload_io.load(str(HPC2N))
    warm_up()
    replay(table.head(2000), machine, "easy", "ff", meta=meta)  # compile outside the timing
    return table, machine, meta


def _timed_replays(benchmark, case, scheduler: str, rounds: int):
    """Benchmark ``rounds`` whole replays (one more as warm-up); returns the last result
    and the median ``simulate_s`` of the timed rounds (the figure issue 15's goals use)."""
    table, machine, meta = case
    simulate: list[float] = []

    def once():
        result = replay(table, machine, scheduler, "ff", meta=meta)
        simulate.append(result.simulate_s)
        return result

    result = benchmark.pedantic(once, rounds=rounds, warmup_rounds=1)
    timed = sorted(simulate[1:] or simulate)
    return result, timed[len(timed) // 2]


@needs_hpc2n
@pytest.mark.benchmark
def test_replay_hpc2n_easy_ff(benchmark, hpc2n_case):
    table = hpc2n_case[0]
    result, simulate_s = _timed_replays(benchmark, hpc2n_case, "easy", rounds=5)
    replayed = int(np.count_nonzero(result.status == Status.REPLAYED))
    assert replayed == table.n_jobs
    benchmark.extra_info["jobs"] = table.n_jobs
    benchmark.extra_info["jobs_replayed"] = replayed
    benchmark.extra_info["simulate_s"] = simulate_s  # median of the rounds
    benchmark.extra_info["jobs_per_s"] = replayed / simulate_s
    stats = getattr(benchmark, "stats", None)
    if stats is not None:  # None under --benchmark-disable
        benchmark.extra_info["jobs_per_s_whole_call"] = replayed / stats.stats.min



@needs_hpc2n
@pytest.mark.benchmark
@pytest.mark.parametrize("scheduler", ["prb", "sfs"])
def test_replay_hpc2n_ff(benchmark, hpc2n_case, scheduler):
    """PRB (skipping) and SFS (default weights, accounts from the trace) + first-fit on the
    whole HPC2N log: the goals are a ``simulate_s`` within 1.5x (PRB, issue 15) and 3x
    (SFS, issue 12) of EASY's (``extra_info``)."""
    table, machine, meta = hpc2n_case
    replay(table.head(2000), machine, scheduler, "ff", meta=meta)  # compile outside the timing
    _, simulate_s = _timed_replays(benchmark, hpc2n_case, scheduler, rounds=5)
    benchmark.extra_info["simulate_s"] = simulate_s  # median of the rounds
    benchmark.extra_info["jobs_per_s"] = table.n_jobs / simulate_s


# -- the command, in a subprocess -------------------------------------------------------------


def _run_cli(args: list[str], workdir: Path) -> dict:
    """Run ``python -m schedbench ARGS`` and return its wall time, CPU time and peak RSS
    (from ``wait4``: this child's own, not the maximum over earlier children)."""
    out_path, err_path = workdir / "stdout.txt", workdir / "stderr.txt"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "schedbench", *args], stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise AssertionError(f"schedbench {' '.join(args)} exited {proc.returncode}:\n{err_path.read_text()}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "max_rss_bytes": usage.ru_maxrss * 1024,  # Linux reports KiB
    }


def _record(benchmark, runs: list[dict], outdir: Path) -> None:
    summary = json.loads((outdir / "summary.json").read_text())
    walls = sorted(r["wall_s"] for r in runs)
    benchmark.extra_info["judged_by"] = "cpu_s_min"  # the child's CPU time: see bench/check.py
    benchmark.extra_info["wall_s_min"] = walls[0]
    benchmark.extra_info["wall_s_median"] = walls[len(walls) // 2]
    benchmark.extra_info["cpu_s_min"] = min(r["cpu_s"] for r in runs)
    benchmark.extra_info["max_rss_bytes"] = max(r["max_rss_bytes"] for r in runs)
    benchmark.extra_info["jobs_input"] = summary["jobs_input"]
    for key in ("parse_s", "simulate_s", "write_s", "jobs_per_s"):
        benchmark.extra_info[key] = summary["timings"].get(key)


def _bench_cli_replay(benchmark, trace, tmp_path, rounds: int, warmup_rounds: int) -> list[dict]:
    """Time ``schedbench replay TRACE -s easy -a ff`` in a child process; record the
    measured runs (the warm-up excluded) in extra_info and return them."""
    outdir = tmp_path / "run"
    args = ["replay", str(trace), "-s", "easy", "-a", "ff", "-o", str(outdir), "-q"]
    runs: list[dict] = []

    def once():
        runs.append(_run_cli(args, tmp_path))

    benchmark.pedantic(once, rounds=rounds, warmup_rounds=warmup_rounds)
    measured = runs[warmup_rounds:] or runs
    _record(benchmark, measured, outdir)
    return measured


@needs_hpc2n
@pytest.mark.benchmark
def test_cli_replay_hpc2n(benchmark, tmp_path):
    _bench_cli_replay(benchmark, HPC2N, tmp_path, rounds=5, warmup_rounds=1)


CTC_SP2_JOBS = 77_222


@pytest.fixture(scope="session")
def hpc2n_77k(tmp_path_factory) -> Path:
    """The first 77,222 jobs of HPC2N (CTC-SP2's count) as a gzip SWF log with its header."""
    from schedbench.io import swf

    table, header = swf.read(HPC2N)
    path = tmp_path_factory.mktemp("bench-77k") / "HPC2N-first-77222.swf.gz"
    swf.write(table.head(CTC_SP2_JOBS), header, path)
    return path


@needs_hpc2n
@pytest.mark.benchmark
def test_cli_replay_77k(benchmark, hpc2n_77k, tmp_path):
    _bench_cli_replay(benchmark, hpc2n_77k, tmp_path, rounds=5, warmup_rounds=1)


def _cached_ctc_sp2() -> Path | None:
    from schedbench.io import catalog, fetch

    entry = catalog.load().get("CTC-SP2-1996-3.1-cln")
    return fetch.cached_path(entry) if entry is not None and fetch.is_cached(entry) else None


@pytest.mark.benchmark
def test_cli_replay_ctc_sp2(benchmark, tmp_path):
    path = _cached_ctc_sp2()
    if path is None:
        pytest.skip("CTC-SP2-1996-3.1-cln is not in the trace cache (schedbench traces fetch CTC-SP2-1996-3.1-cln)")
    _bench_cli_replay(benchmark, path, tmp_path, rounds=5, warmup_rounds=1)


@pytest.fixture(scope="session")
def million_job_table(tmp_path_factory) -> Path:
    """A seeded 1,000,000-job Parquet table: power-of-two widths up to 128 cores,
    lognormal run times, over-estimated requests, arrivals at 85 % offered load of 1,024
    cores."""
    rng = np.random.default_rng(0)
    n = MILLION
    size = np.minimum(2 ** rng.integers(0, 8, n), 128)
    run = np.minimum(rng.lognormal(5.5, 1.8, n), 200000).astype(np.int64)
    span = (size * run).sum() / (0.85 * 1024)
    submit = np.sort(rng.uniform(0, span, n)).astype(np.int64)
    estimate = (run * rng.uniform(1, 5, n)).astype(np.int64) + 60
    table = jobs.from_columns(
        submit=submit, run=run, procs_req=size, time_req=estimate, user=rng.integers(0, 300, n)
    )
    path = tmp_path_factory.mktemp("bench-replay") / "million.parquet"
    jobs.write_parquet(table, path, {"machine": MILLION_MACHINE})
    return path


@pytest.mark.benchmark
def test_cli_replay_1m_peak_rss(benchmark, million_job_table, tmp_path):
    runs = _bench_cli_replay(benchmark, million_job_table, tmp_path, rounds=1, warmup_rounds=0)
    peak = max(r["max_rss_bytes"] for r in runs)
    benchmark.extra_info["max_rss_mib"] = peak / 2**20
    assert peak < PEAK_RSS_LIMIT, f"peak RSS {peak / 2**20:.0f} MiB, target under {PEAK_RSS_LIMIT / 2**30} GiB"
