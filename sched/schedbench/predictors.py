"""Duration predictors: what the scheduler believes a job will run.

Every scheduler sees ``pred(j)``, fixed when job ``j`` joins the queue (engine
``_predict``).  Online predictors learn from a job only through the engine's ``_learn``
hook, which runs when that job ends in the simulation, so a prediction can never use a job
that has not yet ended.

* ``requested``: the user's estimate (SWF field 9 when positive, else the run time);
* ``actual``: the real run time (an oracle, for upper bounds).
"""

from __future__ import annotations

import enum


class Predictor(enum.IntEnum):
    REQUESTED = 0
    ACTUAL = 1


PREDICTORS: dict[str, Predictor] = {
    "requested": Predictor.REQUESTED,
    "actual": Predictor.ACTUAL,
}
