"""Load any workload the CLI accepts: an SWF log (plain or gzip; Alea's 21-field extended
SWF is recognised by its first data line, see :mod:`schedbench.io.alea`), a Slurm ``sacct -P``
dump (recognised by its header line, see :mod:`schedbench.io.sacct`), a catalog log name
(from the cache), or a Parquet job table (by its ``.parquet`` name or its magic bytes); and the machine it runs on."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..errors import DataError, UsageError
from . import alea, jobs, machine, sacct, slurm_conf, swf


def load(trace: str, machine_arg: str | None = None, limit: int | None = None, tz: str = "UTC"):
    """Returns ``(table, machine, meta, parse_s)``.

    The machine is ``machine_arg`` (a spec string or node file; a slurm.conf also puts its
    scheduling policy in ``meta["slurm"]``) when given, else the one
    recorded in a Parquet table's metadata, else the SWF header's (see
    :func:`schedbench.io.machine.from_swf_header`).  ``limit`` keeps the first N jobs in
    (submit, id) order.  ``tz`` is the time zone a sacct dump's times are read in.

    ``meta["notices"]`` lists, one line each, what the reading guessed or will leave out
    (jobs without a submit time, truncated fractions, a machine sized to the widest job),
    for the command line to print; a Parquet table without a ``submit`` column is a
    :class:`DataError`.
    """
    if limit is not None and limit <= 0:
        raise UsageError("--limit must be a positive number of jobs")
    path = _resolve(trace)
    t0 = time.perf_counter()
    meta: dict = {"trace": str(path)}
    notices: list[str] = []
    if is_parquet(path):
        table, file_meta = jobs.read_parquet(path)
        meta.update(file_meta)
        if table.n_jobs and table.submit.min() < 0:  # rows still in the file's order
            notices.append(_parquet_submit_notice(path, table.submit))
        if not _sorted(table):
            table = table.take(np.lexsort((table.job_id, table.submit)))
        default = file_meta.get("machine")
        mach = (_machine(machine_arg, meta, notices) if machine_arg is not None
                else machine.from_spec(default) if default else None)
        if mach is None:
            raise UsageError(f"{path} records no machine: give --machine")
    elif sacct.sniff(path):
        if machine_arg is None:  # before reading: a large dump takes seconds
            raise UsageError(f"{path}: a sacct dump records no machine: give --machine")
        table, file_meta = sacct.read(path, tz)
        notices += file_meta.pop("notices")
        meta.update(file_meta)
        mach = _machine(machine_arg, meta, notices)
    else:
        if alea.sniff(path):
            table, header, _extras, queues = alea.read(path)
            meta.update(format="alea", queues=queues)
        else:
            table, header = swf.read(path)
        meta["header_out_of_order"] = header.out_of_order
        notices += _swf_notices(path, header)
        if machine_arg is not None:  # an empty one too (-m "$UNSET"): refused, not read as absent
            mach = _machine(machine_arg, meta, notices)
        else:
            widest = int(table.units.max()) if table.n_jobs else 0
            if not table.n_jobs and header.machine_procs() is None:  # nothing to size a machine by
                raise DataError(f"{path}: no jobs to replay (the file holds no job lines, nor a MaxProcs or "
                                "MaxNodes header line)")
            mach = machine.from_swf_header(header.max_procs, header.max_nodes, widest)
            if header.machine_procs() is None:
                notices.append(f"{path}: no MaxProcs or MaxNodes in the header: the machine is one pool as wide as "
                               f"the widest job ({widest:,} processors); give --machine to size it")
    meta["notices"] = notices
    parse_s = time.perf_counter() - t0
    if limit is not None:
        table = table.head(limit)
    return table, mach, meta, parse_s


def _machine(machine_arg: str, meta: dict, notices: list[str]) -> machine.Machine:
    """:func:`schedbench.io.machine.parse`; for a slurm.conf also its scheduling policy in
    ``meta["slurm"]`` and a notice of its unmodelled keys (:mod:`schedbench.io.slurm_conf`)."""
    if Path(machine_arg).is_file() and slurm_conf.sniff(machine_arg):
        conf = slurm_conf.read(machine_arg)
        meta["slurm"] = conf.policy
        notices += slurm_conf.notices(conf, machine_arg)
        return conf.machine
    return machine.parse(machine_arg)


def _plural(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"


def _swf_notices(path: Path, header) -> list[str]:
    """One line for the jobs without a submit time and one for the truncated fractions
    of an SWF reading (:class:`schedbench.io.swf.SWFHeader`), naming the first line."""
    out = []
    negative = getattr(header, "negative_submits", None)
    if negative:
        count, line, value = negative
        more = f" (and {_plural(count - 1, 'more line', 'more lines')})" if count > 1 else ""
        out.append(f"{path}:{line}: negative submit time {value}{more}: left out of the replay as dropped_no_submit")
    fractions = getattr(header, "fractions", None)
    if fractions:
        count, line = fractions
        what = ("a data line holds a number with a fraction" if count == 1 else
                f"{count:,} data lines hold numbers with a fraction (the first here)")
        out.append(f"{path}:{line}: {what}, truncated toward zero")
    return out


def _parquet_submit_notice(path: Path, submit: np.ndarray) -> str:
    """The line naming a Parquet table's jobs without a submit time (nulls, read as -1, and
    negative values; rows counted from 1 in the file's order), or a :class:`DataError`
    when the table has no submit column at all (no job could be replayed)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if "submit" not in pq.read_schema(path).names:
        raise DataError(f"{path}: no column submit (every job needs its submit time)")
    null = np.asarray(pc.is_null(pq.read_table(path, columns=["submit"]).column(0)), dtype=bool)
    parts = []
    for rows, one, many in ((np.flatnonzero(null), "null value", "null values"),
                            (np.flatnonzero(~null & (submit < 0)), "negative value", "negative values")):
        if rows.size:
            shown = ", ".join(str(r + 1) for r in rows[:5]) + (", ..." if rows.size > 5 else "")
            parts.append(f"{_plural(rows.size, one, many)} ({'row' if rows.size == 1 else 'rows'} {shown})")
    return f"{path}: column submit: {' and '.join(parts)}: left out of the replay as dropped_no_submit"


def _resolve(trace: str) -> Path:
    """:func:`schedbench.io.fetch.resolve`, without importing the downloader (http.client,
    the catalog) for the usual case of an existing file."""
    path = Path(trace).expanduser()
    if path.exists():
        return path
    from .fetch import resolve

    return resolve(trace)


def is_parquet(path: Path) -> bool:
    """A ``.parquet`` name, or a file of another name that starts with Parquet's magic
    bytes: ``schedbench workload ... -o NAME`` writes Parquet whatever the name."""
    if path.suffix == ".parquet":
        return True
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"PAR1"
    except OSError:
        return False


def _sorted(table: jobs.JobTable) -> bool:
    """Whether the rows are in (submit, job_id) order already (ties kept): one linear pass
    instead of a sort for the usual, sorted, table."""
    s, i = table.submit, table.job_id
    if table.n_jobs < 2:
        return True
    ds = s[1:] >= s[:-1]
    if not ds.all():
        return False
    tie = s[1:] == s[:-1]
    return bool(np.all(i[1:][tie] >= i[:-1][tie]))
