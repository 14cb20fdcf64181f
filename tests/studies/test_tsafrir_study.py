"""bench/tsafrir_study.py: the machine each log is replayed on (the paper's CTC-SP2 size,
``--procs``, ``--header-procs``), logs named by file or catalog name, the warm-up cut and
the bounded slowdown, and one-line errors."""

from __future__ import annotations

import gzip
import importlib.util
import shutil
from types import SimpleNamespace

import numpy as np
import pytest

from repo_paths import ROOT, TINY

_spec = importlib.util.spec_from_file_location("tsafrir_study", ROOT / "bench" / "tsafrir_study.py")
tsafrir_study = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tsafrir_study)


def test_ctc_sp2_runs_on_the_papers_512_processors_unless_told_otherwise():
    size = tsafrir_study.machine_size
    assert size("CTC-SP2-1996-3.1", 338, {}, False) == (512, "the paper's; header 338")
    assert size("CTC-SP2-1996-3.1", 338, {}, True) == (None, "header")
    assert size("CTC-SP2-1996-3.1", 338, {"CTC": 430}, False) == (430, "--procs; header 338")
    assert size("KTH-SP2-1996-2.1", 100, {"CTC": 430}, False) == (None, "header")


@pytest.mark.parametrize("item", ["CTC", "CTC=", "=512", "CTC=0", "CTC=x", "CTC=1.5"])
def test_procs_wants_a_name_and_a_positive_whole_number(item):
    with pytest.raises(ValueError):
        tsafrir_study.parse_procs([item])
    assert tsafrir_study.parse_procs(["CTC-SP2=512", "tiny=64"]) == {"CTC-SP2": 512, "tiny": 64}


def test_measures_leave_out_the_first_percent_by_termination_and_bound_the_slowdown():
    # 200 jobs submitted at 0, each running 5 s; job i starts at 1000 - i, so the two
    # that end first (the first 1 %) are jobs 199 and 198, which waited least
    n = 200
    start = 1000 - np.arange(n)
    result = SimpleNamespace(start=start, end=start + 5, table=SimpleNamespace(submit=np.zeros(n, np.int64)))
    wait, bsld, counted = tsafrir_study.measures(result)
    kept = start[:198]
    assert counted == 198
    assert wait == pytest.approx(kept.mean())
    assert bsld == pytest.approx(((kept + 5) / 10).mean())  # run 5 s < tau: divided by 10 s


def test_unreplayed_jobs_are_not_measured():
    start = np.array([-1, 0, 10, 20])
    result = SimpleNamespace(start=start, end=start + 100, table=SimpleNamespace(submit=np.zeros(4, np.int64)))
    assert tsafrir_study.measures(result)[2] == 3


def test_logs_by_file_and_by_catalog_name(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    with open(TINY, "rb") as src, gzip.open(cache / "CTC-SP2-1996-3.1-cln.swf.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)  # the tiny log standing in for CTC-SP2 in the cache
    monkeypatch.setenv("SCHEDBENCH_CACHE", str(cache))
    out = tmp_path / "study.md"
    assert tsafrir_study.main(["CTC-SP2-1996-3.1-cln", str(TINY), "--procs", "tiny=64", "-o", str(out)]) == 0
    text = out.read_text()
    assert "| CTC-SP2-1996-3.1 | 512 (the paper's; header 32) | 60 |" in text
    assert "| tiny | 64 (--procs; header 32) | 60 |" in text
    assert tsafrir_study.main(["CTC-SP2-1996-3.1-cln", "--header-procs", "-o", str(out)]) == 0
    assert "| CTC-SP2-1996-3.1 | 32 | 60 |" in out.read_text()


def test_a_log_not_at_hand_is_one_line_and_exit_1(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SCHEDBENCH_CACHE", str(tmp_path))
    assert tsafrir_study.main(["SDSC-SP2-1998-4.2-cln", "-o", str(tmp_path / "x.md")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "schedbench traces fetch SDSC-SP2-1998-4.2-cln" in err
    assert tsafrir_study.main([str(tmp_path / "missing.swf"), "-o", str(tmp_path / "x.md")]) == 1
    assert not (tmp_path / "x.md").exists()
