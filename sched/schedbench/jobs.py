"""The job table: one struct-of-arrays namedtuple shared by readers, generators and the engine.

Every column is a 1-D ``int64`` numpy array of the same length (one entry per job), so the
table can be handed to numba kernels field by field without conversion.  ``-1`` means
"unknown" as in the Standard Workload Format (SWF).

Columns, in order:

* the 18 SWF fields (Feitelson's Standard Workload Format, 1-based field numbers):
  ``job_id`` (1), ``submit`` (2, s), ``wait`` (3, s), ``run`` (4, s), ``procs_alloc`` (5),
  ``cpu_avg`` (6, s), ``mem_used`` (7, KB per processor), ``procs_req`` (8), ``time_req``
  (9, s), ``mem_req`` (10, KB per processor), ``status`` (11), ``user`` (12), ``group``
  (13), ``executable`` (14), ``queue`` (15), ``partition`` (16), ``preceding_job`` (17),
  ``think_time`` (18, s);
* the request the simulator replays: ``units`` identical units, each of ``unit_cores``
  cores, ``unit_gpus`` GPUs, ``unit_mics`` MICs and ``unit_mem`` memory (MiB); when
  ``req_nodes`` > 0 the job fixes its shape: exactly ``req_nodes`` nodes each hosting
  ``units / req_nodes`` units (Slurm's ``-N`` with ``--ntasks-per-node``); ``-1`` leaves
  the spread to the allocator;
* ``estimate``: the user's requested wall time used by the scheduler (s).

For an SWF job (see ``../shared/spec/replay-semantics.md``) ``units`` is the requested
processor count when positive, else the allocated one, each unit is one core, and
``estimate`` is field 9 when positive, else the actual run time.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import polars as pl

SWF_FIELDS: tuple[str, ...] = (
    "job_id",
    "submit",
    "wait",
    "run",
    "procs_alloc",
    "cpu_avg",
    "mem_used",
    "procs_req",
    "time_req",
    "mem_req",
    "status",
    "user",
    "group",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
)
REQUEST_FIELDS: tuple[str, ...] = (
    "units",
    "unit_cores",
    "unit_gpus",
    "unit_mics",
    "unit_mem",
    "req_nodes",
    "estimate",
)


class JobTable(NamedTuple):
    """Struct-of-arrays job table; every field is an ``int64`` array of shape ``(n_jobs,)``."""

    job_id: np.ndarray
    submit: np.ndarray
    wait: np.ndarray
    run: np.ndarray
    procs_alloc: np.ndarray
    cpu_avg: np.ndarray
    mem_used: np.ndarray
    procs_req: np.ndarray
    time_req: np.ndarray
    mem_req: np.ndarray
    status: np.ndarray
    user: np.ndarray
    group: np.ndarray
    executable: np.ndarray
    queue: np.ndarray
    partition: np.ndarray
    preceding_job: np.ndarray
    think_time: np.ndarray
    units: np.ndarray
    unit_cores: np.ndarray
    unit_gpus: np.ndarray
    unit_mics: np.ndarray
    unit_mem: np.ndarray
    req_nodes: np.ndarray
    estimate: np.ndarray

    def __len__(self) -> int:  # type: ignore[override]
        return int(self.job_id.shape[0])

    @property
    def n_jobs(self) -> int:
        return int(self.job_id.shape[0])

    def take(self, index: np.ndarray | slice) -> JobTable:
        """Rows selected by an index array, boolean mask or slice (copies)."""
        return JobTable(*(np.ascontiguousarray(col[index]) for col in self))

    def head(self, n: int) -> JobTable:
        return self.take(slice(0, n))

    def equals(self, other: JobTable) -> bool:
        return all(np.array_equal(a, b) for a, b in zip(self, other, strict=True))

    def to_polars(self) -> pl.DataFrame:
        return pl.DataFrame({name: col for name, col in zip(self._fields, self, strict=True)})


COLUMNS: tuple[str, ...] = JobTable._fields
assert COLUMNS == SWF_FIELDS + REQUEST_FIELDS


def empty(n: int) -> JobTable:
    """A table of ``n`` jobs with every field -1 (unknown)."""
    return JobTable(*(np.full(n, -1, dtype=np.int64) for _ in COLUMNS))


def from_columns(n: int | None = None, **columns) -> JobTable:
    """Build a table from the given columns; the others are -1, except the SWF request
    defaults derived with :func:`derive_swf_request` when ``units``/``estimate`` are absent.
    """
    unknown = set(columns) - set(COLUMNS)
    if unknown:
        raise ValueError(f"unknown job table columns: {sorted(unknown)}")
    if n is None:
        if not columns:
            raise ValueError("give n or at least one column")
        n = len(next(iter(columns.values())))
    cols = {}
    for name in COLUMNS:
        if name in columns:
            arr = np.asarray(columns[name])
            if arr.shape != (n,):
                raise ValueError(f"column {name!r} has shape {arr.shape}, expected ({n},)")
            if arr.dtype.kind == "f":
                arr = np.trunc(arr)
            cols[name] = np.ascontiguousarray(arr, dtype=np.int64)
        else:
            cols[name] = np.full(n, -1, dtype=np.int64)
    table = JobTable(**cols)
    if "job_id" not in columns:
        table.job_id[:] = np.arange(1, n + 1)
    return derive_swf_request(table, keep=set(columns))


def derive_swf_request(table: JobTable, keep: set[str] | frozenset[str] = frozenset()) -> JobTable:
    """Fill the request columns of an SWF table in place (columns named in ``keep`` stay).

    ``units`` = procs_req if > 0 else procs_alloc; one core per unit, no GPUs, MICs or
    memory; free shape; ``estimate`` = time_req if > 0 else run.
    """
    if "units" not in keep:
        np.copyto(table.units, np.where(table.procs_req > 0, table.procs_req, table.procs_alloc))
    if "unit_cores" not in keep:
        table.unit_cores[:] = 1
    for name in ("unit_gpus", "unit_mics", "unit_mem"):
        if name not in keep:
            getattr(table, name)[:] = 0
    if "estimate" not in keep:
        np.copyto(table.estimate, np.where(table.time_req > 0, table.time_req, table.run))
    return table


def from_polars(df: pl.DataFrame) -> JobTable:
    """A job table from a polars DataFrame holding any subset of :data:`COLUMNS`.

    Missing columns are -1 (request columns are derived as for SWF); nulls become -1;
    extra columns are an error so that a misspelt column is never silently ignored.
    """
    extra = [c for c in df.columns if c not in COLUMNS]
    if extra:
        raise ValueError(f"unknown job table columns: {extra}; expected a subset of {list(COLUMNS)}")
    cols = {}
    for name in df.columns:
        series = df.get_column(name)
        if not (series.dtype.is_numeric()):
            raise ValueError(f"column {name!r} must be numeric, not {series.dtype}")
        cols[name] = series.cast(pl.Float64 if series.dtype.is_float() else pl.Int64).fill_null(-1).to_numpy()
    return from_columns(df.height, **cols)


_META_KEY = b"schedbench"


def write_parquet(table: JobTable, path, meta: dict | None = None) -> None:
    """Write a job table as Parquet; ``meta`` (JSON-serialisable: machine spec string,
    queue names and limits, generator parameters, ...) goes in the file's key-value
    metadata under ``schedbench``.  Written to a temporary name, then renamed."""
    import json
    import os
    from pathlib import Path

    import pyarrow.parquet as pq

    path = Path(path)
    arrow = table.to_polars().to_arrow()
    arrow = arrow.replace_schema_metadata({_META_KEY: json.dumps(meta or {}).encode()})
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(arrow, tmp)
    os.replace(tmp, path)


def read_parquet(path) -> tuple[JobTable, dict]:
    """Read a job table written by :func:`write_parquet`, or any Parquet file whose columns
    are a subset of :data:`COLUMNS`; returns ``(table, meta)`` (``meta`` is ``{}`` when
    the file has none)."""
    import json

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    arrow = pq.read_table(path)
    raw = (arrow.schema.metadata or {}).get(_META_KEY)
    meta = json.loads(raw) if raw else {}
    extra = [c for c in arrow.column_names if c not in COLUMNS]
    if extra:
        raise ValueError(f"{path}: unknown job table columns: {extra}; expected a subset of {list(COLUMNS)}")
    columns = {}
    for name in arrow.column_names:
        col = arrow.column(name)
        if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
            raise ValueError(f"{path}: column {name!r} must be numeric, not {col.type}")
        if col.null_count:
            col = pc.fill_null(col, -1)
        # zero-copy for int64 columns without nulls: a big table is not held twice
        columns[name] = col.to_numpy()
    del arrow
    return from_columns(len(next(iter(columns.values()))) if columns else 0, **columns), meta
