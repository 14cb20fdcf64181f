"""Progress feedback (issue 14, item 3): a line every period on a pipe, nothing on short
runs, a hook in Simulation.run over simulated time; the feedback never changes a result."""

from __future__ import annotations

import io

import numpy as np

from schedbench import registry
from schedbench.cli.main import main
from schedbench.engine import progress, replay
from schedbench.engine.simulation import Simulation
from schedbench.io import machine
from schedbench.workloads import eurora_like


class FakeClock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_pipe_gets_a_line_per_period_and_none_before():
    clock, out = FakeClock(), io.StringIO()
    bar = progress.Progress(1000, "jobs started", "job", "replay", stream=out, period_s=30, clock=clock)
    assert bar.bar is None  # StringIO is not a terminal
    clock.t += 500  # e.g. a compile before the first report: not counted
    bar.update(0)
    clock.t += 10
    bar.update(100)
    assert out.getvalue() == ""
    clock.t += 25
    bar.update(400)
    clock.t += 5
    bar.update(500)  # 5 s after the last line: none
    clock.t += 30
    bar.update(2000)  # clipped to the total
    bar.close()
    assert out.getvalue().splitlines() == [
        "schedbench: replay: 400 of 1,000 jobs started (40 %), 35 s",
        "schedbench: replay: 1,000 of 1,000 jobs started (100 %), 70 s",
    ]


def _workload(n=150, seed=4):
    table, meta = eurora_like.generate(n, np.random.default_rng(seed), load=1.5)
    return table, machine.from_spec(meta["machine"])


class FCFS:
    def __init__(self, sim):
        self.sim = sim

    def decide(self, view):
        for j in view.queue:
            if not self.sim.fits(j):
                return
            yield int(j)


def test_simulation_run_reports_simulated_time_and_started_jobs():
    table, mach = _workload()
    seen = []
    sim = Simulation(table, mach)
    res = sim.run(FCFS(sim), "py", progress=lambda now, started: seen.append((now, started)))
    times, started = np.array(seen).T
    assert len(seen) > 1
    assert np.all(np.diff(times) >= 0) and np.all(np.diff(started) >= 0)
    assert times[0] >= table.submit.min() and started[-1] == int((res.start >= 0).sum())
    quiet = Simulation(table, mach)
    again = quiet.run(FCFS(quiet), "py", progress=False)
    np.testing.assert_array_equal(res.start, again.start)


def test_simulation_run_default_prints_lines_on_a_pipe(monkeypatch, capsys):
    monkeypatch.setattr(progress, "PIPE_PERIOD_S", 0.0)
    table, mach = _workload(60)
    sim = Simulation(table, mach)
    sim.run(FCFS(sim), "py")
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(line.startswith("schedbench: simulate: ") for line in lines)
    span = int(table.submit.max() - table.submit.min())
    assert lines[-1].startswith(f"schedbench: simulate: {span:,} of {span:,} s of the submission span simulated (100 %)")


def test_replay_on_a_pipe_prints_progress_lines_and_same_outputs(monkeypatch, capsys, tmp_path):
    trace = tmp_path / "t.swf"
    trace.write_text("".join(f"{i} {i * 7} -1 {30 + i % 50} {1 + i % 4} -1 -1 {1 + i % 4} 100 -1 1 1 1 1 1 1 -1 -1\n"
                             for i in range(1, 301)))
    main(["replay", str(trace), "-m", "4x(cores=4)", "-q", "-o", str(tmp_path / "quiet")])
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(progress, "PIPE_PERIOD_S", 0.0)
    assert main(["replay", str(trace), "-m", "4x(cores=4)", "-o", str(tmp_path / "loud")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert "schedbench: replay: 300 of 300 jobs started (100 %)" in err[-1]
    for name in ("jobs.parquet", "allocations.parquet"):
        assert (tmp_path / "quiet" / name).read_bytes() == (tmp_path / "loud" / name).read_bytes()


def test_python_policy_replay_reports_through_the_same_callback():
    table, mach = _workload(80)
    registry.register_scheduler("py-fcfs-progress", FCFS, "a test's Python FCFS", kind="python", replace=True)
    try:
        calls = []
        res = replay.replay(table, mach, "py-fcfs-progress", "ff", progress=calls.append)
    finally:
        registry.unregister("py-fcfs-progress")
    assert len(calls) > 1 and calls == sorted(calls) and calls[-1] == int((res.start >= 0).sum())
    jitted = []
    res = replay.replay(table, mach, "fcfs", "ff", progress=jitted.append)
    assert jitted and jitted[-1] == int((res.start >= 0).sum())


def test_next_chunk_aims_at_the_wall_time_and_grows_gradually():
    from schedbench.core import next_chunk

    assert next_chunk(64, 64, 0.0064, 0.5) == 512  # 0.1 ms a pass: 5,000 would do, 8-fold at most
    assert next_chunk(4096, 4096, 4.096, 0.5) == 500  # 1 ms a pass: shrinks at once
    assert next_chunk(10, 10, 30.0, 0.5) == 1  # a pass slower than the period: one at a time
    assert next_chunk(64, 0, 0.0, 0.5) == 64  # an early return for room: nothing learnt
    assert next_chunk(64, 64, 0.0, 0.5) == 512  # a clock too coarse to see it: grows


def test_replay_returns_to_python_on_time_not_on_steps(monkeypatch):
    """Issue 31 item 1: the loop came back every 100,000 passes (a conservative replay of a
    large log printed nothing for 31 minutes and ignored Ctrl-C); it comes back every
    core.RETURN_EVERY_S of wall time, and that chunking never changes a schedule."""
    from schedbench import core

    table, mach = _workload(400, seed=7)
    steady = replay.replay(table, mach, "conservative", "ff")
    monkeypatch.setattr(core, "RETURN_EVERY_S", 0.0)  # every pass overruns it: one pass a call
    calls = []
    res = replay.replay(table, mach, "conservative", "ff", progress=calls.append)
    assert res.passes > 100 and len(calls) >= res.passes - 64  # all but the first, small chunk: a pass a call
    np.testing.assert_array_equal(res.start, steady.start)
    np.testing.assert_array_equal(res.end, steady.end)
    np.testing.assert_array_equal(res.alloc_ptr, steady.alloc_ptr)
    np.testing.assert_array_equal(res.alloc_log, steady.alloc_log)
    for key, column in steady.timeline.items():
        np.testing.assert_array_equal(res.timeline[key], column)


def test_steps_off_a_terminal_give_routine_steps_a_line_every_few_seconds():
    # after make setup a sweep loads all its 66 loops from the cache: a line each was noise
    now = [0.0]
    out = io.StringIO()
    steps = progress.Steps(6, "compile", stream=out, clock=lambda: now[0])
    steps.step("a (pool): loaded from the cache", routine=True)  # silent: 0 s since the start
    steps.step("b (pool): compiled, 9.0 s")  # not routine: always a line
    now[0] = 3.0
    steps.step("c (pool): loaded from the cache", routine=True)  # silent
    now[0] = 5.0
    steps.step("d (pool): loaded from the cache", routine=True)  # 5 s since the last line
    steps.step("e (pool): loaded from the cache", routine=True)  # silent
    steps.step("f (pool): loaded from the cache", routine=True)  # the last: always
    assert out.getvalue().splitlines() == [
        "schedbench: compile: 2 of 6, b (pool): compiled, 9.0 s",
        "schedbench: compile: 4 of 6, d (pool): loaded from the cache",
        "schedbench: compile: 6 of 6, f (pool): loaded from the cache",
    ]


def test_a_line_is_written_when_exactly_one_period_has_passed():
    # "one line every period_s": at 30.0 s of a 30 s period, the line is due
    clock = iter([0.0, 30.0])
    out = io.StringIO()
    p = progress.Progress(100, "jobs", "job", "replay", stream=out, period_s=30.0, clock=lambda: next(clock))
    p.update(0)
    p.update(12)
    assert out.getvalue() == "schedbench: replay: 12 of 100 jobs (12 %), 30 s\n"
