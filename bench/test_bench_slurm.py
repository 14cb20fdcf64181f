"""``slurm`` (Slurm's defaults) vs ``easy`` + first-fit on the whole HPC2N-2002-2.2 log as one
single-partition cluster: issue 26's goal is a ``simulate_s`` within 3x of EASY's.  Runs are
interleaved (easy, slurm, easy, ...) so that both see the same machine load; ``extra_info``
has each scheduler's min and max ``simulate_s`` and the ratio of the minima.

Run: ``.venv/bin/python -m pytest bench/test_bench_slurm.py -m benchmark --benchmark-only``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from schedbench.engine.replay import replay, warm_up
from schedbench.io import load as workload_io

HPC2N = Path(__file__).resolve().parents[2] / "shared" / "traces" / "swf" / "HPC2N-2002-2.2-cln.swf.gz"
ROUNDS = 3


@pytest.mark.skipif(not HPC2N.exists(), reason="shared HPC2N log not present")
@pytest.mark.benchmark
def test_slurm_vs_easy_hpc2n(benchmark):
    table, machine, meta, _ = workload_io.load(str(HPC2N))
    warm_up()
    for name in ("easy", "slurm"):
        replay(table.head(2000), machine, name, "ff", meta=meta)  # compile outside the timing
    times: dict[str, list[float]] = {"easy": [], "slurm": []}

    def interleaved():
        for name in ("easy", "slurm"):
            times[name].append(replay(table, machine, name, "ff", meta=meta).simulate_s)

    benchmark.pedantic(interleaved, rounds=ROUNDS, warmup_rounds=0)
    for name, values in times.items():
        benchmark.extra_info[f"{name}_simulate_s_min"] = min(values)
        benchmark.extra_info[f"{name}_simulate_s_max"] = max(values)
    benchmark.extra_info["ratio_of_minima"] = min(times["slurm"]) / min(times["easy"])
