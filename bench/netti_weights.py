"""Weighted and Priority-Weighted under the paper's weight rule and the authors' smoothing.

Mean slowdown / mean queue size (as in bench/netti_study.py) of FF, BF, W and P-W with
``weight_rule=text`` and ``weight_rule=authors`` on Eurora-like workloads, per node order
and scheduler: the figures behind the default weight rule
(docs/studies/netti-allocators.md).

    python bench/netti_weights.py [--jobs 4000] [--load 0.9] [--seeds 2] [--orders gpu-first,interleaved,file]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from netti_study import ORDERS, reordered
from schedbench.analysis import metrics, results
from schedbench.engine import replay
from schedbench.io import machine
from schedbench.workloads import eurora_like

SCHEDULERS = ("fcfs", "sjf", "easy", "prb")
CELLS = (
    ("FF", "ff", {}), ("BF", "bf", {}),
    ("W text", "weighted", {"weight_rule": "text"}), ("W authors", "weighted", {"weight_rule": "authors"}),
    ("P-W text", "priority-weighted", {"weight_rule": "text"}),
    ("P-W authors", "priority-weighted", {"weight_rule": "authors"}),
)


def _measure(table, mach, meta, scheduler, allocator, options, predictor):
    r = replay.replay(table, mach, scheduler, allocator, predictor, meta=meta, **options)
    return metrics.slowdown(results.jobs_frame(r)), metrics.mean_queue_length_per_instant(results.timeline_frame(r))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=4000)
    ap.add_argument("--load", type=float, default=0.9)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--orders", default="gpu-first,interleaved,file")
    ap.add_argument("--predictor", default="user-profile")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    instances = []
    for seed in range(args.seeds):
        table, meta = eurora_like.generate(args.jobs, np.random.default_rng(seed), load=args.load)
        instances.append((table, machine.from_spec(meta["machine"]), meta))
    for order in args.orders.split(","):
        if order not in ORDERS:
            ap.error(f"unknown node order {order!r}")
        print(f"\n{args.jobs} Eurora-like jobs, load {args.load}, seeds 0-{args.seeds - 1}, node order {order} "
              f"(mean s / q)\n")
        print("| scheduler | " + " | ".join(c[0] for c in CELLS) + " |")
        print("|---" * (len(CELLS) + 1) + "|")
        for scheduler in SCHEDULERS:
            row = []
            for _, allocator, options in CELLS:
                v = [_measure(t, reordered(m, order), meta, scheduler, allocator, options, args.predictor)
                     for t, m, meta in instances]
                row.append(f"{np.mean([x[0] for x in v]):.1f} / {np.mean([x[1] for x in v]):.1f}")
            print(f"| {scheduler} | " + " | ".join(row) + " |", flush=True)
    print(f"\n{time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
