"""``schedbench warm``: compile the replay loops of some scheduler x allocator x mode, or of a
sweep config's runs, ahead of time and in parallel (``make setup`` runs it)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .. import registry
from ..errors import UsageError

_DEFAULT_SCHEDULER, _DEFAULT_ALLOCATOR, _DEFAULT_MODE = "easy", "ff", "pool"  # `schedbench replay LOG.swf`'s


def register(sub) -> None:
    p = sub.add_parser(
        "warm",
        help="compile the kernels of scheduler x allocator x mode (or of a sweep config) ahead, on every core",
        description="Compile the replay loops that later commands need, in parallel worker processes, into "
        "numba's cache (the first replay of a pair otherwise compiles it there and then: seconds to a minute "
        "each).  -s, -a and --mode give a grid (default: easy, ff, pool: what `schedbench replay LOG.swf` "
        "replays); --config adds every loop a sweep config's runs need.  Modes: pool (an SWF log: jobs are "
        "processor counts) and nodes (CPU, GPU and MIC jobs on typed nodes, as the generated workloads of "
        "make bench).  Loops already in the cache are loaded, not compiled again.",
    )
    p.add_argument("--scheduler", "-s", action="append", metavar="NAME",
                   help="a scheduler, or all (repeatable; default easy)")
    p.add_argument("--allocator", "-a", action="append", metavar="NAME",
                   help="an allocator, or all (repeatable; default ff)")
    p.add_argument("--mode", action="append", choices=("pool", "nodes"),
                   help="the workload shape (repeatable; default pool)")
    p.add_argument("--predictor", "-p", default="requested", choices=registry.predictor_names(), metavar="NAME",
                   help="the predictor of the grid's runs (default %(default)s)")
    p.add_argument("--config", action="append", metavar="CONFIG.toml", default=[],
                   help="also every loop of this sweep config's runs (repeatable)")
    p.add_argument("-j", "--jobs", type=int, metavar="N",
                   help="worker processes (default: the usable cores; 1 compiles in this process)")
    p.add_argument("--dry-run", action="store_true", help="list what would be compiled, compile nothing")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines and no closing line")
    p.set_defaults(func=_run)


def _names(given: list[str] | None, default: str, known: list[str], what: str) -> list[str]:
    names = given or [default]
    if "all" in names:
        return known
    for name in names:
        if name not in known:
            raise UsageError(f"unknown {what} {name!r}: choose from all, {', '.join(known)}")
    return list(dict.fromkeys(names))


def plan(args) -> list[dict]:
    """The tasks of the command line (:mod:`schedbench.sweep.warm`): the grid, when asked
    for or when no config is given, then each config's."""
    from ..sweep import config as sweep_config
    from ..sweep import warm

    tasks = []
    if args.scheduler or args.allocator or args.mode or not args.config:
        schedulers = _names(args.scheduler, _DEFAULT_SCHEDULER, registry.scheduler_names(), "scheduler")
        allocators = _names(args.allocator, _DEFAULT_ALLOCATOR, registry.allocator_names(), "allocator")
        tasks += warm.mode_tasks(schedulers, allocators, args.mode or [_DEFAULT_MODE], args.predictor)
    for path in map(Path, args.config):
        tasks += warm.run_tasks(sweep_config.load(path))
    return tasks


def _run(args) -> int:
    from .._jit import cache_root
    from ..sweep import warm
    from ..sweep.executors import default_jobs

    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    tasks = plan(args)
    if args.dry_run:
        for task in tasks:
            print(warm.label(task))
        return 0
    jobs = min(args.jobs or default_jobs(), max(len(tasks), 1))
    if not args.quiet:
        print(f"schedbench: compiling {len(tasks)} replay loop{'s' * (len(tasks) != 1)} on {jobs} "
              f"worker{'s' * (jobs != 1)} into {cache_root()} (loops already there are loaded) ...",
              file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    results = warm.compile_tasks(tasks, jobs, progress=not args.quiet)
    failed = [r for r in results if r["error"]]
    for r in failed:
        print(f"schedbench: error: {warm.describe(r)}", file=sys.stderr)
    if not args.quiet:
        compiled = sum(r["compiled_s"] > 0 for r in results)
        print(f"schedbench: warm: {len(results) - len(failed)} of {len(tasks)} ready in "
              f"{time.perf_counter() - t0:.0f} s ({compiled} compiled, {len(results) - compiled - len(failed)} "
              f"from the cache{f', {len(failed)} failed' if failed else ''})", file=sys.stderr)
    return 1 if failed else 0
