"""``schedbench workload KIND ... -o FILE.parquet``: generate a synthetic workload."""

from __future__ import annotations

import importlib
import sys

from ..errors import UsageError
from ..io import jobs
from ..workloads import GENERATORS


def register(sub) -> None:
    parser = sub.add_parser("workload", help="generate a synthetic workload as a Parquet job table")
    kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
    for name, module_name in GENERATORS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        p = kinds.add_parser(name, help=(module.__doc__ or name).strip().splitlines()[0])
        module.add_arguments(p)
        p.add_argument("-o", "--output", required=True, help="Parquet file to write")
        p.set_defaults(func=_run, generator=module)


def _run(args) -> int:
    if getattr(args, "seed", None) is not None and args.seed < 0:  # numpy's generators refuse it, mid-way
        raise UsageError(f"--seed must be >= 0, not {args.seed}")
    table, meta = args.generator.from_args(args)
    jobs.write_parquet(table, args.output, meta)
    print(f"wrote {table.n_jobs} jobs to {args.output} (machine {meta.get('machine', '?')})", file=sys.stderr)
    return 0
