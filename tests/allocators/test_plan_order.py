"""The planning order's hooks: what ``plan_order_reads`` declares of each allocator's
``plan_order`` holds (conservative on nodes leaves the rows of the nodes that host
nothing of a job at 0 when the order does not read them)."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from schedbench import registry
from schedbench.core.api import OrderReads, plan_order, plan_order_reads
from schedbench.engine import warm
from schedbench.engine.prepare import start_run


@numba.njit
def _order(alloc, free):
    m = free.shape[0]
    order = np.zeros(m, dtype=np.int64)
    got = plan_order(alloc, free, order, np.zeros(m), np.zeros(m, dtype=np.int64))
    return got, order


@numba.njit
def _reads(alloc):
    return plan_order_reads(alloc)


def _alloc(name):
    table, mach, meta = warm.mode_input("nodes")
    return start_run(table, mach, "conservative", name, meta=meta).alloc, mach


GIVERS = [n for n in registry.allocator_names() if registry.allocator(n).capabilities.gives_plan_order]


def test_the_planning_orders_declare_what_they_read():
    assert {n: OrderReads(_reads(_alloc(n)[0])) for n in GIVERS} == {
        "ff": OrderReads.NOTHING, "bf": OrderReads.OWN_ROW, "balanced": OrderReads.EVERY_ROW,
        "keller": OrderReads.NOTHING}


def _restricted(order, hosting):
    return [int(n) for n in order if hosting[n]]


@pytest.mark.parametrize("name", GIVERS)
def test_an_order_that_does_not_read_every_row_orders_the_hosting_nodes_alike(name):
    """With the rows of the nodes that host nothing set to 0, the nodes that host some
    come in the same order (a placement reads only those), for the allocators that
    declare NOTHING or OWN_ROW; Balanced, which declares EVERY_ROW, is shown to need it
    (its bins' sizes count every node)."""
    alloc, mach = _alloc(name)
    reads = _reads(alloc)
    rng = np.random.default_rng(3)
    m = mach.n_nodes  # (Keller's order is over the machine's nodes)
    differs = 0
    for _ in range(300):
        free = rng.integers(0, 5, size=(m, 4)).astype(np.int64)
        hosting = rng.random(m) < 0.4
        free0 = free.copy()
        free0[~hosting] = 0
        ok, full = _order(alloc, free)
        ok0, part = _order(alloc, free0)
        assert ok == ok0 == 0
        same = _restricted(full, hosting) == _restricted(part, hosting)
        if reads != OrderReads.EVERY_ROW:
            assert same, (free, hosting)
        differs += not same
    if name == "balanced":
        assert differs > 0
