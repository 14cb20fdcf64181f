"""One state class for every jitted allocator, so that one replay loop serves them all.

numba compiles the replay loop (and every kernel that takes the allocator) once per
allocator state *type*.  With a class per allocator, a scheduler replayed under the five
allocators compiled its whole loop five times.  Here every family's factory returns an
:class:`Allocator` instead: the union of the families' fields, with ``family`` the
family's index in :data:`FAMILIES`, and arrays of size 0 for the fields that family does
not use.  Each allocator hook implemented for :class:`Allocator` is a chain of branches
on ``family`` calling the family's own kernel, so one loop per (scheduler, mode) holds
every family (the loop is compiled once, however many allocators a sweep or a test runs).

The families keep their modules, state classes and kernels (:mod:`.fit`, :mod:`.netti`):
a family's state class names the fields it uses, its kernels implement the hooks for that
class (``@implements(choose, FirstFit)``) and read only those fields, and its factory
returns ``pack(FirstFit(...))``.  The kernels are compiled with ``alloc`` typed as
:class:`Allocator`, which has fields of the same names and types.

Adding a family is one line here, its ``"module:StateClass"`` appended to
:data:`FAMILIES` (after adding to :class:`Allocator` and :data:`_DTYPES` any field it
needs that no family has yet), and its factory returning :func:`pack` of its state.  An
allocator state that is not packed (a test's or a plug-in's own class) still works: the
hooks dispatch on its class as before, in a loop compiled for it alone.

Inlining: the ``choose`` chain is inlined where a scheduler calls it (as every ``choose``
is, :mod:`schedbench._jit`), and with it each family's kernel that is itself an
``inline_kernel`` (First-Fit's, a scan that costs about as much as a call); the families
whose ``choose`` sorts the nodes are ``internal_kernel``\\ s, called: their sort dwarfs the
call, and inlining them at every call site would multiply the loop's compile time.
"""

from __future__ import annotations

import importlib
import inspect
from typing import NamedTuple

import numba
import numpy as np

from ..core.api import (
    alloc_committed,
    alloc_enqueued,
    alloc_released,
    attempt_failed,
    attempt_succeeded,
    choose,
    counts_attempts,
    implements,
    plan_order,
    plan_order_reads,
    reads_queue_order,
)
from ..core.hooks import implementation

FAMILIES: tuple[str, ...] = (
    "schedbench.allocators.fit:FirstFit",
    "schedbench.allocators.fit:BestFit",
    "schedbench.allocators.netti:Balanced",
    "schedbench.allocators.netti:Weighted",
    "schedbench.allocators.netti:PriorityWeighted",
    "schedbench.allocators.keller:Keller",
)
"""The jitted allocator families, ``"module:StateClass"``; a family's code (Allocator.family)
is its index here.  Codes are compiled into the loops, which numba's cache keys on the
package's sources: reordering is safe."""


class Allocator(NamedTuple):
    """Every jitted allocator's state: ``family`` (int) selects the family's kernels; the
    other fields are the families' (their state classes document them), size 0 where the
    family does not use them.  hint int64 (4,): First-Fit; order int64 (m,), key float64
    (m,), tmp int64 (m,): node-order buffers; crit int64 (4,), bins int64 (16,): Balanced;
    sums int64 (5,), prio int64 (4,), weights float64 (4,), mode int64 (2,), bound int64
    (1,): Weighted and Priority-Weighted (crit too)."""

    family: int
    hint: np.ndarray
    order: np.ndarray
    key: np.ndarray
    tmp: np.ndarray
    crit: np.ndarray
    bins: np.ndarray
    sums: np.ndarray
    prio: np.ndarray
    weights: np.ndarray
    mode: np.ndarray
    bound: np.ndarray


_DTYPES: dict[str, type] = dict(
    hint=np.int64, order=np.int64, key=np.float64, tmp=np.int64, crit=np.int64, bins=np.int64,
    sums=np.int64, prio=np.int64, weights=np.float64, mode=np.int64, bound=np.int64,
)
"""Each array field's dtype: a family's field must have it (one numba type for every
family), and a field the family lacks is an empty array of it."""

_HOOKS = (choose, plan_order, plan_order_reads, alloc_enqueued, alloc_committed, alloc_released, attempt_failed, attempt_succeeded,
          counts_attempts, reads_queue_order)
_JIT_OPTIONS = dict(nogil=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)


def pack(state) -> Allocator:
    """The :class:`Allocator` of a family's state (a namedtuple of one of the
    :data:`FAMILIES` classes): its arrays, empty ones for the fields it lacks."""
    cls = type(state)
    name = f"{cls.__module__}:{cls.__qualname__}"
    if name not in FAMILIES:
        raise TypeError(f"{name} is not an allocator family of schedbench.allocators.dispatch.FAMILIES")
    _register_chains()
    arrays = {field: np.zeros(0, dtype) for field, dtype in _DTYPES.items()}
    for field, value in state._asdict().items():
        want = _DTYPES.get(field)
        if want is None:
            raise TypeError(f"{name}.{field} is not a field of dispatch.Allocator: add it there and to _DTYPES")
        if not (isinstance(value, np.ndarray) and value.dtype == want and value.ndim == 1
                and value.flags.c_contiguous and value.flags.writeable):
            raise TypeError(f"{name}.{field} must be a writeable contiguous 1-d {np.dtype(want)} array")
        arrays[field] = value
    return Allocator(FAMILIES.index(name), **arrays)


def _family_classes() -> list[type]:
    classes = []
    for name in FAMILIES:
        module, qualname = name.split(":")
        classes.append(getattr(importlib.import_module(module), qualname))
    return classes


def _chain(hook, impls: list):
    """The kernel implementing ``hook`` for :class:`Allocator`: a branch per family that
    implements it (``impls[code]``, None for the others), calling the family's kernel;
    families without one run the hook's own body (its no-op default)."""
    params = ", ".join(inspect.signature(hook).parameters)
    names: dict[str, object] = {"__name__": __name__}
    lines = [f"def {hook.__name__}_by_family({params}):", "    family = alloc.family"]
    implemented = [code for code, impl in enumerate(impls) if impl is not None]
    if len(implemented) == len(impls):  # the last family needs no test
        fallback = implemented.pop()
        names["_fallback"] = impls[fallback]
    else:
        # a copy of the hook's body: the hook itself would resolve to this chain again
        names["_fallback"] = numba.njit(inline="always", **_JIT_OPTIONS)(
            type(hook)(hook.__code__, {}, f"{hook.__name__}_default"))
    for code in implemented:
        names[f"_family_{code}"] = impls[code]
        lines += [f"    if family == {code}:", f"        return _family_{code}({params})"]
    lines.append(f"    return _fallback({params})")
    exec(compile("\n".join(lines), f"<allocator dispatch: {hook.__name__}>", "exec"), names)
    return numba.njit(**_JIT_OPTIONS)(names[f"{hook.__name__}_by_family"])


_registered = False


def _register_chains() -> None:
    """Register, once, the :class:`Allocator` kernel of every allocator hook some family
    implements.  Run when the first state is packed, from a factory: by then every module
    is imported, so the families' (which import this one) can be imported here, and the
    chains exist before any kernel is typed with an :class:`Allocator`."""
    global _registered
    if _registered:
        return
    classes = _family_classes()
    for hook in _HOOKS:
        impls = [implementation(hook, cls) for cls in classes]
        if any(impl is not None for impl in impls):
            implements(hook, Allocator)(_chain(hook, impls))
    _registered = True
