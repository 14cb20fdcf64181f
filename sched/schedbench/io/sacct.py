"""Slurm accounting dumps: the output of ``sacct --parsable2`` (``-P``), read as a job table.

A dump is recognised by its first line, the ``|``-separated column names (it must name
``JobID`` or ``JobIDRaw``).  ``read(path, tz)`` returns ``(JobTable, meta)``; the table is in
(submit, job_id) order like every reader's.  A command that exports one::

    sacct -a -P -S 2024-01-01 -E now -o JobID,JobIDRaw,Submit,Eligible,Start,End,Elapsed,\\
        Timelimit,NCPUS,ReqCPUS,AllocCPUS,NNodes,ReqMem,ReqTRES,AllocTRES,Partition,QOS,\\
        Account,User,UID,State,Constraints,NodeList

**Columns** are found by name (case-insensitive), in any order; any subset of JobID,
JobIDRaw, Submit, Eligible, Start, End, Elapsed, Timelimit, NCPUS, ReqCPUS, AllocCPUS,
NNodes, ReqNodes, ReqMem, ReqTRES, AllocTRES, ReqGRES, AllocGRES, Partition, QOS, Account,
User, UID, Group, GID, State, Constraints, NodeList, JobName and SubmitLine is read (Group,
GID, JobName and SubmitLine are accepted and not used); other columns are skipped.  A dump
without JobID or JobIDRaw, or without Submit, is refused.

**Lines and jobs.**  A line whose id holds a ``.`` is a job step (``123.batch``,
``123.extern``, ``123.0``, ``123_4.batch``, ``123+1.0``) and is folded into the job line
above it with the same id before the dot (sacct prints a job's steps right under it): the
job line's values stand, and a step only fills a column the job line leaves empty
(``Unknown``, ``None`` or nothing), the first step that has one.  Steps with no job line
above them (a dump cut at a job's line, or edited) are folded into a job of their own built
from the first of them, and a notice counts them.  Array tasks (``123_4``) and the
components of a heterogeneous job (``123+1``) are jobs of their own; an array's pending
remainder printed as one record (``123_[5-10%2]``) is one job, which never started.  A line
that repeats the header (dumps appended one after another) and blank lines are skipped.

``job_id`` is the integer before any ``.`` of JobIDRaw (JobID when there is no JobIDRaw
column): Slurm gives every array task and het component its own raw id.  A job whose id is
not an integer (``123_4`` without JobIDRaw) or repeats an earlier line's (a requeued job
listed by ``sacct -D``, ids that wrapped around) is numbered after the largest integer id,
in the order of the file, and a notice says how many were.

**Times** (Submit, Eligible, Start, End) are ``YYYY-MM-DDTHH:MM:SS`` (a space also serves
as the separator) in the time zone ``tz`` (an IANA name, default UTC: sacct prints the
local time of the host it ran on); ``Unknown``, ``None`` or nothing is unknown.  In the
hour a daylight-saving change repeats, the earlier reading is taken.  A job *arrives* at
its Eligible time when that is known and not before its Submit (a held job, ``--begin``,
a dependency: Slurm counts the age of a job from then), else at its Submit; the table's
``submit`` is the arrival in seconds after the earliest one, whose Unix time is
``meta["unix_start_time"]``.  A job with no known Submit gets -1 (a replay leaves it out as
dropped_no_submit) and a notice.

**Durations** (Elapsed, Timelimit) are ``[D-]HH:MM:SS``, ``MM:SS``, either with a
``.fff`` fraction (dropped); ``UNLIMITED``, ``Partition_Limit``, ``INVALID`` and nothing are
unknown (-1).  ``time_req`` and ``estimate`` are the Timelimit (-1 when unlimited or
unknown: the engine then takes the partition's MaxTime, or the run).

**Started or not.**  A job ran in the log when it has a Start, an End (when the dump has an
End column), a run time (Elapsed, else End - Start), an allocation (not a NodeList of
``None assigned``, not an AllocCPUS of 0: sacct gives a job cancelled while pending its
cancel time as both Start and End) and a State other than PENDING, RUNNING or SUSPENDED.
Such a job keeps its run (``run``) and its logged wait: ``wait`` = Start - arrival (0 when
the Start is earlier), so the log's own start is ``submit + wait``.  Every other job (never
started, or still pending, running or suspended when the dump was taken) gets the SWF
status :data:`NEVER_STARTED_STATUS` (6, which the SWF does not use) with ``run`` and
``wait`` -1; the engine reports them as never started and does not replay them.

**Status** (SWF field 11) of the jobs that ran, from the first word of State: COMPLETED
is 1; FAILED, OUT_OF_MEMORY, NODE_FAIL, BOOT_FAIL, DEADLINE and TIMEOUT are 0 (failed:
a job Slurm killed at its time limit did not complete its work); CANCELLED (``CANCELLED by
N``), PREEMPTED, REQUEUED and REVOKED are 5 (cancelled); anything else is -1.  Every one
of them is replayed with its real run time.

**Resources.**  Nodes NN: NNodes (the nodes a job that ran used; a pending job's request),
else ReqTRES ``node=``, else ReqNodes (at least 1).
CPUs C: AllocCPUS, else NCPUS, else ReqCPUS, else ReqTRES ``cpu=`` (the first above 0;
else one per node).  GPUs G (the job's total): ReqTRES ``gres/gpu=N``, else its typed
``gres/gpu:TYPE=N``, else the same two of AllocTRES, else ReqGRES, else AllocGRES (``gpu:2``,
``gpu:a100:2``, ``gres:gpu:2``, counts per node, times NN).  Memory per node (MiB, units
``K/M/G/T/P`` binary, a bare number is MiB): ReqMem, per CPU with a ``c`` suffix (times
the CPUs per node), per node with ``n`` or none; else ReqTRES ``mem=`` divided by NN;
``0`` (``--mem=0``, the whole node) and unknown are 0, which lets the engine apply the
partition's DefMemPerCPU.  The job asks for ``units`` = ``req_nodes`` = NN nodes of
``unit_cores`` = ceil(C / NN) cores, ``unit_gpus`` = ceil(G / NN) GPUs and ``unit_mem`` MiB;
``procs_req`` = ``procs_alloc`` = C; ``mem_req`` = ``unit_mem`` in KB per core.

**Codes** are assigned in sorted-name order: ``partition`` indexes ``meta["partitions"]``
({name as written, ``a,b`` for a job pending on two: code}; -1 when empty: the default
partition), ``queue`` ``meta["qos"]``, ``group`` ``meta["accounts"]`` (Slurm's fair-share unit
is the account).  ``user`` is the UID where it is a number, else a code of the User name
after the largest UID, and ``meta["users"]`` maps names to those numbers.  ``constraint``
indexes ``meta["constraints"]``: the Constraints expression as written, ANDed with the term
``gpu:TYPE`` of a typed GPU request (ReqTRES's typed entry, else ReqGRES's type; the first
type when there are several; an allocation's type is not a request); an expression holding
``|`` is put in parentheses before ``&gpu:TYPE`` is added.

**Broken lines.**  ``sacct -P`` does not escape a ``|`` inside a value.  A line with more
fields than the header is repaired when one column can take the extra fields: the only
free-text column present (JobName, SubmitLine, WorkDir, Comment, AdminComment,
SystemComment, StdIn, StdOut, StdErr), or Constraints (``a|b`` is a constraint); with both
a free-text column and Constraints, the free-text column takes them when Constraints is
then a well-formed expression (a ``|`` in a job name, a shell pipeline, is the usual
cause; a line with both an OR constraint and such a name is then misread: leave JobName
out of ``--format``), else Constraints when exactly one split leaves it well-formed.  Otherwise the line is refused as ``file:line: N fields
where the header has M``; a line with too few fields is refused the same way; a value that
does not parse (a time, a duration, a number, a memory size) is refused as ``file:line``
naming the column.  Only the values a job uses are read: a malformed value in a step whose
job line has its own goes unnoticed.  Bytes that are not UTF-8 (a job name in Latin-1) are
read as replacement characters.

**Notices** (``meta["notices"]``, one line each): repaired lines, steps without their job,
renumbered ids, jobs without a Submit, skipped repeated headers, and how many jobs never
started.

Speed: the file is checked for odd lines by one kernel pass over its bytes, read by polars
as strings (the columns used only), and every column is parsed by vectorised polars
expressions on one row per job.
"""

from __future__ import annotations

import gzip
import re
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from .._jit import kernel
from ..errors import DataError, UsageError
from . import jobs as _jobs
from .swf import load_bytes

NEVER_STARTED_STATUS = _jobs.LOG_NEVER_STARTED  # 6: not an SWF code
"""SWF status (field 11) of a job that did not run in the log: it never started (cancelled
while pending, an array's pending remainder) or was still pending, running or suspended when
the dump was taken.  Its ``run`` and ``wait`` are -1."""

# Canonical spelling of every column this reader knows, by lower-case name.
_KNOWN = (
    "JobID", "JobIDRaw", "Submit", "Eligible", "Start", "End", "Elapsed", "Timelimit",
    "NCPUS", "ReqCPUS", "AllocCPUS", "NNodes", "ReqNodes", "ReqMem", "ReqTRES", "AllocTRES",
    "ReqGRES", "AllocGRES", "Partition", "QOS", "Account", "User", "UID", "Group", "GID",
    "State", "Constraints", "NodeList", "JobName", "SubmitLine",
)
_CANONICAL = {name.lower(): name for name in _KNOWN}
_UNUSED = frozenset({"Group", "GID", "JobName", "SubmitLine"})  # accepted, not needed by a replay
# Columns whose text may hold '|' (sacct -P does not escape it) and that can absorb the
# extra fields of a line; their text is not used.
FREE_TEXT = frozenset(
    {"jobname", "submitline", "workdir", "comment", "admincomment", "systemcomment", "stdin", "stdout", "stderr"}
)
_TIMES = ("Submit", "Eligible", "Start", "End")
_DURATIONS = ("Elapsed", "Timelimit")
_INTEGERS = ("NCPUS", "ReqCPUS", "AllocCPUS", "NNodes", "ReqNodes")
_UNKNOWN_TIME = ["Unknown", "None"]
_UNKNOWN_DURATION = ["UNLIMITED", "Partition_Limit", "INVALID", "Unknown", "None"]
_STATE_STATUS = {
    "COMPLETED": 1,
    "FAILED": 0, "OUT_OF_MEMORY": 0, "NODE_FAIL": 0, "BOOT_FAIL": 0, "DEADLINE": 0, "TIMEOUT": 0,
    "CANCELLED": 5, "PREEMPTED": 5, "REQUEUED": 5, "REVOKED": 5,
}
_ACTIVE_STATES = ["PENDING", "RUNNING", "SUSPENDED"]
_MIB = {"K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0**2, "P": 1024.0**3}
# What a Constraints value looks like: features (with an optional *count) joined by & or |,
# with brackets and parentheses; used to tell which column a stray '|' belongs to.
_CONSTRAINT_RE = re.compile(r"[\[(!]*[\w.:+/-]+(\*\d+)?[\])]*(?:[&|][\[(!]*[\w.:+/-]+(\*\d+)?[\])]*)*")
_PLACEHOLDER = 0x1F  # stands for a '|' inside a value while polars splits the line

# Regular expressions of the vectorised parse (Rust regex syntax).
_DURATION_RE = r"^(?:(?P<d>\d+)-)?(?:(?P<h>\d+):)?(?P<m>\d+):(?P<s>\d+)(?:\.\d+)?$"
_MEM_RE = r"^(?P<v>\d+(?:\.\d+)?)(?P<u>[KMGTP]?)(?P<per>[cn]?)$"
_TRES_MEM_RE = r"(?:^|,)mem=(?P<v>\d+(?:\.\d+)?)(?P<u>[KMGTP]?)(?:,|$)"
_TRES_TYPED_GPU_RE = r"(?:^|,)gres/gpu:(?P<t>[^=,]+)=(?P<n>\d+)"
_GRES_GPU_RE = r"(?:^|,)(?:gres[:/])?gpu(?::(?P<t>[^:,(]+))?:(?P<n>\d+)"


def _clock_seconds(s):
    """Seconds of the usual duration shape ``[D-]HH:MM:SS`` (a polars string expression; null
    for anything else): sliced from the right, cheaper than a regular expression."""
    import polars as pl

    def part(start, length=None):
        return s.str.slice(start, length).str.to_integer(strict=False)

    seconds = (s.str.head(-9).str.to_integer(strict=False).fill_null(0) * 86400 + part(-8, 2) * 3600
               + part(-5, 2) * 60 + part(-2))
    shape = s.str.contains(r"^(?:\d+-)?\d\d:\d\d:\d\d$")
    return pl.when(shape).then(seconds)


def _duration_seconds(s):
    """Seconds of every duration shape sacct prints (a string Series; null for the others)."""
    import polars as pl

    g = s.str.extract_groups(_DURATION_RE).struct
    return (g.field("d").cast(pl.Int64).fill_null(0) * 86400 + g.field("h").cast(pl.Int64).fill_null(0) * 3600
            + g.field("m").cast(pl.Int64) * 60 + g.field("s").cast(pl.Int64))


def _tres_int(key: str) -> str:
    return rf"(?:^|,){re.escape(key)}=(\d+)(?:,|$)"


@kernel
def _odd_lines(buf, start, n_fields, out):
    """Find the lines whose field count is not the header's.

    buf: uint8 (n_bytes,), the whole text (``\\n`` line ends); start: byte offset of the
    first data line; n_fields: the header's field count; out: int64 (cap, 4) receives, for
    each odd line in file order (the first ``cap`` of them), its start offset, its end
    offset (its ``\\n``, excluded), its field count (``|`` count + 1; 0 for an empty line) and
    its line number (1-based, the header being line 1).  Returns (data lines, odd lines);
    the count of odd lines goes on past ``cap``.
    """
    n = buf.shape[0]
    cap = out.shape[0]
    lines = 0
    odd = 0
    pipes = 0
    line_start = start
    for i in range(start, n + 1):
        if i < n:
            b = buf[i]
            if b == 124:
                pipes += 1
                continue
            if b != 10:
                continue
        elif line_start == n:  # the text ended with a newline
            break
        fields = pipes + 1 if i > line_start else 0
        if fields != n_fields:
            if odd < cap:
                out[odd, 0] = line_start
                out[odd, 1] = i
                out[odd, 2] = fields
                out[odd, 3] = lines + 2
            odd += 1
        lines += 1
        pipes = 0
        line_start = i + 1
    return lines, odd


def _header_names(first_line: bytes) -> list[str] | None:
    """The column names of a sacct -P header line, or None when the line is not one."""
    text = first_line.decode("utf-8", "replace").lstrip("\ufeff").rstrip("\r\n")
    if "|" not in text:
        return None
    names = [name.strip() for name in text.split("|")]
    lower = {name.lower() for name in names}
    return names if {"jobid", "jobidraw"} & lower else None


def sniff(path) -> bool:
    """Whether the file (plain or gzip) starts with a sacct -P header line."""
    try:
        with open(path, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
            first = f.readline(1 << 16)
    except (OSError, EOFError, zlib.error):
        return False
    return _header_names(first) is not None


def read(path, tz: str = "UTC") -> tuple[_jobs.JobTable, dict]:
    """Read a ``sacct -P`` dump (plain or gzip); see the module docstring.  Returns the job
    table in (submit, job_id) order and its ``meta`` (format, time zone, unix_start_time,
    the name-to-code maps and the notices)."""
    path = Path(path)
    check_time_zone(tz)
    # The file is read in a second thread (reading releases the GIL) while this one loads
    # the kernel and polars, which a process's first reading waits for otherwise.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="schedbench-read") as pool:
        data = pool.submit(load_bytes, path)
        _odd_lines(np.frombuffer(b"\n", dtype=np.uint8), 0, 1, np.empty((1, 4), dtype=np.int64))
        import polars  # noqa: F401
        return parse_bytes(data.result(), str(path), tz)


def check_time_zone(tz: str) -> str:
    """``tz`` when it names a time zone (IANA, as zoneinfo knows them), else a UsageError."""
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"--tz {tz!r}: not a time zone name (an IANA name such as UTC or Europe/Paris)") from None
    return tz


def _plural(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"


class _Lines:
    """Maps the rows polars read to the file's line numbers (blank lines are not rows)."""

    def __init__(self, blank_lines: np.ndarray):
        self.blank = np.sort(blank_lines)

    def of(self, row: int) -> int:
        # row r is line r + 2 when nothing is skipped; each blank line at or before that
        # position shifts it down by one
        line = row + 2
        for b in self.blank:
            if b <= line:
                line += 1
            else:
                break
        return int(line)


def _repair_cuts(line: bytes, names: list[str], name: str, number: int) -> list[int]:
    """Offsets (in ``line``) of the ``|`` that belong inside a value of a line with too many
    fields, or a DataError when no single reading is possible."""
    fields = line.split(b"|")
    extra = len(fields) - len(names)
    lower = [n.lower() for n in names]
    free = [k for k, n in enumerate(lower) if n in FREE_TEXT]
    constraint = lower.index("constraints") if "constraints" in lower else None
    refuse = f"{name}:{number}: {len(fields)} fields where the header has {len(names)}"
    if len(free) > 1:
        raise DataError(f"{refuse} (a '|' inside a value, and {', '.join(names[k] for k in free)} could each hold it)")
    if not free and constraint is None:
        raise DataError(f"{refuse} (no free-text column such as JobName can hold the extra '|')")
    readings = []  # per reading: {column index: extra fields it takes}
    if not free:
        readings.append({constraint: extra})
    elif constraint is None:
        readings.append({free[0]: extra})
    else:
        # The free-text column first: a '|' in a job name (a shell pipeline) is the usual
        # cause; Constraints takes the extra fields only when the free-text reading leaves it
        # no well-formed expression, and then only when one such reading exists.
        for taken in range(extra + 1):
            absorb = {constraint: taken, free[0]: extra - taken}
            value = _value(fields, absorb, constraint)
            if _well_formed(value):
                readings.append(absorb)
                if taken == 0:
                    break
        if len(readings) != 1 and not (readings and readings[0][constraint] == 0):
            raise DataError(f"{refuse} (a '|' inside a value, and both {names[free[0]]} and Constraints could hold it)")
    return _cuts(fields, readings[0])


def _well_formed(value: str) -> bool:
    """Whether ``value`` reads as a Constraints expression (or is empty), brackets balanced."""
    if value == "":
        return True
    if not _CONSTRAINT_RE.fullmatch(value):
        return False
    depth = 0
    for ch in value:
        depth += (ch in "[(") - (ch in "])")
        if depth < 0:
            return False
    return depth == 0


def _cuts(fields: list[bytes], absorb: dict[int, int]) -> list[int]:
    """Byte offsets of the separators inside the columns of ``absorb`` ({column: extra
    fields it takes})."""
    offsets = np.cumsum([len(f) + 1 for f in fields]) - 1  # offset of the '|' after each field
    cuts, raw = [], 0
    for column in range(len(fields) - sum(absorb.values())):
        take = absorb.get(column, 0)
        cuts += [int(offsets[raw + k]) for k in range(take)]
        raw += take + 1
    return cuts


def _value(fields: list[bytes], absorb: dict[int, int], column: int) -> str:
    """The text of ``column`` when the columns of ``absorb`` take that many extra fields."""
    raw = sum(1 + absorb.get(c, 0) for c in range(column))
    return b"|".join(fields[raw : raw + 1 + absorb.get(column, 0)]).decode("utf-8", "replace")


def parse_bytes(data: bytes, name: str = "<bytes>", tz: str = "UTC") -> tuple[_jobs.JobTable, dict]:
    """Parse the whole text of a ``sacct -P`` dump (see :func:`read`); ``name`` stands for
    the file in messages."""
    import polars as pl

    check_time_zone(tz)
    data = bytes(data)
    header_end = data.find(b"\n")
    first = data if header_end < 0 else data[:header_end]
    names = _header_names(first)
    if names is None:
        raise DataError(f"{name}:1: not a sacct -P header (expected '|'-separated column names including JobID or "
                        f"JobIDRaw)")
    if first.endswith(b"\r"):  # CRLF line ends: polars splits at '\n' only
        data = data.replace(b"\r\n", b"\n")
        header_end -= 1
    columns: dict[str, int] = {}
    for k, column in enumerate(names):
        canon = _CANONICAL.get(column.lower())
        if canon is None or canon in _UNUSED:
            continue
        if canon in columns:
            raise DataError(f"{name}:1: column {canon} appears twice")
        columns[canon] = k
    id_column = "JobID" if "JobID" in columns else "JobIDRaw"
    if "Submit" not in columns:
        raise DataError(f"{name}:1: no Submit column (every job needs its submit time; export it with sacct -o "
                        f"...,Submit,...)")
    notices: list[str] = []
    if header_end < 0:
        return _jobs.empty(0), {"format": "sacct", "time_zone": tz, "notices": notices}

    # Lines with the wrong field count, found in one pass over the bytes.
    buf = np.frombuffer(data, dtype=np.uint8)
    odd = np.empty((1024, 4), dtype=np.int64)
    n_lines, n_odd = _odd_lines(buf, header_end + 1, len(names), odd)
    if n_odd > odd.shape[0]:
        odd = np.empty((n_odd, 4), dtype=np.int64)
        _odd_lines(buf, header_end + 1, len(names), odd)
    odd = odd[:n_odd]
    del buf
    blank = odd[odd[:, 2] == 0]
    short = odd[(odd[:, 2] > 0) & (odd[:, 2] < len(names))]
    if short.size:
        raise DataError(f"{name}:{short[0, 3]}: {short[0, 2]} fields where the header has {len(names)}")
    long = odd[odd[:, 2] > len(names)]
    repaired_in: set[str] = set()
    if long.size or blank.size:
        # the text again, in one join: lines with a '|' inside a value get a placeholder
        # there, blank lines are left out (a first blank row would fool polars' field count)
        view, parts, at = memoryview(data), [], header_end + 1
        parts.append(view[:at])
        for start, end, fields, number in odd[np.argsort(odd[:, 0])]:
            parts.append(view[at:start])
            if fields == 0:
                at = end + 1
                continue
            line = bytearray(view[start:end])
            cuts = _repair_cuts(bytes(line), names, name, int(number))
            repaired_in.update(_columns_cut(bytes(line), names, cuts))
            for cut in cuts:
                line[cut] = _PLACEHOLDER
            parts.append(line)
            at = end
        parts.append(view[at:])
        data = b"".join(parts)
        del view, parts
        n_lines -= blank.shape[0]
    if long.size:
        notices.append(f"{name}:{long[0, 3]}: {_plural(long.shape[0], 'line has', 'lines have')} more fields than "
                       f"the header (a '|' inside a value; the first here): read with the extra fields joined into "
                       f"{', '.join(sorted(repaired_in))}")
    lines = _Lines(blank[:, 3])
    if n_lines == 0:
        return _jobs.empty(0), {"format": "sacct", "time_zone": tz, "notices": notices}

    used = sorted(columns.items(), key=lambda item: item[1])
    options = dict(separator="|", quote_char=None, has_header=False, skip_rows=1, infer_schema=False,
                   columns=[k for _, k in used])
    try:
        df = pl.read_csv(data, **options)
    except pl.exceptions.ComputeError as exc:  # not UTF-8 (a job name in Latin-1): a fifth slower, so second
        if "utf-8" not in str(exc).lower():
            raise
        df = pl.read_csv(data, encoding="utf8-lossy", **options)
    df.columns = [c for c, _ in used]  # polars' own names for unnamed columns vary between versions
    del data
    if "Constraints" in repaired_in:
        df = df.with_columns(pl.col("Constraints").str.replace_all(chr(_PLACEHOLDER), "|", literal=True))

    rows = None  # the rows kept, when some are dropped
    repeated = df.get_column(id_column) == names[columns[id_column]]
    if repeated.any():
        rows = np.flatnonzero(~repeated.to_numpy())
        notices.append(f"{name}:{lines.of(int(np.flatnonzero(repeated.to_numpy())[0]))}: "
                       f"{_plural(int(repeated.sum()), 'line repeats', 'lines repeat')} the header (dumps appended "
                       f"one after another; the first here): skipped")
        df = df.filter(~repeated)

    def line_of(row: int) -> int:
        return lines.of(int(rows[row]) if rows is not None else row)

    folded, source = _fold(df, id_column, name, line_of, notices)
    return _build(folded, source, columns, id_column, tz, name, line_of, notices)


def _columns_cut(line: bytes, names: list[str], cuts: list[int]) -> set[str]:
    """The columns whose values hold the separators at ``cuts``."""
    seps = [m.start() for m in re.finditer(rb"\|", line)]
    out, column = set(), 0
    for at in seps:
        if at in cuts:
            out.add(names[column])
        else:
            column += 1
    return out


def _fold(df, id_column: str, name: str, line_of, notices: list[str]):
    """One row per job: the steps of a job folded into it (see the module docstring).

    Returns the folded frame and, per column, the int64 (n_jobs,) row of ``df`` each job's
    value came from (for error messages)."""
    ids = df.get_column(id_column)
    if ids.null_count():
        row = int(ids.is_null().arg_true()[0])
        raise DataError(f"{name}:{line_of(row)}: no {id_column}")
    is_step = ids.str.contains(".", literal=True)
    n = df.height
    if not is_step.any():
        heads = np.arange(n, dtype=np.int64)
        return df, dict.fromkeys(df.columns, heads)
    base = ids.str.split_exact(".", 1).struct.field("field_0")
    new = (~is_step) | (base != base.shift(1)).fill_null(True)
    new_np = new.to_numpy()
    heads = np.flatnonzero(new_np)
    group = np.cumsum(new_np) - 1
    orphans = is_step.to_numpy()[heads]
    if orphans.any():
        first = int(heads[np.flatnonzero(orphans)[0]])
        notices.append(f"{name}:{line_of(first)}: {_plural(int(orphans.sum()), 'job', 'jobs')} whose steps have no "
                       f"job line (the first here): each read from its steps as a job of its own")
    out = df.filter(new)  # cheaper than a gather by index
    source = {}
    fills = {}
    for column in df.columns:
        values = df.get_column(column)
        tokens = _UNKNOWN_TIME if column in _TIMES else []
        head_values = out.get_column(column)
        head_missing = head_values.is_null() | (head_values.is_in(tokens) if tokens else False)
        src = heads
        if head_missing.any():
            missing = (values.is_null() | (values.is_in(tokens) if tokens else False)).to_numpy()
            valid = np.flatnonzero(~missing)
            g = group[valid]
            first = np.ones(valid.size, dtype=bool)
            first[1:] = g[1:] != g[:-1]
            groups, rows = g[first], valid[first]
            take = head_missing.to_numpy()[groups]
            if take.any():
                src = heads.copy()
                src[groups[take]] = rows[take]
                fills[column] = values.gather(src)
        source[column] = src
    if fills:
        out = out.with_columns(**fills)
    return out, source


def _build(f, source, columns, id_column, tz, name, line_of, notices):
    """The job table and meta of the folded frame ``f`` (one row per job)."""
    import polars as pl

    n = f.height
    has = set(f.columns)

    def fail(column: str, bad, what: str) -> None:
        bad = np.asarray(bad, dtype=bool)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            value = f.get_column(column)[j]
            raise DataError(f"{name}:{line_of(int(source[column][j]))}: column {column}: {value!r} is not {what}")

    # ---- parse: the columns every job needs in one select (polars evaluates the expressions
    # side by side); the fallbacks (CPUs from ReqTRES, memory from ReqTRES, GPUs from the
    # allocation or GRES) only on the rows that need them
    exprs = {}
    for column in _TIMES:
        if column in has:
            exprs[column] = pl.col(column).str.strptime(pl.Datetime("us"), "%Y-%m-%dT%H:%M:%S", strict=False)
    for column in _DURATIONS:
        if column in has:
            exprs[column] = _clock_seconds(pl.col(column))
    for column in _INTEGERS:
        if column in has:
            exprs[column] = pl.col(column).str.to_integer(strict=False)
    if "ReqMem" in has:
        exprs["ReqMem"] = pl.col("ReqMem").str.extract_groups(_MEM_RE)
    if "ReqTRES" in has:
        exprs["ReqTRES.node"] = pl.col("ReqTRES").str.extract(_tres_int("node"), 1).cast(pl.Int64)
        exprs["ReqTRES.gpu"] = pl.col("ReqTRES").str.extract(_tres_int("gres/gpu"), 1).cast(pl.Int64)
        exprs["ReqTRES.typed"] = pl.col("ReqTRES").str.extract_groups(_TRES_TYPED_GPU_RE)
    if "State" in has:
        exprs["State"] = pl.col("State").str.split_exact(" ", 1).struct.field("field_0")  # "CANCELLED by 0"
    p = f.select(**exprs) if exprs else pl.DataFrame()

    def int_of(key):
        return p.get_column(key).fill_null(-1).to_numpy() if key in p.columns else None

    def on_rows(need: np.ndarray, column: str, parse) -> tuple[np.ndarray, pl.Series | pl.DataFrame | None]:
        """``parse`` (a function of a string Series) applied to ``column`` on the rows where
        ``need`` holds: (those rows, its result)."""
        rows = np.flatnonzero(need) if column in has else np.empty(0, dtype=np.int64)
        return rows, (parse(f.get_column(column).gather(rows)) if rows.size else None)

    # times: seconds since the epoch (int64, -1 unknown)
    times = {}
    for column in _TIMES:
        if column not in has:
            continue
        raw = f.get_column(column)
        parsed = p.get_column(column)
        unknown = raw.is_null() | raw.is_in(_UNKNOWN_TIME)
        bad = parsed.is_null() & ~unknown
        if bad.any():  # a space between date and time
            parsed = parsed.fill_null(raw.str.strptime(pl.Datetime("us"), "%Y-%m-%d %H:%M:%S", strict=False))
            bad = parsed.is_null() & ~unknown
        fail(column, bad.to_numpy(), "a time (YYYY-MM-DDTHH:MM:SS, Unknown or None)")
        if tz != "UTC":
            local = parsed.dt.replace_time_zone(tz, ambiguous="earliest", non_existent="null")
            fail(column, (local.is_null() & parsed.is_not_null()).to_numpy(),
                 f"a time in {tz} (a daylight-saving change skips it)")
            parsed = local
        times[column] = parsed.dt.epoch("s").fill_null(-1).to_numpy()

    durations = {}
    for column in _DURATIONS:
        if column not in has:
            continue
        seconds = p.get_column(column).fill_null(-1).to_numpy().copy()  # (polars gives a read-only view)
        # the other shapes (MM:SS, a fraction) and the words, on their rows only
        raw = f.get_column(column)
        rows, other = on_rows((seconds < 0) & raw.is_not_null().to_numpy(), column, _duration_seconds)
        if rows.size:
            words = f.get_column(column).gather(rows).is_in(_UNKNOWN_DURATION).to_numpy()
            value = other.fill_null(-1).to_numpy()
            bad = np.zeros(n, dtype=bool)
            bad[rows] = (value < 0) & ~words
            fail(column, bad, "a duration ([D-]HH:MM:SS, MM:SS, UNLIMITED or Partition_Limit)")
            seconds[rows] = value
        durations[column] = seconds

    integers = {}
    for column in _INTEGERS:
        if column in has:
            value = p.get_column(column)
            fail(column, (value.is_null() & f.get_column(column).is_not_null()).to_numpy(), "an integer")
            integers[column] = value.fill_null(-1).to_numpy()

    def first_positive(*arrays):
        out = np.full(n, -1, dtype=np.int64)
        for a in arrays:
            if a is not None:
                np.copyto(out, a, where=(out <= 0) & (a > 0))
        return out

    def fill_from(out: np.ndarray, need: np.ndarray, column: str, parse) -> np.ndarray:
        """``out`` with the rows where ``need`` holds replaced by the positive values ``parse``
        finds in ``column`` there."""
        rows, found = on_rows(need, column, parse)
        if rows.size:
            value = found.fill_null(-1).to_numpy()
            out[rows[value > 0]] = value[value > 0]
        return out

    # ---- resources
    # NNodes first: for a job that ran it is the node count it ran on (a ReqTRES node= below
    # it would spread its CPUs over too few nodes); for a pending job, the request
    nodes = np.maximum(first_positive(integers.get("NNodes"), int_of("ReqTRES.node"), integers.get("ReqNodes")), 1)
    cpus = first_positive(integers.get("AllocCPUS"), integers.get("NCPUS"), integers.get("ReqCPUS"))
    cpus = fill_from(cpus, cpus <= 0, "ReqTRES", lambda s: s.str.extract(_tres_int("cpu"), 1).cast(pl.Int64))
    cpus = np.where(cpus > 0, cpus, nodes)
    unit_cores = -(-cpus // nodes)

    gpus = np.full(n, -1, dtype=np.int64)
    gpu_type = pl.Series(np.full(n, None, dtype=object), dtype=pl.String)
    if "ReqTRES" in has:
        typed = p.get_column("ReqTRES.typed").struct
        gpus = first_positive(int_of("ReqTRES.gpu"), typed.field("n").cast(pl.Int64).fill_null(-1).to_numpy())
        gpu_type = typed.field("t")
    for tres in ("AllocTRES",) if "AllocTRES" in has else ():
        def alloc_gpus(s):
            return pl.DataFrame({"s": s}).select(
                pl.coalesce(pl.col("s").str.extract(_tres_int("gres/gpu"), 1),
                            pl.col("s").str.extract(_TRES_TYPED_GPU_RE, 2)).cast(pl.Int64)).to_series()
        gpus = fill_from(gpus, (gpus <= 0) & f.get_column(tres).str.contains("gres/gpu", literal=True)
                         .fill_null(False).to_numpy(), tres, alloc_gpus)
    for gres in ("ReqGRES", "AllocGRES"):
        if gres not in has:
            continue
        present = f.get_column(gres).str.contains("gpu", literal=True).fill_null(False).to_numpy()
        need = present & ((gpus <= 0) | (gpu_type.is_null().to_numpy() if gres == "ReqGRES" else False))
        rows, found = on_rows(need, gres, lambda s: s.str.extract_groups(_GRES_GPU_RE))
        if rows.size:
            count = (found.struct.field("n").cast(pl.Int64).fill_null(-1).to_numpy() * nodes[rows])
            take = (gpus[rows] <= 0) & (count > 0)
            gpus[rows[take]] = count[take]
            if gres == "ReqGRES":
                kind = np.full(n, None, dtype=object)
                kind[rows] = found.struct.field("t").to_numpy()
                gpu_type = gpu_type.fill_null(pl.Series(kind, dtype=pl.String))
    gpus = np.maximum(gpus, 0)
    unit_gpus = -(-gpus // nodes)

    mem = np.zeros(n, dtype=np.float64)  # MiB per node
    if "ReqMem" in has:
        g = p.get_column("ReqMem").struct
        raw = f.get_column("ReqMem")
        value = g.field("v").cast(pl.Float64)
        fail("ReqMem", (value.is_null() & raw.is_not_null()).to_numpy(), "a memory size (such as 4000M, 4Gc or 16Gn)")
        mib = (value * g.field("u").replace_strict(_MIB, default=1.0, return_dtype=pl.Float64)).fill_null(0).to_numpy()
        per_cpu = (g.field("per") == "c").fill_null(False).to_numpy()
        mem = np.where(per_cpu, mib * unit_cores, mib)

    def tres_mem(s):
        g = s.str.extract_groups(_TRES_MEM_RE).struct
        return g.field("v").cast(pl.Float64) * g.field("u").replace_strict(_MIB, default=1.0, return_dtype=pl.Float64)

    rows, total = on_rows(mem <= 0, "ReqTRES", tres_mem)
    if rows.size:
        mem[rows] = total.fill_null(0).to_numpy() / nodes[rows]
    unit_mem = np.ceil(mem).astype(np.int64)

    # ---- times, started or not
    submit_epoch = times["Submit"]
    arrival = submit_epoch.copy()
    if "Eligible" in times:
        eligible = times["Eligible"]
        later = (eligible >= 0) & (submit_epoch >= 0) & (eligible >= submit_epoch)
        arrival[later] = eligible[later]
    start = times.get("Start", np.full(n, -1, dtype=np.int64))
    end = times.get("End")
    run = durations.get("Elapsed", np.full(n, -1, dtype=np.int64)).copy()
    if end is not None:
        from_times = np.where((end >= 0) & (start >= 0), end - start, -1)
        run = np.where(run >= 0, run, from_times)
    ran = (start >= 0) & (run >= 0)
    if end is not None:
        ran &= end >= 0
    if "NodeList" in has:
        ran &= (f.get_column("NodeList") != "None assigned").fill_null(True).to_numpy()
    if "AllocCPUS" in integers:
        ran &= integers["AllocCPUS"] != 0
    state = p.get_column("State") if "State" in has else pl.Series(np.full(n, None, dtype=object), dtype=pl.String)
    ran &= ~state.is_in(_ACTIVE_STATES).fill_null(False).to_numpy()
    status = state.replace_strict(_STATE_STATUS, default=-1, return_dtype=pl.Int64).to_numpy()
    status = np.where(ran, status, NEVER_STARTED_STATUS)
    run = np.where(ran, run, -1)
    wait = np.where(ran, np.maximum(start - arrival, 0), -1)

    known = arrival >= 0
    t0 = int(arrival[known].min()) if known.any() else None
    submit = np.where(known, arrival - (t0 or 0), -1)
    if not known.all():
        j = int(np.flatnonzero(~known)[0])
        notices.append(f"{name}:{line_of(int(source['Submit'][j]))}: "
                       f"{_plural(int((~known).sum()), 'job has', 'jobs have')} no Submit time (the first here): "
                       f"left out of the replay as dropped_no_submit")

    time_req = durations.get("Timelimit", np.full(n, -1, dtype=np.int64))

    # ---- ids
    raw_id = "JobIDRaw" if "JobIDRaw" in has else id_column
    job_id = (f.get_column(raw_id).str.split_exact(".", 1).struct.field("field_0")
              .str.to_integer(strict=False))
    renumber = (job_id.is_null() | ~job_id.is_first_distinct() & job_id.is_not_null()).to_numpy()
    job_id = job_id.fill_null(-1).to_numpy()
    if renumber.any():
        top = int(job_id[~renumber].max()) if (~renumber).any() else 0
        job_id = job_id.copy()
        job_id[renumber] = max(top, 0) + 1 + np.arange(int(renumber.sum()))
        notices.append(f"{name}: {_plural(int(renumber.sum()), 'job has', 'jobs have')} no integer {raw_id} or one "
                       f"an earlier job has: numbered from {max(top, 0) + 1:,} in the file's order")

    # ---- codes
    meta: dict = {"format": "sacct", "time_zone": tz, "unix_start_time": t0}

    def codes(column, key):
        if column not in has:
            meta[key] = {}
            return np.full(n, -1, dtype=np.int64)
        values = f.get_column(column)
        names = sorted(values.drop_nulls().unique().to_list())
        meta[key] = {v: k for k, v in enumerate(names)}
        return values.cast(pl.Enum(names)).to_physical().cast(pl.Int64).fill_null(-1).to_numpy()

    partition = codes("Partition", "partitions")
    queue = codes("QOS", "qos")
    group = codes("Account", "accounts")
    user = _users(f, has, meta)

    constraint_text = f.get_column("Constraints") if "Constraints" in has else gpu_type.clear(n)
    if gpu_type.null_count() < n:  # a typed GPU request: its term ANDed to the expression
        constraint_text = pl.DataFrame({"c": constraint_text, "t": gpu_type}).select(
            pl.when(pl.col("t").is_null()).then(pl.col("c"))
            .when(pl.col("c").is_null()).then(pl.lit("gpu:") + pl.col("t"))
            .when(pl.col("c").str.contains("|", literal=True)).then("(" + pl.col("c") + ")&gpu:" + pl.col("t"))
            .otherwise(pl.col("c") + "&gpu:" + pl.col("t")).alias("e")
        ).get_column("e")
    exprs_list = sorted(constraint_text.drop_nulls().unique().to_list())
    meta["constraints"] = exprs_list
    constraint = constraint_text.cast(pl.Enum(exprs_list)).to_physical().cast(pl.Int64).fill_null(-1).to_numpy()

    never = int(np.count_nonzero(~ran))
    if never:
        notices.append(f"{name}: {_plural(never, 'job', 'jobs')} did not run in the log (cancelled while pending, or "
                       f"pending, running or suspended when it was dumped): left out of the replay as never_started")
    meta["notices"] = notices

    mem_req = np.where(unit_mem > 0, unit_mem * 1024 // np.maximum(unit_cores, 1), -1)
    table = _jobs.from_columns(
        n, job_id=job_id, submit=submit, wait=wait, run=run, procs_alloc=cpus, procs_req=cpus,
        time_req=time_req, mem_req=mem_req, status=status, user=user, group=group, queue=queue,
        partition=partition, units=nodes, unit_cores=unit_cores, unit_gpus=unit_gpus,
        unit_mics=np.zeros(n, dtype=np.int64), unit_mem=unit_mem, req_nodes=nodes, estimate=time_req,
        contiguous=np.zeros(n, dtype=np.int64), constraint=constraint,
    )
    order = np.lexsort((table.job_id, table.submit))
    return table.take(order), meta


def _users(f, has, meta) -> np.ndarray:
    """``user`` per job of the folded frame ``f``: the UID where it is a number, else a code
    of the User name numbered after the largest UID (in sorted-name order); sets
    ``meta["users"]`` = {name: that number}."""
    import polars as pl

    uid = np.full(f.height, -1, dtype=np.int64)
    if "UID" in has:
        uid = f.get_column("UID").str.to_integer(strict=False).fill_null(-1).to_numpy()
    if "User" not in has:
        meta["users"] = {}
        return uid
    names = f.get_column("User")
    need = (uid < 0) & names.is_not_null().to_numpy()
    unnumbered = sorted(names.filter(pl.Series(need)).unique().to_list())
    base = int(uid.max()) + 1 if (uid >= 0).any() else 0
    user = uid.copy()
    if unnumbered:
        codes = names.cast(pl.Enum(unnumbered), strict=False).to_physical().cast(pl.Int64).fill_null(-1).to_numpy()
        user[need] = base + codes[need]
    pairs = pl.DataFrame({"name": names, "user": user}).filter(pl.col("name").is_not_null() & (pl.col("user") >= 0))
    pairs = pairs.sort("name", "user").unique("name", keep="first", maintain_order=True)
    meta["users"] = dict(zip(pairs.get_column("name").to_list(), pairs.get_column("user").to_list(), strict=True))
    return user
