"""Alea's extended SWF (MetaCentrum logs of the Alea simulator) and its ``.machines`` file.

A data line has 21 whitespace-separated fields: the 18 SWF fields, then

19. the node ids the job ran on, one entry per processor, in braces: ``{1242,1242,1242}``;
20. the queue name: ``q_2d``;
21. the PBS node request: ``1:ppn=6:x86_64:brno:nfs4`` (``#excl``: exclusive use).

There is no header.  The ``.machines`` file is tab- (or space-) separated, one cluster a line:
``cluster_id name nodes cpus_per_node speed ram_kib`` (AleaNG adds properties and a GPUs
count per node after these; read by position: a 7th field is the properties, an 8th the GPUs).

What the job table keeps (every column is ``int64``):

* the 18 SWF fields as :mod:`schedbench.io.swf` reads them (the same checks, line numbers and
  (submit, id) order), and the request derived from them as for any SWF log;
* ``queue``: the queue name's code, ``meta["queues"]`` = ``{name: code}`` in order of first
  appearance (field 15 of these logs is -1 throughout);
* ``req_nodes``: from the PBS request ``N:ppn=P`` when it is a single chunk whose ``N * P``
  is the job's processor count (the job then takes exactly N nodes of P processors each, as
  PBS placed it); otherwise -1 (the allocator chooses the spread).

What the job table cannot hold (strings, lists) is in :func:`read`'s ``extras`` frame, one row
per job in the table's order: ``job_id``, ``queue_name``, ``node_ids`` (list of the distinct
node ids, in the log's numbering, which is the whole MetaCentrum grid, not the ``.machines``
file's), ``processors_per_node`` (list, aligned with ``node_ids``), ``pbs_request``,
``exclusive``.  Choices where the format is silent, documented: the request's properties
(``cl_zewura``, ``brno``, ``x86_64``) are not enforced (any cluster may run any job); ``#excl``
is recorded, not enforced; field 10 (memory, apparently bytes for the whole job) is not
replayed, as for SWF; the ``speed`` column is ignored (run times are replayed as logged).
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from pathlib import Path

import numpy as np

from . import swf
from .machine import AleaCluster as Cluster  # noqa: F401 - part of this module's API
from .machine import Machine, spec_of  # noqa: F401
from .machine import read_alea_machines as read_machines  # noqa: F401

N_FIELDS = 21
_REQUEST = re.compile(r"^(\d+)(?::ppn=(\d+))?(?::|#|$)")


def looks_like_alea(data: bytes) -> bool:
    """Whether the first data line has a braced node list in field 19 (SWF has 18 fields)."""
    for raw in data[:1 << 16].splitlines():
        text = raw.strip()
        if not text or text.startswith(b";"):
            continue
        parts = text.split()  # a long node list may run past the sample: 19 fields suffice
        return len(parts) >= 19 and parts[18].startswith(b"{")
    return False


def sniff(path: str | os.PathLike) -> bool:
    """:func:`looks_like_alea` on the start of a file (plain or gzip); False when unreadable
    (the SWF reader then says why)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
        if head[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as fh:
                head = fh.read(1 << 16)
    except (OSError, EOFError, zlib.error):
        return False
    return looks_like_alea(head)


def read(path: str | os.PathLike):
    """``(table, header, extras, queues)`` of an Alea extended-SWF log (see the module
    docstring); ``header`` is the :class:`schedbench.io.swf.SWFHeader` of the leading comments
    (usually none), ``queues`` the queue codes ``{name: code}``."""
    path = Path(path)
    return parse_bytes(swf.load_bytes(path), str(path))


def parse_bytes(data: bytes, name: str = "<bytes>"):
    """:func:`read` on a whole decompressed text; ``name`` stands for the file in messages."""
    import polars as pl

    swf_lines: list[bytes] = []
    file_ids: list[int] = []
    queue_codes: dict[str, int] = {}
    queue_names: list[str] = []
    node_ids: list[list[int]] = []
    per_node: list[list[int]] = []
    requests: list[str] = []
    asked_nodes: list[int] = []
    asked_ppn: list[int] = []
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        text = raw.strip()
        if not text or text.startswith(b";"):
            swf_lines.append(raw)
            continue
        parts = text.split()
        if len(parts) != N_FIELDS:
            shown = text.decode("latin-1")[:200]
            raise swf.SWFError(
                f"{name}:{lineno}: {len(parts)} fields instead of {N_FIELDS} (Alea's extended SWF): {shown!r}"
            )
        swf_lines.append(b" ".join(parts[:18]))
        field = parts[18].decode("latin-1")
        inner = field[1:-1]
        try:
            if not (field.startswith("{") and field.endswith("}")):
                raise ValueError
            listed = np.asarray([int(x) for x in inner.split(",")] if inner else [], dtype=np.int64)
        except (ValueError, OverflowError):
            raise swf.SWFError(
                f"{name}:{lineno}: field 19 is not a braced list of node ids: {field[:80]!r}"
            ) from None
        distinct, counts = np.unique(listed, return_counts=True)
        node_ids.append(distinct.tolist())
        per_node.append(counts.tolist())
        queue = parts[19].decode("latin-1")
        queue_codes.setdefault(queue, len(queue_codes))
        queue_names.append(queue)
        request = parts[20].decode("latin-1")
        requests.append(request)
        match = _REQUEST.match(request) if "+" not in request else None
        asked_nodes.append(int(match.group(1)) if match else -1)
        asked_ppn.append(int(match.group(2) or 1) if match else -1)
        try:
            file_ids.append(int(parts[0]))
        except ValueError:
            file_ids.append(-1)  # swf.parse_bytes below names the line
    table, header = swf.parse_bytes(b"\n".join(swf_lines), name)
    # table rows are in (submit, id) order; job ids are unique: map each row to its line
    ids = np.asarray(file_ids, dtype=np.int64)
    by_id = np.argsort(ids, kind="stable")
    row_line = by_id[np.searchsorted(ids[by_id], table.job_id)]
    nodes_asked = np.asarray(asked_nodes, dtype=np.int64)[row_line]
    ppn = np.asarray(asked_ppn, dtype=np.int64)[row_line]
    fixed = (nodes_asked > 0) & (ppn > 0) & (nodes_asked * ppn == table.units)
    table.req_nodes[:] = np.where(fixed, nodes_asked, -1)
    codes = np.asarray([queue_codes[q] for q in queue_names], dtype=np.int64)
    table.queue[:] = codes[row_line] if codes.size else table.queue
    pick = row_line.tolist()
    extras = pl.DataFrame(
        {
            "job_id": table.job_id,
            "queue_name": [queue_names[k] for k in pick],
            "node_ids": [node_ids[k] for k in pick],
            "processors_per_node": [per_node[k] for k in pick],
            "pbs_request": [requests[k] for k in pick],
            "exclusive": [requests[k].endswith("#excl") for k in pick],
        },
        schema={
            "job_id": pl.Int64, "queue_name": pl.String, "node_ids": pl.List(pl.Int64),
            "processors_per_node": pl.List(pl.Int64), "pbs_request": pl.String, "exclusive": pl.Boolean,
        },
    )
    return table, header, extras, dict(queue_codes)
