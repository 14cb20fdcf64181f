"""Hooks: how the core calls into a scheduler or an allocator it knows nothing about.

A scheduler or an allocator is a namedtuple of arrays (its state) plus kernels that
implement some of the hooks below for that namedtuple class::

    class Easy(NamedTuple): ...

    @implements(schedule, Easy)
    @kernel
    def _pass(sched, core, pred, alloc, now): ...

A hook is called from jitted code with the state as its first argument; which kernel
runs is decided when numba compiles the caller, from the state's class (an ``@overload``
keyed on it).  So the replay loop compiled for ``Easy`` contains EASY's kernels and those
of its allocator's class, and numba caches it on disk like any kernel: its signature holds
only namedtuple and array types (a loop that took the kernels as first-class function
arguments could not be cached).  The built-in allocators share one class, whose hooks
choose the family's kernel by an integer (:mod:`schedbench.allocators.dispatch`): one
loop per scheduler serves them all.

Hooks a state class does not implement are no-ops (their own bodies; for
:func:`sched_has_room`, True), except :func:`schedule` and :func:`choose`, which every
scheduler and every allocator must implement.  An implementing kernel takes the hook's
parameters by the same names.
"""

from __future__ import annotations

import enum
import inspect

from numba.core.errors import TypingError
from numba.extending import overload

_IMPLS: dict[tuple[str, type], object] = {}
_JIT_OPTIONS = dict(nogil=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)


def implements(hook, state_class: type):
    """Decorator: register the decorated kernel as ``hook``'s implementation for states
    of ``state_class`` (a NamedTuple class).  The kernel takes the hook's parameters, by
    the same names.  Returns the kernel unchanged."""

    def register(kernel):
        want = inspect.signature(hook).parameters
        got = inspect.signature(kernel.py_func).parameters
        if list(want) != list(got):
            raise TypeError(
                f"{kernel.py_func.__qualname__}{tuple(got)} cannot implement {hook.__name__}"
                f"{tuple(want)}: use the hook's parameter names"
            )
        _IMPLS[(hook.__name__, state_class)] = kernel
        return kernel

    return register


def implementation(hook, state_class: type):
    """The kernel registered for ``hook`` and ``state_class``, or None."""
    return _IMPLS.get((hook.__name__, state_class))


def _dispatch(hook, required: bool, inline: str = "never") -> None:
    """Make ``hook`` callable from jitted code: numba compiles the kernel registered for
    the class of its first argument in its place (the hook's own body, a no-op, when none
    is and the hook is optional); ``inline="always"`` splices it into the caller."""
    name = hook.__name__

    def typing(*args):
        cls = getattr(args[0], "instance_class", None)
        impl = _IMPLS.get((name, cls))
        if impl is not None:
            return impl.py_func
        if required:
            raise TypingError(
                f"no kernel implements {name}() for {args[0]}: decorate one with "
                f"@implements({name}, {getattr(cls, '__name__', cls)})"
            )
        return hook

    # numba wants the typing function's parameters to be the hook's, by name
    typing.__signature__ = inspect.signature(hook)
    overload(hook, jit_options=_JIT_OPTIONS, inline=inline)(typing)


# --------------------------------------------------------------------------- schedulers


def schedule(sched, core, pred, alloc, now):
    """Scheduler hook (required): one scheduling pass at ``now`` (s): start jobs with
    :func:`schedbench.core.api.try_start` or :func:`schedbench.core.api.commit`."""


def sched_enqueued(sched, core, j):
    """Scheduler hook: job ``j`` has just joined the queue (its J_PRED is set)."""


def sched_started_outside(sched, core, j):
    """Scheduler hook: a Python policy started job ``j`` (outside the scheduler's pass)."""


def sched_released(sched, core, j, now):
    """Scheduler hook: running job ``j`` has just ended at ``now`` (its resources are free)."""


def sched_has_room(sched, core):
    """Scheduler hook: whether the scheduler's arrays have room for the next pass (and no
    pass left an error to report).  False makes the replay loop return to Python, where
    the scheduler's ``grow`` (:class:`schedbench.core.JittedScheduler`) enlarges them, or
    raises the error, before the loop goes on."""
    return True


def sched_wake(sched, core):
    """Scheduler hook: the next instant (s) at which the scheduler must pass although no
    job ends or arrives then (a planned start, an expiring booking), or -1 for none.  It
    must be later than the last pass."""
    return -1


# --------------------------------------------------------------------------- predictors


def predict(pred, jobs, j, now):
    """Predictor hook (required): the duration (s) the scheduler believes for job ``j``
    (jobs: the job matrix), asked once, when the job joins the queue at ``now``."""
    return 0


def learn(pred, jobs, j, now):
    """Predictor hook: job ``j`` ended at ``now`` (online predictors learn from it)."""


def revises(pred):
    """Predictor hook: whether the predictor raises the predicted ends of running jobs
    that outlive them (:func:`revise`); False leaves the core's running list alone."""
    return False


def revise(pred, jobs, j, now):
    """Predictor hook, called when :func:`revises` is True: running job ``j`` has not
    ended by ``now``, a decision point at or after its predicted end (jobs[j, J_RUN_KEY]);
    returns the duration (s) from its start the scheduler should now believe.  The core
    moves the job's predicted end (J_RUN_KEY and its running-list row) only when that is
    later; J_PRED, the prediction made at submission, never changes."""
    return 0


# --------------------------------------------------------------------------- allocators


def choose(alloc, core, j):
    """Allocator hook (required): place queued job ``j`` on the free nodes (core.free) in
    the allocator's order into core.work[W_NODE] / core.work[W_COUNT] without changing
    anything else of the core; returns the nodes used, or -1 when the job does not fit."""


def plan_order(alloc, free, order, key, tmp):
    """Allocator hook for planning schedulers: put the allocator's node order over the
    free amounts ``free`` (int64 (m, 4), e.g. a future window's) into ``order`` (int64
    (m,)), with scratch key (float64 (m,)) and tmp (int64 (m,)), without changing the
    allocator's state; returns 0, or -1 when the allocator has no such order."""
    return -1


class OrderReads(enum.IntEnum):
    """What an allocator's planning order (:func:`plan_order`) reads of the free amounts,
    so that a planner computes only that (:func:`plan_order_reads`)."""

    NOTHING = 0  # a fixed order (First-Fit's node index, Keller's)
    OWN_ROW = 1  # each node's place follows from its own row alone (Best-Fit's key)
    EVERY_ROW = 2  # a node's place may depend on other nodes' rows (Balanced's bins)


def plan_order_reads(alloc):
    """Allocator hook: what :func:`plan_order` reads (an :class:`OrderReads` code).  With
    NOTHING or OWN_ROW, the order of the nodes that host some of a job, which is all a
    placement reads, does not depend on the rows of the nodes that host none: a planner
    may leave those rows at 0.  The default, EVERY_ROW, is always right."""
    return 2  # EVERY_ROW (a literal: the allocator dispatch copies this body without its globals)


def alloc_enqueued(alloc, jobs, j):
    """Allocator hook: job ``j`` joined the queue (jobs: the job matrix)."""


def alloc_committed(alloc, jobs, j):
    """Allocator hook: job ``j`` has just started (whoever placed it)."""


def alloc_released(alloc, jobs, j, lowest):
    """Allocator hook: job ``j`` ended and gave back its nodes; ``lowest`` is the lowest
    index among them."""


def attempt_failed(alloc, jobs, j):
    """Allocator hook: a scheduler offered job ``j`` for allocation now and it could not
    start (it does not fit, or, for a backfill candidate, its placement would delay the
    reservation)."""


def attempt_succeeded(alloc, jobs, j):
    """Allocator hook: a scheduler's offer of job ``j`` succeeds (the job will start on
    the placement :func:`choose` has just made)."""


def counts_attempts(alloc):
    """Allocator hook: whether the allocator needs every attempt reported, including
    those of queued jobs a scheduler can rule out without offering them (EASY's backfill
    scan skips, through its min-tree, jobs that cannot fit the free totals; with True it
    reports each of them as a failed attempt, in queue order)."""
    return False


def reads_queue_order(alloc):
    """Allocator hook: whether the allocator's choice for a job depends on the order of
    the jobs queued behind it (the core's queue, from the job on), so that a scheduler
    which offers jobs in an order of its own must first put the queue in that order."""
    return False


# choose is inlined (once per start, as the core's steps, see schedbench._jit); the replay
# loop binds the schedule and sched_has_room kernels itself (schedbench.core.loop).  The
# other allocator hooks are inlined too: the jitted allocators share one state class whose
# hooks branch on its family (schedbench.allocators.dispatch), and a call would pass all
# its arrays at every event for what is, for most families, nothing to do.
_dispatch(schedule, required=True)
_dispatch(choose, required=True, inline="always")
_dispatch(predict, required=True)
_dispatch(revises, required=False, inline="always")  # a constant: the core's check folds away
# alloc_released stays a call: inlined into the core's end-of-job step, numba 0.68 broke
# the step's later reads of the released job's successors (an index out of bounds under
# NUMBA_BOUNDSCHECK=1, a crash without, with job dependencies on:
# tests/engine/test_dependencies.py); it runs once per job end, where a call costs little.
for _hook in (learn, revise, sched_enqueued, sched_has_room, sched_started_outside, sched_released, sched_wake,
              alloc_released):
    _dispatch(_hook, required=False)
for _hook in (plan_order, plan_order_reads, alloc_enqueued, alloc_committed, attempt_failed, attempt_succeeded,
              counts_attempts, reads_queue_order):
    _dispatch(_hook, required=False, inline="always")
del _hook
