"""The engine's job matrix: its columns, the job states, and how a job table fills it.

A leaf module (numpy only): the core, the schedulers, the allocators and the predictors
all index the same int64 matrix the same way, without importing each other.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .jobs import JobTable

N_RES = 4  # resource types: cores, GPUs, MICs, memory (MiB)
N_COMPUTE = 3  # resource columns that count as computing resources (not memory)

# Columns of the job matrix, int64 (n_jobs, N_JCOLS); times in s, memory in MiB.
J_SUBMIT = 0
J_RUN = 1  # actual duration
J_EST = 2  # user's estimate (> 0)
J_UNITS = 3
J_REQ = 4  # J_REQ + k: per-unit request of resource k (cores, GPUs, MICs, MiB)
J_REQ_NODES = 8  # -1: free spread; > 0: exactly that many nodes of units/req_nodes units
J_PRED = 9  # duration the scheduler believes, fixed when the job joins the queue
J_START = 10
J_END = 11
J_STATE = 12  # JobState
J_NODES = 13  # nodes used
J_RUN_KEY = 14  # start + pred, the running list's order
J_PTR = 15  # first row of the job's allocation in the core's allocation log
J_USER = 16
J_GROUP = 17
J_QUEUE = 18
N_JCOLS = 19

INF = np.iinfo(np.int64).max


class JobState(enum.IntEnum):
    PENDING = 0
    QUEUED = 1
    RUNNING = 2
    DONE = 3
    DROPPED = 4


def request_matrix(table: JobTable, out: np.ndarray | None = None) -> np.ndarray:
    """Per-unit request, int64 (n, 4): cores, GPUs, MICs, MiB (negative amounts are 0).
    Written into ``out`` (an int64 (n, 4) array or view) when given."""
    if out is None:
        out = np.empty((table.n_jobs, N_RES), dtype=np.int64)
    for k, col in enumerate((table.unit_cores, table.unit_gpus, table.unit_mics, table.unit_mem)):
        np.maximum(col, 0, out=out[:, k], casting="unsafe")
    return out


_BLOCK_ROWS = 4096
"""Rows of the job matrix filled at a time (4096 x 19 int64 = 608 KiB)."""


def job_matrix(table: JobTable, dropped: np.ndarray, req: np.ndarray | None = None) -> np.ndarray:
    """The int64 (n, N_JCOLS) job matrix of ``table``; rows where ``dropped`` (bool (n,))
    is true are marked DROPPED.  The scheduler's estimate is the table's estimate when
    positive, else the run time (spec: field 9 when > 0, otherwise the run time).
    ``req``: the table's :func:`request_matrix`, when the caller has it already."""
    n = table.n_jobs
    J = np.zeros((n, N_JCOLS), dtype=np.int64)
    if req is None:
        req = request_matrix(table)
    # Filled by blocks of rows that stay in cache: a column-at-a-time fill of the whole
    # matrix would stream it from memory once per column.
    for lo in range(0, n, _BLOCK_ROWS):
        hi = min(n, lo + _BLOCK_ROWS)
        Jb = J[lo:hi]
        run, est, nodes = table.run[lo:hi], table.estimate[lo:hi], table.req_nodes[lo:hi]
        Jb[:, J_SUBMIT] = table.submit[lo:hi]
        Jb[:, J_RUN] = run
        np.copyto(Jb[:, J_EST], run)
        np.copyto(Jb[:, J_EST], est, where=est > 0)
        Jb[:, J_UNITS] = table.units[lo:hi]
        Jb[:, J_REQ : J_REQ + N_RES] = req[lo:hi]
        Jb[:, J_REQ_NODES] = -1
        np.copyto(Jb[:, J_REQ_NODES], nodes, where=nodes > 0)
        Jb[:, J_PRED] = -1
        Jb[:, J_START] = -1
        Jb[:, J_END] = -1
        Jb[:, J_STATE] = JobState.PENDING
        Jb[dropped[lo:hi], J_STATE] = JobState.DROPPED
        Jb[:, J_USER] = table.user[lo:hi]
        Jb[:, J_GROUP] = table.group[lo:hi]
        Jb[:, J_QUEUE] = table.queue[lo:hi]
    return J
