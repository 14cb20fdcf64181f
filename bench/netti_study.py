"""The heterogeneity-aware allocation study of Netti et al. (Tables 2-3), reproduced.

SJF, EASY, PRB and FCFS x FF, BF, Balanced, Weighted and Priority-Weighted on the real
Eurora job instances (../shared/traces/eurora) and on the Eurora-like generator at two
load levels; prints, per workload and node order, the mean slowdown s = mean (wait + run)
/ run over jobs with run > 0 and the mean queue size q over dispatching times (both as in
the paper, §4.1), with the best gain of the heterogeneity-aware allocators over FF and BF.

Every workload runs under three orders of the same 64 nodes (``--orders``), since
First-Fit's placements are the node order itself:

* ``file``: the node file's order (Eurora's ``nodes_#64`` and the generator's machine
  list the 32 MIC nodes first).  MIC jobs are under 1 % of the mix, so FF keeps CPU jobs
  on the MIC nodes and off the GPU nodes: under this order FF is accidentally
  heterogeneity-aware, and the aware allocators can only look weak beside it.
* ``gpu-first``: the GPU nodes first, then the MIC nodes (each in file order): FF puts
  CPU jobs on the GPU nodes first, as an order that knows nothing of the mix may.
* ``interleaved``: GPU and MIC nodes alternate (GPU first): a neutral order, neither
  protecting nor exposing one accelerator type.

The other allocators sort the nodes themselves; the order only breaks their ties.

Beside the load-level workloads, the paper's four months run as the paper ran them (§4.3):
one continuous workload (``eurora_like.generate_months``: apr2014, aug2014, sep2014,
apr2015 back to back, the trace's order, with the calibrated parameters of
``eurora_like.CALIBRATED``; ``--months``, ``--scale``, ``--seed``) replayed once per
scheduler, allocator and node order, its results sliced by submit month
(:func:`month_metrics`), so no month but the first starts idle.  Each month's table carries
the paper's figures (Tables 2-3: the rows marked "paper"; the paper has no FCFS; its EBF
rows stand beside ``easy``, EASY as the paper's text describes it, and ``ebf-accasim``,
EBF as the authors' AccaSim code runs it), and every row gives the gain of the best aware
allocator (B, W, P-W) over the better of FF and BF, ours and the paper's; a paragraph per
node order counts the rows where the gain exceeds 5 %.  The tables of the other workloads
end with the paper's gains for all four months.

    make study            # or: python bench/netti_study.py [--jobs N] [--seeds K] [--loads L1,L2]
                          #     [--months M1,...] [--scale F] [--orders ...] [--no-instances] [-o FILE]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

from schedbench import registry
from schedbench.analysis import metrics, results
from schedbench.engine import replay
from schedbench.io import eurora, machine
from schedbench.workloads import eurora_like

SCHEDULERS = ("sjf", "easy", "ebf-accasim", "prb", "fcfs")
ALLOCATORS = ("ff", "bf", "balanced", "weighted", "priority-weighted")
SHORT = {"ff": "FF", "bf": "BF", "balanced": "B", "weighted": "W", "priority-weighted": "P-W"}
SHARED = Path(__file__).resolve().parents[2] / "shared" / "traces" / "eurora" / "job_instances"
ORDERS = ("file", "gpu-first", "interleaved")
MONTHS = ("apr2015", "apr2014", "sep2014", "aug2014")
#: Netti et al. Tables 2-3: per month and scheduler, (s, q) of FF, BF, B, W, P-W (data-driven
#: predictions; the paper's EBF is "easy" by its text and "ebf-accasim" by the authors' code, and
#: its rows stand beside both).
PAPER = {
    "apr2015": {"cph": ((10, 4), (10, 4), (7, 4), (8, 4), (7, 4)),
                "sjf": ((16, 5), (16, 5), (10, 5), (10, 5), (10, 5)),
                "easy": ((28, 5), (28, 5), (18, 4), (20, 4), (20, 4)),
                "prb": ((28, 5), (28, 5), (21, 4), (22, 4), (22, 4))},
    "apr2014": {"cph": ((251, 57), (271, 55), (238, 63), (315, 82), (254, 70)),
                "sjf": ((1269, 230), (1270, 229), (1266, 233), (1276, 218), (1253, 216)),
                "easy": ((3004, 697), (2563, 702), (2197, 619), (2378, 686), (2313, 674)),
                "prb": ((1852, 615), (2023, 640), (1778, 594), (1829, 627), (1910, 599))},
    "sep2014": {"cph": ((41, 27), (42, 28), (11, 11), (10, 10), (8, 8)),
                "sjf": ((34, 28), (29, 23), (19, 20), (23, 19), (14, 14)),
                "easy": ((51, 33), (48, 34), (39, 19), (37, 20), (53, 37)),
                "prb": ((43, 24), (47, 27), (30, 16), (36, 16), (40, 20))},
    "aug2014": {"cph": ((8, 7), (7, 6), (11, 7), (4, 4), (7, 6)),
                "sjf": ((26, 17), (32, 22), (18, 14), (18, 13), (15, 11)),
                "easy": ((22, 15), (26, 16), (21, 15), (14, 10), (18, 13)),
                "prb": ((20, 13), (22, 14), (14, 10), (8, 6), (5, 3))},
}
PAPER_KEY = {"ebf-accasim": "easy"}
#: The continuous runs: months adjacent in the calendar run back to back (August then
#: September 2014); the others run apart, since the months between them are not modelled
#: and one month's backlog must not spill into a month that came months later.  A month
#: listed twice is preceded by a copy of itself that stands for its unmodelled calendar
#: predecessor, so it does not start idle (April 2014 is the trace's first month and does);
#: only the last copy is reported.
CHAINS = (("apr2014",), ("aug2014", "aug2014", "sep2014"), ("apr2015", "apr2015"))  # the paper's EBF rows stand beside both readings
ORDER_NOTE = {
    "file": "node file order (MIC nodes first)",
    "gpu-first": "GPU nodes first, then MIC nodes",
    "interleaved": "GPU and MIC nodes alternating",
}


def node_permutation(capacity: np.ndarray, order: str) -> np.ndarray:
    """Node indices of ``capacity`` (int64 (m, 4)) in ``order`` (:data:`ORDERS`): GPU nodes
    are those with GPUs, MIC nodes those with MICs and no GPUs; nodes with neither come
    last in the two reordered orders; each group keeps its file order."""
    m = capacity.shape[0]
    if order == "file":
        return np.arange(m)
    gpu = np.flatnonzero(capacity[:, 1] > 0)
    mic = np.flatnonzero((capacity[:, 1] == 0) & (capacity[:, 2] > 0))
    rest = np.flatnonzero((capacity[:, 1] == 0) & (capacity[:, 2] == 0))
    if order == "gpu-first":
        return np.concatenate([gpu, mic, rest])
    if order == "interleaved":
        mixed = [int(i) for pair in zip(gpu, mic, strict=False) for i in pair]
        longer = gpu if gpu.size > mic.size else mic
        mixed += [int(i) for i in longer[min(gpu.size, mic.size):]]
        return np.concatenate([np.array(mixed, dtype=np.int64), rest])
    raise ValueError(f"unknown node order {order!r}; choose from {', '.join(ORDERS)}")


def reordered(mach: machine.Machine, order: str) -> machine.Machine:
    """The same nodes as ``mach`` in ``order``."""
    cap = mach.capacity[node_permutation(mach.capacity, order)]
    return machine.Machine(cap, machine.spec_of(cap), f"{mach.note}; nodes in {order} order".strip("; "))


CPH_OPTIONS = {}  # cph's options for every run of this study (``--cp-det-time``)


def _options(scheduler):
    return CPH_OPTIONS if scheduler == "cph" else {}


def _measure(table, mach, meta, scheduler, allocator, predictor):
    r = replay.replay(table, mach, scheduler, allocator, predictor, meta=meta, options=_options(scheduler))
    jobs = results.jobs_frame(r)
    timeline = results.timeline_frame(r)
    return metrics.slowdown(jobs), metrics.mean_queue_length_per_instant(timeline)


def month_metrics(result, months):
    """{month name: (slowdown, queue)} of one replay of a continuous workload: the mean
    slowdown of the jobs submitted in each month (``months``: the generator's
    ``meta["months"]``, submit times in [start, end)) and the mean queue size over the
    dispatching instants inside it, as the paper reports its months (§4.3).  None where a
    month has no such job or instant."""
    jobs = results.jobs_frame(result)
    timeline = results.timeline_frame(result)
    out = {}
    for m in months:
        lo, hi = m["start"], m["end"]
        out[m["name"]] = (metrics.slowdown(jobs.filter(pl.col("submit").is_between(lo, hi, closed="left"))),
                          metrics.mean_queue_length_per_instant(
                              timeline.filter(pl.col("time").is_between(lo, hi, closed="left"))))
    return out


def continuous_cells(table, mach, meta, predictor, schedulers=SCHEDULERS, allocators=ALLOCATORS):
    """{month: {(scheduler, allocator): (slowdown, queue)}}: each pair replays the whole
    continuous workload once and its results are sliced by submit month."""
    cells = {m["name"]: {} for m in meta["months"]}
    for scheduler in schedulers:
        for allocator in allocators:
            r = replay.replay(table, mach, scheduler, allocator, predictor, meta=meta, options=_options(scheduler))
            for month, value in month_metrics(r, meta["months"]).items():
                cells[month][scheduler, allocator] = value
    return cells


def study(workloads, predictor, schedulers=SCHEDULERS):
    """{workload name: {(scheduler, allocator): (slowdown, queue)}}, averaged over the
    instances (seeds) given for each workload."""
    results = {}
    for name, instances in workloads.items():
        cells = {}
        for scheduler in schedulers:
            for allocator in ALLOCATORS:
                values = [_measure(t, m, meta, scheduler, allocator, predictor) for t, m, meta in instances]
                cells[scheduler, allocator] = tuple(float(np.mean([v[i] for v in values])) for i in (0, 1))
        results[name] = cells
    return results


def _gain(base, best):
    return f"{100 * (base - best) / base:.0f}%" if base > 0 else "-"


def _aware_gain(s, q):
    """Gain (text) of the best aware allocator over the better of FF and BF, for slowdown
    and queue size; ``s`` and ``q`` map allocator names to values."""
    aware = ALLOCATORS[2:]
    return (f"{_gain(min(s['ff'], s['bf']), min(s[a] for a in aware))} / "
            f"{_gain(min(q['ff'], q['bf']), min(q[a] for a in aware))}")


def table_md(name, cells, month=None, schedulers=SCHEDULERS):
    """One workload's table; ``month``: the preset month whose paper rows go beside ours."""
    head = "| scheduler | " + " | ".join(f"{SHORT[a]} s | {SHORT[a]} q" for a in ALLOCATORS)
    head += " | best gain vs FF s / q | vs BF s / q | vs better of FF, BF s / q |"
    rows = [f"**{name}**", "", head, "|" + "---|" * (2 * len(ALLOCATORS) + 4)]
    for scheduler in schedulers:
        s = {a: cells[scheduler, a][0] for a in ALLOCATORS}
        q = {a: cells[scheduler, a][1] for a in ALLOCATORS}
        aware = ALLOCATORS[2:]
        best_s = min(s[a] for a in aware)
        best_q = min(q[a] for a in aware)
        row = f"| {scheduler.upper()} | " + " | ".join(f"{s[a]:.1f} | {q[a]:.1f}" for a in ALLOCATORS)
        row += f" | {_gain(s['ff'], best_s)} / {_gain(q['ff'], best_q)} | {_gain(s['bf'], best_s)} / {_gain(q['bf'], best_q)}"
        row += f" | {_aware_gain(s, q)} |"
        rows.append(row)
        if month and PAPER_KEY.get(scheduler, scheduler) in PAPER[month]:
            rows.append(_paper_row(month, PAPER_KEY.get(scheduler, scheduler)))
    if not month:
        rows += ["", "Paper (Tables 2-3), gain of the best aware allocator over the better of FF, BF, s / q: "
                 + "; ".join(f"{m}: " + ", ".join(f"{sc.upper()} {_paper_gain(m, sc)}" for sc in ("cph", "sjf", "easy", "prb"))
                             for m in MONTHS)]
    return "\n".join(rows)


def _paper_gain(month, scheduler):
    values = PAPER[month][scheduler]
    return _aware_gain({a: v[0] for a, v in zip(ALLOCATORS, values, strict=True)},
                       {a: v[1] for a, v in zip(ALLOCATORS, values, strict=True)})


def _paper_row(month, scheduler):
    values = PAPER[month][scheduler]
    s = {a: v[0] for a, v in zip(ALLOCATORS, values, strict=True)}
    q = {a: v[1] for a, v in zip(ALLOCATORS, values, strict=True)}
    aware = ALLOCATORS[2:]
    best_s, best_q = min(s[a] for a in aware), min(q[a] for a in aware)
    row = f"| *paper {month} {'EBF' if scheduler == 'easy' else scheduler.upper()}* | "
    row += " | ".join(f"{s[a]} | {q[a]}" for a in ALLOCATORS)
    row += f" | {_gain(s['ff'], best_s)} / {_gain(q['ff'], best_q)} | {_gain(s['bf'], best_s)} / {_gain(q['bf'], best_q)}"
    return row + f" | {_aware_gain(s, q)} |"


def _with_orders(workloads, orders):
    """Each workload once per node order (its name says which); the month of a preset
    workload is kept in its instances' meta."""
    out = {}
    for name, instances in workloads.items():
        for order in orders:
            out[f"{name}; node order: {ORDER_NOTE[order]} ({order})"] = [
                (t, reordered(m, order), meta) for t, m, meta in instances
            ]
    return out


def chains_of(months):
    """The :data:`CHAINS` that report the given months."""
    return [chain for chain in CHAINS if chain[-1] in months or any(m in months for m in chain)]


def read_fitted(path):
    """The CALIBRATED block of a bench/netti_calibrate.py report: {month: parameters}."""
    block = re.search(r"```python\n(.*?)```", Path(path).read_text(), re.S)
    if block is None:
        raise SystemExit(f"{path}: no ```python block with CALIBRATED")
    namespace = {}
    exec(block.group(1), namespace)  # our own report's literal dict
    return namespace["CALIBRATED"]


def continuous_md(months, seed, scale, calibrated, orders, predictor, schedulers=SCHEDULERS, fitted=None,
                  fitted_from=()):
    """The continuous runs' tables: per node order and month, ours beside the paper's, and
    a count of where the aware allocators gain.  ``fitted``: {month: parameters} replacing
    :data:`eurora_like.CALIBRATED`'s for those months (read from the reports ``fitted_from``)."""
    runs = []
    for chain in chains_of(months):
        table, meta = eurora_like.generate_months(chain, seed, scale, calibrated=calibrated, overrides=fitted)
        runs.append((chain, table, meta))
    mach = machine.from_spec(runs[0][2]["machine"])
    loads = {m["name"]: m["offered_load"] for _, _, meta in runs for m in meta["months"]}
    head = (f"## Continuous runs: {' | '.join(' -> '.join(c) for c, _, _ in runs)} "
            f"({sum(t.n_jobs for _, t, _ in runs)} jobs, seed {seed}, scale {scale:g}: each month "
            f"{runs[0][2]['months'][0]['days']} day(s) at its real jobs per day; "
            f"{'calibrated' if calibrated else 'presets only'}"
            + (f"; {', '.join(sorted(fitted))} as fitted in {', '.join(map(str, fitted_from))}" if fitted else "")
            + ")\n\n"
            + "Offered load per month (GPUs / cores): "
            + "; ".join(f"{name} {v['gpus']:.2f} / {v['cores']:.2f}" for name, v in loads.items()))
    parts = [head]
    for order in orders:
        by_month = {}
        for _, table, meta in runs:
            by_month.update(continuous_cells(table, reordered(mach, order), meta, predictor, schedulers))
        by_month = {m: by_month[m] for m in months if m in by_month}
        for month, cells in by_month.items():
            parts.append(table_md(f"{month}, continuous run; node order: {ORDER_NOTE[order]} ({order})",
                                  cells, month if month in PAPER else None, schedulers))
            if month in PAPER:
                parts.append(residuals_md(month, cells, schedulers))
        parts.append(gains_summary(by_month, order, schedulers))
    return "\n\n".join(parts)


def residuals_md(month, cells, schedulers=SCHEDULERS):
    """FF's and BF's s and q beside the paper's, as ours / paper - 1, and how many are
    within +-25 %."""
    res = []
    for sc in schedulers:
        key = PAPER_KEY.get(sc, sc)
        if key not in PAPER[month]:
            continue
        for ai, a in enumerate(("ff", "bf")):
            for mi, metric in enumerate("sq"):
                ours = cells[sc, a][mi]
                res.append((f"{sc.upper()} {SHORT[a]} {metric}", None if ours is None else ours / PAPER[month][key][ai][mi] - 1))
    ok = sum(r is not None and abs(r) <= 0.25 for _, r in res)
    return ("Residuals of the baselines, ours / paper - 1: " + ", ".join(
        f"{name} {'n/a' if r is None else f'{100 * r:+.0f}%'}" for name, r in res)
        + f" ({ok} of {len(res)} within +-25 %).")


def gains_summary(by_month, order, schedulers=SCHEDULERS):
    """One paragraph: in how many (month, scheduler) rows the best aware allocator beats
    the better of FF and BF on slowdown, ours and the paper's."""
    ours = paper = total = 0
    detail = []
    for month, cells in by_month.items():
        if month not in PAPER:
            continue
        for sc in schedulers:
            key = PAPER_KEY.get(sc, sc)
            if key not in PAPER[month]:
                continue
            s = {a: cells[sc, a][0] for a in ALLOCATORS}
            if any(v is None for v in s.values()):
                continue
            ps = dict(zip(ALLOCATORS, (v[0] for v in PAPER[month][key]), strict=True))
            gain = 1 - min(s[a] for a in ALLOCATORS[2:]) / min(s["ff"], s["bf"])
            pgain = 1 - min(ps[a] for a in ALLOCATORS[2:]) / min(ps["ff"], ps["bf"])
            total += 1
            ours += gain > 0.05
            paper += pgain > 0.05
            detail.append(f"{month} {sc.upper()} {100 * gain:+.0f}% (paper {100 * pgain:+.0f}%)")
    return (f"**Gains, node order {order}:** the best aware allocator beats the better of FF and BF on "
            f"slowdown by more than 5 % in {ours} of {total} (month, scheduler) rows; the paper in {paper} "
            f"of {total}.  " + "; ".join(detail) + ".")


def _month(instances):
    return instances[0][2].get("preset")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=4000, help="jobs per generated workload (default 4000)")
    ap.add_argument("--seeds", type=int, default=2, help="generated instances per load level (default 2)")
    ap.add_argument("--loads", default="0.6,1.2", help="load levels of the generator ('' for none; default 0.6,1.2)")
    ap.add_argument("--burstiness", type=float, default=2.0)
    default_pred = "user-profile" if "user-profile" in registry.predictor_names() else "requested"
    ap.add_argument("--predictor", default=default_pred)
    ap.add_argument("--months", default=",".join(eurora_like.CHRONOLOGICAL),
                    help="months of the continuous run, in run order (comma-separated; '' for none; "
                    f"default {','.join(eurora_like.CHRONOLOGICAL)})")
    ap.add_argument("--scale", type=float, default=eurora_like.DEFAULT_SCALE,
                    help=f"month length as a fraction of the real month (default {eurora_like.DEFAULT_SCALE:g})")
    ap.add_argument("--seed", type=int, default=0, help="seed of the continuous run (default 0)")
    ap.add_argument("--uncalibrated", action="store_true", help="continuous run from the presets only")
    ap.add_argument("--orders", default=",".join(ORDERS),
                    help=f"node orders to run, comma-separated (default {','.join(ORDERS)})")
    ap.add_argument("--no-instances", action="store_true", help="skip the real Eurora job instances")
    ap.add_argument("--schedulers", default=",".join(SCHEDULERS),
                    help=f"schedulers to run, comma-separated (default {','.join(SCHEDULERS)}; add cph for the "
                    "paper's CPH rows: minutes of CP-SAT per replay, see docs/studies/netti-allocators.md)")
    ap.add_argument("--cp-det-time", type=float,
                    help="cph's deterministic-time limit per CP-SAT solve (default: cph's own, 1); "
                    "the tables say when it is set")
    ap.add_argument("--fitted", type=Path, action="append", default=[], metavar="REPORT",
                    help="months take the fitted values of a bench/netti_calibrate.py report instead of "
                    "eurora_like.CALIBRATED's (repeatable; a later report wins a month both fit)")
    ap.add_argument("-o", "--output", type=Path, help="also write the tables (Markdown) here")
    args = ap.parse_args(argv)
    if args.fitted and args.uncalibrated:
        ap.error("--fitted and --uncalibrated exclude each other")
    fitted = {}
    for path in args.fitted:
        fitted.update(read_fitted(path))
    CPH_OPTIONS.clear()
    if args.cp_det_time is not None:
        if not args.cp_det_time > 0:
            ap.error("--cp-det-time must be positive")
        CPH_OPTIONS["cp_det_time"] = args.cp_det_time
    orders = tuple(o.strip() for o in args.orders.split(",") if o.strip())
    schedulers = tuple(x.strip() for x in args.schedulers.split(",") if x.strip())
    for x in schedulers:
        if x not in registry.scheduler_names():
            ap.error(f"unknown scheduler {x!r}")
    for o in orders:
        if o not in ORDERS:
            ap.error(f"unknown node order {o!r}; choose from {', '.join(ORDERS)}")

    t0 = time.perf_counter()
    workloads = {}
    if args.no_instances:
        pass
    elif SHARED.exists():
        table, meta = eurora.read_instances(SHARED)
        workloads[f"Eurora job instances ({table.n_jobs} jobs)"] = [(table, machine.from_spec(meta["machine"]), meta)]
    else:
        print(f"note: {SHARED} not found; real instances skipped", file=sys.stderr)
    for load in (float(x) for x in args.loads.split(",") if x.strip()):
        instances = []
        for seed in range(args.seeds):
            table, meta = eurora_like.generate(args.jobs, np.random.default_rng(seed), load=load, burstiness=args.burstiness)
            instances.append((table, machine.from_spec(meta["machine"]), meta))
        workloads[f"Eurora-like, load {load}, burstiness {args.burstiness} ({args.jobs} jobs x {args.seeds} seeds)"] = instances
    with_orders = _with_orders(workloads, orders)
    results = study(with_orders, args.predictor, schedulers)
    text = "\n\n".join(table_md(name, cells, _month(with_orders[name]), schedulers)
                       for name, cells in results.items())
    months = [m.strip() for m in args.months.split(",") if m.strip()]
    for m in months:
        if m not in MONTHS:
            ap.error(f"unknown month {m!r}; choose from {', '.join(MONTHS)}")
    if months:
        text += "\n\n" + continuous_md(months, args.seed, args.scale, not args.uncalibrated, orders, args.predictor,
                                      schedulers, fitted or None, args.fitted)
    text += (
        f"\n\ns = mean slowdown (wait + run) / run over jobs with run > 0; q = mean queue size over "
        f"dispatching instants; predictor {args.predictor}; {time.perf_counter() - t0:.0f} s.  "
        + (f"CPH with cp_det_time={args.cp_det_time:g} per solve.  " if "cph" in schedulers and CPH_OPTIONS else "")
        + "Each table names its node order: First-Fit's placements are that order, the other "
        "allocators sort the nodes themselves (the order only breaks their ties).\n"
    )
    print(text)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
