"""Hooks: how the core calls into a scheduler or an allocator it knows nothing about.

A scheduler or an allocator is a namedtuple of arrays (its state) plus kernels that
implement some of the hooks below for that namedtuple class::

    class Easy(NamedTuple): ...

    @implements(schedule, Easy)
    @kernel
    def _pass(sched, core, pred, alloc, now): ...

A hook is called from jitted code with the state as its first argument; which kernel
runs is decided when numba compiles the caller, from the state's class (an ``@overload``
keyed on it).  So a replay loop compiled for ``Easy`` with ``FirstFit`` contains EASY's
and First-Fit's kernels and nothing else, and numba caches it on disk like any kernel:
its signature holds only namedtuple and array types (a loop that took the kernels as
first-class function arguments could not be cached).

Hooks a state class does not implement are no-ops, except :func:`schedule` and
:func:`choose`, which every scheduler and every allocator must implement.
"""

from __future__ import annotations

from numba.core.errors import TypingError
from numba.extending import overload

_IMPLS: dict[tuple[str, type], object] = {}


def implements(hook, state_class: type):
    """Decorator: register the decorated kernel as ``hook``'s implementation for states
    of ``state_class`` (a NamedTuple class).  Returns the kernel unchanged."""

    def register(kernel):
        _IMPLS[(hook.__name__, state_class)] = kernel
        return kernel

    return register


def _resolve(name: str, state_type, required: bool):
    """The kernel implementing hook ``name`` for ``state_type`` (a numba type), or None."""
    cls = getattr(state_type, "instance_class", None)
    impl = _IMPLS.get((name, cls))
    if impl is None and required:
        raise TypingError(
            f"no kernel implements {name}() for {state_type}: decorate one with "
            f"@implements({name}, {getattr(cls, '__name__', cls)})"
        )
    return impl


# One typing function per arity: numba cannot inline a call through *args.
def _dispatch(hook, required: bool) -> None:
    name = hook.__name__
    arity = hook.__code__.co_argcount
    if arity == 3:

        @overload(hook)
        def _typing3(a, b, c):
            impl = _resolve(name, a, required)
            if impl is None:
                return lambda a, b, c: None
            return lambda a, b, c: impl(a, b, c)

    elif arity == 4:

        @overload(hook)
        def _typing4(a, b, c, d):
            impl = _resolve(name, a, required)
            if impl is None:
                return lambda a, b, c, d: None
            return lambda a, b, c, d: impl(a, b, c, d)

    elif arity == 5:

        @overload(hook)
        def _typing5(a, b, c, d, e):
            impl = _resolve(name, a, required)
            if impl is None:
                return lambda a, b, c, d, e: None
            return lambda a, b, c, d, e: impl(a, b, c, d, e)

    else:  # pragma: no cover - every hook below has 3 to 5 arguments
        raise TypeError(f"hook {name} has {arity} arguments")


def _stub(name: str):
    raise TypeError(f"{name}() is a kernel hook: call it from jitted code")


# --------------------------------------------------------------------------- schedulers


def schedule(sched, core, pred, alloc, now):
    """Scheduler hook (required): one scheduling pass at ``now`` (s): start jobs with
    :func:`schedbench.core.api.try_start` or :func:`schedbench.core.api.commit`."""
    _stub("schedule")


def sched_enqueued(sched, core, j):
    """Scheduler hook: job ``j`` has just joined the queue (its J_PRED is set)."""
    _stub("sched_enqueued")


def sched_started_outside(sched, core, j):
    """Scheduler hook: a Python policy started job ``j`` (outside the scheduler's pass)."""
    _stub("sched_started_outside")


# --------------------------------------------------------------------------- allocators


def choose(alloc, core, j):
    """Allocator hook (required): place queued job ``j`` on the free nodes (core.free) in
    the allocator's order into core.work[W_NODE] / core.work[W_COUNT] without changing
    anything else of the core; returns the nodes used, or -1 when the job does not fit."""
    _stub("choose")


def alloc_enqueued(alloc, jobs, j):
    """Allocator hook: job ``j`` joined the queue (jobs: the job matrix)."""
    _stub("alloc_enqueued")


def alloc_committed(alloc, jobs, j):
    """Allocator hook: job ``j`` has just started (whoever placed it)."""
    _stub("alloc_committed")


def alloc_released(alloc, jobs, j, lowest):
    """Allocator hook: job ``j`` ended and gave back its nodes; ``lowest`` is the lowest
    index among them."""
    _stub("alloc_released")


def attempt_failed(alloc, jobs, j):
    """Allocator hook: a scheduler offered job ``j`` for allocation now and it did not fit."""
    _stub("attempt_failed")


def attempt_succeeded(alloc, jobs, j):
    """Allocator hook: a scheduler's offer of job ``j`` succeeds (the job will start)."""
    _stub("attempt_succeeded")


for _hook in (schedule, choose):
    _dispatch(_hook, required=True)
for _hook in (sched_enqueued, sched_started_outside, alloc_enqueued, alloc_committed,
              alloc_released, attempt_failed, attempt_succeeded):
    _dispatch(_hook, required=False)
del _hook
