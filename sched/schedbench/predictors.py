"""Duration predictors: what the scheduler believes a job will run.

Every scheduler sees ``pred(j)``, fixed when job ``j`` joins the queue (:func:`_predict`).
Online predictors learn from a job only in :func:`_learn`, which the engine calls when
that job ends in the simulation, so a prediction can never use a job that has not ended.
A prediction is always at least 1 s for the online predictors below.

* ``requested``: the user's estimate (SWF field 9 when positive, else the run time, so on
  logs without estimates, e.g. NASA iPSC and SDSC Paragon, it is the oracle);
* ``actual``: the real run time (an oracle, for upper bounds);
* ``user-profile``: the last duration of the user's jobs of the same profile (Netti et
  al. §2.3, after Galleguillos et al.); rules below;
* ``user-profile-capped``: ``user-profile`` with every prediction also capped at the
  job's own estimate when it has one (a job cannot outlive its request in most logs);
* ``user-mean2``: the mean of the user's last two ended jobs, capped by the user's
  estimate (Tsafrir, Etsion & Feitelson 2007); rules below.
* ``tsafrir``: ``user-mean2`` plus the paper's prediction correction; rules below.
* ``tsafrir-steps``: ``user-mean2`` plus the stepwise correction of a later fork; below.

Queue wall-times (used by both online predictors).  For queue ``q``:

* ``max(q)``: ``meta["queue_walltime"][name]`` when the table's meta gives it (``name`` is
  the queue whose code is ``q`` in ``meta["queues"]``); otherwise the largest user
  estimate (SWF field 9 > 0) of any job of the table in ``q``, or, when no job of ``q``
  has one, the largest run time in ``q``.  This stands for the site's configured limit:
  it is static configuration computed once from the whole table, not something learned
  online.  Eurora's ``meta["queue_expected_wait"]`` is an expected *wait*, not a wall-time
  limit (its 6 h for ``parallel`` is above every request of that queue, which stop at 4 h),
  so it is not used.
* ``default(q)``: ``meta["queue_default_walltime"][name]`` when given, else ``max(q)``.
* ``meta`` reaches :func:`prepare` from ``schedbench predict`` (the Parquet table's
  metadata); a replay prepares without it, so there the limits come from the table.
* A job's *fallback* for ``user-mean2`` is its own estimate when it has one (field 9 >
  0: as in PBS, the queue default only applies to jobs that ask for no wall time), else
  ``default(q)``.  For ``user-profile`` (Netti et al. §2.3: "the default wall-time of the
  queue") it is the queue's default when the workload declares one
  (``meta["queue_default_walltime"]``), else the job's own estimate when it has one, else
  ``default(q)`` (= ``max(q)``).

``user-profile`` (online).  A job's *exact profile* is (user, executable, queue,
requested resources: units, cores/GPUs/MICs/MiB per unit, node count); its *similar
profile* is (user, executable, queue), i.e. the same program in the same queue whatever
resources it asks.  When the executable is unknown (-1, as in most SWF logs) it is one
value like any other, so the exact profile is (user, queue, resources) and the similar
one (user, queue).  Jobs of an unknown user (-1) have no profile.  Then

1. if a job of the same exact profile has ended: the duration of the one that ended last;
2. else if a job of the same similar profile has ended: the duration of the one that
   ended last;
3. else the job's fallback;

capped at ``max(q)`` (``user-profile-capped``: at the smaller of ``max(q)`` and the job's
own estimate when it has one) and raised to at least 1 s.  "Ended last": in end-time order, ties
in the engine's event order.  Memory: one slot per exact and per similar profile holding
the last duration (-1: none yet).

``user-mean2`` (online).  The user's last two ended jobs (any profile, any queue, any
exit status):

1. none yet (or user unknown, -1): the job's fallback;
2. one: its duration;
3. two or more: the mean of the last two, rounded half up;

then capped at the job's own estimate when it has one (field 9 > 0), else at ``max(q)``,
and raised to at least 1 s.  Tsafrir et al. cap by the user estimate, which also keeps a
prediction from exceeding what the scheduler would allow; where no estimate exists the
queue limit plays that role.  ``user-mean2`` does not correct predictions that a running
job outlives: its prediction is fixed at submission.

``tsafrir`` (online): ``user-mean2``'s predictions, plus *prediction correction*
(Tsafrir, Etsion & Feitelson, "Backfilling using system-generated predictions rather than
user runtime estimates", IEEE TPDS 18(6), 2007; the abstract: kill time is divorced from
the prediction, and predictions are "corrected adaptively as needed if they are proved
wrong").  Rule: at the first decision point at or after a running job's predicted end
(start + prediction) at which it is still running, its predicted end becomes start + its
cap, the user's estimate when it has one (else ``max(q)``); a job that outlives that too
keeps it, and EASY then treats it as ending now (max(predicted end, now), as for every
predictor).  The engine applies it (:func:`schedbench.core.hooks.revise`, J_RUN_KEY and
the running list; J_PRED, the submission-time prediction the results report, is kept), so
it reaches the schedulers that read predicted ends from the running list (``easy``,
``easy-sjbf``); the others read start + J_PRED and see no correction.

Sources for the rule.  The paper's own text on correction (its Section on prediction
correction) could not be retrieved here (the stored copies hold its abstract and first
page only), so the rule follows two public implementations: ``pyss``, the Hebrew
University simulator of the authors' group, whose EASY++ (file
``src/schedulers/easy_plus_plus_scheduler.py``, ``new_events_on_job_under_prediction``)
sets an under-predicted running job's prediction to its user estimate; and the
correctors of a later fork (``reqtime``: the user estimate; ``tsafrir``: the elapsed
prediction raised step by step by 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 5 h, 10 h, 20 h,
50 h, 100 h, capped at the estimate, "cf papier").  ``tsafrir`` is the first reading;
``tsafrir-steps`` is the second: a running job still running at a decision point at or
after its predicted end is believed to run its submission-time prediction plus the first
step it has not outlived (the fork applies one step at each expiry; the core asks at
decision points only, which ends at the same step), at most its cap, and the cap once the
steps run out.  Which of the two the paper's Tables 2-3 used is what the text would settle.
Searched again for issue 30 (public pages, code, issues, docs): no retrievable copy of the
paper's body, Tables or correction section (a transcript exists at documents.pub, "...
Pred07TPDS.pdf", but only its first page is stored), nor of Tsafrir's 2006 thesis.  Two
further facts, neither settling the choice: the authors' patent (US 8,261,283 B2, filed
2006; abstract) claims only "a prediction updater operative, if the current run-time ...
exceeds the current run-time prediction, to generate an updated run-time prediction to
exceed the current run-time", which both readings satisfy; and a third-party config
"intended to reproduce EASY++" (``algo74/predictsim``,
``configs/predcompare/EASY-SJBF_Tsafrir.py``) picks the fork's ``reqtime`` corrector, the
first reading.  So the text-versus-code rule cannot be applied yet: ``tsafrir`` follows
the authors' group's code (pyss), ``tsafrir-steps`` a third party's reading of the paper.
Also unsaid there: whether a correction falling at the instant of a decision applies
before it (here it does: a job still running at its predicted end has outlived it).

A predictor is a namedtuple state whose class implements the core's ``predict`` hook
(and ``learn`` for the online ones, ``revises`` / ``revise`` for ``tsafrir`` and
``tsafrir-steps``): per-job keys
precomputed in Python by :func:`prepare`, and its memory; the kernels below read the job
matrix and write nothing but that memory.  Each built-in kernel family has its class
(:class:`JobColumn`, :class:`UserProfile`, :class:`UserMean2`, :class:`Tsafrir`,
:class:`TsafrirSteps`), naming
the fields it reads, but the online predictors' factories return their states packed into
one class, :class:`PredictorState` (:func:`pack`): numba compiles the replay loop once per
predictor state *type*, so with a class each, a scheduler replayed under two of them
compiled its whole loop twice.  :class:`PredictorState`'s hooks branch on its ``kind`` and
call the family's kernel, which reads fields of the same names; ``revises`` becomes a test
of ``kind`` at each decision point instead of a constant the compiler folded away.
``requested`` and ``actual`` keep their :class:`JobColumn`, so a scheduler has two loops,
one for them and one for the online predictors: packed as well, they cost the default
replay's loop 8-15 % more CPU time (HPC2N easy+ff, medians ~0.067-0.070 s to ~0.077 s,
whatever was tried: a smaller state, ``revises`` a constant, the hooks inlined).  The
online predictors' packed loop itself takes 7-17 % more CPU than their own classes' loops
did (user-profile, tsafrir on HPC2N easy+ff, by variant of this class: the cause is not
pinned down).  A state of any other class (a plug-in's) still works through its class's own
hooks, in a loop compiled for it alone.  Key columns (``keys[:, i]``):

* ``user-profile`` and ``user-profile-capped``: 0 exact-profile slot, 1 similar-profile
  slot (-1: none), 2 fallback, 3 cap (``max(q)``, or the capped one); memo (exact + similar profiles, 1).
* ``user-mean2``: 0 user slot (-1: none), 1 unused, 2 fallback, 3 cap; memo (users, 2):
  the last and the previous duration (-1: none).

:func:`evaluate` replays the same kernels offline over a trace in its historical order
(what ``schedbench predict`` reports).
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import numba
import numpy as np

from . import registry
from ._jit import inline_kernel
from .core.hooks import implements, learn, predict, revise, revises
from .core.layout import J_EST, J_PRED, J_RUN, J_START, J_SUBMIT, job_matrix


class Predictor(enum.IntEnum):
    REQUESTED = 0
    ACTUAL = 1
    USER_PROFILE = 2
    USER_MEAN2 = 3
    USER_PROFILE_CAPPED = 4
    TSAFRIR = 5
    TSAFRIR_STEPS = 6


# The built-ins' internal codes; the names a run accepts are the registry's
# (schedbench.registry.predictor_names(), plug-ins included).
PREDICTORS: dict[str, Predictor] = {
    "requested": Predictor.REQUESTED,
    "actual": Predictor.ACTUAL,
    "user-profile": Predictor.USER_PROFILE,
    "user-mean2": Predictor.USER_MEAN2,
    "user-profile-capped": Predictor.USER_PROFILE_CAPPED,
    "tsafrir": Predictor.TSAFRIR,
    "tsafrir-steps": Predictor.TSAFRIR_STEPS,
}

N_KEYS = 4


class JobColumn(NamedTuple):
    """A column of the job matrix as the prediction, with nothing to learn: the user's
    estimate (``J_EST``, predictor ``requested``) or the actual run time (``J_RUN``,
    ``actual``).  col int64 (1,): the column.  One class for both, so that a scheduler's
    loop compiles once for the two (a type per predictor used to cost 180 s of a cold
    ``make test``'s 1,080 s of compiles, for one memory load per queued job).  Not packed
    into :class:`PredictorState` (see the module docstring: that costs the default replay
    8-15 %)."""

    col: np.ndarray


class UserProfile(NamedTuple):
    """keys int64 (n, N_KEYS) per job (see the module docstring); memo int64 (slots, 1):
    the last duration of each exact and similar profile (-1: none yet)."""

    keys: np.ndarray
    memo: np.ndarray


class UserMean2(NamedTuple):
    """keys int64 (n, N_KEYS) per job; memo int64 (users, 2): each user's last and
    previous duration (-1: none)."""

    keys: np.ndarray
    memo: np.ndarray


class Tsafrir(NamedTuple):
    """:class:`UserMean2`'s keys and memo, with prediction correction (``revises``)."""

    keys: np.ndarray
    memo: np.ndarray


class TsafrirSteps(NamedTuple):
    """:class:`UserMean2`'s keys and memo, with the stepwise prediction correction."""

    keys: np.ndarray
    memo: np.ndarray


# tsafrir-steps: an outlived prediction p becomes p + the first of these (s) that the job
# has not yet outlived, capped at the job's cap (the later fork's "tsafrir" corrector)
CORRECTION_STEPS = np.array([60, 300, 900, 1800, 3600, 7200, 18000, 36000, 72000, 180000, 360000], dtype=np.int64)


class PredictorState(NamedTuple):
    """Every online built-in predictor's state (:func:`pack`): ``kind`` (int, the family's
    index in :data:`KINDS`) selects the kernels; keys int64 (n, N_KEYS) and memo int64
    (slots, 1 or 2) as the families' own."""

    kind: int
    keys: np.ndarray
    memo: np.ndarray


KINDS: tuple[type, ...] = (UserProfile, UserMean2, Tsafrir, TsafrirSteps)
"""The predictor families a :class:`PredictorState` packs; ``kind`` is the index here
(compiled into the kernels below as constants)."""
_PROFILE, _MEAN2, _TSAFRIR, _TSAFRIR_STEPS = range(len(KINDS))


def pack(state) -> PredictorState:
    """The :class:`PredictorState` of a state of one of the :data:`KINDS` classes."""
    kind = KINDS.index(type(state))  # a ValueError for any other class
    for field, value in state._asdict().items():
        if not (value.dtype == np.int64 and value.ndim == 2 and value.flags.c_contiguous
                and value.flags.writeable):
            raise TypeError(f"{type(state).__name__}.{field} must be a writeable contiguous 2-d int64 array")
    return PredictorState(kind, *state)


def _dense_ids(*cols: np.ndarray) -> np.ndarray:
    """0-based id of each row's value tuple over ``cols`` (int64 (n,))."""
    n = cols[0].shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    stacked = np.stack([np.asarray(c, dtype=np.int64) for c in cols], axis=1)
    _, inverse = np.unique(stacked, axis=0, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64)


def own_estimate(table) -> np.ndarray:
    """The user's own estimate (s) where the job has one (SWF field 9 > 0), else -1.  The
    table's ``estimate`` column is the run time for jobs without one, so it is not used
    alone: that would hand the predictors the future."""
    value = np.where(table.estimate > 0, table.estimate, table.time_req)
    return np.where(table.time_req > 0, value, -1).astype(np.int64)


def _queue_limits(table, meta: dict | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per job: (default(q), max(q)) of its queue, int64 (n,) each (see the module doc),
    and bool (n,): whether the workload declares that default."""
    n = table.n_jobs
    queue = table.queue
    est = own_estimate(table)
    has_est = est > 0
    qmax = np.zeros(n, dtype=np.int64)
    qdef = np.zeros(n, dtype=np.int64)
    declared = np.zeros(n, dtype=np.bool_)
    meta = meta or {}
    names = {int(code): name for name, code in (meta.get("queues") or {}).items()}
    given_max = meta.get("queue_walltime") or {}
    given_def = meta.get("queue_default_walltime") or {}
    for q in np.unique(queue):
        rows = queue == q
        name = names.get(int(q))
        if name is not None and name in given_max:
            top = int(given_max[name])
        elif (rows & has_est).any():
            top = int(est[rows & has_est].max())
        else:
            top = int(table.run[rows].max())
        top = max(top, 1)
        qmax[rows] = top
        qdef[rows] = int(given_def[name]) if name is not None and name in given_def else top
        declared[rows] = name is not None and name in given_def
    return qdef, qmax, declared


def prepare(table, predictor: str, meta: dict | None = None):
    """The initial state of the registered ``predictor`` for a replay of ``table`` (a
    namedtuple whose class implements the :func:`schedbench.core.hooks.predict` hook).
    ``meta``: the table's metadata (queue names and wall-time limits), optional."""
    return registry.predictor(predictor).load()(table, meta)


# The built-in predictors' factories (registered in schedbench.registry).


def requested(table, meta: dict | None = None) -> JobColumn:
    return _builtin(table, Predictor.REQUESTED, meta)


def actual(table, meta: dict | None = None) -> JobColumn:
    return _builtin(table, Predictor.ACTUAL, meta)


def user_profile(table, meta: dict | None = None) -> PredictorState:
    return pack(_builtin(table, Predictor.USER_PROFILE, meta))


def user_mean2(table, meta: dict | None = None) -> PredictorState:
    return pack(_builtin(table, Predictor.USER_MEAN2, meta))


def user_profile_capped(table, meta: dict | None = None) -> PredictorState:
    return pack(_builtin(table, Predictor.USER_PROFILE_CAPPED, meta))


def tsafrir(table, meta: dict | None = None) -> PredictorState:
    return pack(Tsafrir(*_builtin(table, Predictor.USER_MEAN2, meta)))


def tsafrir_steps(table, meta: dict | None = None) -> PredictorState:
    return pack(TsafrirSteps(*_builtin(table, Predictor.USER_MEAN2, meta)))


def _builtin(table, kind: Predictor, meta: dict | None) -> JobColumn | UserProfile | UserMean2:
    """The unpacked state of built-in predictor ``kind`` (tsafrir: ask for USER_MEAN2)."""
    n = table.n_jobs
    if kind == Predictor.REQUESTED:
        return JobColumn(np.array([J_EST], dtype=np.int64))
    if kind == Predictor.ACTUAL:
        return JobColumn(np.array([J_RUN], dtype=np.int64))
    keys = np.full((n, N_KEYS), -1, dtype=np.int64)
    if n == 0:
        profile_kinds = (Predictor.USER_PROFILE, Predictor.USER_PROFILE_CAPPED)
        return (UserProfile if kind in profile_kinds else UserMean2)(keys, np.zeros((1, 2), np.int64))
    qdef, qmax, declared = _queue_limits(table, meta)
    est = own_estimate(table)
    has_est = est > 0
    profile = kind in (Predictor.USER_PROFILE, Predictor.USER_PROFILE_CAPPED)
    fallback = np.where(has_est & ~declared, est, qdef) if profile else np.where(has_est, est, qdef)
    known = table.user >= 0
    keys[:, 2] = np.minimum(fallback, qmax).clip(min=1)
    if profile:
        exact = _dense_ids(
            table.user,
            table.executable,
            table.queue,
            table.units,
            table.unit_cores,
            table.unit_gpus,
            table.unit_mics,
            table.unit_mem,
            table.req_nodes,
        )
        similar = _dense_ids(table.user, table.executable, table.queue)
        n_exact = int(exact.max()) + 1
        keys[:, 0] = np.where(known, exact, -1)
        keys[:, 1] = np.where(known, n_exact + similar, -1)
        keys[:, 3] = qmax
        if kind == Predictor.USER_PROFILE_CAPPED:
            keys[:, 3] = np.where(has_est, np.minimum(est, qmax), qmax).clip(min=1)
        return UserProfile(keys, np.full((n_exact + int(similar.max()) + 1, 1), -1, dtype=np.int64))
    # USER_MEAN2
    users = _dense_ids(table.user)
    keys[:, 0] = np.where(known, users, -1)
    keys[:, 3] = np.where(has_est, np.minimum(est, qmax), qmax).clip(min=1)
    return UserMean2(keys, np.full((int(users.max()) + 1, 2), -1, dtype=np.int64))


@implements(predict, JobColumn)
@inline_kernel
def _job_column(pred, jobs, j, now):
    return jobs[j, pred.col[0]]


@inline_kernel
def _capped(p, cap):
    """``p`` capped at ``cap`` and raised to at least 1 s."""
    if p > cap:
        p = cap
    return p if p >= 1 else 1


@implements(predict, UserProfile)
@inline_kernel
def _user_profile(pred, jobs, j, now):
    keys = pred.keys
    memo = pred.memo
    p = keys[j, 2]
    exact = keys[j, 0]
    similar = keys[j, 1]
    if exact >= 0 and memo[exact, 0] >= 0:
        p = memo[exact, 0]
    elif similar >= 0 and memo[similar, 0] >= 0:
        p = memo[similar, 0]
    return _capped(p, keys[j, 3])


@implements(learn, UserProfile)
@inline_kernel
def _user_profile_learn(pred, jobs, j, now):
    run = jobs[j, J_RUN]
    exact = pred.keys[j, 0]
    similar = pred.keys[j, 1]
    if exact >= 0:
        pred.memo[exact, 0] = run
    if similar >= 0:
        pred.memo[similar, 0] = run


@implements(predict, UserMean2)
@inline_kernel
def _user_mean2(pred, jobs, j, now):
    keys = pred.keys
    memo = pred.memo
    p = keys[j, 2]
    u = keys[j, 0]
    if u >= 0 and memo[u, 0] >= 0:
        if memo[u, 1] >= 0:
            p = (memo[u, 0] + memo[u, 1] + 1) // 2
        else:
            p = memo[u, 0]
    return _capped(p, keys[j, 3])


@implements(learn, UserMean2)
@inline_kernel
def _user_mean2_learn(pred, jobs, j, now):
    u = pred.keys[j, 0]
    if u >= 0:
        pred.memo[u, 1] = pred.memo[u, 0]
        pred.memo[u, 0] = jobs[j, J_RUN]


implements(predict, Tsafrir)(_user_mean2)
implements(learn, Tsafrir)(_user_mean2_learn)


@implements(revises, Tsafrir)
@inline_kernel
def _tsafrir_revises(pred):
    return True


@implements(revise, Tsafrir)
@inline_kernel
def _tsafrir_revise(pred, jobs, j, now):
    """An outlived prediction becomes the job's cap: its own estimate, else max(q)."""
    return pred.keys[j, 3]


implements(predict, TsafrirSteps)(_user_mean2)
implements(learn, TsafrirSteps)(_user_mean2_learn)
implements(revises, TsafrirSteps)(_tsafrir_revises)


@implements(revise, TsafrirSteps)
@inline_kernel
def _tsafrir_steps_revise(pred, jobs, j, now):
    """An outlived prediction p (the one made at submission, J_PRED) becomes p + s, s the
    first of CORRECTION_STEPS with p + s after ``now - start`` (the steps the job has
    already outlived are skipped: the core asks at decision points only), at most the
    job's cap; the cap once the steps run out."""
    p = jobs[j, J_PRED]
    cap = pred.keys[j, 3]
    elapsed = now - jobs[j, J_START]
    for s in CORRECTION_STEPS:
        if p + s > elapsed:
            return min(p + s, cap)
    return cap


# The packed state's hooks: one branch per family, calling the family's kernel above (its
# inline_kernels are spliced in, so each hook is one function for the three families).


@implements(predict, PredictorState)
@inline_kernel
def _packed_predict(pred, jobs, j, now):
    if pred.kind == _PROFILE:
        return _user_profile(pred, jobs, j, now)
    return _user_mean2(pred, jobs, j, now)


@implements(learn, PredictorState)
@inline_kernel
def _packed_learn(pred, jobs, j, now):
    if pred.kind == _PROFILE:
        _user_profile_learn(pred, jobs, j, now)
    else:
        _user_mean2_learn(pred, jobs, j, now)


@implements(revises, PredictorState)
@inline_kernel
def _packed_revises(pred):
    return pred.kind == _TSAFRIR or pred.kind == _TSAFRIR_STEPS


@implements(revise, PredictorState)
@inline_kernel
def _packed_revise(pred, jobs, j, now):
    """Called only when :func:`_packed_revises` holds (tsafrir, tsafrir-steps); 0 (no
    move) otherwise."""
    if pred.kind == _TSAFRIR:
        return _tsafrir_revise(pred, jobs, j, now)
    if pred.kind == _TSAFRIR_STEPS:
        return _tsafrir_steps_revise(pred, jobs, j, now)
    return 0


# --------------------------------------------------------------------------- offline


@numba.njit(cache=True, nogil=True)
def _offline(jobs, pred, learn_order, learn_key, out):
    """Predict every job with a run time in index (submit) order, feeding it first the
    learn events whose key is below its submission key (see :func:`evaluate`)."""
    n = jobs.shape[0]
    k = 0
    nl = learn_order.shape[0]
    for j in range(n):
        if jobs[j, J_RUN] < 0:
            continue
        t = jobs[j, J_SUBMIT]
        while k < nl and learn_key[k] < 3 * t + 1:
            e = learn_order[k]
            learn(pred, jobs, e, learn_key[k] // 3)
            k += 1
        out[j] = predict(pred, jobs, j, t)


def historical_end(table) -> np.ndarray:
    """When each job's duration became known in the log: submit + wait + run, with a
    wait of -1 (unknown, e.g. NASA iPSC) read as 0 (start = submit)."""
    return table.submit + np.where(table.wait > 0, table.wait, 0) + table.run


def evaluate(table, predictor: str, meta: dict | None = None) -> np.ndarray:
    """Predictions (int64 (n,), -1 for jobs without a run time) of ``predictor`` for the
    jobs of ``table`` (sorted by (submit, job_id)) in historical order, through the same
    kernels as a replay.

    Jobs with a run time (>= 0) are predicted at their submission and learnt from at their
    historical end (:func:`historical_end`), in the engine's order at one instant: jobs
    that ran for some time and end at ``t`` teach before the jobs submitted at ``t`` are
    predicted, zero-length jobs ending at ``t`` teach after them (they start at ``t``,
    after the arrivals); equal keys in job order."""
    n = table.n_jobs
    state = prepare(table, predictor, meta)
    J = job_matrix(table)
    live = np.flatnonzero(table.run >= 0)
    end = historical_end(table)[live]
    key = 3 * end + np.where(table.run[live] > 0, 0, 2)
    order = np.argsort(key, kind="stable")
    out = np.full(n, -1, dtype=np.int64)
    _offline(J, state, np.ascontiguousarray(live[order]), np.ascontiguousarray(key[order]), out)
    return out


def errors(pred: np.ndarray, run: np.ndarray) -> dict:
    """MAE, median absolute error (s) and the share of under-predictions over the jobs
    with a run time and a prediction."""
    ok = (run >= 0) & (pred >= 0)
    if not ok.any():
        return {"mae_s": None, "median_ae_s": None, "under_share": None}
    err = pred[ok] - run[ok]
    return {
        "mae_s": float(np.abs(err).mean()),
        "median_ae_s": float(np.median(np.abs(err))),
        "under_share": float((err < 0).mean()),
    }
