"""Properties every allocator must have, on random node arrays and requests (each
allocator's ``choose`` kernel called on a hand-built core): never over-allocate; exactly
the requested units or nothing; every allocator agrees on *whether* a job fits; Balanced
puts nodes without free critical resources first; equal input gives equal output."""

from __future__ import annotations

import numba
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from schedbench import core, registry
from schedbench.core import layout
from schedbench.core.api import C_FREE, W_COUNT, W_NODE, choose
from schedbench.io import jobs, machine

N = layout.N_RES
ALLOCATORS = registry.allocator_names()


@numba.njit(cache=True)
def _choose(alloc, core, j):
    return choose(alloc, core, j)


@st.composite
def cases(draw):
    m = draw(st.integers(1, 12))
    cap = np.array([[draw(st.integers(1, 16)), draw(st.integers(0, 2)), draw(st.integers(0, 2)),
                     draw(st.sampled_from([0, 32, 64]))] for _ in range(m)], dtype=np.int64)
    used = np.array([[draw(st.integers(0, int(c))) for c in row] for row in cap], dtype=np.int64)
    free = cap - used
    req = np.array([draw(st.integers(0, 4)), draw(st.integers(0, 1)), draw(st.integers(0, 1)),
                    draw(st.sampled_from([0, 8]))], dtype=np.int64)
    if req[:3].sum() == 0:
        req[0] = 1
    units = draw(st.integers(1, 20))
    req_nodes = -1
    if draw(st.booleans()):
        req_nodes = draw(st.sampled_from([d for d in range(1, units + 1) if units % d == 0]))
    prio = [draw(st.integers(1, 10)) for _ in range(N)]
    sums = [draw(st.integers(0, 1000))] + [draw(st.integers(0, 10_000)) for _ in range(N)]
    return cap, free, req, units, req_nodes, (prio, sums)


def _allocate(name, cap, free, req, units, req_nodes, weights):
    """(node order, (nodes, counts) or None) of allocator ``name`` for one job."""
    table = jobs.from_columns(
        submit=np.array([0]), run=np.array([1]), units=np.array([units]), unit_cores=req[:1],
        unit_gpus=req[1:2], unit_mics=req[2:3], unit_mem=req[3:], req_nodes=np.array([req_nodes]),
    )
    mach = machine.Machine(cap, machine.spec_of(cap))
    J = layout.job_matrix(table)
    c = core.new_core(J, cap)
    c.free[:] = free
    c.scal[C_FREE : C_FREE + N] = free.sum(axis=0)
    entry = registry.allocator(name)
    alloc = entry.load()(core.Setup(table, mach, J, {}), **entry.resolve({}))  # the declared defaults
    prio, sums = weights
    # the allocators share one state class (allocators.dispatch): a family's fields are the
    # non-empty arrays
    if alloc.sums.size:  # weighted, priority-weighted
        alloc.sums[:] = sums
        if alloc.bound.size:  # priority-weighted
            alloc.prio[:] = np.where(alloc.crit > 0, prio, 1)
    used = _choose(alloc, c, 0)
    assert np.array_equal(c.free, free), "placement must not touch the free array"
    order = alloc.order if alloc.order.size else np.arange(cap.shape[0])
    placed = None if used < 0 else (c.work[W_NODE, :used].copy(), c.work[W_COUNT, :used].copy())
    return order.copy(), placed


@given(cases())
def test_allocation_properties(case):
    cap, free, req, units, req_nodes, weights = case
    outcomes = {}
    for name in ALLOCATORS:
        order, alloc = _allocate(name, cap, free, req, units, req_nodes, weights)
        assert sorted(order.tolist()) == list(range(cap.shape[0])), f"{name}: order is not a permutation"
        again = _allocate(name, cap, free, req, units, req_nodes, weights)
        assert np.array_equal(order, again[0]) and (alloc is None) == (again[1] is None)
        outcomes[name] = alloc is not None
        if alloc is None:
            continue
        nodes, counts = alloc
        assert counts.sum() == units, f"{name}: allocated {counts.sum()} of {units} units"
        assert len(set(nodes.tolist())) == nodes.size and (counts > 0).all()
        assert (free[nodes] - counts[:, None] * req[None, :] >= 0).all(), f"{name}: over-allocates"
        if req_nodes > 0:
            assert nodes.size == req_nodes and (counts == units // req_nodes).all()
    assert len(set(outcomes.values())) == 1, f"allocators disagree on whether the job fits: {outcomes}"


@given(cases())
def test_balanced_puts_nodes_without_free_critical_resources_first(case):
    cap, free, req, units, req_nodes, weights = case
    order, _ = _allocate("balanced", cap, free, req, units, req_nodes, weights)
    plain = (free[order][:, 1:3] == 0).all(axis=1)
    first_critical = int(np.argmin(plain)) if not plain.all() else plain.size
    assert plain[:first_critical].all() and not plain[first_critical:].any()
    assert np.all(np.diff(order[:first_critical]) > 0), "the null bin keeps index order"
