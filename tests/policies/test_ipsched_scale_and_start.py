"""IPSCHED's priority scale and its solver start (issue 29, items 3 and 4): SLURM's
priority/basic numbers against ranks, the solver's gap against brute-force optima, the
first-fit placement as a feasible MIP start, and the paper's Fig. 4 instance, whose four
jobs all start at once."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_aucsched as naive
from schedbench.engine.replay import replay
from schedbench.engine.simulation import Simulation
from schedbench.io.jobs import core_gpu_table
from schedbench.io.machine import from_spec
from schedbench.plan import site
from schedbench.policies import window as win
from schedbench.policies.ipsched import IPSched
from schedbench.workloads import soner

FIG4_MACHINE = "144x(cores=8,gpus=2)"


def fig4_jobs(submit=0, before=()):
    """Fig. 4's jobs, 1,000 s each: J1 512 cores anywhere; J2 64 nodes x (2 cores, 1 GPU);
    J3 64 x (4, 2); J4 128 x 1 core; after the jobs ``before`` [(units, cores, gpus)],
    one node each, submitted at 0 and running 5,000 s."""
    k = len(before)
    return core_gpu_table(
        submit=[0] * k + [submit] * 4, run=[5000] * k + [1000] * 4,
        units=[b[0] for b in before] + [512, 64, 64, 128], unit_cores=[b[1] for b in before] + [1, 2, 4, 1],
        unit_gpus=[b[2] for b in before] + [0, 1, 2, 0], req_nodes=[1] * k + [-1, 64, 64, -1],
        executable=[0] * k + [1, 2, 3, 4])


class _View:
    def __init__(self, submit):
        self.time = 0
        self.submit = np.asarray(submit)
        self.units = np.ones(len(submit), dtype=np.int64)
        self.request = np.tile([1, 0, 0, 0], (len(submit), 1))
        self.queue = np.arange(len(submit))


# --------------------------------------------------------------------------- the scales


def test_basic_priorities_on_slurms_scale_and_on_ranks():
    v = _View([0, 5, 5])
    top = 0xFFFF0000
    assert win.priorities(v, np.arange(3), "basic", 8).tolist() == [top - 1, top - 2, top - 3]
    assert win.priorities(v, np.arange(3), "basic", 8, "slurm").tolist() == [top - 1, top - 2, top - 3]
    assert win.priorities(v, np.arange(3), "basic", 8, "rank").tolist() == [3, 2, 1]
    # the same window on both scales: only the numbers differ
    assert win.window(v, 2, "basic", 8, "slurm")[0].tolist() == win.window(v, 2, "basic", 8, "rank")[0].tolist()


def test_priority_scale_is_an_option_and_reported():
    m = from_spec("16x(cores=8,gpus=2)")
    table = soner.generate("III", 8, m, np.random.default_rng(3), mean_interarrival=0.0)
    slurm = replay(table, m, "ipsched", "bf")
    rank = replay(table, m, "ipsched", "bf", priority_scale="rank")
    assert slurm.policy["priority_scale"] == "slurm" and rank.policy["priority_scale"] == "rank"
    assert slurm.tables["decisions"]["objective"][0] > 1e9 > rank.tables["decisions"]["objective"][0]
    from schedbench.errors import UsageError

    with pytest.raises(UsageError, match="priority_scale"):
        replay(table, m, "ipsched", "bf", priority_scale="nice")


def _after_fillers(table, machine, fillers, **options):
    """Run ``table`` with its first len(fillers) jobs started at t = 0 on the nodes
    ``fillers`` (one node each), then IPSCHED (``options``) deciding; returns (result,
    the policy's solve rows)."""

    class Place:
        def __init__(self, sim):
            self.ip = IPSched(sim, **options)

        def decide(self, view):
            if view.time == 0:
                return [(i, [n], [int(view.units[i])]) for i, n in enumerate(fillers)]
            return self.ip.decide(view)

    sim = Simulation(table, machine, period=0)
    policy = Place(sim)
    return sim.run(policy, progress=False), policy.ip.solver.rows


def test_slurm_scale_starts_two_later_jobs_where_ranks_start_one_early_job():
    # 2 x 8 cores, 4 free on node 1 at t = 1.  J1 wants 4 cores; nine jobs of 8 cores
    # (that cannot start now) come between it and J2, J3 of 2 cores each.  On ranks J1
    # (12) outweighs J2 + J3 (2 + 1); on SLURM's scale two jobs outweigh one.
    m = from_spec("2x(cores=8,gpus=0)")
    units = [8, 4, 4] + [8] * 9 + [2, 2]
    table = core_gpu_table(submit=[0, 0] + [1] * 12, run=[500, 500] + [100] * 12, units=units,
                           unit_cores=[1] * 14, unit_gpus=[0] * 14, req_nodes=[1, 1] + [-1] * 12,
                           executable=list(range(14)))
    rank, _ = _after_fillers(table, m, [0, 1], priority_scale="rank")
    slurm, _ = _after_fillers(table, m, [0, 1])
    assert rank.start[[2, 12, 13]].tolist() == [1, 101, 101]
    assert slurm.start[[2, 12, 13]].tolist() == [101, 1, 1]


# --------------------------------------------------------------------------- exact optima


@st.composite
def tiny_windows(draw):
    n_nodes = draw(st.integers(1, 3))
    free = [[draw(st.integers(0, 3)), draw(st.integers(0, 2)), 0, 0] for _ in range(n_nodes)]
    jobs = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            jobs.append((draw(st.integers(1, 4)), [1, 0, 0, 0], -1))
        else:
            k = draw(st.integers(1, n_nodes))
            jobs.append((k, [draw(st.integers(1, 2)), draw(st.integers(0, 1)), 0, 0], k))
    return (n_nodes, free, jobs, draw(st.sampled_from(["priority", "cores"])), draw(st.sampled_from(["slurm", "rank"])),
            draw(st.sampled_from(["states", "nodes"])))


@settings(max_examples=60, deadline=None)
@given(tiny_windows())
def test_ipsched_optimum_is_exact_to_one_node_of_the_least_job(case):
    """The brute-force optimum on both scales, to within half of the smallest objective
    step the gap resolves (one node's c_j of the window's least-weighted job)."""
    n_nodes, free, jobs, objective, scale, model = case
    machine = from_spec("+".join(f"1x(cores={max(f[0], 1)},gpus={f[1]})" for f in free))
    busy = [[machine.capacity[n, 0] - f[0], machine.capacity[n, 1] - f[1]] for n, f in enumerate(free)]
    fillers = [n for n, b in enumerate(busy) if b[0] or b[1]]
    table = core_gpu_table(
        submit=[0] * len(fillers) + [1] * len(jobs), run=[100] * len(fillers) + [10] * len(jobs),
        units=[1] * len(fillers) + [j[0] for j in jobs], unit_cores=[busy[n][0] for n in fillers] + [j[1][0] for j in jobs],
        unit_gpus=[busy[n][1] for n in fillers] + [j[1][1] for j in jobs],
        req_nodes=[1] * len(fillers) + [j[2] for j in jobs], executable=[0] * (len(fillers) + len(jobs)))

    class Place:  # the fillers go to their own nodes, then ipsched decides once
        def __init__(self, sim):
            self.ip = IPSched(sim, objective=objective, priority_scale=scale, model=model)
            self.done = False

        def decide(self, view):
            if view.time == 0:
                return [(i, [n], [1]) for i, n in enumerate(fillers)]
            if self.done:
                return []
            self.done = True
            return self.ip.decide(view)

    sim = Simulation(table, machine, period=0)
    policy = Place(sim)
    sim.run(policy, progress=False)
    top = 0xFFFF0000 - 1 if scale == "slurm" else table.n_jobs
    prio = [float(top - i) for i in range(len(fillers), table.n_jobs)]
    weights = [p * (j[0] * j[1][0] if objective == "cores" else 1) for p, j in zip(prio, jobs, strict=True)]
    best = naive.ipsched_optimum(jobs, prio, free, n_nodes, weights)
    got = policy.ip.solver.rows[0].objective if policy.ip.solver.rows else 0.0
    assert got == pytest.approx(best, rel=0, abs=min(weights) / (4 * n_nodes))
    if policy.ip.solver.rows:
        assert policy.ip.solver.rows[0].status == "optimal"


def test_solver_gap_is_absolute_and_below_one_node_of_the_least_job():
    seen = []
    original = win.Solver.solve

    def spy(self, m, *args, **kwargs):
        out = original(self, m, *args, **kwargs)
        seen.append((m.max_mip_gap, m.max_mip_gap_abs, kwargs["resolution"]))
        return out

    m = from_spec(FIG4_MACHINE)
    busy = site.parse('[[maintenance]]\nnodes = "64-79"\nfrom = 0\nto = 100000\n')
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(win.Solver, "solve", spy)
        replay(fig4_jobs(), m, "ipsched", "bf", site=busy)
    rel, gap, resolution = seen[0]
    assert rel == 0.0
    # one node of J4 (the last of four, priority 0xffff0000 - 4) over 2 x 144 nodes
    assert resolution == pytest.approx((0xFFFF0000 - 4) / 288) and gap == resolution / 2


# --------------------------------------------------------------------------- Fig. 4 and the start


@pytest.mark.parametrize("scale", ["slurm", "rank"])
@pytest.mark.parametrize("model", ["states", "nodes"])
def test_fig4_ipsched_starts_all_four_jobs_at_once(model, scale):
    """Fig. 4: 144 x (8 cores, 2 GPUs), nodes 65-80 busy (a maintenance window here), four
    jobs at t = 0.  First-fit starts J1 on nodes 1-64 and leaves J3 no node with two GPUs;
    the optimum puts J2 and J3 on 64 nodes each and J1 and J4 in the cores they leave."""
    m = from_spec(FIG4_MACHINE)
    busy = site.parse('[[maintenance]]\nnodes = "64-79"\nfrom = 0\nto = 100000\n')
    r = replay(fig4_jobs(), m, "ipsched", "bf", site=busy, model=model, priority_scale=scale)
    assert r.start.tolist() == [0, 0, 0, 0]
    assert r.end.tolist() == [1000] * 4
    first = r.tables["decisions"].row(0, named=True)
    assert first["status"] == "optimal" and first["objective"] > first["start_objective"]
    assert r.nodes_used[1:3].tolist() == [64, 64]
    cores = np.zeros(144, dtype=np.int64)
    for j, per_unit in enumerate([1, 2, 4, 1]):
        rows = r.alloc_log[r.alloc_ptr[j] : r.alloc_ptr[j] + r.nodes_used[j]]
        np.add.at(cores, rows[:, 0], rows[:, 1] * per_unit)
    # every core of the 128 free nodes is used, none of the busy ones
    assert cores[64:80].sum() == 0 and set(np.delete(cores, np.arange(64, 80)).tolist()) == {8}


def test_fig4_first_fit_starts_j1_j2_j4_only():
    free = np.tile([8, 2, 0, 0], (144, 1))
    free[64:80] = 0
    request = np.array([[1, 0, 0, 0], [2, 1, 0, 0], [4, 2, 0, 0], [1, 0, 0, 0]])
    units = np.array([512, 64, 64, 128])
    need = np.array([1, 1, 1, 1])
    req_nodes = np.array([-1, 64, 64, -1])
    host = win.host_matrix(free, request, units, need)
    placed = win.first_fit(free, request, units, need, req_nodes, host)
    assert [a for a, _, _ in placed] == [0, 1, 3]
    (_, n1, c1), (_, n2, c2), (_, n4, c4) = placed
    assert n1.tolist() == list(range(64)) and set(c1.tolist()) == {8}
    assert n2.tolist() == list(range(80, 144)) and set(c2.tolist()) == {1}
    # J4 fills the 6 cores J2 leaves on each node, from node 81 on
    assert n4.tolist() == list(range(80, 102)) and c4.tolist() == [6] * 21 + [2]


def test_fig4_with_running_jobs_needs_the_start_within_the_node_limit():
    """Nodes 65-80 busy with running jobs and the four jobs at t = 1: without a start,
    CBC on the per-node model ends its 200 nodes with an unproven incumbent, the paper's
    rule starts nothing and J3 waits; from the first-fit start it proves the optimum."""
    m = from_spec(FIG4_MACHINE)
    table = fig4_jobs(submit=1, before=[(1, 8, 2)] * 16)

    def run(use_start):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(IPSched, "use_start", use_start)
            return _after_fillers(table, m, list(range(64, 80)), model="nodes")

    cold, cold_rows = run(False)
    assert cold_rows[0].status == "feasible" and cold_rows[0].start_objective is None
    assert np.any(cold.start[16:] > 1)
    warm, warm_rows = run(True)
    assert warm_rows[0].status == "optimal"
    assert warm.start[16:].tolist() == [1, 1, 1, 1]


def _fixed_start_is_feasible(m, start, start_objective):
    """Fix all of ``m``'s variables to the start (0 where not given) in a copy and solve:
    the start is feasible iff that is, and its objective is the one logged.  Continuous
    variables too: CBC's preprocessing may make them integer and then reads a start
    without them as 0 (the states model's counts y, ESP cpu-gpu seed 1 at t = 2645)."""
    import mip

    fixed = m.copy()
    given = {v.idx: value for v, value in start}
    for v in fixed.vars:
        v.lb = v.ub = given.get(v.idx, 0.0)
    fixed.verbose = 0
    status = fixed.optimize()
    assert status == mip.OptimizationStatus.OPTIMAL, status
    assert fixed.objective_value == pytest.approx(start_objective, rel=1e-9, abs=1e-6)


@settings(max_examples=12, deadline=None)
@given(kind=st.sampled_from(["I", "II", "III", "IV", "V"]), seed=st.integers(0, 10_000),
       objective=st.sampled_from(["priority", "cores"]), model=st.sampled_from(["states", "nodes"]),
       scale=st.sampled_from(["slurm", "rank"]), down=st.booleans())
def test_first_fit_start_is_feasible_at_every_decision(kind, seed, objective, model, scale, down):
    m = from_spec("8x(cores=8,gpus=2)")
    table = soner.generate(kind, 12, m, np.random.default_rng(seed), mean_interarrival=5.0)
    maint = site.parse('[[maintenance]]\nnodes = "2,5"\nfrom = 20\nto = 400\n') if down else None
    checked = []
    original = win.Solver.solve

    def check(self, mdl, *args, start=None, start_objective=None, resolution=None, **kwargs):
        if start:
            _fixed_start_is_feasible(mdl, start, start_objective)
            checked.append(start_objective)
        return original(self, mdl, *args, start=start, start_objective=start_objective, resolution=resolution,
                        **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(win.Solver, "solve", check)
        patch.setattr(IPSched, "use_bound", False)  # every start goes to the solver, to be checked
        r = replay(table, m, "ipsched", "bf", site=maint, objective=objective, model=model, priority_scale=scale)
    assert checked and np.all(r.start >= 0)
    d = r.tables["decisions"]
    # the solver never ends below its start
    assert (d["objective"] >= d["start_objective"] * (1 - 1e-12)).all()
