"""``slurm`` == tests/naive_slurm.py job by job on generated traces, on a pool of cores
and on small heterogeneous machines (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import naive_slurm as ns
from schedbench.engine import replay
from schedbench.io import machine
from strategies import node_case, node_traces, pool_traces

PARAMS = st.fixed_dictionaries({
    "weight_age": st.sampled_from([0.0, 1000.0]),
    "weight_jobsize": st.sampled_from([0.0, 500.0]),
    "weight_fairshare": st.sampled_from([0.0, 2000.0]),
    "favor_small": st.booleans(),
    "max_age": st.sampled_from([20, 604800]),
    "calc_period": st.sampled_from([5, 300]),
    "decay_half_life": st.sampled_from([30, 604800]),
    "default_queue_depth": st.sampled_from([2, 100]),
    "bf_interval": st.sampled_from([0, 7, 30]),
    "bf_max_job_test": st.sampled_from([1, 3, 500]),
    "bf_window": st.sampled_from([10, 86400]),
    "bf_resolution": st.sampled_from([1, 4, 60]),
    "bf_max_job_user": st.sampled_from([0, 1]),
})


def _check(table, mach, params):
    est = np.where(table.estimate > 0, table.estimate, table.run)
    cap = mach.capacity
    jobs = [
        ns.Job(submit=int(table.submit[i]), run=int(table.run[i]), est=int(est[i]), units=int(table.units[i]),
               req=(max(int(table.unit_cores[i]), 0), max(int(table.unit_gpus[i]), 0), max(int(table.unit_mics[i]), 0),
                    max(int(table.unit_mem[i]), 0)),
               req_nodes=int(table.req_nodes[i]) if table.req_nodes[i] > 0 else -1,
               user=int(table.user[i]), account=int(table.group[i]))
        for i in range(table.n_jobs)
    ]
    ns.replay(jobs, [tuple(int(v) for v in c) for c in cap], **params)
    r = replay.replay(table, mach, "slurm", "ff", options=params)
    expected = np.array([-1 if j.start is None else j.start for j in jobs], dtype=np.int64)
    got = np.where(r.status == replay.Status.REPLAYED, r.start, -1)
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, f"{params}: job {bad[0]}: engine {got[bad[0]]}, oracle {expected[bad[0]]} ({bad.size} differ)"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=pool_traces(max_procs=8, max_jobs=25, groups=True), params=PARAMS)
def test_slurm_equals_oracle_on_a_pool(case, params):
    table, procs = case
    _check(table, machine.from_spec(f"1x(cores={procs})"), params)
    _check(table, machine.from_spec(f"{procs}x(cores=1)"), params)  # the aggregate plan of one-core nodes


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=node_traces(), params=PARAMS)
def test_slurm_equals_oracle_on_nodes(case, params):
    nodes, rows = case
    table, mach = node_case(nodes, rows)
    _check(table, mach, params)
