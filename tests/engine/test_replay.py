"""The replay's timing (``simulate_s``) holds no compile: every kernel the timed part calls
from Python is compiled or loaded before its clock starts."""

from __future__ import annotations

import numpy as np

from schedbench import core
from schedbench.engine.replay import replay
from schedbench.io.jobs import from_columns
from schedbench.io.machine import from_spec


def test_the_loops_clock_is_first_read_before_the_timed_run(monkeypatch):
    # core.run reads the cycle counter (a kernel) between the loop's calls; left to that
    # first read, a cold cache compiled it inside simulate_s (about 0.05 s of a 0.25 s
    # Eurora replay)
    reads: list[bool] = []
    timed = [False]
    clock, real_run = core.cycle_counter, core.run

    def counting_clock():
        reads.append(timed[0])
        return clock()

    def timed_run(*args, **kwargs):
        timed[0] = True
        try:
            return real_run(*args, **kwargs)
        finally:
            timed[0] = False

    monkeypatch.setattr(core, "cycle_counter", counting_clock)
    monkeypatch.setattr(core, "run", timed_run)
    jobs = from_columns(submit=np.array([0, 0]), run=np.array([1, 0]), procs_req=np.array([1, 2]))
    result = replay(jobs, from_spec("2x(cores=1)"), "easy", "ff")
    assert reads[:1] == [False]  # the first read: before the timed run
    assert True in reads  # and the run read it too (the test watches the right clock)
    assert result.simulate_s >= 0
