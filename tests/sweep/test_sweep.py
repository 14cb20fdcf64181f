"""Sweep runner: config expansion, results layout, no recomputation, resume after a kill,
failed runs, the process pool and the Dask path."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from repo_paths import ROOT
from schedbench.cli import main as cli
from schedbench.engine import progress
from schedbench.errors import DataError, UsageError
from schedbench.registry import ALLOCATORS, SCHEDULERS
from schedbench.sweep import config as sweep_config
from schedbench.sweep import execute

SMALL = "16x(cores=8,gpus=2)"
SCHEDS = list(SCHEDULERS)[:2]
ALLOCS = list(ALLOCATORS)[:2]


def _toml_list(xs) -> str:
    return "[" + ", ".join(json.dumps(x) for x in xs) + "]"


def tiny_config(seeds=(1, 2), extra: str = "") -> str:
    return f"""
schedulers = {_toml_list(SCHEDS)}
allocators = {_toml_list(ALLOCS)}
seeds = {_toml_list(seeds)}

[[workloads]]
name = "esp"
generator = "esp"
variant = "original"
machine = "{SMALL}"
{extra}
"""


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    return path


def run_sweep(cfg: Path, out: Path, **kw) -> dict:
    runs = sweep_config.expand(sweep_config.load_config(cfg), cfg.parent)
    return execute.sweep(runs, out, progress=False, **kw)


def mtimes(out: Path) -> dict[str, int]:
    return {d.name: (d / "run.json").stat().st_mtime_ns for d in (out / "runs").iterdir()}


# -- config ---------------------------------------------------------------------------------


def test_expand_grid_and_keys():
    config = {
        "schedulers": "all",
        "allocators": "all",
        "seeds": [3, 4],
        "workloads": [
            {"generator": "esp", "variant": "original", "machine": SMALL},
            {"name": "eu", "generator": "eurora-like", "jobs": 50, "load": [0.5, 0.9]},
        ],
    }
    runs = sweep_config.expand(config)
    n_pairs = len(SCHEDULERS) * len(ALLOCATORS)
    assert len(runs) == 3 * n_pairs * 2
    assert {r["workload"] for r in runs} == {"esp", "eu_load=0.5", "eu_load=0.9"}
    assert {(r["scheduler"], r["allocator"]) for r in runs} == {(s, a) for s in SCHEDULERS for a in ALLOCATORS}
    assert len({r["key"] for r in runs}) == len(runs)
    eu = next(r for r in runs if r["workload"] == "eu_load=0.9")
    assert eu["source"] == {"generator": "eurora-like", "params": {"jobs": 50, "load": 0.9}}
    assert eu["machine"] is None
    # the key is a function of the configuration only
    again = sweep_config.expand(config)
    assert [r["key"] for r in again] == [r["key"] for r in runs]
    config["workloads"][1]["burstiness"] = 0.0
    changed = {r["key"] for r in sweep_config.expand(config) if r["workload"].startswith("eu")}
    assert not changed & {r["key"] for r in runs}


def test_exclude_leaves_pairs_out():
    config = {"schedulers": ["easy", "conservative"], "allocators": ["ff", "balanced"],
              "exclude": ["conservative+balanced"], "workloads": [{"generator": "esp", "machine": SMALL}]}
    pairs = {(r["scheduler"], r["allocator"]) for r in sweep_config.expand(config)}
    assert pairs == {("easy", "ff"), ("easy", "balanced"), ("conservative", "ff")}
    config["exclude"] = ["conservative+*", "*+balanced"]
    assert {(r["scheduler"], r["allocator"]) for r in sweep_config.expand(config)} == {("easy", "ff")}


def test_the_default_bench_sweep_leaves_the_impossible_pairs_to_the_capabilities():
    import tomllib

    from schedbench import registry

    config = tomllib.loads((ROOT / "bench" / "default.toml").read_text())
    pairs = {(r["scheduler"], r["allocator"]) for r in sweep_config.expand(config)}
    refused = set()
    for s, a in pairs:  # both default workloads need nodes (partial-node and GPU requests)
        try:
            registry.check_pair(s, a, workload=registry.Workload(on_nodes=True, pool=False))
        except registry.Impossible:
            refused.add((s, a))
    assert refused == {("conservative", "weighted"), ("conservative", "priority-weighted")}
    assert ("conservative", "ff") in pairs


def test_the_default_bench_workloads_separate_the_allocators(tmp_path):
    """Issue 14: on each default workload, the allocators give different schedules (FCFS,
    seed 1: the cheapest scheduler that shows it)."""
    import tomllib

    config = tomllib.loads((ROOT / "bench" / "default.toml").read_text())
    config.update(schedulers=["fcfs"], allocators="all", seeds=[1], exclude=[])
    for entry in config["workloads"]:
        assert entry.get("description"), entry["name"]  # the report says why each is there
        entry["jobs"] = min(entry["jobs"], 250)  # the same kinds of workload, fewer jobs: a fast test
    counts = execute.sweep(sweep_config.expand(config), tmp_path, jobs=1, progress=False)
    assert counts["failed"] == 0
    runs = pl.read_parquet(tmp_path / "runs.parquet")
    assert runs["description"].null_count() == 0
    spread = runs.group_by("workload").agg(pl.col("wait_mean").n_unique().alias("distinct"), pl.len())
    for row in spread.iter_rows(named=True):
        assert row["len"] == len(ALLOCATORS)
        assert row["distinct"] >= 3, row  # not one schedule for all allocators, as ESP gives


def test_description_is_shown_not_keyed(tmp_path):
    plain = sweep_config.expand(sweep_config.load_config(write_config(tmp_path, tiny_config())), tmp_path)
    cfg = write_config(tmp_path, tiny_config(extra='description = "why: a small test"'))
    described = sweep_config.expand(sweep_config.load_config(cfg), tmp_path)
    assert [r["key"] for r in plain] == [r["key"] for r in described]
    assert {r["description"] for r in described} == {"why: a small test"}
    out = tmp_path / "results"
    run_sweep(cfg, out, jobs=1)
    assert set(pl.read_parquet(out / "runs.parquet")["description"]) == {"why: a small test"}
    cfg.write_text(tiny_config(extra='description = "reworded"'))
    again = run_sweep(cfg, out, jobs=1)
    assert again["ran"] == 0  # rewording reruns nothing ...
    assert set(pl.read_parquet(out / "runs.parquet")["description"]) == {"reworded"}  # ... but shows
    with pytest.raises(UsageError, match="description must be a string"):
        sweep_config.expand(sweep_config.load_config(write_config(tmp_path, tiny_config(extra="description = 3"))), tmp_path)


def test_key_depends_on_version(monkeypatch):
    cfg = {"workload": "w", "scheduler": "easy"}
    key = sweep_config.run_key(cfg)
    assert len(key) == 16 and key == sweep_config.run_key(dict(reversed(cfg.items())))
    monkeypatch.setattr(sweep_config, "__version__", "999")
    assert sweep_config.run_key(cfg) != key


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"workloads": [{"generator": "esp"}], "typo": 1}, "unknown sweep config key"),
        ({"schedulers": ["nope"], "workloads": [{"generator": "esp"}]}, "unknown scheduler 'nope'"),
        ({"workloads": []}, "at least one"),
        ({"workloads": [{"generator": "nope"}]}, "unknown generator"),
        ({"workloads": [{"generator": "esp", "colour": 1}]}, "unknown option(s) colour"),
        ({"workloads": [{"generator": "esp", "seed": 1}]}, "seed comes from the sweep"),
        ({"workloads": [{"generator": "eurora-like"}]}, "needs --jobs"),
        ({"workloads": [{"generator": "esp", "trace": "x.swf"}]}, "exactly one of"),
        ({"seeds": [-1], "workloads": [{"generator": "esp"}]}, "seeds"),
        ({"exclude": ["easy-ff"], "workloads": [{"generator": "esp"}]}, "scheduler+allocator pair"),
        ({"exclude": "easy+ff", "workloads": [{"generator": "esp"}]}, "exclude must be a list"),
        ({"workloads": [{"trace": "a.swf", "variant": "x"}]}, "for a trace"),
        (
            {"workloads": [{"name": "w", "generator": "esp"}, {"name": "w", "generator": "esp", "variant": "cpu-gpu"}]},
            "distinct names",
        ),
    ],
)
def test_expand_rejects_bad_configs(config, message):
    with pytest.raises(UsageError, match=None) as err:
        sweep_config.expand(config)
    assert message in str(err.value)


def test_option_names_with_dashes_and_traces(tmp_path):
    (tmp_path / "log.swf").write_text("")
    runs = sweep_config.expand(
        {
            "seeds": [1, 2],
            "schedulers": ["easy"],
            "allocators": ["ff"],
            "workloads": [
                {"generator": "esp", "interarrival-sd": 5.0},
                {"trace": "log.swf", "limit": 10},
            ],
        },
        tmp_path,
    )
    esp = [r for r in runs if r["workload"] == "esp"]
    assert esp[0]["source"]["params"] == {"interarrival_sd": 5.0}
    trace = [r for r in runs if r["workload"] == "log"]
    assert len(trace) == 1 and trace[0]["seed"] is None  # a trace replay is deterministic
    assert trace[0]["source"] == {"trace": str((tmp_path / "log.swf").resolve()), "limit": 10}


# -- running --------------------------------------------------------------------------------


def test_sweep_writes_results_and_never_recomputes(tmp_path):
    cfg = write_config(tmp_path, tiny_config())
    out = tmp_path / "results"
    counts = run_sweep(cfg, out, jobs=1)
    n = len(SCHEDS) * len(ALLOCS) * 2
    assert counts == {"total": n, "skipped": 0, "ran": n, "failed": 0, "impossible": 0, "failed_total": 0}

    runs = pl.read_parquet(out / "runs.parquet")
    assert runs.height == n and runs["status"].to_list() == ["ok"] * n
    assert runs["run_id"].n_unique() == n
    for col in ("wait_mean", "bsld_mean", "utilisation", "queue_mean", "makespan", "fairness_jain_wait",
                "generate_s", "simulate_s", "write_s", "jobs_per_s", "sim_days_per_hour",
                "schedbench_version", "git_rev", "seed", "machine", "params"):
        assert col in runs.columns, col
    assert runs["machine"].unique().to_list() == [SMALL]
    assert (runs["jobs_input"] == 230).all() and (runs["jobs_per_s"] > 0).all()
    days_per_hour = runs["makespan"] / 86400 / (runs["simulate_s"] / 3600)
    assert (days_per_hour - runs["sim_days_per_hour"]).abs().max() < 1e-6

    jobs = pl.scan_parquet(out / "jobs", hive_partitioning=True).collect()
    assert set(jobs.columns) >= {"workload", "scheduler", "allocator", "predictor", "run_id", "seed", "wait"}
    assert jobs.height == 230 * n
    assert set(jobs["run_id"].unique()) == set(runs["run_id"])
    per_run = jobs.group_by("run_id", "scheduler", "allocator").len()
    expected = set(zip(runs["run_id"], runs["scheduler"], runs["allocator"], strict=True))
    assert set(zip(per_run["run_id"], per_run["scheduler"], per_run["allocator"], strict=True)) == expected
    parts = sorted(p.relative_to(out).as_posix() for p in (out / "jobs").rglob("*.parquet"))
    assert parts[0].startswith("jobs/workload=esp/scheduler=")
    assert sorted(runs["jobs_path"]) == parts
    timeline = pl.scan_parquet(out / "timeline", hive_partitioning=True).collect()
    assert set(timeline["run_id"].unique()) == set(runs["run_id"])
    summary = json.loads((out / "runs" / runs["run_id"][0] / "summary.json").read_text())
    assert summary["run_id"] == runs["run_id"][0] and "metrics" in summary
    assert not list((out / ".tmp").iterdir())

    before = mtimes(out)
    again = run_sweep(cfg, out, jobs=1)
    assert again["ran"] == 0 and again["skipped"] == n
    assert mtimes(out) == before
    # a bigger grid runs only what is new
    cfg.write_text(tiny_config(seeds=(1, 2, 3)))
    more = run_sweep(cfg, out, jobs=1)
    assert (more["ran"], more["skipped"]) == (n // 2, n)
    assert {k: v for k, v in mtimes(out).items() if k in before} == before


def test_failed_run_is_recorded_and_others_complete(tmp_path, capsys):
    # A bad generator value is a usage error found before any run (issue 14, item 2) ...
    broken = write_config(tmp_path, tiny_config(seeds=(1,), extra="""
[[workloads]]
name = "broken"
generator = "esp"
variant = "no-such-variant"
"""))
    assert cli.main(["sweep", str(broken), "-o", str(tmp_path / "none"), "--jobs", "1", "-q"]) == 2
    assert "no-such-variant" in capsys.readouterr().err and not (tmp_path / "none").exists()
    # ... a run that fails only when it runs (the jobs do not fit the machine) is recorded
    extra = """
[[workloads]]
name = "too-small"
generator = "esp"
variant = "cpu-gpu"
machine = "4x(cores=8)"
"""
    cfg = write_config(tmp_path, tiny_config(seeds=(1,), extra=extra))
    out = tmp_path / "results"
    status = cli.main(["sweep", str(cfg), "-o", str(out), "--jobs", "1", "-q"])
    assert status == 1  # some runs failed
    runs = pl.read_parquet(out / "runs.parquet")
    n = len(SCHEDS) * len(ALLOCS)
    assert runs.height == 2 * n
    ok = runs.filter(pl.col("workload") == "esp")
    assert ok["status"].to_list() == ["ok"] * n
    small = runs.filter(pl.col("workload") == "too-small")
    assert small["status"].to_list() == ["failed"] * n
    assert small["wait_mean"].null_count() == n
    assert all("GPU" in e or "gpu" in e for e in small["error"]), small["error"].to_list()
    err = json.loads((out / "runs" / small["run_id"][0] / "error.json").read_text())
    assert "Traceback" in err["traceback"]
    assert not list((out / "jobs").glob("workload=too-small"))
    # failed runs are finished runs: not redone unless asked
    assert run_sweep(cfg, out, jobs=1)["ran"] == 0
    counts = run_sweep(cfg, out, jobs=1, retry_failed=True)
    assert counts["ran"] == n and counts["failed"] == n


def test_killed_sweep_resumes_without_redoing_finished_runs(tmp_path):
    seeds = tuple(range(1, 16))  # 60 runs: seconds of work, so the kill lands mid-way
    cfg = write_config(tmp_path, tiny_config(seeds=seeds))
    out = tmp_path / "results"
    total = len(SCHEDS) * len(ALLOCS) * len(seeds)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.Popen(
        [sys.executable, "-m", "schedbench", "sweep", str(cfg), "-o", str(out), "--jobs", "1", "-q"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not (out / "runs").is_dir() or not any((out / "runs").iterdir()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no run finished in time"
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
        proc.stdout.close()
        proc.stderr.close()
    done_before = mtimes(out)
    assert 1 <= len(done_before) < total
    assert not (out / "runs.parquet").exists()  # killed before the table was written

    counts = run_sweep(cfg, out, jobs=1)
    assert counts["skipped"] == len(done_before)
    assert counts["ran"] == total - len(done_before)
    after = mtimes(out)
    assert len(after) == total
    assert {k: after[k] for k in done_before} == done_before
    runs = pl.read_parquet(out / "runs.parquet")
    assert runs.height == total and (runs["status"] == "ok").all()
    jobs = pl.scan_parquet(out / "jobs", hive_partitioning=True).select("run_id").collect()
    assert jobs["run_id"].n_unique() == total and jobs.height == 230 * total
    assert not list((out / ".tmp").iterdir())


def test_process_pool_through_the_cli(tmp_path, capsys):
    cfg = write_config(tmp_path, tiny_config(seeds=(1,)))
    out = tmp_path / "results"
    assert cli.main(["sweep", str(cfg), "-o", str(out), "--jobs", "2"]) == 0
    err = capsys.readouterr().err
    n = len(SCHEDS) * len(ALLOCS)
    assert f"{n} runs: {n} run now (0 failed)" in err
    # not a terminal: plain lines, one per loop of the compile phase, then the runs'
    assert f"schedbench: compile: {n} of {n}, " in err and "Traceback" not in err
    assert f"schedbench: sweep: {n} of {n} runs done" in err
    runs = pl.read_parquet(out / "runs.parquet")
    assert runs.height == n and (runs["status"] == "ok").all()
    # equal configurations give equal schedules whichever process ran them
    serial = tmp_path / "serial"
    run_sweep(cfg, serial, jobs=1)
    a = pl.read_parquet(out / "runs.parquet").sort("run_id").select("run_id", "wait_mean", "makespan")
    b = pl.read_parquet(serial / "runs.parquet").sort("run_id").select("run_id", "wait_mean", "makespan")
    assert a.equals(b)


def test_dry_run_lists_runs(tmp_path, capsys):
    cfg = write_config(tmp_path, tiny_config(seeds=(1,)))
    assert cli.main(["sweep", str(cfg), "-o", str(tmp_path / "r"), "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(SCHEDS) * len(ALLOCS) and all("todo" in line for line in lines)
    assert not (tmp_path / "r").exists()


def test_dry_run_names_the_pairs_ruled_out_before_their_workload(tmp_path, capsys):
    # aucsched's SLURM bids (on by default) need a planning order, which weighted does not
    # give; the dry run once listed that run as "todo", though the sweep only skips it
    config = ('schedulers = ["aucsched", "fcfs"]\nallocators = ["weighted", "ff"]\n'
              '[[workloads]]\ngenerator = "esp"\n')
    cfg = write_config(tmp_path, config)
    assert cli.main(["sweep", str(cfg), "-o", str(tmp_path / "r"), "--dry-run"]) == 0
    states = {tuple(line.split()[3].split("+")): line.split()[1] for line in capsys.readouterr().out.splitlines()}
    assert states == {("aucsched", "weighted"): "impossible", ("aucsched", "ff"): "todo",
                      ("fcfs", "weighted"): "todo", ("fcfs", "ff"): "todo"}
    off = write_config(tmp_path, config + '[options]\nslurm_bids = false\n')
    assert cli.main(["sweep", str(off), "-o", str(tmp_path / "r"), "--dry-run"]) == 0
    assert "impossible" not in capsys.readouterr().out


def test_cli_usage_errors(tmp_path, capsys):
    cfg = write_config(tmp_path, 'schedulers = ["nope"]\n[[workloads]]\ngenerator = "esp"\n')
    assert cli.main(["sweep", str(cfg), "-o", str(tmp_path / "r")]) == 2
    assert "unknown scheduler 'nope'" in capsys.readouterr().err
    # the config's mistakes name it, as its TOML errors do (they named no file)
    for argv in (["sweep", str(cfg), "-o", str(tmp_path / "r")], ["warm", "--config", str(cfg), "--dry-run"]):
        assert cli.main(argv) == 2
        assert capsys.readouterr().err.startswith(f"schedbench: error: {cfg}: unknown scheduler 'nope'; ")
    empty = write_config(tmp_path, "")
    assert cli.main(["sweep", str(empty), "-o", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"schedbench: error: {empty}: the sweep config needs at least one [[workloads]] table")
    assert cli.main(["sweep", str(tmp_path / "missing.toml"), "-o", str(tmp_path / "r")]) == 2
    bad = write_config(tmp_path, "schedulers = [\n")
    assert cli.main(["sweep", str(bad), "-o", str(tmp_path / "r")]) == 2
    assert "invalid TOML" in capsys.readouterr().err


@pytest.mark.parametrize(("line", "message"), [
    # runs.parquet's Int64 seed column refused it: every run recorded as failed, in a multi-line error
    ("seeds = [99999999999999999999]", "sweep: seeds must be an integer 0 to 999,999,999,999,999,999"),
    # each run failed on it, one by one, instead of the config up front
    ("period = [99999999999999999999]", "period must be 0 to 999,999,999,999,999,999 seconds"),
])
def test_an_integer_past_int64_in_a_config_is_refused_up_front(tmp_path, capsys, line, message):
    cfg = write_config(tmp_path, line + "\n" + tiny_config(seeds=(1,)).replace("seeds = [1]\n", ""))
    assert cli.main(["sweep", str(cfg), "-o", str(tmp_path / "r"), "-q"]) == 2
    assert capsys.readouterr().err.startswith(f"schedbench: error: {cfg}: {message}")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("address", ["garbage", "tcp://host", "tcp://host:port"])
def test_a_malformed_dask_address_is_a_usage_error(tmp_path, capfd, address):
    # was a ValueError from inside Client() (an internal error), then, 40 s later, the
    # half-made client's __del__ traceback on stderr
    cfg = write_config(tmp_path, tiny_config(seeds=(1,)))
    assert cli.main(["sweep", str(cfg), "-o", str(tmp_path / "r"), "--dask", address]) == 2
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"schedbench: error: --dask {address!r}: "), err
    assert err[0].endswith("(expected e.g. tcp://host:8786)") and not (tmp_path / "r").exists()


def test_one_sweep_at_a_time(tmp_path):
    out = tmp_path / "results"
    out.mkdir()
    with execute.SweepLock(out), pytest.raises(UsageError, match="another sweep"):
        with execute.SweepLock(out):
            pass


def test_dask_local_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    cfg = write_config(tmp_path, tiny_config(seeds=(1,)))
    out = tmp_path / "results"
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, host="127.0.0.1",
        dashboard_address=None, protocol="tcp",
    ) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        counts = run_sweep(cfg, out, dask_address=cluster.scheduler_address)
    n = len(SCHEDS) * len(ALLOCS)
    assert counts["ran"] == n and counts["failed"] == 0
    runs = pl.read_parquet(out / "runs.parquet")
    assert runs.height == n and (runs["status"] == "ok").all()
    assert pl.scan_parquet(out / "jobs", hive_partitioning=True).collect().height == 230 * n



MISSING_PLUGIN = "schedbench_plugin_not_on_the_workers"


@pytest.fixture
def plugin_scheduler():
    """A scheduler registered here from a plug-in module that no worker can import (fcfs
    under another name): what a plug-in installed on the client only looks like."""
    from dataclasses import replace

    from schedbench import registry

    name = "fcfs-from-a-plugin"
    SCHEDULERS[name] = replace(SCHEDULERS["fcfs"], name=name, plugin=MISSING_PLUGIN)
    try:
        yield name
    finally:
        registry.unregister(name)


def _plugin_config(tmp_path: Path, scheduler: str) -> Path:
    return write_config(tmp_path, tiny_config(seeds=(1, 2)).replace(
        f"schedulers = {_toml_list(SCHEDS)}", f"schedulers = {_toml_list([scheduler])}"))


def test_a_plugin_missing_on_the_dask_workers_is_one_error(tmp_path, plugin_scheduler, capsys):
    distributed = pytest.importorskip("distributed")
    cfg = _plugin_config(tmp_path, plugin_scheduler)
    out = tmp_path / "results"
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, host="127.0.0.1",
        dashboard_address=None, protocol="tcp",
    ) as cluster:
        code = cli.main(["sweep", str(cfg), "-o", str(out), "--dask", cluster.scheduler_address])
    err = capsys.readouterr().err
    assert code == 1
    assert f"plug-in module {MISSING_PLUGIN!r} cannot be imported on the worker host" in err
    assert "failed:" not in err and "Traceback" not in err
    assert not (out / "runs").exists() or not any((out / "runs").iterdir())  # no run recorded as failed


def test_a_plugin_missing_in_a_worker_stops_its_run_unrecorded(tmp_path, plugin_scheduler):
    """A worker that meets the missing module in a run (a Dask worker joining late, a
    local process) raises instead of recording the run as failed, and writes nothing."""
    from schedbench.errors import DataError

    run = sweep_config.expand(sweep_config.load_config(_plugin_config(tmp_path, plugin_scheduler)), tmp_path)[0]
    out = tmp_path / "results"
    with pytest.raises(DataError, match=f"plug-in module {MISSING_PLUGIN!r} cannot be imported"):
        execute.execute(run, str(out), None, (MISSING_PLUGIN,))
    assert not out.exists()


def test_workload_labels_use_the_configs_own_keys():
    config = {"schedulers": ["easy"], "allocators": ["ff"], "period": [0, 5],
              "options": {"priority_type": ["basic", "multifactor"]},
              "workloads": [{"generator": "soner", "type": ["I", "II"], "jobs": 5}]}
    runs = sweep_config.expand(config)
    assert {r["workload"] for r in runs} == {"soner_type=I", "soner_type=II"}
    assert {r["period"] for r in runs} == {0, 5}


def test_run_lines_come_on_time_while_no_run_ends(monkeypatch, capsys):
    # a pipe or a log file gets a line every period even while one long run (a Python
    # policy's, minutes) holds every worker: nothing calls update() meanwhile
    monkeypatch.setattr(execute, "RUN_LINES_PERIOD_S", 0.2)
    lines = execute._RunLines(total=3, done=1, show=True)
    try:
        time.sleep(0.9)
    finally:
        lines.close()
    err = capsys.readouterr().err.splitlines()
    assert len(err) >= 2 and all(line.startswith("schedbench: sweep: 1 of 3 runs done, ") for line in err), err
    time.sleep(0.3)
    assert capsys.readouterr().err == ""  # closed: the thread says nothing more


def test_run_lines_stay_silent_when_not_shown(monkeypatch, capsys):
    monkeypatch.setattr(execute, "RUN_LINES_PERIOD_S", 0.05)
    lines = execute._RunLines(total=2, done=0, show=False)
    lines.update(1)
    time.sleep(0.2)
    lines.update(1)
    lines.close()
    assert capsys.readouterr().err == ""


def test_the_terminal_bar_is_redrawn_while_no_run_ends(monkeypatch, capsys):
    # tqdm redraws on update() only: without the thread a terminal showed a frozen bar
    # (elapsed time included) for as long as one long run held every worker
    monkeypatch.setattr(progress, "REDRAW_S", 0.1)
    bar = execute._TerminalBar(total=3, done=1)
    try:
        time.sleep(0.75)
    finally:
        bar.close()
    frames = [f for f in capsys.readouterr().err.split("\r") if f.strip()]
    assert len(frames) >= 4 and all(f.lstrip().startswith("sweep:") for f in frames), frames
    time.sleep(0.3)
    assert capsys.readouterr().err == ""  # closed: nothing drawn after


# Known-answer cases for four rules a mutation run changed without a test failing.


def _recorded_run(results, key, **row):
    """A run.json under results/runs/<key>/, as an earlier sweep leaves it."""
    d = Path(results) / "runs" / key
    d.mkdir(parents=True)
    (d / "run.json").write_text(json.dumps({"run_id": key, "workload": "w", "scheduler": "easy", "allocator": "ff",
                                            "predictor": "requested", "seed": 1, **row}))


def test_seed_zero_is_a_seed():
    cfg = {"schedulers": ["easy"], "allocators": ["ff"], "seeds": [0],
           "workloads": [{"generator": "esp", "machine": "16x(cores=8,gpus=2)"}]}
    assert {r["seed"] for r in sweep_config.expand(cfg)} == {0}


def test_retrying_failed_runs_leaves_another_configs_runs_alone(tmp_path):
    _recorded_run(tmp_path, "other", status="failed", error="x")
    execute.sweep([], tmp_path, retry_failed=True, progress=False)
    assert (tmp_path / "runs" / "other" / "run.json").is_file()


def test_failed_total_counts_this_configs_runs_only(tmp_path):
    _recorded_run(tmp_path, "other", status="failed", error="x")
    assert execute.sweep([], tmp_path, progress=False)["failed_total"] == 0


def test_runs_table_is_sorted_by_workload_first(tmp_path):
    _recorded_run(tmp_path, "k1", status="ok", workload="b", scheduler="easy")
    _recorded_run(tmp_path, "k2", status="ok", workload="a", scheduler="fcfs")
    assert execute.write_runs_table(tmp_path)["run_id"].to_list() == ["k2", "k1"]


def test_a_folder_that_is_not_a_sweeps_is_refused(tmp_path, capsys):
    """The runs would be written in among its files (a replay's output, anything else);
    an empty folder, hidden files aside, and an earlier sweep's are taken."""
    cfg = write_config(tmp_path, tiny_config(seeds=(1,)))
    replay_out = tmp_path / "replay"
    replay_out.mkdir()
    (replay_out / "summary.json").write_text("{}")
    (replay_out / "jobs.parquet").write_bytes(b"")
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    for out, what in ((replay_out, "a replay's output folder (it holds jobs.parquet)"),
                      (other, "not a sweep's results folder (it holds notes.txt)")):
        assert cli.main(["sweep", str(cfg), "-o", str(out), "-q"]) == 1
        assert capsys.readouterr().err.startswith(f"schedbench: error: {out}: {what}")
        assert not (out / "runs").exists()
    with pytest.raises(DataError, match="not a sweep's results folder"):
        run_sweep(cfg, other)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / ".keep").write_text("")
    assert cli.main(["sweep", str(cfg), "-o", str(empty), "-q"]) == 0
    (empty / "notes.txt").write_text("added after")  # a sweep's folder: resumed, its other files left alone
    assert cli.main(["sweep", str(cfg), "-o", str(empty), "-q"]) == 0
    assert (empty / "notes.txt").read_text() == "added after"
