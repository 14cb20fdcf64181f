"""Tests of the conservative-backfilling oracle (tests/naive_conservative.py).

Hand-made cases with answers worked out by hand in comments, from the "Conservative
backfilling" section of /work/shared/spec/replay-semantics.md and the readings C1-C14 of
naive_conservative.py.  Notation: [a, b) is a booking; "cands" the earliest-fit
candidates (now, then booking ends after now).  A few small property tests cross-check
the pool, totals and node code paths against each other.
"""


from hypothesis import given, settings
from hypothesis import strategies as st

from naive_conservative import replay_nodes, replay_pool


def pool(rows, machine=10, predictor="estimate"):
    """rows: (id, submit, run, size, estimate); pred = estimate, or run for "actual"."""
    ids, sub, run, size, est = (list(c) for c in zip(*rows, strict=True))
    pred = run if predictor == "actual" else est
    return replay_pool(ids, sub, run, size, pred, est, machine)


def starts(res):
    return dict(zip(res.job_id, res.start, strict=True))


def first_bookings(res):
    out = {}
    for _, jid, frm in res.passes:
        out.setdefault(jid, frm)
    return out


def njob(job_id, submit, run, units, unit, est, req_nodes=-1, pred=None):
    return dict(
        job_id=job_id,
        submit=submit,
        run=run,
        pred=est if pred is None else pred,
        estimate=est,
        units=units,
        unit=unit,
        req_nodes=req_nodes,
    )


# --------------------------------------------------------------------------------------
# Pool
# --------------------------------------------------------------------------------------

ABC = [(1, 0, 10, 6, 20), (2, 1, 5, 6, 5), (3, 2, 5, 4, 5)]


def test_release_compresses_and_small_job_backfills():
    # M=10.  t0: A(6) booked [0,20), starts.  t1: B(6, d 5): cands 1, 20; at 1 6+6 > 10,
    # at 20 free -> [20,25).  t2: C(4, d 5): at 2 booked over [2,7) is 6, 6+4 <= 10 ->
    # [2,7), starts (backfill).  t7: C ends at its booking end: no release.  t10: A ends,
    # booking [0,20) reached past 10: release -> compress B: cands 10, 20; at 10 nothing
    # booked -> [10,15) < 20, moved; it begins now and starts.
    res = pool(ABC)
    assert starts(res) == {1: 0, 2: 10, 3: 2}
    assert res.end == [10, 15, 7]
    assert res.passes == [(0, 1, 0), (1, 2, 20), (2, 3, 2), (10, 2, 10)]


def test_actual_predictor_no_job_starts_later_than_its_first_booking():
    # pred = run.  t0: A [0,10).  t1: B cands 1, 10 -> [10,15).  t2: C [2,7) starts.
    # t7: C ends on time.  t10: A ends on time (no release); B's booking begins: starts.
    res = pool(ABC, predictor="actual")
    assert starts(res) == {1: 0, 2: 10, 3: 2}
    assert first_bookings(res) == starts(res)
    assert len(res.passes) == 3  # never rebooked


def test_expiry_doubles_elapsed_time_and_rebooks_queue():
    # M=10.  A(10, run 30, est 10), B(10, est 5) at 1.  t0: A [0,10).  t1: B [10,15).
    # t10: A's booking ends, A still runs: start+est = 10 is not > 10 -> new end
    # 10 + max(1, 10) = 20, extended -> B unbooked and rebooked at 20.  t20: again:
    # 20 + 20 = 40, B -> 40.  t30: A ends, booking [0,40) past 30: release, B -> 30.
    res = pool([(1, 0, 30, 10, 10), (2, 1, 5, 10, 5)])
    assert starts(res) == {1: 0, 2: 30}
    assert res.passes == [(0, 1, 0), (1, 2, 10), (10, 2, 20), (20, 2, 40), (30, 2, 30)]


def test_expiry_uses_estimate_when_prediction_was_shorter():
    # pred != estimate.  A(10, run 12, pred 4, est 6) at 0 -> [0,4).  B(10, run 1, pred 1)
    # at 1 -> [4,5).  t4: A expires: start+est = 6 > 4 -> [0,6); B rebooked at 6.
    # t6: A expires: 0+6 is not > 6 -> 6 + max(1, 6) = 12; B -> 12.  t12: A ends exactly
    # at its booking end: no release; B's booking begins now: starts at 12.
    res = replay_pool([1, 2], [0, 1], [12, 1], [10, 10], [4, 1], [6, 1], 10)
    assert starts(res) == {1: 0, 2: 12}
    assert res.passes == [(0, 1, 0), (1, 2, 4), (4, 2, 6), (6, 2, 12)]


def test_expiry_of_zero_estimate_job_extends_by_one():
    # A(4, run 3, est 0): d = 1 -> [0,1).  B(4, est 2) at 0 -> [1,3).  t1: A expires:
    # 0+0 not > 1 -> 1 + max(1, 1) = 2, B -> 2.  t2: 2 + 2 = 4, B -> 4.  t3: A ends
    # (booking [0,4) past 3): release, B -> 3.
    res = pool([(1, 0, 3, 4, 0), (2, 0, 2, 4, 2)], machine=4)
    assert starts(res) == {1: 0, 2: 3}


def test_zero_length_job_releases_at_its_start_instant():
    # M=4.  t0: A(4, run 0, est 10) [0,10), B(4, est 5): cands 0, 10 -> [10,15).  A
    # starts and ends at 0: its booking [0,10) is removed, a release; another pass at 0
    # compresses B to 0, which starts.
    res = pool([(1, 0, 0, 4, 10), (2, 0, 5, 4, 5)], machine=4)
    assert starts(res) == {1: 0, 2: 0}
    assert res.end == [0, 5]


def test_zero_length_extra_pass_compresses_this_instants_arrivals():
    # M=4, all at 0.  A(4, run 0, est 10) [0,10); B(4, est 5) [10,15); C(2, run 1, est 1):
    # cands 0, 10, 15: 0 and 10 full -> [15,16).  A starts, ends: release; extra pass
    # compresses B and C (arrivals of the instant are ordinary queued jobs now, C4):
    # B -> [0,5) starts; C: cands 0, 5: at 0 B's 4 -> no; 5 -> [5,6).  t5: B ends
    # on time, C's booking begins -> 5.
    res = pool([(1, 0, 0, 4, 10), (2, 0, 5, 4, 5), (3, 0, 1, 2, 1)], machine=4)
    assert starts(res) == {1: 0, 2: 0, 3: 5}


def test_equal_submit_times_book_in_id_order_not_input_order():
    # three 6-proc jobs at 0 on 10, listed as ids 3, 1, 2: booked in (submit, id) order:
    # 1 [0,10), 2 [10,20), 3 [20,30).
    res = pool([(3, 0, 10, 6, 10), (1, 0, 10, 6, 10), (2, 0, 10, 6, 10)])
    assert starts(res) == {1: 0, 2: 10, 3: 20}


def test_compress_visits_each_queued_job_once_in_queue_order():
    # M=10.  A(10, run 5, est 10) [0,10).  B(5, est 10) at 1 -> [10,20).  C(10, est 5) at 2:
    # cands 2, 10, 20: 10 has B's 5 -> [20,25).  D(5, est 10) at 3: at 10 beside B -> [10,20).
    # t5: A ends, release; compress in queue order.  B: cands 5, 20, 25; at 5 the window
    # [5,15) holds D's 5 from 10: 5+5 <= 10 -> [5,15).  C: cands 5, 15, 20, 25; 5 (B) no,
    # 15 (D until 20) no, 20 = its old start -> kept.  D: cands 5, 15, 25; at 5 beside B
    # -> [5,15).  B and D start at 5; C stays at 20 although 15 is free now (each job is
    # visited once).
    res = pool([(1, 0, 5, 10, 10), (2, 1, 10, 5, 10), (3, 2, 5, 10, 5), (4, 3, 10, 5, 10)])
    assert starts(res) == {1: 0, 2: 5, 3: 20, 4: 5}


def test_dropped_jobs_are_not_events():
    # run -1, size 0, size 11 > 10 are left out; B still waits for A's release.
    res = pool(
        [(1, 0, 10, 6, 20), (2, 1, 5, 6, 5), (3, 3, -1, 1, 5), (4, 4, 5, 0, 5), (5, 5, 5, 11, 5)]
    )
    assert res.status == [
        "replayed",
        "replayed",
        "dropped_no_runtime",
        "dropped_no_size",
        "dropped_too_wide",
    ]
    assert starts(res) == {1: 0, 2: 10, 3: None, 4: None, 5: None}


# --------------------------------------------------------------------------------------
# Nodes
# --------------------------------------------------------------------------------------


def test_single_core_jobs_on_nodes_plan_on_totals():
    # every job is single cores spread freely: the plan is on the 10-core total (C8), so
    # the starts are the pool's; the allocator (ff) picks nodes at start.
    jobs = [njob(j, s, r, size, (1, 0, 0, 0), e) for j, s, r, size, e in ABC]
    res = replay_nodes(jobs, [(5, 0, 0, 0), (5, 0, 0, 0)], "ff")
    assert starts(res) == {1: 0, 2: 10, 3: 2}
    # A: 5 on node 0, 1 on node 1.  C at 2: 4 free on node 1.  B at 10: node 0 (5) + 1.
    assert res.alloc == [[(0, 5), (1, 1)], [(0, 5), (1, 1)], [(1, 4)]]


def test_booking_holds_nodes_and_bf_orders_on_window_minimum():
    # n0 (4 cores), n1 (4 cores, 1 gpu).  G (gpu only, est 5) at 0 -> n1 [0,5).
    # F (1 core + 1 gpu, est 10) at 0: no gpu free before 5 -> n1 [5,15).
    # X (2 cores, est 10) at 1, window [1,11): min free n0 (4,0) sum 4; n1 cores min(4, 3)
    # = 3, gpus 0: sum 3.  bf: n1 (3) before n0 (4), n1 hosts 1 -> X on n1 at 1 (on the
    # free amounts of now n1 would sum 4, a tie, and n0 would win).  ff: n0.
    # t5: G ends on time, F starts on its booked node n1 (beside X: 2 + 1 <= 4 cores).
    nodes = [(4, 0, 0, 0), (4, 1, 0, 0)]
    jobs = [
        njob(1, 0, 5, 1, (0, 1, 0, 0), 5),
        njob(2, 0, 10, 1, (1, 1, 0, 0), 10),
        njob(3, 1, 10, 1, (2, 0, 0, 0), 10),
    ]
    bf = replay_nodes(jobs, nodes, "bf")
    assert starts(bf) == {1: 0, 2: 5, 3: 1}
    assert bf.alloc == [[(1, 1)], [(1, 1)], [(1, 1)]]
    ff = replay_nodes(jobs, nodes, "ff")
    assert starts(ff) == {1: 0, 2: 5, 3: 1}
    assert ff.alloc[2] == [(0, 1)]


def test_compress_at_the_same_start_keeps_the_old_nodes():
    # n0, n1 (4 cores each), ff, all at 0.  A (2 cores, run 3, est 20) n0 [0,20).
    # C (2 cores, est 10) n0 [0,10).  B (4 cores, est 10) n1 [0,10).  J (4 cores, est 5):
    # cands 0, 10, 20: at 10 n0 has 2 (A) -> n1 [10,15).  t3: A ends: release, compress J:
    # at 3 n0 min 2 (C), n1 0 -> no; at 10 both free, ff would take n0, but 10 is not
    # earlier than the old start: the old booking (n1) is kept.  t10: J starts on n1.
    jobs = [
        njob(1, 0, 3, 1, (2, 0, 0, 0), 20),
        njob(2, 0, 10, 1, (2, 0, 0, 0), 10),
        njob(3, 0, 10, 1, (4, 0, 0, 0), 10),
        njob(4, 0, 5, 1, (4, 0, 0, 0), 5),
    ]
    res = replay_nodes(jobs, [(4, 0, 0, 0), (4, 0, 0, 0)], "ff")
    assert starts(res) == {1: 0, 2: 0, 3: 0, 4: 10}
    assert res.alloc == [[(0, 1)], [(0, 1)], [(1, 1)], [(1, 1)]]


def test_fixed_shape_booking_waits_for_both_nodes():
    # n0, n1 (4 cores).  A (4 cores, est 10) n0 [0,10).  W (2 nodes x 2 cores, est 5) at 1:
    # n0 busy until 10 -> [10,15) on n0 and n1.  S (2 cores, est 5) at 2: n1 free over
    # [2,7) -> n1 [2,7).  t10: A ends on time; W starts on both nodes.
    jobs = [
        njob(1, 0, 10, 1, (4, 0, 0, 0), 10),
        njob(2, 1, 5, 2, (2, 0, 0, 0), 5, req_nodes=2),
        njob(3, 2, 5, 1, (2, 0, 0, 0), 5),
    ]
    res = replay_nodes(jobs, [(4, 0, 0, 0), (4, 0, 0, 0)], "ff")
    assert starts(res) == {1: 0, 2: 10, 3: 2}
    assert res.alloc[1] == [(0, 1), (1, 1)]


# --------------------------------------------------------------------------------------
# Small cross-checks
# --------------------------------------------------------------------------------------


@st.composite
def small_pool(draw):
    m = draw(st.integers(1, 6))
    n = draw(st.integers(1, 8))
    rows = []
    for i in range(n):
        run = draw(st.integers(0, 8))
        rows.append(
            (
                i + 1,
                draw(st.integers(0, 10)),
                run,
                draw(st.integers(1, m)),
                draw(st.integers(0, 10)),
            )
        )
    return rows, m


@settings(max_examples=150, deadline=None)
@given(small_pool())
def test_actual_predictor_starts_at_first_booking(trace):
    rows, m = trace
    res = pool(rows, m, predictor="actual")
    fb = first_bookings(res)
    for jid, s, (_, sub, _, _, _) in zip(res.job_id, res.start, rows, strict=True):
        assert s >= sub
        # a zero-length job releases [s, s+1) though its pred 0 was "exact": jobs behind
        # it may be compressed; none starts later than first booked anyway.
        assert s <= fb[jid]


@settings(max_examples=150, deadline=None)
@given(small_pool())
def test_pool_totals_and_node_mode_agree_on_one_wide_node(trace):
    # pool of m; m one-core nodes (totals mode); one m-core node with each job fixed to
    # 1 node (node mode): the three plans are the same.
    rows, m = trace
    base = starts(pool(rows, m))
    tot = [njob(j, s, r, size, (1, 0, 0, 0), e) for j, s, r, size, e in rows]
    assert starts(replay_nodes(tot, [(1, 0, 0, 0)] * m, "bf")) == base
    one = [njob(j, s, r, size, (1, 0, 0, 0), e, req_nodes=1) for j, s, r, size, e in rows]
    assert starts(replay_nodes(one, [(m, 0, 0, 0)], "ff")) == base
