"""Conservative on nodes with compression's pruning against the same replay without it,
job by job, on workloads too deep for the naive oracle.

Compression tries every queued job at every release, and on nodes most tries end on a
shortcut (the failure memo, the freed floor, the try's limits, the per-node bound; see
``schedulers/conservative/fit.py``).  Each is argued exact, and the oracle tests check
them on small cases, but the naive oracle (``tests/naive_conservative.py``) needs minutes
for a few hundred jobs once the queue is deep, where the shortcuts do most of their work.
This script replays each case twice: as the package runs it, and in a child process with
``fit.EXHAUSTIVE_TRIES`` set, where every try takes its booking off and searches every
node from now to the booking (the spec's try as it reads).  The child compiles its own
loop into a numba cache of its own (a temporary folder: the constant is frozen into the
compiled code, which the shared cache would otherwise hand back), about a minute an
allocator.

Prints per case the jobs, the digest of each replay's starts, ends, statuses and
allocations (:func:`schedule_hashes._digest`), each one's ``simulate_s``, and ``same`` or
the first job whose start differs; exit 1 when any differs.

Cases: the node cases of ``conservative_nodes_speed.py`` (``--case``, repeatable; default
burst-s0-ff, burst-s0-bf, eurora-ff), ``--jobs N`` for the first N jobs.

Run: ``PYTHONPATH=sched .venv/bin/python bench/conservative_exhaustive.py --case burst-s0-ff``.
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

NODE_CASES = [c for c in speed.CASES if c.startswith(("eurora", "burst"))]
DEFAULT = ["burst-s0-ff", "burst-s0-bf", "eurora-ff"]


def _replay(case: str, jobs: int | None):
    from schedbench.engine.replay import replay

    table, mach, allocator, kw = speed._load(case)
    if jobs is not None:
        table = table.head(jobs)
    return replay(table, mach, "conservative", allocator, **kw)


def _child(case: str, jobs: int | None) -> dict:
    """Replay ``case`` with every try exhaustive, in a process and numba cache of its own."""
    with tempfile.TemporaryDirectory(prefix="schedbench-exhaustive-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        cmd = [sys.executable, __file__, "--child", "--case", case] + ([] if jobs is None else ["--jobs", str(jobs)])
        out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", action="append", choices=NODE_CASES, help="a node case (repeatable)")
    p.add_argument("--jobs", type=int, default=None, help="replay only the first N jobs")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    cases = args.case or DEFAULT
    if args.child:
        from schedbench.schedulers.conservative import fit

        fit.EXHAUSTIVE_TRIES = True  # before anything compiles: frozen into this process's loop
        r = _replay(cases[0], args.jobs)
        print(json.dumps({"digest": _digest(r), "simulate_s": r.simulate_s, "start": r.start.tolist()}))
        return 0
    differ = False
    for case in cases:
        r = _replay(case, args.jobs)
        x = _child(case, args.jobs)
        same = _digest(r) == x["digest"]
        verdict = "same"
        if not same:
            differ = True
            bad = np.flatnonzero(np.asarray(x["start"]) != r.start)
            verdict = (f"differ: first at job index {bad[0]} (start {r.start[bad[0]]} pruned, "
                       f"{x['start'][bad[0]]} exhaustive)" if len(bad) else "differ (allocations only)")
        print(f"{case} jobs={len(r.start)} pruned={_digest(r)} ({r.simulate_s:.3f} s) "
              f"exhaustive={x['digest']} ({x['simulate_s']:.3f} s) {verdict}", flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
