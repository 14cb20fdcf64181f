"""Timing of the SWF reader on a generated 1,000,000-line log (target: under 1 s).

Run: ``.venv/bin/python -m pytest bench/test_bench_swf.py -m benchmark --benchmark-only``
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from schedbench.io import jobs, swf

N_LINES = 1_000_000
TARGET_SECONDS = 1.0


def _synthetic_table(n: int, seed: int = 20240601) -> jobs.JobTable:
    """A log shaped like the PWA's: Poisson arrivals, heavy-tailed run times, power-of-two
    widths, a few hundred users."""
    rng = np.random.default_rng(seed)
    submit = np.cumsum(rng.exponential(90.0, n)).astype(np.int64)
    run = np.minimum(rng.lognormal(7.0, 2.0, n), 7 * 86400).astype(np.int64)
    procs = 2 ** rng.integers(0, 9, n)
    time_req = np.maximum(run, (run * rng.uniform(1.0, 5.0, n)).astype(np.int64))
    return jobs.from_columns(
        n,
        job_id=np.arange(1, n + 1),
        submit=submit,
        wait=rng.integers(0, 20000, n),
        run=run,
        procs_alloc=procs,
        cpu_avg=(run * rng.uniform(0.5, 1.0, n)).astype(np.int64),
        mem_used=rng.integers(1000, 500000, n),
        procs_req=procs,
        time_req=time_req,
        mem_req=np.full(n, -1),
        status=rng.choice([0, 1, 5], n, p=[0.1, 0.85, 0.05]),
        user=rng.integers(1, 400, n),
        group=rng.integers(1, 30, n),
        executable=np.full(n, -1),
        queue=rng.integers(0, 5, n),
        partition=np.ones(n, dtype=np.int64),
    )


@pytest.fixture(scope="session")
def million_line_log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bench") / "synthetic.swf"
    header = swf.SWFHeader(version="2.2", computer="synthetic", max_jobs=N_LINES,
                           max_records=N_LINES, max_procs=256)
    swf.write(_synthetic_table(N_LINES), header, path)
    # Warm the numba kernel (compilation or cache load) outside the timings.
    swf.parse_bytes(path.read_bytes()[:10_000].rsplit(b"\n", 1)[0] + b"\n")
    return path


@pytest.fixture(scope="session")
def million_line_log_gz(million_line_log) -> Path:
    path = million_line_log.with_suffix(".swf.gz")
    path.write_bytes(gzip.compress(million_line_log.read_bytes(), compresslevel=6))
    return path


def _check(benchmark, result, target: float | None) -> None:
    table, header = result
    assert len(table) == N_LINES
    assert header.max_procs == 256
    stats = getattr(benchmark, "stats", None)
    if target is not None and stats is not None:  # None under --benchmark-disable
        assert stats.stats.min < target, f"best read took {stats.stats.min:.2f} s"


@pytest.mark.benchmark
def test_read_plain_1m_lines(benchmark, million_line_log):
    result = benchmark.pedantic(swf.read, args=(million_line_log,), rounds=5, warmup_rounds=1)
    _check(benchmark, result, TARGET_SECONDS)


@pytest.mark.benchmark
def test_read_gzip_1m_lines(benchmark, million_line_log_gz):
    # No target: single-threaded zlib alone needs about half a second for these 85 MB.
    result = benchmark.pedantic(swf.read, args=(million_line_log_gz,), rounds=5, warmup_rounds=1)
    _check(benchmark, result, None)
