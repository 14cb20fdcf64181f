"""The chains workload (:mod:`schedbench.workloads.chains`): links, logged submits, and
chains that follow on directly when nothing else competes."""

from __future__ import annotations

import numpy as np
import polars as pl

from schedbench.cli.main import main
from schedbench.engine import replay
from schedbench.io import jobs, machine
from schedbench.workloads import chains


def test_links_and_logged_submits():
    t = chains.generate(np.random.default_rng(1), chains=2, length=3, chain_nodes=10, chain_hours=1.0, think=30,
                        chain_start=100, background=2, background_nodes=5, background_hours=1.0)
    assert sorted(t.job_id.tolist()) == list(range(1, 9))
    by_id = {int(i): k for k, i in enumerate(t.job_id)}
    assert [int(t.preceding_job[by_id[i]]) for i in (3, 4, 5, 6, 7, 8)] == [-1, 3, 4, -1, 6, 7]
    assert [int(t.think_time[by_id[i]]) for i in (3, 4, 5)] == [-1, 30, 30]
    # a successor's logged submit is its predecessor's logged end plus the think time
    for s in (4, 5, 7, 8):
        p = by_id[int(t.preceding_job[by_id[s]])]
        assert t.submit[by_id[s]] == t.submit[p] + t.run[p] + 30
    assert np.all(t.run <= t.estimate) and np.all(t.run >= 0.7 * t.estimate - 1)
    assert np.all(np.diff(t.submit) >= 0)


def test_alone_on_the_machine_a_chain_follows_on_directly():
    t = chains.generate(np.random.default_rng(2), chains=3, length=4, chain_nodes=10, think=60, background=0)
    r = replay.replay(t, machine.from_spec("30x(cores=1)"), "fcfs", dependencies="on")
    by_id = {int(i): k for k, i in enumerate(t.job_id)}
    for k in range(t.n_jobs):
        p = int(t.preceding_job[k])
        expected = 3600 if p < 0 else r.end[by_id[p]] + 60
        assert r.start[k] == expected == r.eligible[k]


def test_cli_writes_the_workload(tmp_path):
    out = tmp_path / "chains.parquet"
    assert main(["workload", "chains", "--seed", "3", "--chains", "2", "--length", "5", "--background", "10",
                 "-o", str(out)]) == 0
    table, meta = jobs.read_parquet(out)
    assert table.n_jobs == 20 and meta["machine"] == "1000x(cores=1)" and meta["generator"] == "chains"
    assert int((table.preceding_job > 0).sum()) == 8
    assert pl.read_parquet(out).height == 20
