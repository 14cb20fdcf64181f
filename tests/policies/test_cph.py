"""CPH (Netti et al. §2.2): phase 1 against the brute-force oracle tests/naive_cph.py,
hand-made replays with known starts, phase 2 postponing a job the aggregated schedule
places wrongly, determinism, and runs on the shared Eurora jobs with every allocator."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_cph as naive
from repo_paths import EURORA
from schedbench.cli.main import main
from schedbench.engine.replay import replay
from schedbench.errors import UsageError
from schedbench.io import eurora, machine
from schedbench.io.jobs import core_gpu_table
from schedbench.io.machine import from_spec
from schedbench.policies import cph

# found, never imported here: CP-SAT runs in cph's solver process (see test_cph_and_cbc_share_a_process)
if importlib.util.find_spec("ortools") is None:
    pytest.skip("OR-Tools is not installed", allow_module_level=True)


def _phase1(capacity, held, jobs, **kw):
    held_until = np.array([r for r, _ in held], dtype=np.int64)
    held_amounts = np.array([a for _, a in held], dtype=np.int64).reshape(-1, 4)
    return cph.phase1(capacity, held_until, held_amounts, [d for d, _, _ in jobs], [q for _, q, _ in jobs],
                      [w for _, _, w in jobs], **kw)


def _value(jobs, starts) -> int:
    return sum(w * int(s) for (_, _, w), s in zip(jobs, starts, strict=True))


# --------------------------------------------------------------------------- phase 1


def test_short_jobs_first_when_the_long_one_would_make_both_wait():
    # 4 cores: J0 takes all 4 for 100 s, J1 and J2 two each for 10 s.  J1+J2 first: total
    # wait 10; J0 first: 200.
    jobs = [(100, [4, 0, 0, 0], 1), (10, [2, 0, 0, 0], 1), (10, [2, 0, 0, 0], 1)]
    plan = _phase1([4, 0, 0, 0], [], jobs)
    assert plan.starts.tolist() == [10, 0, 0]
    assert plan.status == "optimal" and plan.objective == 10
    assert naive.optimum([4, 0, 0, 0], [], jobs) == (10, [[10, 0, 0]])


def test_weights_change_the_order():
    # one 4-core machine, two 4-core jobs: unweighted the 10 s job goes first (wait 10 vs
    # 20); with weight 5 on the 20 s job it goes first (20 vs 50)
    plain = [(10, [4, 0, 0, 0], 1), (20, [4, 0, 0, 0], 1)]
    weighted = [(10, [4, 0, 0, 0], 1), (20, [4, 0, 0, 0], 5)]
    assert _phase1([4, 0, 0, 0], [], plain).starts.tolist() == [0, 10]
    assert _phase1([4, 0, 0, 0], [], weighted).starts.tolist() == [20, 0]


def test_running_jobs_hold_their_resources_until_their_predicted_end():
    # 8 cores, 6 held until 30 and 2 until 50: a 4-core job waits for 30, a 2-core job not
    held = [(30, [6, 0, 0, 0]), (50, [2, 0, 0, 0])]
    jobs = [(10, [4, 0, 0, 0], 1), (10, [8, 0, 0, 0], 1)]
    plan = _phase1([8, 0, 0, 0], held, jobs)
    assert plan.starts.tolist() == [30, 50]
    # GPUs are a separate resource: a 1-core 1-GPU job starts now beside 7 held cores
    plan = _phase1([8, 2, 0, 0], [(30, [7, 0, 0, 0])], [(10, [1, 1, 0, 0], 1), (10, [1, 2, 0, 0], 1)])
    assert plan.starts.tolist() == [0, 10]


def test_a_job_larger_than_the_machine_is_left_out():
    plan = _phase1([4, 0, 0, 0], [], [(10, [5, 0, 0, 0], 1), (10, [4, 0, 0, 0], 1)])
    assert plan.starts.tolist() == [-1, 0]


_job = st.tuples(st.integers(1, 4), st.tuples(st.integers(0, 3), st.integers(0, 2)), st.integers(0, 3))


@settings(max_examples=60)
@given(jobs=st.lists(_job, min_size=1, max_size=5),
       held=st.lists(st.tuples(st.integers(1, 5), st.tuples(st.integers(0, 2), st.integers(0, 1))), max_size=3))
def test_phase1_reaches_the_brute_force_optimum(jobs, held):
    jobs = [(d, [c, g, 0, 0], w) for d, (c, g), w in jobs if c + g > 0]
    held = [(r, [c, g, 0, 0]) for r, (c, g) in held]
    if not jobs:
        return
    # 3 cores and 2 GPUs, or what the held amounts need at time 0
    capacity = [max(3, sum(h[1][0] for h in held)), max(2, sum(h[1][1] for h in held)), 0, 0]
    best, schedules = naive.optimum(capacity, held, jobs)
    plan = _phase1(capacity, held, jobs)
    assert plan.status == "optimal"
    assert _value(jobs, plan.starts) == plan.objective == best
    assert plan.heuristic >= best
    # the heuristic start is the oracle's list schedule in window order
    order = list(range(len(jobs)))
    expected = naive.list_schedule(capacity, held, jobs, order)
    held_until = np.array([r for r, _ in held], dtype=np.int64)
    held_amounts = np.array([a for _, a in held], dtype=np.int64).reshape(-1, 4)
    got = cph.list_schedule(np.array(capacity), held_until, held_amounts, np.array([d for d, _, _ in jobs]),
                            np.array([q for _, q, _ in jobs]))
    assert got.tolist() == expected


def test_the_list_schedule_is_used_when_the_solver_finds_nothing_better():
    # a limit so small that CP-SAT stops at its hint (the list schedule) or before
    jobs = [(d, [1 + d % 3, 0, 0, 0], 1 + d % 2) for d in range(1, 13)]
    plan = _phase1([4, 0, 0, 0], [], jobs, det_time=1e-9)
    assert plan.status in ("heuristic", "feasible")
    assert plan.objective <= plan.heuristic
    assert _value(jobs, plan.starts) == plan.objective


# --------------------------------------------------------------------------- replays


def test_replay_starts_the_short_jobs_first():
    t = core_gpu_table(submit=[0, 0, 0], run=[100, 10, 10], units=[4, 2, 2], unit_cores=[1, 1, 1],
                       unit_gpus=[0, 0, 0], req_nodes=[-1, -1, -1], executable=[1, 1, 1])
    r = replay(t, from_spec("1x(cores=4)"), "cph", "ff")
    assert r.start.tolist() == [10, 0, 0]
    assert r.policy["solver"] == "cp-sat" and r.policy["statuses"] == {"optimal": 2}
    # EASY, in (submit, id) order, starts the long job first
    assert replay(t, from_spec("1x(cores=4)"), "easy", "ff").start.tolist() == [0, 100, 100]


def test_phase2_postpones_a_job_the_aggregated_schedule_cannot_place_on_nodes():
    # 2 nodes of 4 cores.  J0 holds one core on each node for 100 s.  At t=1 J1 (4 cores on
    # one node, 10 s) and J2 (2 one-core units, 20 s) arrive: 6 cores are free in all, so
    # phase 1 starts both now (J1 first: equal demand, lower index), but no node has 4 free
    # cores.  J1 is postponed and J2, offered next, starts; at J2's end (t=21) J1 still
    # fits no node, so nothing can start and the solver is not asked ("no-fit"); it starts
    # when J0 ends.
    t = core_gpu_table(submit=[0, 1, 1], run=[100, 10, 20], units=[2, 1, 2], unit_cores=[1, 4, 1],
                       unit_gpus=[0, 0, 0], req_nodes=[2, 1, -1], executable=[1, 1, 1])
    r = replay(t, from_spec("2x(cores=4)"), "cph", "ff")
    assert r.start.tolist() == [0, 100, 1]
    d = r.tables["decisions"]
    assert d["time"].to_list() == [0, 1, 21, 100]
    assert d["status"].to_list() == ["optimal", "optimal", "no-fit", "optimal"]
    assert d["planned_now"].to_list() == [1, 2, 0, 1]
    assert d["started"].to_list() == [1, 1, 0, 1]
    assert d["postponed"].to_list() == [0, 1, 0, 0]
    assert d["objective"].null_count() == 1
    assert r.policy["postponed"] == 1


def test_the_window_limits_phase1_to_the_first_jobs_in_prb_order():
    # with a window of one, phase 1 sees only the first job in PRB order (smallest demand
    # first at equal waits: J1, then J2, then J0), so one job starts per decision point
    t = core_gpu_table(submit=[0, 0, 0], run=[100, 10, 10], units=[4, 2, 2], unit_cores=[1, 1, 1],
                       unit_gpus=[0, 0, 0], req_nodes=[-1, -1, -1], executable=[1, 1, 1])
    r = replay(t, from_spec("1x(cores=4)"), "cph", "ff", cp_jobs=1)
    assert r.start.tolist() == [20, 0, 10]


def test_bad_options_are_usage_errors():
    t = core_gpu_table(submit=[0], run=[10], units=[1], unit_cores=[1], unit_gpus=[0], req_nodes=[-1],
                       executable=[1])
    with pytest.raises(UsageError, match="cp_jobs"):
        replay(t, from_spec("1x(cores=4)"), "cph", "ff", cp_jobs=0)
    with pytest.raises(UsageError, match="cp_weights"):
        replay(t, from_spec("1x(cores=4)"), "cph", "ff", cp_weights="mine")


def test_cph_and_cbc_share_a_process():
    # ortools and python-mip's CBC ship clashing libOsi.so.0: the policy keeps ortools out
    # of this process, so ipsched (CBC) runs before and after cph
    t = core_gpu_table(submit=[0, 0, 0], run=[100, 10, 10], units=[4, 2, 2], unit_cores=[1, 1, 1],
                       unit_gpus=[0, 0, 0], req_nodes=[-1, -1, -1], executable=[1, 1, 1])
    m = from_spec("1x(cores=4)")
    before = replay(t, m, "ipsched", "ff").start.tolist()
    assert replay(t, m, "cph", "ff").start.tolist() == [10, 0, 0]
    assert replay(t, m, "ipsched", "ff").start.tolist() == before
    assert "ortools" not in sys.modules


# --------------------------------------------------------------------------- Eurora


@pytest.fixture(scope="module")
def eurora_jobs():
    if not EURORA.is_dir():
        pytest.skip(f"{EURORA} not present")
    first = sorted((EURORA / "job_instances" / "100").glob("*.log_crypt"))[0]
    table, meta = eurora.read_instances(first)
    return table, meta, machine.from_node_file(EURORA / "system_configs" / "nodes_#64")


@pytest.mark.parametrize("allocator", ["ff", "bf", "balanced", "weighted", "priority-weighted"])
def test_eurora_runs_with_every_allocator(eurora_jobs, allocator):
    table, meta, mach = eurora_jobs
    r = replay(table, mach, "cph", allocator, meta=meta)
    assert (r.start >= 0).all() and (r.end >= r.start).all()
    assert r.policy["decisions"] > 0
    assert set(r.policy["statuses"]) <= {"optimal", "feasible", "heuristic", "no-fit"}


def test_two_runs_are_byte_identical(shared_traces, tmp_path):
    table = tmp_path / "eu.parquet"
    assert main(["traces", "eurora", str(EURORA / "job_instances" / "100"), "-o", str(table)]) == 0
    outs = []
    for k in range(2):
        out = tmp_path / f"run{k}"
        assert main(["replay", str(table), "-s", "cph", "-a", "balanced", "--limit", "150", "-o", str(out),
                     "--quiet"]) == 0
        outs.append(out)
    for name in ("jobs.parquet", "allocations.parquet"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes()
