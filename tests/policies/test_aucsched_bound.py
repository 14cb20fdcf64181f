"""AUCSCHED's proof before the model (issues 27 and 29): a greedy choice that reaches the
knapsack upper bound, or a job set's restricted model that reaches a bound on every
other job set, starts without the window's IP.  The bound is never below the model's
optimum, the greedy choice is always feasible, and the answer is worth the model's
optimum at every decision point of generated replays (with and without SLURM bids, each
bid set, both priority types)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_aucsched_spread import tiny_workloads
from test_soner_policies import _check_capacity, _solved_both_ways

import naive_aucsched as naive
from schedbench.engine.replay import replay
from schedbench.io.jobs import core_gpu_table
from schedbench.io.machine import from_spec
from schedbench.policies.aucsched import AucSched, _bound
from schedbench.policies.aucsched_bids import SLURM, A, B
from schedbench.policies.window import Solver, WindowState
from schedbench.workloads import esp, soner

# --------------------------------------------------------------------------- hand-made


def test_bound_is_the_least_knapsack_over_the_types():
    values = np.array([5.0, 4.0, 4.0])
    demand = np.array([[6, 0], [4, 1], [4, 1]])
    # cores: 8 hold jobs 1 and 2 (8.0) or job 0 alone (5.0); GPUs: 1 holds one of jobs 1, 2
    # beside job 0 (9.0): the bound is the least, 8.0, and both sets come back
    bound, sets = _bound(values, demand, np.array([8, 1]))
    assert bound == 8.0
    assert [s.tolist() for s in sets] == [[1, 2], [0, 1]]
    assert _bound(values, demand, np.array([20, 4]))[0] == 13.0  # everything fits: the sum


def _policy(n_nodes, **flags):
    pol = AucSched.__new__(AucSched)
    pol.solver = Solver("cbc", 10_000, "halve", 0)
    pol.win = WindowState(200)
    pol.n_nodes = n_nodes
    pol.kinds = np.zeros(6, dtype=np.int64)
    pol._finished = True
    pol.cuts = "off-first"
    for name, value in flags.items():
        setattr(pol, name, value)
    return pol


def _window(free, units, cores, req_nodes, prio, bids):
    """A decision point of one-core (or ``cores``-core) units: (policy arguments)."""
    free = np.array(free, dtype=np.int64)
    units, req_nodes = np.array(units, dtype=np.int64), np.array(req_nodes, dtype=np.int64)
    request = np.array([[c, 0, 0, 0] for c in cores], dtype=np.int64)
    view = SimpleNamespace(req_nodes=req_nodes, units=units, request=request, free=free, time=0)
    need = np.where(req_nodes > 0, units // np.maximum(req_nodes, 1), 1)
    host = np.minimum(free[None, :, 0] // request[:, :1], units[:, None])
    host[host < need[:, None]] = 0
    job, kind, nodes = zip(*bids, strict=True)
    ptr = np.concatenate(([0], np.cumsum([len(n) for n in nodes])))
    out = (np.array(job, dtype=np.int64), np.array(kind, dtype=np.int64), np.ones(len(job), dtype=np.int64), ptr,
           np.concatenate([np.array(n, dtype=np.int64) for n in nodes]))
    return view, np.arange(units.size), np.array(prio, dtype=np.float64), host, need, out


def test_greedy_in_priority_order_reaches_the_bound():
    """Four 8-core nodes; job 0 (12 cores) bids nodes 0-1, job 1 (16 cores) nodes 2-3:
    both start, the knapsack's sum, proved without a model."""
    pol = _policy(4)
    args = _window([[8, 0, 0, 0]] * 4, [12, 16], [1, 1], [-1, -1], [2.0, 1.0], [(0, A, [0, 1]), (1, A, [2, 3])])
    starts = pol._auction(*args, window_size=2)
    assert [(j, n.tolist(), c.tolist()) for j, n, c in starts] == [(0, [0, 1], [8, 4]), (1, [2, 3], [8, 8])]
    row = pol.solver.rows[-1]
    assert (row.proof, row.variables, row.status) == ("bound", 0, "optimal")
    # alpha = 1 / 3, F = 1 - 0.25 * 2 / 5 for both A bids
    assert row.objective == pytest.approx(3.0 + 2 * (1 / 3) * (1 - 0.25 * 2 / 5))


def test_job_set_proof_when_the_first_job_blocks_two():
    """Three 8-core nodes.  Job 0 (priority 10, 24 cores) needs all three; jobs 1 and 2
    (priority 6 each, 8 cores) one node each: job 1 bids node 1 (A) and node 0 (B, a lower
    F), job 2 node 1 only.  Greedy choices: job 0 alone (10 + alpha F), or job 1 on its
    better bid, node 1, which leaves job 2 out; the knapsack over the 24 free cores is
    {1, 2} (12 + ...).  The restricted model of {1, 2} puts job 1 on node 0 and job 2 on
    node 1: the optimum, proved by the job-set step."""
    pol = _policy(3)
    args = _window([[8, 0, 0, 0]] * 3, [24, 8, 8], [1, 1, 1], [-1, -1, -1], [10.0, 6.0, 6.0],
                   [(0, A, [0, 1, 2]), (1, A, [1]), (1, B, [0]), (2, A, [1])])
    starts = pol._auction(*args, window_size=3)
    assert [(j, n.tolist(), c.tolist()) for j, n, c in starts] == [(1, [0], [8]), (2, [1], [8])]
    assert pol.solver.rows[-1].proof == "bound+set"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(AucSched, "use_bound", False)
        model = _policy(3)
        model._auction(*args, window_size=3)
    assert pol.solver.rows[-1].objective == pytest.approx(model.solver.rows[-1].objective, rel=1e-12)


def test_greedy_leaves_a_slurm_bid_that_no_longer_fits():
    """Job 0's SLURM bid takes node 0's 8 cores; job 1's only bid, node 0, cannot fit
    beside it: job 1 does not start, and the knapsack (16 cores for 16 units) still
    gives a bound the restricted model of {0, 1} meets."""
    pol = _policy(2)
    args = _window([[8, 0, 0, 0]] * 2, [8, 8], [1, 1], [-1, -1], [2.0, 1.0], [(0, SLURM, [0]), (1, A, [0])])
    starts = pol._auction(*args, window_size=2)
    assert [(j, n.tolist()) for j, n, _ in starts] == [(0, [0])]
    assert pol.solver.rows[-1].proof == "bound"


def test_share_rows_count_the_shares_a_node_holds_not_its_jobs():
    """Two 2-core nodes; job 0 fixes 1 node x 1 core, job 1 2 nodes x 1 core: node 0
    holds both jobs' shares, so both start (a row counting one job a node would bound
    the window by one job); with 8-core shares on whole free nodes the row counts the
    whole free nodes."""
    pol = _policy(2)
    args = _window([[2, 0, 0, 0]] * 2, [1, 2], [1, 1], [1, 2], [2.0, 1.0], [(0, A, [0]), (1, A, [0, 1])])
    values, demand, capacity = pol._knapsack_items(args[0], args[1], args[5], np.array([2.1, 1.1]))
    assert demand[:, 4:].tolist() == [[1], [2]] and capacity[4:].tolist() == [4]
    starts = pol._auction(*args, window_size=2)
    assert sorted(j for j, _, _ in starts) == [0, 1]
    args = _window([[8, 0, 0, 0], [3, 0, 0, 0], [8, 0, 0, 0]], [16, 8], [1, 1], [2, 1], [2.0, 1.0],
                   [(0, A, [0, 2]), (1, A, [0])])
    _, demand, capacity = pol._knapsack_items(args[0], args[1], args[5], np.array([2.1, 1.1]))
    assert demand[:, 4:].tolist() == [[2], [1]] and capacity[4:].tolist() == [2]


# --------------------------------------------------------------------------- properties


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_workloads(), st.sampled_from(["basic", "multifactor"]))
def test_bound_never_below_the_brute_force_optimum_and_greedy_feasible(case, priority):
    """At every decision point: the knapsack bound is at least the best value over every
    choice of bids and loads, the greedy choice fits and is worth at most that, and the
    answer (proved or solved) equals it."""
    table, machine, spread, slurm = case
    original = AucSched._auction
    checked = []

    def auction(self, view, jobs, prio, host, need, bids, window_size):
        bid_job, kind, sets, ptr, node = bids
        starts = original(self, view, jobs, prio, host, need, bids, window_size)
        if bid_job.size:
            listed = [(int(bid_job[b]), int(kind[b]), int(sets[b]), node[ptr[b] : ptr[b + 1]].tolist())
                      for b in range(bid_job.size)]
            rows = [(int(view.units[j]), view.request[j].tolist(), int(view.req_nodes[j])) for j in jobs]
            want = naive.aucsched_optimum(rows, prio.tolist(), view.free.tolist(), host.tolist(), listed)
            greedy = self._last_greedy
            used = np.zeros_like(view.free)
            for c, nodes, counts in greedy[0]:
                a = int(bid_job[c])
                used[nodes] += counts[:, None] * view.request[jobs[a]]
                assert counts.sum() == view.units[jobs[a]] and counts.min() >= 1
            assert np.all(used <= view.free)
            checked.append((self.solver.rows[-1], want, greedy[1], greedy[2]))
        return starts

    def greedy(self, *args):
        self._last_greedy = got = original_greedy(self, *args)
        return got

    original_greedy = AucSched._greedy
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(AucSched, "_auction", auction)
        patch.setattr(AucSched, "_greedy", greedy)
        r = replay(table, machine, "aucsched", "bf", spread_bids=spread, slurm_bids=slurm, max_jobs=4,
                   max_nodes=100_000, priority_type=priority)
    assert checked and np.any(r.start >= 0)
    for row, want, greedy_value, bound in checked:
        assert bound >= want - 1e-9 * abs(want), row.time
        assert greedy_value <= want + 1e-9 * abs(want), row.time
        assert row.objective == pytest.approx(want, rel=1e-9, abs=1e-9), row.time


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["I", "III", "IV", "V"]), seed=st.integers(0, 10_000), slurm=st.booleans(),
       spread=st.sampled_from(["none", "nodeset", "span"]), priority=st.sampled_from(["basic", "multifactor"]))
def test_proof_is_worth_the_models_optimum_at_every_decision(kind, seed, slurm, spread, priority):
    """At every decision point of a generated run, the answer with the proof step (used)
    is worth at least the window's model solved by CBC (within CBC's relative gap 1e-4,
    which its answer may give away) and never more than that gap above it."""
    m = from_spec("10x(cores=8,gpus=2)")
    table = soner.generate(kind, 14, m, np.random.default_rng(seed), mean_interarrival=0.0)
    options = {"slurm_bids": slurm, "spread_bids": spread, "priority_type": priority, "max_nodes": 100_000}
    r, checked = _solved_both_ways(AucSched, "_auction", "use_bound",
                                   lambda: replay(table, m, "aucsched", "bf", options=options))
    assert np.all(r.start >= 0)
    _check_capacity(r)
    for model, used in checked:
        assert model.status == used.status == "optimal", used.time
        assert used.objective >= model.objective - 1e-9 * abs(model.objective), used.time
        assert used.objective <= model.objective * (1 + 1e-4) + 1e-9, used.time
    assert any(used.proof != "solver" for _, used in checked)


@pytest.mark.parametrize("slurm", [True, False])
def test_esp_random_sizes_decisions_are_proved_and_summarised(slurm):
    """ESP-RS's first 40 jobs (submitted together) on a 64-node machine, 15 to 35
    decisions: most proved without the window's model; the summary counts them.  (60
    jobs took 9 s, most of it CBC on a few windows of the paper's bids.)"""
    m = from_spec("64x(cores=8,gpus=2)")
    table = esp.generate("random-size-cpu-gpu", m, np.random.default_rng(1)).head(40)
    r = replay(table, m, "aucsched", "bf", period=5, options={"slurm_bids": slurm})
    d = r.tables["decisions"]
    proofs = d["proof"].to_list()
    assert set(proofs) <= {"solver", "bound", "bound+set"}
    assert r.policy["proved_by_bound"] == proofs.count("bound")
    assert r.policy["proved_by_job_set"] == proofs.count("bound+set")
    assert proofs.count("solver") < len(proofs) / 2
    assert np.all(r.start >= 0)
    _check_capacity(r)


def test_figure4_with_span_bids_still_starts_all_four_from_the_proof():
    """The paper's Figure 4 (issue 29): the proof path gives Figure 5's answer too."""
    from test_aucsched_spread import FIG4_BUSY, FIG4_MACHINE, figure4

    r = replay(figure4(), from_spec(FIG4_MACHINE), "aucsched", "bf", site=FIG4_BUSY, spread_bids="span")
    assert r.start.tolist() == [0, 0, 0, 0]
    t1 = core_gpu_table(submit=[0, 0], run=[10, 10], units=[4, 4], unit_cores=[1, 1], unit_gpus=[0, 0],
                        req_nodes=[-1, -1], executable=[1, 2])
    r = replay(t1, from_spec("1x(cores=8,gpus=2)"), "aucsched", "bf")
    assert r.start.tolist() == [0, 0] and r.tables["decisions"]["proof"].to_list() == ["bound"]
