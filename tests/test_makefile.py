"""``make clean`` deletes numba's compiled kernels and the local generated files, not the
downloaded traces that share the cache folder with the kernels."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from repo_paths import ROOT as REPO

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def test_make_clean_keeps_downloaded_traces(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(REPO / "Makefile", repo / "Makefile")
    # make clean asks the environment's python where the cache is: this one, on this package
    bin_dir = repo / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text(f"#!/bin/sh\nPYTHONPATH={REPO / 'sched'} exec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    for generated in ("bench-results", "bench-report", ".hypothesis", ".pytest_cache", "sched/__pycache__"):
        (repo / generated).mkdir(parents=True)
    (repo / "keep.txt").write_text("source")
    cache = tmp_path / "cache"  # traces and kernels side by side, as by default
    (cache / "numba-0123456789ab" / "x").mkdir(parents=True)
    (cache / "numba-0123456789ab" / "x" / "k.nbi").write_text("kernel")
    (cache / "numba-ba9876543210").mkdir()
    (cache / "KTH-SP2-1996-2.1-cln.swf.gz").write_text("a trace")
    (cache / "notes").mkdir()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "SCHEDBENCH_CACHE": str(cache)}
    proc = subprocess.run(["make", "-C", str(repo), "clean"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in cache.iterdir()) == ["KTH-SP2-1996-2.1-cln.swf.gz", "notes"]
    assert sorted(p.name for p in repo.iterdir()) == ["Makefile", "keep.txt", "sched"]
    assert not (repo / "sched" / "__pycache__").exists()


def test_make_help_says_what_clean_keeps():
    proc = subprocess.run(["make", "-C", str(REPO), "help"], capture_output=True, text=True, timeout=60)
    line = next(x for x in proc.stdout.splitlines() if x.strip().startswith("clean"))
    assert "kernels" in line and "traces" in line


def test_make_setup_compiles_what_the_first_commands_need():
    """make setup ends with the warm-up of make bench's sweep config and of `schedbench
    replay LOG.swf`'s defaults (issue 28: compile once, in parallel, up front)."""
    proc = subprocess.run(["make", "--no-print-directory", "-C", str(REPO), "-n", "-W", "pyproject.toml", "setup"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last.endswith("-m schedbench warm --config bench/default.toml -s easy -a ff --mode pool"), last
    assert "pip install -e" in proc.stdout and "--quiet -e" not in proc.stdout  # pip says what it does
