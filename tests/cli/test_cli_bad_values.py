"""Issue 31, items 2, 3 and 5: one bad value cannot empty a replay, guesses are said on
stderr, options a pair does not take are refused, and summary.json is strict JSON."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schedbench.cli.main import main


def _line(job: int, submit: int, run="10", procs: int = 1, group: int = 1, user: int = 1) -> str:
    return f"{job} {submit} 0 {run} {procs} -1 -1 {procs} 20 -1 1 {user} {group} 1 1 1 -1 -1\n"


def _swf(tmp_path, body: str, header: str = "; MaxProcs: 8\n", name: str = "t.swf"):
    path = tmp_path / name
    path.write_text(header + body)
    return path


def _replay(argv, capsys):
    status = main(["replay", *map(str, argv)])
    captured = capsys.readouterr()
    return status, captured.err


def _statuses(out) -> dict[int, str]:
    frame = pl.read_parquet(out / "jobs.parquet")
    return dict(zip(frame["job_id"].to_list(), frame["status"].to_list(), strict=True))


def _strict_json(path):
    """summary.json read by a parser that refuses NaN and Infinity (as JavaScript's and
    most other languages' JSON parsers do)."""

    def refuse(constant):
        raise AssertionError(f"{path} holds {constant}, which is not JSON")

    return json.loads(path.read_text(), parse_constant=refuse)


# -- item 2: one bad value --------------------------------------------------------------------


def test_a_negative_submit_in_an_swf_line_leaves_out_that_job_only(tmp_path, capsys):
    trace = _swf(tmp_path, _line(1, 0) + _line(2, -5) + _line(3, 4, procs=2) + _line(4, 6, procs=2))
    out = tmp_path / "run"
    status, err = _replay([trace, "-o", out], capsys)
    assert status == 0, err
    assert _statuses(out) == {1: "replayed", 2: "dropped_no_submit", 3: "replayed", 4: "replayed"}
    assert f"{trace}:3: negative submit time -5" in err
    notice = [line for line in err.splitlines() if "submit" in line]
    assert len(notice) == 1 and notice[0].startswith("schedbench: warning: ")
    summary = _strict_json(out / "summary.json")
    assert summary["jobs_replayed"] == 3 and summary["jobs_dropped"]["dropped_no_submit"] == 1


def test_several_negative_submits_are_counted_in_one_line(tmp_path, capsys):
    trace = _swf(tmp_path, _line(1, 0) + _line(2, -1) + _line(3, 4) + _line(4, -1))
    out = tmp_path / "run"
    status, err = _replay([trace, "-o", out], capsys)
    assert status == 0, err
    assert f"{trace}:3: negative submit time -1 (and 1 more line)" in err
    assert list(_statuses(out).values()).count("dropped_no_submit") == 2


def _parquet(tmp_path, submit, name="t.parquet"):
    n = 3 if submit is None else len(submit)
    path = tmp_path / name
    columns = {"job_id": pa.array(np.arange(1, n + 1)), "run": pa.array(np.full(n, 10)),
               "procs_req": pa.array(np.ones(n, dtype=np.int64))}
    if submit is not None:
        columns["submit"] = pa.array(submit, type=pa.int64())
    pq.write_table(pa.table(columns), path)
    return path


def test_a_null_submit_in_a_parquet_table_leaves_out_that_job_only(tmp_path, capsys):
    trace = _parquet(tmp_path, [0, None, 5, None, 7])
    out = tmp_path / "run"
    status, err = _replay([trace, "-m", "1x(cores=4)", "-o", out], capsys)
    assert status == 0, err
    assert f"{trace}: column submit: 2 null values (rows 2, 4)" in err
    assert _statuses(out) == {1: "replayed", 2: "dropped_no_submit", 3: "replayed", 4: "dropped_no_submit",
                              5: "replayed"}


def test_a_negative_submit_in_a_parquet_table_names_its_row(tmp_path, capsys):
    trace = _parquet(tmp_path, [0, 3, -8])
    out = tmp_path / "run"
    status, err = _replay([trace, "-m", "1x(cores=4)", "-o", out], capsys)
    assert status == 0, err
    assert f"{trace}: column submit: 1 negative value (row 3)" in err
    assert _statuses(out) == {1: "replayed", 2: "replayed", 3: "dropped_no_submit"}


@pytest.mark.parametrize(("column", "values", "message"), [
    # replayed as they were: job 3 "ended" at -9223372036854775808, before its start
    ("submit", pa.array([0, 1, 2**62], type=pa.int64()),
     "column 'submit', row 3: 4611686018427387904 is out of range (at most 999,999,999,999,999,999 either way, "
     "an SWF field's 18 digits)"),
    ("run", pa.array([5, 2**64 - 1, 5], type=pa.uint64()),
     "column 'run', row 2: 18446744073709551615 is out of range"),
    ("run", pa.array([5.0, -1e19, 5.0]), "column 'run', row 2: -1e+19 is out of range"),
    # read as two jobs 1 (an SWF log with them is refused)
    ("job_id", pa.array([1, 1, 2], type=pa.int64()), "duplicate job id 1 in rows 1 and 2"),
    ("job_id", pa.array([7, 3, 7], type=pa.int64()), "duplicate job id 7 in rows 1 and 3"),
    # two rows without an id were called "duplicate job id -1"
    ("job_id", pa.array([None, 3, None], type=pa.int64()), "no job id (null or -1) in rows 1 and 3: job ids must be "
     "unique"),
])
def test_a_parquet_value_an_swf_log_could_not_hold_is_refused(tmp_path, capsys, column, values, message):
    columns = {"job_id": pa.array([1, 2, 3]), "submit": pa.array([0, 1, 2]), "run": pa.array([5, 5, 5]),
               "procs_req": pa.array([1, 1, 1]), column: values}
    trace = tmp_path / "t.parquet"
    pq.write_table(pa.table(columns), trace)
    out = tmp_path / "run"
    status, err = _replay([trace, "-m", "1x(cores=4)", "-o", out], capsys)
    assert status == 1
    assert err.strip().startswith(f"schedbench: error: {trace}: {message}"), err
    assert len(err.strip().splitlines()) == 1 and not out.exists()


def test_a_parquet_table_without_a_submit_column_is_refused(tmp_path, capsys):
    trace = _parquet(tmp_path, None)
    out = tmp_path / "run"
    status, err = _replay([trace, "-m", "1x(cores=4)", "-o", out], capsys)
    assert status == 1
    assert err.strip().splitlines() == [f"schedbench: error: {trace}: no column submit (every job needs its submit time)"]
    assert not (out / "jobs.parquet").exists()


# -- item 3: guesses said, options refused --------------------------------------------------


def test_a_headerless_log_says_how_wide_it_made_the_machine(tmp_path, capsys):
    trace = _swf(tmp_path, _line(1, 0, procs=3) + _line(2, 1, procs=5), header="")
    status, err = _replay([trace, "-q", "-o", tmp_path / "run"], capsys)
    assert status == 0
    lines = [line for line in err.splitlines() if "widest job" in line]
    assert len(lines) == 1 and "5 processors" in lines[0] and "--machine" in lines[0]
    status, err = _replay([trace, "-q", "-m", "1x(cores=8)", "-o", tmp_path / "run2"], capsys)
    assert status == 0 and err == ""


def test_fractional_numbers_are_counted_in_one_warning(tmp_path, capsys):
    body = _line(1, 0) + _line(2, 1, run="12.0") + _line(3, 2, run="123.7") + _line(4, 3, run="5.25")
    trace = _swf(tmp_path, body)
    out = tmp_path / "run"
    status, err = _replay([trace, "-q", "-o", out], capsys)
    assert status == 0
    lines = [line for line in err.splitlines() if "fraction" in line]
    assert lines == [f"schedbench: warning: {trace}:4: 2 data lines hold numbers with a fraction "
                     "(the first here), truncated toward zero"]
    assert pl.read_parquet(out / "jobs.parquet").sort("job_id")["run"].to_list() == [10, 12, 123, 5]


@pytest.mark.parametrize(("argv", "named"), [
    (["-O", "accounts=a.toml"], "accounts"),
    (["--accounts", "a.toml"], "--accounts"),
    (["--account", "user"], "--account"),
])
def test_an_option_the_pair_does_not_take_is_a_usage_error(tmp_path, capsys, argv, named):
    trace = _swf(tmp_path, _line(1, 0))
    out = tmp_path / "run"
    status, err = _replay([trace, "-s", "easy", *argv, "-o", out], capsys)
    assert status == 2
    errors = err.strip().splitlines()
    assert len(errors) == 1 and named in errors[0] and "easy+ff" in errors[0], err
    assert not out.exists()


@pytest.mark.parametrize(("value", "words"), [("bad", "expected NODES:PRIORITY"), ("0-x:1", "nodes must be")])
def test_an_option_value_is_checked_before_the_trace_is_read(tmp_path, capsys, value, words):
    # the trace does not exist: the option's own error comes first, before any load or compile
    out = tmp_path / "run"
    status, err = _replay([tmp_path / "missing.swf", "-a", "keller", "-O", f"node_prio={value}", "-o", out], capsys)
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"schedbench: error: node_prio entry '{value}': "), err
    assert words in err and not out.exists()


def test_an_option_the_pair_takes_is_accepted(tmp_path, capsys):
    trace = _swf(tmp_path, _line(1, 0))
    status, err = _replay([trace, "-q", "-s", "priority", "--account", "user", "-o", tmp_path / "run"], capsys)
    assert status == 0, err


@pytest.mark.parametrize("given", [["--on-overrun", "kill"], ["-O", "on_overrun=kill"]])
def test_an_engine_option_is_taken_by_every_pair(tmp_path, capsys, given):
    # on_overrun belongs to the engine, not to a scheduler or an allocator: easy+ff takes it
    trace = _swf(tmp_path, _line(1, 0))
    status, err = _replay([trace, "-q", "-s", "easy", *given, "-o", tmp_path / "run"], capsys)
    assert status == 0, err


def test_unknown_account_ids_are_one_warning(tmp_path, capsys):
    trace = _swf(tmp_path, _line(1, 0, group=3) + _line(2, 1, group=4))
    accounts = tmp_path / "a.toml"
    accounts.write_text("[accounts.3]\ntarget = 2\n[accounts.7]\ntarget = 1\n[accounts.9]\ntarget = 1\n")
    status, err = _replay([trace, "-q", "-s", "priority", "--accounts", accounts, "-o", tmp_path / "run"], capsys)
    assert status == 0
    lines = [line for line in err.splitlines() if str(accounts) in line]
    assert len(lines) == 1 and "7, 9" in lines[0] and "group" in lines[0], err


def test_fair_share_on_unknown_groups_is_one_warning(tmp_path, capsys):
    trace = _swf(tmp_path, _line(1, 0, group=-1) + _line(2, 1, group=-1))
    status, err = _replay([trace, "-q", "-s", "sfs", "-o", tmp_path / "run"], capsys)
    assert status == 0
    lines = [line for line in err.splitlines() if "-1" in line]
    assert len(lines) == 1 and "group" in lines[0] and "account=user" in lines[0], err
    # the same log with account=user: the users are known, nothing to say
    status, err = _replay([trace, "-q", "-s", "sfs", "--account", "user", "-o", tmp_path / "run2"], capsys)
    assert status == 0 and err == ""
    # and EASY does not share by account: nothing to say either
    status, err = _replay([trace, "-q", "-o", tmp_path / "run3"], capsys)
    assert status == 0 and err == ""


# -- item 5: strict JSON ------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["1e400", "nan", "-inf"])
def test_a_non_finite_account_target_is_refused(tmp_path, capsys, value):
    trace = _swf(tmp_path, _line(1, 0, group=3) + _line(2, 1, group=4))
    accounts = tmp_path / "a.toml"
    accounts.write_text(f"[accounts.3]\ntarget = {value}\n[accounts.4]\ntarget = 1\n")
    out = tmp_path / "run"
    status, err = _replay([trace, "-q", "-s", "priority", "--accounts", accounts, "-o", out], capsys)
    assert status == 2
    assert err.strip().splitlines() == [
        f"schedbench: error: {accounts}: [accounts.3] target must be a finite number >= 0"]


@pytest.mark.parametrize("generator", ["esp", "soner", "eurora-like", "steffen", "chains"])
def test_a_negative_seed_is_a_usage_error(tmp_path, capsys, generator):
    # numpy's default_rng refused it inside the generator: an internal error, exit 1
    out = tmp_path / "w.parquet"
    extra = {"soner": ["--type", "I"], "eurora-like": ["--jobs", "5"]}.get(generator, [])
    status = main(["workload", generator, *extra, "--seed", "-1", "-o", str(out)])
    assert (status, capsys.readouterr().err.strip()) == (2, "schedbench: error: --seed must be >= 0, not -1")
    assert not out.exists()


@pytest.mark.parametrize("name", ["t.swf", "t.parquet"])
def test_an_empty_machine_is_refused_not_taken_for_none(tmp_path, capsys, name):
    # -m "$MACHINE" with the variable unset: the log's own machine was used, silently
    trace = _swf(tmp_path, _line(1, 0)) if name == "t.swf" else _parquet(tmp_path, [0, 1, 2])
    out = tmp_path / "run"
    status, err = _replay([trace, "-m", "", "-o", out], capsys)
    assert (status, err.strip()) == (
        2, "schedbench: error: an empty machine spec: give one such as 1024x(cores=8,gpus=2), or a node file")
    assert not out.exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["-s", "slurm", "-O", "bf_interval=99999999999999999999"],
     "option bf_interval='99999999999999999999': out of range (at most 999,999,999,999,999,999 either way)"),
    (["--period", "99999999999999999999"],
     "the decision period must be 0 to 999,999,999,999,999,999 seconds, not 99999999999999999999"),
])
def test_an_integer_past_int64_is_a_usage_error(tmp_path, capsys, argv, message):
    # each reached the kernels' int64 parameters: OverflowError, an internal error
    trace = _swf(tmp_path, _line(1, 0))
    out = tmp_path / "run"
    status, err = _replay([trace, "-q", *argv, "-o", out], capsys)
    assert (status, err.strip()) == (2, f"schedbench: error: {message}")
    assert not out.exists()


def test_running_out_of_memory_is_not_reported_as_a_bug(tmp_path, capsys, monkeypatch):
    # 'workload soner --jobs 10000000000' asked numpy for 74.5 GiB: "internal error (MemoryError
    # ...); run with --debug for the traceback and report it"
    from schedbench.workloads import soner

    def too_big(*args, **kwargs):
        raise MemoryError("Unable to allocate 74.5 GiB for an array with shape (10000000000,) and data type float64")

    monkeypatch.setattr(soner, "generate", too_big)
    status = main(["workload", "soner", "--type", "V", "--jobs", "10000000000", "--seed", "1",
                   "-o", str(tmp_path / "w.parquet")])
    assert (status, capsys.readouterr().err.strip()) == (1, "schedbench: error: out of memory (Unable to allocate "
                                                            "74.5 GiB for an array with shape (10000000000,) and "
                                                            "data type float64)")
