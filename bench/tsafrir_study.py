"""Tsafrir, Etsion & Feitelson (IEEE TPDS 2007), "Backfilling using system-generated
predictions rather than user runtime estimates": their Tables 2-3 (mean wait and mean
bounded slowdown of EASY and its variants) on the shared SWF logs.

Schedulers (scheduler, predictor):

* EASY: ``easy`` with the user's estimates (``requested``);
* EASY+: ``easy`` with ``tsafrir`` (the mean of the user's last two jobs, capped by the
  estimate, with prediction correction: see :mod:`schedbench.predictors`);
* EASY++: ``easy-sjbf`` with ``tsafrir`` (shortest predicted job backfilled first);
* EASY+ steps and EASY++ steps: the same with ``tsafrir-steps`` (the step-wise reading of
  the paper's correction);
* PERFECT and PERFECT++: ``easy`` and ``easy-sjbf`` with the real run times (``actual``).

Logs: the shared SWF logs by default, or the LOG arguments, each a file or a name from the
trace catalog (``traces/catalog.toml``; ``schedbench traces fetch NAME`` puts it in the cache),
so the paper's own logs (CTC-SP2, KTH-SP2, SDSC-SP2, SDSC-BLUE) run where they are at hand.

Conventions (stated in the document this writes):

* processors: the job's units as ``schedbench replay`` reads an SWF log (requested
  processors, field 8, else allocated, field 5); the machine: the header's MaxProcs, except
  where the paper sized it otherwise (:data:`PAPER_PROCS`: CTC-SP2 on 512 processors rather
  than its header's 338) or ``--procs NAME=N`` says (a pool of N processors);
  ``--header-procs`` keeps every header's size;
* a job that outlives its request runs its logged time (``on_overrun=run``, the default);
* metrics over the replayed jobs, leaving out the first 1 % of them in order of simulated
  termination (end time, then job index) as the paper leaves out its warm-up: mean wait
  (s) and mean bounded slowdown max(1, (wait + run) / max(run, 10 s)).

The paper's own figures are not printed beside ours: its text could not be retrieved here
(see :mod:`schedbench.predictors`), and numbers recalled from memory are not evidence.

    make study-tsafrir [LOGS="CTC-SP2-1996-3.1-cln ..."]
    python bench/tsafrir_study.py [LOG ...] [--procs NAME=N] [--header-procs] [--jobs N] [-o FILE.md]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LOGS = sorted((ROOT.parent / "shared" / "traces" / "swf").glob("*.swf.gz"))
RUNS = [  # (label, scheduler, predictor)
    ("EASY", "easy", "requested"),
    ("EASY+", "easy", "tsafrir"),
    ("EASY++", "easy-sjbf", "tsafrir"),
    ("EASY+ steps", "easy", "tsafrir-steps"),
    ("EASY++ steps", "easy-sjbf", "tsafrir-steps"),
    ("PERFECT", "easy", "actual"),
    ("PERFECT++", "easy-sjbf", "actual"),
]
TAU = 10  # s, the bounded slowdown's threshold
#: Machine sizes the paper used instead of the log's header: {log name prefix: processors}.
#: It simulates CTC-SP2 on 512 processors where the log's header says 338.
PAPER_PROCS = {"CTC-SP2": 512}
WARM_UP = 0.01  # share of terminated jobs left out, first by termination


def measures(result) -> tuple[float, float, int]:
    """(mean wait s, mean bounded slowdown, jobs counted) of a replay, its first 1 % of
    terminated jobs (by end, then index) left out."""
    done = np.flatnonzero(result.start >= 0)
    order = done[np.lexsort((done, result.end[done]))]
    kept = order[int(len(order) * WARM_UP):]
    wait = result.start[kept] - result.table.submit[kept]
    run = result.end[kept] - result.start[kept]
    bsld = np.maximum(1.0, (wait + run) / np.maximum(run, TAU))
    return float(wait.mean()), float(bsld.mean()), int(kept.size)


def log_name(path: Path) -> str:
    """The name a log goes by in the tables: its file name up to ``-cln`` (or its suffix)."""
    return path.name.split("-cln")[0].removesuffix(".gz").removesuffix(".swf")


def machine_size(name: str, header_procs: int | None, procs: dict[str, int], header_only: bool) -> tuple[int | None, str]:
    """(processors, why) for log ``name``: ``procs``' size for the first prefix of the name
    it lists, else the paper's (:data:`PAPER_PROCS`) unless ``header_only``, else None (the
    header's machine, whose MaxProcs is ``header_procs``)."""
    for table, why in ((procs, "--procs"), ({} if header_only else PAPER_PROCS, "the paper's")):
        for prefix, n in table.items():
            if name.startswith(prefix):
                return n, f"{why}; header {header_procs}" if header_procs else why
    return None, "header"


def parse_procs(items: list[str]) -> dict[str, int]:
    """``NAME=N`` items into {name prefix: processors}; ValueError on a malformed one."""
    out = {}
    for item in items:
        name, _, n = item.partition("=")
        if not name or not n.isdigit() or int(n) < 1:
            raise ValueError(f"--procs wants NAME=N with N a positive whole number, not {item!r}")
        out[name] = int(n)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="*", metavar="LOG",
                    help="SWF files or catalog names (default: every log under ../shared/traces/swf)")
    ap.add_argument("--procs", action="append", default=[], metavar="NAME=N",
                    help="replay the logs whose name starts with NAME on a pool of N processors (repeatable)")
    ap.add_argument("--header-procs", action="store_true",
                    help="size every machine from its header, not as the paper did (CTC-SP2 on 512)")
    ap.add_argument("--jobs", type=int, default=0, help="replay each log's first N jobs (0: all)")
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "studies" / "tsafrir-easy-plus-plus.md")
    args = ap.parse_args(argv)
    try:
        procs = parse_procs(args.procs)
    except ValueError as exc:
        ap.error(str(exc))
    from schedbench.errors import SchedbenchError

    try:
        return _run(args, procs)
    except SchedbenchError as exc:
        print(f"tsafrir_study: {exc}", file=sys.stderr)
        return 1


def _run(args, procs: dict[str, int]) -> int:
    from schedbench.engine import replay
    from schedbench.io import fetch, machine, swf

    paths = [fetch.resolve(text) for text in args.logs] if args.logs else LOGS
    if not paths:
        print("tsafrir_study: no SWF logs under ../shared/traces/swf; name some", file=sys.stderr)
        return 1
    rows = []
    for path in paths:
        table, header = swf.read(path)
        if args.jobs > 0:
            table = table.head(args.jobs)
        name = log_name(path)
        size, why = machine_size(name, header.max_procs, procs, args.header_procs)
        if size is None:
            mach = machine.from_swf_header(header.max_procs, header.max_nodes, int(table.units.max()))
        else:
            mach = machine.from_swf_header(size, None)
        cells = []
        for label, scheduler, predictor in RUNS:
            t0 = time.perf_counter()
            r = replay.replay(table, mach, scheduler, "ff", predictor)
            wait, bsld, counted = measures(r)
            cells.append((wait, bsld))
            print(f"{name:22s} {label:10s} wait {wait:10.0f} s  bsld {bsld:8.2f}  ({counted} jobs, "
                  f"{time.perf_counter() - t0:.1f} s)", flush=True)
        rows.append((name, int(mach.totals[0]), why, table.n_jobs, cells))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(_document(rows, args.jobs))
    print(f"wrote {args.output}")
    return 0


def _table(rows, k: int, fmt: str) -> list[str]:
    head = "| log | processors | jobs | " + " | ".join(label for label, _, _ in RUNS) + " |"
    out = [head, "|" + "---|" * (3 + len(RUNS))]
    for name, procs, why, n, cells in rows:
        size = str(procs) if why == "header" else f"{procs} ({why})"
        out.append(f"| {name} | {size} | {n} | " + " | ".join(format(c[k], fmt) for c in cells) + " |")
    return out


def _document(rows, jobs: int) -> str:
    scope = f"each log's first {jobs:,} jobs" if jobs > 0 else "each whole log"
    lines = [
        "# Tsafrir, Etsion & Feitelson (2007): EASY, EASY+ and EASY++ on SWF logs",
        "",
        "Written by `make study-tsafrir` (`bench/tsafrir_study.py`) over " + scope + ".",
        "The paper's own logs run the same way where they are at hand: `schedbench traces fetch "
        "CTC-SP2-1996-3.1-cln` (and SDSC-SP2-1998-4.2-cln, SDSC-BLUE-2000-4.2-cln), then `make "
        "study-tsafrir LOGS=\"CTC-SP2-1996-3.1-cln KTH-SP2-1996-2.1-cln ...\"` (files or catalog names; "
        "the tables go to bench-results/tsafrir-study.md).",
        "",
        "| label | scheduler | predictor |",
        "|---|---|---|",
        *[f"| {label} | `{s}` | `{p}` |" for label, s, p in RUNS],
        "",
        "Conventions: processors are the job's units as `schedbench replay` reads the SWF log "
        "(requested processors, SWF field 8, else allocated, field 5); the machine is the header's MaxProcs unless "
        "the processors column says why not (the paper runs CTC-SP2 on 512 processors, not its header's 338, and "
        "so does this study unless told `--header-procs`; `--procs NAME=N` sets a pool of N); a "
        "job that outlives its request runs its logged time; allocator first fit (a pool: it does "
        "not matter). The first 1 % of replayed jobs in order of simulated termination is left out "
        f"(warm-up); bounded slowdown is max(1, (wait + run) / max(run, {TAU} s)).",
        "",
        "`tsafrir` is `user-mean2` (mean of the user's last two ended jobs, capped by the "
        "estimate) with prediction correction: a running job still running at its predicted end "
        "is then believed to end at its start plus its estimate. The rule follows the authors' "
        "group's simulator (pyss); the paper's own text on correction could not be retrieved, "
        "so neither could its figures: the paper's columns are left for whoever has it. "
        "`tsafrir-steps` is the other reading (a later fork's corrector named after the paper): "
        "the prediction raised by 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 5 h, 10 h, 20 h, 50 h, "
        "100 h over the original as the job outlives it, at most to the estimate.",
        "",
        "NASA-iPSC and SDSC-Par have no user estimates: there `requested` is the run time, so "
        "EASY is PERFECT, and `tsafrir`'s cap (its correction target) is the queue's longest run.",
        "",
        "## Mean wait (s) (Table 2)",
        "",
        *_table(rows, 0, ",.0f"),
        "",
        "## Mean bounded slowdown (Table 3)",
        "",
        *_table(rows, 1, ".2f"),
        "",
        "## The two readings of the correction against EASY",
        "",
        "The paper's abstract claims significant improvements over EASY. Change against EASY "
        "(negative: better), wait / bounded slowdown:",
        "",
        *_readings(rows),
        "",
    ]
    return "\n".join(lines)


def _readings(rows) -> list[str]:
    """One line per log: each correction's EASY+ and EASY++ against EASY, in %."""
    col = {label: i for i, (label, _, _) in enumerate(RUNS)}
    out = []
    for name, _, _, _, cells in rows:
        base = cells[col["EASY"]]
        parts = []
        for label in ("EASY+", "EASY++", "EASY+ steps", "EASY++ steps"):
            c = cells[col[label]]
            parts.append(f"{label} {100 * (c[0] / base[0] - 1):+.0f} % / {100 * (c[1] / base[1] - 1):+.0f} %"
                         if base[0] > 0 else f"{label} -")
        out.append(f"- {name}: " + "; ".join(parts) + ".")
    return out


if __name__ == "__main__":
    sys.exit(main())
