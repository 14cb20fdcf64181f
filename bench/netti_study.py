"""The heterogeneity-aware allocation study of Netti et al. (Tables 2-3), reproduced.

SJF, EASY, PRB and FCFS x FF, BF, Balanced, Weighted and Priority-Weighted on the real
Eurora job instances (../shared/traces/eurora) and on the Eurora-like generator at two
load levels; prints, per workload, the mean slowdown s = mean (wait + run) / run over jobs
with run > 0 and the mean queue size q over dispatching times (both as in the paper,
§4.1), with the best gain of the heterogeneity-aware allocators over FF and BF.

    make study            # or: python bench/netti_study.py [--jobs N] [--seeds K] [-o FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from schedbench import machine, metrics, predictors, replay, results
from schedbench.workloads import eurora, eurora_like

SCHEDULERS = ("sjf", "easy", "prb", "fcfs")
ALLOCATORS = ("ff", "bf", "balanced", "weighted", "priority-weighted")
SHORT = {"ff": "FF", "bf": "BF", "balanced": "B", "weighted": "W", "priority-weighted": "P-W"}
SHARED = Path(__file__).resolve().parents[2] / "shared" / "traces" / "eurora" / "job_instances"


def _measure(table, mach, meta, scheduler, allocator, predictor):
    r = replay.replay(table, mach, scheduler, allocator, predictor, meta=meta)
    jobs = results.jobs_frame(r)
    timeline = results.timeline_frame(r)
    return metrics.slowdown(jobs), metrics.mean_queue_length_per_instant(timeline)


def study(workloads, predictor):
    """{workload name: {(scheduler, allocator): (slowdown, queue)}}, averaged over the
    instances (seeds) given for each workload."""
    results = {}
    for name, instances in workloads.items():
        cells = {}
        for scheduler in SCHEDULERS:
            for allocator in ALLOCATORS:
                values = [_measure(t, m, meta, scheduler, allocator, predictor) for t, m, meta in instances]
                cells[scheduler, allocator] = tuple(float(np.mean([v[i] for v in values])) for i in (0, 1))
        results[name] = cells
    return results


def _gain(base, best):
    return f"{100 * (base - best) / base:.0f}%" if base > 0 else "-"


def table_md(name, cells):
    head = "| scheduler | " + " | ".join(f"{SHORT[a]} s | {SHORT[a]} q" for a in ALLOCATORS)
    head += " | best gain vs FF s / q | vs BF s / q |"
    rows = [f"**{name}**", "", head, "|" + "---|" * (2 * len(ALLOCATORS) + 3)]
    for scheduler in SCHEDULERS:
        s = {a: cells[scheduler, a][0] for a in ALLOCATORS}
        q = {a: cells[scheduler, a][1] for a in ALLOCATORS}
        aware = ALLOCATORS[2:]
        best_s = min(s[a] for a in aware)
        best_q = min(q[a] for a in aware)
        row = f"| {scheduler.upper()} | " + " | ".join(f"{s[a]:.1f} | {q[a]:.1f}" for a in ALLOCATORS)
        row += f" | {_gain(s['ff'], best_s)} / {_gain(q['ff'], best_q)} | {_gain(s['bf'], best_s)} / {_gain(q['bf'], best_q)} |"
        rows.append(row)
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=4000, help="jobs per generated workload (default 4000)")
    ap.add_argument("--seeds", type=int, default=2, help="generated instances per load level (default 2)")
    ap.add_argument("--loads", default="0.6,1.2", help="load levels of the generator (default 0.6,1.2)")
    ap.add_argument("--burstiness", type=float, default=2.0)
    default_pred = "user-profile" if "user-profile" in predictors.PREDICTORS else "requested"
    ap.add_argument("--predictor", default=default_pred)
    ap.add_argument("-o", "--output", type=Path, help="also write the tables (Markdown) here")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    workloads = {}
    if SHARED.exists():
        table, meta = eurora.read_instances(SHARED)
        workloads[f"Eurora job instances ({table.n_jobs} jobs)"] = [(table, machine.from_spec(meta["machine"]), meta)]
    else:
        print(f"note: {SHARED} not found; real instances skipped", file=sys.stderr)
    for load in (float(x) for x in args.loads.split(",")):
        instances = []
        for seed in range(args.seeds):
            table, meta = eurora_like.generate(args.jobs, np.random.default_rng(seed), load=load, burstiness=args.burstiness)
            instances.append((table, machine.from_spec(meta["machine"]), meta))
        workloads[f"Eurora-like, load {load}, burstiness {args.burstiness} ({args.jobs} jobs x {args.seeds} seeds)"] = instances
    results = study(workloads, args.predictor)
    text = "\n\n".join(table_md(name, cells) for name, cells in results.items())
    text += (
        f"\n\ns = mean slowdown (wait + run) / run over jobs with run > 0; q = mean queue size over "
        f"dispatching instants; predictor {args.predictor}; {time.perf_counter() - t0:.0f} s.\n"
    )
    print(text)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
