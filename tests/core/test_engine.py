"""Engine invariants, the step-by-step decision interface, determinism and outputs."""

from __future__ import annotations

import typing

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repo_paths import KTH
from schedbench.analysis import results
from schedbench.core import layout
from schedbench.core.state import C_TL
from schedbench.engine import replay
from schedbench.engine.simulation import PolicyError, Simulation
from schedbench.io import jobs, machine
from schedbench.io import load as workload_io
from schedbench.schedulers.easy import E_HEAD, E_SHADOW, E_STARTED
from schedbench.workloads import eurora_like


class PythonFCFS:
    """FCFS written against the decision interface: yields queued jobs in order while
    the engine says they fit."""

    def __init__(self, sim: Simulation):
        self.sim = sim

    def decide(self, view):
        for j in view.queue:
            if not self.sim.fits(j):
                return
            yield int(j)


@pytest.mark.skipif(not KTH.exists(), reason="shared KTH log not present")
def test_periodic_policy_that_waits_for_events_skips_idle_ticks():
    """KTH's first 300 jobs at period=5: the same schedule with a small fraction of the
    decision points when the policy declares that only events change its answer."""
    table, mach, _, _ = workload_io.load(str(KTH), limit=300)
    got = {}
    for waits in (False, True):
        sim = Simulation(table, mach, period=5)
        policy = PythonFCFS(sim)
        policy.waits_for_events = waits
        got[waits] = (sim.run(policy), sim.passes)
    np.testing.assert_array_equal(got[True][0].start, got[False][0].start)
    np.testing.assert_array_equal(got[True][0].nodes_used, got[False][0].nodes_used)
    assert got[True][1] * 10 < got[False][1]


def _eurora_like(n=400, seed=3):
    table, meta = eurora_like.generate(n, np.random.default_rng(seed), load=1.2)
    return table, machine.from_spec(meta["machine"])


@st.composite
def node_tables(draw):
    m = draw(st.integers(1, 4))
    cap = np.array(
        [[draw(st.integers(1, 6)), draw(st.integers(0, 2)), draw(st.integers(0, 1)), 0] for _ in range(m)],
        dtype=np.int64,
    )
    n = draw(st.integers(1, 30))
    submit = np.sort(np.array(draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))))
    units = np.array(draw(st.lists(st.integers(1, 5), min_size=n, max_size=n)))
    cores = np.array(draw(st.lists(st.integers(1, 2), min_size=n, max_size=n)))
    gpus = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    run = np.array(draw(st.lists(st.integers(0, 20), min_size=n, max_size=n)))
    table = jobs.from_columns(
        submit=submit, run=run, estimate=run + np.array(draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))),
        units=units, unit_cores=cores, unit_gpus=gpus, unit_mics=np.zeros(n), unit_mem=np.zeros(n),
    )
    return table, machine.Machine(cap, machine.spec_of(cap))


@settings(max_examples=120)
@given(node_tables(), st.sampled_from(["fcfs", "sjf", "easy"]), st.sampled_from(["ff", "bf"]))
def test_invariants_between_passes(trace, scheduler, allocator):
    """No node's free amount goes negative at any decision instant; every job appears once;
    start >= submit; end = start + run; the stepped replay equals the one-call replay."""
    table, mach = trace
    sim = Simulation(table, mach, allocator=allocator, scheduler=scheduler)
    while sim.step() is not None:
        free = sim.core.free
        assert (free >= 0).all() and (free <= sim.core.cap).all(), f"t={sim.now}"
    stepped = sim.core.jobs[:, layout.J_START]
    r = replay.replay(table, mach, scheduler, allocator)
    np.testing.assert_array_equal(stepped, r.start)
    ran = r.status == replay.Status.REPLAYED
    assert (r.start[ran] >= table.submit[ran]).all()
    np.testing.assert_array_equal(r.end[ran], r.start[ran] + table.run[ran])
    assert (r.start[~ran] == -1).all()
    frame = results.jobs_frame(r)
    assert frame.height == table.n_jobs
    np.testing.assert_array_equal(frame["job_id"].to_numpy(), table.job_id)


def test_step_is_advance_pass_and_end_pass_in_one_call():
    """Simulation.step (one pass of the compiled replay loop) and the three calls it
    replaces reach the same decision points with the same starts and timeline rows (400
    Eurora-like jobs; growth between steps is checked by the stepped conservative replay,
    tests/schedulers/test_conservative_oracle.py)."""
    table, mach = _eurora_like()
    by_step = Simulation(table, mach, scheduler="fcfs", allocator="bf")
    by_calls = Simulation(table, mach, scheduler="fcfs", allocator="bf")
    times = []
    while (t := by_step.step()) is not None:
        assert by_calls.advance() == t
        by_calls.jitted_pass()
        assert by_step._started_in_pass == by_calls._started_in_pass
        by_calls.end_pass()
        times.append(t)
    assert by_calls.advance() is None and by_step.step() is None
    assert len(times) == by_step.passes == by_calls.passes > 100
    np.testing.assert_array_equal(by_step.core.jobs[:, layout.J_START], by_calls.core.jobs[:, layout.J_START])
    rows = int(by_step.core.scal[C_TL])
    assert rows == int(by_calls.core.scal[C_TL]) > 100
    np.testing.assert_array_equal(by_step.core.timeline[:, :rows], by_calls.core.timeline[:, :rows])
    assert (by_step.core.jobs[:, layout.J_START] >= 0).all()


@settings(max_examples=120)
@given(node_tables())
def test_fcfs_starts_in_queue_order(trace):
    table, mach = trace
    r = replay.replay(table, mach, "fcfs", "ff")
    s = r.start[r.status == replay.Status.REPLAYED]
    assert (np.diff(s) >= 0).all()


@settings(max_examples=150)
@given(node_tables(), st.sampled_from(["ff", "bf"]))
def test_easy_head_never_starts_after_its_first_reservation(trace, allocator):
    """With --predictor actual no job outlives its prediction, so EASY's guarantee holds:
    the head starts no later than the shadow time of its first reservation (EASY's state
    keeps the head and shadow time of its last backfill pass)."""
    table, mach = trace
    sim = Simulation(table, mach, allocator=allocator, predictor="actual", scheduler="easy")
    first = {}
    while sim.step() is not None:
        escal = sim.sched.scal
        if escal[E_STARTED] >= 0:  # a backfill pass has run
            first.setdefault(int(escal[E_HEAD]), int(escal[E_SHADOW]))
    start = sim.core.jobs[:, layout.J_START]
    late = {j: (int(start[j]), s) for j, s in first.items() if start[j] > s}
    assert not late, f"heads started after their first shadow time: {late}"


@pytest.mark.skipif(not KTH.exists(), reason="shared KTH log not present")
def test_python_fcfs_equals_jitted_fcfs_on_a_log():
    from schedbench.io import swf

    table, header = swf.read(KTH)
    table = table.head(4000)
    mach = machine.from_swf_header(header.max_procs, header.max_nodes)
    sim = Simulation(table, mach)
    py = sim.run(PythonFCFS(sim), "python-fcfs")
    jit = replay.replay(table, mach, "fcfs", "ff")
    np.testing.assert_array_equal(py.start, jit.start)
    np.testing.assert_array_equal(py.nodes_used, jit.nodes_used)
    np.testing.assert_array_equal(py.timeline["queue"], jit.timeline["queue"])


@pytest.mark.parametrize("allocator", ["ff", "bf"])
def test_python_fcfs_equals_jitted_fcfs_on_heterogeneous_nodes(allocator):
    table, mach = _eurora_like()
    sim = Simulation(table, mach, allocator=allocator)
    py = sim.run(PythonFCFS(sim))
    jit = replay.replay(table, mach, "fcfs", allocator)
    np.testing.assert_array_equal(py.start, jit.start)
    np.testing.assert_array_equal(py.nodes_used, jit.nodes_used)


def test_periodic_decisions_happen_only_on_the_period():
    table, mach = _eurora_like(300)
    sim = Simulation(table, mach, period=5)
    r = sim.run(PythonFCFS(sim))
    ran = r.start >= 0
    assert ran.all()
    first = table.submit.min()
    assert ((r.start[ran] - first) % 5 == 0).all()
    assert (np.diff(np.unique(r.timeline["time"])) % 5 == 0).all()
    # every decision instant is a tick, and a job waits less than one period for nothing
    eager = replay.replay(table, mach, "fcfs", "ff")
    assert (r.start >= eager.start).sum() >= ran.sum() * 0.5


def test_explicit_placement_and_policy_errors():
    table = jobs.from_columns(submit=np.array([0, 0]), run=np.array([5, 5]), units=np.array([2, 1]),
                              unit_cores=np.array([2, 1]), unit_gpus=np.array([0, 0]),
                              unit_mics=np.array([0, 0]), unit_mem=np.array([0, 0]))
    mach = machine.from_spec("3x(cores=2)")
    sim = Simulation(table, mach)
    assert sim.advance() == 0
    with pytest.raises(PolicyError, match="sum to"):
        sim.start(0, nodes=[0], counts=[1])
    with pytest.raises(PolicyError, match="lacks"):
        sim.start(0, nodes=[0], counts=[2])
    sim.start(0, nodes=[2, 1], counts=[1, 1])
    assert (sim.core.free[:, 0] == [2, 0, 0]).all()
    with pytest.raises(PolicyError, match="not queued"):
        sim.start(0)
    sim.start(1)  # the allocator takes node 0
    assert (sim.core.free[:, 0] == [1, 0, 0]).all()
    view = sim.view()
    with pytest.raises(ValueError):
        view.free[0, 0] = 9


def test_policy_that_never_starts_leaves_jobs_not_started():
    table, mach = _eurora_like(50)

    class Idle:
        def decide(self, view):
            return []

    r = Simulation(table, mach).run(Idle())
    assert (r.status == replay.Status.NOT_STARTED).all()


def test_replay_outputs_are_byte_identical(tmp_path):
    table, mach = _eurora_like(500)
    for name in ("a", "b"):
        results.write_run(replay.replay(table, mach, "easy", "bf"), tmp_path / name)
    for f in ("jobs.parquet", "timeline.parquet"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()


def test_unsorted_table_is_refused():
    table = jobs.from_columns(submit=np.array([5, 0]), run=np.array([1, 1]), procs_req=np.array([1, 1]))
    with pytest.raises(Exception, match="sorted"):
        replay.replay(table, machine.from_spec("1x(cores=1)"))


def test_a_pool_of_a_billion_cores_needs_a_small_allocation_log():
    """The allocation log is sized by live (job, node) pairs: at most jobs x nodes, not one
    row per core (a fuzzed SWF line asking 1.58e9 processors made the replay allocate
    23.5 GiB and fail)."""
    from schedbench.core.state import new_core

    t = jobs.from_columns(submit=[0, 0], run=[5, 5], estimate=[5, 5], units=[1_579_754_105, 1],
                          unit_cores=[1, 1])
    cap = np.array([[1_579_754_105, 0, 0, 0]], dtype=np.int64)  # as an SWF log's widest job makes it
    assert new_core(layout.job_matrix(t), cap).log.shape[0] < 100
    res = replay.replay(t, machine.Machine(cap, machine.spec_of(cap)), "easy", "ff")
    assert res.start.tolist() == [0, 5]


def test_one_replay_loop_compiled_and_cached_per_scheduler_class():
    """Every jitted scheduler runs the core's loop (one source), compiled with its class's
    pass bound in, as a dispatcher with a numba cache index of its own: loading a
    replay's cached loop never imports (nor depends on) the other schedulers' classes."""
    from schedbench.core import loop_for
    from schedbench.schedulers import easy, inorder
    from schedbench.schedulers.conservative import ConservativeNodes, ConservativePool

    states = [easy.Easy(*[None] * 5), easy.EasyPool(*[None] * 5), inorder.InOrder(None),
              ConservativePool(*[None] * 11), ConservativeNodes(*[None] * len(ConservativeNodes._fields))]
    loops = [loop_for(s) for s in states]
    assert loop_for(inorder.InOrder(None)) is loops[2]
    assert len({loop._cache._cache_file._index_name for loop in loops}) == len(states)
    assert all(loop.py_func.__code__ is loops[0].py_func.__code__ for loop in loops)
    assert loops[1].py_func.__globals__["_pass"] is easy._pass_pool


class _PluginGuess(typing.NamedTuple):
    """A predictor state of a class outside the package (a plug-in's); never replayed here."""

    col: np.ndarray


def test_a_plug_in_state_class_gets_a_loop_of_its_own():
    """A plug-in's predictor or allocator state compiles into a loop (and cache index)
    apart from the scheduler's built-in one: in the same index, a replay that cannot
    import the plug-in read the index as empty and recompiled the loop, and the plug-in's
    next run did the same (a KTH easy+ff replay after a test's plug-in run: 10 s)."""
    from schedbench import predictors
    from schedbench.allocators import dispatch
    from schedbench.core import loop_for
    from schedbench.schedulers import easy

    sched = easy.EasyPool(*[None] * 5)
    built_in = loop_for(sched)
    assert loop_for(sched, predictors.JobColumn(np.zeros(1, np.int64)), None) is built_in
    packed = predictors.PredictorState(0, np.zeros((1, 4), np.int64), np.zeros((1, 1), np.int64))
    assert loop_for(sched, packed, None) is built_in
    assert loop_for(sched, None, dispatch.Allocator(*[None] * len(dispatch.Allocator._fields))) is built_in
    guest = loop_for(sched, _PluginGuess(np.zeros(1, np.int64)), None)
    assert guest is not built_in
    assert guest is loop_for(sched, _PluginGuess(np.zeros(1, np.int64)), None)
    assert "_PluginGuess" in guest._cache._cache_file._index_name
    assert guest._cache._cache_file._index_name != built_in._cache._cache_file._index_name
