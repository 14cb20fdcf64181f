"""The shared allocator state (schedbench.allocators.dispatch): every jitted allocator runs
in the same compiled loop, each family keeps its own kernels."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

from schedbench import registry
from schedbench.allocators import dispatch, fit, keller, netti
from schedbench.engine import warm
from schedbench.engine.prepare import start_run

JITTED = [n for n in registry.allocator_names() if registry.allocator(n).kind is registry.Kind.JITTED]
FAMILY_OF = {"ff": fit.FirstFit, "bf": fit.BestFit, "balanced": netti.Balanced, "weighted": netti.Weighted,
             "priority-weighted": netti.PriorityWeighted, "keller": keller.Keller}


def test_every_jitted_allocator_takes_the_same_loop():
    table, mach, meta = warm.mode_input("nodes")
    signatures = {}
    for name in JITTED:
        run = start_run(table, mach, "easy", name, meta=meta)
        assert isinstance(run.alloc, dispatch.Allocator)
        cls = FAMILY_OF[name]
        assert dispatch.FAMILIES[run.alloc.family] == f"{cls.__module__}:{cls.__qualname__}"
        loop, signatures[name] = warm.loop_and_signature(run)
    assert set(JITTED) >= set(FAMILY_OF)
    assert len(set(signatures.values())) == 1, signatures


def test_fields_a_family_lacks_are_empty():
    alloc = dispatch.pack(fit.FirstFit(np.zeros(4, dtype=np.int64)))
    assert alloc.family == 0 and alloc.hint.shape == (4,)
    assert all(getattr(alloc, f).size == 0 for f in alloc._fields if f not in ("family", "hint"))
    assert alloc.key.dtype == np.float64 and alloc.order.dtype == np.int64


class _Stranger(NamedTuple):
    hint: np.ndarray


def test_pack_refuses_what_would_give_another_type():
    with pytest.raises(TypeError, match="not an allocator family"):
        dispatch.pack(_Stranger(np.zeros(4, dtype=np.int64)))
    with pytest.raises(TypeError, match=r"FirstFit\.hint must be .* int64"):
        dispatch.pack(fit.FirstFit(np.zeros(4)))  # float64: another numba type, another loop
    with pytest.raises(TypeError, match=r"FirstFit\.hint must be"):
        dispatch.pack(fit.FirstFit(np.zeros(8, dtype=np.int64)[::2]))  # not contiguous
