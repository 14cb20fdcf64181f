"""Soner and Özturan's study (IPSCHED/AUCSCHED paper §5–6, Table 10, Figures 7–15),
reproduced on Machine-L (1024 nodes x (8 cores, 2 GPUs)).

Workloads: ESP-2 ``cpu-gpu`` (458 jobs), ``ESP-RS``, the same with the PRACE paper's
random sizes (``random-size-cpu-gpu``, their Table 7) and the Soner workloads I–V
(``--jobs`` each, default 200, mean inter-arrival 15 s), each with ``--seeds`` seeds.  The
ESP workloads' Z jobs come at ``--z-times`` (``esp2``, the default: 80 and 240 min;
``doubled``: 160 and 480 min, which fixes the makespan at 8 h; see
``schedbench.workloads.esp``); their run folders are named after the reading, so runs of
the two readings never mix.  Experiments (Table 10,
plus AUCSCHED without SLURM bids, which §4.3 mentions), every SCHED_INTERVAL = 5 s:

====  ===========================  =========  ==========================
exp   run                          priority   objective
====  ===========================  =========  ==========================
1, 2  ``backfill+bf``              basic, mf  SLURM backfill (EASY + Best-Fit)
3, 4  ``ipsched``                  basic, mf  sum P_j (s_j - c_j)
5, 6  ``ipsched -O objective=cores``  basic, mf  sum P_j R_j^cpu (s_j - c_j)
7, 8  ``aucsched+bf``              basic, mf  (8), with SLURM bids
9, 10 ``aucsched -O slurm_bids=false``  basic, mf  (8), without SLURM bids
====  ===========================  =========  ==========================

Metrics (their §6): Soner utilisation (sum of run x cores / machine cores over the
makespan), mean wait (hours), packing factor (nodes / the fewest nodes that could hold the
job), fragmentation (blocks of consecutive nodes) and spread ((last - first + 1) / nodes),
the last three per job and averaged over the replayed jobs, then over the seeds.  Every
run's outputs are kept under ``DIR/runs/`` and a run whose summary.json exists is not run
again, so an interrupted study resumes.  Writes ``DIR/soner-study.md`` (tables and the
comparison with the paper's orderings) and ``DIR/figure-<metric>.png``.

    make study-soner             # or: python bench/soner_study.py [--seeds K] [--jobs N] [-j 2] [-o DIR]
    make study-soner SONER="--workloads ESP,ESP-RS --experiments 1,2,7,8"   # the ESP columns, quickly
    python bench/soner_study.py --report-only -o DIR   # tables from the runs done so far
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import numpy as np

MACHINE = "1024x(cores=8,gpus=2)"
EXPERIMENTS = [  # (number, label, scheduler, options)
    (1, "Backfill basic", "backfill", {"priority_type": "basic"}),
    (2, "Backfill multifactor", "backfill", {"priority_type": "multifactor"}),
    (3, "IPSCHED basic", "ipsched", {"priority_type": "basic"}),
    (4, "IPSCHED multifactor", "ipsched", {"priority_type": "multifactor"}),
    (5, "IPSCHED-cores basic", "ipsched", {"priority_type": "basic", "objective": "cores"}),
    (6, "IPSCHED-cores multifactor", "ipsched", {"priority_type": "multifactor", "objective": "cores"}),
    (7, "AUCSCHED basic", "aucsched", {"priority_type": "basic"}),
    (8, "AUCSCHED multifactor", "aucsched", {"priority_type": "multifactor"}),
    (9, "AUCSCHED no-SLURM-bids basic", "aucsched", {"priority_type": "basic", "slurm_bids": False}),
    (10, "AUCSCHED no-SLURM-bids multifactor", "aucsched", {"priority_type": "multifactor", "slurm_bids": False}),
]
WORKLOADS = ["ESP", "ESP-RS", "I", "II", "III", "IV", "V"]
ESP_VARIANTS = {"ESP": "cpu-gpu", "ESP-RS": "random-size-cpu-gpu"}
# The PRACE paper's Tables 6 (ESP cpu-gpu, its experiments 1-6) and 7 (random sizes, 7-8) by
# our experiment: (their experiment, mean wait (h), utilisation, packing factor or None).
PRACE = {
    ("ESP", 1): ("1", 1.60, 0.90, None), ("ESP", 5): ("2", 0.91, 0.93, None),
    ("ESP", 3): ("3", 0.77, 0.92, None), ("ESP", 2): ("4", 2.42, 0.89, None),
    ("ESP", 4): ("5", 0.88, 0.94, None), ("ESP", 6): ("6", 2.08, 0.93, None),
    ("ESP-RS", 2): ("7", 2.50, 0.88, 1.021), ("ESP-RS", 6): ("8", 1.09, 0.94, 1.016),
}
METRICS = [  # (key, title, better)
    ("utilisation", "Soner utilisation", "high"),
    ("wait_h", "mean wait (h)", "low"),
    ("packing", "packing factor", "low"),
    ("fragments", "fragmentation (blocks per job)", "low"),
    ("spread", "spread", "low"),
]
FAMILIES = {"Backfill": (1, 2), "IPSCHED": (3, 4, 5, 6), "AUCSCHED": (7, 8, 9, 10)}


def _workload(name: str, seed: int, jobs: int, z_times: str):
    from schedbench.io.machine import from_spec
    from schedbench.workloads import esp, soner

    m = from_spec(MACHINE)
    rng = np.random.default_rng(seed)
    if name in ESP_VARIANTS:
        return esp.generate(ESP_VARIANTS[name], m, rng, z_times=z_times), m
    return soner.generate(name, jobs, m, rng), m


def run_one(args) -> dict:
    """Replay one (experiment, workload, seed) into ``outdir`` unless it is there."""
    number, workload, seed, jobs, z_times, outdir = args
    out = Path(outdir)
    done = out / "summary.json"
    if done.exists():
        return json.loads(done.read_text())
    from schedbench.analysis.results import write_run
    from schedbench.engine.replay import replay

    _, _, scheduler, options = EXPERIMENTS[number - 1]
    table, machine = _workload(workload, seed, jobs, z_times)
    t0 = time.perf_counter()
    result = replay(table, machine, scheduler, "bf", period=5, options=options)
    summary = write_run(result, out, extra={"study": {"experiment": number, "workload": workload, "seed": seed,
                                                      "wall_s": time.perf_counter() - t0}})
    return summary


def compare_models(workload: str, seed: int, jobs: int, number: int, old_solves: int, z_times: str) -> dict:
    """IPSCHED's model over node states (used) against the per-node model at every
    decision point of one replay of experiment ``number``: columns and rows of both models
    (the per-node one built, not solved), the states model's solve times, the per-node
    model's solve times on the first ``old_solves`` decision points (one thread, node limit
    200, as in the replay), and the replay's wall time."""
    from schedbench.engine.replay import replay
    from schedbench.policies import window as win
    from schedbench.policies.ipsched import IPSched

    _, _, scheduler, options = EXPERIMENTS[number - 1]
    assert scheduler == "ipsched", "compare IPSCHED experiments (3-6)"
    table, machine = _workload(workload, seed, jobs, z_times)
    old = []  # (columns, rows, solve_s or None) per decision point
    original = IPSched._allocate

    def both(self, *args):
        solve = self._solve
        timed = len(old) < old_solves

        def record(m, now, window_size, jobs, extra=None):
            t = None
            if timed:
                t0 = time.perf_counter()
                m.optimize(max_nodes=self.solver.max_nodes)
                t = time.perf_counter() - t0
            old.append((m.num_cols, m.num_rows, t))
            return win.Solve("skipped", None, False, True)

        self._solve = record
        self._allocate_nodes(*args)
        self._solve = solve
        return original(self, *args)

    IPSched._allocate = both
    try:
        t0 = time.perf_counter()
        result = replay(table, machine, scheduler, "bf", period=5, options={**options, "model": "states"})
        wall = time.perf_counter() - t0
    finally:
        IPSched._allocate = original
    d = result.tables["decisions"]
    old_cols = np.array([o[0] for o in old])
    old_rows = np.array([o[1] for o in old])
    old_t = np.array([o[2] for o in old if o[2] is not None])
    return {"workload": workload, "seed": seed, "experiment": number, "decisions": d.height,
            "cols_nodes": (int(np.median(old_cols)), int(old_cols.max())),
            "cols_states": (int(d["variables"].median()), int(d["variables"].max())),
            "rows_nodes": (int(np.median(old_rows)), int(old_rows.max())),
            "rows_states": (int(d["constraints"].median()), int(d["constraints"].max())),
            "solve_states": (float(d["solve_s"].median()), float(d["solve_s"].max()), float(d["solve_s"].sum())),
            "solve_nodes_first": (len(old_t), float(np.median(old_t)) if old_t.size else None,
                                  float(old_t.max()) if old_t.size else None),
            "statuses": dict(zip(*np.unique(d["status"].to_numpy(), return_counts=True), strict=True)),
            "wall_s": wall}


def measures(rundir: Path) -> dict:
    import polars as pl

    summary = json.loads((rundir / "summary.json").read_text())
    jobs = pl.read_parquet(rundir / "jobs.parquet").filter(pl.col("status") == "replayed")
    return {
        "utilisation": summary["metrics"]["soner_utilisation"],
        "wait_h": summary["metrics"]["wait_mean"] / 3600.0,
        "packing": float(jobs["packing"].mean()),
        "packing_std": float(jobs["packing"].std()),
        "fragments": float(jobs["fragments"].mean()),
        "spread": float(jobs["spread"].mean()),
        "solve_s_median": (summary.get("policy") or {}).get("solve_s_median"),
        "statuses": (summary.get("policy") or {}).get("statuses"),
        "wall_s": summary["study"]["wall_s"],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3, help="seeds per workload (default 3, as the study files)")
    ap.add_argument("--jobs", type=int, default=200, help="jobs per Soner workload (default 200)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help=f"comma-separated subset of {','.join(WORKLOADS)}")
    ap.add_argument("--z-times", choices=("esp2", "doubled"), default="esp2",
                    help="the ESP Z jobs' earliest submit times (schedbench.workloads.esp; default esp2)")
    ap.add_argument("--experiments", default="1-10", help="experiment numbers, e.g. 1-10 or 1,3,7")
    ap.add_argument("-j", "--jobs-parallel", type=int, default=min(2, os.cpu_count() or 1), dest="parallel")
    ap.add_argument("-o", "--output", default="bench/results/soner-study")
    ap.add_argument("--report-only", action="store_true", help="write the report from the runs already done")
    ap.add_argument("--compare-models", type=int, metavar="K", default=None,
                    help="instead of the study: IPSCHED's states and per-node models at every decision point of "
                         "one replay per workload and --experiments (3-6), the per-node model solved at the "
                         "first K decision points")
    args = ap.parse_args(argv)
    if args.compare_models is not None:
        for w in (w for w in args.workloads.split(",") if w):
            for n in _numbers(args.experiments):
                for seed in range(1, args.seeds + 1):
                    print(json.dumps(compare_models(w, seed, args.jobs, n, args.compare_models, args.z_times),
                                     default=str),
                          flush=True)
        return 0
    out = Path(args.output)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    numbers = _numbers(args.experiments)
    workloads = [w for w in args.workloads.split(",") if w]
    unknown = sorted(set(workloads) - set(WORKLOADS))
    if unknown:
        ap.error(f"unknown workload(s) {', '.join(unknown)} (choose from {', '.join(WORKLOADS)})")
    tasks = [(n, w, s, args.jobs, args.z_times, str(out / "runs" / _run_name(n, w, s, args.z_times)))
             for w in workloads for s in range(1, args.seeds + 1) for n in numbers]
    # Longest first, so that no worker is left with a long replay at the end: AUCSCHED on
    # the random-size ESP takes minutes per replay (exp 10 and 8 the most), everything
    # else seconds (the study's wall table)
    def slow_first(t):
        n, w = t[0], t[1]
        slow = EXPERIMENTS[n - 1][2] == "aucsched" and w == "ESP-RS"
        return (not slow, -n if slow else 0, WORKLOADS.index(w), t[2], n)

    tasks.sort(key=slow_first)
    t0 = time.perf_counter()
    lost = [] if args.report_only else run_all(tasks, args.parallel)
    table = {}
    for n, w, _, _, _, path in tasks:
        if (Path(path) / "summary.json").exists():
            table.setdefault((n, w), []).append(measures(Path(path)))
    text = _report(table, numbers, workloads, args, time.perf_counter() - t0)
    (out / "soner-study.md").write_text(text)
    _figures(table, numbers, workloads, out)
    print(text)
    for n, w, seed, *_ in lost:
        print(f"soner_study: exp {n} {w} seed {seed} is not in the report: its worker died while it ran alone",
              file=sys.stderr)
    return 1 if lost else 0


def run_all(tasks: list, parallel: int, run=run_one) -> list:
    """Run every task (:func:`run_one`'s arguments) in ``parallel`` worker processes,
    printing a line as each ends; returns the tasks whose worker died while running
    them alone.

    A worker that dies (the out-of-memory killer: one AUCSCHED window took CBC 20 GB,
    docs/studies/soner-ozturan.md) breaks the whole pool, and which of its tasks killed
    it is not known.  The pool hands tasks out in order, so the ones that may have been
    running are the first ``parallel + 1`` unfinished ones: they are run again one at a
    time, alone (a replay that died beside another may pass alone), and the others with
    ``parallel`` workers again.  A task whose worker dies while alone is given up."""
    lost, batches, done = [], [(list(tasks), parallel)], 0
    while batches:
        todo, workers = batches.pop(0)
        ok = [False] * len(todo)
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(run, t): i for i, t in enumerate(todo)}
            try:
                for f in as_completed(futures):
                    st = f.result()["study"]
                    ok[futures[f]] = True
                    done += 1
                    print(f"[{done}/{len(tasks)}] exp {st['experiment']} {st['workload']} seed {st['seed']}: "
                          f"{st['wall_s']:.1f} s", file=sys.stderr, flush=True)
            except BrokenProcessPool:
                pass
        rest = [t for t, fine in zip(todo, ok, strict=True) if not fine]
        if not rest:
            continue
        n, w, seed = rest[0][:3]
        if workers == 1:  # it ran alone: it is what killed its worker
            print(f"soner_study: the worker replaying exp {n} {w} seed {seed} alone died (out of memory?); "
                  "given up", file=sys.stderr, flush=True)
            lost.append(rest[0])
            batches.insert(0, (rest[1:], 1))
        else:
            print(f"soner_study: a worker died; the {min(len(rest), workers + 1)} replays it may have been running "
                  "are run again one at a time", file=sys.stderr, flush=True)
            batches[:0] = [(rest[: workers + 1], 1), (rest[workers + 1 :], workers)]
    return lost


def _run_name(number: int, workload: str, seed: int, z_times: str) -> str:
    """A run's folder: the ESP workloads' names carry the Z-time reading (a run made under
    one reading is never taken for the other's)."""
    w = f"{workload}.z-{z_times}" if workload in ESP_VARIANTS else workload
    return f"exp{number:02d}-{w}-seed{seed}"


def _numbers(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return [n for n in out if 1 <= n <= len(EXPERIMENTS)]


def _mean(rows, key):
    vals = [r[key] for r in rows if r[key] is not None]
    return float(np.mean(vals)) if vals else None


def _best(table, numbers, workloads, key, better):
    """Per workload, the family of the best experiment (mean over seeds)."""
    out = {}
    for w in workloads:
        vals = {n: _mean(table[(n, w)], key) for n in numbers if (n, w) in table}
        vals = {n: v for n, v in vals.items() if v is not None}
        if not vals:
            continue
        top = (max if better == "high" else min)(vals.values())
        winners = sorted({f for n, v in vals.items() if abs(v - top) <= 1e-9 * max(1.0, abs(top))
                          for f, ns in FAMILIES.items() if n in ns})
        out[w] = winners[0] if len(winners) == 1 else "a tie of " + " and ".join(winners)
    return out


def _report(table, numbers, workloads, args, wall) -> str:
    lines = ["# Soner & Özturan's study on Machine-L", "",
             f"Seeds per workload: {args.seeds}; Soner workloads of {args.jobs} jobs; SCHED_INTERVAL 5 s; CBC, "
             f"node limit 200; ESP Z jobs at the {args.z_times} times"
             + ("; every replay from an earlier run (--report-only)." if args.report_only
                else f"; wall {wall / 60:.1f} min for the runs not cached."), ""]
    sections = [(f"{title} ({better}er is better)", key, "{:.3f}") for key, title, better in METRICS]
    sections += [("Wall time per replay (s)", "wall_s", "{:.0f}"),
                 ("Median solve time per decision point (s)", "solve_s_median", "{:.3f}")]
    for title, key, form in sections:
        lines += [f"## {title}", "", "| experiment | " + " | ".join(workloads) + " |", "|---|" + "---|" * len(workloads)]
        for n in numbers:
            values = [_mean(table[(n, w)], key) if (n, w) in table else None for w in workloads]
            cells = ["-" if v is None else form.format(v) for v in values]
            lines.append(f"| {n} {EXPERIMENTS[n - 1][1]} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += _status_table(table, numbers, workloads)
    lines += _prace_tables(table, numbers, workloads)
    lines += ["## The paper's orderings against ours", ""]
    claims = [
        ("utilisation", "high", ["ESP"], "AUCSCHED", "AUCSCHED gives the best utilisation on ESP"),
        ("wait_h", "low", workloads, "IPSCHED", "IPSCHED gives the lowest mean wait"),
        ("fragments", "low", workloads, "Backfill", "SLURM backfill gives the least fragmentation"),
        ("spread", "low", workloads, "AUCSCHED", "AUCSCHED gives the least spread"),
    ]
    for key, better, where, family, claim in claims:
        best = _best(table, numbers, [w for w in where if w in workloads], key, better)
        agree = [w for w, f in best.items() if f == family]
        differ = {w: f for w, f in best.items() if f != family}
        verdict = "reproduced on " + (", ".join(agree) or "none")
        if differ:
            verdict += "; best elsewhere: " + ", ".join(f"{w} {f}" for w, f in differ.items())
        lines.append(f"- Paper: {claim}. Ours: {verdict}.")
    return "\n".join(lines) + "\n"


def _status_table(table, numbers, workloads) -> list[str]:
    """Every solve's status, summed over seeds, per IP experiment and workload: optimal,
    feasible (node limit hit with an incumbent: the paper's rule starts nothing and halves
    the window), no_solution_found (limit hit without one), infeasible."""
    numbers = [n for n in numbers if EXPERIMENTS[n - 1][2] != "backfill"]
    if not numbers:
        return []
    lines = ["## Solver statuses (solves over all seeds)", "", "| experiment | " + " | ".join(workloads) + " |",
             "|---|" + "---|" * len(workloads)]
    for n in numbers:
        cells = []
        for w in workloads:
            counts: dict[str, int] = {}
            for row in table.get((n, w), []):
                for status, k in (row["statuses"] or {}).items():
                    counts[status] = counts.get(status, 0) + k
            cells.append(", ".join(f"{k} {status}" for status, k in sorted(counts.items())) or "-")
        lines.append(f"| {n} {EXPERIMENTS[n - 1][1]} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _prace_tables(table, numbers, workloads) -> list[str]:
    """The PRACE paper's Tables 6-7 (their SLURM emulation, 3 runs each) beside our cells."""
    rows = [(w, n) for (w, n) in PRACE if w in workloads and n in numbers and (n, w) in table]
    if not rows:
        return []
    lines = ["## The PRACE paper's Tables 6 (ESP) and 7 (ESP-RS) beside ours", "",
             "| workload | their exp. | our experiment | wait (h) paper / ours | utilisation paper / ours "
             "| packing factor paper / ours (mean ± std over jobs) |", "|---|---|---|---|---|---|"]
    for w, n in sorted(rows, key=lambda r: (WORKLOADS.index(r[0]), int(PRACE[r][0]))):
        theirs, wait, util, pack = PRACE[(w, n)]
        runs = table[(n, w)]
        ours_pack = f"{_mean(runs, 'packing'):.3f} ± {_mean(runs, 'packing_std'):.3f}"
        lines.append(f"| {w} | {theirs} | {n} {EXPERIMENTS[n - 1][1]} | {wait:.2f} / {_mean(runs, 'wait_h'):.2f} "
                     f"| {util:.2f} / {_mean(runs, 'utilisation'):.3f} | "
                     f"{'-' if pack is None else f'{pack:.3f}'} / {ours_pack} |")
    return lines + [""]


def _figures(table, numbers, workloads, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    width = 0.8 / max(len(numbers), 1)
    for key, title, _ in METRICS:
        fig, ax = plt.subplots(figsize=(11, 4.2))
        for i, n in enumerate(numbers):
            vals = [(_mean(table[(n, w)], key) if (n, w) in table else None) for w in workloads]
            xs = np.arange(len(workloads)) + (i - len(numbers) / 2 + 0.5) * width
            ax.bar(xs, [v if v is not None else 0 for v in vals], width, label=f"{n} {EXPERIMENTS[n - 1][1]}")
        ax.set_xticks(np.arange(len(workloads)), workloads)
        ax.set_ylabel(title)
        ax.set_title(f"{title} by experiment (mean over seeds; Machine-L)")
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
        fig.tight_layout()
        fig.savefig(out / f"figure-{key}.png", dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
