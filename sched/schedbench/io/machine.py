"""The machine model: nodes × resource types as integer arrays.

A :class:`Machine` holds ``capacity``, an ``int64`` array of shape ``(n_nodes, 4)`` whose
columns are :class:`Resource` (cores, GPUs, MICs, memory in MiB).  It is built from

* a spec string: ``1024x(cores=8,gpus=2)``, ``32x(cores=16,mics=2,mem=32G)+32x(cores=16,gpus=2,mem=32G)``
  (memory suffixes K, M, G, T are binary; a bare number is MiB);
* a node file in the Eurora format (one node a line: ``node_id cores gpus mics mem reserved``;
  the memory column is in KiB: the shared README calls it ``mem_bytes``, but 33554432 only
  gives the documented 32 GiB per Eurora node when read as KiB);
* an SWF header (:func:`from_swf_header`);
* an Alea ``.machines`` cluster file (:func:`read_alea_machines`).

:func:`parse` accepts a spec string or a node-file path, which is what ``--machine`` takes.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..errors import DataError, UsageError


class Resource(enum.IntEnum):
    """Column of a node-capacity array."""

    CORES = 0
    GPUS = 1
    MICS = 2
    MEM = 3  # MiB


RESOURCE_NAMES: tuple[str, ...] = ("cores", "gpus", "mics", "mem")
N_RESOURCES = len(RESOURCE_NAMES)


class Partition(NamedTuple):
    """A named subset of the nodes (a Slurm partition; partitions may overlap).

    ``nodes``: int64 (k,) node indices; ``max_time``: longest run allowed (s, -1: none);
    ``job_factor`` / ``tier``: Slurm's PriorityJobFactor / PriorityTier; ``def_mem_per_cpu``
    / ``def_mem_per_node``: memory (MiB) given to a job that asks for none (0: none set)."""

    name: str
    nodes: np.ndarray
    default: bool = False
    max_time: int = -1
    job_factor: int = 1
    tier: int = 1
    def_mem_per_cpu: int = 0
    def_mem_per_node: int = 0


class Machine(NamedTuple):
    """``capacity``: int64 ``(n_nodes, 4)`` (cores, GPUs, MICs, MiB); ``spec``: a string that
    :func:`parse` turns back into the same machine; ``note``: how it was derived.

    A machine read from a ``slurm.conf`` also names its nodes (``node_names``), gives each
    node its set of features (``node_features``: Slurm's Feature= values, plus ``gpu:TYPE``
    for a node whose GPUs are typed) and its ``partitions``; the others leave them empty
    (every node serves every job)."""

    capacity: np.ndarray
    spec: str
    note: str = ""
    node_names: tuple[str, ...] = ()
    node_features: tuple[frozenset, ...] = ()
    partitions: tuple[Partition, ...] = ()

    @property
    def n_nodes(self) -> int:
        return int(self.capacity.shape[0])

    @property
    def totals(self) -> np.ndarray:
        return self.capacity.sum(axis=0)

    def describe(self) -> str:
        tot = self.totals
        parts = [f"{self.n_nodes} nodes"] + [
            f"{int(tot[r])} {name}{' MiB' if name == 'mem' else ''}"
            for r, name in enumerate(RESOURCE_NAMES)
            if tot[r] > 0
        ]
        return ", ".join(parts)


_TERM_RE = re.compile(r"^\s*(\d+)\s*x\s*\((.*)\)\s*$")
_MEM_RE = re.compile(r"^\s*(\d+)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)
_MEM_SCALE = {"": 1, "K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}


MAX_PER_NODE = 1 << 20  # cores, GPUs or MICs of one node: beyond it a file is not a machine
MAX_MEM_MIB = 1 << 40  # memory of one node (1 EiB), as a node file's mem_kib < 2**50
# Nodes of a spec: 6 times the largest machines built; past it a typo (an extra digit or
# two) asked for gigabytes of capacity array and failed with a MemoryError.
MAX_NODES = 1 << 20


def _parse_mem(text: str) -> int:
    m = _MEM_RE.match(text)
    if not m:
        raise UsageError(f"bad memory amount {text!r} (expected e.g. 32G, 512M or 1024)")
    mib = int(int(m.group(1)) * _MEM_SCALE[m.group(2).upper()])
    if mib > MAX_MEM_MIB:  # before it is stored: an int64 overflows past 2**63
        raise UsageError(f"memory amount {text!r}: at most {MAX_MEM_MIB // (1024 * 1024):,}T per node")
    return mib


def from_spec(spec: str) -> Machine:
    """Machine from a spec string: ``+``-joined terms ``N x (key=value, ...)`` with keys
    cores, gpus, mics, mem."""
    rows: list[np.ndarray] = []
    n_nodes = 0
    for term in spec.split("+"):
        m = _TERM_RE.match(term)
        if not m:
            raise UsageError(
                f"bad machine term {term.strip()!r} in {spec!r} "
                "(expected e.g. 1024x(cores=8,gpus=2))"
            )
        count = int(m.group(1))
        node = np.zeros(N_RESOURCES, dtype=np.int64)
        for item in filter(None, (s.strip() for s in m.group(2).split(","))):
            key, sep, value = item.partition("=")
            key = key.strip().lower()
            if not sep or key not in RESOURCE_NAMES:
                raise UsageError(f"bad resource {item!r} in {spec!r} (keys: cores, gpus, mics, mem)")
            if key == "mem":
                node[Resource.MEM] = _parse_mem(value)
            else:
                if not value.strip().isdigit():
                    raise UsageError(f"bad amount {value!r} for {key} in {spec!r}")
                if int(value) > MAX_PER_NODE:  # before it is stored: an int64 overflows past 2**63
                    raise UsageError(f"{key}={value} in {spec!r}: at most {MAX_PER_NODE:,} per node")
                node[RESOURCE_NAMES.index(key)] = int(value)
        if count <= 0 or not node[: Resource.MEM].any():
            raise UsageError(f"machine term {term.strip()!r} has no nodes or no computing resources")
        n_nodes += count
        if n_nodes > MAX_NODES:
            raise UsageError(f"{spec!r}: {n_nodes:,} nodes or more; a machine has at most {MAX_NODES:,}")
        rows.append(np.repeat(node[None, :], count, axis=0))
    return Machine(np.ascontiguousarray(np.concatenate(rows)), spec_of(np.concatenate(rows)))


def spec_of(capacity: np.ndarray) -> str:
    """Compact spec string of a capacity array (runs of identical nodes)."""
    terms: list[str] = []
    i = 0
    n = capacity.shape[0]
    while i < n:
        j = i
        while j + 1 < n and np.array_equal(capacity[j + 1], capacity[i]):
            j += 1
        fields = []
        for r, name in enumerate(RESOURCE_NAMES):
            if capacity[i, r] > 0:
                value = int(capacity[i, r])
                fields.append(f"mem={value}M" if name == "mem" else f"{name}={value}")
        terms.append(f"{j - i + 1}x({','.join(fields)})")
        i = j + 1
    return "+".join(terms)


def read_text(path: Path, what: str) -> str:
    """A UTF-8 text file's contents; DataError naming the line of a byte that is not text."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(f"{path}:{line}: not a text {what} (byte {data[exc.start]:#04x} is not UTF-8)") from None


def from_node_file(path: str | os.PathLike) -> Machine:
    """Machine from a Eurora node file: ``node_id cores gpus mics mem_kib reserved`` per
    line (blank lines and ``#`` comments skipped).  Nodes keep file order."""
    path = Path(path)
    rows = []
    for lineno, line in enumerate(read_text(path, "node file").splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        parts = text.split()
        try:
            if len(parts) < 5:
                raise ValueError
            cores, gpus, mics, mem_kib = (int(float(p)) for p in parts[1:5])
        except ValueError:
            raise DataError(
                f"{path}:{lineno}: expected 'node_id cores gpus mics mem_kib [reserved]': {text!r}"
            ) from None
        if not all(0 <= v <= MAX_PER_NODE for v in (cores, gpus, mics)) or not 0 <= mem_kib < 1 << 50:
            raise DataError(
                f"{path}:{lineno}: node amounts must be 0..{MAX_PER_NODE:,} cores, GPUs and MICs and a "
                f"non-negative memory: {text!r}"
            )
        rows.append((cores, gpus, mics, mem_kib // 1024))
    if not rows:
        raise DataError(f"{path}: no nodes")
    cap = np.asarray(rows, dtype=np.int64)
    return Machine(cap, spec_of(cap), f"from node file {path.name}")


def from_swf_header(max_procs: int | None, max_nodes: int | None, widest_job: int = 0) -> Machine:
    """Machine of an SWF log: MaxNodes nodes of MaxProcs/MaxNodes cores when that divides
    evenly, else one pool of MaxProcs cores; MaxNodes single-core nodes when MaxProcs is
    missing; else one pool as wide as the widest job (``note`` says which)."""
    procs = max_procs if max_procs and max_procs > 0 else None
    nodes = max_nodes if max_nodes and max_nodes > 0 else None
    if procs and nodes and procs % nodes == 0:
        cap = np.tile(np.array([[procs // nodes, 0, 0, 0]], dtype=np.int64), (nodes, 1))
        note = f"MaxNodes {nodes} x {procs // nodes} processors"
    elif procs:
        cap = np.array([[procs, 0, 0, 0]], dtype=np.int64)
        note = f"one pool of MaxProcs {procs} processors"
    elif nodes:
        cap = np.tile(np.array([[1, 0, 0, 0]], dtype=np.int64), (nodes, 1))
        note = f"MaxNodes {nodes} single-processor nodes (no MaxProcs)"
    elif widest_job > 0:
        cap = np.array([[widest_job, 0, 0, 0]], dtype=np.int64)
        note = f"no MaxProcs or MaxNodes in the header: machine as wide as the widest job ({widest_job})"
    else:
        raise DataError("cannot size the machine: no MaxProcs, MaxNodes or jobs")
    return Machine(cap, spec_of(cap), note)


# Machine files whose readers live in io modules built on this one (a slurm.conf:
# schedbench.io.slurm_conf, imported by schedbench.io.load): each registers itself on import, as
# importing it from here would close an import cycle.  (sniff(path) -> bool, read(path) -> Machine)
_MACHINE_FILES: list[tuple[Callable[[str], bool], Callable[[str], Machine]]] = []


def register_machine_file(sniff: Callable[[str], bool], read: Callable[[str], Machine]) -> None:
    """Let :func:`parse` read the files ``sniff`` recognises with ``read``."""
    if (sniff, read) not in _MACHINE_FILES:
        _MACHINE_FILES.append((sniff, read))


def parse(text: str) -> Machine:
    """``--machine``: a node-file path when one exists at ``text`` (a slurm.conf when its name
    ends in ``.conf`` or a line starts with ``NodeName=``; an Alea ``*.machines`` cluster file
    when so named), else a spec string."""
    if not text.strip():
        raise UsageError("an empty machine spec: give one such as 1024x(cores=8,gpus=2), or a node file")
    if os.path.exists(text):
        for sniff, read in _MACHINE_FILES:
            if sniff(text):
                return read(text)
        if text.endswith(".machines"):
            return read_alea_machines(text)[0]
        return from_node_file(text)
    if "(" not in text or "/" in text or "#" in text:
        raise UsageError(f"no such node file: {text} (nor a machine spec such as 1024x(cores=8,gpus=2))")
    return from_spec(text)


class AleaCluster(NamedTuple):
    cluster_id: int
    name: str
    nodes: int
    cpus_per_node: int
    speed: float
    ram_kib: int
    gpus_per_node: int


def read_alea_machines(path: str | os.PathLike) -> tuple[Machine, list[AleaCluster]]:
    """The machine of a ``.machines`` file (clusters' nodes in file order: cores, GPUs,
    memory in MiB) and the clusters.  DataError names the file and line of a bad entry."""
    path = Path(path)
    clusters: list[AleaCluster] = []
    for lineno, line in enumerate(read_text(path, "machines file").splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        parts = text.split("\t") if "\t" in text else text.split()
        parts = [p.strip() for p in parts]
        try:
            if len(parts) < 6:
                raise ValueError
            cid, nodes, cpus, ram = int(parts[0]), int(parts[2]), int(parts[3]), int(parts[5])
            speed = float(parts[4])
            gpus = int(parts[7]) if len(parts) > 7 and parts[7] else 0
            if nodes <= 0 or cpus <= 0 or ram < 0 or gpus < 0 or not np.isfinite(speed):
                raise ValueError
        except ValueError:
            raise DataError(
                f"{path}:{lineno}: expected 'cluster_id name nodes cpus_per_node speed ram_kib "
                f"[properties gpus]' with positive counts: {text!r}"
            ) from None
        if nodes > 1_000_000:
            raise DataError(f"{path}:{lineno}: {nodes} nodes in one cluster is not a machine file")
        clusters.append(AleaCluster(cid, parts[1], nodes, cpus, speed, ram, gpus))
    if not clusters:
        raise DataError(f"{path}: no clusters")
    cap = np.concatenate([
        np.tile(np.array([[c.cpus_per_node, c.gpus_per_node, 0, c.ram_kib // 1024]], dtype=np.int64), (c.nodes, 1))
        for c in clusters
    ])
    note = "from Alea machines file {}: {}".format(
        path.name, ", ".join(f"{c.name} {c.nodes}x{c.cpus_per_node}" for c in clusters)
    )
    return Machine(cap, spec_of(cap), note), clusters
