"""Alea's extended SWF (21 fields) and its .machines cluster file (issue 14, item 8)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from repo_paths import SHARED
from schedbench.cli.main import main
from schedbench.errors import DataError
from schedbench.io import alea, machine
from schedbench.io import load as workload_io

SHARED = SHARED / "traces" / "alea"
LOG = SHARED / "wagap-2013-first1500.swf"
MACHINES = SHARED / "wagap-2013.swf.machines"
needs_alea = pytest.mark.skipif(not LOG.exists(), reason="shared Alea log not present")


def _line(job, submit, run, procs, nodes, queue, request, wait=0, req_time=3600):
    fields = [job, submit, wait, run, procs, 1, 1024, procs, req_time, 1 << 30, 1, 7, 1, 1, -1, 1, 1, 1]
    return " ".join(map(str, fields)) + " {" + ",".join(map(str, nodes)) + "} " + queue + " " + request


SMALL = "\n".join([
    _line(10, 500, 100, 8, [5, 5, 5, 5, 9, 9, 9, 9], "q_2h", "2:ppn=4:brno"),
    _line(11, 100, 50, 6, [7, 7, 7, 7, 7, 7], "q_1d", "1:ppn=6#excl"),
    _line(12, 300, 20, 3, [1, 2, 2], "q_2h", "1:ppn=1+1:ppn=2"),
    _line(13, 300, 20, 4, [3, 3, 3, 3], "backfill", "4"),
]).encode()


def test_hand_made_log_keeps_the_three_extra_fields_aligned_with_the_sorted_rows():
    table, header, extras, queues = alea.parse_bytes(SMALL, "small.swf")
    assert table.job_id.tolist() == [11, 12, 13, 10]  # (submit, id) order
    assert queues == {"q_2h": 0, "q_1d": 1, "backfill": 2}
    assert table.queue.tolist() == [1, 0, 2, 0]
    # single chunk N:ppn=P with N*P = processors fixes the shape; "+" chunks and "4" (4 nodes
    # of 1 processor for a 4-processor job) as stated
    assert table.req_nodes.tolist() == [1, -1, 4, 2]
    assert table.units.tolist() == [6, 3, 4, 8]
    assert extras["job_id"].to_list() == table.job_id.tolist()
    assert extras["queue_name"].to_list() == ["q_1d", "q_2h", "backfill", "q_2h"]
    assert extras["node_ids"].to_list() == [[7], [1, 2], [3], [5, 9]]
    assert extras["processors_per_node"].to_list() == [[6], [1, 2], [4], [4, 4]]
    assert extras["pbs_request"].to_list() == ["1:ppn=6#excl", "1:ppn=1+1:ppn=2", "4", "2:ppn=4:brno"]
    assert extras["exclusive"].to_list() == [True, False, False, False]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_line(1, 0, 5, 1, [1], "q", "1") + " extra", "small.swf:1: 22 fields instead of 21"),
        (_line(1, 0, 5, 1, [1], "q", "1").replace("{1}", "[1]"), "small.swf:1: field 19 is not a braced list"),
        (_line(1, 0, 5, 1, [1], "q", "1").replace("{1}", "{1,x}"), "small.swf:1: field 19 is not a braced list"),
        ("\n" + _line(1, 0, 5, 1, [1], "q", "1").replace(" 3600 ", " 1h "), "small.swf:2: a non-numeric token"),
    ],
)
def test_bad_lines_name_the_file_and_line(text, message):
    with pytest.raises(DataError, match="^" + message.replace("[", r"\[").replace("(", r"\(")):
        alea.parse_bytes(text.encode(), "small.swf")


def test_machines_file_with_and_without_the_alea_ng_columns(tmp_path):
    path = tmp_path / "two.machines"
    path.write_text("0\tbig\t2\t8\t1\t2097152\n1\tgpu\t1\t4\t1.5\t1048576\tcuda,brno\t2\n")
    mach, clusters = alea.read_machines(path)
    assert mach.capacity.tolist() == [[8, 0, 0, 2048], [8, 0, 0, 2048], [4, 2, 0, 1024]]
    assert [c.name for c in clusters] == ["big", "gpu"]
    assert machine.parse(str(path)).capacity.tolist() == mach.capacity.tolist()
    path.write_text("0 big 2 eight 1 2097152\n")
    with pytest.raises(DataError, match=r"two.machines:1: expected 'cluster_id name nodes"):
        alea.read_machines(path)
    path.write_text("# nothing\n")
    with pytest.raises(DataError, match="no clusters"):
        alea.read_machines(path)


def test_small_log_replays_on_its_machines_file(tmp_path):
    log = tmp_path / "small.swf"
    log.write_bytes(SMALL)
    mfile = tmp_path / "site.machines"
    mfile.write_text("0\ta\t4\t8\t1\t1048576\n")
    out = tmp_path / "run"
    assert main(["replay", str(log), "--machine", str(mfile), "-q", "-o", str(out)]) == 0
    frame = pl.read_parquet(out / "jobs.parquet").sort("job_id")
    assert frame["status"].to_list() == ["replayed"] * 4
    assert frame["nodes_used"].to_list() == [2, 1, 1, 4]  # jobs 10, 11 (fixed), 12 (free), 13 (fixed)


@needs_alea
def test_shared_log_reads_all_columns_and_replays_on_its_real_clusters(tmp_path):
    table, _, extras, queues = alea.read(LOG)
    assert table.n_jobs == 1500 and extras.height == 1500
    assert set(queues) >= {"q_1d", "q_2w", "backfill"}
    # each job's node list holds one entry per allocated processor
    assert (extras["processors_per_node"].list.sum().to_numpy() == table.procs_alloc).all()
    assert np.all(table.req_nodes[table.req_nodes > 0] <= table.units[table.req_nodes > 0])
    mach = machine.parse(str(MACHINES))
    assert mach.n_nodes == 20 + 48 and sorted(set(mach.capacity[:, 0].tolist())) == [12, 80]
    loaded, lmach, meta, _ = workload_io.load(str(LOG), str(MACHINES))
    assert meta["format"] == "alea" and meta["queues"] == queues and loaded.equals(table)
    out = tmp_path / "run"
    assert main(["replay", str(LOG), "--machine", str(MACHINES), "-q", "-o", str(out)]) == 0
    frame = pl.read_parquet(out / "jobs.parquet").sort("job_id")
    assert (frame["status"] == "replayed").all()
    fixed = table.req_nodes > 0
    by_id = dict(zip(frame["job_id"].to_list(), frame["nodes_used"].to_list(), strict=True))
    assert all(by_id[j] == n for j, n in zip(table.job_id[fixed].tolist(), table.req_nodes[fixed].tolist(), strict=True))


def test_recognised_even_when_the_first_node_list_is_longer_than_the_sample(tmp_path):
    wide = _line(1, 0, 60, 20000, [k // 8 for k in range(20000)], "q_1d", "2500:ppn=8")
    log = tmp_path / "wide.swf"
    log.write_text(wide + "\n")
    assert len(wide) > 1 << 16 and alea.sniff(log)
    table, _, extras, _ = alea.read(log)
    assert table.req_nodes.tolist() == [2500] and extras["processors_per_node"].list.sum().to_list() == [20000]
    assert not alea.looks_like_alea(b"; MaxProcs: 4\n1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n")
