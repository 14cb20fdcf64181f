"""Duration predictors: what the scheduler believes a job will run.

Every scheduler sees ``pred(j)``, fixed when job ``j`` joins the queue (:func:`_predict`).
Online predictors learn from a job only in :func:`_learn`, which the engine calls when
that job ends in the simulation, so a prediction can never use a job that has not ended.

* ``requested``: the user's estimate (SWF field 9 when positive, else the run time);
* ``actual``: the real run time (an oracle, for upper bounds).

A predictor's per-job keys (profile ids, queue limits, ...) are precomputed in Python by
:func:`prepare` into the engine's ``J_PKEY`` columns, and its memory is the engine's
``memo`` array; the kernels below read and write nothing else.
"""

from __future__ import annotations

import enum

import numpy as np

from ._jit import kernel
from .layout import J_EST, J_RUN, V_PRED_KIND


class Predictor(enum.IntEnum):
    REQUESTED = 0
    ACTUAL = 1


PREDICTORS: dict[str, Predictor] = {
    "requested": Predictor.REQUESTED,
    "actual": Predictor.ACTUAL,
}


def prepare(table, predictor: str) -> tuple[int, np.ndarray, np.ndarray]:
    """``(kind, keys, memo)`` for a replay of ``table``: keys int64 (n, 4) go to the
    engine's J_PKEY columns, memo is the predictor's initial memory (int64, 2-D)."""
    kind = PREDICTORS[predictor]
    return int(kind), np.zeros((table.n_jobs, 4), dtype=np.int64), np.zeros((1, 1), dtype=np.int64)


@kernel
def _predict(jobs, memo, scal, j, now):
    """Duration the scheduler believes for job ``j`` (s), asked when it joins the queue."""
    if scal[V_PRED_KIND] == Predictor.ACTUAL:
        return jobs[j, J_RUN]
    return jobs[j, J_EST]


@kernel
def _learn(jobs, memo, scal, j, now):
    """Job ``j`` ended at ``now``: the hook where online predictors learn."""
    return
