"""Steffen's SFS study (§9), reproduced: Alice, Bob and Chris on 1400 nodes.

The workload is ``schedbench workload steffen`` (``schedbench.workloads.steffen``) with 24 h
requested for every job (our choice: the paper gives no requested times; with 24 h
Alice's twelve 250-node jobs a day ask for twice the machine, the queue stuffing of its
§3.1).  Target occupancies (nodes) are our choice too, the paper giving none for §9:
Alice 600, Bob 150, Chris 300 (``bench/studies/steffen-accounts.toml``).  Priority
weights: age-dominant ``age=1,size=0.5`` (a minute of queueing is worth two nodes) and
size-dominant ``age=1,size=20`` (a node is worth 20 minutes); no fair-share term, as the
paper's runs separate SFS from history.

Runs, per seed: linear (``priority``) and SFS (``sfs``, with and without standing
reservations, ``standing=true|false``) x age- and size-dominant weights, with backfill,
plus the linear scheduler without backfill (``backfill=false``): the
paper's linear results (Bob waits 1.5 and 3 days) need a scheduler that never lets Bob's
65-node jobs into the 150 nodes Alice's 250-node jobs leave free, which EASY-style
backfill always does.  Prints the first-start latency of Bob and Chris (days; mean and
range over the seeds) beside the paper's, and draws one Gantt-like chart per run of the
first seed (nodes x days, each job's nodes as rectangles, accounts coloured, as the
paper's Figures 1-4) from allocations.parquet.

Then the sweep over what the paper does not publish: requested times (Alice, Bob, Chris)
and target occupancies (Alice, Bob, Chris); for each setting and seed the four runs
behind the paper's figures (linear without backfill x age/size; SFS x age/size, with and
without standing reservations), and whether each figure holds (``FIGURES``: the
bands we read from the paper's words); its counts go below the main table, every latency
to ``sweep.json``.

    make study-sfs            # or: python bench/steffen_study.py [--seeds K] [--no-sweep] [-o DIR]
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
RUNS = [  # (label, scheduler, weights, backfill, standing reservations (sfs))
    ("linear, age-dominant", "priority", "age", True, None),
    ("linear, size-dominant", "priority", "size", True, None),
    ("linear without backfill, age-dominant", "priority", "age", False, None),
    ("linear without backfill, size-dominant", "priority", "size", False, None),
    ("SFS, age-dominant", "sfs", "age", True, False),
    ("SFS, size-dominant", "sfs", "size", True, False),
    ("SFS with standing reservations, age-dominant", "sfs", "age", True, True),
    ("SFS with standing reservations, size-dominant", "sfs", "size", True, True),
]
PAPER = {  # Steffen §9.3, Figures 1-4: (Bob, Chris) first-start latency, days
    ("priority", "age"): ("about 1.5", "6-7"),
    ("priority", "size"): ("about 3", "under 1"),
    ("sfs", "age"): ("0 (at once)", "6-7"),
    ("sfs", "size"): ("0 (at once)", "under 1"),
}
# The paper's words as bands of first-start latency, days, (Bob, Chris): "about 1.5"
# within half a day, "6-7" (and "almost 7") within half a day of the range, "more than
# 2 1/2" / "about 3" 2.5-3.5, "under 1" / "within a day" below 1, "immediately" below
# a quarter of a day (the first pass after submission, give or take a few job ends).
AT_ONCE, UNDER_1, SIX_SEVEN = (0.0, 0.25), (0.0, 1.0), (5.5, 7.5)
FIGURES = {  # figure: (scheduler, weights, Bob's band, Chris's band)
    1: ("priority", "age", (1.0, 2.0), SIX_SEVEN),
    2: ("priority", "size", (2.5, 3.5), UNDER_1),
    3: ("sfs", "age", AT_ONCE, SIX_SEVEN),
    4: ("sfs", "size", AT_ONCE, UNDER_1),
}
REQUESTS = [(a, b, 24) for a in (12, 16, 20, 24, 36, 48) for b in (12, 24)]  # hours: Alice, Bob, Chris
TARGETS = [(a, b, c) for a in (300, 600, 1000) for b in (65, 150, 300) for c in (300, 750)]  # nodes
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


def _latency(r, table) -> tuple[float, float]:
    """First-start latency (days) of Bob and Chris: first start - first submit, as the
    fairness metrics count it."""
    out = []
    for g in (2, 3):
        mine = table.group == g
        out.append(float(r.start[mine].min() - table.submit[mine].min()) / 86400)
    return out[0], out[1]


def _accounts_file(folder: Path, targets) -> str:
    path = folder / f"accounts-{'-'.join(map(str, targets))}.toml"
    path.write_text("".join(f"[accounts.{g}]\ntarget = {t}\n" for g, t in zip((1, 2, 3), targets, strict=True)))
    return str(path)


def _inside(value: float, band) -> bool:
    return band[0] <= value < band[1] if band[0] == 0.0 else band[0] <= value <= band[1]


def sweep(seeds: int, out: Path) -> dict:
    """Latencies (mean over seeds) of each figure's run over REQUESTS x TARGETS, and
    whether they fall in the figure's bands.  The linear runs do not read targets."""
    from schedbench.engine import replay
    from schedbench.io import machine
    from schedbench.workloads import steffen

    mach = machine.from_spec(steffen.MACHINE)
    folder = out / "sweep-accounts"
    folder.mkdir(parents=True, exist_ok=True)
    files = {t: _accounts_file(folder, t) for t in TARGETS}
    rows = []
    for hours in REQUESTS:
        tables = [steffen.generate(np.random.default_rng(seed), alice_hours=hours[0], bob_hours=hours[1],
                                   chris_hours=hours[2]) for seed in range(1, seeds + 1)]

        def mean_latency(scheduler, weights, tables=tables, **opts):
            runs = [_latency(replay.replay(t, mach, scheduler, "ff", options={
                "priority_weights": WEIGHTS[weights], **opts}), t) for t in tables]
            return tuple(float(np.mean(v)) for v in zip(*runs, strict=True))

        linear = {f: mean_latency("priority", FIGURES[f][1], backfill=False) for f in (1, 2)}
        for targets in TARGETS:
            for standing in (False, True):
                lat = dict(linear)
                for f in (3, 4):
                    lat[f] = mean_latency("sfs", FIGURES[f][1], accounts=files[targets], standing=standing)
                holds = {f: _inside(lat[f][0], FIGURES[f][2]) and _inside(lat[f][1], FIGURES[f][3]) for f in FIGURES}
                rows.append({"hours": hours, "targets": targets, "standing": standing,
                             "latency": {str(f): lat[f] for f in FIGURES}, "holds": {str(f): holds[f] for f in FIGURES}})
    return {"seeds": seeds, "rows": rows}


def sweep_table(result: dict) -> str:
    rows = result["rows"]
    n_targets = len(TARGETS)
    lines = [
        f"## Sweep: where the paper's figures hold (mean over seeds 1-{result['seeds']})",
        "",
        "Bands (days, Bob / Chris): " + "; ".join(
            f"Fig. {f} {FIGURES[f][0]} {FIGURES[f][1]}-dominant: {FIGURES[f][2]} / {FIGURES[f][3]}" for f in FIGURES),
        "",
        "### Per requested times: target settings (of " + str(n_targets) + ") where each figure holds",
        "",
        "| requested h (Alice, Bob, Chris) | Fig. 1 | Fig. 2 | Fig. 3 / standing | Fig. 4 / standing | all four / standing |",
        "|---|---|---|---|---|---|",
    ]
    for hours in REQUESTS:
        mine = [r for r in rows if tuple(r["hours"]) == tuple(hours)]
        plain = [r for r in mine if not r["standing"]]
        held = [r for r in mine if r["standing"]]
        count = lambda rs, f: sum(r["holds"][f] for r in rs)  # noqa: E731
        every = lambda rs: sum(all(r["holds"].values()) for r in rs)  # noqa: E731
        lines.append(f"| {hours[0]}, {hours[1]}, {hours[2]} | {'yes' if plain[0]['holds']['1'] else 'no'} | "
                     f"{'yes' if plain[0]['holds']['2'] else 'no'} | {count(plain, '3')} / {count(held, '3')} | "
                     f"{count(plain, '4')} / {count(held, '4')} | {every(plain)} / {every(held)} |")
    lines += ["", "### Per target occupancies (nodes): requested-time settings (of " + str(len(REQUESTS))
              + ") where each SFS figure holds", "",
              "| targets (Alice, Bob, Chris) | Fig. 3 / standing | Fig. 4 / standing | all four / standing |",
              "|---|---|---|---|"]
    for targets in TARGETS:
        mine = [r for r in rows if tuple(r["targets"]) == tuple(targets)]
        plain = [r for r in mine if not r["standing"]]
        held = [r for r in mine if r["standing"]]
        count = lambda rs, f: sum(r["holds"][f] for r in rs)  # noqa: E731
        every = lambda rs: sum(all(r["holds"].values()) for r in rs)  # noqa: E731
        lines.append(f"| {targets[0]}, {targets[1]}, {targets[2]} | {count(plain, '3')} / {count(held, '3')} | "
                     f"{count(plain, '4')} / {count(held, '4')} | {every(plain)} / {every(held)} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3, help="seeds 1..K of the run fractions (default 3)")
    ap.add_argument("--no-sweep", action="store_true", help="only the main table and charts")
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
        for label, scheduler, weights, backfill, standing in RUNS:
            options = {"priority_weights": WEIGHTS[weights], "backfill": backfill, "accounts": str(ACCOUNTS)}
            if standing is not None:
                options["standing"] = standing
            r = replay.replay(table, mach, scheduler, "ff", options=options)
            slug = (f"{scheduler}{'-standing' if standing else ''}-{weights}-{'bf' if backfill else 'strict'}"
                    f"-seed{seed}")
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
    for label, scheduler, weights, backfill, _ in RUNS:
        b, c = np.array(latency[label]).T
        paper = PAPER.get((scheduler, weights), ("-", "-"))
        if scheduler == "priority" and backfill:
            paper = ("-", "-")  # the paper's linear runs match the no-backfill rows (see above)
        fmt = lambda v: f"{v.mean():.2f} [{v.min():.2f}-{v.max():.2f}]"  # noqa: E731
        lines.append(f"| {label} | {fmt(b)} | {fmt(c)} | {paper[0]} | {paper[1]} |")
    text = "\n".join(lines) + "\n"
    (out / "latency.json").write_text(json.dumps(latency, indent=1) + "\n")
    if not args.no_sweep:
        result = sweep(args.seeds, out)
        (out / "sweep.json").write_text(json.dumps(result, indent=1) + "\n")
        text += "\n" + sweep_table(result)
    (out / "steffen-study.md").write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
