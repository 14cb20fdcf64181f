"""The engine's job matrix: its columns, the job states, and how a job table fills it.

A leaf module (numpy and the kernel decorator only): the core, the schedulers, the
allocators and the predictors all index the same int64 matrix the same way, without
importing each other.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import numpy as np

from .._jit import inline_kernel, kernel

if TYPE_CHECKING:
    from ..io.jobs import JobTable

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
J_CLASS = 19  # node class: row of Core.elig naming the nodes the job may use (0: every node)
N_JCOLS = 20

INF = np.iinfo(np.int64).max


class JobState(enum.IntEnum):
    PENDING = 0  # arrives at its submit time (J_SUBMIT), in job index order
    QUEUED = 1
    RUNNING = 2
    DONE = 3
    DROPPED = 4
    BLOCKED = 5  # waits for its predecessor's end (job dependencies): it arrives when released


def job_matrix(table: JobTable) -> np.ndarray:
    """The int64 (n, N_JCOLS) job matrix of ``table``, every job PENDING.  The scheduler's
    estimate is the table's estimate when positive, else the run time (spec: field 9 when
    > 0, otherwise the run time); the per-unit request is cores, GPUs, MICs, MiB with
    negative amounts read as 0.  A run's set-up fills it together with its screening
    (:func:`schedbench.engine.prepare.screen`); this is the matrix alone."""
    J = np.empty((table.n_jobs, N_JCOLS), dtype=np.int64)
    _fill_job_matrix(J, *table_columns(table))
    return J


def table_columns(table: JobTable) -> tuple[np.ndarray, ...]:
    """The table's int64 (n,) columns that fill a job matrix, in :func:`fill_row`'s order."""
    t = table
    return (t.submit, t.run, t.estimate, t.units, t.unit_cores, t.unit_gpus, t.unit_mics, t.unit_mem,
            t.req_nodes, t.user, t.group, t.queue)


_PENDING = int(JobState.PENDING)


@inline_kernel
def fill_row(J, j, submit, run, estimate, units, cores, gpus, mics, mem, req_nodes, user, group, queue):
    """Write row ``j`` of the job matrix ``J`` (int64 (n, N_JCOLS)) from the table's int64
    (n,) columns, as a PENDING job."""
    J[j, J_SUBMIT] = submit[j]
    J[j, J_RUN] = run[j]
    J[j, J_EST] = estimate[j] if estimate[j] > 0 else run[j]
    J[j, J_UNITS] = units[j]
    J[j, J_REQ] = max(cores[j], 0)
    J[j, J_REQ + 1] = max(gpus[j], 0)
    J[j, J_REQ + 2] = max(mics[j], 0)
    J[j, J_REQ + 3] = max(mem[j], 0)
    J[j, J_REQ_NODES] = req_nodes[j] if req_nodes[j] > 0 else -1
    J[j, J_PRED] = -1
    J[j, J_START] = -1
    J[j, J_END] = -1
    J[j, J_STATE] = _PENDING
    J[j, J_NODES] = 0
    J[j, J_RUN_KEY] = 0
    J[j, J_PTR] = 0
    J[j, J_USER] = user[j]
    J[j, J_GROUP] = group[j]
    J[j, J_QUEUE] = queue[j]
    J[j, J_CLASS] = 0


@kernel
def _fill_job_matrix(J, submit, run, estimate, units, cores, gpus, mics, mem, req_nodes, user, group, queue):
    """Write every row of ``J`` (int64 (n, N_JCOLS), uninitialised): one pass, row by row
    (a numpy fill column by column streams the matrix from memory once per column)."""
    for j in range(J.shape[0]):
        fill_row(J, j, submit, run, estimate, units, cores, gpus, mics, mem, req_nodes, user, group, queue)


@inline_kernel
def pool_type(J, j):
    """The resource type (0..N_RES-1) of job j of the job matrix ``J`` when it is made of
    single units of one type spread freely over every node (its placement is decided by
    that type's free total: a *pool* job), else -1 (a job limited to some nodes by its
    partition or features is never a pool job)."""
    if J[j, J_REQ_NODES] > 0 or J[j, J_CLASS] != 0:
        return -1
    kind = -1
    for k in range(N_RES):
        r = J[j, J_REQ + k]
        if r > 0:
            if kind >= 0 or r != 1:
                return -1
            kind = k
    return kind
