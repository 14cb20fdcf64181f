"""Conservative backfilling's pool plan through its slot index (issue 27): the index
changes no start.  Replays normally build it only past ``state.INDEX_ON_ROWS`` rows, which
small workloads never reach; here the thresholds are set to 0 (built from the first row,
never dropped) and the blocks made of 1-4 rows, so that every search goes through the
index, blocks split, blocks are skipped and the blocks behind the trim are dropped."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_conservative as nc
from repo_paths import SWF_LOGS
from schedbench.core import layout
from schedbench.engine import replay
from schedbench.engine.simulation import Simulation
from schedbench.io import jobs, machine, swf
from schedbench.plan import rusv
from schedbench.schedulers.conservative import state
from strategies import pool_traces as _pool_traces


def _index_always(monkeypatch, block_rows):
    monkeypatch.setattr(state, "INDEX_ON_ROWS", 0)
    monkeypatch.setattr(state, "INDEX_OFF_ROWS", 0)
    monkeypatch.setattr(state, "BLOCK_ROWS", block_rows)


pool_traces = partial(_pool_traces, max_procs=10, max_jobs=35, max_submit=40, min_size=0, size_over=1, max_est=30)


@settings(max_examples=150, deadline=None)
@given(pool_traces(), st.sampled_from(["requested", "actual"]), st.integers(1, 4))
def test_indexed_pool_equals_the_oracle(trace, predictor, block_rows):
    table, procs = trace
    est = np.where(table.estimate > 0, table.estimate, table.run)
    nv = nc.replay_pool(table.job_id, table.submit, table.run, table.units,
                        table.run if predictor == "actual" else est, est, procs)
    with pytest.MonkeyPatch.context() as mp:
        _index_always(mp, block_rows)
        r = replay.replay(table, machine.from_spec(f"1x(cores={procs})"), "conservative", "ff", predictor)
    expected = np.array([-1 if s is None else s for s in nv.start], dtype=np.int64)
    np.testing.assert_array_equal(r.start, expected)


@pytest.mark.skipif(not SWF_LOGS, reason="../shared/traces/swf not present")
@pytest.mark.parametrize("path", SWF_LOGS[:2], ids=lambda p: p.name.split("-cln")[0])
def test_indexed_pool_equals_the_plain_one_on_shared_logs(path, monkeypatch):
    table, header = swf.read(path)
    table = table.head(3000)
    mach = machine.from_swf_header(header.max_procs, header.max_nodes, int(table.units.max()))
    plain = replay.replay(table, mach, "conservative", "ff")
    _index_always(monkeypatch, 2)
    indexed = replay.replay(table, mach, "conservative", "ff")
    np.testing.assert_array_equal(indexed.start, plain.start)


def test_a_long_plan_builds_the_index_and_drops_it(monkeypatch):
    """260 jobs submitted at once, each with its own estimate, on 64 cores, with the
    thresholds lowered tenfold (build past 200 rows, drop below 100; blocks of 16 rows,
    so that the index has several): the plan passes INDEX_ON_ROWS rows, the scheduler
    builds the index at its next search and drops it once the plan has shrunk below
    INDEX_OFF_ROWS; the starts are those of a replay whose index never builds.  Jobs end
    before their estimates, so compressions run on the indexed plan.  (At the real
    thresholds this takes 2,600 jobs and a minute of stepping; the kernels read the
    thresholds from the index's header, so lower ones exercise the same code.)"""
    monkeypatch.setattr(state, "INDEX_ON_ROWS", 200)
    monkeypatch.setattr(state, "INDEX_OFF_ROWS", 100)
    monkeypatch.setattr(state, "BLOCK_ROWS", 16)
    rng = np.random.default_rng(7)
    n = 260
    est = rng.permutation(np.arange(100, 100 + 7 * n, 7))
    table = jobs.from_columns(job_id=np.arange(1, n + 1), submit=np.zeros(n, np.int64), run=est // 2,
                              procs_req=rng.integers(1, 65, n), time_req=est)
    mach = machine.from_spec("1x(cores=64)")
    sim = Simulation(table, mach, scheduler="conservative", allocator="ff")
    built = dropped = False
    rows = []
    most_blocks = 0
    while sim.step() is not None:
        blocks = int(sim.sched.pmf[2, 0])  # the cores' slot index: its count of blocks
        rows.append(int(sim.sched.meta[0, rusv.M_N]))
        most_blocks = max(most_blocks, blocks)
        built |= blocks > 0
        dropped |= built and blocks == 0
    assert max(rows) > state.INDEX_ON_ROWS and built and dropped and most_blocks > 4
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(state, "INDEX_ON_ROWS", 10**9)
        mp.setattr(state, "INDEX_OFF_ROWS", 10**9)
        plain = replay.replay(table, mach, "conservative", "ff")
    np.testing.assert_array_equal(sim.core.jobs[:, layout.J_START], plain.start)
