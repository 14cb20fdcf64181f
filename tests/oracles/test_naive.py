"""Tests of the naive reference replay (tests/naive.py).

Hand-made cases carry their answers worked out by hand in comments, following
/work/shared/spec/replay-semantics.md and the readings R1-R9 in naive.py's docstring.
Property tests (hypothesis) check invariants on random traces and that node replay on
1-core units equals pool replay.
"""


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naive import NaiveResult, replay_nodes, replay_pool


def pool(jobs, machine, scheduler):
    """jobs: list of (id, submit, run, size, pred) tuples."""
    cols = list(zip(*jobs, strict=True)) if jobs else [[], [], [], [], []]
    return replay_pool(*cols, machine, scheduler)


def starts(res: NaiveResult):
    return dict(zip(res.job_id, res.start, strict=True))


def cores(n):
    return (n, 0, 0, 0)


def njob(job_id, submit, run, units, unit=(1, 0, 0, 0), req_nodes=-1, pred=None):
    return dict(
        job_id=job_id,
        submit=submit,
        run=run,
        pred=run if pred is None else pred,
        units=units,
        unit=unit,
        req_nodes=req_nodes,
    )


# --------------------------------------------------------------------------------------
# FCFS / SJF
# --------------------------------------------------------------------------------------


def test_fcfs_blocks_at_first_job_that_does_not_fit():
    # M=4.  t0: A(3) starts, free 1.  t1: B(2) joins, does not fit -> stop.
    # t2: C(1) joins; B still first and does not fit -> stop (C fits but is blocked).
    # t10: A ends, free 4: B starts (free 2), C starts (free 1).
    res = pool([(1, 0, 10, 3, 10), (2, 1, 5, 2, 5), (3, 2, 5, 1, 5)], 4, "fcfs")
    assert starts(res) == {1: 0, 2: 10, 3: 10}
    assert res.end == [10, 15, 15]
    assert res.status == ["replayed"] * 3
    assert res.passes == []


def test_sjf_order_by_pred_then_submit_then_id():
    # M=4.  t0: A(4, run 10).  t1: B(pred 8, size 3), C(pred 2, size 2), D(pred 5, run 1, size 2).
    # t10: A ends, free 4.  SJF order C, D, B: C starts (free 2), D starts (free 0), B no.
    # t11: D ends (10+1), free 2: B(3) no.  t12: C ends, free 4: B starts.
    jobs = [(1, 0, 10, 4, 10), (2, 1, 8, 3, 8), (3, 1, 2, 2, 2), (4, 1, 1, 2, 5)]
    assert starts(pool(jobs, 4, "sjf")) == {1: 0, 2: 12, 3: 10, 4: 10}


def test_sjf_stops_at_first_that_does_not_fit():
    # M=4.  t0: A(2, run 10), free 2.  t1: B(pred 3, size 3), C(pred 9, size 1).
    # SJF order B, C: B does not fit -> stop; C is NOT started although it fits.
    # t10: A ends, free 4: B (free 1), C (free 0) start.
    jobs = [(1, 0, 10, 2, 10), (2, 1, 3, 3, 3), (3, 1, 9, 1, 9)]
    assert starts(pool(jobs, 4, "sjf")) == {1: 0, 2: 10, 3: 10}


def test_sjf_ties_on_pred_by_submit_then_id():
    # M=1, everything queued behind A (run 10).  B(id 5, sub 2), C(id 4, sub 3), D(id 3, sub 3),
    # all pred 1 run 1.  Order (pred, submit, id): B(5), D(3), C(4) -> starts 10, 11, 12.
    jobs = [(1, 0, 10, 1, 10), (5, 2, 1, 1, 1), (4, 3, 1, 1, 1), (3, 3, 1, 1, 1)]
    assert starts(pool(jobs, 1, "sjf")) == {1: 0, 5: 10, 3: 11, 4: 12}


@pytest.mark.parametrize("scheduler", ["fcfs", "sjf", "easy"])
def test_equal_submit_ties_by_id_not_input_order(scheduler):
    # M=1, both submit 0, run 5: id 3 is first in the queue although listed second.
    res = pool([(7, 0, 5, 1, 5), (3, 0, 5, 1, 5)], 1, scheduler)
    assert starts(res) == {3: 0, 7: 5}


# --------------------------------------------------------------------------------------
# EASY
# --------------------------------------------------------------------------------------


def test_easy_backfill_allowed_by_shadow_time_with_equality():
    # M=4.  t0: A(3, run/pred 10), free 1.
    # t1: B(4) head: release A (pe 10) -> 4 >= 4: shadow 10, extra 0.
    # t2: C(size 1, pred 8, run 5) fits; 2 + 8 = 10 <= 10 -> starts at 2, ends 7.
    # t7: C ends; pass: B head again, shadow 10.  t10: A ends, B starts.
    jobs = [(1, 0, 10, 3, 10), (2, 1, 5, 4, 5), (3, 2, 5, 1, 8)]
    res = pool(jobs, 4, "easy")
    assert starts(res) == {1: 0, 2: 10, 3: 2}
    assert res.passes == [(1, 2, 10), (2, 2, 10), (7, 2, 10)]


def test_easy_extra_shadow_and_refusal_in_one_pass():
    # M=10.  t0: A(size 4, pred 10), A2(size 3, pred 20) start; free 3.
    # t1 (queue B, C, D, E, all submit 1):
    #   B(size 6) head does not fit.  Release A (pe 10): 3+4 = 7 >= 6 -> shadow 10.
    #   extra = 3 + 4 (A; A2 has pe 20 > 10) - 6 = 1.
    #   C(1, pred 30): fits, 31 > 10, 1 <= extra 1 -> starts (extra route), extra 0, free 2.
    #   D(1, pred 30): fits, 31 > 10, 1 > 0 -> refused by both.
    #   E(1, pred 4): fits, 1+4 = 5 <= 10 -> starts (shadow route), free 1.
    # t5: E ends, free 2.  B head: release A -> 6 >= 6, shadow 10, extra 0; D refused.
    # t10: A ends, free 6: B starts (free 0); D head: running A2(20) C(31) B(15):
    #   release B at 15 -> shadow 15.
    # t15: B ends: D starts.
    jobs = [
        (1, 0, 10, 4, 10),
        (2, 0, 20, 3, 20),
        (3, 1, 5, 6, 5),
        (4, 1, 30, 1, 30),
        (5, 1, 30, 1, 30),
        (6, 1, 4, 1, 4),
    ]
    res = pool(jobs, 10, "easy")
    assert starts(res) == {1: 0, 2: 0, 3: 10, 4: 1, 5: 15, 6: 1}
    assert res.passes == [(1, 3, 10), (5, 3, 10), (10, 5, 15)]


def test_easy_refused_by_both():
    # M=6.  t0: A(4, pred 10), free 2.  t1: B(5) head: release A -> 6 >= 5, shadow 10,
    # extra = 6 - 5 = 1.  t2: C(size 2, pred 20): fits (2 <= 2) but 22 > 10 and 2 > 1 -> refused.
    # t10: A ends: B starts (free 1); C head: release B (pe 15) -> shadow 15.  t15: C starts.
    jobs = [(1, 0, 10, 4, 10), (2, 1, 5, 5, 5), (3, 2, 20, 2, 20)]
    res = pool(jobs, 6, "easy")
    assert starts(res) == {1: 0, 2: 10, 3: 15}
    assert res.passes == [(1, 2, 10), (2, 2, 10), (10, 3, 15)]


def test_easy_shadow_route_does_not_consume_extra():
    # M=6.  t0: A(size 4, pred 10), free 2.  t1: B(size 5) head: shadow 10, extra 6-5 = 1.
    # C(size 1, pred 5): 1+5 <= 10 -> shadow route, extra stays 1, free 1.
    # D(size 1, pred 30): fits, 31 > 10, 1 <= 1 -> starts by extra.
    # t6: C ends.  t10: A ends, free 5 (D holds 1): B starts.
    jobs = [(1, 0, 10, 4, 10), (2, 1, 5, 5, 5), (3, 1, 5, 1, 5), (4, 1, 30, 1, 30)]
    res = pool(jobs, 6, "easy")
    assert starts(res) == {1: 0, 2: 10, 3: 1, 4: 1}


def test_easy_step1_jobs_count_in_extra_and_in_node_free_at_shadow():
    # M=4.  t0: A(size 2, run/pred 10), free 2.
    # t1 (queue S, B, C): S(size 1, pred 2) starts in step 1, free 1.  B(size 3) head:
    # release S (pe 3): 1+1 = 2 < 3; release A (pe 10): 4 >= 3 -> shadow 10.
    # extra = 1 + 1 (S, started in this very pass) + 2 (A) - 3 = 1.
    # C(size 1, pred 30): fits, 31 > 10, 1 <= 1 -> starts at 1.
    # (Counting only jobs running at the start of the pass would give extra 0.)
    # t3: S ends.  t10: A ends, free 3 -> B starts.
    jobs = [(1, 0, 10, 2, 10), (2, 1, 2, 1, 2), (3, 1, 5, 3, 5), (4, 1, 30, 1, 30)]
    res = pool(jobs, 4, "easy")
    assert starts(res) == {1: 0, 2: 1, 3: 10, 4: 1}
    # Same on nodes (R9): FS = free after step 1 + allocations of S and A.
    njobs = [njob(i, s, r, sz, pred=p) for i, s, r, sz, p in jobs]
    nres = replay_nodes(njobs, [cores(2), cores(2)], "easy", "ff")
    assert nres.start == res.start


def test_easy_extra_counts_every_job_ending_at_shadow():
    # M=5.  t0: A(id 1, size 2), A2(id 2, size 2), both pe 10; free 1.
    # t1: B(3) head: release A (pe 10, id 1): 1+2 = 3 >= 3 -> shadow 10.
    # extra = 1 + 2 + 2 (A2 also has pe 10 <= shadow) - 3 = 2.
    # C(1, pred 30): fits, 31 > 10, 1 <= 2 -> starts at 1.  (If only A counted, extra = 0.)
    # t10: A, A2 end: free 4 -> B starts.
    jobs = [(1, 0, 10, 2, 10), (2, 0, 10, 2, 10), (3, 1, 5, 3, 5), (4, 1, 30, 1, 30)]
    res = pool(jobs, 5, "easy")
    assert starts(res) == {1: 0, 2: 0, 3: 10, 4: 1}


def test_easy_predicted_end_of_overrunning_job_is_now():
    # M=5.  t0: A(size 4, run 10, pred 2), free 1.
    # t5: B(size 5) head: A's pe = max(0+2, 5) = 5 -> shadow 5, extra = 5 - 5 = 0.
    #     C(size 1, run 3, pred 0): fits, 5 + 0 <= 5 -> starts at 5 (ends 8).
    #     (With pe = start + pred = 2 the shadow would be 2 and C refused.)
    # t8: C ends; B head: A's pe = max(2, 8) = 8 -> shadow 8.
    # t10: A ends: B starts.
    jobs = [(1, 0, 10, 4, 2), (2, 5, 1, 5, 1), (3, 5, 3, 1, 0)]
    res = pool(jobs, 5, "easy")
    assert starts(res) == {1: 0, 2: 10, 3: 5}
    assert res.passes == [(5, 2, 5), (8, 2, 8)]


def test_no_pass_at_quiet_instants_nor_at_dropped_submits():
    # M=4.  t0 (queue A, A2, B, C): A(size 1, run 10, pred 1) and A2(size 2, run 10, pred 3)
    # start, free 1.  B(size 2) head: release A (pe 1): 2 >= 2 -> shadow 1, extra 1+1-2 = 0.
    # C(size 1, pred 20): fits, 20 > 1, 1 > 0 -> refused.
    # A pass at t5 would see pe(A) = pe(A2) = 5, shadow 5, extra 1+1+2-2 = 2 and start C.
    # With only a dropped job submitting at 5 (E too wide), no pass runs at 5 (R1):
    # t10: A, A2 end: B (free 2), C (free 1) start.
    base = [(1, 0, 10, 1, 1), (2, 0, 10, 2, 3), (3, 0, 1, 2, 1), (4, 0, 20, 1, 20)]
    res = pool(base + [(5, 5, 1, 5, 1)], 4, "easy")
    assert res.status[4] == "dropped_too_wide"
    assert starts(res)[4] == 10
    assert res.passes == [(0, 3, 1)]
    # A real job E(size 4) submitting at 5 makes a pass at 5: C starts at 5 (extra route).
    res = pool(base + [(5, 5, 1, 4, 1)], 4, "easy")
    assert starts(res)[4] == 5
    assert res.passes[:2] == [(0, 3, 1), (5, 3, 5)]


# --------------------------------------------------------------------------------------
# Zero-length jobs (R3)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("scheduler", ["fcfs", "sjf", "easy"])
def test_zero_length_job_frees_at_same_instant(scheduler):
    # M=2.  t0: A(size 2, run 0) starts, B(size 2, run 5) does not fit.  A's end at 0 is
    # processed after that pass, then another pass at 0 starts B.
    res = pool([(1, 0, 0, 2, 0), (2, 0, 5, 2, 5)], 2, scheduler)
    assert res.start == [0, 0]
    assert res.end == [0, 5]


def test_zero_length_chain_batches_ends_per_pass():
    # M=2, all submit 0, EASY.  A(1, run 0), B(1, run 0), C(2, run 0), D(2, run 3).
    # pass 1: A, B start (free 0); C head: release A (pe 0) -> 1, B (pe 0) -> 2: shadow 0.
    # A and B end together; pass 2: C starts; D head: release C (pe 0) -> shadow 0.
    # C ends; pass 3: D starts, no zero-length job started -> done.  One pass per batch:
    # a reading with one pass per ended job would record an extra (0, 3, 0).
    jobs = [(1, 0, 0, 1, 0), (2, 0, 0, 1, 0), (3, 0, 0, 2, 0), (4, 0, 3, 2, 3)]
    res = pool(jobs, 2, "easy")
    assert res.start == [0, 0, 0, 0]
    assert res.end == [0, 0, 0, 3]
    assert res.passes == [(0, 3, 0), (0, 4, 0)]
    assert pool(jobs, 2, "fcfs").start == [0, 0, 0, 0]


def test_zero_length_job_holds_processors_during_its_pass():
    # M=2, EASY.  t0: A(1, run/pred 10), free 1.
    # t1: B(size 2) head: shadow 10 (release A), extra 0.  C(1, run 0) fits, 1+0 <= 10 ->
    # starts (free 0).  D(1, run 0) does not fit (C still holds its processor) -> skipped.
    # C ends; pass 2: B head, shadow 10; D fits, starts.  D ends; pass 3: nothing starts.
    # t10: A ends: B starts.
    jobs = [(1, 0, 10, 1, 10), (2, 1, 1, 2, 1), (3, 1, 0, 1, 0), (4, 1, 0, 1, 0)]
    res = pool(jobs, 2, "easy")
    assert starts(res) == {1: 0, 2: 10, 3: 1, 4: 1}
    assert res.passes == [(1, 2, 10)] * 3


# --------------------------------------------------------------------------------------
# Drops
# --------------------------------------------------------------------------------------


def test_drops_with_each_reason_in_order():
    jobs = [
        (1, 0, -1, 0, 5),  # run < 0 checked first, even though size is 0 too
        (2, 0, -1, 9, 5),  # run < 0 before too wide
        (3, 0, 5, 0, 5),  # size 0
        (4, 0, 5, -2, 5),  # negative size
        (5, 0, 5, 9, 5),  # wider than the machine (M=4)
        (6, 0, 0, 4, 0),  # run 0 is a real job
        (7, 0, 5, 4, 5),
    ]
    res = pool(jobs, 4, "fcfs")
    assert res.status == [
        "dropped_no_runtime",
        "dropped_no_runtime",
        "dropped_no_size",
        "dropped_no_size",
        "dropped_too_wide",
        "replayed",
        "replayed",
    ]
    assert res.start == [None] * 5 + [0, 0]
    assert res.end == [None] * 5 + [0, 5]


def test_node_drops():
    nodes = [cores(2), cores(2)]
    jobs = [
        njob(1, 0, -1, 0),  # no runtime (checked first)
        njob(2, 0, 5, 0),  # no units
        njob(3, 0, 5, 2, unit=(0, 0, 0, 0)),  # requests nothing (R5)
        njob(4, 0, 5, 5),  # 5 cores > 4
        njob(5, 0, 5, 1, unit=(1, 1, 0, 0)),  # no GPU anywhere
        njob(6, 0, 5, 3, unit=(1, 0, 0, 0), req_nodes=3),  # 3 nodes on a 2-node machine
        njob(7, 0, 5, 2, unit=(1, 0, 0, 0), req_nodes=1),  # 2 cores on one node: fine
    ]
    res = replay_nodes(jobs, nodes, "fcfs", "ff")
    assert res.status == [
        "dropped_no_runtime",
        "dropped_no_size",
        "dropped_no_size",
        "dropped_too_wide",
        "dropped_too_wide",
        "dropped_too_wide",
        "replayed",
    ]
    assert res.alloc == [None] * 6 + [[(0, 2)]]


# --------------------------------------------------------------------------------------
# Node allocation
# --------------------------------------------------------------------------------------


def test_ff_vs_bf_choose_different_nodes():
    # nodes: 0 = 4 cores, 1 = 2 cores.  A job of 2 units: FF -> node 0; BF (free 2 < 4) -> node 1.
    nodes = [cores(4), cores(2)]
    jobs = [njob(1, 0, 5, 2)]
    assert replay_nodes(jobs, nodes, "fcfs", "ff").alloc == [[(0, 2)]]
    assert replay_nodes(jobs, nodes, "fcfs", "bf").alloc == [[(1, 2)]]


def test_bf_ignores_memory_and_uses_free_not_capacity():
    # node 0: 3 cores, 1 mem; node 1: 2 cores, 1000 mem.  BF sums cores+gpus+mics only:
    # 3 vs 2 -> node 1 first (memory would have reversed it).  FF -> node 0.
    nodes = [(3, 0, 0, 1), (2, 0, 0, 1000)]
    jobs = [njob(1, 0, 5, 1, unit=(1, 0, 0, 1))]
    assert replay_nodes(jobs, nodes, "fcfs", "bf").alloc == [[(1, 1)]]
    assert replay_nodes(jobs, nodes, "fcfs", "ff").alloc == [[(0, 1)]]
    # node 0: 4 cores + 1 GPU (sum 5), node 1: 2 cores (sum 2).  Job 1 takes 3 cores + 1 GPU
    # (only node 0 can): node 0 free sum 1 < node 1's 2.  Job 2 (1 core), BF on the free
    # state -> node 0 (by capacity order it would be node 1).
    nodes = [(4, 1, 0, 0), (2, 0, 0, 0)]
    jobs = [njob(1, 0, 10, 1, unit=(3, 1, 0, 0)), njob(2, 0, 10, 1)]
    assert replay_nodes(jobs, nodes, "fcfs", "bf").alloc == [[(0, 1)], [(0, 1)]]


def test_spread_and_host_count_min_over_requested_types():
    # 3 nodes of 2 cores: 5 units FF -> 2, 2, 1.
    res = replay_nodes([njob(1, 0, 5, 5)], [cores(2)] * 3, "fcfs", "ff")
    assert res.alloc == [[(0, 2), (1, 2), (2, 1)]]
    # node (8 cores, 2 gpus, 0 mics, 16 mem), unit (2, 1, 0, 4): min(4, 2, 4) = 2 per node
    # (MICs not requested are ignored).  3 units -> node 0 hosts 2, node 1 hosts 1.
    nodes = [(8, 2, 0, 16), (8, 2, 0, 16)]
    res = replay_nodes([njob(1, 0, 5, 3, unit=(2, 1, 0, 4))], nodes, "fcfs", "ff")
    assert res.alloc == [[(0, 2), (1, 1)]]


def test_req_nodes_shape():
    # 3 nodes of 4 cores.  t0: A (3 units, free spread) -> [(0, 3)], free [1, 4, 4].
    # B: 4 units on exactly 2 nodes (2 each): node 0 hosts 1 < 2 -> skip; nodes 1, 2.
    # (Free spread would have been [(0, 1), (1, 3)].)
    nodes = [cores(4)] * 3
    jobs = [njob(1, 0, 10, 3), njob(2, 0, 10, 4, req_nodes=2)]
    res = replay_nodes(jobs, nodes, "fcfs", "ff")
    assert res.alloc == [[(0, 3)], [(1, 2), (2, 2)]]
    assert res.start == [0, 0]


def test_req_nodes_visits_nodes_in_allocator_order():
    # nodes of 2, 4, 3 cores; 4 units on exactly 2 nodes (2 each); every node qualifies.
    # FF: nodes 0, 1.  BF (free 2, 4, 3 -> order 0, 2, 1): nodes 0, 2.
    # BF spread of 5 units: node 0 hosts 2, node 2 hosts 3 -> [(0, 2), (2, 3)] (listed by index).
    nodes = [cores(2), cores(4), cores(3)]
    jobs = [njob(1, 0, 10, 4, req_nodes=2)]
    assert replay_nodes(jobs, nodes, "fcfs", "ff").alloc == [[(0, 2), (1, 2)]]
    assert replay_nodes(jobs, nodes, "fcfs", "bf").alloc == [[(0, 2), (2, 2)]]
    assert replay_nodes([njob(1, 0, 10, 5)], nodes, "fcfs", "bf").alloc == [[(0, 2), (2, 3)]]
    # BF spread where the visiting order is not index order: nodes of 4 and 1 cores,
    # 3 units: node 1 (free 1) first hosts 1, then node 0 hosts 2.
    res = replay_nodes([njob(1, 0, 10, 3)], [cores(4), cores(1)], "fcfs", "bf")
    assert res.alloc == [[(0, 2), (1, 1)]]


def test_req_nodes_waits_although_totals_fit():
    # 2 nodes of 4 cores.  t0: A (3 units) -> [(0, 3)], free [1, 4] (5 cores free).
    # B needs 2 nodes x 2 cores: only node 1 qualifies -> does not fit; FCFS waits.
    # t10: A ends -> B on [(0, 2), (1, 2)].
    nodes = [cores(4)] * 2
    jobs = [njob(1, 0, 10, 3), njob(2, 0, 10, 4, req_nodes=2)]
    res = replay_nodes(jobs, nodes, "fcfs", "ff")
    assert res.start == [0, 10]
    assert res.alloc == [[(0, 3)], [(0, 2), (1, 2)]]


def test_req_nodes_not_divisible_is_an_error():
    with pytest.raises(ValueError):
        replay_nodes([njob(1, 0, 5, 3, req_nodes=2)], [cores(4)] * 2, "fcfs", "ff")


def test_easy_on_nodes_refuses_job_that_breaks_node_feasible_reservation():
    # 2 nodes of 4 cores, FF.
    # t0: A (4 units, run/pred 10) -> [(0, 4)], free [0, 4].
    # t1 (queue H, C, D, E):
    #   H = 4 units on 2 nodes x 2 (run/pred 5): node 0 hosts 0 -> does not fit.
    #   Shadow: release A -> free [4, 4], H fits -> shadow 10.  FS = [4, 4].
    #   C (3 units, pred 100): fits now -> [(1, 3)]; 101 > 10; FS - C = [4, 1]: H needs two
    #     nodes with 2 free -> fails -> refused.  (Pool rule: extra = 8 - 4 = 4 >= 3 would
    #     have allowed it: C fits in the totals but breaks the node-feasible reservation.)
    #   D (2 units, pred 100): [(1, 2)]; FS - D = [4, 2] -> H fits -> starts; free [0, 2].
    #   E (1 unit, pred 100): [(1, 1)]; FS - D - E = [4, 1] -> H fails -> refused.
    # t10: A ends, free [4, 2]: H -> [(0, 2), (1, 2)], free [2, 0].  C (3) does not fit.
    #   C head: release H (pe 15) -> [4, 2] fits 3 -> shadow 15; FS = [4, 2].
    #   E: [(0, 1)]; 110 > 15; FS - E = [3, 2] hosts 5 >= 3 -> starts.  free [1, 0].
    # t15: H ends, free [3, 2]: C -> [(0, 3)].
    nodes = [cores(4)] * 2
    jobs = [
        njob(1, 0, 10, 4),
        njob(2, 1, 5, 4, req_nodes=2),
        njob(3, 1, 100, 3),
        njob(4, 1, 100, 2),
        njob(5, 1, 100, 1),
    ]
    res = replay_nodes(jobs, nodes, "easy", "ff")
    assert starts(res) == {1: 0, 2: 10, 3: 15, 4: 1, 5: 10}
    assert res.alloc == [[(0, 4)], [(0, 2), (1, 2)], [(0, 3)], [(1, 2)], [(0, 1)]]
    assert res.passes == [(1, 2, 10), (10, 3, 15)]


def test_easy_on_nodes_shadow_route_ignores_node_shape():
    # Same t0/t1 as above, but C has pred 9: 1 + 9 <= 10 -> starts at 1 by the shadow route
    # even though FS - C would break H.  C ends at 1 + 9 = 10 together with A.
    nodes = [cores(4)] * 2
    jobs = [njob(1, 0, 10, 4), njob(2, 1, 5, 4, req_nodes=2), njob(3, 1, 9, 3)]
    res = replay_nodes(jobs, nodes, "easy", "ff")
    assert starts(res) == {1: 0, 2: 10, 3: 1}


# --------------------------------------------------------------------------------------
# Property tests
# --------------------------------------------------------------------------------------


@st.composite
def pool_traces(draw, exact=None):
    n = draw(st.integers(0, 12))
    machine = draw(st.integers(1, 8))
    ids = draw(st.permutations(list(range(1, n + 1))))
    exact = draw(st.booleans()) if exact is None else exact
    jobs = []
    for i in range(n):
        submit = draw(st.integers(0, 20))
        run = draw(st.integers(-1, 12))
        size = draw(st.integers(-1, machine + 1))
        pred = run if exact else draw(st.integers(0, 15))
        jobs.append((ids[i], submit, run, size, pred))
    return jobs, machine


def check_pool_invariants(jobs, machine, res, scheduler):
    by_id = {j[0]: j for j in jobs}
    for jid, s, e, status in zip(res.job_id, res.start, res.end, res.status, strict=True):
        _, submit, run, size, _ = by_id[jid]
        if status != "replayed":
            assert s is None and e is None
            continue
        assert s >= submit
        assert e == s + run
    # never over-committed: at each start instant, jobs with start <= t < end
    live = [
        (s, e, by_id[i][3])
        for i, s, e in zip(res.job_id, res.start, res.end, strict=True)
        if s is not None
    ]
    for t in {s for s, _, _ in live}:
        assert sum(sz for s, e, sz in live if s <= t < e) <= machine
    if scheduler == "fcfs":
        replayed = sorted(
            (by_id[i][1], i, s) for i, s in zip(res.job_id, res.start, strict=True) if s is not None
        )
        st_ = [s for _, _, s in replayed]
        assert st_ == sorted(st_)


@settings(deadline=None, max_examples=150)
@given(pool_traces(), st.sampled_from(["fcfs", "sjf", "easy"]))
def test_pool_invariants(trace, scheduler):
    jobs, machine = trace
    res = pool(jobs, machine, scheduler)
    check_pool_invariants(jobs, machine, res, scheduler)


@settings(deadline=None, max_examples=150)
@given(pool_traces(exact=True))
def test_easy_exact_pred_never_starts_head_after_first_shadow(trace):
    jobs, machine = trace
    res = pool(jobs, machine, "easy")
    check_pool_invariants(jobs, machine, res, "easy")
    first_shadow = {}
    for _, head, shadow in res.passes:
        first_shadow.setdefault(head, shadow)
    st_ = starts(res)
    for head, shadow in first_shadow.items():
        assert st_[head] <= shadow


@settings(deadline=None, max_examples=150)
@given(
    pool_traces(),
    st.lists(st.integers(1, 4), min_size=1, max_size=4),
    st.sampled_from(["fcfs", "sjf", "easy"]),
    st.sampled_from(["ff", "bf"]),
)
def test_nodes_with_one_core_units_equal_pool(trace, node_cores, scheduler, allocator):
    jobs, _ = trace
    machine = sum(node_cores)
    pres = pool(jobs, machine, scheduler)
    njobs = [njob(i, s, r, sz, pred=p) for i, s, r, sz, p in jobs]
    nres = replay_nodes(njobs, [cores(c) for c in node_cores], scheduler, allocator)
    assert nres.status == pres.status
    assert nres.start == pres.start
    assert nres.end == pres.end
    assert nres.passes == pres.passes
    for a, s in zip(nres.alloc, nres.start, strict=True):
        assert (a is None) == (s is None)


@st.composite
def node_traces(draw):
    nnodes = draw(st.integers(1, 4))
    nodes = [
        (
            draw(st.integers(0, 4)),
            draw(st.integers(0, 2)),
            draw(st.integers(0, 2)),
            draw(st.integers(0, 8)),
        )
        for _ in range(nnodes)
    ]
    n = draw(st.integers(0, 10))
    ids = draw(st.permutations(list(range(1, n + 1))))
    jobs = []
    for i in range(n):
        unit = (
            draw(st.integers(0, 2)),
            draw(st.integers(0, 1)),
            draw(st.integers(0, 1)),
            draw(st.integers(0, 4)),
        )
        req_nodes = draw(st.sampled_from([-1, -1, 1, 2]))
        per = draw(st.integers(1, 3))
        units = per * req_nodes if req_nodes > 0 else draw(st.integers(0, 6))
        run = draw(st.integers(-1, 10))
        pred = draw(st.integers(0, 12))
        jobs.append(njob(ids[i], draw(st.integers(0, 15)), run, units, unit, req_nodes, pred))
    return jobs, nodes


@settings(deadline=None, max_examples=150)
@given(node_traces(), st.sampled_from(["fcfs", "sjf", "easy"]), st.sampled_from(["ff", "bf"]))
def test_node_invariants(trace, scheduler, allocator):
    jobs, nodes = trace
    res = replay_nodes(jobs, nodes, scheduler, allocator)
    live = []
    for d, s, e, a, status in zip(jobs, res.start, res.end, res.alloc, res.status, strict=True):
        if status != "replayed":
            assert s is None and a is None
            continue
        assert s >= d["submit"] and e == s + d["run"]
        assert sum(k for _, k in a) == d["units"]
        assert all(k > 0 for _, k in a)
        assert len({i for i, _ in a}) == len(a)
        if d["req_nodes"] > 0:
            assert len(a) == d["req_nodes"]
            assert {k for _, k in a} == {d["units"] // d["req_nodes"]}
        live.append((s, e, a, d["unit"]))
    for t in {s for s, _, _, _ in live}:
        used = [[0] * 4 for _ in nodes]
        for s, e, a, unit in live:
            if s <= t < e:
                for i, k in a:
                    for r in range(4):
                        used[i][r] += k * unit[r]
        for i, node in enumerate(nodes):
            assert all(used[i][r] <= node[r] for r in range(4))


@settings(deadline=None, max_examples=150)
@given(node_traces(), st.sampled_from(["ff", "bf"]))
def test_easy_nodes_exact_pred_never_starts_head_after_first_shadow(trace, allocator):
    jobs, nodes = trace
    for d in jobs:
        d["pred"] = max(d["run"], 0)
    res = replay_nodes(jobs, nodes, "easy", allocator)
    first_shadow = {}
    for _, head, shadow in res.passes:
        first_shadow.setdefault(head, shadow)
    st_ = starts(res)
    for head, shadow in first_shadow.items():
        assert st_[head] <= shadow
