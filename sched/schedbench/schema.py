"""The vocabulary a replay's results are written in, numpy only: per-job statuses, the
resource names (defined with the machine, :mod:`schedbench.io.machine`), the built-in
predictor names and the :class:`ReplayResult` the engine hands back.

Kept apart from the engine so that reading, summarising and reporting results
(:mod:`schedbench.analysis`, :mod:`schedbench.sweep.config`) never imports numba: those
modules import these names from here, and the engine re-exports them.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, NamedTuple

from .io.machine import RESOURCE_NAMES  # noqa: F401 - re-exported: the resource types, in column order

if TYPE_CHECKING:
    import numpy as np

    from .io.jobs import JobTable
    from .io.machine import Machine


class Status(enum.IntEnum):
    """Per-job outcome written to ``jobs.parquet`` (lower-case names)."""

    REPLAYED = 0
    DROPPED_NO_RUNTIME = 1
    DROPPED_NO_SIZE = 2
    DROPPED_TOO_WIDE = 3
    NOT_STARTED = 4  # a Python policy left the job queued when nothing else could happen
    REJECTED_BY_LIMIT = 5  # a site policy refuses it for ever (schedbench.plan.site)
    DROPPED_NO_SUBMIT = 6  # a negative (unknown) submit time: the first reason tested; last for stable codes
    NEVER_STARTED = 7  # the log says it never ran (a Slurm job cancelled while pending, or pending / running at dump time)
    NO_ELIGIBLE_NODES = 8  # its partition and features leave no node that can host it
    PREDECESSOR_NOT_RUN = 9  # job dependencies: its predecessor (SWF field 17) was left out or never ended


STATUS_NAMES: tuple[str, ...] = tuple(s.name.lower() for s in Status)



class ReplayResult(NamedTuple):
    """Outcome of one replay.  Per-job arrays follow the input table's row order; start and
    end are -1 for jobs that did not run.  ``timeline``: dict of arrays (time, queue,
    running, used (k, 4)).  ``alloc_ptr`` int64 (n,) and ``alloc_log`` int32 (rows, 2):
    job j ran on the (node, units) rows ``alloc_log[alloc_ptr[j] : + nodes_used[j]]``,
    jobs in the order they started.
    ``options``: every setting that can change the schedule (provenance).  ``policy`` and
    ``tables``: what a Python policy's ``report()`` gives (see :mod:`schedbench.engine.simulation`).
    ``killed``: bool (n,), the jobs ended at their request instead of their run
    (``on_overrun`` "kill"); None reads as none.  ``eligible``: int64 (n,), each job's
    arrival when job dependencies are honoured (its predecessor's end plus its think time,
    else its submit; -1 for a job that never arrived); None when they are not."""

    table: JobTable
    machine: Machine
    scheduler: str
    allocator: str
    predictor: str
    start: np.ndarray
    end: np.ndarray
    pred: np.ndarray
    nodes_used: np.ndarray
    status: np.ndarray
    timeline: dict
    simulate_s: float
    passes: int
    alloc_ptr: np.ndarray
    alloc_log: np.ndarray
    options: dict
    policy: dict | None = None  # a Python policy's own summary (solver, settings), if it gives one
    tables: dict | None = None  # a Python policy's extra tables, written as NAME.parquet
    killed: np.ndarray | None = None  # jobs ended at their request (on_overrun "kill")
    eligible: np.ndarray | None = None  # arrivals under job dependencies (dependencies "on")

    @property
    def label(self) -> str:
        return f"{self.scheduler}+{self.allocator}"
