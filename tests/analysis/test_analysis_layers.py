"""Reading, summarising and reporting results stays above the engine: analysis/ and the
sweep config load no numba and no engine module, and the numpy code that replaced the
allocation-shape kernel agrees with a plain reference."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from schedbench import schema
from schedbench.analysis.results import _allocation_blocks
from schedbench.engine import prepare
from schedbench.io import machine
from schedbench.sweep import config as sweep_config

ABOVE_THE_ENGINE = (
    "schedbench.analysis.results", "schedbench.analysis.metrics", "schedbench.analysis.views",
    "schedbench.analysis.report", "schedbench.sweep.config", "schedbench.schema",
)
# the policy families' packages themselves hold only their numba-free declarations (the registry
# reads them); their modules are what must not load
BELOW = ("schedbench.core", "schedbench.engine", "schedbench.schedulers.", "schedbench.allocators.",
         "schedbench.policies.", "schedbench.predictors", "schedbench._jit")


def test_analysis_and_the_sweep_config_load_no_numba_and_no_engine():
    # a fresh interpreter: this one has imported the engine already
    code = (
        "import importlib, json, sys\n"
        f"for m in {ABOVE_THE_ENGINE!r}: importlib.import_module(m)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'numba' or m.startswith('numba.')"
        f" or m.startswith({BELOW!r}))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p)))
    assert json.loads(out.stdout) == []


def test_the_engine_hands_back_the_schema_names():
    assert prepare.Status is schema.Status and prepare.STATUS_NAMES is schema.STATUS_NAMES
    assert prepare.ReplayResult is schema.ReplayResult
    assert schema.RESOURCE_NAMES is machine.RESOURCE_NAMES
    assert schema.STATUS_NAMES[schema.Status.REJECTED_BY_LIMIT] == "rejected_by_limit"


def test_pairs_are_every_listed_pair_but_the_excluded_in_grid_order():
    got = sweep_config.pairs(["easy", "fcfs"], ["ff", "bf", "balanced"], {("easy", "bf"), ("fcfs", "ff")})
    assert got == [("easy", "ff"), ("easy", "balanced"), ("fcfs", "bf"), ("fcfs", "balanced")]


def _blocks_by_sets(log, ptr, count):
    """The reference: each job's set of nodes, its blocks of consecutive indices counted one by one."""
    out = []
    for p, k in zip(ptr, count, strict=True):
        nodes = sorted({int(x) for x in log[p : p + k, 0]})
        if not nodes:
            out.append((0, -1, -1))
            continue
        blocks = 1 + sum(b - a > 1 for a, b in zip(nodes, nodes[1:], strict=False))
        out.append((blocks, nodes[0], nodes[-1]))
    return out


@pytest.mark.parametrize("ascending", [True, False])
def test_allocation_blocks_match_a_reference(ascending):
    rng = np.random.default_rng(7 if ascending else 8)
    for _ in range(300):
        m = int(rng.integers(1, 30))
        count = rng.integers(0, 7, int(rng.integers(0, 25))).astype(np.int64)
        # rows between jobs that belong to none (a gap row after a job sends it to the sorting path)
        gaps = np.zeros(count.size, dtype=np.int64) if ascending else rng.integers(0, 3, count.size)
        ptr = np.concatenate(([0], np.cumsum(count + gaps)[:-1])).astype(np.int64) if count.size else count
        log = np.zeros((int((count + gaps).sum()) + 1, 2), dtype=np.int32)
        log[:, 0] = rng.integers(0, m, log.shape[0])  # repeated nodes within a job included
        if ascending:  # what the built-in allocators write: the fast path
            for p, k in zip(ptr, count, strict=True):
                log[p : p + k, 0] = np.sort(rng.choice(m, size=min(int(k), m), replace=False).tolist()
                                            + [0] * max(0, int(k) - m))
        fragments, first, last = _allocation_blocks(log, ptr, count, m)
        assert list(zip(fragments.tolist(), first.tolist(), last.tolist(), strict=True)) == _blocks_by_sets(log, ptr, count)
