"""IPSCHED's bound before the model (issue 27): where a placement (first-fit, or the
widest placement of the window or of a knapsack set) reaches the knapsack upper bound
no IP is built, and the placement is an optimum of the IP: never below the solver's
answer, above it by at most the solver's gap, at every decision point, both objectives,
with and without GPUs, both models."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_soner_policies import _check_capacity, _solved_both_ways, eligibility_windows

from schedbench.engine.replay import replay
from schedbench.io.jobs import core_gpu_table
from schedbench.io.machine import from_spec
from schedbench.policies.ipsched import IPSched
from schedbench.policies.window import fewest_nodes, first_fit, knapsack
from schedbench.workloads import esp, soner

# --------------------------------------------------------------------------- the knapsack


def _best(value, demand, capacity):
    answer = knapsack(np.array(value, dtype=np.float64), np.array(demand, dtype=np.int64), capacity)
    return None if answer is None else (answer[0], np.flatnonzero(answer[1]).tolist())


def test_knapsack_hand_made():
    assert _best([6, 10, 12], [1, 2, 3], 5) == (22.0, [1, 2])
    assert _best([6, 10, 12], [1, 2, 3], 3) == (16.0, [0, 1])
    assert _best([6, 10, 12], [1, 2, 3], 6) == (28.0, [0, 1, 2])  # all fit
    assert _best([6, 10, 12], [1, 2, 3], 0) == (0.0, [])
    # demands in steps of 256 on 2,272 (ESP on 284 free nodes): one cell per 256
    assert _best([5, 4, 4], [1024, 1280, 1024], 2272) == (9.0, [0, 2])
    # a zero demand always counts; a demand above the capacity never does
    assert _best([1, 7, 2], [0, 9, 3], 4) == (3.0, [0, 2])
    # equal values: a later item only where it is strictly better, so the first one
    assert _best([4, 4], [2, 2], 3) == (4.0, [0])


def test_knapsack_gives_up_above_its_cells():
    assert knapsack(np.array([1.0, 1.0]), np.array([3, 5]), 7, max_cells=6) is None
    assert knapsack(np.array([1.0, 1.0]), np.array([3, 5]), 7, max_cells=7)[0] == 1.0


@settings(max_examples=200, deadline=None)
@given(items=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 12)), min_size=1, max_size=8),
       capacity=st.integers(0, 40), scale=st.sampled_from([1, 8]))
def test_knapsack_is_the_brute_force_optimum(items, capacity, scale):
    value = np.array([v for v, _ in items], dtype=np.float64)
    demand = np.array([d * scale for _, d in items], dtype=np.int64)
    best = max(value[list(s)].sum() for r in range(len(items) + 1) for s in itertools.combinations(range(len(items)), r)
               if demand[list(s)].sum() <= capacity * scale)
    optimum, chosen = knapsack(value, demand, capacity * scale)
    assert optimum == best
    assert value[chosen].sum() == best and demand[chosen].sum() <= capacity * scale


def test_fewest_nodes_counts_the_largest_hosts():
    host = np.array([[8, 3, 8, 5], [2, 2, 2, 2], [4, 4, 4, 4]])
    assert fewest_nodes(host, np.array([12, 7, 4]), np.array([-1, -1, 3])).tolist() == [2, 4, 3]


def test_widest_first_fit_takes_the_emptiest_nodes_first():
    """Node 0 has 3 free cores, nodes 1-3 have 8: a 16-core job takes nodes 1 and 2
    (first-fit: 0, 1, 2); an 11-core one then takes node 3 and node 0's 3 cores: 4 nodes
    in all, where first-fit uses 5."""
    free = np.array([[3, 0, 0, 0], [8, 0, 0, 0], [8, 0, 0, 0], [8, 0, 0, 0]])
    request = np.array([[1, 0, 0, 0], [1, 0, 0, 0]])
    units, need, req_nodes = np.array([16, 11]), np.array([1, 1]), np.array([-1, -1])
    host = np.minimum(free[:, 0][None, :], units[:, None])
    wide = first_fit(free, request, units, need, req_nodes, host, widest=True)
    assert [(a, n.tolist(), c.tolist()) for a, n, c in wide] == [(0, [1, 2], [8, 8]), (1, [0, 3], [3, 8])]
    plain = first_fit(free, request, units, need, req_nodes, host)
    assert [(a, n.tolist(), c.tolist()) for a, n, c in plain] == [(0, [0, 1, 2], [3, 8, 5]), (1, [2, 3], [3, 8])]
    second = first_fit(free, request, units, need, req_nodes, host, order=np.array([1]), widest=True)
    assert [(a, n.tolist(), c.tolist()) for a, n, c in second] == [(1, [1, 2], [8, 3])]


# --------------------------------------------------------------------------- the bound against the solver


def _check_pairs(pairs) -> int:
    """Each (solver alone, with the bound) pair of decision rows: where the bound proved
    its placement, its value is never below the solver's answer (an optimum, where the
    solver stops within its gap, half a node of the least-weighted job, below one) nor
    above it by more than that gap; returns how many the bound proved."""
    proved = 0
    for solver, bounded in pairs:
        assert solver.proof == "solver"
        if bounded.proof == "solver":
            assert bounded.objective == solver.objective or (bounded.status, solver.status) != ("optimal", "optimal")
            continue
        proved += 1
        assert (bounded.status, bounded.variables, bounded.constraints) == ("optimal", 0, 0)
        # the placement started is first-fit or one worth more
        assert bounded.objective == bounded.start_objective >= solver.start_objective
        rounding = abs(solver.objective or 0.0) * 1e-9 + 1e-9
        if solver.objective is not None:
            assert bounded.objective >= solver.objective - rounding, solver.time
        if solver.status == "optimal":
            assert bounded.objective <= solver.objective + _half_node(solver) + rounding, solver.time
    return proved


_RESOLUTION: dict[int, float] = {}  # decision time -> half a node of the window's least-weighted job


def _half_node(row) -> float:
    return _RESOLUTION[row.time]


def _recording_resolution(patch):
    original = IPSched._start

    def start(self, view, jobs, host, need, weight):
        out = original(self, view, jobs, host, need, weight)
        _RESOLUTION[int(view.time)] = out[2] / 2
        return out

    patch.setattr(IPSched, "_start", start)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=eligibility_windows(), model=st.sampled_from(["states", "nodes"]))
def test_bound_answer_is_the_solvers_optimum_at_every_decision(case, model):
    """Partitions, features, maintenance, with and without GPUs, both objectives."""
    table, machine, meta, site, objective = case
    options = {"objective": objective, "max_nodes": 100_000, "max_jobs": 6, "model": model}
    with pytest.MonkeyPatch.context() as patch:
        _recording_resolution(patch)
        r, pairs = _solved_both_ways(IPSched, "_allocate", "use_bound",
                                     lambda: replay(table, machine, "ipsched", "bf", meta=meta, site=site,
                                                    options=options))
    assert pairs
    _check_pairs(pairs)
    _check_capacity(r)


@settings(max_examples=12, deadline=None)
@given(kind=st.sampled_from(["I", "II", "III", "IV", "V"]), seed=st.integers(0, 10_000),
       objective=st.sampled_from(["priority", "cores"]), kind_p=st.sampled_from(["basic", "multifactor"]),
       gap=st.sampled_from([0.0, 10.0]))
def test_bound_answer_is_the_solvers_optimum_on_soner_workloads(kind, seed, objective, kind_p, gap):
    m = from_spec("16x(cores=8,gpus=2)")
    table = soner.generate(kind, 24, m, np.random.default_rng(seed), mean_interarrival=gap)
    options = {"objective": objective, "priority_type": kind_p, "max_nodes": 100_000, "max_jobs": 12}
    with pytest.MonkeyPatch.context() as patch:
        _recording_resolution(patch)
        r, pairs = _solved_both_ways(IPSched, "_allocate", "use_bound",
                                     lambda: replay(table, m, "ipsched", "bf", options=options))
    assert pairs
    _check_pairs(pairs)
    _check_capacity(r)


@pytest.mark.parametrize("objective,priority_type", [("cores", "multifactor"), ("priority", "basic")])
def test_esp_cpu_gpu_on_64_nodes_most_decisions_need_no_model(objective, priority_type):
    """ESP cpu-gpu's first 80 jobs (core-only jobs and whole-node GPU copies of them) on
    64 nodes: the bound proves first-fit optimal at most decision points, and where it
    does the solver finds nothing better.  (120 jobs: 78 decisions, 9 s, most of it the
    solver's run at each.)"""
    m = from_spec("64x(cores=8,gpus=2)")
    table = esp.generate("cpu-gpu", m, np.random.default_rng(1))
    options = {"objective": objective, "priority_type": priority_type, "max_nodes": 100_000, "max_jobs": 30}
    with pytest.MonkeyPatch.context() as patch:
        _recording_resolution(patch)
        r, pairs = _solved_both_ways(IPSched, "_allocate", "use_bound",
                                     lambda: replay(table.head(80), m, "ipsched", "bf", options=options))
    proved = _check_pairs(pairs)
    assert proved >= len(pairs) // 2, (proved, len(pairs))
    _check_capacity(r)


# --------------------------------------------------------------------------- hand-made cases


def test_a_window_that_fits_whole_is_proved_without_a_model():
    """Two jobs that fit together on 4 empty nodes, each on its fewest nodes: first-fit
    is the optimum, the bound (every job's best value) proves it."""
    table = core_gpu_table(submit=[0, 0], run=[100, 100], units=[16, 8], unit_cores=[1, 1], unit_gpus=[0, 0],
                           req_nodes=[-1, -1], executable=[1, 1])
    r = replay(table, from_spec("4x(cores=8,gpus=2)"), "ipsched", "bf")
    row = r.tables["decisions"].row(0, named=True)
    assert (row["proof"], row["status"], row["variables"], row["constraints"]) == ("bound", "optimal", 0, 0)
    assert row["objective"] == row["start_objective"]
    assert list(r.start) == [0, 0] and list(r.nodes_used) == [2, 1]
    assert r.policy["proved_by_bound"] == 1


def test_the_knapsack_set_beats_first_fit_without_a_model():
    """4 empty nodes of 8 cores, rank priorities 3, 2, 1: first-fit starts J1 (24 cores)
    and nothing else fits; J2 and J3 (16 cores each) together are worth more (2 + 1 >
    3, less their nodes): the cores knapsack chooses them, their placement reaches the
    bound, and they start with no model."""
    table = core_gpu_table(submit=[0, 0, 0], run=[100] * 3, units=[24, 16, 16], unit_cores=[1, 1, 1],
                           unit_gpus=[0, 0, 0], req_nodes=[-1, -1, -1], executable=[1, 1, 1])
    r = replay(table, from_spec("4x(cores=8,gpus=2)"), "ipsched", "bf", priority_scale="rank")
    row = r.tables["decisions"].row(0, named=True)
    assert (row["proof"], row["status"], row["variables"]) == ("bound", "optimal", 0)
    assert row["objective"] == pytest.approx(2 * (1 - 2 / 8) + 1 * (1 - 2 / 8))
    assert list(r.start[1:]) == [0, 0] and r.start[0] > 0


def test_a_bound_no_placement_reaches_goes_to_the_solver():
    """2 empty nodes of 4 cores, rank priorities 2, 1: J1 takes 3 cores on each node
    (fixed shape), J2 (2 cores) then has 1 core on each: the bound counts J2 on one node
    (its host maximum), no placement reaches it, and the solver proves first-fit (both
    jobs, J2 on two nodes) optimal."""
    table = core_gpu_table(submit=[0, 0], run=[100, 100], units=[2, 2], unit_cores=[3, 1], unit_gpus=[0, 0],
                           req_nodes=[2, -1], executable=[1, 1])
    r = replay(table, from_spec("2x(cores=4,gpus=0)"), "ipsched", "bf", priority_scale="rank")
    row = r.tables["decisions"].row(0, named=True)
    assert (row["proof"], row["status"]) == ("solver", "optimal") and row["variables"] > 0
    assert row["objective"] == pytest.approx(row["start_objective"]) == pytest.approx(2 * 0.5 + 1 * 0.5)
    assert list(r.start) == [0, 0] and list(r.nodes_used) == [2, 2]
