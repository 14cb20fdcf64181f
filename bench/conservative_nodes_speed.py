"""Conservative backfilling on nodes, timed and hashed case by case (issue 27 item 4,
issue 31's maintenance case), for interleaved old/new comparisons.

Cases (``--case``, repeatable; default all):

* ``eurora-ff``, ``eurora-bf``, ``eurora-balanced``: the shared Eurora table (4,585 jobs,
  64 CPU/GPU/MIC nodes), whole.
* ``burst-ff``, ``burst-bf``: an Eurora-like workload with long bursts, the size of the
  5,917-job Eurora log issue 27 names (which we do not have): ``schedbench workload
  eurora-like --jobs 5917 --seed 1 --load 1.2 --burstiness 3``, generated in-process.
* ``burst8-ff``, ``burst8-bf``: the same with ``--burstiness 8``: longer bursts, a deeper
  queue during them (about ten times burst-ff's time).
* ``burst-s0-ff``, ``burst-s0-bf``, ``burst-s2-ff``, ``burst-s2-bf``: burst-ff/bf's
  parameters with seeds 0 and 2.  Seed 1 is among the cheapest of the generator's
  workloads at these parameters: seeds 0 and 2 take about four times as long.
* ``hpc2n-weekly``: the whole HPC2N log (202,871 jobs), first-fit, a weekly two-hour
  maintenance window on nodes 0-7 (a site that binds nodes makes conservative plan on
  nodes even for a pool log).
* ``hpc2n-pool``: the whole HPC2N log, first-fit, no site: conservative in pool mode,
  the reference the node cases compare with (issue 27's pool goal).
* ``kth-one`` / ``kth-none``: the whole KTH-SP2 log (28,476 jobs; the shared log closest
  to CTC-SP2: an IBM SP2 with one processor a node and requested times), first-fit, with
  ONE maintenance window (nodes 0-15, two hours, 60 days in) and without any site.
* ``kth-all``: the same log with that window on every node (a whole-machine maintenance):
  windows alike on every node bind no node, so the plan stays on the pool.
* ``hpc2n-weekly-all``: HPC2N's first 80,000 jobs under the ``hpc2n-weekly`` window on
  every node (a pool plan), with seven jobs that ask for more than the week's gap: their
  fits once walked every weekly window to the end of the expanded ones (45 s of
  ``simulate_s``, 0.38 s with those seven jobs' requests shortened).
* ``hpc2n-deep``: a deep queue on a pool (issue 31's RICC replay, which we do not have,
  stopped at 56 % after 52 minutes): HPC2N's first 20,000 jobs with every submit time
  halved (twice the arrival rate), first-fit, no site; the mean wait is about 150 hours.

Each case replays once untimed (compiles or loads the kernels, and warms the caches),
then ``--rounds`` times; it prints one line: case, jobs, the CPU seconds of each timed
replay (``time.process_time``, this process only), their ``simulate_s``, and the digest
of the last replay's starts, ends, statuses and allocations
(:func:`schedule_hashes._digest`), so that two checkouts compare on both speed and
schedule.  The code timed is whatever ``schedbench`` imports: run it with ``PYTHONPATH``
at each checkout's ``sched/`` in turn to interleave.

Run: ``PYTHONPATH=$PWD/sched .venv/bin/python bench/conservative_nodes_speed.py --case
eurora-ff --rounds 3``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from schedule_hashes import _digest  # noqa: E402

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces"
WEEKLY = '[[maintenance]]\nnodes = "0-7"\nweekly = "Tue 06:00-08:00"\n'
ONE = '[[maintenance]]\nnodes = "0-15"\nfrom = "60d"\nto = "60d2h"\n'
ALL = '[[maintenance]]\nnodes = "all"\nfrom = "60d"\nto = "60d2h"\n'
CASES = ["eurora-ff", "eurora-bf", "eurora-balanced", "burst-ff", "burst-bf", "burst8-ff", "burst8-bf", "burst-s0-ff",
         "burst-s0-bf", "burst-s2-ff", "burst-s2-bf", "hpc2n-weekly", "hpc2n-pool", "kth-one",
         "kth-all", "kth-none", "hpc2n-deep", "hpc2n-weekly-all"]
DEEP_JOBS = 20_000
BURST_JOBS = 5917
# the bursty Eurora-like cases' workloads (load 1.2, BURST_JOBS jobs): (seed, burstiness)
BURSTS = {"burst": (1, 3.0), "burst8": (1, 8.0), "burst-s0": (0, 3.0), "burst-s2": (2, 3.0)}


def deep_queue(table, spacing: float):
    """The first DEEP_JOBS jobs of ``table`` with every submit time multiplied by
    ``spacing`` (truncated to whole seconds): below 1, the same jobs arrive faster and the
    queue deepens (HPC2N at 0.5: a mean wait of about 150 hours)."""
    import polars as pl

    from schedbench.io import jobs

    df = table.head(DEEP_JOBS).to_polars()
    return jobs.from_polars(df.with_columns((pl.col("submit") * spacing).cast(pl.Int64)))


def bursty(seed: int, load: float, burstiness: float, allocator: str):
    """(table, machine, allocator, replay keywords) of an Eurora-like workload of BURST_JOBS
    jobs (the size of the Eurora log issue 27 names) and the generator's machine."""
    import numpy as np

    from schedbench.io import machine
    from schedbench.workloads import eurora_like

    table, meta = eurora_like.generate(BURST_JOBS, np.random.default_rng(seed), load=load, burstiness=burstiness)
    return table, machine.from_spec(meta["machine"]), allocator, {"meta": meta}


def _load(case: str):
    """(table, machine, allocator, keyword arguments of replay) of one case."""
    from schedbench.io import eurora, machine, swf
    from schedbench.plan import site

    workload, _, allocator = case.rpartition("-")
    if workload in BURSTS:
        seed, burstiness = BURSTS[workload]
        return bursty(seed, 1.2, burstiness, allocator)
    if case.startswith("eurora-"):
        table, meta = eurora.read_instances(TRACES / "eurora" / "job_instances")
        mach = machine.from_node_file(TRACES / "eurora" / "system_configs" / "nodes_#64")
        return table, mach, case.split("-", 1)[1], {"meta": meta}
    log = {"hpc2n": "HPC2N-2002-2.2-cln.swf.gz", "kth": "KTH-SP2-1996-2.1-cln.swf.gz"}[case.split("-")[0]]
    table, header = swf.read(TRACES / "swf" / log)
    mach = machine.from_swf_header(header.max_procs, header.max_nodes, int(table.units.max()))
    if case == "hpc2n-deep":
        return deep_queue(table, 0.5), mach, "ff", {}
    if case == "hpc2n-weekly-all":
        return table.head(80_000), mach, "ff", {"site": site.parse(WEEKLY.replace('"0-7"', '"all"'))}
    text = {"hpc2n-weekly": WEEKLY, "hpc2n-pool": None, "kth-one": ONE, "kth-all": ALL, "kth-none": None}[case]
    return table, mach, "ff", ({"site": site.parse(text)} if text else {})


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", action="append", choices=CASES, help="a case (repeatable; default all)")
    p.add_argument("--rounds", type=int, default=3, help="timed replays per case")
    args = p.parse_args()
    from schedbench.engine.replay import replay

    for case in args.case or CASES:
        table, mach, allocator, kw = _load(case)
        replay(table, mach, "conservative", allocator, **kw)
        cpu, sim = [], []
        for _ in range(args.rounds):
            c0 = time.process_time()
            r = replay(table, mach, "conservative", allocator, **kw)
            cpu.append(time.process_time() - c0)
            sim.append(r.simulate_s)
        print(f"{case} jobs={table.n_jobs} cpu_s={' '.join(f'{c:.3f}' for c in cpu)} "
              f"simulate_s={' '.join(f'{s:.3f}' for s in sim)} digest={_digest(r)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
