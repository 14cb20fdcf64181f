"""Steffen's SFS study workload (§9.2): Alice, Bob and Chris on a 1400-node machine.

Days 1-7 (from time 0): each day at its first second Alice submits twelve 250-node jobs
and Bob six 65-node jobs; on day 7 Chris submits one 750-node job.  Every job runs a
uniformly drawn 70-95 % of its requested time (the paper's "random time between 70% and
95% of the requested system time"), rounded to whole seconds.

The paper gives no requested times; our choices (``--alice-hours`` etc., documented in
``meta``): 12 h for Alice (her daily demand, 36,000 node-hours, is just over the machine's
33,600, so her queue stuffs as the paper's Figure 1 shows), 12 h for Bob and 24 h for
Chris.  Accounts are SWF groups: Alice 1, Bob 2, Chris 3 (users the same).  Jobs ask for
nodes as single units on ``1400x(cores=1)``: a node is one unit, as in the paper's
node-granular scheduler.
"""

from __future__ import annotations

import argparse

import numpy as np

from ..errors import UsageError
from ..io import jobs

MACHINE = "1400x(cores=1)"
ACCOUNTS = {"alice": 1, "bob": 2, "chris": 3}


def generate(rng: np.random.Generator, *, days: int = 7, alice_hours: float = 12.0, bob_hours: float = 12.0,
             chris_hours: float = 24.0, chris_day: int = 7) -> jobs.JobTable:
    """The job table (sorted by submit, then id); ``rng`` draws the run fractions."""
    rows = []  # (submit, nodes, requested s, group)
    for day in range(days):
        t = day * 86400
        rows += [(t, 250, int(alice_hours * 3600), 1)] * 12
        rows += [(t, 65, int(bob_hours * 3600), 2)] * 6
        if day == chris_day - 1:
            rows.append((t, 750, int(chris_hours * 3600), 3))
    submit, nodes, requested, group = (np.array(c, dtype=np.int64) for c in zip(*rows, strict=True))
    run = np.floor(requested * rng.uniform(0.70, 0.95, submit.size)).astype(np.int64)
    return jobs.from_columns(
        job_id=np.arange(1, submit.size + 1), submit=submit, run=run, procs_req=nodes, procs_alloc=nodes,
        time_req=requested, user=group, group=group,
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, required=True, help="random seed (run fractions)")
    parser.add_argument("--alice-hours", type=float, default=12.0, help="Alice's requested time, h (default 12)")
    parser.add_argument("--bob-hours", type=float, default=12.0, help="Bob's requested time, h (default 12)")
    parser.add_argument("--chris-hours", type=float, default=24.0, help="Chris's requested time, h (default 24)")


def from_args(args: argparse.Namespace) -> tuple[jobs.JobTable, dict]:
    for name in ("alice_hours", "bob_hours", "chris_hours"):
        if not getattr(args, name) > 0:
            raise UsageError(f"--{name.replace('_', '-')} must be > 0 hours")
    table = generate(np.random.default_rng(args.seed), alice_hours=args.alice_hours, bob_hours=args.bob_hours,
                     chris_hours=args.chris_hours)
    meta = {
        "machine": MACHINE, "generator": "steffen", "seed": args.seed, "accounts": ACCOUNTS,
        "requested_hours": {"alice": args.alice_hours, "bob": args.bob_hours, "chris": args.chris_hours},
    }
    return table, meta
