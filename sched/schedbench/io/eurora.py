"""Reader of the Eurora job instances (CINECA, 2014; PA-HPC-SIM ``*.log_crypt`` files).

One job a line, ``;``-separated, in three parts joined by ``__``::

    job_id;exe;user;queue;YYYY-MM-DD HH:MM:SS
    __node;cores;gpus;mics;mem_kib#[node;cores;gpus;mics;mem_kib#...]
    __start;end;req_nodes;req_cores;req_mem;HH:MM;NA;NA;STATUS;app_type

How a line becomes a request (``units`` identical units of ``unit_cores``, ``unit_gpus``,
``unit_mics``, ``unit_mem`` MiB; see :mod:`schedbench.io.jobs`):

* The middle part lists one entry per **PBS chunk** (``select=N:ncpus=c:ngpus=g:...``),
  not one per distinct node: in the four shared folders (4,585 distinct jobs) every job's
  entries are identical, the entry count equals ``req_nodes`` and the entry cores sum to
  ``req_cores`` in 4,584 jobs, and 31 jobs list the same node id more than once (PBS
  packed two or more chunks on one node).  So ``units`` = number of entries, each unit is
  the entry's (cores, GPUs, MICs, memory), and ``req_nodes`` = -1: the allocator may
  pack units on any nodes, each node hosting as many as fit (Netti et al.'s job-unit
  model, §3).
* Repeated entries: when the entry count differs from ``req_nodes`` but ``req_nodes``
  chunks of the entry shape give exactly ``req_cores`` cores, the request wins and
  ``units`` = ``req_nodes`` (one job in the shared data: ``req_nodes`` 1, ``req_cores`` 8,
  two identical 8-core entries on node 8; read as a chunk logged twice).  Counted in
  ``meta["repeated_entries"]``.
* Mixed entries (never seen in the shared data): the greatest common unit.  Each entry is
  ``k_i`` times its primitive vector (``k_i`` = gcd of its nonzero amounts); when all
  primitive vectors agree the unit is that vector times ``gcd(k_i)`` and ``units`` =
  ``Σ k_i / gcd(k_i)``.  Otherwise (no exact common unit) the job asks ``n`` units of the
  element-wise maximum entry, an over-request that never understates the footprint.
  Counted in ``meta["mixed_entries"]`` and ``meta["mixed_entries_overrequested"]``.
* Memory: the entry's memory column is KiB, as in the node files (``nodes_#64`` gives
  33554432 = 32 GiB per node only as KiB).  The job lines agree: 4194304 goes with
  ``req_mem`` 4 (4 GiB) and 204800 with ``req_mem`` 200 (200 MiB; 200 GiB would not fit
  a 32 GiB node), and the largest entry, 20 GiB, fits a node.  ``unit_mem`` = ceil(KiB /
  1024) MiB.  ``req_mem`` itself is unreliable (its unit varies between GB and MB, and in
  about 650 jobs it disagrees with the entries: e.g. ``req_mem`` 1 with 4 GiB entries), so
  it is not used; SWF ``mem_req`` (KB per processor) is derived from the entries.

Other columns:

* ``submit``: the arrival time as seconds since the Unix epoch, reading the timestamp
  (CINECA local time, CET/CEST) as if it were UTC.  So ``submit % 86400`` is the local
  time of day, which is what a day/night analysis needs, and the generator
  :mod:`schedbench.workloads.eurora_like` uses the same convention (its t = 0 is a local
  midnight).  Differences between times are true durations except across a DST change
  (none inside the shared instances, which span 2014-03-31 to 2014-04-03).
* ``wait`` = start − arrival (s), ``run`` = end − start (s); a negative difference is
  recorded as -1 (unknown; such jobs are left out of a replay) and counted in
  ``meta["negative_times"]``.
* ``estimate`` = ``time_req`` = the wall time ``HH:MM`` (or ``HH:MM:SS``) in seconds.
  PBS lets a job overrun its wall time briefly: 555 shared jobs ran longer than their
  estimate, none by more than 10 minutes; runs are kept as recorded.
* ``queue``: integer codes in ``meta["queues"]`` ({name: code}): the ``system_queues``
  names in file order first (debug 0, parallel 1, np_longpar 2, longpar 3, reservation 4
  for the shared file), then names found only in the jobs, sorted (the shared data's
  ``R``, apparently reservation jobs, becomes 5).  ``meta["queue_expected_wait"]`` is
  ``system_queues`` ({name: seconds}).
* ``status``: SWF codes: ``COMPLETED`` 1; ``FAILED``, ``TIMEOUT``, ``NODE_FAIL``,
  ``BOOT_FAIL``, ``OUT_OF_MEMORY``, ``DEADLINE``, ``PREEMPTED`` 0; ``CANCELLED`` (also
  ``CANCELLED by ...``) 5; anything else -1, counted in ``meta["unknown_status"]``.  (Every
  shared job is ``COMPLETED``.)
* ``user``, ``executable``: codes of the (masked) names, in sorted name order;
  ``procs_req`` = ``procs_alloc`` = units × unit_cores; ``group``, ``partition``, ... -1.
  The last field (``app_type``, 0/1/2) is not stored: it does not track the CPU/GPU/MIC
  class and its meaning is undocumented.
* Node ids in the job lines run 1..64 (MIC nodes 1–32, GPU nodes 33–64) while the node
  files number nodes 0..63; the reader does not use node ids.

Merging: ``path`` may be a folder of overlapping instance windows; each job id is kept
once.  A duplicate whose parsed fields are identical is dropped silently (counted in
``meta["duplicates_identical"]``); a duplicate that differs is a conflict: the first one
read is kept (files are read in sorted path order, lines in file order) and the conflict is
counted in ``meta["duplicates_conflicting"]`` with up to 20 ids in
``meta["conflicting_job_ids"]``.
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
import os
import re
from pathlib import Path

import numpy as np

from ..errors import DataError
from . import jobs
from .machine import Machine, from_node_file, from_spec, read_text

#: The Eurora machine as documented (used when no node file can be found).
EURORA_SPEC = "32x(cores=16,mics=2,mem=32G)+32x(cores=16,gpus=2,mem=32G)"

#: Queue names of the shared ``system_queues`` file in its order, and their expected waits
#: (s).  The generator uses these codes so that real and synthetic tables agree.
EURORA_QUEUES: dict[str, int] = {
    "debug": 3600,
    "parallel": 21600,
    "np_longpar": 86400,
    "longpar": 86400,
    "reservation": 1800,
}

INSTANCE_SUFFIX = ".log_crypt"

_STATUS: dict[str, int] = {
    "COMPLETED": 1,
    "FAILED": 0,
    "TIMEOUT": 0,
    "NODE_FAIL": 0,
    "BOOT_FAIL": 0,
    "OUT_OF_MEMORY": 0,
    "DEADLINE": 0,
    "PREEMPTED": 0,
    "CANCELLED": 5,
}

_TS = r"(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)"
_LINE_RE = re.compile(
    r"(\d+);([^;]*);([^;]*);([^;]+);" + _TS
    + r"__(.*?)__"
    + _TS + ";" + _TS
    + r";(\d+);(\d+);(\d+);(\d+):(\d\d)(?::(\d\d))?;([^;]*);([^;]*);([^;]*);([^;]*)"
)
_ENTRY_RE = re.compile(r"(\d+);(\d+);(\d+);(\d+);(\d+)")


@functools.lru_cache(maxsize=4096)
def _day_seconds(y: int, m: int, d: int) -> int:
    # Few distinct dates occur, so caching makes timestamp conversion nearly free.
    return (_dt.date(y, m, d).toordinal() - _EPOCH_ORDINAL) * 86400


_EPOCH_ORDINAL = _dt.date(1970, 1, 1).toordinal()


def _ts(g: tuple[str, ...], i: int) -> int:
    """Seconds since the epoch (timestamp read as UTC) of the 6 groups starting at ``i``."""
    hh, mm, ss = int(g[i + 3]), int(g[i + 4]), int(g[i + 5])
    if hh > 23 or mm > 59 or ss > 60:
        raise ValueError("time of day out of range")
    return _day_seconds(int(g[i]), int(g[i + 1]), int(g[i + 2])) + hh * 3600 + mm * 60 + ss


def _primitive(vec: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    k = 0
    for v in vec:
        k = math.gcd(k, v)
    return k, tuple(v // k for v in vec)


def _unit_request(entries: list[tuple[int, int, int, int]], req_nodes: int, req_cores: int
                  ) -> tuple[int, tuple[int, int, int, int], str]:
    """(units, (cores, gpus, mics, mem_kib), how) from the per-chunk entries; ``how`` is
    '' (plain), 'repeated' or 'mixed' / 'mixed-max' (see the module docstring)."""
    first = entries[0]
    if all(e == first for e in entries):
        n = len(entries)
        if n != req_nodes and req_nodes > 0 and req_nodes * first[0] == req_cores:
            return req_nodes, first, "repeated"
        return n, first, ""
    ks, prims = zip(*(_primitive(e) for e in entries), strict=True)
    if all(p == prims[0] for p in prims):
        g = 0
        for k in ks:
            g = math.gcd(g, k)
        unit = tuple(v * g for v in prims[0])
        return sum(ks) // g, unit, "mixed"  # type: ignore[return-value]
    unit = tuple(max(e[r] for e in entries) for r in range(4))
    return len(entries), unit, "mixed-max"  # type: ignore[return-value]


def _parse_line(text: str, where: str) -> tuple:
    """One job line -> a tuple of parsed fields (see ``read_instances``)."""
    m = _LINE_RE.fullmatch(text)
    if m is None:
        raise DataError(
            f"{where}: not a Eurora job line (expected 'id;exe;user;queue;arrival__"
            f"node;cores;gpus;mics;mem#...__start;end;req_nodes;req_cores;req_mem;HH:MM;"
            f"NA;NA;STATUS;app_type'): {text[:200]!r}"
        )
    g = m.groups()
    try:
        arrival = _ts(g, 4)
        start = _ts(g, 11)
        end = _ts(g, 17)
    except ValueError as exc:
        raise DataError(f"{where}: bad timestamp ({exc}): {text[:200]!r}") from None
    entries = []
    for item in g[10].split("#"):
        if not item:
            continue
        em = _ENTRY_RE.fullmatch(item)
        if em is None:
            raise DataError(f"{where}: bad node entry {item!r} (expected node;cores;gpus;mics;mem_kib)")
        _node, cores, gpus, mics, mem = (int(x) for x in em.groups())
        if cores + gpus + mics == 0:
            raise DataError(f"{where}: node entry {item!r} has no cores, GPUs or MICs")
        entries.append((cores, gpus, mics, mem))
    if not entries:
        raise DataError(f"{where}: no node entries between the '__' separators")
    minutes = int(g[27])
    if minutes > 59 or (g[28] is not None and int(g[28]) > 59):
        raise DataError(f"{where}: bad wall time in {text[:200]!r}")
    walltime = int(g[26]) * 3600 + minutes * 60 + (int(g[28]) if g[28] is not None else 0)
    status_word = g[31].strip()
    status = _STATUS.get(status_word.split(" ", 1)[0], -1)
    return (
        int(g[0]), g[1], g[2], g[3], arrival, tuple(entries), start, end,
        int(g[23]), int(g[24]), int(g[25]), walltime, status, status_word,
    )


def _instance_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"no such Eurora instance file or folder: {path}")
    files = sorted(p for p in path.rglob(f"*{INSTANCE_SUFFIX}") if p.is_file())
    if not files:
        raise DataError(f"{path}: no *{INSTANCE_SUFFIX} job instance files in this folder")
    return files


def _find_config(path: Path, name: str) -> Path | None:
    """``system_configs/name`` next to a ``job_instances`` folder that holds ``path``, or
    inside ``path`` itself; None when there is none (never searches unrelated folders)."""
    here = path if path.is_dir() else path.parent
    candidates = [here / "system_configs" / name]
    for anc in (here, *here.parents):
        if anc.name == "job_instances":
            candidates.append(anc.parent / "system_configs" / name)
            break
    for c in candidates:
        if c.is_file():
            return c
    return None


def read_queues(path: str | os.PathLike) -> dict[str, int]:
    """``system_queues``: ``name max_expected_wait_seconds`` a line -> {name: seconds}
    (file order; blank lines and ``#`` comments skipped)."""
    path = Path(path)
    out: dict[str, int] = {}
    for lineno, line in enumerate(read_text(path, "queue file").splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        parts = text.split()
        if len(parts) != 2 or not parts[1].isdigit():
            raise DataError(f"{path}:{lineno}: expected 'queue_name expected_wait_seconds': {text!r}")
        out[parts[0]] = int(parts[1])
    return out


def read_instances(
    path: str | os.PathLike,
    nodes_file: str | os.PathLike | None = None,
    queues_file: str | os.PathLike | None = None,
) -> tuple[jobs.JobTable, dict]:
    """Read one Eurora instance file, or every ``*.log_crypt`` file under a folder
    (recursively), merged by job id; returns ``(table, meta)`` sorted by (submit, job_id).

    ``nodes_file``: the machine (``nodes_#N``); by default ``system_configs/nodes_#64``
    beside the ``job_instances`` folder that holds ``path`` (or inside ``path``), else the
    documented Eurora machine :data:`EURORA_SPEC` (``meta["machine_note"]`` says which).
    ``queues_file``: ``system_queues``, found the same way; without one,
    ``meta["queue_expected_wait"]`` is empty.

    Duplicated job ids (overlapping windows): identical duplicates are dropped; for
    conflicting ones the first read (sorted paths, file order) is kept and the conflicts
    are counted in ``meta["duplicates_conflicting"]``.  Times are seconds (``submit``
    since the Unix epoch, timestamps read as UTC), memory MiB; the request model and
    every interpretation are in the module docstring.  A malformed line raises
    :class:`~schedbench.errors.DataError` naming the file and line number.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path, not {type(path).__name__}")
    path = Path(path)
    files = _instance_files(path)

    if nodes_file is None:
        nodes_path = _find_config(path, "nodes_#64")
    else:
        nodes_path = Path(nodes_file)
        if not nodes_path.is_file():
            raise FileNotFoundError(f"no such node file: {nodes_path}")
    if nodes_path is not None:
        machine: Machine = from_node_file(nodes_path)
        machine_note = f"from node file {nodes_path}"
    else:
        machine = from_spec(EURORA_SPEC)
        machine_note = "no nodes_#N file found: the documented Eurora machine"

    if queues_file is None:
        queues_path = _find_config(path, "system_queues")
    else:
        queues_path = Path(queues_file)
        if not queues_path.is_file():
            raise FileNotFoundError(f"no such queue file: {queues_path}")
    expected_wait = read_queues(queues_path) if queues_path is not None else {}

    records: dict[int, tuple] = {}
    n_lines = n_identical = n_conflicts = 0
    conflict_ids: list[int] = []
    seen: set[str] = set()
    for f in files:
        with open(f, encoding="utf-8", errors="strict", newline=None) as fh:
            try:
                lines = fh.read().splitlines()
            except UnicodeDecodeError as exc:
                raise DataError(f"{f}: not UTF-8 text ({exc})") from None
        for lineno, line in enumerate(lines, 1):
            text = line.strip()
            if not text:
                continue
            n_lines += 1
            # Overlapping windows repeat most lines verbatim: a line already parsed is an
            # identical duplicate, so skip parsing it again (most of the reading time).
            if text in seen:
                n_identical += 1
                continue
            seen.add(text)
            rec = _parse_line(text, f"{f}:{lineno}")
            old = records.get(rec[0])
            if old is None:
                records[rec[0]] = rec
            elif old == rec:
                n_identical += 1
            else:
                n_conflicts += 1
                if len(conflict_ids) < 20:
                    conflict_ids.append(rec[0])

    n = len(records)
    recs = list(records.values())
    queue_codes = {name: i for i, name in enumerate(expected_wait)}
    for name in sorted({r[3] for r in recs} - set(queue_codes)):
        queue_codes[name] = len(queue_codes)
    user_codes = {name: i for i, name in enumerate(sorted({r[2] for r in recs}))}
    exe_codes = {name: i for i, name in enumerate(sorted({r[1] for r in recs}))}

    cols = {name: np.full(n, -1, dtype=np.int64) for name in jobs.COLUMNS}
    counts = {"repeated": 0, "mixed": 0, "mixed-max": 0}
    n_negative = 0
    unknown_status: dict[str, int] = {}
    for i, r in enumerate(recs):
        (job_id, exe, user, queue, arrival, entries, start, end,
         req_nodes, req_cores, _req_mem, walltime, status, status_word) = r
        units, (cores, gpus, mics, mem_kib), how = _unit_request(list(entries), req_nodes, req_cores)
        if how:
            counts[how] += 1
        run = end - start
        wait = start - arrival
        if run < 0 or wait < 0:
            n_negative += 1
        if status < 0:
            unknown_status[status_word] = unknown_status.get(status_word, 0) + 1
        cols["job_id"][i] = job_id
        cols["submit"][i] = arrival
        cols["wait"][i] = wait if wait >= 0 else -1
        cols["run"][i] = run if run >= 0 else -1
        cols["procs_alloc"][i] = units * cores
        cols["procs_req"][i] = units * cores
        cols["time_req"][i] = walltime
        # SWF memory is KB per processor.
        cols["mem_req"][i] = mem_kib // cores if cores > 0 else -1
        cols["status"][i] = status
        cols["user"][i] = user_codes[user]
        cols["executable"][i] = exe_codes[exe]
        cols["queue"][i] = queue_codes[queue]
        cols["units"][i] = units
        cols["unit_cores"][i] = cores
        cols["unit_gpus"][i] = gpus
        cols["unit_mics"][i] = mics
        cols["unit_mem"][i] = -(-mem_kib // 1024)  # ceil: never understate the request
        cols["estimate"][i] = walltime
    order = np.lexsort((cols["job_id"], cols["submit"]))
    table = jobs.from_columns(n, **{k: v[order] for k, v in cols.items()})

    meta = {
        "source": "eurora",
        "path": str(path),
        "files": len(files),
        "lines": n_lines,
        "jobs": n,
        "duplicates_identical": n_identical,
        "duplicates_conflicting": n_conflicts,
        "conflicting_job_ids": conflict_ids,
        "machine": machine.spec,
        "machine_note": machine_note,
        "queues": queue_codes,
        "queue_expected_wait": expected_wait,
        "users": user_codes,
        "executables": exe_codes,
        "time_origin": "unix epoch; arrival timestamps (CINECA local time) read as UTC, "
                       "so submit % 86400 is the local time of day",
        "repeated_entries": counts["repeated"],
        "mixed_entries": counts["mixed"] + counts["mixed-max"],
        "mixed_entries_overrequested": counts["mixed-max"],
        "negative_times": n_negative,
        "unknown_status": unknown_status,
    }
    return table, meta
