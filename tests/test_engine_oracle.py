"""The jitted engine against the spec's reference replay (tests/naive.py), job by job."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
from schedbench.engine import replay
from schedbench.io import jobs, machine, swf

SHARED = Path(__file__).resolve().parents[2] / "shared"
LOGS = sorted((SHARED / "traces" / "swf").glob("*.swf.gz")) if SHARED.exists() else []
STATUS = {s.value: s.name.lower() for s in replay.Status}


def _starts(nv) -> np.ndarray:
    return np.array([-1 if s is None else s for s in nv.start], dtype=np.int64)


def _pred(table, predictor):
    if predictor == "actual":
        return table.run
    return np.where(table.estimate > 0, table.estimate, table.run)


@pytest.fixture(scope="module", params=LOGS, ids=lambda p: p.name.split("-cln")[0])
def first_20k(request):
    table, header = swf.read(request.param)
    table = table.head(20_000)
    return table, machine.from_swf_header(header.max_procs, header.max_nodes, int(table.units.max()))


@pytest.mark.skipif(not LOGS, reason="../shared/traces/swf not present")
@pytest.mark.parametrize("scheduler", ["fcfs", "sjf", "easy"])
def test_engine_equals_oracle_on_shared_logs(first_20k, scheduler):
    table, mach = first_20k
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
def test_engine_equals_oracle_with_actual_runtimes(first_20k):
    table, mach = first_20k
    nv = naive.replay_pool(
        table.job_id, table.submit, table.run, table.units, _pred(table, "actual"),
        int(mach.totals[0]), "easy",
    )
    r = replay.replay(table, mach, "easy", "ff", predictor="actual")
    np.testing.assert_array_equal(r.start, _starts(nv))


# --------------------------------------------------------------------------- generated


@st.composite
def pool_traces(draw):
    procs = draw(st.integers(1, 12))
    n = draw(st.integers(1, 40))
    submit = np.sort(np.array(draw(st.lists(st.integers(0, 60), min_size=n, max_size=n))))
    run = np.array(draw(st.lists(st.integers(-1, 30) | st.just(0), min_size=n, max_size=n)))
    size = np.array(draw(st.lists(st.integers(-1, procs + 2), min_size=n, max_size=n)))
    est = np.array(draw(st.lists(st.integers(-1, 40), min_size=n, max_size=n)))
    ids = np.array(draw(st.permutations(range(1, n + 1))))
    order = np.lexsort((ids, submit))
    table = jobs.from_columns(
        job_id=ids[order], submit=submit[order], run=run[order], procs_req=size[order],
        procs_alloc=size[order], time_req=est[order],
    )
    return table, procs


@settings(max_examples=300)
@given(pool_traces(), st.sampled_from(["fcfs", "sjf", "easy"]), st.sampled_from(["requested", "actual"]))
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


@st.composite
def node_traces(draw):
    m = draw(st.integers(1, 5))
    nodes = [
        (draw(st.integers(1, 8)), draw(st.integers(0, 2)), draw(st.integers(0, 2)), draw(st.sampled_from([0, 16, 32])))
        for _ in range(m)
    ]
    n = draw(st.integers(1, 25))
    rows = []
    for _ in range(n):
        unit = (draw(st.integers(0, 3)), draw(st.integers(0, 1)), draw(st.integers(0, 1)), draw(st.sampled_from([0, 0, 8])))
        if sum(unit[:3]) == 0:
            unit = (1, unit[1], unit[2], unit[3])
        units = draw(st.integers(0, 6))
        req_nodes = -1
        if units > 0 and draw(st.booleans()):
            req_nodes = draw(st.sampled_from([d for d in range(1, units + 1) if units % d == 0]))
        rows.append((draw(st.integers(0, 40)), draw(st.integers(-1, 25)), draw(st.integers(1, 30)), units, unit, req_nodes))
    rows.sort(key=lambda r: r[0])
    return nodes, rows


@settings(max_examples=300)
@given(node_traces(), st.sampled_from(["fcfs", "sjf", "easy"]), st.sampled_from(["ff", "bf"]))
def test_engine_equals_oracle_on_generated_nodes(trace, scheduler, allocator):
    nodes, rows = trace
    n = len(rows)
    table = jobs.from_columns(
        job_id=np.arange(1, n + 1),
        submit=[r[0] for r in rows],
        run=[r[1] for r in rows],
        estimate=[r[2] for r in rows],
        units=[r[3] for r in rows],
        unit_cores=[r[4][0] for r in rows],
        unit_gpus=[r[4][1] for r in rows],
        unit_mics=[r[4][2] for r in rows],
        unit_mem=[r[4][3] for r in rows],
        req_nodes=[r[5] for r in rows],
    )
    cap = np.array(nodes, dtype=np.int64)
    mach = machine.Machine(cap, machine.spec_of(cap))
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
