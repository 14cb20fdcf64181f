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
* ``estimate``: the user's requested wall time used by the scheduler (s);
* ``contiguous``: 1 when the job asks for one block of consecutive node indices (Slurm's
  ``--contiguous``; only AUCSCHED honours it, placing such a job with its type A or B
  bids), otherwise 0 or -1 (no constraint);
* ``constraint``: index into ``meta["constraints"]`` (a list of node-feature expressions in
  Slurm's ``--constraint`` syntax, ``a&b``, ``a|b``, ``[a|b]``; a typed GPU request adds the
  term ``gpu:TYPE``), or -1 when the job asks for no feature.

Slurm logs (:mod:`schedbench.io.sacct`) use the SWF columns with these meanings: ``partition``
is a code of ``meta["partitions"]`` ({name: code}; -1: the cluster's default partition),
``queue`` a code of ``meta["qos"]``, ``group`` a code of ``meta["accounts"]`` (Slurm's fair-share
unit is the account), ``user`` a code of ``meta["users"]`` (or the UID); ``wait`` is the
logged Start - Submit, so the log's own start is ``submit + wait`` when ``wait >= 0``.

For an SWF job (see ``docs/reference/replay-contract.md`` §1) ``units`` is the requested
processor count when positive, else the allocated one, each unit is one core, and
``estimate`` is field 9 when positive, else the actual run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..declarations import MAX_INT

if TYPE_CHECKING:
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
    "contiguous",
    "constraint",
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
    contiguous: np.ndarray
    constraint: np.ndarray

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
        import polars as pl

        return pl.DataFrame({name: col for name, col in zip(self._fields, self, strict=True)})


# SWF status (field 11) of a job the log says never ran (Slurm: cancelled while pending, or
# pending or running when the history was dumped): the set-up leaves it out as
# ``never_started``.  Not an SWF code (those are -1 .. 5).
LOG_NEVER_STARTED = 6

COLUMNS: tuple[str, ...] = JobTable._fields
assert COLUMNS == SWF_FIELDS + REQUEST_FIELDS


def digest(table: JobTable) -> str:
    """SHA-256 (hex) of the table's contents: every column's name and little-endian int64
    values, in column order.  Equal tables give equal digests on any machine."""
    import hashlib

    h = hashlib.sha256()
    for name, col in zip(COLUMNS, table, strict=True):
        h.update(name.encode())
        h.update(np.ascontiguousarray(col, dtype="<i8").tobytes())
    return h.hexdigest()


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


def core_gpu_table(
    submit, run, units, unit_cores, unit_gpus, req_nodes, executable, estimate_factor: float = 1.0
) -> JobTable:
    """A table of synthetic core/GPU jobs (no MICs or memory): the estimate is the run
    time times ``estimate_factor`` rounded up; procs_req = units x cores per unit;
    ``executable`` labels the job's type (its class in the generator)."""
    estimate = np.ceil(np.asarray(run) * estimate_factor).astype(np.int64)
    n = estimate.shape[0]
    units = np.asarray(units, dtype=np.int64)
    unit_cores = np.asarray(unit_cores, dtype=np.int64)
    return from_columns(
        n,
        submit=submit,
        run=run,
        procs_req=units * unit_cores,
        time_req=estimate,
        executable=executable,
        units=units,
        unit_cores=unit_cores,
        unit_gpus=unit_gpus,
        unit_mics=np.zeros(n, dtype=np.int64),
        unit_mem=np.zeros(n, dtype=np.int64),
        req_nodes=req_nodes,
        estimate=estimate,
    )


def derive_swf_request(table: JobTable, keep: set[str] | frozenset[str] = frozenset()) -> JobTable:
    """Fill the request columns of an SWF table in place (columns named in ``keep`` stay).

    ``units`` = procs_req if > 0 else procs_alloc; one core per unit, no GPUs, MICs or
    memory; free shape; ``estimate`` = time_req if > 0 else run; not contiguous.
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
    if "contiguous" not in keep:
        table.contiguous[:] = 0
    if "constraint" not in keep:
        table.constraint[:] = -1
    return table


def from_polars(df: pl.DataFrame) -> JobTable:
    """A job table from a polars DataFrame holding any subset of :data:`COLUMNS`.

    Missing columns are -1 (request columns are derived as for SWF); nulls become -1;
    extra columns are an error so that a misspelt column is never silently ignored.
    """
    import polars as pl

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
    metadata under ``schedbench``.  Written to a temporary name, then renamed: a failed or
    interrupted write leaves neither a half file nor the temporary one.  An error opening
    it is an :class:`OSError` naming ``path`` (a folder: :class:`IsADirectoryError`)."""
    import errno
    import json
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.parquet as pq

    from .aside import written_aside

    path = Path(path)
    if path.is_dir():  # else the table was written beside it and the rename onto it failed
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", str(path))
    arrow = pa.table(
        dict(zip(table._fields, table, strict=True)),
        metadata={_META_KEY: json.dumps(meta or {}).encode()},
    )
    with written_aside(path) as tmp:
        try:
            sink = open(tmp, "wb")  # Python's error, not pyarrow's "Failed to open local file"
        except OSError as exc:  # named as given, not by the hidden temporary name
            raise type(exc)(exc.errno, exc.strerror, str(path)) from None
        with sink:
            pq.write_table(arrow, sink)


def duplicate_rows(ids: np.ndarray) -> tuple[int, int] | None:
    """(a, b), a < b: two rows of ``ids`` (int64 (n,)) holding the same value, the
    smallest value repeated; None when every value differs.  Sorts: callers skip it when
    the ids increase, as real logs and the tables made here list them."""
    by_id = np.argsort(ids, kind="stable")
    same = np.flatnonzero(ids[by_id][1:] == ids[by_id][:-1])
    if not same.size:
        return None
    a, b = sorted(int(r) for r in by_id[same[0] : same[0] + 2])
    return a, b


def read_parquet(path) -> tuple[JobTable, dict]:
    """Read a job table written by :func:`write_parquet`, or any Parquet file whose columns
    are a subset of :data:`COLUMNS`; returns ``(table, meta)`` (``meta`` is ``{}`` when
    the file has none)."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..errors import DataError

    try:
        pf = pq.ParquetFile(path)
        schema = pf.schema_arrow
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"{path}: not a readable Parquet file ({_first_line(exc)})") from None
    raw = (schema.metadata or {}).get(_META_KEY)
    try:
        meta = json.loads(raw) if raw else {}
    except ValueError:
        raise DataError(f"{path}: its schedbench metadata is not valid JSON") from None
    if not isinstance(meta, dict):
        raise DataError(f"{path}: its schedbench metadata is not a JSON object")
    names = schema.names
    extra = [c for c in names if c not in COLUMNS]
    if extra:
        raise DataError(f"{path}: unknown job table columns: {extra}; expected a subset of {list(COLUMNS)}")
    if len(set(names)) != len(names):
        raise DataError(f"{path}: a column appears twice: {sorted(n for n in set(names) if names.count(n) > 1)}")
    for name in names:
        kind = schema.field(name).type
        if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
            raise DataError(f"{path}: column {name!r} must be numeric, not {kind}")
    n = pf.metadata.num_rows
    # Column by column, each copied into its own int64 array as it is decoded: the file's
    # Arrow buffers (one column at a time) are the only copy besides the table itself.
    columns = {}
    for name in names:
        try:
            col = pf.read(columns=[name], use_threads=False).column(0)
        except (pa.ArrowException, OSError) as exc:
            raise DataError(f"{path}: column {name!r} cannot be decoded ({_first_line(exc)})") from None
        if col.null_count:
            import pyarrow.compute as pc  # a heavy import: only for columns with nulls

            col = pc.fill_null(col, -1)
        out = np.empty(n, dtype=np.int64)
        at = 0
        for chunk in col.chunks:
            values = chunk.to_numpy(zero_copy_only=False)
            if values.dtype.kind == "f":
                if not np.isfinite(values).all():
                    raise DataError(f"{path}: column {name!r} holds NaN or infinite values")
                values = np.trunc(values)
            wide = np.flatnonzero((values > MAX_INT) | (values < -MAX_INT))
            if wide.size:  # stored as they are, they wrapped int64 (an end before its start)
                raise DataError(f"{path}: column {name!r}, row {at + int(wide[0]) + 1:,}: {values[wide[0]].item()!r} is out "
                                f"of range (at most {MAX_INT:,} either way, an SWF field's 18 digits)")
            out[at : at + values.shape[0]] = values
            at += values.shape[0]
        del col
        columns[name] = out
    # give the decoding buffers back to the system now, not at exit (a large table's
    # buffers would otherwise stay resident through the replay)
    pa.default_memory_pool().release_unused()
    ids = columns.get("job_id")
    # as an SWF log's: the job a result row, a dependency or a log start names is ambiguous
    rows = duplicate_rows(ids) if ids is not None and ids.size > 1 and not (ids[1:] > ids[:-1]).all() else None
    if rows is not None:
        dup = int(ids[rows[0]])
        what = f"duplicate job id {dup}" if dup >= 0 else f"no job id (null or {dup})"
        raise DataError(f"{path}: {what} in rows {rows[0] + 1:,} and {rows[1] + 1:,}: job ids must be unique")
    return from_columns(n if columns else 0, **columns), meta


def _first_line(exc: BaseException) -> str:
    """An exception's message cut to its first line (pyarrow's run over several)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def expected_queue_wait(table, meta: dict | None = None) -> np.ndarray:
    """Per job, the expected wait of its queue (s, >= 1), PRB's yardstick (Netti et al.
    §2.2: "the average waiting time over a certain queue").

    From ``meta["queue_expected_wait"]`` ({queue name: s}) with ``meta["queues"]``
    ({queue name: code}) when the workload carries them (Eurora's ``system_queues``);
    otherwise the mean logged wait (SWF field 3, where >= 0) of the job's queue in this
    trace, else of the whole trace, else 1 s.
    """
    out = np.ones(table.n_jobs, dtype=np.int64)
    meta = meta or {}
    limits, codes = meta.get("queue_expected_wait"), meta.get("queues")
    if limits and codes:
        for name, code in codes.items():
            if name in limits:
                out[table.queue == code] = max(1, int(limits[name]))
        return out
    known = table.wait >= 0
    if not known.any():
        return out
    overall = max(1, int(round(table.wait[known].mean())))
    out[:] = overall
    queues, inverse = np.unique(table.queue, return_inverse=True)
    sums = np.bincount(inverse, weights=np.where(known, table.wait, 0), minlength=queues.size)
    counts = np.bincount(inverse, weights=known, minlength=queues.size)
    means = np.where(counts > 0, np.round(sums / np.maximum(counts, 1)), overall)
    return np.maximum(1, means[inverse]).astype(np.int64)
