"""Standard Workload Format (SWF) logs of the Parallel Workloads Archive: read and write.

``read(path)`` returns ``(JobTable, SWFHeader)``.  The data lines are parsed by one numba
kernel over the raw bytes (no Python loop per line); the header comment block is parsed in
Python into typed fields, tolerant of the variants real logs use (``;Key:`` or ``; Key:``,
right-aligned keywords, trailing text after numbers, continuation lines, no header at all).
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import os
import re
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np
from isal import igzip, isal_zlib

from ..errors import DataError
from . import jobs as _jobs
from .aside import written_aside

N_FIELDS = 18

# Kernel error codes.
_OK = 0
_BAD_TOKEN = 1
_BAD_COUNT = 2


MAX_DIGITS = 18  # integer digits of a field: 10**18 - 1 and sums of a few such stay within int64
_NUMBER_RE = re.compile(r"[+-]?(\d*)(?:\.\d*)?")


def _too_long_number(line: str) -> bool:
    """Whether the first token of ``line`` the kernel refuses is a number of more than
    MAX_DIGITS integer digits rather than not a number (the kernel returns one error for
    both)."""
    for token in line.split():
        m = _NUMBER_RE.fullmatch(token)
        if m is None or not any(c.isdigit() for c in token):
            return False
        if len(m.group(1)) > MAX_DIGITS:
            return True
    return False


class SWFError(DataError):
    """A malformed SWF log; the message names the file and, where it applies, the line."""


@dataclass
class Queue:
    number: int
    name: str


@dataclass
class SWFHeader:
    """Typed header of an SWF log.  Integer fields are ``None`` when absent or unreadable;
    ``raw`` keeps each keyword's full original text (for instance ``MaxNodes: 400 (48
    interactive, ...)``) so that writing a header loses nothing.

    ``out_of_order`` (data lines whose submit time is earlier than the previous line's),
    ``negative_submits`` ((lines, first line, its value) of the data lines whose submit
    time is negative, None when there is none), ``fractions`` ((lines, first line) of the
    data lines holding a number with a non-zero fraction, truncated; None when there is
    none) and ``path`` describe one reading of a file and take no part in equality.
    """

    version: str | None = None
    computer: str | None = None
    installation: str | None = None
    acknowledge: str | None = None
    information: str | None = None
    conversion: str | None = None
    max_jobs: int | None = None
    max_records: int | None = None
    preemption: str | None = None
    unix_start_time: int | None = None
    time_zone: int | None = None
    time_zone_string: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    max_nodes: int | None = None
    max_procs: int | None = None
    max_runtime: int | None = None
    max_memory: int | None = None
    allow_overuse: str | None = None
    max_queues: int | None = None
    queues: list[Queue] = field(default_factory=list)
    max_partitions: int | None = None
    partitions: list[Queue] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict, compare=False)
    out_of_order: int = field(default=0, compare=False)
    negative_submits: tuple[int, int, int] | None = field(default=None, compare=False)
    fractions: tuple[int, int] | None = field(default=None, compare=False)
    path: str | None = field(default=None, compare=False)

    def machine_procs(self) -> int | None:
        """MaxProcs, else MaxNodes, else None (the spec's machine size before the fallback
        to the widest job)."""
        for value in (self.max_procs, self.max_nodes):
            if value is not None and value > 0:
                return value
        return None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


# keyword (case- and space-insensitive) -> (attribute, kind)
_KEYS: dict[str, tuple[str, str]] = {
    "version": ("version", "str"),
    "computer": ("computer", "str"),
    "installation": ("installation", "str"),
    "acknowledge": ("acknowledge", "str"),
    "information": ("information", "str"),
    "conversion": ("conversion", "str"),
    "maxjobs": ("max_jobs", "int"),
    "maxrecords": ("max_records", "int"),
    "preemption": ("preemption", "str"),
    "unixstarttime": ("unix_start_time", "int"),
    "timezone": ("time_zone", "int"),
    "timezonestring": ("time_zone_string", "str"),
    "starttime": ("start_time", "str"),
    "endtime": ("end_time", "str"),
    "maxnodes": ("max_nodes", "int"),
    "maxprocs": ("max_procs", "int"),
    "maxruntime": ("max_runtime", "int"),
    "maxmemory": ("max_memory", "int"),
    "allowoveruse": ("allow_overuse", "str"),
    "maxqueues": ("max_queues", "int"),
    "queue": ("queues", "queue"),
    "queues": ("queues", "queue"),
    "maxpartitions": ("max_partitions", "int"),
    "partition": ("partitions", "queue"),
    "partitions": ("partitions", "queue"),
    "note": ("notes", "note"),
    "notes": ("notes", "note"),
}
# Canonical spelling of each attribute's keyword, in the order the writer emits them.
_CANONICAL: dict[str, str] = {
    "version": "Version",
    "computer": "Computer",
    "installation": "Installation",
    "acknowledge": "Acknowledge",
    "information": "Information",
    "conversion": "Conversion",
    "max_jobs": "MaxJobs",
    "max_records": "MaxRecords",
    "preemption": "Preemption",
    "unix_start_time": "UnixStartTime",
    "time_zone": "TimeZone",
    "time_zone_string": "TimeZoneString",
    "start_time": "StartTime",
    "end_time": "EndTime",
    "max_nodes": "MaxNodes",
    "max_procs": "MaxProcs",
    "max_runtime": "MaxRuntime",
    "max_memory": "MaxMemory",
    "allow_overuse": "AllowOveruse",
    "max_queues": "MaxQueues",
    "max_partitions": "MaxPartitions",
}
_KEY_RE = re.compile(r"^(\s*)([A-Za-z][A-Za-z0-9_ ]{0,30}?)\s*:(\s?)(.*)$")
_INT_RE = re.compile(r"^\s*([-+]?\d+)")
_QUEUE_RE = re.compile(r"^\s*([-+]?\d+)\s*(.*?)\s*$")


def _leading_int(text: str) -> int | None:
    m = _INT_RE.match(text)
    return int(m.group(1)) if m else None


def parse_header(lines: list[str]) -> SWFHeader:
    """Typed header from comment lines (each still starting with ``;``, optionally preceded
    by blanks).

    A ``Keyword: value`` line sets a field; a line that is not a keyword line continues the
    previous string field, note or unknown keyword (joined by newlines); a blank ``;``
    line ends a continuation.  An unknown single-word keyword is kept in ``extra`` unless
    it is indented as far as the previous value, where it is continuation text that happens
    to hold a colon.
    """
    if isinstance(lines, (str, bytes)):
        raise TypeError("parse_header takes a list of lines, not one string")
    header = SWFHeader()
    last: tuple[str, str] | None = None  # (attribute or extra key, kind) a continuation extends
    value_col = 0  # where the previous keyword's value starts: deeper lines continue it
    for line in lines:
        body = line.lstrip()[1:]  # drop the ';'
        if not body.strip():
            last = None
            continue
        indent = len(body) - len(body.lstrip())
        m = _KEY_RE.match(body)
        key = m.group(2).replace(" ", "").lower() if m else None
        if m and key in _KEYS:
            attr, kind = _KEYS[key]
            value = m.group(4).rstrip()
            if kind == "note":
                header.notes.append(value.strip())
            elif kind == "queue":
                qm = _QUEUE_RE.match(value)
                if qm:
                    getattr(header, attr).append(Queue(int(qm.group(1)), qm.group(2)))
                else:
                    getattr(header, attr).append(Queue(-1, value.strip()))
            else:
                header.raw[attr] = value.strip()
                setattr(header, attr, _leading_int(value) if kind == "int" else value.strip())
            last = (attr, kind)
            value_col = m.start(4) + len(value) - len(value.lstrip())
        elif (
            m
            and " " not in m.group(2).strip()
            and (m.group(3) or not m.group(4))  # "Key: value", not "http://..."
            and (last is None or indent < value_col)
        ):
            name = m.group(2).strip()
            value = m.group(4)
            header.extra[name] = value.strip()
            last = (name, "extra")
            value_col = m.start(4) + len(value) - len(value.lstrip())
        else:
            text = body.strip()
            kind = last[1] if last is not None else None
            if kind == "note":
                header.notes[-1] = f"{header.notes[-1]}\n{text}"
            elif kind == "str":
                joined = f"{getattr(header, last[0])}\n{text}"
                setattr(header, last[0], joined)
                header.raw[last[0]] = joined
            elif kind == "int":
                # e.g. "MaxNodes: 400 (48 interactive," wrapped: the number stands, the
                # explanation stays in ``raw``.
                header.raw[last[0]] = f"{header.raw[last[0]]}\n{text}"
            elif kind == "extra":
                header.extra[last[0]] = f"{header.extra[last[0]]}\n{text}"
            else:
                header.notes.append(text)
                last = ("notes", "note")
                value_col = indent
    return header


def format_header(header: SWFHeader) -> list[str]:
    """Header comment lines (without newlines) that :func:`parse_header` reads back equal."""
    if not isinstance(header, SWFHeader):
        raise TypeError(f"expected an SWFHeader, not {type(header).__name__}")
    out: list[str] = []

    def emit(keyword: str, value: str) -> None:
        # Continuation lines are indented to the value's column, which is what tells
        # parse_header they are not keywords of their own.
        first, *rest = value.split("\n")
        out.append(f"; {keyword}: {first}".rstrip())
        out.extend(f";{' ' * (len(keyword) + 3)}{more}" for more in rest)

    for attr, keyword in _CANONICAL.items():
        value = getattr(header, attr)
        raw = header.raw.get(attr)
        if value is None:
            if raw is not None:  # present but not a number ("MaxNodes: unknown")
                emit(keyword, raw)
            continue
        if isinstance(value, int):
            text = raw if raw is not None and _leading_int(raw) == value else str(value)
        else:
            text = value
        emit(keyword, text)
    for q in header.queues:
        out.append(f"; Queue: {q.number} {q.name}".rstrip())
    for p in header.partitions:
        out.append(f"; Partition: {p.number} {p.name}".rstrip())
    for key, value in header.extra.items():
        emit(key, value)
    for note in header.notes:
        out.append(";")
        emit("Note", note)
    return out


@numba.njit(cache=True, nogil=True)
def _parse_kernel(buf, out, line_of):
    """Parse the data lines of an SWF text.

    buf: uint8[n_bytes], the whole decompressed file.
    out: int64[18, max_records], filled column-major (field, record).
    line_of: int64[max_records], receives the 1-based line number of each record.
    Returns (n_records, error_code, error_line, error_offset, fraction_lines,
    first_fraction_line): error_offset is the byte offset of the offending line's start;
    fraction_lines counts the data lines holding a number with a non-zero fraction (the
    first is first_fraction_line, 0 when there is none).  Comment lines (first non-blank
    byte ';') and blank lines are skipped; decimals are truncated toward zero.
    """
    n = buf.shape[0]
    i = 0
    line = 0
    rec = 0
    fraction_lines = 0
    first_fraction = 0
    while i < n:
        line += 1
        start = i
        while i < n and (buf[i] == 32 or buf[i] == 9 or buf[i] == 13):
            i += 1
        if i >= n:
            break
        if buf[i] == 10:
            i += 1
            continue
        if buf[i] == 59:  # ';'
            while i < n and buf[i] != 10:
                i += 1
            i += 1
            continue
        f = 0
        fraction = False
        while True:
            while i < n and (buf[i] == 32 or buf[i] == 9 or buf[i] == 13):
                i += 1
            if i >= n or buf[i] == 10:
                break
            neg = False
            if buf[i] == 45:
                neg = True
                i += 1
            elif buf[i] == 43:
                i += 1
            val = 0
            digits = 0
            while i < n and buf[i] >= 48 and buf[i] <= 57:
                val = val * 10 + (buf[i] - 48)
                digits += 1
                i += 1
            # More integer digits would wrap int64 silently: refuse instead.
            too_long = digits > MAX_DIGITS
            if i < n and buf[i] == 46:  # '.': fractional part, truncated
                i += 1
                while i < n and buf[i] >= 48 and buf[i] <= 57:
                    fraction |= buf[i] != 48
                    digits += 1
                    i += 1
            if too_long or digits == 0 or (
                i < n and buf[i] != 32 and buf[i] != 9 and buf[i] != 13 and buf[i] != 10
            ):
                return rec, _BAD_TOKEN, line, start, fraction_lines, first_fraction
            if f < 18:
                out[f, rec] = -val if neg else val
            f += 1
        if f != 18:
            return rec, _BAD_COUNT, line, start, fraction_lines, first_fraction
        if fraction:
            if fraction_lines == 0:
                first_fraction = line
            fraction_lines += 1
        line_of[rec] = line
        rec += 1
        i += 1
    return rec, _OK, 0, 0, fraction_lines, first_fraction


_PARSE_TYPES = tuple(
    numba.typeof(a)
    for a in (np.frombuffer(b"\n", dtype=np.uint8), np.empty((N_FIELDS, 1), dtype=np.int64), np.empty(1, dtype=np.int64))
)
"""The argument types parse_bytes calls :func:`_parse_kernel` with (a read-only buffer)."""


def load_bytes(path: Path) -> bytes:
    """A log file's bytes, inflated when it is gzip (ISA-L); SWFError (a DataError) naming
    the file when it cannot be read or its gzip data is corrupt.  The SWF, Alea and sacct
    readers all read through it."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SWFError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if data[:2] == b"\x1f\x8b":
        try:  # ISA-L's inflate: 2.7-3x the standard library's on the PWA logs (half of a warm parse)
            data = igzip.decompress(data)
        except (EOFError, OSError, zlib.error, isal_zlib.error) as exc:
            raise SWFError(f"{path}: truncated or corrupt gzip data ({exc})") from None
    return data


def _line_text(data: bytes, offset: int) -> str:
    end = data.find(b"\n", offset)
    text = data[offset : end if end >= 0 else len(data)]
    return text.decode("latin-1").rstrip("\r").strip()


def parse_bytes(data: bytes, name: str = "<bytes>") -> tuple[_jobs.JobTable, SWFHeader]:
    """Parse a whole decompressed SWF text (see :func:`read`); ``name`` stands for the file
    in error messages."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"parse_bytes takes bytes, not {type(data).__name__}")
    data = bytes(data)
    # The header is the leading block of comment and blank lines.
    header_lines: list[str] = []
    pos = 0
    for raw_line in io.BytesIO(data):
        stripped = raw_line.strip()
        if stripped and not stripped.startswith(b";"):
            break
        pos += len(raw_line)
        if stripped:
            header_lines.append(raw_line.decode("latin-1").rstrip("\r\n"))
    header = parse_header(header_lines)
    header.path = name

    buf = np.frombuffer(data, dtype=np.uint8)
    max_records = int(np.count_nonzero(buf == 10)) + 1
    out = np.empty((N_FIELDS, max_records), dtype=np.int64)
    line_of = np.empty(max_records, dtype=np.int64)
    n, err, err_line, err_offset, fraction_lines, first_fraction = _parse_kernel(buf, out, line_of)
    if err != _OK:
        what = "a non-numeric token" if err == _BAD_TOKEN else "the wrong number of fields"
        if err == _BAD_TOKEN and _too_long_number(_line_text(data, err_offset)):
            what = f"a number of more than {MAX_DIGITS} digits (past int64's reach of sums)"
        if err == _BAD_COUNT:
            count = len(_line_text(data, err_offset).split())
            what = f"{count} fields instead of {N_FIELDS}"
        raise SWFError(f"{name}:{err_line}: {what}: {_line_text(data, err_offset)!r}")
    line_of = line_of[:n]
    columns = {f: out[k, :n] for k, f in enumerate(_jobs.SWF_FIELDS)}

    submit, job_id = columns["submit"], columns["job_id"]
    header.out_of_order = int(np.count_nonzero(submit[1:] < submit[:-1])) if n > 1 else 0
    if fraction_lines:
        header.fractions = (int(fraction_lines), int(first_fraction))
    if n and submit.min() < 0:  # such jobs are left out of a replay (contract §2): say where they are
        negative = np.flatnonzero(submit < 0)
        header.negative_submits = (int(negative.size), int(line_of[negative[0]]), int(submit[negative[0]]))

    # Real logs almost always list ids increasing and submits non-decreasing: those checks
    # are linear, and the sorts (a third of the time on a million lines) are only paid when
    # they fail.
    ids_increasing = n < 2 or bool(np.all(job_id[1:] > job_id[:-1]))
    rows = None if ids_increasing else _jobs.duplicate_rows(job_id)
    if rows is not None:
        a, b = sorted((int(line_of[rows[0]]), int(line_of[rows[1]])))
        raise SWFError(f"{name}: duplicate job id {int(job_id[rows[0]])} on lines {a} and {b}")

    if header.out_of_order == 0 and ids_increasing:
        # Already in (submit, id) order: the rows of ``out`` serve as the columns, uncopied.
        fields = [columns[f] for f in _jobs.SWF_FIELDS]
    else:
        order = np.lexsort((job_id, submit))
        fields = [np.ascontiguousarray(columns[f][order]) for f in _jobs.SWF_FIELDS]
    table = _jobs.JobTable(*fields, *(np.empty(n, dtype=np.int64) for _ in _jobs.REQUEST_FIELDS))
    table.req_nodes[:] = -1
    return _jobs.derive_swf_request(table), header


def read(path: str | os.PathLike) -> tuple[_jobs.JobTable, SWFHeader]:
    """Read an SWF log (plain text or gzip, detected from its content).

    Returns the job table sorted by (submit, job_id) and the typed header, whose
    ``out_of_order`` counts the data lines whose submit time went backwards.  Raises
    :class:`SWFError` naming the file and line for a malformed data line, the file for a
    truncated or corrupt gzip stream, and both lines for a duplicate job id.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"read takes a path, not {type(path).__name__}")
    path = Path(path)
    # The file is read and inflated in a second thread (both release the GIL) while this
    # one loads the parse kernel: a process's first kernel load builds numba's typing
    # context, which takes as long as inflating a PWA log.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="schedbench-read") as pool:
        data = pool.submit(load_bytes, path)
        _parse_kernel.compile(_PARSE_TYPES)
        return parse_bytes(data.result(), str(path))


def format_data(table: _jobs.JobTable) -> bytes:
    """Data lines of a table, in table order, as right-aligned columns (no header)."""
    import polars as pl

    if not isinstance(table, _jobs.JobTable):
        raise TypeError(f"expected a JobTable, not {type(table).__name__}")
    if table.n_jobs == 0:
        return b""
    df = table.to_polars().select(_jobs.SWF_FIELDS)
    widths = {
        name: max(len(str(int(df[name].min()))), len(str(int(df[name].max()))))
        for name in _jobs.SWF_FIELDS
    }
    line = pl.concat_str(
        [pl.col(name).cast(pl.String).str.pad_start(widths[name]) for name in _jobs.SWF_FIELDS],
        separator=" ",
    )
    text = df.select(line.alias("l")).get_column("l").str.join("\n").item()
    return (text + "\n").encode("ascii")


def write(table: _jobs.JobTable, header: SWFHeader | None, path: str | os.PathLike) -> Path:
    """Write an SWF log (gzip when ``path`` ends in ``.gz``); the 18 SWF fields of every
    job, in table order, after the header.  ``read(write(t, h, p))`` gives back ``t`` and
    ``h`` for any table sorted by (submit, job_id) with distinct ids."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"write takes a path, not {type(path).__name__}")
    path = Path(path)
    head = "".join(f"{line}\n" for line in format_header(header or SWFHeader()))
    payload = head.encode("latin-1") + format_data(table)
    if path.suffix == ".gz":
        payload = gzip.compress(payload, compresslevel=6, mtime=0)
    with written_aside(path) as tmp:  # an interrupted write never leaves a half file
        tmp.write_bytes(payload)
    return path
