"""Hash every schedule the refactors must not change.

For each scheduler x allocator on the four shared SWF logs (first 60,000 jobs, ff and bf)
and on the shared Eurora table (all five allocators), hash the start, end, status, nodes
used and the allocation log of the replay; the Python policies run on 80 jobs of Soner's
workload IV on 64 (8 cores, 2 GPUs) nodes.  Prints one ``label digest`` line each, sorted, so that two runs compare with
``diff``::

    python bench/schedule_hashes.py > before.txt   # on the old code
    python bench/schedule_hashes.py > after.txt    # on the new code
    diff before.txt after.txt

Reads ``../shared/traces``; schedulers whose pair cannot run print their error's class.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[2] / "shared" / "traces"
SWF = ["KTH-SP2-1996-2.1-cln.swf.gz", "SDSC-Par-1996-3.1-cln.swf.gz", "HPC2N-2002-2.2-cln.swf.gz",
       "NASA-iPSC-1993-3.1-cln.swf.gz"]
JITTED = ["fcfs", "sjf", "easy", "easy-sjbf", "prb", "prb-blocking", "ebf-accasim", "conservative", "priority", "sfs",
          "slurm"]
PYTHON = ["backfill", "ipsched", "aucsched"]
ALLOCATORS = ["ff", "bf", "balanced", "weighted", "priority-weighted"]


def _digest(r) -> str:
    h = hashlib.sha256()
    for a in (r.start, r.end, r.status, r.nodes_used):
        h.update(np.ascontiguousarray(a, dtype=np.int64).tobytes())
    # the log in start order, per job (pointers move with the log's growth, rows do not)
    for j in np.argsort(r.alloc_ptr, kind="stable"):
        n = int(r.nodes_used[j])
        if n > 0:
            h.update(np.ascontiguousarray(r.alloc_log[r.alloc_ptr[j]: r.alloc_ptr[j] + n], dtype=np.int64).tobytes())
    return h.hexdigest()[:16]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=60_000, help="jobs of each SWF log")
    p.add_argument("--only", default="", help="comma-separated schedulers")
    args = p.parse_args()
    from schedbench.engine import replay
    from schedbench.io import eurora, machine, swf
    from schedbench.workloads import soner

    only = set(filter(None, args.only.split(",")))
    want = lambda s: not only or s in only  # noqa: E731
    cases = []
    for name in SWF:
        table, header = swf.read(SHARED / "swf" / name)
        table = table.head(args.jobs)
        mach = machine.from_swf_header(header.max_procs, header.max_nodes, int(table.units.max()))
        for s in JITTED:
            for a in ("ff", "bf"):
                cases.append((f"{name.split('-cln')[0]}/{s}+{a}", table, mach, s, a, {}))
    eu = SHARED / "eurora"
    table, meta = eurora.read_instances(eu / "job_instances")
    mach = machine.from_node_file(eu / "system_configs" / "nodes_#64")
    for s in JITTED:
        for a in ALLOCATORS:
            cases.append((f"eurora/{s}+{a}", table, mach, s, a, {"meta": meta}))
    # per-node requests and GPU jobs sharing Machine-L's 1024 nodes (make bench's soner-V)
    mach = machine.from_spec("1024x(cores=8,gpus=2)")
    table = soner.generate("V", 500, mach, np.random.default_rng(2))
    for s in JITTED:
        for a in ("ff", "bf"):
            cases.append((f"sonerV-500/{s}+{a}", table, mach, s, a, {}))
    mach = machine.from_spec("64x(cores=8,gpus=2)")
    table = soner.generate("IV", 80, mach, np.random.default_rng(1))
    for s in PYTHON:
        for a in ("ff", "bf"):
            cases.append((f"sonerIV-80/{s}+{a}", table, mach, s, a, {}))
    for label, table, mach, s, a, kw in cases:
        if not want(s):
            continue
        try:
            r = replay.replay(table, mach, s, a, **kw)
            line = f"{label} {_digest(r)}"
        except Exception as exc:  # noqa: BLE001 -- an impossible pair is part of the record
            line = f"{label} {type(exc).__name__}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
