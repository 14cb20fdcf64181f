"""Eurora job-instance reader: the shared instances and small hand-made files."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from repo_paths import EURORA
from schedbench.errors import DataError
from schedbench.io import eurora
from schedbench.io.machine import from_spec

INSTANCES = EURORA / "job_instances"

needs_shared = pytest.mark.skipif(
    not INSTANCES.is_dir(), reason=f"shared Eurora instances not found at {INSTANCES}"
)

LINE = (
    "498716;xxx;yyy;debug;2014-03-31 11:24:53__34;1;0;0;4194304#__"
    "2014-03-31 11:25:16;2014-03-31 11:26:36;1;1;4;00:30;NA;NA;COMPLETED;0"
)


def utc(text: str) -> int:
    return int(dt.datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.UTC).timestamp())


@pytest.fixture(scope="module")
def merged():
    return eurora.read_instances(INSTANCES)


def row(table, job_id: int) -> dict:
    (i,) = np.flatnonzero(table.job_id == job_id)
    return {name: int(col[i]) for name, col in zip(table._fields, table, strict=True)}


@needs_shared
def test_merged_counts(merged):
    table, meta = merged
    # 121 files, 22,550 lines, 4,585 distinct ids; no conflicting duplicates in the data.
    assert meta["files"] == 121
    assert meta["lines"] == 22550
    assert len(table) == meta["jobs"] == 4585
    assert meta["duplicates_identical"] == 22550 - 4585
    assert meta["duplicates_conflicting"] == 0
    assert len(np.unique(table.job_id)) == len(table)
    order = np.lexsort((table.job_id, table.submit))
    assert np.array_equal(order, np.arange(len(table)))
    # 50/: 34 windows of 50 lines, except 3 files holding two windows appended (100 lines).
    _, meta50 = eurora.read_instances(INSTANCES / "50")
    assert (meta50["files"], meta50["lines"], meta50["jobs"]) == (34, 31 * 50 + 3 * 100, 1416)


@needs_shared
def test_hand_checked_job(merged):
    table, meta = merged
    r = row(table, 498716)
    assert r["submit"] == utc("2014-03-31 11:24:53")
    assert r["wait"] == 23 and r["run"] == 80
    assert r["estimate"] == r["time_req"] == 30 * 60
    assert (r["units"], r["unit_cores"], r["unit_gpus"], r["unit_mics"], r["unit_mem"]) == (1, 1, 0, 0, 4096)
    assert r["req_nodes"] == -1
    assert r["procs_req"] == r["procs_alloc"] == 1
    assert r["mem_req"] == 4194304  # KB per processor
    assert r["status"] == 1
    assert r["queue"] == meta["queues"]["debug"] == 0

    # Two 16-core + 1 MIC chunks on two nodes, 29-minute wall time.
    r = row(table, 502679)
    assert (r["units"], r["unit_cores"], r["unit_gpus"], r["unit_mics"], r["unit_mem"]) == (2, 16, 0, 1, 14336)
    assert r["estimate"] == 29 * 60
    assert r["run"] == utc("2014-04-01 22:00:16") - utc("2014-04-01 21:57:19")
    # Two 8-core chunks packed on one node (req_nodes 2): still two free units.
    r = row(table, 502041)
    assert (r["units"], r["unit_cores"], r["unit_mem"], r["req_nodes"]) == (2, 8, 2048, -1)
    # The one job whose single chunk is listed twice (req_nodes 1, req_cores 8).
    r = row(table, 508073)
    assert (r["units"], r["unit_cores"], r["unit_mem"]) == (1, 8, 200)
    assert meta["repeated_entries"] == 1
    assert meta["mixed_entries"] == 0


@needs_shared
def test_queues_machine_and_times(merged):
    table, meta = merged
    assert meta["queues"] == {
        "debug": 0, "parallel": 1, "np_longpar": 2, "longpar": 3, "reservation": 4, "R": 5
    }
    assert meta["queue_expected_wait"]["parallel"] == 21600
    assert np.bincount(table.queue).tolist() == [2522, 1629, 152, 0, 0, 282]
    assert row(table, 498516)["queue"] == 5
    assert meta["machine"] == from_spec(eurora.EURORA_SPEC).spec
    assert "nodes_#64" in meta["machine_note"]
    assert (table.run >= 0).all() and (table.wait >= 0).all()
    # Wall times never exceed 8 h and runs overrun them by at most the PBS grace.
    assert table.estimate.max() == 8 * 3600
    assert (table.run - table.estimate).max() <= 600
    assert (table.status == 1).all()
    # Class mix of the shared window (far from the paper's whole-trace mix).
    gpu = table.unit_gpus > 0
    mic = table.unit_mics > 0
    assert (int(gpu.sum()), int(mic.sum()), int((~gpu & ~mic).sum())) == (740, 26, 3819)


@needs_shared
def test_every_job_fits_the_empty_machine(merged):
    table, meta = merged
    cap = from_spec(meta["machine"]).capacity  # (nodes, 4)
    unit = np.stack([table.unit_cores, table.unit_gpus, table.unit_mics, table.unit_mem], axis=1)
    assert (unit >= 0).all() and (unit[:, :3].sum(axis=1) > 0).all()
    for j in range(len(table)):
        asked = unit[j] > 0
        per_node = (cap[:, asked] // unit[j, asked]).min(axis=1)
        assert per_node.sum() >= table.units[j], f"job {table.job_id[j]} does not fit"


@needs_shared
def test_explicit_config_files_and_single_file():
    one = sorted((INSTANCES / "50").iterdir())[0]
    table, meta = eurora.read_instances(
        one, nodes_file=EURORA / "system_configs" / "nodes_#8", queues_file=EURORA / "system_configs" / "system_queues"
    )
    assert len(table) == 50 and meta["files"] == 1
    assert from_spec(meta["machine"]).n_nodes == 8
    assert meta["queue_expected_wait"]["debug"] == 3600


def write(tmp_path: Path, *lines: str, name: str = "hist.log_crypt") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_malformed_line_names_file_and_line(tmp_path):
    bad = LINE.replace("00:30", "half an hour")
    path = write(tmp_path, LINE.replace("498716", "1"), "", bad)
    with pytest.raises(DataError, match=rf"{path.name}:3\b"):
        eurora.read_instances(path)
    path = write(tmp_path, LINE.replace("34;1;0;0;4194304#", "34;1;0;x;4194304#"), name="b.log_crypt")
    with pytest.raises(DataError, match=r"b\.log_crypt:1\b.*node entry"):
        eurora.read_instances(path)
    path = write(tmp_path, LINE.replace("2014-03-31 11:25:16", "2014-02-30 11:25:16"), name="c.log_crypt")
    with pytest.raises(DataError, match=r"c\.log_crypt:1\b.*timestamp"):
        eurora.read_instances(path)


def test_no_instance_files(tmp_path):
    with pytest.raises(DataError, match="no \\*.log_crypt"):
        eurora.read_instances(tmp_path)
    with pytest.raises(FileNotFoundError):
        eurora.read_instances(tmp_path / "missing")


def test_duplicates_and_conflicts_keep_the_first(tmp_path):
    other = LINE.replace("2014-03-31 11:26:36", "2014-03-31 11:27:36")  # run 140 s, not 80
    d = tmp_path / "job_instances" / "50"
    d.mkdir(parents=True)
    write(d, LINE, name="a.log_crypt")
    write(d, LINE, other, name="b.log_crypt")
    table, meta = eurora.read_instances(tmp_path / "job_instances")
    assert len(table) == 1 and table.run[0] == 80
    assert meta["duplicates_identical"] == 1 and meta["duplicates_conflicting"] == 1
    assert meta["conflicting_job_ids"] == [498716]
    # No system_configs here: the documented machine, no queue limits.
    assert meta["machine"] == from_spec(eurora.EURORA_SPEC).spec
    assert meta["queue_expected_wait"] == {} and meta["queues"] == {"debug": 0}


def test_config_found_beside_job_instances(tmp_path):
    d = tmp_path / "job_instances" / "50"
    d.mkdir(parents=True)
    write(d, LINE)
    cfg = tmp_path / "system_configs"
    cfg.mkdir()
    (cfg / "nodes_#64").write_text("0 16 0 2 33554432 0\n1 16 2 0 33554432 0\n")
    (cfg / "system_queues").write_text("parallel 21600\ndebug 3600\n")
    table, meta = eurora.read_instances(d)
    assert meta["machine"] == "1x(cores=16,mics=2,mem=32768M)+1x(cores=16,gpus=2,mem=32768M)"
    assert meta["queues"] == {"parallel": 0, "debug": 1}
    assert table.queue[0] == 1


def test_mixed_entries_use_the_greatest_common_unit(tmp_path):
    mixed = LINE.replace("34;1;0;0;4194304#", "40;16;2;0;2097152#41;8;1;0;1048576#")
    odd = LINE.replace("498716", "7").replace("34;1;0;0;4194304#", "40;16;2;0;2097152#41;8;0;0;1048576#")
    table, meta = eurora.read_instances(write(tmp_path, mixed, odd))
    r = row(table, 498716)
    # (16, 2, 0, 2 GiB) + (8, 1, 0, 1 GiB) = 3 units of (8 cores, 1 GPU, 1 GiB).
    assert (r["units"], r["unit_cores"], r["unit_gpus"], r["unit_mem"]) == (3, 8, 1, 1024)
    # No exact common unit: 2 units of the element-wise maximum entry.
    r = row(table, 7)
    assert (r["units"], r["unit_cores"], r["unit_gpus"], r["unit_mem"]) == (2, 16, 2, 2048)
    assert meta["mixed_entries"] == 2 and meta["mixed_entries_overrequested"] == 1


def test_status_codes(tmp_path):
    lines = [
        LINE.replace("498716", str(i)).replace("COMPLETED", word)
        for i, word in enumerate(["COMPLETED", "FAILED", "CANCELLED by 42", "WEIRD"], 1)
    ]
    table, meta = eurora.read_instances(write(tmp_path, *lines))
    assert dict(zip(table.job_id.tolist(), table.status.tolist(), strict=True)) == {1: 1, 2: 0, 3: 5, 4: -1}
    assert meta["unknown_status"] == {"WEIRD": 1}


def test_rejects_bad_path_type():
    with pytest.raises(TypeError):
        eurora.read_instances(42)  # type: ignore[arg-type]
