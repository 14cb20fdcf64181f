"""Load any workload the CLI accepts: an SWF log (plain or gzip; Alea's 21-field extended
SWF is recognised by its first data line, see :mod:`schedbench.io.alea`), a catalog log name
(from the cache), or a Parquet job table; and the machine it runs on."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..errors import UsageError
from . import alea, jobs, machine, swf


def load(trace: str, machine_arg: str | None = None, limit: int | None = None):
    """Returns ``(table, machine, meta, parse_s)``.

    The machine is ``machine_arg`` (a spec string or node file) when given, else the one
    recorded in a Parquet table's metadata, else the SWF header's (see
    :func:`schedbench.io.machine.from_swf_header`).  ``limit`` keeps the first N jobs in
    (submit, id) order.
    """
    if limit is not None and limit <= 0:
        raise UsageError("--limit must be a positive number of jobs")
    path = _resolve(trace)
    t0 = time.perf_counter()
    meta: dict = {"trace": str(path)}
    if path.suffix == ".parquet":
        table, file_meta = jobs.read_parquet(path)
        meta.update(file_meta)
        if not _sorted(table):
            table = table.take(np.lexsort((table.job_id, table.submit)))
        default = file_meta.get("machine")
        mach = machine.parse(machine_arg) if machine_arg else (machine.from_spec(default) if default else None)
        if mach is None:
            raise UsageError(f"{path} records no machine: give --machine")
    else:
        if alea.sniff(path):
            table, header, _extras, queues = alea.read(path)
            meta.update(format="alea", queues=queues)
        else:
            table, header = swf.read(path)
        meta["header_out_of_order"] = header.out_of_order
        if machine_arg:
            mach = machine.parse(machine_arg)
        else:
            widest = int(table.units.max()) if table.n_jobs else 0
            mach = machine.from_swf_header(header.max_procs, header.max_nodes, widest)
    parse_s = time.perf_counter() - t0
    if limit is not None:
        table = table.head(limit)
    return table, mach, meta, parse_s


def _resolve(trace: str) -> Path:
    """:func:`schedbench.io.fetch.resolve`, without importing the downloader (http.client,
    the catalog) for the usual case of an existing file."""
    path = Path(trace).expanduser()
    if path.exists():
        return path
    from .fetch import resolve

    return resolve(trace)


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
