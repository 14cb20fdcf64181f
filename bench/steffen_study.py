"""Steffen's SFS study (§9), reproduced: Alice, Bob and Chris on 1400 nodes.

The workload is ``schedbench workload steffen`` (``schedbench.workloads.steffen``) with 24 h
requested for every job (our choice: the paper gives no requested times; with 24 h
Alice's twelve 250-node jobs a day ask for twice the machine, the queue stuffing of its
§3.1).  Target occupancies (nodes) are our choice too, the paper giving none for §9:
Alice 600, Bob 150, Chris 300 (``bench/studies/steffen-accounts.toml``).  Priority
weights: age-dominant ``age=1,size=0.5`` (a minute of queueing is worth two nodes) and
size-dominant ``age=1,size=20`` (a node is worth 20 minutes); no fair-share term, as the
paper's runs separate SFS from history.

Runs, per seed: linear (``priority``) and SFS (``sfs``) x age- and size-dominant weights,
with backfill, plus the linear scheduler without backfill (``backfill=false``): the
paper's linear results (Bob waits 1.5 and 3 days) need a scheduler that never lets Bob's
65-node jobs into the 150 nodes Alice's 250-node jobs leave free, which EASY-style
backfill always does.  Prints the first-start latency of Bob and Chris (days; mean and
range over the seeds) beside the paper's, and draws one Gantt-like chart per run of the
first seed (nodes x days, each job's nodes as rectangles, accounts coloured, as the
paper's Figures 1-4) from allocations.parquet.

    make study-sfs            # or: python bench/steffen_study.py [--seeds K] [-o DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ACCOUNTS = HERE / "studies" / "steffen-accounts.toml"
WEIGHTS = {"age": "age=1,size=0.5,fairshare=0", "size": "age=1,size=20,fairshare=0"}
RUNS = [  # (label, scheduler, weights, backfill)
    ("linear, age-dominant", "priority", "age", True),
    ("linear, size-dominant", "priority", "size", True),
    ("linear without backfill, age-dominant", "priority", "age", False),
    ("linear without backfill, size-dominant", "priority", "size", False),
    ("SFS, age-dominant", "sfs", "age", True),
    ("SFS, size-dominant", "sfs", "size", True),
]
PAPER = {  # Steffen §9.3, Figures 1-4: (Bob, Chris) first-start latency, days
    ("priority", "age"): ("about 1.5", "6-7"),
    ("priority", "size"): ("about 3", "under 1"),
    ("sfs", "age"): ("0 (at once)", "6-7"),
    ("sfs", "size"): ("0 (at once)", "under 1"),
}
NAMES = {"1": "Alice", "2": "Bob", "3": "Chris"}
COLOURS = {"1": "tab:blue", "2": "tab:red", "3": "gold"}


def _gantt(run_dir: Path, title: str, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import polars as pl

    jobs = pl.read_parquet(run_dir / "jobs.parquet").filter(pl.col("status") == "replayed")
    alloc = pl.read_parquet(run_dir / "allocations.parquet").join(
        jobs.select("job_id", "start", "end", "group"), on="job_id")
    fig, ax = plt.subplots(figsize=(9, 4))
    for group, colour in COLOURS.items():
        rows = alloc.filter(pl.col("group") == int(group)).sort("job_id", "node")
        for (_, start, end), part in rows.group_by(["job_id", "start", "end"], maintain_order=True):
            nodes = part["node"].to_numpy()
            breaks = np.flatnonzero(np.diff(nodes) != 1) + 1  # contiguous runs of nodes
            for run in np.split(nodes, breaks):
                ax.broken_barh([(start / 86400, max(end - start, 1) / 86400)], (run[0], run.size),
                               facecolors=colour, edgecolor="none")
        ax.plot([], [], color=colour, linewidth=8, label=NAMES[group])
    ax.set_xlabel("time (days)")
    ax.set_ylabel("node")
    ax.set_ylim(0, 1400)
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3, help="seeds 1..K of the run fractions (default 3)")
    ap.add_argument("-o", "--output", default="bench-results/steffen-study", help="folder for runs, figures, table")
    args = ap.parse_args(argv)

    from schedbench.analysis import results
    from schedbench.engine import replay
    from schedbench.io import machine
    from schedbench.workloads import steffen

    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    mach = machine.from_spec(steffen.MACHINE)
    latency: dict[str, list[tuple[float, float]]] = {label: [] for label, *_ in RUNS}
    for seed in range(1, args.seeds + 1):
        table = steffen.generate(np.random.default_rng(seed), alice_hours=24, bob_hours=24, chris_hours=24)
        for label, scheduler, weights, backfill in RUNS:
            r = replay.replay(table, mach, scheduler, "ff", options={
                "priority_weights": WEIGHTS[weights], "backfill": backfill, "accounts": str(ACCOUNTS)})
            slug = f"{scheduler}-{weights}-{'bf' if backfill else 'strict'}-seed{seed}"
            summary = results.write_run(r, out / slug)
            acc = summary["fairness"]["accounts"]
            latency[label].append(tuple(acc[a]["first_start_latency"] / 86400 for a in ("2", "3")))
            if seed == 1:
                _gantt(out / slug, f"{label} (seed 1)", out / f"{slug}.png")
    lines = [
        "# Steffen §9: first-start latency (days), ours beside the paper's",
        "",
        f"Seeds 1-{args.seeds}; mean [min-max].  Workload: `schedbench workload steffen` with 24 h requested; "
        "targets Alice 600, Bob 150, Chris 300 nodes (our choices; see bench/steffen_study.py).",
        "",
        "| run | Bob (ours) | Chris (ours) | Bob (paper) | Chris (paper) |",
        "|---|---|---|---|---|",
    ]
    for label, scheduler, weights, backfill in RUNS:
        b, c = np.array(latency[label]).T
        paper = PAPER.get((scheduler, weights), ("-", "-"))
        if scheduler == "priority" and backfill:
            paper = ("-", "-")  # the paper's linear runs match the no-backfill rows (see above)
        fmt = lambda v: f"{v.mean():.2f} [{v.min():.2f}-{v.max():.2f}]"  # noqa: E731
        lines.append(f"| {label} | {fmt(b)} | {fmt(c)} | {paper[0]} | {paper[1]} |")
    text = "\n".join(lines) + "\n"
    (out / "steffen-study.md").write_text(text)
    (out / "latency.json").write_text(json.dumps(latency, indent=1) + "\n")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
