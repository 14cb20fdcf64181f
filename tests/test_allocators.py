"""Allocators and PRB against the references of tests/naive_alloc.py (written from Netti
et al.), through whole replays: the reference dispatcher places every job explicitly via the
decision interface, the jitted pair places them itself; the schedules must be identical."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_alloc import ReferenceDispatcher, order_balanced
from schedbench import jobs, layout, machine, replay
from schedbench.schedulers.prb import expected_queue_wait
from schedbench.simulation import Simulation
from schedbench.workloads import eurora_like

ALLOCS = ["ff", "bf", "balanced", "weighted", "priority-weighted"]


def test_balanced_order_by_hand():
    # nodes 0-3 have MICs (node 1's are busy), nodes 4-7 GPUs (node 6's busy):
    # null bin = [1, 6]; MIC bin [0, 2, 3], GPU bin [4, 5, 7]; equal sizes -> GPUs (type
    # 1) first, then the larger bin, alternating.
    free = [[16, 0, 2, 0], [16, 0, 0, 0], [16, 0, 1, 0], [16, 0, 2, 0],
            [16, 2, 0, 0], [16, 1, 0, 0], [16, 0, 0, 0], [16, 2, 0, 0]]
    assert order_balanced(free) == [1, 6, 4, 0, 5, 2, 7, 3]
    mach = machine.Machine(np.array(free, dtype=np.int64), "hand")
    table = jobs.from_columns(submit=np.array([0]), run=np.array([1]), units=np.array([1]),
                              unit_cores=np.array([1]), unit_gpus=np.array([0]),
                              unit_mics=np.array([0]), unit_mem=np.array([0]))
    sim = Simulation(table, mach, allocator="balanced")
    sim.advance()
    sim.start(0)
    assert sim.core.free[1, 0] == 15  # the first node of the null bin


def _workload(n, seed, load):
    table, meta = eurora_like.generate(n, np.random.default_rng(seed), load=load)
    return table, machine.from_spec(meta["machine"]), meta


@pytest.mark.parametrize("allocator", ALLOCS)
@pytest.mark.parametrize("scheduler", ["fcfs", "sjf", "prb"])
def test_jitted_pairs_equal_the_reference_dispatcher(scheduler, allocator):
    table, mach, meta = _workload(250, 7, 1.5)
    ref = Simulation(table, mach, queue_order="fifo")
    expected = ref.run(ReferenceDispatcher(scheduler, allocator))
    got = replay.replay(table, mach, scheduler, allocator, meta=meta)
    np.testing.assert_array_equal(got.start, expected.start)
    np.testing.assert_array_equal(got.nodes_used, expected.nodes_used)
    assert (got.start >= 0).all()


@st.composite
def small_cases(draw):
    m = draw(st.integers(1, 6))
    cap = np.array([[draw(st.integers(1, 8)), draw(st.integers(0, 2)), draw(st.integers(0, 2)),
                     draw(st.sampled_from([0, 64]))] for _ in range(m)], dtype=np.int64)
    n = draw(st.integers(1, 25))
    cols = {k: [] for k in ("submit", "run", "estimate", "units", "unit_cores", "unit_gpus", "unit_mics", "unit_mem", "queue", "wait")}
    for _ in range(n):
        cols["submit"].append(draw(st.integers(0, 50)))
        cols["run"].append(draw(st.integers(0, 30)))
        cols["estimate"].append(draw(st.integers(1, 40)))
        cols["units"].append(draw(st.integers(1, 4)))
        cols["unit_cores"].append(draw(st.integers(1, 3)))
        cols["unit_gpus"].append(draw(st.integers(0, 1)))
        cols["unit_mics"].append(draw(st.integers(0, 1)))
        cols["unit_mem"].append(draw(st.sampled_from([0, 0, 16])))
        cols["queue"].append(draw(st.integers(0, 2)))
        cols["wait"].append(draw(st.integers(-1, 100)))
    order = np.argsort(cols["submit"], kind="stable")
    table = jobs.from_columns(**{k: np.asarray(v)[order] for k, v in cols.items()})
    return table, machine.Machine(cap, machine.spec_of(cap))


@settings(max_examples=150)
@given(small_cases(), st.sampled_from(["fcfs", "sjf", "prb"]), st.sampled_from(ALLOCS))
def test_generated_pairs_equal_the_reference_dispatcher(case, scheduler, allocator):
    table, mach = case
    expected = Simulation(table, mach).run(ReferenceDispatcher(scheduler, allocator))
    got = replay.replay(table, mach, scheduler, allocator)
    np.testing.assert_array_equal(got.start, expected.start)
    np.testing.assert_array_equal(got.nodes_used, expected.nodes_used)


def test_prb_expected_waits_from_eurora_queues_and_from_the_trace():
    table, mach, meta = _workload(100, 1, 1.0)
    waits = expected_queue_wait(table, meta)
    codes = meta["queues"]
    for name, seconds in meta["queue_expected_wait"].items():
        if name in codes:
            assert (waits[table.queue == codes[name]] == max(1, seconds)).all()
    t = jobs.from_columns(submit=np.arange(4), run=np.ones(4), procs_req=np.ones(4),
                          queue=np.array([1, 1, 2, 3]), wait=np.array([10, 30, -1, 4]))
    assert expected_queue_wait(t).tolist() == [20, 20, 15, 4]


def test_easy_node_feasible_backfill_lowers_priority_weighted_priorities():
    """A job backfilled through EASY's node-feasible reservation is allocated, so it
    counts -1 for the critical types it needs, like every other allocation.

    Three nodes of (8 cores, 3 GPUs); jobs ask units of (2 cores, 1 GPU), C one of (1, 1).
    At t=0 A (3 units) and B (3) start: the GPU priority stays 1.  At t=1 the head H (5
    units, two resource types, so the reservation is node-feasible) does not fit (+1 -> 2);
    its shadow time is A's predicted end, 100, where node 0 and node 2 host 6 units.  C
    (predicted 500 s, past the shadow) fits now on node 2 and leaves it hosting 2 of them,
    so H still fits at 100: C starts at 1 and the priority goes back to 1."""
    table = jobs.from_columns(
        submit=np.array([0, 0, 1, 1]),
        run=np.array([100, 1000, 10, 500]),
        estimate=np.array([100, 1000, 10, 500]),
        units=np.array([3, 3, 5, 1]),
        unit_cores=np.array([2, 2, 2, 1]),
        unit_gpus=np.array([1, 1, 1, 1]),
        unit_mics=np.zeros(4, np.int64),
        unit_mem=np.zeros(4, np.int64),
        req_nodes=np.zeros(4, np.int64),
    )
    m = machine.from_spec("3x(cores=8,gpus=3)")
    sim = Simulation(table, m, scheduler="easy", allocator="priority-weighted")
    for _ in range(2):
        sim.advance()
        sim.jitted_pass()
        sim.end_pass()
    assert sim.core.jobs[:, layout.J_START].tolist() == [0, 0, -1, 1]
    assert sim.alloc.prio[1] == 1
