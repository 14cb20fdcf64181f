"""Benchmark sweeps: replay a grid of workloads x machines x schedulers x allocators x
predictors x seeds, resumably, on local cores or on a Dask cluster.

The config format is described in :mod:`schedbench.sweep.config`, the results layout
and resuming in :mod:`schedbench.sweep.execute`, where runs execute in
:mod:`schedbench.sweep.executors`.  This module gathers their public names, for the
importers of the single module the package once was.
"""

from __future__ import annotations

from .config import (
    DEFAULT_PREDICTORS,
    DEFAULT_SEEDS,
    RESERVED_WORKLOAD_KEYS,
    TOP_KEYS,
    canonical_json,
    expand,
    generator_module,
    generator_options,
    load_config,
    pairs,
    run_key,
)
from .execute import (
    DATASETS,
    PARTITION_KEYS,
    SweepLock,
    execute,
    finished,
    git_revision,
    sweep,
    write_runs_table,
)
from .executors import default_jobs

__all__ = [
    "DATASETS", "DEFAULT_PREDICTORS", "DEFAULT_SEEDS", "PARTITION_KEYS", "RESERVED_WORKLOAD_KEYS", "TOP_KEYS",
    "SweepLock", "canonical_json", "default_jobs", "execute", "expand", "finished", "generator_module",
    "generator_options", "git_revision", "load_config", "pairs", "run_key", "sweep", "write_runs_table",
]
