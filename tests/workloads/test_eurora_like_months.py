"""The continuous multi-month eurora-like workload: month windows, named bursts, scale,
independence of earlier months from later ones, the CLI."""

from __future__ import annotations

import numpy as np
import pytest

from schedbench.cli import main as cli
from schedbench.errors import UsageError
from schedbench.io import jobs
from schedbench.workloads import eurora_like as el

SCALE = 1 / 30  # one day per month: small and fast


@pytest.fixture(scope="module")
def four_months():
    return el.generate_months(el.CHRONOLOGICAL, seed=3, scale=SCALE, calibrated=False)


def test_months_are_back_to_back_windows(four_months):
    table, meta = four_months
    months = meta["months"]
    assert [m["name"] for m in months] == list(el.CHRONOLOGICAL)
    assert months[0]["start"] == 0
    for prev, nxt in zip(months, months[1:], strict=False):
        assert nxt["start"] == prev["end"]  # no gap: the backlog carries over
    assert all(m["end"] - m["start"] == 86400 * m["days"] and m["days"] == 1 for m in months)
    # every job falls in exactly one month, and each month holds the jobs it says
    counts = [int(((table.submit >= m["start"]) & (table.submit < m["end"])).sum()) for m in months]
    assert counts == [m["jobs"] for m in months] and sum(counts) == table.n_jobs == meta["n_jobs"]
    assert (np.diff(table.submit) >= 0).all() and (table.job_id == np.arange(1, table.n_jobs + 1)).all()


def test_jobs_per_day_are_the_papers(four_months):
    _, meta = four_months
    for m in meta["months"]:
        ordinary = m["jobs"] - m["burst_jobs"]
        assert ordinary == round(el.PRESETS[m["name"]]["jobs_per_day"] * m["days"])


def test_named_bursts(four_months):
    table, meta = four_months
    # The burst is drawn after the month's ordinary jobs, from the same stream: without it
    # the ordinary jobs are the same, so the difference is the burst.
    none = {name: {"burst_core_hours": 0.0} for name in el.NAMED_BURSTS}
    plain, _ = el.generate_months(el.CHRONOLOGICAL, seed=3, scale=SCALE, calibrated=False, overrides=none)
    for m in meta["months"]:
        sel = (table.submit >= m["start"]) & (table.submit < m["end"])
        psel = (plain.submit >= m["start"]) & (plain.submit < m["end"])
        extra = sel.sum() - psel.sum()
        assert extra == m["burst_jobs"]
        if m["name"] not in el.NAMED_BURSTS:
            assert extra == 0
            continue
        core_hours, at, cls = el.NAMED_BURSTS[m["name"]]
        start = m["start"] + int(at * 86400 * m["days"]) if at < 1 else None
        start = min(start, m["end"] - el.BURST_WINDOW)
        work = (table.units * table.unit_cores * table.run)[sel].sum() - (plain.units * plain.unit_cores * plain.run)[psel].sum()
        assert core_hours <= work / 3600 < core_hours + 16 * el.MAX_RUN / 3600
        win = (table.submit >= start) & (table.submit < start + el.BURST_WINDOW)
        pwin = (plain.submit >= start) & (plain.submit < start + el.BURST_WINDOW)
        assert win.sum() - pwin.sum() == extra  # all of it inside its half-hour window
        gpu_whole = (table.unit_cores == 16) & (table.unit_gpus == (2 if cls == "gpu" else 0))
        pgpu_whole = (plain.unit_cores == 16) & (plain.unit_gpus == (2 if cls == "gpu" else 0))
        assert (win & gpu_whole).sum() - (pwin & pgpu_whole).sum() == extra  # whole nodes of its class


def test_later_months_leave_earlier_ones_alone(four_months):
    table, meta = four_months
    changed, meta2 = el.generate_months(el.CHRONOLOGICAL, seed=3, scale=SCALE, calibrated=False,
                                        overrides={"sep2014": {"rate": 2.0, "gpu_scale": 5.0}})
    cut = meta["months"][2]["start"]
    before, before2 = table.submit < cut, changed.submit < cut
    for col in ("submit", "run", "units", "unit_cores", "unit_gpus", "estimate", "user"):
        assert np.array_equal(getattr(table, col)[before], getattr(changed, col)[before2])
    assert meta2["months"][2]["jobs"] > 1.8 * meta["months"][2]["jobs"]


def test_byte_reproducible_and_seeded(four_months):
    table, _ = four_months
    again, _ = el.generate_months(el.CHRONOLOGICAL, seed=3, scale=SCALE, calibrated=False)
    other, _ = el.generate_months(el.CHRONOLOGICAL, seed=4, scale=SCALE, calibrated=False)
    assert table.equals(again) and not table.equals(other)


def test_scale_shortens_months_and_keeps_the_rate():
    _, meta = el.generate_months(("aug2014",), seed=1, scale=0.1, calibrated=False)
    m = meta["months"][0]
    assert m["days"] == 3 and m["jobs"] == round(47967 / 31 * 3)


def test_calibrated_parameters_apply(monkeypatch):
    monkeypatch.setitem(el.CALIBRATED, "aug2014", {"rate": 0.5, "cpu_scale": 2.0})
    p = el.month_params("aug2014")
    assert p["rate"] == 0.5 and p["cpu_scale"] == 2.0 and p["gpu_scale"] == el.PRESETS["aug2014"]["gpu_scale"]
    assert el.month_params("aug2014", calibrated=False)["rate"] == 1.0
    _, meta = el.generate_months(("aug2014",), seed=1, scale=SCALE)
    assert meta["months"][0]["jobs"] == round(0.5 * 47967 / 31)


def test_cpu_scale_multiplies_the_cpu_mean():
    t, meta = el.generate(20000, np.random.default_rng(5), load=0.3, burstiness=0.0, cpu_scale=2.0)
    cpu = (t.unit_gpus == 0) & (t.unit_mics == 0)
    assert abs(t.run[cpu].mean() / (2 * el.CLASS_MEAN_RUN["cpu"]) - 1) < 0.15
    assert meta["class_mean_run_s"]["cpu"] == 2 * el.CLASS_MEAN_RUN["cpu"]
    with pytest.raises(UsageError):
        el.generate(10, np.random.default_rng(0), cpu_scale=20)


@pytest.mark.parametrize("kwargs", [dict(scale=0), dict(scale=1.5), dict(months=()), dict(months=("may2014",)),
                                    dict(overrides={"aug2014": {"speed": 2}})])
def test_rejects_bad_input(kwargs):
    with pytest.raises(UsageError):
        el.generate_months(**({"seed": 0, "scale": SCALE} | kwargs))


def test_cli_months(tmp_path, capsys):
    path = tmp_path / "months.parquet"
    assert cli.main(["workload", "eurora-like", "--months", "apr2014,aug2014", "--seed", "2", "--scale",
                     str(SCALE), "--uncalibrated", "-o", str(path)]) == 0
    table, meta = jobs.read_parquet(path)
    expected, _ = el.generate_months(("apr2014", "aug2014"), 2, SCALE, calibrated=False)
    assert table.equals(expected)
    assert [m["name"] for m in meta["months"]] == ["apr2014", "aug2014"] and meta["scale"] == SCALE
    capsys.readouterr()
    assert cli.main(["workload", "eurora-like", "--months", "apr2014", "--jobs", "10", "--seed", "1",
                     "-o", str(path)]) == 2
    assert "--jobs" in capsys.readouterr().err
    assert cli.main(["workload", "eurora-like", "--seed", "1", "--scale", "0.1", "--jobs", "5", "-o", str(path)]) == 2
    assert cli.main(["workload", "eurora-like", "--seed", "1", "-o", str(path)]) == 2
    assert cli.main(["workload", "eurora-like", "--months", "may2014", "--seed", "1", "-o", str(path)]) == 2
