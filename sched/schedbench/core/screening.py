"""Which jobs no empty machine can host: the node scan of a run's set-up.

Jobs of single units of one type spread freely are screened by the machine's totals; the
others are placed, by the spec's allocation rule, on an empty machine (every node free).
Site rules use the same scan on a machine less what they keep back.
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel
from .layout import J_CLASS, J_REQ, J_REQ_NODES, J_UNITS, N_RES
from .placement import _place


def too_wide_on(capacity: np.ndarray, J: np.ndarray, elig: np.ndarray | None = None) -> np.ndarray:
    """bool (n,): the jobs of the job matrix ``J`` (int64 (n, N_JCOLS)) that no empty
    machine of ``capacity`` (int64 (m, 4): cores, GPUs, MICs, MiB per node) can host on
    the nodes of their class (``elig``, uint8 (k, m), row J[j, J_CLASS]; None: every node)."""
    cap = np.ascontiguousarray(capacity, dtype=np.int64)
    m = cap.shape[0]
    buffers = np.empty((3, m), dtype=np.int64)
    buffers[0] = np.arange(m)
    out = np.empty(J.shape[0], dtype=np.bool_)
    if elig is None:
        elig = np.ones((1, m), dtype=np.uint8)
    _too_wide(cap, J, buffers[0], buffers[1], buffers[2], np.ascontiguousarray(elig, dtype=np.uint8), out)
    return out


@kernel
def _too_wide(cap, jobs, ident, out_node, out_count, elig, wide):
    """Mark in ``wide`` (bool (n,)) the jobs of the job matrix ``jobs`` that no empty
    machine of capacity ``cap`` (int64 (m, 4)) can host on their class's nodes (elig:
    uint8 (k, m)); ident, out_node, out_count: int64 (m,) buffers, ident = 0 .. m-1."""
    for j in range(jobs.shape[0]):
        wide[j] = jobs[j, J_UNITS] > 0 and _place(
            cap, ident, np.int64(0), jobs[j, J_UNITS], jobs[j, J_REQ : J_REQ + N_RES], jobs[j, J_REQ_NODES],
            out_node, out_count, elig[jobs[j, J_CLASS]],
        ) < 0
