"""AUCSCHED's spread bids (issue 29): the paper's Figure 4/5 example and its Table 1
example under each bid set, the span bids against tests/naive_aucsched.py, and the
auction's optimum against a brute force on tiny windows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import naive_aucsched as naive
from schedbench.engine.replay import replay
from schedbench.engine.simulation import Simulation
from schedbench.io import jobs as jobs_mod
from schedbench.io.jobs import core_gpu_table
from schedbench.io.machine import from_spec
from schedbench.plan import site
from schedbench.policies import aucsched_bids
from schedbench.policies.window import host_matrix


def figure4():
    """§4.2's four jobs, submitted together for 1000 s: J1 -n 512; J2 64 nodes x (2 cores,
    1 GPU); J3 64 x (4 cores, 2 GPUs); J4 128 x 1 core."""
    return core_gpu_table(submit=[0] * 4, run=[1000] * 4, units=[512, 64, 64, 128], unit_cores=[1, 2, 4, 1],
                          unit_gpus=[0, 1, 2, 0], req_nodes=[-1, 64, 64, 128], executable=[1, 2, 3, 4])


FIG4_MACHINE = "144x(cores=8,gpus=2)"
FIG4_BUSY = site.parse('[[maintenance]]\nnodes = "64-79"\nfrom = 0\nto = 100000\n')  # nodes 65-80


def _loads(r, j):
    """{node: units} of job j's allocation."""
    rows = r.alloc_log[r.alloc_ptr[j] : r.alloc_ptr[j] + r.nodes_used[j]]
    return dict(zip(rows[:, 0].tolist(), rows[:, 1].tolist(), strict=True))


@pytest.mark.parametrize("slurm", [True, False])
def test_figure4_span_bids_start_all_four_jobs_as_figure5(slurm):
    r = replay(figure4(), from_spec(FIG4_MACHINE), "aucsched", "bf", site=FIG4_BUSY, slurm_bids=slurm,
               spread_bids="span")
    assert r.start.tolist() == [0, 0, 0, 0]
    assert r.end.max() == 1000
    assert r.policy["spread_bids"] == "span" and r.policy["bids_won"]["span"] == 1
    left, right = set(range(64)), set(range(80, 144))
    j1, j2, j3, j4 = (_loads(r, j) for j in range(4))
    assert set(j1) == left | right  # nodes 1-64 and 81-144, never the busy 65-80
    assert set(j4) == left | right and set(j4.values()) == {1}
    # J2 and J3 take one nodeset each (the paper: J2 on 1-64, J3 on 81-144; the two
    # assignments tie) and J1 fills what is left: 8 - 2 - 1 = 5 cores beside J2, 8 - 4 - 1 = 3 beside J3
    assert {frozenset(j2), frozenset(j3)} == {frozenset(left), frozenset(right)}
    assert set(j2.values()) == {1} and set(j3.values()) == {1}
    assert all(j1[n] == 5 for n in j2) and all(j1[n] == 3 for n in j3)
    assert sum(j1.values()) == 512


@pytest.mark.parametrize("spread", ["none", "nodeset"])
@pytest.mark.parametrize("slurm", [True, False])
def test_figure4_paper_and_nodeset_bids_make_j3_and_j4_wait(spread, slurm):
    # J1's bids take 64 whole nodes (A) or, with nodeset bids, a whole nodeset it fills:
    # either way no room is left beside it for J3's GPUs or J4's cores
    r = replay(figure4(), from_spec(FIG4_MACHINE), "aucsched", "bf", site=FIG4_BUSY, slurm_bids=slurm,
               spread_bids=spread)
    assert r.start.tolist() == [0, 0, 1000, 1000]
    assert r.policy["bids_won"]["span"] == 0


def table1():
    """The PRACE paper's Table 1: J1 -n 4096; J2, J3 -N 512 --gres=gpu:2 -n 2048; 1000 s."""
    return core_gpu_table(submit=[0, 0, 0], run=[1000] * 3, units=[4096, 512, 512], unit_cores=[1, 4, 4],
                          unit_gpus=[0, 2, 2], req_nodes=[-1, 512, 512], executable=[1, 2, 2])


@pytest.mark.parametrize("spread,starts,won", [("span", [0, 0, 0], "span"), ("nodeset", [0, 0, 0], "spread"),
                                               ("none", [0, 0, 1000], None)])
def test_table1_under_each_bid_set(spread, starts, won):
    r = replay(table1(), from_spec("1024x(cores=8,gpus=2)"), "aucsched", "bf", spread_bids=spread)
    assert r.start.tolist() == starts
    if won:
        assert r.policy["bids_won"][won] == 1
        assert set(_loads(r, 0).values()) == {4}  # 4 cores of every node beside J2's or J3's


def test_spread_bids_default_is_the_papers_bids_and_the_option_takes_the_old_boolean():
    r = replay(figure4(), from_spec(FIG4_MACHINE), "aucsched", "bf", site=FIG4_BUSY)
    assert r.policy["spread_bids"] == "none" and r.start.tolist() == [0, 0, 1000, 1000]
    r = replay(table1(), from_spec("1024x(cores=8,gpus=2)"), "aucsched", "bf", spread_bids=True)
    assert r.policy["spread_bids"] == "nodeset" and r.start.tolist() == [0, 0, 0]
    from schedbench.errors import UsageError

    with pytest.raises(UsageError, match="spread_bids='wide'"):
        replay(table1(), from_spec("1024x(cores=8,gpus=2)"), "aucsched", "bf", spread_bids="wide")


# --------------------------------------------------------------------------- the span bids


def _kernel_bids(free, rows, max_bids, slurm, spread):
    units, req, req_nodes = (np.array([r[i] for r in rows], dtype=np.int64) for i in range(3))
    # the types the policy passes (a bool contiguity flag, a read-only view of the free
    # amounts): other types would compile the bid kernel a second time, for these tests alone
    contiguous = np.array([r[3] for r in rows], dtype=bool)
    free = free.view()
    free.flags.writeable = False
    host = np.minimum(host_matrix(free, req), units[:, None])
    need = np.where(req_nodes > 0, units // np.maximum(req_nodes, 1), 1)
    host[host < need[:, None]] = 0
    table = jobs_mod.from_columns(submit=np.zeros(1, dtype=np.int64), run=np.ones(1, dtype=np.int64),
                                  procs_req=np.ones(1, dtype=np.int64))
    sim = Simulation(table, from_spec(f"{free.shape[0]}x(cores=64,gpus=8)"), allocator="bf")
    bid_job, kind, sets, ptr, node = aucsched_bids.Bids(free.shape[0]).generate(
        host, units, req, req_nodes, contiguous, free, sim.alloc, slurm, max_bids, spread)
    return [(int(bid_job[b]), int(kind[b]), int(sets[b]), node[ptr[b] : ptr[b + 1]].tolist())
            for b in range(bid_job.size)], host


def test_span_bids_of_figure4_one_spans_both_nodesets():
    free = np.array([[8, 2, 0, 0]] * 64 + [[0, 0, 0, 0]] * 16 + [[8, 2, 0, 0]] * 64, dtype=np.int64)
    got, _ = _kernel_bids(free, [(512, (1, 0, 0, 0), -1, 0)], 10, False, "span")
    # A from each end of each nodeset is the whole nodeset (64 nodes x 8 = 512): one A each
    assert [(k, s, nodes[0], nodes[-1], len(nodes)) for _, k, s, nodes in got] == [
        (naive.A, 1, 0, 63, 64), (naive.A, 1, 80, 143, 64), (naive.SPAN, 2, 0, 143, 128)]
    # F: the span bid is C-like (two nodesets), below both A bids
    kind = np.array([k for _, k, _, _ in got])
    f = aucsched_bids.preference(kind, np.zeros(3, bool), np.array([64, 64, 128]), np.array([1, 1, 2]), 144, 6)
    assert f[2] == pytest.approx(1 - 0.5 - 0.25 * 128 / 145 - 0.25 * 2 / 7) and f[2] < f[0] == f[1]


def test_span_bids_take_at_most_one_node_per_unit_and_skip_full_spans():
    free = np.array([[4, 0, 0, 0]] * 3 + [[0, 0, 0, 0]] + [[4, 0, 0, 0]] * 3, dtype=np.int64)
    got, _ = _kernel_bids(free, [(5, (1, 0, 0, 0), -1, 0), (6, (1, 0, 0, 0), -1, 1),
                                 (12, (1, 0, 0, 0), -1, 0)], 10, False, "span")
    spans = [(a, s, nodes) for a, k, s, nodes in got if k == naive.SPAN]
    assert spans == [
        (0, 1, [0, 1, 2]), (0, 1, [4, 5, 6]),  # 5 units: 3 + 3 nodes would leave a node empty
        (1, 1, [0, 1, 2]), (1, 1, [4, 5, 6]),  # contiguous: one nodeset only
        (2, 2, [0, 1, 2, 4, 5, 6]),  # 12 units: 24 cores over 6 nodes; nodeset 2 alone would be full (an A bid)
    ]


@st.composite
def bid_cases(draw):
    m = draw(st.integers(1, 14))
    free = np.array([[draw(st.sampled_from([0, 0, 1, 2, 4, 6])), draw(st.integers(0, 2)), 0, 0] for _ in range(m)],
                    dtype=np.int64)
    rows = []
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            rows.append((draw(st.integers(1, 30)), (draw(st.integers(1, 2)), 0, 0, 0), -1, int(draw(st.booleans()))))
        else:
            k = draw(st.integers(1, 5))
            rows.append((k * draw(st.integers(1, 2)), (draw(st.integers(1, 3)), draw(st.integers(0, 2)), 0, 0), k,
                         int(draw(st.booleans()))))
    return free, rows, draw(st.integers(1, 12)), draw(st.booleans()), draw(st.sampled_from(["none", "nodeset", "span"]))


@settings(max_examples=300, deadline=None)
@given(bid_cases())
def test_bid_generator_with_each_spread_set_equals_the_naive_one(case):
    free, rows, max_bids, slurm, spread = case
    got, host = _kernel_bids(free, rows, max_bids, slurm, spread)
    want = naive.bids(host.tolist(), [(u, list(r), n, c) for u, r, n, c in rows], free.tolist(), max_bids,
                      slurm, spread)
    assert got == [(a, k, s, sorted(nodes)) if k != naive.SLURM else (a, k, s, nodes) for a, k, s, nodes in want]
    for a, kind, sets, nodes in got:
        units, _, req_nodes, contiguous = rows[a]
        if kind == naive.SPAN:  # one unit or more on every node, room to spare
            assert req_nodes < 0 and len(nodes) <= units < sum(int(host[a, n]) for n in nodes)
            assert sets == 1 or not contiguous


# --------------------------------------------------------------------------- optimality


@st.composite
def tiny_workloads(draw):
    """2-4 nodes of (2-4 cores, 0-2 GPUs); 2-6 jobs of free shape (1-6 one-core units) or
    fixed node counts, in bursts, so that decision points see part-used nodesets."""
    m = draw(st.integers(2, 4))
    cap = np.array([[draw(st.integers(2, 4)), draw(st.integers(0, 2)), 0, 0] for _ in range(m)], dtype=np.int64)
    from schedbench.io.machine import Machine, Partition, spec_of

    machine = Machine(cap, spec_of(cap), "", tuple(f"n{i}" for i in range(m)), (frozenset(),) * m,
                      (Partition("all", np.arange(m), default=True),))
    rows = []
    for _ in range(draw(st.integers(2, 6))):
        fixed = draw(st.booleans())
        k = draw(st.integers(1, m)) if fixed else -1
        rows.append(dict(submit=draw(st.sampled_from([0, 0, 5, 30])), run=draw(st.integers(5, 60)),
                         units=k if fixed else draw(st.integers(1, 6)), unit_cores=draw(st.integers(1, 2)) if fixed else 1,
                         unit_gpus=draw(st.integers(0, 1)) if fixed else 0, req_nodes=k))
    rows.sort(key=lambda r: r["submit"])
    rows[0].update(units=1, unit_cores=1, unit_gpus=0, req_nodes=-1)  # one job fits: an auction to check
    cols = {k: np.array([r[k] for r in rows], dtype=np.int64) for k in rows[0]}
    table = jobs_mod.from_columns(job_id=np.arange(1, len(rows) + 1), procs_req=cols["units"] * cols["unit_cores"],
                                  time_req=cols["run"] + 10, **cols)
    return table, machine, draw(st.sampled_from(["span", "nodeset", "none"])), draw(st.booleans())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_workloads())
def test_auction_reaches_the_brute_force_optimum_at_every_decision(case):
    """At every decision point, the solved auction's objective equals the best value over
    every choice of at most one bid per job and every load of each chosen bid."""
    from schedbench.policies.aucsched import AucSched

    table, machine, spread, slurm = case
    original = AucSched._auction
    checked = []

    def auction(self, view, jobs, prio, host, need, bids, window_size):
        starts = original(self, view, jobs, prio, host, need, bids, window_size)
        bid_job, kind, sets, ptr, node = bids
        if bid_job.size:
            listed = [(int(bid_job[b]), int(kind[b]), int(sets[b]), node[ptr[b] : ptr[b + 1]].tolist())
                      for b in range(bid_job.size)]
            rows = [(int(view.units[j]), view.request[j].tolist(), int(view.req_nodes[j])) for j in jobs]
            want = naive.aucsched_optimum(rows, prio.tolist(), view.free.tolist(), host.tolist(), listed)
            checked.append((self.solver.rows[-1], want))
        return starts

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(AucSched, "_auction", auction)
        r = replay(table, machine, "aucsched", "bf", spread_bids=spread, slurm_bids=slurm, max_jobs=4,
                   max_nodes=100_000)
    assert checked and np.any(r.start >= 0)
    for row, want in checked:
        assert row.status == "optimal"
        assert row.objective == pytest.approx(want, rel=1e-9, abs=1e-9), row.time
