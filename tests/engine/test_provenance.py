"""Every setting that can change a schedule is recorded: summary.json, runs.parquet."""

from __future__ import annotations

import json

import numpy as np
import polars as pl

from schedbench import __version__
from schedbench.cli import main as cli
from schedbench.io import jobs, machine
from schedbench.sweep import config as sweep_config
from schedbench.sweep import execute
from schedbench.workloads import eurora_like


def _workload(tmp_path, n=150, seed=2):
    table, meta = eurora_like.generate(n, np.random.default_rng(seed), load=1.1)
    path = tmp_path / f"w{seed}.parquet"
    jobs.write_parquet(table, path, {"machine": meta["machine"]})
    return table, path


def _summary(tmp_path, name, *args):
    out = tmp_path / name
    assert cli.main(["replay", *map(str, args), "-o", str(out), "-q"]) == 0
    return json.loads((out / "summary.json").read_text())


def test_summary_records_every_option_and_the_input(tmp_path):
    table, path = _workload(tmp_path)
    event = _summary(tmp_path, "a", path, "-s", "fcfs", "-a", "priority-weighted")
    ticks = _summary(tmp_path, "b", path, "-s", "fcfs", "-a", "priority-weighted", "--period", "5",
                     "-O", "priority_bound=3", "--critical", "gpus")
    assert event["label"] == ticks["label"] == "fcfs+priority-weighted"
    assert (event["period"], ticks["period"]) == (0, 5)
    assert event["allocator_options"] == {"critical": ["gpus", "mics"], "priority_bound": 10, "weight_rule": "authors",
                                         "window": 100}
    assert ticks["allocator_options"] == {"critical": ["gpus"], "priority_bound": 3, "weight_rule": "authors", "window": 100}
    assert event["scheduler_options"] == {} and event["predictor"] == "requested"
    assert event["input_digest"] == ticks["input_digest"] == jobs.digest(table)
    assert event["machine"] == machine.from_spec(event["machine"]).spec
    assert event["schedbench_version"] == __version__
    assert event["metrics"] != ticks["metrics"]  # the settings did change the schedule


def test_the_digest_follows_the_contents(tmp_path):
    a, _ = _workload(tmp_path, seed=2)
    b, _ = _workload(tmp_path, seed=3)
    assert jobs.digest(a) == jobs.digest(a.take(np.arange(a.n_jobs)))
    assert jobs.digest(a) != jobs.digest(b)
    changed = a.take(np.arange(a.n_jobs))
    changed.run[0] += 1
    assert jobs.digest(a) != jobs.digest(changed)


def test_sweep_keys_and_records_period_and_options(tmp_path):
    config = {
        "schedulers": ["fcfs"],
        "allocators": ["ff", "priority-weighted"],
        "period": [0, 5],
        "options": {"priority_bound": [2, 10]},
        "workloads": [{"generator": "eurora-like", "jobs": 80, "name": "eu"}],
    }
    runs = sweep_config.expand(config)
    # ff takes no option: one run per period; priority-weighted: one per period and bound
    assert len(runs) == 2 + 4 and len({r["key"] for r in runs}) == 6
    execute.sweep(runs, tmp_path, jobs=1, progress=False)
    table = pl.read_parquet(tmp_path / "runs.parquet")
    assert table.filter(pl.col("status") == "ok").height == 6
    pw = table.filter(pl.col("allocator") == "priority-weighted")
    assert sorted(zip(pw["period"], pw["options"], strict=True)) == [
        (0, '{"critical":["gpus","mics"],"priority_bound":10,"weight_rule":"authors","window":100}'),
        (0, '{"critical":["gpus","mics"],"priority_bound":2,"weight_rule":"authors","window":100}'),
        (5, '{"critical":["gpus","mics"],"priority_bound":10,"weight_rule":"authors","window":100}'),
        (5, '{"critical":["gpus","mics"],"priority_bound":2,"weight_rule":"authors","window":100}'),
    ]
    assert table["input_digest"].n_unique() == 1
