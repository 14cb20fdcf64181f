"""Allocators (and every queue scheduler with them, PRB included) against the references of tests/naive_alloc.py (written from Netti
et al.), through whole replays: the reference dispatcher places every job explicitly via the
decision interface, the jitted pair places them itself; the schedules must be identical."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naive import placements
from naive_alloc import ReferenceDispatcher, order_balanced, replay_nodes_netti
from schedbench.analysis import results
from schedbench.core import layout
from schedbench.engine import replay
from schedbench.engine.simulation import Simulation
from schedbench.io import jobs, machine
from schedbench.io.jobs import expected_queue_wait
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


SCHEDS = ["fcfs", "sjf", "prb", "prb-blocking"]
# (allocator, weight rule): every allocator, plus the authors' weights for the two Weighted ones.
# The allocators share one state class (schedbench.allocators.dispatch): each scheduler's
# loop is compiled once for all seven variants, which cost their runs only.
ALLOC_RULES = [(a, "text") for a in ALLOCS] + [("weighted", "authors"), ("priority-weighted", "authors")]


def _options(allocator, rule, window=100):
    return {"weight_rule": rule, "window": window} if "weighted" in allocator else {}


@pytest.mark.parametrize(("allocator", "rule"), ALLOC_RULES)
@pytest.mark.parametrize("scheduler", SCHEDS)
def test_jitted_pairs_equal_the_reference_dispatcher(scheduler, allocator, rule):
    table, mach, meta = _workload(250, 0, 1.5)  # 148 of the 250 jobs wait under fcfs+ff
    ref = Simulation(table, mach, queue_order="fifo", meta=meta)  # PRB reads the queues' expected waits
    expected = ref.run(ReferenceDispatcher(scheduler, allocator, weight_rule=rule))
    got = replay.replay(table, mach, scheduler, allocator, meta=meta, **_options(allocator, rule))
    np.testing.assert_array_equal(got.start, expected.start)
    np.testing.assert_array_equal(got.nodes_used, expected.nodes_used)
    assert results.allocations_frame(got).equals(results.allocations_frame(expected))
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


# Each pair is a parameter rather than a draw: drawn, the derandomized examples of a CI run
# reached 18 of these 28 pairs (and 22 of the 35 below).  Eight examples a pair: make
# test's cold run stays under four minutes (with 20 a pair, on this machine, 10 CPU s more).
@pytest.mark.parametrize("alloc_rule", ALLOC_RULES, ids="-".join)
@pytest.mark.parametrize("scheduler", SCHEDS)
@settings(max_examples=8)
@given(case=small_cases(), window=st.sampled_from([100, 2, 0]))
def test_generated_pairs_equal_the_reference_dispatcher(case, scheduler, alloc_rule, window):
    table, mach = case
    allocator, rule = alloc_rule
    expected = Simulation(table, mach).run(ReferenceDispatcher(scheduler, allocator, weight_rule=rule, window=window))
    got = replay.replay(table, mach, scheduler, allocator, **_options(allocator, rule, window))
    np.testing.assert_array_equal(got.start, expected.start)
    np.testing.assert_array_equal(got.nodes_used, expected.nodes_used)


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
    sim = Simulation(table, m, scheduler="easy", allocator="priority-weighted", weight_rule="text")
    for _ in range(2):
        sim.step()
    assert sim.core.jobs[:, layout.J_START].tolist() == [0, 0, -1, 1]
    assert sim.alloc.prio[1] == 1


def _gpu_jobs(submit, run, units, cores, gpus, estimate=None):
    n = len(submit)
    return jobs.from_columns(
        submit=np.array(submit), run=np.array(run), estimate=np.array(estimate if estimate is not None else run),
        units=np.array(units), unit_cores=np.array(cores), unit_gpus=np.array(gpus),
        unit_mics=np.zeros(n, np.int64), unit_mem=np.zeros(n, np.int64), req_nodes=np.zeros(n, np.int64),
    )


def _passes(sim, k):
    """Run ``k`` decision points of a jitted scheduler through Simulation; the priorities
    after each."""
    out = []
    for _ in range(k):
        sim.step()
        out.append(int(sim.alloc.prio[1]))
    return out


def test_priority_weighted_counts_every_attempt_backfill_candidates_included():
    """EASY + Priority-Weighted (bound 3) on two nodes of (4 cores, 1 GPU); units of (1
    core, 1 GPU) except J4's (2 cores).

    t=0: J0 (2 units) is allocated: p_gpu = max(1 - 1, 1) = 1.
    t=1: the head J1 does not fit (+1 -> 2); the backfill candidates J2 and J3 need a GPU
    and do not fit (the min-tree skips them; each is still a failed attempt: 3, then 3
    again, the bound); J4 needs no GPU and starts (no change).  The earlier rule left 2.
    t=11: J4 ends; nothing fits: the head fails (3, bounded) and so do J2, J3.
    t=100: J0 ends: J1 and J2 are allocated (3 -> 2 -> 1), J3 fails (2); the order of
    J2's attempt was computed with p_gpu = 2, before it was lowered."""
    table = _gpu_jobs([0, 1, 1, 1, 1], [100, 10, 10, 10, 10], [2, 1, 1, 1, 1], [1, 1, 1, 1, 2], [1, 1, 1, 1, 0])
    m = machine.from_spec("2x(cores=4,gpus=1)")
    sim = Simulation(table, m, scheduler="easy", allocator="priority-weighted", priority_bound=3, weight_rule="text")
    assert _passes(sim, 4) == [1, 3, 3, 2]
    assert sim.core.jobs[:, layout.J_START].tolist() == [0, 100, 100, -1, 1]
    # J2's order: queue J2, J3 (pred 10 each, one GPU each), one GPU of two in use (J1)
    mean_req, load = 20 / 20, 1 / 2
    assert sim.alloc.weights[1] == mean_req * load / 2 * 2


def test_priority_weighted_counts_a_backfill_refused_by_the_reservation():
    """EASY + Priority-Weighted on two nodes of (4 cores, 2 GPUs), units of (1 core, 1 GPU).

    t=0: J0 (3 units, 100 s) is allocated (p_gpu 1).  t=1: the head J1 (4 units) fails
    (2); its shadow time is 100.  J2 (500 s) fits now but would leave 3 GPUs at 100: it is
    refused, a failed attempt (3).  J3 (50 s) ends before the shadow: it starts, its node
    order computed with p_gpu = 3, then p_gpu = 2."""
    table = _gpu_jobs([0, 1, 1, 1], [100, 10, 500, 50], [3, 4, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1])
    m = machine.from_spec("2x(cores=4,gpus=2)")
    sim = Simulation(table, m, scheduler="easy", allocator="priority-weighted", weight_rule="text")
    assert _passes(sim, 2) == [1, 2]
    assert sim.core.jobs[:, layout.J_START].tolist() == [0, -1, -1, 1]
    # J3's order: the queue J1, J2, J3 asks 10*4 + 500*1 + 50*1 GPU-seconds over 560 s of
    # predictions; 3 of 4 GPUs in use
    w = (40 + 500 + 50) / 560 * (3 / 4) / 4
    w *= 3
    assert sim.alloc.weights[1] == w


@pytest.mark.parametrize(("rule", "node"), [("text", 0), ("authors", 1)])
def test_weighted_authors_rule_keeps_accelerators_weighted_on_an_idle_machine(rule, node):
    """A CPU job on an idle machine of a GPU node (0) and a CPU node (1).  The text's
    rule: nothing is in use, every w_k is 0, every rank 0: index order puts it on the GPU
    node.  The authors' smoothing ((used + 1) / cap², counters from 1) keeps w_gpu > 0:
    the GPU node ranks last and the job goes to the CPU node."""
    table = _gpu_jobs([0], [10], [1], [1], [0])
    m = machine.Machine(np.array([[16, 2, 0, 0], [16, 0, 0, 0]], dtype=np.int64), "hand")
    got = replay.replay(table, m, "fcfs", "weighted", weight_rule=rule)
    r = results.allocations_frame(got)
    assert r["node"].to_list() == [node]


# --------------------------------------------------------------------------- EASY (and FCFS/SJF)
# against tests/naive.py's spec oracle carrying the Netti allocators (naive_alloc.replay_nodes_netti)


def _rows(table, pred=None):
    pred = table.estimate if pred is None else pred
    return [dict(job_id=int(table.job_id[i]), submit=int(table.submit[i]), run=int(table.run[i]),
                 pred=int(pred[i]), units=int(table.units[i]),
                 unit=(int(table.unit_cores[i]), int(table.unit_gpus[i]), int(table.unit_mics[i]), int(table.unit_mem[i])),
                 req_nodes=int(table.req_nodes[i])) for i in range(table.n_jobs)]


def _check_against_naive(table, mach, scheduler, allocator, rule, window=100, predictor="requested", meta=None):
    """The engine against the oracle; under another predictor than the requested time the
    oracle is given the predictions the engine made at submission (fixed from then on)."""
    opts = dict(_options(allocator, rule, window), meta=meta)
    got = replay.replay(table, mach, scheduler, allocator, predictor, **opts)
    pred = None if predictor == "requested" else got.pred
    nv = replay_nodes_netti(_rows(table, pred), mach.capacity.tolist(), scheduler, allocator, rule, window,
                            qwait=expected_queue_wait(table, meta))
    expected = np.array([-1 if s is None else s for s in nv.start])
    np.testing.assert_array_equal(got.start, expected)
    placed = placements(results.allocations_frame(got))
    for job_id, alloc in zip(nv.job_id, nv.alloc, strict=True):
        assert placed.get(job_id, []) == (alloc or []), job_id
    if allocator == "priority-weighted":
        # the priorities after every pass, stepped through the jitted scheduler
        sim = Simulation(table, mach, scheduler=scheduler, allocator=allocator, predictor=predictor, **opts)
        trace = []
        while sim.step() is not None:
            trace.append((sim.now, int(sim.alloc.prio[1]), int(sim.alloc.prio[2])))
        assert trace == nv.prio_trace


# Workloads where jobs wait (95 of 250 under easy+ff on seed 0, 39 on seed 1) and that
# tell the readings apart: on seed 1 an authors' window read in easy-sjbf's order of
# visits rather than the queue's starts 7 jobs at other times; on seed 0 an ebf-accasim
# window read backwards 20.
_SEED = {"easy": 0, "easy-sjbf": 1, "ebf-accasim": 0, "prb": 0, "prb-blocking": 0}


@pytest.mark.parametrize("scheduler", list(_SEED))
@pytest.mark.parametrize(("allocator", "rule"), [*ALLOC_RULES, ("keller", "text")])
def test_easy_equals_the_naive_oracle_with_netti_allocators(allocator, rule, scheduler):
    table, mach, meta = _workload(250, _SEED[scheduler], 1.5)
    _check_against_naive(table, mach, scheduler, allocator, rule, meta=meta)


@pytest.mark.parametrize("scheduler", ["easy"])  # (each scheduler is a replay loop compiled for the predictor)
@pytest.mark.parametrize(("allocator", "rule"), [("balanced", "text"), ("weighted", "authors"),
                                                 ("priority-weighted", "authors")])
def test_netti_study_pairs_equal_the_oracle_under_user_profile_predictions(scheduler, allocator, rule):
    # the Netti study's predictor (every other oracle case here predicts the requested time)
    table, mach, meta = _workload(250, 0, 1.5)
    _check_against_naive(table, mach, scheduler, allocator, rule, predictor="user-profile", meta=meta)


@st.composite
def node_cases(draw):
    m = draw(st.integers(1, 5))
    cap = np.array([[draw(st.integers(1, 8)), draw(st.integers(0, 2)), draw(st.integers(0, 2)),
                     draw(st.sampled_from([0, 32]))] for _ in range(m)], dtype=np.int64)
    n = draw(st.integers(1, 25))
    cols = {k: [] for k in ("submit", "run", "estimate", "units", "unit_cores", "unit_gpus", "unit_mics", "unit_mem",
                            "req_nodes")}
    for _ in range(n):
        units = draw(st.integers(1, 4))
        cols["submit"].append(draw(st.integers(0, 40)))
        cols["run"].append(draw(st.integers(0, 25)))
        cols["estimate"].append(draw(st.integers(1, 30)))
        cols["units"].append(units)
        cols["unit_cores"].append(draw(st.integers(1, 3)))
        cols["unit_gpus"].append(draw(st.integers(0, 1)))
        cols["unit_mics"].append(draw(st.integers(0, 1)))
        cols["unit_mem"].append(draw(st.sampled_from([0, 0, 8])))
        cols["req_nodes"].append(
            draw(st.sampled_from([d for d in range(1, units + 1) if units % d == 0])) if draw(st.booleans()) else -1
        )
    order = np.argsort(cols["submit"], kind="stable")
    table = jobs.from_columns(job_id=np.arange(1, n + 1), **{k: np.asarray(v)[order] for k, v in cols.items()})
    return table, machine.Machine(cap, machine.spec_of(cap))


@pytest.mark.parametrize("alloc_rule", [*ALLOC_RULES, ("keller", "text")], ids="-".join)
@pytest.mark.parametrize("scheduler", ["fcfs", "sjf", "easy", "easy-sjbf", "ebf-accasim", "prb", "prb-blocking"])
@settings(max_examples=8)
@given(case=node_cases(), window=st.sampled_from([100, 2]))
def test_generated_nodes_equal_the_naive_oracle_with_netti_allocators(case, scheduler, alloc_rule, window):
    table, mach = case
    _check_against_naive(table, mach, scheduler, *alloc_rule, window)
