"""Keller's greedy mapper (OpenCCS, §5.2 "Mapping"): nodes ranked from cheap to expensive.

Each node gets a weight from what it provides, measured against the machine::

    W_node = max over the types r the node provides of  r_node / r_system
    W_node = W_node * cores_system + prio_node * cores_system

and jobs are placed by the spec's allocation rule (:func:`schedbench.core.api.place`)
visiting nodes by non-decreasing weight, ties by node index.

Readings (what follows the text and what is ours):

* **r is the node's capacity**, not its free amount: the text computes the weight "for
  all nodes" from the "consumable resources provided by the node" and sorts the candidate
  list by it (phase 1, step 1) *before* it looks at free slots (step 2).  The order is
  therefore fixed for a run, computed once from the machine.  r_system is the machine's
  total of type r; the types are our four (cores, GPUs, MICs, memory), those with a zero
  machine total skipped.
* **cores_system multiplies both terms**, so it scales every weight alike and never changes
  the ranking: the rank is W_node + prio_node (a float64 key; W_node is in [0, 1], so one
  step of prio_node outweighs any difference of W_node).
* **prio_node** is an integer the administrator sets (the text: "via RSD"; we have no
  resource description language, so it is the allocator option ``node_prio``, default 0
  for every node): ``"NODES:P;NODES:P..."`` where NODES is ``all``, ``gpu``, ``mic`` or
  node indices and ranges (``"0-15,32"``, as the site file's maintenance windows) and P an
  integer (negative makes nodes cheaper); a node named by several entries takes the last.
* **"Expensive chunks on cheap nodes first"** orders the chunks of one request.  A job
  here is ``units`` identical chunks (units x per-unit request), so there is nothing to
  order within a job: the greedy mapper reduces to visiting the cheap nodes first.  The
  text's failed-slot retry ("try another slot of R_freeSlots") is the planner's job
  (conservative's earliest fit), not the allocator's.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from .._jit import inline_kernel, kernel
from ..core.api import OrderReads, choose, implements, place_in_order, plan_order, plan_order_reads
from ..errors import UsageError
from ..io.machine import Machine
from .dispatch import Allocator, pack

_ENTRY_RE = re.compile(r"^\s*([^:]+?)\s*:\s*([+-]?\d+)\s*$")


class Keller(NamedTuple):
    """order int64 (m,): the nodes from cheap to expensive (fixed for the run)."""

    order: np.ndarray


def node_prio_entries(text: str) -> list[tuple[str, int, str]]:
    """The ``node_prio`` option's entries as (nodes, priority, entry text), nodes "all",
    "gpu", "mic" or a list of indices and ranges; a bad entry is a :class:`UsageError`.
    Needs no machine: the command line checks the text before it reads the trace."""
    out = []
    for part in filter(None, (p.strip() for p in str(text).split(";"))):
        match = _ENTRY_RE.match(part)
        if not match:
            raise UsageError(f"node_prio entry {part!r}: expected NODES:PRIORITY, e.g. \"gpu:2\" or \"0-15,32:1\"")
        spec = match.group(1).strip()
        if spec not in ("all", "gpu", "mic"):
            _node_list(spec, part)
        out.append((spec, int(match.group(2)), part))
    return out


def check_node_prio(text: str) -> str:
    """``text`` unchanged once its syntax is checked (the option's parser)."""
    node_prio_entries(text)
    return text


def node_priorities(text: str, machine: Machine) -> np.ndarray:
    """int64 (m,) prio_node of every node from the ``node_prio`` option's text (module
    docstring); a bad entry or a node not on the machine is a :class:`UsageError`."""
    m = machine.n_nodes
    prio = np.zeros(m, dtype=np.int64)
    for spec, value, part in node_prio_entries(text):
        if spec == "all":
            nodes = np.arange(m)
        elif spec in ("gpu", "mic"):
            nodes = np.flatnonzero(machine.capacity[:, 1 if spec == "gpu" else 2] > 0)
        else:
            nodes = _node_list(spec, part)
            if nodes.size and nodes.max() >= m:
                raise UsageError(f"node_prio entry {part!r}: node {int(nodes.max())} is not on this machine "
                                 f"({m} nodes, 0-{m - 1})")
        prio[nodes] = value
    return prio


def _node_list(spec: str, part: str) -> np.ndarray:
    out = []
    for piece in spec.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", piece)
        if not m or (m.group(2) is not None and int(m.group(2)) < int(m.group(1))):
            raise UsageError(f"node_prio entry {part!r}: nodes must be all, gpu, mic or indices and ranges such "
                             f"as \"0-15,32\", not {spec!r}")
        lo = int(m.group(1))
        out.extend(range(lo, int(m.group(2) or lo) + 1))
    return np.array(out, dtype=np.int64)


def node_weights(capacity: np.ndarray, prio: np.ndarray) -> np.ndarray:
    """float64 (m,) rank key W_node + prio_node of every node (the text's weight divided by
    cores_system, which does not change the order): W_node = max over the types the
    machine has of the node's share of the machine's total.  capacity: int64 (m, 4)."""
    total = capacity.sum(axis=0)
    has = total > 0
    share = capacity[:, has] / total[has]
    w = share.max(axis=1) if share.shape[1] else np.zeros(capacity.shape[0])
    return w + prio


def keller(setup, node_prio) -> Allocator:
    """Factory: the node order of ``setup.machine`` with the ``node_prio`` option."""
    key = node_weights(setup.machine.capacity, node_priorities(node_prio, setup.machine))
    return pack(Keller(np.argsort(key, kind="stable").astype(np.int64)))


@implements(choose, Keller)
@inline_kernel
def _keller_choose(alloc, core, j):
    return place_in_order(core, alloc.order, np.int64(0), j)


@implements(plan_order, Keller)
@kernel
def _keller_plan_order(alloc, free, order, key, tmp):
    for p in range(order.shape[0]):  # a loop: slice assignment needs numba's runtime
        order[p] = alloc.order[p]
    return 0


@implements(plan_order_reads, Keller)
@inline_kernel
def _keller_plan_order_reads(alloc):
    return OrderReads.NOTHING
