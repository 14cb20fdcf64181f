"""easy-sjbf (EASY, backfill candidates shortest prediction first): hand-made cases with
known schedules, then the engine against the reference replay (tests/naive.py, R7b) job
by job, on the shared logs and on generated traces, as for ``easy``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
from repo_paths import SWF_LOGS
from schedbench import predictors
from schedbench.engine import replay
from schedbench.io import jobs, machine, swf
from strategies import node_case, node_traces, pool_traces

STATUS = {s.value: s.name.lower() for s in replay.Status}


def _table(rows):
    """A job table of (submit, run, estimate, size) rows, ids 1..n."""
    return jobs.from_columns(
        job_id=np.arange(1, len(rows) + 1), submit=[r[0] for r in rows], run=[r[1] for r in rows],
        estimate=[r[2] for r in rows], units=[r[3] for r in rows],
    )


def _starts(nv) -> np.ndarray:
    return np.array([-1 if s is None else s for s in nv.start], dtype=np.int64)


# Four processors.  Job 1 holds three until 100; job 2 wants all four (the head, shadow
# time 100); jobs 3 (pred 50) and 4 (pred 10) arrive together and either fits the one
# free processor before the shadow time.
ORDER_CASE = [(0, 100, 100, 3), (0, 10, 10, 4), (1, 50, 50, 1), (1, 10, 10, 1)]


@pytest.mark.parametrize("spec", ["1x(cores=4)", "4x(cores=1)"])
def test_shortest_candidate_goes_first(spec):
    table = _table(ORDER_CASE)
    easy = replay.replay(table, machine.from_spec(spec), "easy", "ff")
    sjbf = replay.replay(table, machine.from_spec(spec), "easy-sjbf", "ff")
    np.testing.assert_array_equal(easy.start, [0, 100, 1, 51])  # queue order: job 3, then 4
    np.testing.assert_array_equal(sjbf.start, [0, 100, 11, 1])  # job 4 (10 s) first, then 3


def test_equal_predictions_keep_queue_order():
    rows = [(0, 100, 100, 3), (0, 10, 10, 4), (1, 30, 30, 1), (1, 30, 30, 1)]
    r = replay.replay(_table(rows), machine.from_spec("1x(cores=4)"), "easy-sjbf", "ff")
    np.testing.assert_array_equal(r.start, [0, 100, 1, 31])


def test_head_reservation_as_easy():
    # Job 3 (pred 200) would end past the shadow time 100 and takes the only extra
    # processor; job 4 (pred 150) is shorter, so SJBF backfills it first and job 3 must
    # then wait: no extra processor is left for it.
    rows = [(0, 100, 100, 2), (0, 10, 10, 3), (1, 200, 200, 1), (1, 150, 150, 1)]
    table = _table(rows)
    mach = machine.from_spec("1x(cores=4)")
    np.testing.assert_array_equal(replay.replay(table, mach, "easy", "ff").start, [0, 100, 1, 110])
    np.testing.assert_array_equal(replay.replay(table, mach, "easy-sjbf", "ff").start, [0, 100, 110, 1])


# --------------------------------------------------------------------------- the oracle


@pytest.fixture(scope="module", params=SWF_LOGS, ids=lambda p: p.name.split("-cln")[0])
def first_3k(request):
    table, header = swf.read(request.param)
    table = table.head(3_000)
    return table, machine.from_swf_header(header.max_procs, header.max_nodes, int(table.units.max()))


@pytest.mark.skipif(not SWF_LOGS, reason="../shared/traces/swf not present")
@pytest.mark.parametrize("predictor", ["requested", "actual"])
def test_engine_equals_oracle_on_shared_logs(first_3k, predictor):
    table, mach = first_3k
    pred = table.run if predictor == "actual" else np.where(table.estimate > 0, table.estimate, table.run)
    nv = naive.replay_pool(table.job_id, table.submit, table.run, table.units, pred, int(mach.totals[0]),
                           "easy-sjbf")
    expected = _starts(nv)
    for allocator in ("ff", "bf"):
        r = replay.replay(table, mach, "easy-sjbf", allocator, predictor)
        bad = np.flatnonzero(r.start != expected)
        assert bad.size == 0, (
            f"{predictor}+{allocator}: {bad.size} starts differ, first job id {table.job_id[bad[0]]}: "
            f"engine {r.start[bad[0]]}, oracle {expected[bad[0]]}"
        )
        assert [STATUS[s] for s in r.status] == nv.status


@settings(max_examples=200)
@given(pool_traces(), st.sampled_from(["requested", "actual"]))
def test_engine_equals_oracle_on_generated_pools(trace, predictor):
    table, procs = trace
    pred = table.run if predictor == "actual" else np.where(table.estimate > 0, table.estimate, table.run)
    nv = naive.replay_pool(table.job_id, table.submit, table.run, table.units, pred, procs, "easy-sjbf")
    expected = _starts(nv)
    for spec in (f"1x(cores={procs})", f"{procs}x(cores=1)"):
        for allocator in ("ff", "bf"):
            r = replay.replay(table, machine.from_spec(spec), "easy-sjbf", allocator, predictor)
            np.testing.assert_array_equal(r.start, expected, err_msg=f"{spec} {allocator}")
            assert [STATUS[s] for s in r.status] == nv.status


@settings(max_examples=200)
@given(node_traces(zero_runs=True), st.sampled_from(["ff", "bf"]))
def test_engine_equals_oracle_on_generated_nodes(trace, allocator):
    nodes, rows = trace
    table, mach = node_case(nodes, rows)
    nv = naive.replay_nodes(
        [
            dict(job_id=i + 1, submit=r[0], run=r[1], pred=r[2], units=r[3], unit=r[4], req_nodes=r[5])
            for i, r in enumerate(rows)
        ],
        nodes, "easy-sjbf", allocator,
    )
    r = replay.replay(table, mach, "easy-sjbf", allocator)
    np.testing.assert_array_equal(r.start, _starts(nv))
    assert [STATUS[s] for s in r.status] == nv.status
    used = [0 if a is None else len(a) for a in nv.alloc]
    np.testing.assert_array_equal(np.where(r.start >= 0, r.nodes_used, 0), used)


# --------------------------------------------------------------------------- with correction


# C1 (tsafrir) and C1b (tsafrir-steps, with its raises)
CORRECTIONS = {"tsafrir": (), "tsafrir-steps": tuple(int(s) for s in predictors.CORRECTION_STEPS)}


def _oracle_with_correction(table, procs, scheduler, allocator, spec=None, predictor="tsafrir"):
    """The engine with ``predictor`` against naive C1 (C1b), fed the engine's
    submission-time predictions and the predictor's corrected durations (its caps)."""
    mach = machine.from_spec(spec) if spec else machine.from_spec(f"1x(cores={procs})")
    r = replay.replay(table, mach, scheduler, allocator, predictor)
    cap = predictors.tsafrir(table).keys[:, 3]
    nv = naive.replay_pool(table.job_id, table.submit, table.run, table.units, r.pred, procs, scheduler,
                           revised=cap, steps=CORRECTIONS[predictor])
    return r, nv


@pytest.mark.skipif(not SWF_LOGS, reason="../shared/traces/swf not present")
@pytest.mark.parametrize("scheduler", ["easy", "easy-sjbf"])
@pytest.mark.parametrize("predictor", list(CORRECTIONS))
def test_correction_equals_oracle_on_shared_logs(first_3k, scheduler, predictor):
    table, mach = first_3k
    r = replay.replay(table, mach, scheduler, "ff", predictor)
    nv = naive.replay_pool(table.job_id, table.submit, table.run, table.units, r.pred, int(mach.totals[0]),
                           scheduler, revised=predictors.tsafrir(table).keys[:, 3], steps=CORRECTIONS[predictor])
    expected = _starts(nv)
    bad = np.flatnonzero(r.start != expected)
    assert bad.size == 0, (
        f"{bad.size} starts differ, first job id {table.job_id[bad[0]]}: engine {r.start[bad[0]]}, "
        f"oracle {expected[bad[0]]}"
    )


@settings(max_examples=200)
@given(pool_traces(), st.lists(st.integers(-1, 2), min_size=40, max_size=40), st.sampled_from(["easy", "easy-sjbf"]),
       st.sampled_from(list(CORRECTIONS)))
def test_correction_equals_oracle_on_generated_pools(trace, users, scheduler, predictor):
    base, procs = trace
    n = base.n_jobs
    # tsafrir-steps raises by 60 s and more: minutes rather than seconds, so that its
    # steps fall inside the jobs' runs
    k = 60 if predictor == "tsafrir-steps" else 1
    table = jobs.from_columns(
        job_id=base.job_id, submit=base.submit * k, run=np.where(base.run > 0, base.run * k, base.run),
        procs_req=base.units, procs_alloc=base.units,
        time_req=np.where(base.time_req > 0, base.time_req * k, base.time_req), user=np.array(users[:n]),
    )
    for spec in (f"1x(cores={procs})", f"{procs}x(cores=1)"):
        r, nv = _oracle_with_correction(table, procs, scheduler, "ff", spec, predictor)
        np.testing.assert_array_equal(r.start, _starts(nv), err_msg=spec)
