"""Properties every allocator must have, on random node arrays and requests (kernels
called directly): never over-allocate; exactly the requested units or nothing; every
allocator agrees on *whether* a job fits; Balanced puts nodes without free critical
resources first; equal input gives equal output."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from schedbench import layout
from schedbench.allocators import ALLOCATORS, _order, _place

N = layout.N_RES


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
    scal = np.zeros(layout.N_SCAL, dtype=np.int64)
    scal[layout.V_CAP : layout.V_CAP + N] = cap.sum(axis=0)
    scal[layout.V_FREE : layout.V_FREE + N] = free.sum(axis=0)
    scal[layout.V_CRIT + 1] = scal[layout.V_CRIT + 2] = 1
    scal[layout.V_PRIO : layout.V_PRIO + N] = [draw(st.integers(1, 10)) for _ in range(N)]
    scal[layout.V_PBOUND] = 10
    scal[layout.V_WPRED] = draw(st.integers(0, 1000))
    scal[layout.V_WSUM : layout.V_WSUM + N] = [draw(st.integers(0, 10_000)) for _ in range(N)]
    return cap, free, req, units, req_nodes, scal


def _allocate(code, cap, free, req, units, req_nodes, scal):
    m = cap.shape[0]
    order = np.empty(m, np.int64)
    _order(int(code), free, cap, order, np.empty(m), np.empty(m, np.int64), scal, units, req)
    nodes, counts = np.empty(m, np.int64), np.empty(m, np.int64)
    used = _place(free, order, 0, units, req, req_nodes, nodes, counts)
    return order, (None if used < 0 else (nodes[:used].copy(), counts[:used].copy()))


@given(cases())
def test_allocation_properties(case):
    cap, free, req, units, req_nodes, scal = case
    outcomes = {}
    for name, code in ALLOCATORS.items():
        before = free.copy()
        order, alloc = _allocate(code, cap, free, req, units, req_nodes, scal)
        assert np.array_equal(free, before), "placement must not touch the free array"
        assert sorted(order.tolist()) == list(range(cap.shape[0])), f"{name}: order is not a permutation"
        again = _allocate(code, cap, free, req, units, req_nodes, scal)
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
    cap, free, req, units, req_nodes, scal = case
    order, _ = _allocate(ALLOCATORS["balanced"], cap, free, req, units, req_nodes, scal)
    plain = (free[order][:, 1:3] == 0).all(axis=1)
    first_critical = int(np.argmin(plain)) if not plain.all() else plain.size
    assert plain[:first_critical].all() and not plain[first_critical:].any()
    assert np.all(np.diff(order[:first_critical]) > 0), "the null bin keeps index order"
