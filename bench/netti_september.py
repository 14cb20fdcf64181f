"""Why September at 1/10 favours Best-Fit and the aware allocators lose (issue 30).

Replays the study's September chain (aug2014, aug2014, sep2014; ``eurora_like.CALIBRATED``,
node file order, user-profile predictor) under FF, BF, B, W and P-W and measures, over the
jobs submitted in September (the study's slice, ``netti_study.month_metrics``):

* s (mean slowdown) and the suite's bounded slowdown; each class's share of s (CPU, MIC,
  GPU jobs: share = the class's slowdown sum / all September jobs) and mean wait;
* the job array (one user, shape and estimate, members <= 60 s apart) with the largest
  slowdown sum: its submit time (h after September's start), size, longest run, mean wait
  and share of the sum, and s without it;
* from the allocations, time-averaged over September: GPUs free while a GPU job is queued;
  of those, GPUs that no GPU job can use because their node has no free core or under
  1 GiB free; and cores held by CPU-only jobs on GPU nodes;
* the mean queue size over dispatching instants in September's last 12 hours and before;
* with ``--weights``, the largest term w_k * imp_k one node can have per type under W's
  authors' rule at 400 sampled September instants of its EASY replay (the next 100 queued
  jobs in arrival order, as EASY's window), to show which type decides W's order.

``--seeds 0,1,...`` adds a table of s per seed and allocator; ``--mem-gib`` counts memory in
GiB (each unit's request rounded up, so it grows by under 1 GiB; nodes 32) instead of MiB:
FF's, BF's and B's node orders do not read memory, while W's memory term shrinks 1,024-fold.

    python bench/netti_september.py [--seeds 0] [--schedulers sjf,easy,ebf-accasim,prb]
                                    [--detail-seed 0] [--mem-gib] [--weights]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import polars as pl

from schedbench.analysis import metrics, results
from schedbench.engine import replay
from schedbench.io import machine
from schedbench.workloads import eurora_like

CHAIN = ("aug2014", "aug2014", "sep2014")
ALLOCATORS = ("ff", "bf", "balanced", "weighted", "priority-weighted")
SHORT = {"ff": "FF", "bf": "BF", "balanced": "B", "weighted": "W", "priority-weighted": "P-W"}
ARRAY_KEY = ("user", "size", "cores", "gpus", "mics", "mem", "estimate")


def workload(seed, scale, mem_gib):
    table, meta = eurora_like.generate_months(CHAIN, seed, scale)
    mach = machine.from_spec(meta["machine"])
    if mem_gib:
        table = type(table)(**{f: (-(-table.unit_mem // 1024) if f == "unit_mem" else getattr(table, f))
                               for f in table._fields})
        cap = mach.capacity.copy()
        cap[:, 3] = cap[:, 3] // 1024
        mach = machine.Machine(cap, machine.spec_of(cap), "memory in GiB")
    return table, mach, meta


def september(jobs, month):
    return jobs.filter(pl.col("submit").is_between(month["start"], month["end"], closed="left"))


def slowdowns(sep):
    j = sep.filter(pl.col("run") > 0).with_columns(
        ((pl.col("wait") + pl.col("run")) / pl.col("run")).alias("sd"),
        pl.when(pl.col("gpus") > 0).then(pl.lit("GPU")).when(pl.col("mics") > 0).then(pl.lit("MIC"))
        .otherwise(pl.lit("CPU")).alias("cls"))
    j = j.sort("submit", "job_id").with_columns(pl.struct(ARRAY_KEY).hash().alias("key"))
    gap = pl.col("submit") - pl.col("submit").shift(1).over("key")
    j = j.with_columns((gap.is_null() | (gap > 60)).cast(pl.Int64).cum_sum().over("key").alias("member"))
    return j


def top_array(j):
    g = (j.group_by("key", "member").agg(pl.col("sd").sum().alias("sum"), pl.len().alias("jobs"),
                                         pl.col("run").max().alias("run_max"), pl.col("wait").mean().alias("wait"),
                                         pl.col("submit").min().alias("submit"))
         .sort("sum", descending=True).row(0, named=True))
    total = j["sd"].sum()
    return {"jobs": g["jobs"], "run_max": g["run_max"], "wait": g["wait"], "share": g["sum"] / total, "submit": g["submit"],
            "s_without": (total - g["sum"]) / (j.height - g["jobs"])}


def node_use(jobs, allocs, mach, month):
    """Time averages over ``month`` of: GPUs free while a GPU job is queued, those of them
    on nodes with no free core or under 1 GiB free, and CPU-only jobs' cores on GPU nodes."""
    lo, hi = month["start"], month["end"]
    gpu_nodes = np.flatnonzero(mach.capacity[:, 1] > 0)
    cap = mach.capacity[gpu_nodes]
    gib = 1024 if cap[0, 3] > 1024 else 1
    started = jobs.filter(pl.col("start").is_not_null())
    a = allocs.join(started.select("job_id", "start", "end", "cores", "gpus", "mics", "mem"), on="job_id")
    u = a["units"].to_numpy().astype(np.int64)
    res = np.stack([a[c].to_numpy() * u for c in ("cores", "gpus", "mics", "mem")], 1)
    cpu = np.where((a["gpus"].to_numpy() == 0) & (a["mics"].to_numpy() == 0), res[:, 0], 0)
    t = np.concatenate([a["start"].to_numpy(), a["end"].to_numpy()])
    sign = np.repeat([1, -1], len(a))
    node = np.tile(a["node"].to_numpy().astype(np.int64), 2)
    order = np.lexsort((sign, t))
    t, sign, node = t[order], sign[order], node[order]
    delta = np.concatenate([res, res])[order] * sign[:, None]
    dcpu = np.concatenate([cpu, cpu])[order] * sign
    g = started.filter(pl.col("gpus") > 0)
    qt = np.concatenate([g["submit"].to_numpy(), g["start"].to_numpy()])
    qd = np.repeat([1, -1], g.height)
    qo = np.lexsort((-qd, qt))
    qt, queued = qt[qo], np.cumsum(qd[qo])
    row = np.full(mach.capacity.shape[0], -1)
    row[gpu_nodes] = np.arange(gpu_nodes.size)
    used = np.zeros((gpu_nodes.size, 4), np.int64)
    cpu_cores = np.zeros(gpu_nodes.size, np.int64)
    span = waiting = free_q = lost_q = cpu_on = 0.0
    i, n = 0, len(t)
    while i < n:
        now = t[i]
        while i < n and t[i] == now:
            r = row[node[i]]
            if r >= 0:
                used[r] += delta[i]
                cpu_cores[r] += dcpu[i]
            i += 1
        a0, a1 = max(now, lo), min(t[i] if i < n else hi, hi)
        if a1 <= a0:
            continue
        dt = a1 - a0
        span += dt
        cpu_on += dt * cpu_cores.sum()
        k = np.searchsorted(qt, a0, side="right") - 1
        if k >= 0 and queued[k] > 0:
            free = cap[:, 1] - used[:, 1]
            lost = free * ((cap[:, 0] - used[:, 0] == 0) | (cap[:, 3] - used[:, 3] < gib))
            waiting += dt
            free_q += dt * free.sum()
            lost_q += dt * lost.sum()
    return {"queued_share": waiting / span, "free_q": free_q / max(waiting, 1),
            "lost_q": lost_q / max(waiting, 1), "cpu_cores_on_gpu": cpu_on / span}


def authors_terms(jobs, timeline, mach, month, samples=400):
    """Median over sampled instants (queue not empty) of the largest term w_k * imp_k a
    node can have, per type, under the authors' rule with the next 100 queued jobs."""
    cap = mach.capacity.sum(0).astype(float)
    node_cap = mach.capacity.max(0).astype(float)
    j = jobs.filter(pl.col("start").is_not_null()).sort("submit", "job_id")
    sub, st = j["submit"].to_numpy(), j["start"].to_numpy()
    d = j["pred"].to_numpy().astype(float) + 1
    req = np.stack([j[c].to_numpy() * j["size"].to_numpy() for c in ("cores", "gpus", "mics", "mem")], 1)
    tl = timeline.filter(pl.col("time").is_between(month["start"], month["end"], closed="left") & (pl.col("queue") > 0))
    pick = np.random.default_rng(0).choice(tl.height, size=min(samples, tl.height), replace=False)
    terms = []
    for p in pick:
        r = tl.row(int(p), named=True)
        q = np.flatnonzero((sub <= r["time"]) & (st > r["time"]))[:100]
        used = np.array([r["used_cores"], r["used_gpus"], r["used_mics"], r["used_mem"]], float)
        w = (1 + (d[q, None] * req[q]).sum(0)) / (1 + d[q].sum()) * (used + 1) / cap ** 2
        terms.append(w * node_cap)
    return np.median(np.array(terms), 0)


def detail(seed, scale, schedulers, mem_gib, weights):
    table, mach, meta = workload(seed, scale, mem_gib)
    month = meta["months"][-1]
    out = [f"## September, seed {seed}, scale {scale:g}{', memory in GiB' if mem_gib else ''}: "
           f"{month['jobs']} jobs, node file order\n"]
    head = ("| scheduler | alloc | s | bsld | share of s: CPU / MIC / GPU | wait min: CPU / GPU "
            "| top array: submit h, jobs, max run s, mean wait s, share of s | s without it | GPU queued, share of time "
            "| GPUs free while GPU queued | of them unusable | CPU-job cores on GPU nodes | q: last 12 h / before |")
    out += [head, "|" + "---|" * (head.count("|") - 1)]
    w_terms = None
    for sc in schedulers:
        for a in ALLOCATORS:
            r = replay.replay(table, mach, sc, a, "user-profile", meta=meta)
            jobs = results.jobs_frame(r)
            sep = september(jobs, month)
            j = slowdowns(sep)
            n = j.height
            share = {c: j.filter(pl.col("cls") == c)["sd"].sum() / n for c in ("CPU", "MIC", "GPU")}
            wait = {c: j.filter(pl.col("cls") == c)["wait"].mean() / 60 for c in ("CPU", "GPU")}
            top = top_array(j)
            use = node_use(jobs, results.allocations_frame(r), mach, month)
            tl = results.timeline_frame(r)
            cut = month["end"] - 12 * 3600
            q_end = metrics.mean_queue_length_per_instant(tl.filter(pl.col("time").is_between(cut, month["end"], closed="left")))
            q_before = metrics.mean_queue_length_per_instant(tl.filter(pl.col("time").is_between(month["start"], cut, closed="left")))
            out.append(
                f"| {sc} | {SHORT[a]} | {j['sd'].mean():.1f} | {metrics.bounded_slowdown(sep):.1f} "
                f"| {share['CPU']:.2f} / {share['MIC']:.2f} / {share['GPU']:.1f} | {wait['CPU']:.1f} / {wait['GPU']:.1f} "
                f"| {(top['submit'] - month['start']) / 3600:.1f}, {top['jobs']}, {top['run_max']}, {top['wait']:.0f}, {top['share']:.0%} | {top['s_without']:.1f} "
                f"| {use['queued_share']:.2f} | {use['free_q']:.2f} | {use['lost_q']:.2f} | {use['cpu_cores_on_gpu']:.1f} "
                f"| {q_end:.0f} / {q_before:.0f} |")
            if weights and sc == "easy" and a == "weighted":
                w_terms = authors_terms(jobs, results.timeline_frame(r), mach, month)
    if w_terms is not None:
        out.append("\nW (authors' rule), EASY: median over 400 instants of the largest term w_k * imp_k on "
                   "one node: " + ", ".join(f"{k} {v:.3g}" for k, v in zip(("cores", "GPUs", "MICs", "memory"),
                                                                          w_terms, strict=True)))
    return "\n".join(out)


def seeds_table(seeds, scale, schedulers, mem_gib):
    rows = []
    for seed in seeds:
        table, mach, meta = workload(seed, scale, mem_gib)
        month = meta["months"][-1]
        for sc in schedulers:
            for a in ALLOCATORS:
                r = replay.replay(table, mach, sc, a, "user-profile", meta=meta)
                rows.append((sc, seed, a, metrics.slowdown(september(results.jobs_frame(r), month))))
    out = [f"## s per seed{' (memory in GiB)' if mem_gib else ''}\n",
           "| scheduler | seed | " + " | ".join(SHORT[a] for a in ALLOCATORS) + " | BF vs FF | best aware vs better of FF, BF |",
           "|" + "---|" * (len(ALLOCATORS) + 4)]
    for sc in schedulers:
        for seed in seeds:
            s = {a: v for (x, sd, a, v) in rows if x == sc and sd == seed}
            base = min(s["ff"], s["bf"])
            aware = min(s[a] for a in ALLOCATORS[2:])
            out.append(f"| {sc} | {seed} | " + " | ".join(f"{s[a]:.1f}" for a in ALLOCATORS)
                       + f" | {1 - s['bf'] / s['ff']:+.0%} | {1 - aware / base:+.0%} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="", help="seeds for the table of s per seed (comma-separated; default none)")
    ap.add_argument("--detail-seed", type=int, default=0, help="seed of the detailed table (-1: none; default 0)")
    ap.add_argument("--schedulers", default="sjf,easy,ebf-accasim,prb")
    ap.add_argument("--scale", type=float, default=eurora_like.DEFAULT_SCALE)
    ap.add_argument("--mem-gib", action="store_true", help="count memory in GiB instead of MiB")
    ap.add_argument("--weights", action="store_true", help="W's largest term per type (EASY replay of the detail seed)")
    args = ap.parse_args(argv)
    schedulers = tuple(s.strip() for s in args.schedulers.split(",") if s.strip())
    t0 = time.perf_counter()
    parts = []
    if args.detail_seed >= 0:
        parts.append(detail(args.detail_seed, args.scale, schedulers, args.mem_gib, args.weights))
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    if seeds:
        parts.append(seeds_table(seeds, args.scale, schedulers, args.mem_gib))
    print("\n\n".join(parts) + f"\n\n{time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
