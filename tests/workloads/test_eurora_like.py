"""The eurora-like workload generator: class mix, durations, estimates, arrivals, load, CLI."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from schedbench.cli import main as cli
from schedbench.errors import UsageError
from schedbench.io import jobs
from schedbench.io.machine import from_spec
from schedbench.workloads import eurora_like as el

MEANS = {"cpu": 2856, "mic": 3388, "gpu": 383}  # Netti et al. Table 1, s


def classes(table) -> np.ndarray:
    return np.where(table.unit_gpus > 0, "gpu", np.where(table.unit_mics > 0, "mic", "cpu"))


@pytest.fixture(scope="module")
def w5000():
    return el.generate(5000, np.random.default_rng(1))


@pytest.fixture(scope="module")
def w20000_smooth():
    # No bursts: independent durations, so the class means converge fast enough to test;
    # a low load spreads the arrivals over several days for the day/night test.
    return el.generate(20000, np.random.default_rng(2), load=0.3, burstiness=0.0)


def test_class_mix(w5000):
    table, meta = w5000
    cls = classes(table)
    assert len(table) == 5000
    assert abs((cls == "cpu").mean() - 0.228) < 0.03
    assert abs((cls == "gpu").mean() - 0.764) < 0.03
    assert 0.001 < (cls == "mic").mean() < 0.02
    # A job is one class: never both accelerators.
    assert not ((table.unit_gpus > 0) & (table.unit_mics > 0)).any()


def test_mean_durations_and_tail(w20000_smooth):
    table, _ = w20000_smooth
    cls = classes(table)
    for c, tol in (("cpu", 0.12), ("gpu", 0.12), ("mic", 0.5)):
        mean = table.run[cls == c].mean()
        assert abs(mean / MEANS[c] - 1) < tol, (c, mean)
    assert table.run.min() >= 1 and table.run.max() <= el.MAX_RUN
    # Heavy tails as the paper's duration classes: ~93 % under 1 h, under 1 % over 5 h.
    assert 0.90 < (table.run < 3600).mean() < 0.96
    assert 0.002 < (table.run > 5 * 3600).mean() < 0.012
    assert np.median(table.run[cls == "gpu"]) < 0.5 * MEANS["gpu"]


def test_capped_mean_solver():
    for mean, sigma in ((383, 2.0), (2856, 1.3), (20000, 0.5)):
        mu = el.solve_mu(mean, sigma)
        assert el.capped_lognormal_mean(mu, sigma, el.MAX_RUN) == pytest.approx(mean, rel=1e-9)
    with pytest.raises(ValueError):
        el.solve_mu(el.MAX_RUN + 1, 1.0)


def test_requests_look_like_eurora_and_fit(w5000):
    table, meta = w5000
    cap = from_spec(meta["machine"]).capacity
    assert cap.shape == (64, 4) and cap[:, 0].sum() == 1024 and cap[:, 1].sum() == 64 and cap[:, 2].sum() == 64
    unit = np.stack([table.unit_cores, table.unit_gpus, table.unit_mics, table.unit_mem], axis=1)
    for j in range(0, len(table), 7):
        asked = unit[j] > 0
        assert (cap[:, asked] // unit[j, asked]).min(axis=1).sum() >= table.units[j]
    assert (table.req_nodes == -1).all()
    assert 1.05 < table.units.mean() < 1.4  # the shared instances: 1.16
    assert np.array_equal(table.procs_req, table.units * table.unit_cores)
    assert set(np.unique(table.unit_cores)) <= {1, 2, 4, 5, 6, 8, 12, 14, 16}


def test_estimates_and_queues(w5000):
    table, meta = w5000
    assert (table.estimate >= table.run).all()
    assert np.array_equal(table.time_req, table.estimate)
    at_limit = np.isin(table.estimate, [1800, 14400, 28800]).mean()
    assert 0.7 < at_limit < 0.95
    assert (table.estimate / table.run).mean() > 2  # users over-estimate
    q = meta["queues"]
    expected = np.where(table.estimate <= 1800, q["debug"],
                        np.where(table.estimate <= 14400, q["parallel"], q["np_longpar"]))
    assert np.array_equal(table.queue, expected)
    assert meta["queue_expected_wait"]["debug"] == 3600


def test_determinism_per_seed():
    a, ma = el.generate(800, np.random.default_rng(7), load=0.5, burstiness=2)
    b, mb = el.generate(800, np.random.default_rng(7), load=0.5, burstiness=2)
    c, _ = el.generate(800, np.random.default_rng(8), load=0.5, burstiness=2)
    assert a.equals(b) and ma == mb
    assert not a.equals(c)
    assert np.array_equal(a.job_id, np.arange(1, 801))
    assert (np.diff(a.submit) >= 0).all()


def _bottleneck_load(table, spec) -> float:
    totals = from_spec(spec).totals.astype(float)
    span = float(table.submit.max() - table.submit.min())
    work = [np.sum(table.units * u * table.run, dtype=float)
            for u in (table.unit_cores, table.unit_gpus, table.unit_mics, table.unit_mem)]
    return max(w / t for w, t in zip(work, totals, strict=True)) / span


@pytest.mark.parametrize("load", [0.4, 0.8, 1.6])
def test_load_scales_arrivals(load):
    table, meta = el.generate(3000, np.random.default_rng(3), load=load)
    assert _bottleneck_load(table, meta["machine"]) == pytest.approx(load, rel=0.05)
    assert max(meta["offered_load"].values()) == pytest.approx(load)


def test_doubling_load_halves_the_span():
    a, _ = el.generate(3000, np.random.default_rng(4), load=0.5)
    b, _ = el.generate(3000, np.random.default_rng(4), load=1.0)
    # Same jobs (same seed), arrivals compressed two-fold.
    assert np.array_equal(np.sort(a.run), np.sort(b.run))
    ratio = (a.submit.max() - a.submit.min()) / (b.submit.max() - b.submit.min())
    assert ratio == pytest.approx(2.0, rel=0.05)


def test_day_night_cycle(w20000_smooth):
    table, meta = w20000_smooth
    assert meta["span_s"] > 3 * 86400
    hour = (table.submit % 86400) // 3600
    day = ((hour >= 10) & (hour < 18)).sum()
    night = ((hour >= 22) | (hour < 6)).sum()
    assert day > 2.5 * night  # density ratio ≈ 3.75 for amplitude 0.7
    # the peak is at 14:00: the circular mean of the time of day (a 1 h shift moves it 1 h)
    angle = 2 * np.pi * (table.submit % 86400) / 86400
    peak = np.angle(np.exp(1j * angle).mean()) % (2 * np.pi) * 24 / (2 * np.pi)
    assert peak == pytest.approx(14.0, abs=0.5)


def test_burstiness_clusters_submissions():
    def same_second_share(b):
        t, _ = el.generate(4000, np.random.default_rng(5), burstiness=b)
        _, counts = np.unique(t.submit, return_counts=True)
        return counts[counts > 1].sum() / len(t)

    none, some, many = same_second_share(0.0), same_second_share(1.0), same_second_share(4.0)
    # Without bursts only chance collisions share a second (~1 job per 14 s here).
    assert none < 0.2
    assert some > none + 0.25 and many > some + 0.1


def test_bursts_are_job_arrays():
    t, _ = el.generate(3000, np.random.default_rng(6), burstiness=3.0)
    # Jobs submitted in the same second by the same user share class, shape and estimate.
    key = t.submit * 100 + t.user
    _, inv, counts = np.unique(key, return_inverse=True, return_counts=True)
    grouped = counts[inv] > 1
    for col in (t.units, t.unit_cores, t.unit_gpus, t.unit_mics, t.unit_mem, t.estimate, t.executable):
        first = np.full(counts.size, -2)
        first[inv[::-1]] = col[::-1]  # value of the first job of each key
        assert (col[grouped] == first[inv][grouped]).mean() > 0.95


@pytest.mark.parametrize(
    "kwargs",
    [dict(n_jobs=0), dict(n_jobs=2.5), dict(load=0), dict(load=float("nan")), dict(burstiness=-1), dict(rng=1)],
)
def test_rejects_bad_input(kwargs):
    args = dict(n_jobs=10, rng=np.random.default_rng(0)) | kwargs
    with pytest.raises(UsageError):
        el.generate(**args)


def test_cli_end_to_end(tmp_path, capsys):
    path = tmp_path / "eurora.parquet"
    assert cli.main(["workload", "eurora-like", "--jobs", "500", "--seed", "1", "-o", str(path)]) == 0
    table, meta = jobs.read_parquet(path)
    assert len(table) == 500
    assert meta["machine"] == from_spec(el.MACHINE_SPEC).spec
    assert meta["generator"] == "eurora-like" and meta["seed"] == 1
    assert meta["load"] == el.DEFAULT_LOAD and meta["burstiness"] == el.DEFAULT_BURSTINESS
    expected, _ = el.generate(500, np.random.default_rng(1))
    assert table.equals(expected)
    assert cli.main(["workload", "eurora-like", "--jobs", "5", "--seed", "1", "--load", "-1", "-o", str(path)]) == 2


def test_cli_output_without_extension_replays(tmp_path):
    """`-o NAME` writes Parquet whatever the name; `replay NAME` reads it back by its magic
    bytes (it used to be parsed as SWF and fail on "PAR1")."""
    path = tmp_path / "burst"
    assert cli.main(["workload", "eurora-like", "--jobs", "60", "--seed", "1", "-o", str(path)]) == 0
    out = tmp_path / "run"
    assert cli.main(["replay", str(path), "-s", "easy", "-a", "ff", "-q", "-o", str(out)]) == 0
    assert pl.read_parquet(out / "jobs.parquet").height == 60


def test_class_mix_gpu_scale_and_jobs_per_day():
    """The mix follows class_share, gpu_scale multiplies the GPU mean (capped lognormal,
    so the sample mean is near it), jobs_per_day fixes the span and the load follows."""
    base, _ = el.generate(3000, np.random.default_rng(3), load=0.5)
    t, meta = el.generate(3000, np.random.default_rng(3), class_share={"cpu": 0.1, "mic": 0.0, "gpu": 0.9},
                          gpu_scale=3.0, jobs_per_day=1000)
    gpu = t.unit_gpus > 0
    assert 0.85 < gpu.mean() < 0.95 and (t.unit_mics == 0).all()
    assert 2 * base.run[base.unit_gpus > 0].mean() < t.run[gpu].mean() < 4.5 * el.CLASS_MEAN_RUN["gpu"]
    assert meta["span_s"] == 3 * 86400.0 and meta["jobs_per_day"] == 1000
    assert meta["load"] == max(meta["offered_load"].values())
    with pytest.raises(UsageError):
        el.generate(10, np.random.default_rng(0), gpu_scale=100)
    with pytest.raises(UsageError):
        el.generate(10, np.random.default_rng(0), class_share=(0, 0, 0))


def test_presets_from_the_cli(tmp_path):
    path = tmp_path / "sep.parquet"
    assert cli.main(["workload", "eurora-like", "--jobs", "2000", "--seed", "1", "--preset", "sep2014",
                     "-o", str(path)]) == 0
    table, meta = jobs.read_parquet(path)
    expected, _ = el.generate(2000, np.random.default_rng(1), **el.PRESETS["sep2014"])
    assert table.equals(expected) and meta["preset"] == "sep2014"
    assert meta["jobs_per_day"] == pytest.approx(77786 / 30)
    # an explicit load replaces the preset's jobs per day; explicit options override the preset
    assert cli.main(["workload", "eurora-like", "--jobs", "2000", "--seed", "1", "--preset", "sep2014",
                     "--load", "0.7", "--burstiness", "0", "-o", str(path)]) == 0
    table, meta = jobs.read_parquet(path)
    opts = {**el.PRESETS["sep2014"], "burstiness": 0.0, "load": 0.7}
    opts.pop("jobs_per_day")
    expected, _ = el.generate(2000, np.random.default_rng(1), **opts)
    assert table.equals(expected) and meta["load"] == 0.7
