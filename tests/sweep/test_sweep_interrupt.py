"""Ctrl-C stops a sweep cleanly (issue 31 item 1): the workers are terminated whatever they
do, no traceback, exit 130; the runs that finished are kept and a rerun resumes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import polars as pl
import pytest

from repo_paths import KTH, SHARED_TRACES

HPC2N = SHARED_TRACES / "swf" / "HPC2N-2002-2.2-cln.swf.gz"

CONFIG = f"""schedulers = ["conservative"]
allocators = ["ff"]

[[workloads]]
trace = "{KTH}"
limit = 300

[[workloads]]
trace = "{HPC2N}"
"""


def _assert_no_process_left(pgid: int) -> None:
    """The workers and the fork server are gone with the sweep (within 5 s)."""
    for _ in range(50):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.killpg(pgid, signal.SIGKILL)
    pytest.fail("processes of the sweep outlived it")


def _interrupt(proc, send) -> tuple[str, float]:
    """Send SIGINT with ``send(pid)`` to a running sweep; (its stderr, seconds until it
    stopped).  Whatever happens, nothing of it is left running."""
    try:
        assert proc.poll() is None
        t0 = time.monotonic()
        send(proc.pid)
        _, err = proc.communicate(timeout=60)
        return err, time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


def _assert_stopped_cleanly(proc, err: str, took: float) -> None:
    assert proc.returncode == 130, err
    assert took < 3.0, f"stopped {took:.2f} s after SIGINT"
    assert "Traceback" not in err and err.splitlines()[-1] == "schedbench: interrupted"
    _assert_no_process_left(proc.pid)


@pytest.mark.skipif(not (HPC2N.exists() and KTH.exists()), reason="shared HPC2N and KTH logs not present")
def test_ctrl_c_stops_a_process_pool_sweep_and_keeps_finished_runs(tmp_path):
    cfg, out = tmp_path / "sweep.toml", tmp_path / "results"
    cfg.write_text(CONFIG)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.Popen(
        [sys.executable, "-m", "schedbench", "sweep", str(cfg), "-o", str(out), "--jobs", "2"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 1800  # a cold numba cache compiles first
        while not list(out.glob("runs/*/run.json")):  # the KTH run, while HPC2N's replays (~10 s)
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no run finished in time"
            time.sleep(0.05)
        time.sleep(0.5)
    except BaseException:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        raise
    # as a terminal's Ctrl-C: the parent and its workers
    err, took = _interrupt(proc, lambda pid: os.killpg(pid, signal.SIGINT))
    _assert_stopped_cleanly(proc, err, took)
    assert not (out / ".tmp").exists() or not list((out / ".tmp").iterdir())  # no half-written run
    runs = pl.read_parquet(out / "runs.parquet")
    assert runs.height == 1 and runs["status"].to_list() == ["ok"] and "KTH" in runs["workload"][0]
    listed = subprocess.run([sys.executable, "-m", "schedbench", "sweep", str(cfg), "-o", str(out), "--dry-run"],
                            env=env, capture_output=True, text=True, timeout=120)
    states = sorted(line.split()[1] for line in listed.stdout.splitlines())
    assert listed.returncode == 0 and states == ["ok", "todo"], listed.stdout  # a rerun resumes


@pytest.mark.skipif(not KTH.exists(), reason="shared KTH log not present")
def test_ctrl_c_stops_a_sweep_while_its_workers_compile(tmp_path):
    """The compile phase (the warm-up calls, made before any run): Ctrl-C took 143 s or
    gave a worker traceback and "internal error"."""
    cfg, out = tmp_path / "sweep.toml", tmp_path / "results"
    cfg.write_text(CONFIG.split("[[workloads]]\ntrace = \"" + str(HPC2N))[0])  # the KTH workload only
    cfg.write_text(cfg.read_text().replace('allocators = ["ff"]', 'allocators = ["ff", "bf"]'))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
               NUMBA_CACHE_DIR=str(tmp_path / "numba"))  # an empty cache: the workers compile for minutes
    proc = subprocess.Popen(
        [sys.executable, "-m", "schedbench", "sweep", str(cfg), "-o", str(out), "--jobs", "2"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (out / "sweep.json").exists():  # written just before the workers start
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the sweep did not start"
            time.sleep(0.05)
        time.sleep(3.0)  # the workers are compiling their pair's kernels
    except BaseException:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        raise
    # `kill -INT PID`: the parent alone, which stops its workers
    err, took = _interrupt(proc, lambda pid: os.kill(pid, signal.SIGINT))
    _assert_stopped_cleanly(proc, err, took)
    assert pl.read_parquet(out / "runs.parquet").height == 0
