"""bench/netti_study.py's tables: the schedulers a run chose, with the paper's rows
(Tables 2-3, CPH included) beside ours."""

from __future__ import annotations

import importlib.util

import pytest

from repo_paths import ROOT

_spec = importlib.util.spec_from_file_location("netti_study", ROOT / "bench" / "netti_study.py")
netti_study = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(netti_study)


def _cells(schedulers, base):
    """Made-up (s, q) per (scheduler, allocator): s = base + allocator index, q = 1."""
    return {(sc, a): (float(base + i), 1.0) for sc in schedulers for i, a in enumerate(netti_study.ALLOCATORS)}


def test_a_cph_run_gets_the_papers_cph_row_beside_it():
    cells = _cells(("cph",), 10)
    text = netti_study.table_md("apr2015", cells, "apr2015", ("cph",))
    rows = [r for r in text.splitlines() if r.startswith("|")]
    assert rows[2].startswith("| CPH | 10.0 | 1.0 | 11.0 | 1.0 | 12.0 |")
    # Table 2(a)'s CPH row: FF 10/4, BF 10/4, B 7/4, W 8/4, P-W 7/4, gains 30 % / 0 %
    assert rows[3] == "| *paper apr2015 CPH* | 10 | 4 | 10 | 4 | 7 | 4 | 8 | 4 | 7 | 4 | 30% / 0% | 30% / 0% | 30% / 0% |"
    assert len(rows) == 4  # no other scheduler's rows


@pytest.mark.parametrize("month, ff_bf", [("apr2014", ((251, 57), (271, 55))), ("sep2014", ((41, 27), (42, 28))),
                                          ("aug2014", ((8, 7), (7, 6)))])
def test_the_residuals_of_cph_are_against_its_own_row(month, ff_bf):
    (s_ff, q_ff), (s_bf, q_bf) = ff_bf
    cells = {("cph", a): (2.0 * s_ff, float(q_ff)) for a in netti_study.ALLOCATORS}
    cells["cph", "bf"] = (float(s_bf), 1.25 * q_bf)
    text = netti_study.residuals_md(month, cells, ("cph",))
    assert "CPH FF s +100%, CPH FF q +0%, CPH BF s +0%, CPH BF q +25%" in text
    assert "(3 of 4 within +-25 %)" in text


def test_the_default_schedulers_leave_cph_out():
    assert "cph" not in netti_study.SCHEDULERS
    text = netti_study.residuals_md("apr2015", _cells(netti_study.SCHEDULERS, 5))
    assert "CPH" not in text and "of 16 within +-25 %" in text


def test_cp_det_time_reaches_cph_alone_and_is_said_under_the_tables(monkeypatch, capsys):
    seen = {}

    def fake_continuous_md(months, seed, scale, calibrated, orders, predictor, schedulers, fitted=None, fitted_from=()):
        seen.update(cph=netti_study._options("cph"), sjf=netti_study._options("sjf"), schedulers=schedulers)
        return "(tables)"

    monkeypatch.setattr(netti_study, "continuous_md", fake_continuous_md)
    argv = ["--schedulers", "cph,sjf", "--months", "apr2015", "--orders", "file", "--loads", "", "--no-instances"]
    assert netti_study.main([*argv, "--cp-det-time", "0.25"]) == 0
    assert seen == {"cph": {"cp_det_time": 0.25}, "sjf": {}, "schedulers": ("cph", "sjf")}
    assert "CPH with cp_det_time=0.25 per solve." in capsys.readouterr().out
    # without the option cph takes its own default, and nothing is said
    assert netti_study.main(argv) == 0
    assert seen["cph"] == {} and "cp_det_time" not in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        netti_study.main([*argv, "--cp-det-time", "0"])
    assert stop.value.code == 2


def test_fitted_reports_replace_the_calibrated_values_month_by_month(monkeypatch, tmp_path, capsys):
    seen = {}

    def fake_continuous_md(months, seed, scale, calibrated, orders, predictor, schedulers, fitted=None, fitted_from=()):
        seen.update(fitted=fitted, calibrated=calibrated)
        return "(tables)"

    monkeypatch.setattr(netti_study, "continuous_md", fake_continuous_md)
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    first.write_text("Fitted with ...\n\n```python\nCALIBRATED = {\n    'aug2014': {'rate': 2},\n"
                     "    'sep2014': {'rate': 0.5},\n}\n```\n")
    second.write_text("```python\nCALIBRATED = {'sep2014': {'rate': 1}}\n```\n")
    argv = ["--months", "aug2014,sep2014", "--orders", "file", "--loads", "", "--no-instances"]
    assert netti_study.main([*argv, "--fitted", str(first), "--fitted", str(second)]) == 0
    assert seen == {"fitted": {"aug2014": {"rate": 2}, "sep2014": {"rate": 1}}, "calibrated": True}
    assert netti_study.main(argv) == 0
    assert seen["fitted"] is None
    with pytest.raises(SystemExit):
        netti_study.main([*argv, "--fitted", str(first), "--uncalibrated"])
    capsys.readouterr()


def test_continuous_md_heading_names_the_fitted_report(monkeypatch):
    calls = []

    def fake_generate_months(chain, seed, scale, calibrated=True, overrides=None):
        calls.append(overrides)
        return _Table(), {"machine": "m", "months": [{"name": m, "days": 3, "offered_load": {"gpus": 0.5, "cores": 0.25}}
                                                      for m in chain]}

    class _Table:
        n_jobs = 7

    monkeypatch.setattr(netti_study.eurora_like, "generate_months", fake_generate_months)
    monkeypatch.setattr(netti_study.machine, "from_spec", lambda spec: spec)
    text = netti_study.continuous_md(["apr2015"], 0, 0.1, True, (), "requested", ("sjf",),
                                     {"apr2015": {"rate": 3.0}}, ["fit.md"])
    assert calls == [{"apr2015": {"rate": 3.0}}]
    assert "calibrated; apr2015 as fitted in fit.md)" in text
