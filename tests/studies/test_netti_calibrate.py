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
