"""SWF reader and writer: hand-made logs for every quirk, and the shared PWA logs."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from repo_paths import SHARED
from schedbench.errors import DataError
from schedbench.io import jobs, swf

SHARED_SWF = SHARED / "traces" / "swf"

# file -> (jobs, MaxProcs)
SHARED_LOGS = {
    "HPC2N-2002-2.2-cln.swf.gz": (202871, 240),
    "KTH-SP2-1996-2.1-cln.swf.gz": (28476, 100),
    "NASA-iPSC-1993-3.1-cln.swf.gz": (18239, 128),
    "SDSC-Par-1996-3.1-cln.swf.gz": (32135, 400),
}


def line(job_id, submit=0, wait=1, run=10, procs=4, *, status=1, rest=None) -> str:
    """One SWF data line; ``rest`` overrides fields 6..18."""
    tail = rest or [-1, -1, procs, 60, -1, status, 3, 1, -1, 1, 1, -1, -1]
    return " ".join(str(x) for x in [job_id, submit, wait, run, procs, *tail]) + "\n"


def write_text(tmp_path: Path, text: str, name: str = "log.swf") -> Path:
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode("latin-1")))
    else:
        path.write_text(text, encoding="latin-1")
    return path


def shared(name: str) -> Path:
    path = SHARED_SWF / name
    if not path.is_file():
        pytest.skip(f"shared trace {path} is absent")
    return path


# --- header ---------------------------------------------------------------------------


def test_header_variants(tmp_path):
    text = (
        ";Version: 2.2\n"  # no space after ';'
        "; Computer: IBM SP2\n"
        ";   Installation: KTH\n"  # right-aligned keyword
        "; MaxJobs: 28490\n"  # more than the data lines: counted before cleaning
        "; MaxRecords: 28476\n"
        "; UnixStartTime: 843480031\n"
        "; TimeZoneString: Europe/Stockholm\n"
        "; StartTime: Mon Sep 23 14:00:31 CEST 1996\n"
        "; EndTime:   Fri Aug 29 10:55:01 CEST 1997\n"
        "; MaxNodes: 400 (48 interactive, 352 batch)\n"  # trailing text after the number
        ";MaxProcs:100\n"
        "; Information: http://www.pdc.kth.se/\n"
        ";              http://www.cs.huji.ac.il/labs/parallel/workload/\n"
        "; MaxQueues: 2\n"
        "; Queue:  0  interactive    \n"
        "; Queue:  1  batch\n"
        "; Partition: 1 DEFAULT\n"
        "; Acknowledgement: someone\n"  # not an SWF keyword: kept as is
        ";\n"
        "; Note: THIS IS A CLEANED VERSION OF THE LOG!\n"
        ";       The filter used to produce it was\n"
        ";         job<=14 (14 jobs removed)\n"
        + line(1)
    )
    table, h = swf.read(write_text(tmp_path, text))
    assert len(table) == 1
    assert h.version == "2.2"
    assert h.computer == "IBM SP2"
    assert h.installation == "KTH"
    assert (h.max_jobs, h.max_records) == (28490, 28476)
    assert h.unix_start_time == 843480031
    assert h.time_zone_string == "Europe/Stockholm"
    assert h.start_time == "Mon Sep 23 14:00:31 CEST 1996"
    assert h.end_time == "Fri Aug 29 10:55:01 CEST 1997"
    assert h.max_nodes == 400
    assert h.raw["max_nodes"] == "400 (48 interactive, 352 batch)"
    assert h.max_procs == 100
    assert h.information == "http://www.pdc.kth.se/\nhttp://www.cs.huji.ac.il/labs/parallel/workload/"
    assert h.max_queues == 2
    assert [(q.number, q.name) for q in h.queues] == [(0, "interactive"), (1, "batch")]
    assert [(p.number, p.name) for p in h.partitions] == [(1, "DEFAULT")]
    assert h.extra == {"Acknowledgement": "someone"}
    assert h.notes == [
        "THIS IS A CLEANED VERSION OF THE LOG!\nThe filter used to produce it was\njob<=14 (14 jobs removed)"
    ]
    assert h.machine_procs() == 100


def test_header_round_trip_keeps_oddities(tmp_path):
    text = (
        ";Version: 2\n"
        ";Foo: bar\n"  # unknown keyword
        "; MaxNodes: unknown\n"  # a number field that is not a number
        "; MaxProcs: 400 (48,\n"
        ";            352)\n"  # wrapped explanation after a number
        + line(1)
    )
    table, h = swf.read(write_text(tmp_path, text))
    assert h.extra == {"Foo": "bar"}
    assert h.max_nodes is None and h.raw["max_nodes"] == "unknown"
    assert h.max_procs == 400
    t2, h2 = swf.read(swf.write(table, h, tmp_path / "out.swf"))
    assert h2 == h
    assert t2.equals(table)


def test_no_header(tmp_path):
    table, h = swf.read(write_text(tmp_path, line(1) + line(2, submit=5)))
    assert len(table) == 2
    assert h == swf.SWFHeader()
    assert h.machine_procs() is None


def test_header_only_gives_empty_table(tmp_path):
    table, h = swf.read(write_text(tmp_path, "; Version: 2\n; MaxProcs: 8\n"))
    assert len(table) == 0
    assert h.max_procs == 8


# --- data lines -----------------------------------------------------------------------


def test_all_18_fields_in_order(tmp_path):
    values = list(range(101, 119))
    table, _ = swf.read(write_text(tmp_path, " ".join(map(str, values)) + "\n"))
    assert [int(getattr(table, f)[0]) for f in jobs.SWF_FIELDS] == values


def test_decimals_are_truncated_toward_zero(tmp_path):
    text = "1 0.9 12.5 3600.99 4 -1.5 2.0 4 60 -1 1 3 1 -1 1 1 -1 -1\n"
    table, _ = swf.read(write_text(tmp_path, text))
    assert int(table.submit[0]) == 0
    assert int(table.wait[0]) == 12
    assert int(table.run[0]) == 3600
    assert int(table.cpu_avg[0]) == -1
    assert int(table.mem_used[0]) == 2


def test_negative_numbers_and_raw_quirks(tmp_path):
    # run -1: cancelled before starting; status 137: a raw exit code, not 0/1/5.
    text = line(1, run=-1, status=137) + line(2, wait=-1, procs=-1, status=-1)
    table, _ = swf.read(write_text(tmp_path, text))
    assert table.run.tolist() == [-1, 10]
    assert table.status.tolist() == [137, -1]
    assert table.procs_alloc.tolist() == [4, -1]
    assert table.wait.tolist() == [1, -1]


def test_blank_lines_crlf_and_tabs(tmp_path):
    text = "; Version: 2\r\n\r\n" + line(1).replace(" ", "\t").replace("\n", "\r\n") + "\n   \n" + line(2)
    table, h = swf.read(write_text(tmp_path, text))
    assert table.job_id.tolist() == [1, 2]
    assert h.version == "2"


def test_request_columns_are_derived(tmp_path):
    text = line(1, procs=4) + "2 5 1 10 8 -1 -1 -1 -1 -1 1 3 1 -1 1 1 -1 -1\n"
    table, _ = swf.read(write_text(tmp_path, text))
    assert table.units.tolist() == [4, 8]  # procs_req, else procs_alloc
    assert table.estimate.tolist() == [60, 10]  # time_req, else run


def test_units_take_procs_req_only_when_it_is_positive(tmp_path):
    # docs/reference/job-table.md: units = procs_req "if > 0, else procs_alloc"; a procs_req
    # of 0 (field 8) is not a request, so the 4 allocated processors (field 5) stand.
    text = "1 0 1 10 4 -1 -1 0 60 -1 1 1 1 1 1 1 -1 -1\n"
    table, _ = swf.read(write_text(tmp_path, text))
    assert int(table.procs_req[0]) == 0
    assert table.units.tolist() == [4]


def test_wrong_field_count_names_file_line_and_text(tmp_path):
    path = write_text(tmp_path, "; Version: 2\n" + line(1) + "2 0 1 1\n")
    with pytest.raises(swf.SWFError) as info:
        swf.read(path)
    message = str(info.value)
    assert str(path) in message
    assert ":3:" in message
    assert "'2 0 1 1'" in message
    assert "4 fields instead of 18" in message
    assert isinstance(info.value, DataError)


def test_too_many_fields(tmp_path):
    path = write_text(tmp_path, line(1).rstrip("\n") + " 7\n")
    with pytest.raises(swf.SWFError, match=r":1: 19 fields instead of 18"):
        swf.read(path)


@pytest.mark.parametrize("token", ["x", "1e5", "-", "3a", "12345678901234567890"])
def test_non_numeric_token(tmp_path, token):
    bad = f"2 0 {token} 1 1 -1 -1 1 1 -1 1 1 1 1 1 1 -1 -1"
    path = write_text(tmp_path, line(1) + bad + "\n")
    with pytest.raises(swf.SWFError) as info:
        swf.read(path)
    assert f"{path}:2:" in str(info.value)
    assert bad in str(info.value)


@pytest.mark.parametrize(("tokens", "what"), [
    ("12345678901234567890", "a number of more than 18 digits (past int64's reach of sums)"),
    ("-1234567890123456789.5", "a number of more than 18 digits (past int64's reach of sums)"),
    ("123456789012345678", None),  # 18 digits: read
    ("x 12345678901234567890", "a non-numeric token"),  # the first bad token is the one named
    ("12345678901234567890 x", "a number of more than 18 digits (past int64's reach of sums)"),
])
def test_a_too_long_number_is_not_called_non_numeric(tmp_path, tokens, what):
    bad = f"2 0 {tokens} " + " ".join(["1"] * (16 - len(tokens.split())))
    path = write_text(tmp_path, line(1) + bad + "\n")
    if what is None:
        assert swf.read(path)[0].n_jobs == 2
        return
    with pytest.raises(swf.SWFError) as info:
        swf.read(path)
    assert str(info.value) == f"{path}:2: {what}: {bad!r}"


def test_duplicate_ids_name_both_lines(tmp_path):
    path = write_text(tmp_path, "; Version: 2\n" + line(7) + line(8, submit=3) + line(7, submit=9))
    with pytest.raises(swf.SWFError, match=r"duplicate job id 7 on lines 2 and 4"):
        swf.read(path)


def test_backwards_submit_times_are_sorted_and_counted(tmp_path):
    text = line(1, submit=10) + line(2, submit=5) + line(3, submit=20) + line(5, submit=20) + line(4, submit=20) + line(6, submit=1)
    table, h = swf.read(write_text(tmp_path, text))
    assert h.out_of_order == 2  # 10 -> 5 and 20 -> 1
    assert table.submit.tolist() == [1, 5, 10, 20, 20, 20]
    assert table.job_id.tolist() == [6, 2, 1, 3, 4, 5]  # ties broken by job id
    assert table.run.tolist() == [10] * 6


# --- files ----------------------------------------------------------------------------


def test_gzip_and_plain_agree(tmp_path):
    text = "; MaxProcs: 8\n" + line(1) + line(2, submit=4)
    t1, h1 = swf.read(write_text(tmp_path, text, "a.swf"))
    t2, h2 = swf.read(write_text(tmp_path, text, "a.swf.gz"))
    assert t1.equals(t2) and h1 == h2


def test_truncated_gzip(tmp_path):
    data = gzip.compress("".join(line(k, submit=k) for k in range(1, 2000)).encode())
    path = tmp_path / "cut.swf.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(swf.SWFError, match=r"cut\.swf\.gz: truncated or corrupt gzip"):
        swf.read(path)


def test_corrupt_gzip(tmp_path):
    data = bytearray(gzip.compress("".join(line(k, submit=k) for k in range(1, 2000)).encode()))
    data[20:40] = b"\xff" * 20
    path = tmp_path / "bad.swf.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(swf.SWFError, match=r"bad\.swf\.gz: truncated or corrupt gzip"):
        swf.read(path)


def test_missing_file_is_a_data_error(tmp_path):
    with pytest.raises(swf.SWFError, match="cannot read"):
        swf.read(tmp_path / "nope.swf")


def test_inputs_are_validated(tmp_path):
    with pytest.raises(TypeError):
        swf.read(42)
    with pytest.raises(TypeError):
        swf.write("not a table", None, tmp_path / "x.swf")
    with pytest.raises(TypeError):
        swf.parse_bytes("text, not bytes")


def test_write_then_read(tmp_path):
    table = jobs.from_columns(
        submit=np.array([0, 0, 5]), run=np.array([10, -1, 3]), procs_alloc=np.array([1, 2, 300])
    )
    header = swf.SWFHeader(version="2.2", max_procs=300, notes=["two\nlines"])
    for name in ("w.swf", "w.swf.gz"):
        t2, h2 = swf.read(swf.write(table, header, tmp_path / name))
        assert t2.equals(table)
        assert h2 == header
    assert not list(tmp_path.glob(".*.tmp"))


# --- the shared PWA logs ----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SHARED_LOGS))
def test_shared_log_counts(name):
    n_jobs, max_procs = SHARED_LOGS[name]
    table, header = swf.read(shared(name))
    assert len(table) == n_jobs
    assert header.max_procs == max_procs
    assert header.version == "2.2"
    assert header.out_of_order == 0
    assert bool(np.all(np.diff(table.submit) >= 0))
    assert len(np.unique(table.job_id)) == n_jobs


@pytest.mark.parametrize("name", sorted(SHARED_LOGS))
def test_shared_log_round_trip(name, tmp_path):
    table, header = swf.read(shared(name))
    # Plain text: gzip would only add seconds here; test_write_then_read covers .gz.
    t2, h2 = swf.read(swf.write(table, header, tmp_path / name.removesuffix(".gz")))
    assert t2.equals(table)
    assert h2 == header
    assert h2.raw == header.raw  # the verbatim header text, which equality ignores


def test_negative_submit_lines_are_counted_with_the_first(tmp_path):
    # issue 31: such jobs are left out of a replay, and the replay names the first line
    text = "; MaxProcs: 8\n" + line(1, submit=0) + line(2, submit=-5) + line(3, submit=4) + line(4, submit=-1)
    table, h = swf.read(write_text(tmp_path, text))
    assert h.negative_submits == (2, 3, -5)
    assert table.submit.tolist() == [-5, -1, 0, 4]
    _, h = swf.read(write_text(tmp_path, line(1), "clean.swf"))
    assert h.negative_submits is None


def test_lines_with_a_nonzero_fraction_are_counted_with_the_first(tmp_path):
    text = line(1, run="12.0") + line(2, run="123.7") + line(3) + line(4, submit="3.05")
    table, h = swf.read(write_text(tmp_path, text))
    assert h.fractions == (2, 2)  # 12.0 loses nothing
    assert table.run.tolist() == [12, 123, 10, 10] and table.submit.tolist() == [0, 0, 0, 3]
    _, h = swf.read(write_text(tmp_path, line(1, run="12.000"), "whole.swf"))
    assert h.fractions is None
