"""Bad input never traces back (issue 14, item 2): random bytes and random near-SWF text fed
to every reader and to every CLI command that takes a file give one clean line on stderr and
exit 1 or 2 (or a normal run, exit 0, when the text happens to be valid)."""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedbench.cli.main import main
from schedbench.errors import SchedbenchError
from schedbench.io import eurora, jobs, machine, swf
from schedbench.plan import site

FUZZ = settings(max_examples=int(os.environ.get("SCHEDBENCH_FUZZ_EXAMPLES", "20")), deadline=None, suppress_health_check=[HealthCheck.too_slow])

_TOKENS = st.one_of(
    st.integers(-3, 200).map(str),
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from(["-1", "0", "1e3", "3.5", "-0.0", "nan", "x", "", "{1,2}", ";", "#", "\t", "1:ppn=2"]),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=4),
)
_LINES = st.one_of(
    st.lists(_TOKENS, min_size=18, max_size=18).map(" ".join),
    st.lists(_TOKENS, min_size=0, max_size=22).map(" ".join),
    st.sampled_from(["; MaxProcs: 16", ";MaxNodes: 4", "; MaxJobs: -3", "; Note: x", ""]),
)
NEAR_SWF = st.lists(_LINES, min_size=0, max_size=12).map(lambda ls: "\n".join(ls).encode("utf-8"))
VALID_START = st.lists(
    st.tuples(st.integers(0, 50), st.integers(-1, 40), st.integers(-1, 9)), min_size=1, max_size=6
).map(lambda rows: "\n".join(
    f"{i + 1} {s} -1 {r} {p} -1 -1 {p} {r} -1 1 1 1 1 1 1 -1 -1" for i, (s, r, p) in enumerate(rows)
).encode())
CONTENT = st.one_of(st.binary(max_size=400), NEAR_SWF, VALID_START.map(lambda b: b + b"\nnot a line"))


def _cli(argv: list[str]) -> tuple[int, str]:
    """``schedbench argv`` in-process: (exit status, stderr). An exception escaping main()
    is what a user would see as a traceback, so the test fails on it."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a printed warning is not a traceback
        try:
            status = main(argv)
        except Exception as exc:
            raise AssertionError(f"schedbench {' '.join(argv)} traced back") from exc
        except SystemExit as exc:  # argparse's usage errors
            status = exc.code
    return status, err.getvalue()


def _assert_clean(status, stderr: str, argv=()) -> None:
    assert status in (0, 1, 2), (argv, status, stderr)
    assert "Traceback" not in stderr and "internal error" not in stderr, (argv, stderr)
    if status:
        errors = [line for line in stderr.splitlines() if "error:" in line]
        assert len(errors) == 1, stderr
        assert len(errors[0]) < 2000, errors[0]


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def _argvs(d: Path, data: bytes) -> list[list[str]]:
    """Every command that reads a user's file, with ``data`` as that file."""
    ok_trace = _write(d, "ok.swf", b"1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n")
    swf_file = _write(d, "t.swf", data)
    gz_file = _write(d, "t.swf.gz", gzip.compress(data) if data[:1] != b"\x00" else b"\x1f\x8b" + data)
    pq_file = _write(d, "t.parquet", data)
    node_file = _write(d, "nodes", data)
    machines_file = _write(d, "w.swf.machines", data)
    toml_file = _write(d, "c.toml", data)
    results = d / "results"
    results.mkdir()
    _write(results, "runs.parquet", data)
    inst = _write(d, "hist_1_x.log_crypt", data)
    return [
        ["replay", str(swf_file), "-o", str(d / "o1")],
        ["replay", str(gz_file), "-m", "2x(cores=4)", "-o", str(d / "o2")],
        ["replay", str(pq_file), "-m", "2x(cores=4)", "-o", str(d / "o3")],
        ["replay", str(ok_trace), "-m", str(node_file), "-o", str(d / "o4")],
        ["replay", str(ok_trace), "-m", str(machines_file), "-o", str(d / "o5")],
        ["replay", str(ok_trace), "-s", "conservative", "--site", str(toml_file), "-o", str(d / "o6")],
        ["traces", "info", str(swf_file)],
        ["predict", str(swf_file)],
        ["sweep", str(toml_file), "-o", str(d / "s"), "--dry-run"],
        ["report", str(results), "-o", str(d / "r"), "-q"],
        ["traces", "eurora", str(inst), "--nodes", str(node_file), "--queues", str(toml_file), "-o", str(d / "e.parquet")],
    ]


@pytest.mark.slow
@FUZZ
@given(data=CONTENT)
def test_every_command_taking_a_file_fails_in_one_line(data):
    with tempfile.TemporaryDirectory() as tmp:
        for argv in _argvs(Path(tmp), data):
            status, stderr = _cli(argv)
            _assert_clean(status, stderr, argv)


def _reader_calls(d: Path, data: bytes):
    yield lambda: swf.parse_bytes(data, "x.swf")
    yield lambda: swf.read(_write(d, "x.swf.gz", b"\x1f\x8b" + data))
    yield lambda: jobs.read_parquet(_write(d, "x.parquet", data))
    yield lambda: machine.from_node_file(_write(d, "nodes", data))
    yield lambda: machine.parse(str(_write(d, "w.swf.machines", data)))
    yield lambda: site.load(_write(d, "site.toml", data))
    yield lambda: eurora.read_queues(_write(d, "system_queues", data))
    inst = _write(d, "hist_1_y.log_crypt", data)
    yield lambda: eurora.read_instances(inst, _write(d, "n2", b"0 16 0 0 33554432 0\n"), None)
    try:
        from schedbench.io import alea
    except ImportError:
        return
    yield lambda: alea.parse_bytes(data, "x.swf")
    yield lambda: alea.read_machines(_write(d, "x.swf.machines", data))


@FUZZ
@given(data=CONTENT)
def test_every_reader_raises_only_its_own_errors(data):
    with tempfile.TemporaryDirectory() as tmp:
        for call in _reader_calls(Path(tmp), data):
            try:
                call()
            except SchedbenchError as exc:
                assert "\n" not in str(exc).strip(), str(exc)


def test_unknown_parquet_column_is_one_line(tmp_path):
    import polars as pl

    path = tmp_path / "t.parquet"
    pl.DataFrame({"job_id": [1], "submit": [0], "bogus": [3]}).write_parquet(path)
    status, stderr = _cli(["replay", str(path), "-m", "2x(cores=4)", "-o", str(tmp_path / "o")])
    assert status == 1
    assert stderr.strip() == (
        f"schedbench: error: {path}: unknown job table columns: ['bogus']; expected a subset of {list(jobs.COLUMNS)}"
    )


def test_sweep_rejects_a_bad_generator_value_up_front(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('schedulers = ["easy"]\nallocators = ["ff"]\n[[workloads]]\ngenerator = "soner"\ntype = "VI"\n')
    status, stderr = _cli(["sweep", str(config), "-o", str(tmp_path / "s")])
    assert status == 2
    assert "option type = 'VI': choose from 'I', 'II', 'III', 'IV', 'V'" in stderr
    assert not (tmp_path / "s" / "runs.parquet").exists()
    config.write_text(
        'schedulers = ["easy"]\nallocators = ["ff"]\n[[workloads]]\ngenerator = "soner"\ntype = ["I", "IX"]\njobs = 5\n'
    )
    status, stderr = _cli(["sweep", str(config), "-o", str(tmp_path / "s2")])
    assert status == 2 and "'IX'" in stderr
    config.write_text('[[workloads]]\ngenerator = "soner"\ntype = "I"\njobs = "many"\n')
    status, stderr = _cli(["sweep", str(config), "-o", str(tmp_path / "s3")])
    assert status == 2 and "jobs = 'many': an integer" in stderr


def test_output_into_a_closed_pipe_stops_quietly(tmp_path):
    """`schedbench ... | head -1`: once the reader is gone the command stops without an
    error line, with the status of a process killed by SIGPIPE (141).  The dry run of a
    2,000-run sweep prints far more than a pipe buffer holds."""
    import subprocess
    import sys

    config = tmp_path / "big.toml"
    config.write_text(
        'schedulers = ["fcfs"]\nallocators = ["ff"]\npredictors = ["requested"]\n'
        f"seeds = {list(range(1, 2001))}\n"
        '[[workloads]]\nname = "esp"\ngenerator = "esp"\nvariant = "cpu-gpu"\nmachine = "64x(cores=8,gpus=2)"\n'
    )
    args = [sys.executable, "-m", "schedbench", "sweep", str(config), "-o", str(tmp_path / "out"), "--dry-run"]
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 141, err
    assert err == ""


@pytest.mark.parametrize("text", ["", "\n\n", "; Version: 2.2\n; Note: no size\n"])
def test_a_log_without_jobs_or_size_names_itself(tmp_path, text):
    # nothing to size the machine by: the error said "cannot size the machine" without the file
    trace = _write(tmp_path, "t.swf", text.encode())
    status, stderr = _cli(["replay", str(trace), "-o", str(tmp_path / "o")])
    assert status == 1
    assert stderr.strip() == (f"schedbench: error: {trace}: no jobs to replay (the file holds no job lines, "
                              "nor a MaxProcs or MaxNodes header line)")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("command", ["workload", "traces eurora"])
def test_a_table_output_that_cannot_be_written_is_named_and_leaves_no_file(tmp_path, request, command):
    if command == "workload":
        argv = ["workload", "esp", "--seed", "1"]
    else:
        argv = ["traces", "eurora", str(request.getfixturevalue("shared_traces") / "eurora" / "job_instances" / "50")]
    folder = tmp_path / "folder"
    folder.mkdir()
    status, stderr = _cli([*argv, "-o", str(folder)])
    # was '.folder.tmp: Is a directory', the table left written beside the folder
    assert (status, stderr.strip()) == (1, f"schedbench: error: {folder}: is a folder, not a file")
    missing = tmp_path / "no" / "t.parquet"
    status, stderr = _cli([*argv, "-o", str(missing)])
    # was pyarrow's "Failed to open local file '.../no/.t.parquet.tmp'. Detail: [errno 2] ..."
    assert (status, stderr.strip()) == (1, f"schedbench: error: {missing}: no such file or folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"] and not any(folder.iterdir())
