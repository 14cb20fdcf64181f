"""The jitted engine against the spec's reference replay (tests/naive.py), job by job: fcfs, sjf,
easy and ebf-accasim (easy-sjbf has its own, with prediction correction).

The shared logs run their first ``SCHEDBENCH_ORACLE_JOBS`` jobs (default 3,000, as the other
oracle files: at 20,000 these 20 comparisons were most of a warm ``make test``, 25-120 s
each); ``make test-oracle-full`` runs 20,000.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
from repo_paths import SWF_LOGS
from schedbench.analysis import results
from schedbench.engine import replay
from schedbench.io import machine, swf
from strategies import node_case, node_traces, pool_traces

LOGS = SWF_LOGS
N_JOBS = int(os.environ.get("SCHEDBENCH_ORACLE_JOBS", "3000"))
STATUS = {s.value: s.name.lower() for s in replay.Status}


def _starts(nv) -> np.ndarray:
    return np.array([-1 if s is None else s for s in nv.start], dtype=np.int64)


def _pred(table, predictor):
    if predictor == "actual":
        return table.run
    return np.where(table.estimate > 0, table.estimate, table.run)


@pytest.fixture(scope="module", params=LOGS, ids=lambda p: p.name.split("-cln")[0])
def first_jobs(request):
    table, header = swf.read(request.param)
    table = table.head(N_JOBS)
    return table, machine.from_swf_header(header.max_procs, header.max_nodes, int(table.units.max()))


@pytest.mark.skipif(not LOGS, reason="../shared/traces/swf not present")
@pytest.mark.parametrize("scheduler", ["fcfs", "sjf", "easy", "ebf-accasim"])
def test_engine_equals_oracle_on_shared_logs(first_jobs, scheduler):
    table, mach = first_jobs
    nv = naive.replay_pool(
        table.job_id, table.submit, table.run, table.units, _pred(table, "requested"),
        int(mach.totals[0]), scheduler,
    )
    expected = _starts(nv)
    for allocator in ("ff", "bf"):
        r = replay.replay(table, mach, scheduler, allocator)
        bad = np.flatnonzero(r.start != expected)
        assert bad.size == 0, (
            f"{scheduler}+{allocator}: {bad.size} starts differ, first job id "
            f"{table.job_id[bad[0]]}: engine {r.start[bad[0]]}, oracle {expected[bad[0]]}"
        )
        assert [STATUS[s] for s in r.status] == nv.status


@pytest.mark.skipif(not LOGS, reason="../shared/traces/swf not present")
def test_engine_equals_oracle_with_actual_runtimes(first_jobs):
    table, mach = first_jobs
    nv = naive.replay_pool(
        table.job_id, table.submit, table.run, table.units, _pred(table, "actual"),
        int(mach.totals[0]), "easy",
    )
    r = replay.replay(table, mach, "easy", "ff", predictor="actual")
    np.testing.assert_array_equal(r.start, _starts(nv))


# --------------------------------------------------------------------------- generated


@settings(max_examples=300)
@given(pool_traces(), st.sampled_from(["fcfs", "sjf", "easy", "ebf-accasim"]), st.sampled_from(["requested", "actual"]))
def test_engine_equals_oracle_on_generated_pools(trace, scheduler, predictor):
    table, procs = trace
    nv = naive.replay_pool(
        table.job_id, table.submit, table.run, table.units, _pred(table, predictor), procs, scheduler
    )
    expected = _starts(nv)
    for spec in (f"1x(cores={procs})", f"{procs}x(cores=1)"):
        for allocator in ("ff", "bf"):
            r = replay.replay(table, machine.from_spec(spec), scheduler, allocator, predictor)
            np.testing.assert_array_equal(r.start, expected, err_msg=f"{spec} {allocator}")
            assert [STATUS[s] for s in r.status] == nv.status


@settings(max_examples=300)
@given(node_traces(), st.sampled_from(["fcfs", "sjf", "easy", "ebf-accasim"]), st.sampled_from(["ff", "bf"]))
def test_engine_equals_oracle_on_generated_nodes(trace, scheduler, allocator):
    nodes, rows = trace
    table, mach = node_case(nodes, rows)
    nv = naive.replay_nodes(
        [
            dict(job_id=i + 1, submit=r[0], run=r[1], pred=r[2], units=r[3], unit=r[4], req_nodes=r[5])
            for i, r in enumerate(rows)
        ],
        nodes, scheduler, allocator,
    )
    r = replay.replay(table, mach, scheduler, allocator)
    np.testing.assert_array_equal(r.start, _starts(nv))
    assert [STATUS[s] for s in r.status] == nv.status
    used = [0 if a is None else len(a) for a in nv.alloc]
    np.testing.assert_array_equal(np.where(r.start >= 0, r.nodes_used, 0), used)
    placed = naive.placements(results.allocations_frame(r))
    assert [placed.get(i + 1, []) for i in range(len(rows))] == [sorted(a or []) for a in nv.alloc]
