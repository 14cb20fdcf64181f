"""``slurm`` with job dependencies (``--dependencies on``): a job whose predecessor has not
ended (plus its think time) is pending, out of reach of the main loop and of backfill, and
its age counts from the instant it became eligible; hand-made cases with known starts, then
the engine against tests/naive_slurm.py on generated traces with chains (hypothesis, on a
pool of cores and on small heterogeneous machines)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import naive_slurm as ns
from schedbench.engine import replay
from schedbench.io import jobs, machine
from strategies import node_case, node_traces, pool_traces

POOL4 = machine.from_spec("4x(cores=1)")
STATUS = {s.value: s.name.lower() for s in replay.Status}


def _table(submit, run, procs, preceding, think, time_req=None):
    n = len(submit)
    return jobs.from_columns(job_id=np.arange(1, n + 1), submit=np.array(submit), run=np.array(run),
                             procs_req=np.array(procs), time_req=np.array(time_req or run),
                             preceding_job=np.array(preceding), think_time=np.array(think))


@pytest.mark.parametrize(("weight_age", "dependencies", "starts"), [
    (1000.0, "off", [0, 0, 100, 110]),  # D arrives at 1, C at 5: D is older
    (1000.0, "on", [0, 0, 110, 100]),  # D is eligible at 10 only: C (age 95) beats D (age 90)
    (0.0, "on", [0, 0, 100, 110]),  # equal priorities: the logged (submit, id) order, D first
])
def test_age_counts_from_the_eligible_time(weight_age, dependencies, starts):
    # P (1 core, 0-10) and X (3 cores, 0-100) fill the machine; D (4 cores, logged at 1)
    # waits for P, think 0; C (4 cores) arrives at 5.  At 100 D and C compete.
    table = _table([0, 0, 1, 5], [10, 100, 10, 10], [1, 3, 4, 4], [-1, -1, 1, -1], [-1, -1, 0, -1])
    r = replay.replay(table, POOL4, "slurm", dependencies=dependencies,
                      options={"weight_age": weight_age, "calc_period": 1})
    assert r.start.tolist() == starts


@pytest.mark.parametrize(("dependencies", "starts"), [("off", [0, 0, 100]), ("on", [0, 100, 110])])
def test_a_job_pending_on_its_dependency_is_not_backfilled(dependencies, starts):
    # P holds 2 of 4 cores 0-100; Q (2 cores, 10 s) would fit beside it at once, but waits
    # for P; R (4 cores) comes behind Q in the logged order, so at 100 Q goes first
    table = _table([0, 0, 0], [100, 10, 10], [2, 2, 4], [-1, 1, -1], [-1, 0, -1])
    r = replay.replay(table, POOL4, "slurm", dependencies=dependencies, options={"bf_interval": 0})
    assert r.start.tolist() == starts
    if dependencies == "on":
        assert r.eligible.tolist() == [0, 100, 0]


def test_a_chain_released_by_zero_length_jobs_starts_at_once():
    # 1 (run 0) releases 2 (run 0, think 0), which releases 3: all start at 5
    table = _table([5, 5, 5], [0, 0, 7], [4, 4, 4], [-1, 1, 2], [0, 0, 0])
    r = replay.replay(table, POOL4, "slurm", dependencies="on")
    assert r.start.tolist() == [5, 5, 5] and r.eligible.tolist() == [5, 5, 5]


# --------------------------------------------------------------------------- against the oracle

PARAMS = st.fixed_dictionaries({
    "weight_age": st.sampled_from([0.0, 1000.0]),
    "weight_jobsize": st.sampled_from([0.0, 500.0]),
    "weight_fairshare": st.sampled_from([0.0, 2000.0]),
    "max_age": st.sampled_from([20, 604800]),
    "calc_period": st.sampled_from([5, 300]),
    "default_queue_depth": st.sampled_from([2, 100]),
    "bf_interval": st.sampled_from([-1, 0, 7]),
    "bf_max_job_test": st.sampled_from([1, 500]),
    "bf_resolution": st.sampled_from([1, 4]),
    "bf_max_job_user": st.sampled_from([0, 1]),
})


@st.composite
def chains(draw, n):
    """SWF fields 17 and 18 of ``n`` jobs with ids 1..n in (submit, id) order: mostly
    links to the job just before (linear chains), some to any earlier job, to the job
    itself, to a later one or to an absent id; think times -1 (unknown), 0 or more."""
    preceding, think = [], []
    for i in range(n):
        kind = draw(st.sampled_from(["none", "previous", "previous", "earlier", "bad"]))
        if kind == "previous" and i > 0:
            preceding.append(i)  # job i's id is i + 1: the job just before
        elif kind == "earlier" and i > 0:
            preceding.append(draw(st.integers(1, i)))
        elif kind == "bad":
            preceding.append(draw(st.sampled_from([i + 1, i + 2, n + 5])))
        else:
            preceding.append(-1)
        think.append(draw(st.sampled_from([-1, 0, 0, 3, 20])))
    return np.array(preceding, dtype=np.int64), np.array(think, dtype=np.int64)


def _check(table, mach, params):
    est = np.where(table.estimate > 0, table.estimate, table.run)
    js = [
        ns.Job(submit=int(table.submit[i]), run=int(table.run[i]), est=int(est[i]), units=int(table.units[i]),
               req=(max(int(table.unit_cores[i]), 0), max(int(table.unit_gpus[i]), 0), max(int(table.unit_mics[i]), 0),
                    max(int(table.unit_mem[i]), 0)),
               req_nodes=int(table.req_nodes[i]) if table.req_nodes[i] > 0 else -1,
               user=int(table.user[i]), account=int(table.group[i]), job_id=int(table.job_id[i]),
               preceding=int(table.preceding_job[i]), think=int(table.think_time[i]))
        for i in range(table.n_jobs)
    ]
    ns.replay(js, [tuple(int(v) for v in c) for c in mach.capacity], dependencies=True, **params)
    r = replay.replay(table, mach, "slurm", "ff", options={**params, "dependencies": "on"})
    expected = np.array([-1 if j.start is None else j.start for j in js], dtype=np.int64)
    got = np.where(r.status == replay.Status.REPLAYED, r.start, -1)
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, f"{params}: job {bad[0]}: engine {got[bad[0]]}, oracle {expected[bad[0]]} ({bad.size} differ)"
    not_run = [STATUS[s] == "predecessor_not_run" for s in r.status]
    assert not_run == [j.status == "predecessor_not_run" for j in js]
    eligible = [-1 if j.eligible is None or j.status != "replayed" else j.eligible for j in js]
    assert np.where(got >= 0, r.eligible, -1).tolist() == np.where(got >= 0, eligible, -1).tolist()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=pool_traces(max_procs=8, max_jobs=20, max_submit=40, groups=True), params=PARAMS, data=st.data())
def test_slurm_equals_oracle_with_chains_on_a_pool(case, params, data):
    table, procs = case
    table.preceding_job[:], table.think_time[:] = data.draw(chains(table.n_jobs))
    _check(table, machine.from_spec(f"1x(cores={procs})"), params)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=node_traces(zero_runs=True), params=PARAMS, data=st.data())
def test_slurm_equals_oracle_with_chains_on_nodes(case, params, data):
    table, mach = node_case(*case)
    table.preceding_job[:], table.think_time[:] = data.draw(chains(table.n_jobs))
    _check(table, mach, params)
