"""Where a replay's time goes, per job: ``perf record`` over repeated in-process replays,
numba's compiled kernels named through a perf map, reported as nanoseconds per job.

The script runs itself under ``perf record -e cpu-clock`` (a sample every 1/FREQ s of
CPU).  The child loads the log, replays its first 2,000 jobs (kernels compiled or loaded
from numba's cache), writes ``/tmp/perf-PID.map`` with every symbol numba's execution
engine defined (a symbol's size is the distance to the next one: numba keeps no sizes
for kernels loaded from its cache), then replays the whole log ROUNDS times.  The report
lists every symbol with at least 0.3 % of the samples, as ns per job per replay
(samples / FREQ / (ROUNDS x jobs)), with numba's mangled names shortened to
``module.function``.  perf starts with its events off and the child turns them on
through perf's control FIFO once the warm-up is done and the map written, so the
samples are the timed replays' alone: their set-up (job matrix, screening, the digest)
as well as the simulation.  (Sampling the whole child put a fifth of the pool case's
samples in the start: imports, reading the log, loading the kernels.)  The perf map is
only valid for code loaded before it was written.

The child runs with ``OPENBLAS_NUM_THREADS=1``, as the ``schedbench`` command does
(:mod:`schedbench._startup`).  Needs ``perf`` (linux-perf) allowed to sample this process (``kernel.perf_event_paranoid``
at most 2).  The code profiled is whatever ``schedbench`` imports: point ``PYTHONPATH``
at another checkout's ``sched/`` to profile it.

Run: ``.venv/bin/python bench/perf_profile.py [LOG] [-s easy] [-a ff] [--rounds 10]``
(default LOG: the shared HPC2N log), or ``--case burst-bf -s conservative`` for a case of
``conservative_nodes_speed.py`` (its log, machine, site and allocator).
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HPC2N = Path(__file__).resolve().parents[2] / "shared" / "traces" / "swf" / "HPC2N-2002-2.2-cln.swf.gz"
FREQ = 10_000
MIN_SHARE = 0.3


def _write_perf_map() -> int:
    """``/tmp/perf-PID.map`` for every symbol numba's execution engine has defined."""
    from numba.core.registry import cpu_target

    engine = cpu_target.target_context.codegen()._engine
    found = []
    for name in engine._defined_symbols:
        address = engine.get_function_address(name)
        if address:
            found.append((address, name))
    found.sort()
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as f:
        for (address, name), (following, _) in zip(found, [*found[1:], (found[-1][0] + 4096, "")], strict=True):
            f.write(f"{address:x} {min(following - address, 1 << 20):x} {name}\n")
    return len(found)


def _start_sampling() -> None:
    """Tell ``perf record`` (started with its events off, ``-D -1``) to sample from now on,
    through its control FIFO, and wait for its acknowledgement: the start (imports,
    reading the log, the warm-up) stays out of the samples."""
    ctl, ack = os.environ["SCHEDBENCH_PERF_CTL"], os.environ["SCHEDBENCH_PERF_ACK"]
    with open(ctl, "w") as f:
        f.write("enable\n")
    with open(ack) as f:
        f.readline()


def _child(args) -> None:
    from schedbench.engine.replay import replay
    from schedbench.io import load as workload_io

    if args.case:  # one of conservative_nodes_speed.py's cases: its table, machine and site
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from conservative_nodes_speed import _load

        table, machine, args.allocator, extra = _load(args.case)
        meta = extra.pop("meta", None)
    else:
        table, machine, meta, _ = workload_io.load(args.log)
        extra = {}
    replay(table.head(2000), machine, args.scheduler, args.allocator, meta=meta, **extra)
    _write_perf_map()
    # as the command's start-up does (schedbench._startup): the objects numba's compiler
    # and the map's symbol walk left behind go to gc's permanent generation, else each
    # collection during a replay walks them (burst-ff: a quarter of the samples)
    gc.collect()
    gc.freeze()
    _start_sampling()
    simulate = []
    for _ in range(args.rounds):
        simulate.append(replay(table, machine, args.scheduler, args.allocator, meta=meta, **extra).simulate_s)
    print(f"{table.n_jobs} jobs, simulate_s min {min(simulate):.4f} median {sorted(simulate)[len(simulate) // 2]:.4f}")


_MANGLED = re.compile(r"^_ZN((?:\d+[A-Za-z_][A-Za-z0-9_]*)+)")


def short_name(symbol: str) -> str:
    """``_ZN10schedbench4core5steps7_commitB3v53...`` -> ``schedbench.core.steps._commit``."""
    m = _MANGLED.match(symbol)
    if not m:
        return symbol
    parts, text = [], m.group(1)
    while text and text[0].isdigit():
        digits = re.match(r"\d+", text).group(0)
        n = int(digits)
        parts.append(text[len(digits) : len(digits) + n])
        text = text[len(digits) + n :]
    return ".".join(parts)


def report(perf_data: Path, jobs: int, rounds: int) -> str:
    out = subprocess.run(
        ["perf", "report", "-i", str(perf_data), "--no-children", "--sort", "symbol", "--stdio",
         "-F", "overhead,sample,symbol", "--percent-limit", str(MIN_SHARE)],
        capture_output=True, text=True, check=True,
    ).stdout
    rows = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 4 or line.startswith("#") or not fields[0].endswith("%"):
            continue
        share, samples, symbol = float(fields[0][:-1]), int(fields[1]), fields[3]
        rows.append((samples, share, short_name(symbol), fields[2] == "[k]"))
    per_job = 1e9 / FREQ / (rounds * jobs)
    lines = [f"{'ns/job':>8}  {'share':>6}  symbol"]
    for samples, share, name, kernel in sorted(rows, reverse=True):
        lines.append(f"{samples * per_job:8.1f}  {share:5.1f}%  {name}{'  (kernel)' if kernel else ''}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", nargs="?", default=str(HPC2N))
    ap.add_argument("-s", "--scheduler", default=None, help="default: easy, or conservative with --case")
    ap.add_argument("-a", "--allocator", default="ff")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--case", help="a case of conservative_nodes_speed.py (its log, machine, allocator and site) instead of LOG")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.scheduler is None:  # a case is conservative's (its allocator and site are the case's)
        args.scheduler = "conservative" if args.case else "easy"
    if args.child:
        _child(args)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "perf.data"
        ctl, ack = Path(tmp) / "perf.ctl", Path(tmp) / "perf.ack"
        os.mkfifo(ctl)
        os.mkfifo(ack)
        child = subprocess.run(
            ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(FREQ), "-D", "-1", "--control", f"fifo:{ctl},{ack}",
             "-o", str(data), sys.executable, __file__,
             args.log, "-s", args.scheduler, "-a", args.allocator, "--rounds", str(args.rounds), "--child",
             *(["--case", args.case] if args.case else [])],
            capture_output=True, text=True, env={
                **os.environ, "OPENBLAS_NUM_THREADS": "1",  # as the command
                "SCHEDBENCH_PERF_CTL": str(ctl), "SCHEDBENCH_PERF_ACK": str(ack)},
        )
        if child.returncode != 0:
            print(child.stderr.strip(), file=sys.stderr)
            return 1
        print(child.stdout.strip())
        jobs = int(child.stdout.split()[0])
        what = f"case {args.case} (its allocator)" if args.case else f"+{args.allocator}, {args.log}"
        print(f"{args.scheduler} {what}, {args.rounds} replays")
        print(report(data, jobs, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
