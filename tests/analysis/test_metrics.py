"""metrics: hand-made frames with answers worked out by hand, undefined cases, properties."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedbench.analysis import metrics

INT_COLS = (
    "job_id submit start end wait run size cores gpus mics mem estimate pred user group "
    "queue nodes_used"
).split()
TL_COLS = "time queue running used_cores used_gpus used_mics used_mem".split()
TOTALS = {"cores": 8, "gpus": 2, "mics": 0, "mem": 1000}


def jobs_frame(rows: list[dict]) -> pl.DataFrame:
    """Jobs frame with the replay's schema; missing ints default (start/end/wait: null)."""
    defaults = dict(cores=1, gpus=0, mics=0, mem=0, estimate=0, pred=0, user=1, group=1,
                    queue=1, nodes_used=1, status="replayed")
    full = []
    for i, r in enumerate(rows):
        d = {**defaults, "job_id": i + 1, **r}
        d.setdefault("estimate", d.get("run"))
        for c in ("start", "end", "wait"):
            d.setdefault(c, None)
        full.append(d)
    schema = {c: pl.Int64 for c in INT_COLS} | {
        "status": pl.String, "scheduler": pl.String, "allocator": pl.String}
    for d in full:
        d.setdefault("scheduler", "easy")
        d.setdefault("allocator", "ff")
    return pl.DataFrame(full, schema=schema)


def timeline_frame(**cols) -> pl.DataFrame:
    n = len(cols["time"])
    data = {c: cols.get(c, [0] * n) for c in TL_COLS}
    return pl.DataFrame(data, schema={c: pl.Int64 for c in TL_COLS})


def ran(submit, start, run, **kw) -> dict:
    return dict(submit=submit, start=start, end=start + run, wait=start - submit, run=run, **kw)


# The worked example.  Machine: 8 cores, 2 GPUs, 0 MICs, 1000 MiB.
#   job  submit start  end  wait  run  size cores gpus mem user  status
#    1      0     5   105     5  100     2    2    0  100   1   replayed   (4 cores 5..105)
#    2     10   105   135    95   30     1    4    1  200   2   replayed   (4 cores 105..135)
#    3     20    20    20     0    0     1    1    0    0   1   replayed   (run 0)
#    4     30   135   140   105    5     4    1    0   50   2   replayed   (4 cores 135..140)
#    5..8: one of each non-replayed status.
EXAMPLE = jobs_frame([
    ran(0, 5, 100, size=2, cores=2, mem=100, user=1),
    ran(10, 105, 30, size=1, cores=4, gpus=1, mem=200, user=2),
    ran(20, 20, 0, size=1, cores=1, mem=0, user=1),
    ran(30, 135, 5, size=4, cores=1, mem=50, user=2),
    dict(submit=40, run=-1, size=1, user=3, status="dropped_no_runtime"),
    dict(submit=50, run=10, size=0, user=3, status="dropped_no_size"),
    dict(submit=60, run=10, size=100, user=3, status="dropped_too_wide"),
    dict(submit=70, run=10, size=1, user=3, status="not_started"),
])

# Timeline: rows at 0, 10, 40, 100; each state holds until the next row.
#   time queue used_cores used_gpus used_mem
#     0     2      4         0        100     for 10 s
#    10     5      8         1        500     for 30 s
#    40     1      2         2       1000     for 60 s
#   100     0      0         0          0     (closes the interval: no weight)
TIMELINE = timeline_frame(time=[0, 10, 40, 100], queue=[2, 5, 1, 0],
                          used_cores=[4, 8, 2, 0], used_gpus=[0, 1, 2, 0],
                          used_mem=[100, 500, 1000, 0])

EMPTY_JOBS = jobs_frame([])
ONLY_DROPPED = jobs_frame([dict(submit=0, run=-1, size=1, status="dropped_no_runtime")])


def test_counts():
    assert metrics.counts(EXAMPLE) == {
        "input": 8, "replayed": 4, "dropped_no_runtime": 1, "dropped_no_size": 1,
        "dropped_too_wide": 1, "not_started": 1, "rejected_by_limit": 0, "dropped_no_submit": 0, "never_started": 0, "no_eligible_nodes": 0,
        "predecessor_not_run": 0,
        "dropped": 3,
    }
    assert metrics.counts(EMPTY_JOBS)["input"] == 0


def test_counts_reject_unknown_status():
    with pytest.raises(ValueError, match="bogus"):
        metrics.counts(jobs_frame([dict(submit=0, run=1, size=1, status="bogus")]))


def test_wait_stats():
    # replayed waits 5, 95, 0, 105 -> mean 205/4 = 51.25; sorted 0, 5, 95, 105:
    # median = (5 + 95)/2 = 50; p95: h = 3 * 0.95 = 2.85 -> 95 + 0.85 * (105 - 95) = 103.5;
    # p99: h = 2.97 -> 95 + 0.97 * 10 = 104.7; max 105 (job 4)
    assert metrics.wait_stats(EXAMPLE) == pytest.approx(
        {"mean": 51.25, "median": 50.0, "p95": 103.5, "p99": 104.7, "max": 105.0})
    assert metrics.mean_wait(EXAMPLE) == 51.25


def test_slowdown_excludes_run_zero():
    # run > 0 only: job 1 105/100 = 1.05, job 2 125/30 = 25/6, job 4 110/5 = 22
    # mean = (1.05 + 25/6 + 22)/3 = 9.072222...; job 3 (run 0) is left out
    assert metrics.slowdown(EXAMPLE) == pytest.approx((1.05 + 25 / 6 + 22) / 3)
    assert metrics.slowdown(EXAMPLE) == pytest.approx(9.0722222222)


def test_bounded_slowdown():
    # job 1 max(1, 105/100) = 1.05; job 2 125/30 = 25/6; job 3 max(1, 0/10) = 1;
    # job 4 max(1, 110/max(5, 10)) = 11 -> mean = 17.21666.../4 = 4.3041666...
    assert metrics.bounded_slowdown(EXAMPLE) == pytest.approx((1.05 + 25 / 6 + 1 + 11) / 4)
    assert metrics.bounded_slowdown(EXAMPLE) == pytest.approx(4.3041666667)


def test_makespan_utilisation_and_soner():
    # makespan = max end 140 - min submit 0 = 140 (min start would give 135)
    assert metrics.makespan(EXAMPLE) == 140
    # core-seconds: 2*2*100 + 1*4*30 + 1*1*0 + 4*1*5 = 400 + 120 + 0 + 20 = 540
    assert metrics.used_core_seconds(EXAMPLE) == 540
    # U = 540 / (8 * 140) = 0.48214...
    assert metrics.utilisation(EXAMPLE, TOTALS) == pytest.approx(540 / 1120)
    # theoretical run-time = 540 / 8 = 67.5 s; test run-time 140 s; 67.5/140
    assert metrics.theoretical_runtime(EXAMPLE, TOTALS) == 67.5
    assert metrics.soner_utilisation(EXAMPLE, TOTALS) == pytest.approx(67.5 / 140)


def test_offered_load():
    # submission span over replayed jobs: 30 - 0 = 30 s
    # cores 540 / (8 * 30) = 2.25; gpus 1*1*30 / (2 * 30) = 0.5; mics: capacity 0 -> None;
    # mem (2*100*100 + 1*200*30 + 0 + 4*50*5) / (1000 * 30) = 27000 / 30000 = 0.9
    assert metrics.offered_load(EXAMPLE, TOTALS) == pytest.approx(
        {"cores": 2.25, "gpus": 0.5, "mics": None, "mem": 0.9})


def test_queue_length():
    # time-weighted over [0, 100]: (2*10 + 5*30 + 1*60) / 100 = 230/100 = 2.3
    assert metrics.mean_queue_length(TIMELINE) == pytest.approx(2.3)
    # per instant: (2 + 5 + 1 + 0) / 4 = 2
    assert metrics.mean_queue_length_per_instant(TIMELINE) == 2.0
    assert metrics.max_queue_length(TIMELINE) == 5


def test_queue_length_unsorted_timeline_is_sorted_first():
    assert metrics.mean_queue_length(TIMELINE.reverse()) == pytest.approx(2.3)


def test_load_ratio():
    # cores (4*10 + 8*30 + 2*60) / (8 * 100) = 400/800 = 0.5
    # gpus (0*10 + 1*30 + 2*60) / (2 * 100) = 150/200 = 0.75; mics: capacity 0 -> None
    # mem (100*10 + 500*30 + 1000*60) / (1000 * 100) = 76000/100000 = 0.76
    assert metrics.load_ratio(TIMELINE, TOTALS) == pytest.approx(
        {"cores": 0.5, "gpus": 0.75, "mics": None, "mem": 0.76})


def test_per_user_wait_and_fairness():
    # user 1: waits 5, 0 -> 2.5 (2 jobs); user 2: 95, 105 -> 100 (2 jobs); user 3 never ran
    pu = metrics.per_user_wait(EXAMPLE)
    assert pu.to_dicts() == [
        {"user": 1, "mean_wait": 2.5, "jobs": 2},
        {"user": 2, "mean_wait": 100.0, "jobs": 2},
    ]
    assert pu.schema == pl.Schema({"user": pl.Int64, "mean_wait": pl.Float64, "jobs": pl.Int64})
    # Jain: (2.5 + 100)^2 / (2 * (2.5^2 + 100^2)) = 10506.25 / 20012.5 = 0.524984...
    assert metrics.fairness(EXAMPLE) == pytest.approx(10506.25 / 20012.5)


def test_fairness_extremes():
    # every user waits 0 -> 1 by convention; equal waits -> 1; only one of 4 users waits -> 1/4
    zero = jobs_frame([ran(0, 0, 5, size=1, user=u) for u in (1, 2)])
    assert metrics.fairness(zero) == 1.0
    equal = jobs_frame([ran(0, 7, 5, size=1, user=u) for u in (1, 2, 3)])
    assert metrics.fairness(equal) == pytest.approx(1.0)
    one = jobs_frame([ran(0, 9 if u == 4 else 0, 5, size=1, user=u) for u in (1, 2, 3, 4)])
    assert metrics.fairness(one) == pytest.approx(0.25)


def test_per_account_first_start_latency_counts_from_the_first_submit_of_any_job():
    # per_account: latency = first start - the account's first submit, taken over all of its
    # jobs (the code's first_submit groups the whole frame, not the replayed jobs): group 1's
    # dropped job was submitted at 0, its replayed one at 100 and started at 150 -> 150 - 0
    frame = jobs_frame([
        dict(submit=0, run=-1, size=1, group=1, status="dropped_no_runtime"),
        ran(100, 150, 10, size=1, group=1),
    ])
    acc = metrics.per_account(frame, "group", {})["accounts"]["1"]
    assert acc["first_start_latency"] == 150
    assert acc["jobs"] == 1  # "jobs" counts the replayed jobs only (docs/reference/outputs.md)


def test_per_account_leaves_out_an_account_without_a_replayed_job():
    frame = jobs_frame([
        dict(submit=0, run=-1, size=1, group=2, status="dropped_no_runtime"),
        ran(100, 150, 10, size=1, group=1),
    ])
    assert list(metrics.per_account(frame, "group", {})["accounts"]) == ["1"]


def test_per_account_wait_p95_is_the_linear_95th_percentile():
    # waits 0 and 100: h = (2 - 1) * 0.95 = 0.95 -> 0 + 0.95 * (100 - 0) = 95 (type 7, as the
    # other wait quantiles); mean 50
    frame = jobs_frame([ran(0, 0, 10, size=1, group=1), ran(0, 100, 10, size=1, group=1)])
    acc = metrics.per_account(frame, "group", {})["accounts"]["1"]
    assert acc["wait_p95"] == pytest.approx(95.0)
    assert acc["wait_mean"] == 50.0


@pytest.mark.parametrize("frame", [EMPTY_JOBS, ONLY_DROPPED], ids=["empty", "only-dropped"])
def test_undefined_without_replayed_jobs(frame):
    assert metrics.wait_stats(frame) == {"mean": None, "median": None, "p95": None, "p99": None, "max": None}
    assert metrics.slowdown(frame) is None
    assert metrics.bounded_slowdown(frame) is None
    assert metrics.makespan(frame) is None
    assert metrics.utilisation(frame, TOTALS) is None
    assert metrics.soner_utilisation(frame, TOTALS) is None
    assert metrics.offered_load(frame, TOTALS) == dict.fromkeys(metrics.RESOURCES)
    assert metrics.per_user_wait(frame).height == 0
    assert metrics.fairness(frame) is None


def test_only_run_zero_jobs():
    # slowdown has no job with run > 0; bsld = mean(max(1, 3/10), max(1, 0/10)) = 1;
    # makespan = 3 - 0 = 3 (job 1 waits 3, runs 0), core-seconds 0 -> U = 0
    frame = jobs_frame([ran(0, 3, 0, size=1), ran(2, 2, 0, size=1)])
    assert metrics.slowdown(frame) is None
    assert metrics.bounded_slowdown(frame) == 1.0
    assert metrics.makespan(frame) == 3
    assert metrics.utilisation(frame, TOTALS) == 0.0


def test_zero_makespan_and_zero_capacity():
    frame = jobs_frame([ran(5, 5, 0, size=1)])
    assert metrics.makespan(frame) == 0
    assert metrics.utilisation(frame, TOTALS) is None
    assert metrics.soner_utilisation(frame, TOTALS) is None
    # one submission instant -> no span for the offered load
    assert metrics.offered_load(frame, TOTALS) == dict.fromkeys(metrics.RESOURCES)
    no_cores = {**TOTALS, "cores": 0}
    assert metrics.utilisation(EXAMPLE, no_cores) is None
    assert metrics.theoretical_runtime(EXAMPLE, no_cores) is None


def test_degenerate_timelines():
    one = timeline_frame(time=[7], queue=[3], used_cores=[8])
    assert metrics.mean_queue_length(one) is None
    assert metrics.max_queue_length(one) == 3
    assert metrics.load_ratio(one, TOTALS) == dict.fromkeys(metrics.RESOURCES)
    empty = timeline_frame(time=[])
    assert metrics.mean_queue_length(empty) is None
    assert metrics.mean_queue_length_per_instant(empty) is None
    assert metrics.max_queue_length(empty) is None


def test_summary_is_json_serialisable():
    s = metrics.summary(EXAMPLE, TIMELINE, TOTALS)
    back = json.loads(json.dumps(s, allow_nan=False))
    assert back == s
    assert s["scheduler"] == "easy" and s["allocator"] == "ff"
    assert s["jobs_input"] == 8 and s["jobs_dropped_too_wide"] == 1
    assert s["wait_p95"] == pytest.approx(103.5)
    assert s["wait_p99"] == pytest.approx(104.7) and s["wait_max"] == 105.0
    assert s["makespan"] == 140 and s["queue_max"] == 5
    assert s["load_ratio_mics"] is None and s["offered_load_gpus"] == pytest.approx(0.5)
    assert s["users"] == 2
    for v in s.values():
        assert v is None or type(v) in (int, float, str)
        assert not (isinstance(v, float) and not math.isfinite(v))


def test_summary_without_replayed_jobs_is_json_serialisable():
    s = metrics.summary(ONLY_DROPPED, timeline_frame(time=[]), TOTALS)
    json.dumps(s, allow_nan=False)
    assert s["jobs_replayed"] == 0 and s["wait_mean"] is None and s["fairness_jain_wait"] is None


# -- properties ---------------------------------------------------------------------------

job_rows = st.lists(
    st.tuples(st.integers(0, 1000), st.integers(0, 500), st.integers(0, 300)),  # submit, wait, run
    min_size=1, max_size=30,
)


@settings(max_examples=50)
@given(job_rows)
def test_wait_stats_match_numpy_and_slowdowns_at_least_one(rows):
    frame = jobs_frame([ran(s, s + w, r, size=1, user=s % 3) for s, w, r in rows])
    waits = np.array([w for _, w, _ in rows], dtype=float)
    got = metrics.wait_stats(frame)
    assert got["mean"] == pytest.approx(waits.mean())
    assert got["median"] == pytest.approx(np.percentile(waits, 50, method="linear"))
    assert got["p95"] == pytest.approx(np.percentile(waits, 95, method="linear"))
    assert got["p99"] == pytest.approx(np.percentile(waits, 99, method="linear"))
    assert got["max"] == waits.max()
    assert metrics.bounded_slowdown(frame) >= 1.0
    sd = metrics.slowdown(frame)
    assert sd is None if all(r == 0 for *_, r in rows) else sd >= 1.0
    f = metrics.fairness(frame)
    n_users = len({s % 3 for s, *_ in rows})
    assert 1 / n_users - 1e-12 <= f <= 1 + 1e-12


@st.composite
def lane_schedules(draw):
    """A feasible schedule: `lanes` lanes of `lane_cap` cores; each lane runs its jobs one
    after another (with gaps), so the machine never uses more than lanes * lane_cap cores."""
    lanes = draw(st.integers(1, 4))
    lane_cap = draw(st.integers(1, 16))
    rows = []
    for lane in range(lanes):
        t = draw(st.integers(0, 50))
        for _ in range(draw(st.integers(0, 6))):
            submit = draw(st.integers(0, t))
            start = t + draw(st.integers(0, 20))
            run = draw(st.integers(0, 100))
            cores = draw(st.integers(1, lane_cap))
            size = draw(st.integers(1, lane_cap // cores))
            rows.append(ran(submit, start, run, size=size, cores=cores, user=lane))
            t = start + run
    return lanes * lane_cap, rows


def timeline_of(rows) -> pl.DataFrame:
    """The timeline a replay would record for a schedule: a row at every submit, start and
    end; a job runs in [start, end) and waits in [submit, start)."""
    times = sorted({t for r in rows for t in (r["submit"], r["start"], r["end"])})
    q = [sum(r["submit"] <= t < r["start"] for r in rows) for t in times]
    used = [sum(r["size"] * r["cores"] for r in rows if r["start"] <= t < r["end"])
            for t in times]
    return timeline_frame(time=times, queue=q, used_cores=used)


@settings(max_examples=50)
@given(lane_schedules())
def test_utilisation_at_most_one_and_matches_timeline(schedule):
    cap, rows = schedule
    frame = jobs_frame(rows)
    totals = {"cores": cap, "gpus": 0, "mics": 0, "mem": 0}
    u = metrics.utilisation(frame, totals)
    if not rows or metrics.makespan(frame) == 0:
        assert u is None
        return
    assert 0.0 <= u <= 1.0 + 1e-12
    assert metrics.soner_utilisation(frame, totals) == pytest.approx(u)
    # the timeline spans [min submit, max end], so the time-averaged core load ratio equals U
    tl = timeline_of(rows)
    assert metrics.load_ratio(tl, totals)["cores"] == pytest.approx(u)
    # Little's law on the recorded interval: mean queue length * span = total waiting time
    span = tl["time"].max() - tl["time"].min()
    assert metrics.mean_queue_length(tl) * span == pytest.approx(sum(r["wait"] for r in rows))
