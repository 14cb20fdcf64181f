"""Duration predictors: hand-made cases with known answers, offline and inside replays."""

from __future__ import annotations

import json
from typing import NamedTuple

import numpy as np
import polars as pl
import pytest

from repo_paths import KTH
from schedbench import predictors
from schedbench._jit import inline_kernel
from schedbench.cli.main import main
from schedbench.core.hooks import implements, learn, predict, revise, revises
from schedbench.core.layout import J_EST, J_RUN
from schedbench.engine.replay import replay
from schedbench.io import jobs
from schedbench.io.machine import from_spec

needs_kth = pytest.mark.skipif(not KTH.exists(), reason="shared KTH log not present")


def table(rows, **extra):
    """rows: (submit, wait, run, time_req, user, executable, queue, procs)."""
    a = np.array(rows, dtype=np.int64).reshape(-1, 8)
    cols = dict(
        submit=a[:, 0],
        wait=a[:, 1],
        run=a[:, 2],
        time_req=a[:, 3],
        user=a[:, 4],
        executable=a[:, 5],
        queue=a[:, 6],
        procs_req=a[:, 7],
    )
    cols.update(extra)
    return jobs.from_columns(**cols)


def offline(t, name, meta=None):
    return predictors.evaluate(t, name, meta).tolist()


# --------------------------------------------------------------------------- user-profile


def test_user_profile_exact_then_similar_then_fallback():
    t = table(
        [
            # submit wait run treq user exe queue procs
            (0, 0, 100, 1000, 1, 5, 0, 4),  # 0: nothing known: own estimate 1000
            (50, 0, 200, 1000, 1, 5, 0, 4),  # 1: job 0 still running (ends 100): 1000
            (100, 0, 30, 1000, 1, 5, 0, 4),  # 2: job 0 ended at 100 (same instant): 100
            (300, 0, 10, 1000, 1, 5, 0, 8),  # 3: new resources; similar: last ended is 1 (250): 200
            (300, 0, 10, 1000, 1, 5, 0, 4),  # 4: exact: ended 0 (100), 2 (130), 1 (250): 200
            (300, 0, 10, 1000, 1, 6, 0, 4),  # 5: other executable: nothing similar: 1000
            (300, 0, 10, -1, 2, 5, 0, 4),  # 6: other user, no estimate: queue default 5000
            (310, 0, 10, 1000, 1, 5, 0, 8),  # 7: exact profile of 3 (ended 310): 10
            (400, 0, 10, 5000, 1, 5, 0, 2),  # 8: similar: 7 ended last (320): 10
        ]
    )
    assert offline(t, "user-profile") == [1000, 1000, 100, 200, 200, 1000, 5000, 10, 10]


def test_user_profile_caps_at_the_queue_max_and_learns_only_at_the_end():
    t = table(
        [
            (0, 0, 900, 600, 1, 5, 1, 4),  # queue 1's largest estimate is 600
            (100, 0, 5, 600, 1, 5, 1, 4),  # job 0 runs until 900: still the fallback
            (900, 0, 5, 600, 1, 5, 1, 4),  # job 0 ran 900 (overran): capped at 600
            (901, 0, 0, 600, 1, 5, 1, 4),  # ended: 1 (105), 0 (900); 2 ends at 905: 600
            (901, 0, 7, 600, 1, 5, 1, 4),  # job 3 (0 s) ends at 901 after this arrival: 600
            (2000, 0, 1, 600, 1, 5, 1, 4),  # last ended: 4 (908): 7
        ]
    )
    assert offline(t, "user-profile") == [600, 600, 600, 600, 600, 7]


def test_user_profile_capped_never_predicts_beyond_the_request():
    """The same jobs as above: job 2 learns job 0's 900 s; user-profile caps it at queue
    1's max (600 here, as every estimate is 600), so give job 2 a request of 300: capped
    predicts 300, user-profile 600.  Jobs without an estimate keep the queue cap."""
    t = table(
        [
            (0, 0, 900, 600, 1, 5, 1, 4),
            (900, 0, 5, 300, 1, 5, 1, 4),  # learnt 900 (exact profile): 600 vs 300
            (900, 0, 5, -1, 1, 5, 1, 2),  # no estimate, similar profile: 900 -> 600 for both
        ]
    )
    assert offline(t, "user-profile") == [600, 600, 600]
    assert offline(t, "user-profile-capped") == [600, 300, 600]


def test_user_profile_falls_back_on_a_declared_queue_default_before_the_request():
    """Netti et al. §2.3: with nothing learnt, the queue's default wall time when the
    workload declares one (queue "a": 50), else the job's request (queue "b": 9000 capped
    at 700).  user-mean2 keeps the request first."""
    t = table([(0, 0, 100, 400, 1, 5, 0, 4), (0, 0, 100, 9000, 2, 5, 1, 4)])
    meta = {"queues": {"a": 0, "b": 1}, "queue_walltime": {"b": 700}, "queue_default_walltime": {"a": 50}}
    assert offline(t, "user-profile", meta) == [50, 700]
    assert offline(t, "user-profile-capped", meta) == [50, 700]
    assert offline(t, "user-mean2", meta) == [400, 700]


def test_user_profile_zero_length_job_teaches_later_arrivals_with_at_least_one_second():
    t = table([(0, 0, 0, 50, 1, -1, -1, 1), (1, 0, 5, 50, 1, -1, -1, 1)])
    assert offline(t, "user-profile") == [50, 1]


def test_user_profile_queue_limits_from_meta():
    t = table(
        [
            (0, 0, 100, -1, 1, 5, 0, 4),  # no estimate: default of queue "a" = 50
            (0, 0, 100, 9000, 1, 5, 1, 4),  # own estimate 9000 > queue "b"'s max 700: 700
            (200, 0, 100, 9000, 1, 5, 1, 4),  # learnt 100
            (200, 0, 100, -1, 2, 5, 1, 4),  # no default given for "b": its max, 700
        ]
    )
    meta = {
        "queues": {"a": 0, "b": 1},
        "queue_walltime": {"b": 700},
        "queue_default_walltime": {"a": 50},
    }
    assert offline(t, "user-profile", meta) == [50, 700, 100, 700]
    # Without meta: queue 0 has no estimate, its max is its largest run (100); queue 1's
    # largest estimate is 9000.
    assert offline(t, "user-profile") == [100, 9000, 100, 9000]


def test_unknown_user_has_no_profile():
    t = table([(0, 0, 10, 100, -1, -1, -1, 1), (50, 0, 10, 100, -1, -1, -1, 1)])
    assert offline(t, "user-profile") == [100, 100]
    assert offline(t, "user-mean2") == [100, 100]


def test_prepare_without_meta_gives_keys_and_memo():
    t = table([(0, 0, 10, 100, 1, -1, -1, 1), (5, 0, 10, 100, 1, -1, -1, 2)])
    state = predictors.prepare(t, "user-profile")
    keys, memo = state.keys, state.memo
    assert predictors.KINDS[state.kind] is predictors.UserProfile and keys.dtype == np.int64
    assert keys.shape == (2, 4) and keys[0, 0] != keys[1, 0] and keys[0, 1] == keys[1, 1]
    assert memo.shape == (3, 1) and (memo == -1).all()


# --------------------------------------------------------------------------- user-mean2


def test_user_mean2():
    t = table(
        [
            (0, 0, 100, 500, 1, -1, -1, 1),  # nothing known: own estimate 500
            (10, 0, 50, 500, 1, -1, -1, 1),  # nothing ended: 500
            (61, 0, 10, 500, 1, -1, -1, 1),  # one ended (50): 50
            (101, 0, 10, 500, 1, -1, -1, 1),  # ended in order 1, 2, 0: last two 100, 10: 55
            (200, 0, 10, 40, 1, -1, -1, 1),  # last two 10 (job 3), 100: 55, capped at 40
            (200, 0, 10, 500, 2, -1, -1, 1),  # other user: own estimate
            (300, 0, 10, -1, 3, -1, -1, 1),  # no estimate: the queue max (largest estimate 500)
        ]
    )
    assert offline(t, "user-mean2") == [500, 500, 50, 55, 40, 500, 500]
    capped = table([(0, 0, 400, 1000, 1, -1, -1, 1), (500, 0, 1, 300, 1, -1, -1, 1)])
    assert offline(capped, "user-mean2") == [1000, 300]
    odd = table(
        [(0, 0, 1, 9, 1, -1, -1, 1), (0, 0, 2, 9, 1, -1, -1, 1), (5, 0, 1, 9, 1, -1, -1, 1)]
    )
    assert offline(odd, "user-mean2") == [9, 9, 2]  # (2 + 1) / 2 rounded half up


def test_requested_and_actual_offline():
    t = table([(0, 0, 10, 100, 1, -1, -1, 1), (5, -1, 20, -1, 1, -1, -1, 1)])
    assert offline(t, "requested") == [100, 20]
    assert offline(t, "actual") == [10, 20]


# --------------------------------------------------------------------------- replays


@pytest.mark.parametrize("name", ["user-profile", "user-mean2"])
def test_replay_without_waiting_matches_the_offline_evaluation(name):
    rng = np.random.default_rng(7)
    n = 300
    submit = np.sort(rng.integers(0, 5000, n))
    run = rng.integers(0, 400, n)
    t = jobs.from_columns(
        submit=submit,
        wait=np.zeros(n, np.int64),
        run=run,
        time_req=np.where(rng.random(n) < 0.8, run + rng.integers(0, 300, n), -1),
        user=rng.integers(0, 4, n),
        executable=rng.integers(-1, 2, n),
        queue=rng.integers(0, 2, n),
        procs_req=rng.integers(1, 3, n),
    )
    # Room for every job at once: each starts at its submission, as in the log.  (easy
    # rather than fcfs, whose starts are the same here: the easy loop, which serves every
    # online predictor, is one other tests compile anyway.)
    result = replay(t, from_spec(f"{2 * n}x(cores=1)"), "easy", "ff", name)
    assert (result.start == t.submit).all()
    assert result.pred.tolist() == predictors.evaluate(t, name).tolist()
    assert (result.pred >= 1).all()


def test_replay_learns_at_the_simulated_end_not_the_historical_one():
    # One core: in the log job 1 ran at once (ended at 4); in the replay it waits for job
    # 0 and runs 10..13, so job 2 (arriving at 5) cannot know it yet.
    t = table(
        [
            (0, 0, 10, 100, 1, -1, -1, 1),
            (1, 0, 3, 100, 1, -1, -1, 1),
            (5, 0, 2, 100, 1, -1, -1, 1),
            (14, 0, 1, 100, 1, -1, -1, 1),
        ]
    )
    # easy: on one core with one-core jobs it starts what fcfs does, and its loop is the
    # one the other replays here compile (fcfs would be one more)
    result = replay(t, from_spec("1x(cores=1)"), "easy", "ff", "user-profile")
    assert result.start.tolist() == [0, 10, 13, 15]
    assert result.pred.tolist() == [100, 100, 100, 3]  # job 3: last ended is job 1 (13)
    assert offline(t, "user-profile") == [100, 100, 3, 10]  # log ends: 10, 4, 7, 15


# --------------------------------------------------------------------------- CLI

TINY_SWF = """\
; MaxProcs: 8
1   0   0 100 2 -1 -1 2  500 -1 1 1 -1 -1 -1 -1 -1 -1
2  10   0  50 2 -1 -1 2  500 -1 1 1 -1 -1 -1 -1 -1 -1
3 200   0 120 2 -1 -1 2  500 -1 1 1 -1 -1 -1 -1 -1 -1
4 300  -1  40 4 -1 -1 4 1000 -1 1 1 -1 -1 -1 -1 -1 -1
5 400   0  60 4 -1 -1 4  300 -1 1 2 -1 -1 -1 -1 -1 -1
"""


def test_predict_on_a_tiny_swf(tmp_path, capsys):
    """By hand (one queue, whose largest estimate is 1000; historical ends 100, 60, 320,
    340 (wait -1: submit + run), 460):

    * requested: 500, 500, 500, 1000, 300 -> errors 400, 450, 380, 960, 240;
    * user-profile: job 1 and 2 nothing ended yet: 500, 500; job 3 at 200: last ended of
      its profile is job 1 (end 100): 100; job 4 (4 procs) at 300: similar (user 1), last
      ended job 1 (job 3 ends at 320): 100; job 5 (user 2): its estimate 300 -> errors
      400, 450, 20 (under), 60, 240;
    * user-mean2: 500, 500; job 3: last two ended 100 (end 100) and 50 (end 60): 75; job
      4: the same, 75; job 5: 300 -> errors 400, 450, 45 (under), 35, 240.
    """
    path = tmp_path / "tiny.swf"
    path.write_text(TINY_SWF)
    assert main(["predict", str(path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got == {
        "requested": {"mae_s": 486.0, "median_ae_s": 400.0, "under_share": 0.0},
        "user-profile": {"mae_s": 234.0, "median_ae_s": 240.0, "under_share": 0.2},
        "user-mean2": {"mae_s": 234.0, "median_ae_s": 240.0, "under_share": 0.2},
        "user-profile-capped": {"mae_s": 234.0, "median_ae_s": 240.0, "under_share": 0.2},
        # offline nothing runs, so nothing is corrected: user-mean2's predictions
        "tsafrir": {"mae_s": 234.0, "median_ae_s": 240.0, "under_share": 0.2},
        "tsafrir-steps": {"mae_s": 234.0, "median_ae_s": 240.0, "under_share": 0.2},
    }
    assert main(["predict", str(path), "--limit", "2"]) == 0
    text = capsys.readouterr().out
    assert "2 jobs with a run time" in text and "user-profile" in text and "actual" not in text


def test_predict_on_a_parquet_table_with_queue_meta(tmp_path, capsys):
    t = table([(0, 0, 100, -1, 1, 5, 0, 4), (200, 0, 100, -1, 1, 5, 0, 4)])
    path = tmp_path / "w.parquet"
    jobs.write_parquet(t, path, {"queues": {"a": 0}, "queue_default_walltime": {"a": 50}})
    assert main(["predict", str(path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["user-profile"] == {"mae_s": 25.0, "median_ae_s": 25.0, "under_share": 0.5}


@needs_kth
def test_predict_on_kth(capsys):
    assert main(["predict", str(KTH), "--limit", "5000", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert set(got) == {"requested", "user-profile", "user-mean2", "user-profile-capped", "tsafrir", "tsafrir-steps"}
    assert got["tsafrir"] == got["tsafrir-steps"] == got["user-mean2"]
    for e in got.values():
        assert e["mae_s"] > 0 and e["median_ae_s"] >= 0 and 0 <= e["under_share"] <= 1
    # Users over-estimate: their estimates almost never fall short, and the history-based
    # predictors have a much smaller typical (median) error.
    assert got["requested"]["under_share"] < 0.05
    assert got["user-profile"]["median_ae_s"] < got["requested"]["median_ae_s"]
    assert got["user-mean2"]["median_ae_s"] < got["requested"]["median_ae_s"]


@needs_kth
def test_cli_replay_with_user_profile(tmp_path, capsys):
    out = tmp_path / "run"
    assert (
        main(["replay", str(KTH), "--predictor", "user-profile", "--limit", "2000", "-o", str(out)])
        == 0
    )
    assert "predictor user-profile" in capsys.readouterr().out
    frame = pl.read_parquet(out / "jobs.parquet")
    ran = frame.filter(pl.col("status") == "replayed")
    assert ran["pred"].min() >= 1
    assert json.loads((out / "summary.json").read_text())["predictor"] == "user-profile"


def test_the_built_in_predictors_are_registered_under_their_names():
    from schedbench import registry

    assert registry.predictor_names()[:5] == ["requested", "actual", "user-profile", "user-mean2",
                                             "user-profile-capped"]
    t = table([(0, 0, 10, 20, 1, -1, 0, 1), (5, 0, 7, 30, 1, -1, 0, 2)])
    states = {name: predictors.prepare(t, name) for name in registry.predictor_names()[:7]}
    kinds = {name: type(state).__name__ if isinstance(state, predictors.JobColumn)
             else predictors.KINDS[state.kind].__name__ for name, state in states.items()}
    assert kinds == {"requested": "JobColumn", "actual": "JobColumn", "user-profile": "UserProfile",
                     "user-mean2": "UserMean2", "user-profile-capped": "UserProfile", "tsafrir": "Tsafrir",
                     "tsafrir-steps": "TsafrirSteps"}


# --------------------------------------------------------------------------- tsafrir


def _correction_case():
    """Two processors.  Job 0 (user 1) teaches user 1 a 10 s run; job 1 (user 1, asks
    1,000 s) is predicted 10 s from its start at 20 but runs 500; at 40 job 2 (2
    processors, the head) and job 3 (1 processor, 200 s) arrive."""
    return table(CORRECTION_ROWS)


CORRECTION_ROWS = [
    # submit wait run treq user exe queue procs
    (0, 0, 10, 1000, 1, -1, 0, 2),
    (20, 0, 500, 1000, 1, -1, 0, 1),
    (40, 0, 100, 100, 2, -1, 0, 2),
    (40, 0, 200, 200, 3, -1, 0, 1),
]


@pytest.mark.parametrize("scheduler", ["easy", "easy-sjbf"])
def test_tsafrir_corrects_an_outlived_prediction(scheduler):
    """user-mean2: job 1's predicted end (30) has passed at 40, so it counts as ending
    now, the head's shadow time is 40 and job 3 may not backfill.  tsafrir: job 1 is now
    believed to end at its estimate (20 + 1,000), so job 3 (ends 240) backfills at 40.
    The reported prediction stays the one made at submission."""
    t = _correction_case()
    plain = replay(t, from_spec("1x(cores=2)"), scheduler, "ff", "user-mean2")
    fixed = replay(t, from_spec("1x(cores=2)"), scheduler, "ff", "tsafrir")
    assert plain.start.tolist() == [0, 20, 520, 620]
    assert fixed.start.tolist() == [0, 20, 520, 40]
    assert plain.pred.tolist() == fixed.pred.tolist() == [1000, 10, 100, 200]


@pytest.mark.parametrize("scheduler", ["easy", "easy-sjbf"])
def test_tsafrir_steps_raises_an_outlived_prediction_by_the_first_step_left(scheduler):
    """As above, with job 3 asking (and running) 40 s, then 100 s.  tsafrir-steps: at 40
    job 1 (predicted 10 s, 20 s elapsed) is believed to run 10 + 60 s, to 90, so the head's
    shadow time is 90: job 3 backfills when it ends by then (40 + 40), not when it ends at
    140; user-mean2 backfills neither (shadow 40), tsafrir both (shadow 1,020)."""
    for run, steps, plain, fixed in ((40, 40, 620, 40), (100, 620, 620, 40)):
        t = table(CORRECTION_ROWS[:3] + [(40, 0, run, run, 3, -1, 0, 1)])
        got = {p: replay(t, from_spec("1x(cores=2)"), scheduler, "ff", p).start.tolist()[3]
               for p in ("user-mean2", "tsafrir", "tsafrir-steps")}
        assert got == {"user-mean2": plain, "tsafrir": fixed, "tsafrir-steps": steps}, run


def test_tsafrir_predicts_as_user_mean2_offline():
    t = _correction_case()
    assert offline(t, "tsafrir") == offline(t, "user-mean2")


# --------------------------------------------------------------------------- state types


def test_the_online_predictors_share_one_state_type_so_one_loop():
    """numba compiles a replay loop per predictor state type: the online built-ins are
    packed into PredictorState with the same array types, so one loop per scheduler serves
    them all (and one more requested and actual, which share JobColumn)."""
    import numba

    from schedbench.core import loop

    t = _correction_case()
    types = {name: numba.typeof(predictors.prepare(t, name))
             for name in ("user-profile", "user-mean2", "user-profile-capped", "tsafrir", "tsafrir-steps")}
    assert len(set(types.values())) == 1, types
    assert numba.typeof(predictors.prepare(t, "requested")) == numba.typeof(predictors.prepare(t, "actual"))
    for name in ("user-profile", "tsafrir"):
        replay(t, from_spec("1x(cores=2)"), "easy", "ff", name)
    # the easy loops compiled (or loaded) so far in this process, per (state class, plug-in classes)
    easy = [f for key, f in loop._LOOPS.items() if key[0].__module__ == "schedbench.schedulers.easy"]
    packed = [sum(sig[1] == types["tsafrir"] for sig in f.signatures) for f in easy]
    assert max(packed) == 1


def test_pack_refuses_what_it_cannot_pack():
    with pytest.raises(ValueError):
        predictors.pack(GuessFromEstimate(np.zeros(2, np.int64)))
    with pytest.raises(TypeError, match="int64"):
        predictors.pack(predictors.UserMean2(np.zeros((2, 4), np.int32), np.zeros((1, 2), np.int64)))


class GuessFromEstimate(NamedTuple):
    """A plug-in's own predictor state, not packed: the core reaches it through its
    class's hooks, in a loop compiled for it alone (the one loop of easy this test adds
    on purpose).  seen int64 (2,): jobs learnt from, and the sum of their run times."""

    seen: np.ndarray


@implements(predict, GuessFromEstimate)
@inline_kernel
def _guess_predict(pred, jobs, j, now):
    return max(jobs[j, J_EST] // 100, 1)


@implements(learn, GuessFromEstimate)
@inline_kernel
def _guess_learn(pred, jobs, j, now):
    pred.seen[0] += 1
    pred.seen[1] += jobs[j, J_RUN]


@implements(revises, GuessFromEstimate)
@inline_kernel
def _guess_revises(pred):
    return True


@implements(revise, GuessFromEstimate)
@inline_kernel
def _guess_revise(pred, jobs, j, now):
    return jobs[j, J_EST]


def test_an_unpacked_plug_in_predictor_still_replays():
    """_correction_case's jobs are predicted 10, 10, 1 and 2 s (estimate / 100).  Job 1
    (runs 500) outlives its prediction; revised to its estimate (ends 1,020) it is not
    ending at 40, so job 3 (1 core, predicted 2 s) backfills beside it then, as under
    tsafrir; every end is learnt."""
    from schedbench import registry

    seen = np.zeros(2, np.int64)
    registry.register_predictor("guess-from-estimate", lambda table, meta: GuessFromEstimate(seen),
                                "estimate / 100, corrected to the estimate", replace=True)
    try:
        got = replay(_correction_case(), from_spec("1x(cores=2)"), "easy", "ff", "guess-from-estimate")
    finally:
        registry.unregister("guess-from-estimate")
    assert got.start.tolist() == [0, 20, 520, 40]
    assert got.pred.tolist() == [10, 10, 1, 2]
    assert seen.tolist() == [4, 10 + 500 + 100 + 200]
