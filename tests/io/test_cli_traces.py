"""`schedbench traces ...` end to end: exit statuses, messages, the console entry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import test_fetch as served

from schedbench.cli.main import main
from schedbench.io import fetch

# The archive server and its fixtures live in test_fetch.py.
KTH, KTH_FILE = served.KTH, served.KTH_FILE
archive = served.archive
corrupt_archive = served.corrupt_archive
shared_swf = served.shared_swf
cache = served.cache  # autouse there, and here: SCHEDBENCH_CACHE stays in tmp_path

SHARED_LOGS = {
    "HPC2N-2002-2.2-cln.swf.gz": (202871, 240),
    "KTH-SP2-1996-2.1-cln.swf.gz": (28476, 100),
    "NASA-iPSC-1993-3.1-cln.swf.gz": (18239, 128),
    "SDSC-Par-1996-3.1-cln.swf.gz": (32135, 400),
}


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", sorted(SHARED_LOGS))
def test_info_on_a_shared_log(capsys, shared_swf, name):
    jobs, max_procs = SHARED_LOGS[name]
    code, out, err = run(capsys, "traces", "info", str(shared_swf / name))
    assert code == 0, err
    assert f"\njobs: {jobs}\n" in out
    assert f"\nMaxProcs: {max_procs}\n" in out
    assert "out-of-order submit times: 0" in out
    assert "fields -1 throughout: " in out and "think_time" in out
    assert "time span: " in out


def test_info_json(capsys, shared_swf):
    code, out, _ = run(capsys, "traces", "info", "--json", str(shared_swf / "SDSC-Par-1996-3.1-cln.swf.gz"))
    assert code == 0
    summary = json.loads(out)
    assert summary["jobs"] == 32135
    assert summary["header"]["max_procs"] == 400
    # The README: SDSC-Par has no requested processors or requested time.
    assert {"procs_req", "time_req"} <= set(summary["unknown_fields"])
    assert "run" not in summary["unknown_fields"]
    assert summary["time_span"]["first_submit"] == 0
    assert summary["time_span"]["days"] > 300


def test_info_reports_out_of_order_submits(capsys, tmp_path):
    row = " 1 1 4 -1 -1 4 60 -1 1 3 1 -1 1 1 -1 -1\n"
    path = tmp_path / "x.swf"
    path.write_text("; MaxProcs: 8\n" + f"1 100{row}2 50{row}3 60{row}")
    code, out, _ = run(capsys, "traces", "info", str(path))
    assert code == 0
    assert "jobs: 3\n" in out
    assert "out-of-order submit times: 1\n" in out


def test_info_on_a_malformed_log_is_one_line_exit_1(capsys, tmp_path):
    path = tmp_path / "bad.swf"
    path.write_text("1 2 3\n")
    code, out, err = run(capsys, "traces", "info", str(path))
    assert code == 1
    assert err.strip() == f"schedbench: error: {path}:1: 3 fields instead of 18: '1 2 3'"
    assert "Traceback" not in err


@pytest.mark.parametrize("name", ["w.parquet", "w"])
def test_info_on_a_job_table_says_what_it_is(capsys, tmp_path, name):
    # read as SWF text, its bytes made "w.parquet:1: a non-numeric token: 'PAR1\x15\x04...'"
    path = tmp_path / name
    assert main(["workload", "esp", "--seed", "1", "-o", str(path)]) == 0
    capsys.readouterr()
    code, out, err = run(capsys, "traces", "info", str(path))
    assert code == 2 and out == ""
    assert err.strip() == (f"schedbench: error: {path}: a Parquet job table; `traces info` summarises SWF logs "
                           "and sacct dumps (replay and predict read job tables)")


def test_info_debug_shows_the_exception(tmp_path):
    path = tmp_path / "bad.swf"
    path.write_text("1 2 3\n")
    from schedbench.io.swf import SWFError

    with pytest.raises(SWFError):
        main(["--debug", "traces", "info", str(path)])


def test_info_by_name_needs_a_fetch_first(capsys, cache):
    code, _, err = run(capsys, "traces", "info", KTH)
    assert code == 1
    assert f"schedbench traces fetch {KTH}" in err
    assert str(cache) in err  # the test cache, never the user's


def test_info_unknown_name_is_a_usage_error(capsys):
    code, _, err = run(capsys, "traces", "info", "no-such-log")
    assert code == 2
    assert "neither a file nor a log in the catalog" in err


def test_info_missing_file(capsys, tmp_path):
    code, _, err = run(capsys, "traces", "info", str(tmp_path / "none.swf"))
    assert code == 1
    assert "no such file" in err


def test_fetch_list_and_info_by_name(capsys, archive, cache):
    code, _, _ = run(capsys, "traces", "list")
    assert code == 0
    code, out, err = run(capsys, "traces", "fetch", KTH, "--mirror", archive.base_url, "--no-progress")
    assert code == 0, err
    assert "downloaded and verified" in out
    assert (cache / KTH_FILE).is_file()

    code, out, _ = run(capsys, "traces", "fetch", KTH, "--mirror", archive.base_url)
    assert code == 0
    assert "already cached and verified, nothing to do" in out
    assert archive.hits[KTH_FILE] == 1

    code, out, _ = run(capsys, "traces", "list")
    marked = [ln for ln in out.splitlines() if ln.startswith("*")]
    assert len(marked) == 1 and KTH in marked[0]

    code, out, _ = run(capsys, "traces", "info", KTH)
    assert code == 0
    assert "jobs: 28476\n" in out


def test_list_marks_nothing_in_an_empty_cache(capsys):
    code, out, _ = run(capsys, "traces", "list")
    assert code == 0
    assert "HPC2N-2002-2.2-cln" in out and "ANL-Intrepid-2009-1" in out
    assert not [ln for ln in out.splitlines() if ln.startswith("*")]


def test_fetch_corrupt_copy_is_rejected(capsys, corrupt_archive, cache):
    code, _, err = run(capsys, "traces", "fetch", KTH, "--mirror", corrupt_archive.base_url,
                       "--no-progress")
    assert code == 1
    assert "sha256 is" in err and "Traceback" not in err
    assert not cache.exists() or not any(cache.iterdir())


def test_fetch_usage_errors(capsys):
    code, _, err = run(capsys, "traces", "fetch", "no-such-log")
    assert code == 2 and "no log called 'no-such-log'" in err
    code, _, err = run(capsys, "traces", "fetch", KTH, "--mirror", "ftp://x/")
    assert code == 2 and "--mirror" in err
    with pytest.raises(SystemExit) as exit_info:
        main(["traces", "fetch", KTH, "--retries", "-2"])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["traces", "bogus"])
    assert exit_info.value.code == 2


def test_console_entry_fetches_against_a_mirror(archive, cache):
    env = {**os.environ, fetch.CACHE_ENV: str(cache)}
    script = Path(sys.executable).with_name("schedbench")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "schedbench"]
    proc = subprocess.run(
        [*command, "traces", "fetch", KTH, "--mirror", archive.base_url, "--backoff", "0"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "downloaded and verified" in proc.stdout
    assert (cache / KTH_FILE).is_file()


def test_module_entry_reports_errors_with_status_1(tmp_path):
    path = tmp_path / "bad.swf"
    path.write_text("1 x 3\n")
    proc = subprocess.run([sys.executable, "-m", "schedbench", "traces", "info", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.startswith("schedbench: error: ")
    assert "Traceback" not in proc.stderr
