"""Conservative backfilling on nodes over a grid of generated Eurora-like workloads: how
much ``simulate_s`` depends on the workload's seed, load and burstiness (issue 27's goal
names a 5,917-job bursty Eurora log we do not have; ``conservative_nodes_speed.py``'s
``burst-*`` cases are one point of this grid).

For each seed, load and burstiness, generates ``schedbench workload eurora-like --jobs N
--seed S --load L --burstiness B`` in-process and replays it under conservative with each
allocator (predictor ``requested``), after one small untimed replay per allocator (the
kernels compiled or loaded).  Prints one line per workload: its parameters, and the
``simulate_s`` of each allocator; then, per load, the median and range over the seeds and
burstinesses.  The code timed is whatever ``schedbench`` imports.

Run: ``PYTHONPATH=$PWD/sched .venv/bin/python bench/eurora_like_scan.py [--seeds 0 1 2]
[--loads 0.8 1.2 1.6 2.4] [--burstiness 0 1 3 8] [--allocators ff bf balanced]``.
"""

from __future__ import annotations

import argparse
import itertools
import statistics

import numpy as np

from schedbench.engine.replay import replay
from schedbench.io import machine
from schedbench.workloads import eurora_like


def simulate_s(table, meta, allocator: str) -> float:
    """One conservative replay's ``simulate_s``."""
    return replay(table, machine.from_spec(meta["machine"]), "conservative", allocator, "requested",
                  meta=meta).simulate_s


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=5917)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--loads", type=float, nargs="+", default=[0.8, 1.2, 1.6, 2.4])
    p.add_argument("--burstiness", type=float, nargs="+", default=[0, 1, 3, 8])
    p.add_argument("--allocators", nargs="+", default=["ff", "bf", "balanced"])
    args = p.parse_args()
    table, meta = eurora_like.generate(300, np.random.default_rng(0), load=1.0, burstiness=1)
    for a in args.allocators:
        simulate_s(table, meta, a)
    by_load: dict[tuple[float, str], list[float]] = {}
    for load, b, seed in itertools.product(args.loads, args.burstiness, args.seeds):
        table, meta = eurora_like.generate(args.jobs, np.random.default_rng(seed), load=load, burstiness=b)
        times = {a: simulate_s(table, meta, a) for a in args.allocators}
        for a, s in times.items():
            by_load.setdefault((load, a), []).append(s)
        print(f"load={load} burstiness={b} seed={seed} " + " ".join(f"{a}={s:.3f}" for a, s in times.items()),
              flush=True)
    for (load, a), times in by_load.items():
        print(f"load={load} {a}: median {statistics.median(times):.2f} s, {min(times):.2f}-{max(times):.2f} s "
              f"over {len(times)} workloads")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
