"""Linear job chains beside a stuffed queue: the workload of Steffen's §6.2 claim that
SFS promotes linear job chains.

Two accounts (SWF groups, users the same) on ``NODESx(cores=1)`` (a node is one unit):

* **the chains** (group 2): ``chains`` independent chains of ``length`` jobs each, every
  job ``chain_nodes`` nodes for ``chain_hours`` requested; the first job of every chain
  is submitted at ``chain_start``, and each later job names the one before it as its
  preceding job (SWF field 17) with ``think`` seconds of think time (field 18).  Its
  logged submit is where it would arrive had every job of its chain started at once
  (the chain's start plus the runs and think times before it), so that a replay without
  dependencies sees the same stream;
* **the background** (group 1): ``background`` jobs of ``background_nodes`` nodes for
  ``background_hours`` requested, one every ``background_every`` seconds from 0: by
  default twice the work the machine can do (a 50-node, 4 h job every 5 minutes on 1000
  nodes), so that a queue of older background work waits whenever a chain job ends.

Every job runs a uniformly drawn 70-95 % of its requested time (as Steffen's §9.2
workload, :mod:`schedbench.workloads.steffen`), rounded down to whole seconds.
Replay it with ``--dependencies on`` for the chains to be chains.
"""

from __future__ import annotations

import argparse

import numpy as np

from ..errors import UsageError
from ..io import jobs

ACCOUNTS = {"background": 1, "chains": 2}


def generate(rng: np.random.Generator, *, chains: int = 4, length: int = 10, chain_nodes: int = 50,
             chain_hours: float = 4.0, think: int = 0, chain_start: int = 3600, background: int = 400,
             background_nodes: int = 50, background_hours: float = 4.0, background_every: int = 300) -> jobs.JobTable:
    """The job table, sorted by (submit, id): background jobs first (ids 1..), then the
    chains' jobs, chain by chain; ``rng`` draws the run fractions (background first)."""
    bg_req = int(background_hours * 3600)
    ch_req = int(chain_hours * 3600)
    bg_run = np.floor(bg_req * rng.uniform(0.70, 0.95, background)).astype(np.int64)
    ch_run = np.floor(ch_req * rng.uniform(0.70, 0.95, (chains, length))).astype(np.int64)
    # a chain job's logged submit: the chain's start plus the runs and think times before it
    before = np.cumsum(ch_run, axis=1) - ch_run + think * np.arange(length)
    ch_submit = chain_start + before
    ch_id = background + 1 + np.arange(chains * length).reshape(chains, length)
    preceding = np.where(np.arange(length) > 0, np.roll(ch_id, 1, axis=1), -1)
    n = background + chains * length
    submit = np.concatenate([background_every * np.arange(background, dtype=np.int64), ch_submit.ravel()])
    job_id = np.concatenate([np.arange(1, background + 1), ch_id.ravel()])
    order = np.lexsort((job_id, submit))
    group = np.concatenate([np.full(background, ACCOUNTS["background"]), np.full(chains * length, ACCOUNTS["chains"])])
    cols = dict(
        job_id=job_id, submit=submit, run=np.concatenate([bg_run, ch_run.ravel()]),
        procs_req=np.concatenate([np.full(background, background_nodes), np.full(chains * length, chain_nodes)]),
        time_req=np.concatenate([np.full(background, bg_req), np.full(chains * length, ch_req)]),
        user=group, group=group,
        preceding_job=np.concatenate([np.full(background, -1), preceding.ravel()]),
        think_time=np.concatenate([np.full(background, -1), np.where(preceding.ravel() > 0, think, -1)]),
    )
    cols["procs_alloc"] = cols["procs_req"]
    return jobs.from_columns(n, **{k: np.asarray(v)[order] for k, v in cols.items()})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, required=True, help="random seed (run fractions)")
    parser.add_argument("--nodes", type=int, default=1000, help="machine nodes (default 1000)")
    parser.add_argument("--chains", type=int, default=4, help="linear chains (default 4)")
    parser.add_argument("--length", type=int, default=10, help="jobs per chain (default 10)")
    parser.add_argument("--chain-nodes", type=int, default=50, help="nodes of a chain job (default 50)")
    parser.add_argument("--chain-hours", type=float, default=4.0, help="requested time of a chain job, h (default 4)")
    parser.add_argument("--think", type=int, default=0, help="think time between two jobs of a chain, s (default 0)")
    parser.add_argument("--chain-start", type=int, default=3600, help="submit time of every chain's first job, s "
                        "(default 3600: after the background)")
    parser.add_argument("--background", type=int, default=400, help="background jobs (default 400)")
    parser.add_argument("--background-every", type=int, default=300,
                        help="s between two background submissions, from 0 (default 300)")
    parser.add_argument("--background-nodes", type=int, default=50, help="nodes of a background job (default 50)")
    parser.add_argument("--background-hours", type=float, default=4.0,
                        help="requested time of a background job, h (default 4)")


def from_args(args: argparse.Namespace) -> tuple[jobs.JobTable, dict]:
    for name in ("nodes", "chains", "length", "chain_nodes", "background_nodes"):
        if getattr(args, name) <= 0:
            raise UsageError(f"--{name.replace('_', '-')} must be > 0")
    for name in ("chain_hours", "background_hours"):
        if not getattr(args, name) > 0:
            raise UsageError(f"--{name.replace('_', '-')} must be > 0 hours")
    if min(args.background, args.background_every, args.think, args.chain_start) < 0:
        raise UsageError("--background, --background-every, --think and --chain-start must be >= 0")
    if max(args.chain_nodes, args.background_nodes if args.background else 0) > args.nodes:
        raise UsageError(f"a job of more than the machine's {args.nodes} nodes would never run")
    keys = ("chains", "length", "chain_nodes", "chain_hours", "think", "chain_start", "background",
            "background_nodes", "background_hours", "background_every")
    table = generate(np.random.default_rng(args.seed), **{k: getattr(args, k) for k in keys})
    meta = {"machine": f"{args.nodes}x(cores=1)", "generator": "chains", "seed": args.seed, "accounts": ACCOUNTS,
            **{k: getattr(args, k) for k in keys}}
    return table, meta
