"""bench/netti_calibrate.py's command line: ``--grid`` replaces one parameter's candidate
values and the report's command line says what was run."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from repo_paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))  # netti_calibrate imports netti_study by name
_spec = importlib.util.spec_from_file_location("netti_calibrate", ROOT / "bench" / "netti_calibrate.py")
netti_calibrate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(netti_calibrate)


def test_grid_replaces_only_the_parameters_named():
    grid = netti_calibrate.parse_grid(["gpu_scale=1", "rate=0.5,2"])
    assert grid["gpu_scale"] == (1.0,) and grid["rate"] == (0.5, 2.0)
    assert {k: v for k, v in grid.items() if k not in ("gpu_scale", "rate")} == {
        k: v for k, v in netti_calibrate.GRID.items() if k not in ("gpu_scale", "rate")}
    assert netti_calibrate.parse_grid([]) == netti_calibrate.GRID


@pytest.mark.parametrize("item", ["speed=1", "rate=", "rate=fast"])
def test_grid_rejects_unknown_parameters_and_non_numbers(item):
    with pytest.raises(ValueError):
        netti_calibrate.parse_grid([item])


def test_report_names_the_grid_and_the_fixed_start():
    res = {(sc, a, m): 0.1 for sc in netti_calibrate.SCHEDULERS for a in netti_calibrate.ALLOCATORS for m in "sq"}
    text = netti_calibrate.report({"apr2014": {"rate": 2.0}}, {"apr2014": res}, 0.1, 0, "user-profile", 1.0,
                                  ["gpu_scale=1"], "start.md", 2)
    assert "--months apr2014 --sweeps 2 --fixed start.md --grid gpu_scale=1`" in text
    assert "| 16 of 16 |" in text


def test_report_of_a_fit_over_several_seeds_gives_each_seeds_loss():
    res = {(sc, a, m): 0.1 for sc in netti_calibrate.SCHEDULERS for a in netti_calibrate.ALLOCATORS for m in "sq"}
    text = netti_calibrate.report({"aug2014": {"rate": 1.0}}, {"aug2014": res}, 0.1, 4, "user-profile", 1.0,
                                  seeds=3, losses={"aug2014": [0.5, 0.7, 0.6]})
    assert "--seed 4 --months aug2014 --sweeps 1 --seeds 3`" in text
    assert "mean over seeds 4-6" in text and "- aug2014: 0.50, 0.70, 0.60 (mean 0.60)" in text
    one = netti_calibrate.report({"aug2014": {"rate": 1.0}}, {"aug2014": res}, 0.1, 4, "user-profile", 1.0)
    assert "--seeds" not in one and "seed by seed" not in one


def _stub_replays(monkeypatch, month, factor):
    """Replace the month's replays: ours = the paper's figures x factor(seed, overrides).
    Returns the list of (months, seed, overrides) each replay was asked for."""
    targets = netti_calibrate.paper_targets(month)
    calls = []

    def fake_generate(months, seed, scale, calibrated, overrides):
        calls.append((tuple(months), seed, {m: dict(p) for m, p in overrides.items()}))
        return factor(seed, overrides), {}

    def fake_cells(f, mach, meta, predictor, schedulers, allocators):
        return {month: {(sc, a): (targets[sc, a, "s"] * f, targets[sc, a, "q"] * f)
                        for sc in schedulers for a in allocators}}

    monkeypatch.setattr(netti_calibrate.eurora_like, "generate_months", fake_generate)
    monkeypatch.setattr(netti_calibrate, "continuous_cells", fake_cells)
    return calls


def test_a_candidates_loss_is_the_mean_over_the_seeds_and_its_residuals_the_first_seeds(monkeypatch):
    import math

    month = "apr2015"
    _stub_replays(monkeypatch, month, lambda seed, overrides: 1 + seed / 10)
    fitted, res, losses = netti_calibrate.fit(0.1, 1, "requested", 0, lambda msg: None, (month,),
                                              {month: {"rate": 1.0}}, seeds=3)
    assert fitted == {month: {"rate": 1.0}}
    assert losses[month] == pytest.approx([math.log(1.1), math.log(1.2), math.log(1.3)])
    assert list(res[month].values()) == pytest.approx([0.1] * len(netti_calibrate.paper_targets(month)))  # seed 1's


def test_months_before_the_fitted_one_that_the_report_omits_run_as_calibrated(monkeypatch):
    seen = _stub_replays(monkeypatch, "sep2014", lambda seed, overrides: 1.0)
    monkeypatch.setitem(netti_calibrate.eurora_like.CALIBRATED, "aug2014", {"rate": 0.75, "cpu_scale": 1.5})
    netti_calibrate.fit(0.1, 0, "requested", 0, lambda msg: None, ("sep2014",), {"sep2014": {"rate": 2.0}})
    (months, _, overrides), = seen
    assert months == ("aug2014", "aug2014", "sep2014")
    assert overrides["aug2014"]["rate"] == 0.75 and overrides["aug2014"]["cpu_scale"] == 1.5  # not the presets' 1
    assert overrides["sep2014"] == {"rate": 2.0}


def test_a_candidate_that_cannot_beat_the_best_stops_after_the_seeds_that_show_it(monkeypatch):
    month = "apr2015"
    # rate 1: ours 1.1 x the paper's; rate 2: 3 x
    seen = _stub_replays(monkeypatch, month, lambda seed, overrides: 1.1 if overrides[month]["rate"] == 1.0 else 3.0)
    fitted, _, losses = netti_calibrate.fit(0.1, 0, "requested", 1, lambda msg: None, (month,),
                                            {month: {"rate": 1.0}}, {"rate": (1.0, 2.0)}, seeds=3)
    calls = [(overrides[month]["rate"], seed) for _, seed, overrides in seen]
    assert fitted[month]["rate"] == 1.0 and len(losses[month]) == 3
    # ln 3 / 3 after one seed is already above the best mean, ln 1.1: rate 2 replays one seed
    assert calls == [(1.0, 0), (1.0, 1), (1.0, 2), (2.0, 0)]
