"""The replay loop: advance to the next decision point, the scheduler's pass, the timeline.

Every jitted scheduler runs this one loop.  It reaches the scheduler through two hooks
(:mod:`schedbench.core.hooks`): :func:`~schedbench.core.hooks.schedule`, the pass, and
:func:`~schedbench.core.hooks.sched_has_room`, whether the scheduler's arrays can take
another pass (a scheduler that never fills them leaves it out: the test is a constant
True that numba folds away).

:func:`loop_for` compiles the loop once per scheduler state class, with that class's two
kernels bound in place of ``_pass`` and ``_has_room``: numba then inlines the pass before
typing, exactly as when each scheduler wrote its own loop.  Calling the hooks' overloads
instead cost compile time (the first KTH easy+ff replay with an empty cache: 8 s with
bound kernels, 9.7 s through an overload compiled apart, 14 s through one inlined after
typing, which types the pass twice).  A dispatcher per class also gives each its own numba
cache index: an index shared by every scheduler would import, when loaded, the state
class of every scheduler ever replayed with the cache, and would be dropped whole, every
loop recompiled, when one of them cannot be imported (a test's plug-in, from the command
line).
"""

from __future__ import annotations

import hashlib
import inspect
import marshal
import re
import types
from pathlib import Path

from llvmlite import ir
from numba.core import cgutils
from numba.core import types as nbtypes
from numba.extending import intrinsic

from .._jit import _PACKAGE_DIR, inline_kernel, kernel
from .hooks import implementation, sched_has_room, schedule
from .steps import _advance, _record


@intrinsic
def _read_cycles(typingctx):
    """The CPU's cycle counter (``llvm.readcyclecounter``: the TSC on x86-64, 0 where a
    target has none): a clock the compiled loop can read for a few cycles, so that it can
    return to Python on time (:func:`schedbench.core.run`).  An intrinsic, not a ctypes
    call: the loops stay in numba's cache."""

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])

    return nbtypes.int64(), codegen


@kernel
def cycle_counter():
    """The cycle counter, read from Python (see :func:`_read_cycles`)."""
    return _read_cycles()


@inline_kernel
def _has_room(sched, core):
    """What :func:`loop_for` binds for a class without a ``sched_has_room`` kernel."""
    return True


def _pass(sched, core, pred, alloc, now):
    """Placeholder for the class's ``schedule`` kernel, which :func:`loop_for` binds."""
    raise NotImplementedError


def _run(core, pred, sched, alloc, max_passes, until_cycle):
    """Replay from the core's current state: up to ``max_passes`` decision points, each
    an advance, the scheduler's pass and its timeline row; returns the passes run.  It
    returns after a pass once the cycle counter (:func:`cycle_counter`) reaches
    ``until_cycle`` (0: no such limit), and early at the end of the replay (core.scal[C_DONE] set), when the allocation
    log needs room (:func:`schedbench.core.steps._advance` returns -2) and when the
    scheduler's arrays do (``sched_has_room``): the Python side
    (:func:`schedbench.core.run`) grows them and calls again."""
    passes = 0
    while passes < max_passes and _has_room(sched, core):
        now = _advance(core, pred, sched, alloc)
        if now < 0:
            break
        _pass(sched, core, pred, alloc, now)
        _record(core.timeline, core.scal, now)
        passes += 1
        if until_cycle > 0 and _read_cycles() >= until_cycle:
            break
    return passes


_LOOPS: dict[type, object] = {}


def _outside_digest(*objects) -> str:
    """A digest of the source files of ``objects`` that lie outside the package ("" when
    none do).  numba keys a cached loop on this file alone, and the package's cache folder
    on the package's sources: a plug-in's edited pass must not be served from a loop
    compiled with its old one.  A function defined where no file holds it (a notebook, an
    ``exec``) is keyed on its compiled code instead; a class without a file adds nothing
    (its name is in the loop's)."""
    digest = hashlib.sha1()
    outside = False
    for o in objects:
        try:
            path = Path(inspect.getfile(o)).resolve()
        except (TypeError, OSError):
            path = None
        if path is not None and path.is_relative_to(_PACKAGE_DIR):
            continue
        if path is not None and path.is_file():
            digest.update(path.read_bytes())
        elif hasattr(o, "__code__"):
            digest.update(marshal.dumps(o.__code__))
        else:
            continue
        outside = True
    return "_" + digest.hexdigest()[:12] if outside else ""


def _outside_package(cls: type) -> bool:
    """Whether the class ``cls`` is defined outside the package (a plug-in's, a test's, a
    notebook's)."""
    try:
        return not Path(inspect.getfile(cls)).resolve().is_relative_to(_PACKAGE_DIR)
    except (TypeError, OSError):
        return True


def loop_for(sched, pred=None, alloc=None):
    """The compiled replay loop for the scheduler state ``sched``: :func:`_run` with the
    kernels its class implements ``schedule`` and ``sched_has_room`` with bound in, a
    dispatcher (and a numba cache index) of its own per class.

    A predictor or allocator state ``pred`` / ``alloc`` of a class defined outside the
    package gets a loop of its own too, named after that class and keyed on its file's
    digest.  In the scheduler's loop, its signature would sit in the index beside the
    built-ins': a process that cannot import its module (a replay without the plug-in)
    reads that index as empty, compiles the loop again and saves an index without it,
    and the plug-in's next run compiles it again in turn (10-15 s each way, measured with
    a test's plug-in predictor and a KTH easy+ff replay); and an edit of its hooks would
    be served the machine code compiled from the old ones."""
    cls = type(sched)
    guests = tuple(dict.fromkeys(type(x) for x in (pred, alloc) if x is not None and _outside_package(type(x))))
    key = (cls, *guests)
    loop = _LOOPS.get(key)
    if loop is None:
        one_pass = implementation(schedule, cls)
        if one_pass is None:
            raise TypeError(f"no kernel implements schedule() for {cls.__qualname__}: decorate one with "
                            f"@implements(schedule, {cls.__name__})")
        has_room = implementation(sched_has_room, cls) or _has_room
        names = dict(_run.__globals__, _pass=one_pass, _has_room=has_room)
        func = types.FunctionType(_run.__code__, names, _run.__name__)
        # numba names the cache index after the qualname
        owners = "".join(f"_{c.__module__}_{c.__qualname__}" for c in (cls, *guests))
        func.__qualname__ = ("_run_for" + re.sub(r"\W", "_", owners)
                             + _outside_digest(cls, one_pass.py_func, has_room.py_func, *guests))
        func.__doc__ = _run.__doc__
        loop = _LOOPS[key] = kernel(func)
    return loop
