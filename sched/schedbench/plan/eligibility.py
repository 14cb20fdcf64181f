"""Which nodes each job may use: its partition and its node features (Slurm's
``--partition`` and ``--constraint``), compiled once per run into node classes.

A machine read from a ``slurm.conf`` (:mod:`schedbench.io.machine`: ``partitions`` and
``node_features``) restricts jobs; every other machine serves every job on every node.

* **Partition**: a job may use the nodes of its partition (``table.partition``, a code of
  ``meta["partitions"]``; a name such as ``a,b``, a job submitted to several partitions,
  means the union of their nodes).  A job without one uses the default partition
  (``Default=YES``), else every node.  A partition the machine does not have leaves the job
  no node (:attr:`schedbench.schema.Status.NO_ELIGIBLE_NODES`).
* **Features**: ``table.constraint`` names an expression of ``meta["constraints"]`` in
  Slurm's syntax: ``a&b`` (and), ``a|b`` (or), ``a,b`` (read as and), ``!a`` (not),
  ``[...]`` or ``(...)`` (grouping), ``a*2`` (a count: dropped).  Simplification: Slurm's
  *matching or* (``[a|b]``: every node of the job has the same one of a, b) is read as a
  plain or, node by node.  A term ``gpu:TYPE`` (a typed GPU request) is a node feature of
  the nodes whose GPUs are of that type; on a machine where no GPU has a type it holds
  everywhere (an untyped machine cannot tell types apart).  On a machine without any node
  features the constraints are ignored, with a notice.

Jobs with the same partition and constraint share a class; classes with the same nodes
are merged; class 0 is every node (the job matrix's ``J_CLASS``, ``Core.elig``).

The partition also gives what a job did not say: its ``DefMemPerCPU`` (x the cores of a
unit) or ``DefMemPerNode`` as the memory of a unit that asks for none (when the machine has
memory), and its ``MaxTime`` as the estimate of a job without a time limit.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from ..errors import DataError
from ..io.jobs import JobTable
from ..io.machine import Machine


class NodeClasses(NamedTuple):
    """``job_class`` int64 (n,): each job's row of ``elig`` (uint8 (k, m), row 0 all ones);
    ``empty`` bool (n,): jobs whose class has no node; ``table``: the table with the
    partitions' default memory and time limits filled in; ``notices``: one line each."""

    job_class: np.ndarray
    elig: np.ndarray
    empty: np.ndarray
    table: JobTable
    notices: list[str]


def node_classes(table: JobTable, meta: dict | None, machine: Machine) -> NodeClasses | None:
    """The node classes of ``table``'s jobs on ``machine``, or None when every job may use
    every node (a machine without partitions or features, or jobs that ask for neither)."""
    meta = meta or {}
    partitions = machine.partitions
    has_features = any(machine.node_features)
    constraints = list(meta.get("constraints") or [])
    notices: list[str] = []
    if not partitions and not has_features:
        if constraints and (table.constraint >= 0).any():
            notices.append("the machine names no node features (give a slurm.conf as --machine): "
                           "the jobs' constraints are ignored")
        return None if not notices else NodeClasses(
            np.zeros(table.n_jobs, np.int64), np.ones((1, machine.n_nodes), np.uint8),
            np.zeros(table.n_jobs, np.bool_), table, notices)
    m = machine.n_nodes
    names = {int(code): str(name) for name, code in (meta.get("partitions") or {}).items()}
    keys = np.stack([table.partition, table.constraint if has_features else np.full(table.n_jobs, -1)], axis=1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    rows: list[bytes] = [np.ones(m, np.uint8).tobytes()]
    row_of: dict[bytes, int] = {rows[0]: 0}
    class_of_key = np.empty(unique.shape[0], np.int64)
    mem_cpu = np.zeros(unique.shape[0], np.int64)
    mem_node = np.zeros(unique.shape[0], np.int64)
    max_time = np.full(unique.shape[0], -1, np.int64)
    unknown_parts: set[str] = set()
    unknown_features: set[str] = set()
    typed = any(f.startswith("gpu:") for feats in machine.node_features for f in feats)
    for u, (pcode, ccode) in enumerate(unique.tolist()):
        mask, parts = _partition_nodes(machine, names.get(pcode) if pcode >= 0 else None, unknown_parts)
        if ccode >= 0:
            if ccode >= len(constraints):
                raise DataError(f"job constraint code {ccode} is not in the workload's constraints list")
            mask &= _feature_nodes(constraints[ccode], machine, typed, unknown_features)
        if parts:
            mem_cpu[u] = max(p.def_mem_per_cpu for p in parts)
            mem_node[u] = max(p.def_mem_per_node for p in parts)
            max_time[u] = -1 if any(p.max_time < 0 for p in parts) else max(p.max_time for p in parts)
        row = mask.astype(np.uint8).tobytes()
        if row not in row_of:
            row_of[row] = len(rows)
            rows.append(row)
        class_of_key[u] = row_of[row]
    elig = np.frombuffer(b"".join(rows), np.uint8).reshape(len(rows), m).copy()
    job_class = class_of_key[inverse]
    empty = ~elig.any(axis=1)[job_class]
    if unknown_parts:
        notices.append(f"partitions not in the machine's slurm.conf: {', '.join(sorted(unknown_parts))} "
                       "(their jobs have no eligible node)")
    if unknown_features:
        notices.append(f"features no node has: {', '.join(sorted(unknown_features))}")
    table = _with_partition_defaults(table, machine, mem_cpu[inverse], mem_node[inverse], max_time[inverse])
    return NodeClasses(job_class, elig, empty, table, notices)


def _partition_nodes(machine: Machine, name: str | None, unknown: set[str]):
    """(bool (m,) nodes, the partitions) of a job's partition field (None: the default)."""
    m = machine.n_nodes
    if not machine.partitions:
        return np.ones(m, np.bool_), []
    by_name = {p.name: p for p in machine.partitions}
    if name is None:
        parts = [p for p in machine.partitions if p.default][:1]
        if not parts:
            return np.ones(m, np.bool_), []
    else:
        parts = []
        for part in filter(None, (s.strip() for s in name.split(","))):
            if part in by_name:
                parts.append(by_name[part])
            else:
                unknown.add(part)
    mask = np.zeros(m, np.bool_)
    for p in parts:
        mask[np.asarray(p.nodes, dtype=np.int64)] = True
    return mask, parts


_TOKEN = re.compile(r"\s*(?:([&|,!\[\]()])|([^&|,!\[\]()\s]+))")


def _feature_nodes(expr: str, machine: Machine, typed: bool, unknown: set[str]) -> np.ndarray:
    """bool (m,): the nodes whose features satisfy ``expr`` (see the module docstring)."""
    tokens: list[str] = []
    pos = 0
    text = expr.strip()
    while pos < len(text):
        mt = _TOKEN.match(text, pos)
        if not mt or mt.end() == pos:
            raise DataError(f"constraint {expr!r}: cannot read it at {text[pos:]!r}")
        tokens.append(mt.group(1) or mt.group(2))
        pos = mt.end()
    feats = machine.node_features
    m = machine.n_nodes
    at = 0

    def atom() -> np.ndarray:
        nonlocal at
        if at >= len(tokens):
            raise DataError(f"constraint {expr!r}: ends too early")
        tok = tokens[at]
        at += 1
        if tok == "!":
            return ~atom()
        if tok in "[(":
            inner = disjunction()
            if at >= len(tokens) or tokens[at] != ("]" if tok == "[" else ")"):
                raise DataError(f"constraint {expr!r}: unbalanced {tok}")
            at += 1
            return inner
        if tok in "&|,])":
            raise DataError(f"constraint {expr!r}: unexpected {tok!r}")
        name = tok.split("*", 1)[0]
        if name.startswith("gpu:") and not typed:
            return np.ones(m, np.bool_)
        mask = np.fromiter((name in f for f in feats), np.bool_, count=m) if feats else np.zeros(m, np.bool_)
        if not mask.any():
            unknown.add(name)
        return mask

    def conjunction() -> np.ndarray:
        nonlocal at
        out = atom()
        while at < len(tokens) and tokens[at] in "&,":
            at += 1
            out = out & atom()
        return out

    def disjunction() -> np.ndarray:
        nonlocal at
        out = conjunction()
        while at < len(tokens) and tokens[at] == "|":
            at += 1
            out = out | conjunction()
        return out

    if not tokens:
        return np.ones(m, np.bool_)
    result = disjunction()
    if at != len(tokens):
        raise DataError(f"constraint {expr!r}: unexpected {tokens[at]!r}")
    return result


def _with_partition_defaults(table: JobTable, machine: Machine, mem_cpu, mem_node, max_time) -> JobTable:
    """``table`` with a unit's memory from its partition's DefMemPerCPU / DefMemPerNode when
    it asks for none (and the machine has memory), and the estimate from MaxTime when it has
    no time limit; the table itself when nothing changes."""
    changes = {}
    if machine.capacity[:, 3].any():
        no_mem = table.unit_mem <= 0
        mem = np.where(mem_cpu > 0, mem_cpu * np.maximum(table.unit_cores, 1), mem_node)
        fill = no_mem & (mem > 0)
        if fill.any():
            changes["unit_mem"] = np.where(fill, mem, table.unit_mem)
    fill = (table.estimate <= 0) & (max_time > 0)
    if fill.any():
        changes["estimate"] = np.where(fill, max_time, table.estimate)
    return JobTable(**{**table._asdict(), **changes}) if changes else table  # (JobTable._replace: its len is n_jobs)
