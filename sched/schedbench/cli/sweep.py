"""``schedbench sweep CONFIG.toml -o RESULTS/``: run a grid of replays, resumably."""

from __future__ import annotations

import sys
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser(
        "sweep",
        help="run a benchmark grid (workloads x machines x schedulers x allocators x predictors x seeds)",
        description="Run every configuration of CONFIG.toml not yet finished in RESULTS/ and write "
        "RESULTS/runs.parquet (one row per run) and the hive-partitioned RESULTS/jobs/ and "
        "RESULTS/timeline/ datasets.  Finished runs are never recomputed: rerun the same command "
        "to resume an interrupted sweep.  The config format is described in schedbench.sweep.config.",
    )
    p.add_argument("config", metavar="CONFIG.toml")
    p.add_argument("-o", "--output", required=True, metavar="RESULTS", help="results directory")
    p.add_argument(
        "-j", "--jobs", type=int, metavar="N",
        help="local worker processes (default: the usable cores; 1 runs in this process)",
    )
    p.add_argument(
        "--dask", metavar="ADDRESS",
        help="send the runs to the Dask scheduler at ADDRESS (e.g. tcp://host:8786) instead; "
        "RESULTS must be on a file system the workers share",
    )
    p.add_argument("--retry-failed", action="store_true", help="redo runs recorded as failed")
    p.add_argument("--dry-run", action="store_true",
                   help="list the runs and their state (ok, failed, todo, or impossible: the pair is ruled out "
                   "before its workload is read), run nothing")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar and no closing line")
    p.set_defaults(func=_run)


def _run(args) -> int:
    # here, not at the top: every command would pay for its imports
    from ..sweep import config as sweep_config
    from ..sweep import execute

    if args.jobs is not None and args.jobs < 1:
        from ..errors import UsageError

        raise UsageError("--jobs must be at least 1")
    if args.dask:  # before the config is read and any run prepared
        from ..sweep.executors import check_dask_address

        check_dask_address(args.dask)
    path = Path(args.config)
    runs = sweep_config.load(path)
    execute.check_results_folder(args.output)  # before any run is prepared
    if args.dry_run:
        from .. import registry

        done = execute.finished(args.output)
        for r in runs:
            state = done.get(r["key"], {}).get("status")
            if state is None:  # what rules a pair out before its workload is read (as the run would)
                try:
                    registry.check_pair(r["scheduler"], r["allocator"], options=r["options"])
                    state = "todo"
                except registry.Impossible:
                    state = "impossible"
            print(f"{r['key']}  {state:<10}  {r['workload']}  {r['scheduler']}+{r['allocator']}  "
                  f"{r['predictor']}  seed={r['seed']}  machine={r['machine']}")
        return 0
    counts = execute.sweep(
        runs, args.output, jobs=args.jobs, dask_address=args.dask, retry_failed=args.retry_failed,
        progress=False if args.quiet else None, config_text=path.read_text(),
    )
    if not args.quiet:
        print(
            f"sweep: {counts['total']} runs: {counts['ran']} run now ({counts['failed']} failed), "
            f"{counts['skipped']} already done, {counts['impossible']} skipped (pair impossible on its workload); "
            f"{counts['failed_total']} failed in all "
            f"-> {Path(args.output) / 'runs.parquet'}",
            file=sys.stderr,
        )
    return 1 if counts["failed_total"] else 0
