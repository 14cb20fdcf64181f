"""Conservative backfilling with compression's shortcuts against the same replay without
them, job by job, on workloads too deep for the naive oracle.

Compression tries every queued job at every release, and most tries end on a shortcut:
on nodes the failure memo, the freed floor, the try's limits, the per-node bound; on a
pool the prefix maxima and the limit (see ``schedulers/conservative/fit.py``).  Each is
argued exact, and the oracle tests check them, but the naive oracle
(``tests/naive_conservative.py``) needs minutes for a few hundred jobs on nodes once the
queue is deep, where the shortcuts do most of their work.  This script replays each case
twice: as the package runs it, and in a child process with ``fit.EXHAUSTIVE_TRIES`` set,
where every try takes its booking off and searches from now to the booking (on nodes,
every node): the spec's try as it reads.  The child compiles its own
loop into a numba cache of its own (a temporary folder: the constant is frozen into the
compiled code, which the shared cache would otherwise hand back), about a minute an
allocator.

Prints per case the jobs, the digest of each replay's starts, ends, statuses and
allocations (:func:`schedule_hashes._digest`), each one's ``simulate_s``, and ``same`` or
the first job whose start differs; exit 1 when any differs.

Cases: the cases of ``conservative_nodes_speed.py`` (``--case``, repeatable; default
burst-s0-ff, burst-s0-bf, eurora-ff), and with ``--grid`` the Eurora-like generator's
workloads of ``eurora_like_scan.py`` (5,917 jobs; ``--seeds``, ``--loads``,
``--burstiness``, ``--allocators``, each a list); ``--jobs N`` for the first N jobs.  One
child replays every case, so each allocator's loop compiles there once.

Run: ``PYTHONPATH=sched .venv/bin/python bench/conservative_exhaustive.py --case burst-s0-ff``,
or ``... --grid --loads 1.2 1.6 --allocators ff bf``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import conservative_nodes_speed as speed  # noqa: E402
from schedule_hashes import _digest  # noqa: E402

DEFAULT = ["burst-s0-ff", "burst-s0-bf", "eurora-ff"]


def _grid_cases(seeds, loads, burstiness, allocators) -> list[str]:
    """The scan's workloads as case names ``grid/SEED/LOAD/BURSTINESS/ALLOCATOR``."""
    return [f"grid/{s}/{lo}/{b}/{a}" for lo in loads for b in burstiness for s in seeds for a in allocators]


def _load(case: str):
    """(table, machine, allocator, replay keywords) of a named case or a grid case."""
    if not case.startswith("grid/"):
        return speed._load(case)
    _, seed, load, burstiness, allocator = case.split("/")
    return speed.bursty(int(seed), float(load), float(burstiness), allocator)


def _replay(case: str, jobs: int | None):
    from schedbench.engine.replay import replay

    table, mach, allocator, kw = _load(case)
    if jobs is not None:
        table = table.head(jobs)
    return replay(table, mach, "conservative", allocator, **kw)


def _children(cases: list[str], jobs: int | None):
    """Replay ``cases`` with every try exhaustive, in one process and numba cache of its
    own; yields (digest, simulate_s, starts) per case as the child prints them."""
    with tempfile.TemporaryDirectory(prefix="schedbench-exhaustive-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        cmd = [sys.executable, __file__, "--child", *cases] + ([] if jobs is None else ["--jobs", str(jobs)])
        with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True) as child:
            for line in child.stdout:
                yield json.loads(line)
        if child.returncode:
            raise SystemExit(f"conservative_exhaustive: the child failed (exit {child.returncode})")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", action="append", choices=speed.CASES, help="a case (repeatable)")
    p.add_argument("--grid", action="store_true", help="the Eurora-like grid's workloads too")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="the grid's generator seeds")
    p.add_argument("--loads", type=float, nargs="+", default=[1.2, 1.6], help="the grid's offered loads")
    p.add_argument("--burstiness", type=float, nargs="+", default=[1, 3, 8], help="the grid's burstiness values")
    p.add_argument("--allocators", nargs="+", default=["ff", "bf"], help="the grid's allocators")
    p.add_argument("--jobs", type=int, default=None, help="replay only the first N jobs")
    p.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        from schedbench.schedulers.conservative import fit

        fit.EXHAUSTIVE_TRIES = True  # before anything compiles: frozen into this process's loops
        for case in args.child:
            r = _replay(case, args.jobs)
            print(json.dumps({"digest": _digest(r), "simulate_s": r.simulate_s, "start": r.start.tolist()}),
                  flush=True)
        return 0
    cases = list(args.case or ([] if args.grid else DEFAULT))
    if args.grid:
        cases += _grid_cases(args.seeds, args.loads, args.burstiness, args.allocators)
    differ = 0
    for case, x in zip(cases, _children(cases, args.jobs), strict=True):
        r = _replay(case, args.jobs)
        verdict = "same"
        if _digest(r) != x["digest"]:
            differ += 1
            bad = np.flatnonzero(np.asarray(x["start"]) != r.start)
            verdict = (f"differ: first at job index {bad[0]} (start {r.start[bad[0]]} pruned, "
                       f"{x['start'][bad[0]]} exhaustive)" if len(bad) else "differ (allocations only)")
        print(f"{case} jobs={len(r.start)} pruned={_digest(r)} ({r.simulate_s:.3f} s) "
              f"exhaustive={x['digest']} ({x['simulate_s']:.3f} s) {verdict}", flush=True)
    print(f"{len(cases) - differ} of {len(cases)} cases the same")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
