"""Partitions and node features: which nodes each job may use (schedbench.plan.eligibility),
and the replays that respect them, on hand-made cases with known starts."""

from __future__ import annotations

import numpy as np
import pytest

from schedbench.engine.replay import replay
from schedbench.errors import DataError
from schedbench.io import jobs
from schedbench.io.machine import Machine, Partition, spec_of
from schedbench.plan.eligibility import node_classes
from schedbench.schema import Status


def cluster(cores=(4, 4, 4, 4), gpus=(0, 0, 2, 2), features=("a", "a,b", "gpu:a100,b", "gpu:v100"),
            partitions=(("cpu", (0, 1), True), ("gpu", (2, 3), False), ("all", (0, 1, 2, 3), False)),
            mem=(0, 0, 0, 0), def_mem_per_cpu=0, max_time=-1):
    cap = np.array([[c, g, 0, m] for c, g, m in zip(cores, gpus, mem, strict=True)], dtype=np.int64)
    feats = tuple(frozenset(filter(None, f.split(","))) for f in features)
    parts = tuple(Partition(name, np.array(nodes, dtype=np.int64), default, max_time=max_time,
                            def_mem_per_cpu=def_mem_per_cpu) for name, nodes, default in partitions)
    return Machine(cap, spec_of(cap), "test", tuple(f"n{i}" for i in range(len(cores))), feats, parts)


META = {"partitions": {"all": 0, "cpu": 1, "gpu": 2, "nope": 3, "cpu,gpu": 4},
        "constraints": ["a", "b", "a&b", "a|gpu:v100", "[a|b]&!gpu:a100", "gpu:a100", "c", "b*2"]}


def table(**cols):
    n = len(next(iter(cols.values())))
    base = dict(submit=np.zeros(n, np.int64), run=np.full(n, 10), procs_req=np.ones(n, np.int64))
    base.update(cols)
    return jobs.from_columns(job_id=np.arange(1, n + 1), **base)


def nodes_of(classes, j):
    return np.flatnonzero(classes.elig[classes.job_class[j]]).tolist()


def test_partitions_default_union_and_unknown():
    t = table(partition=np.array([-1, 0, 1, 2, 3, 4]))
    c = node_classes(t, META, cluster())
    assert [nodes_of(c, j) for j in range(6)] == [[0, 1], [0, 1, 2, 3], [0, 1], [2, 3], [], [0, 1, 2, 3]]
    assert c.empty.tolist() == [False, False, False, False, True, False]
    assert c.elig[0].all()  # class 0 is every node
    assert c.job_class[1] == 0 and c.job_class[5] == 0
    assert any("nope" in n for n in c.notices)


@pytest.mark.parametrize(("code", "expected"), [
    (0, [0, 1]), (1, [1, 2]), (2, [1]), (3, [0, 1, 3]), (4, [0, 1]), (5, [2]), (6, []), (7, [1, 2]),
])
def test_constraint_expressions(code, expected):
    t = table(partition=np.array([0]), constraint=np.array([code]))
    c = node_classes(t, META, cluster())
    assert nodes_of(c, 0) == expected


def test_typed_gpu_term_holds_everywhere_on_a_machine_without_gpu_types():
    m = cluster(features=("a", "a", "b", "b"))
    c = node_classes(table(partition=np.array([0]), constraint=np.array([5])), META, m)
    assert nodes_of(c, 0) == [0, 1, 2, 3]


def test_bad_constraint_is_a_data_error():
    with pytest.raises(DataError, match="unbalanced"):
        node_classes(table(constraint=np.array([0])), {"constraints": ["[a|b"]}, cluster())


def test_a_machine_without_partitions_or_features_restricts_nothing():
    m = Machine(np.array([[4, 0, 0, 0]] * 2), "2x(cores=4)")
    assert node_classes(table(partition=np.array([2])), META, m) is None
    c = node_classes(table(partition=np.array([2]), constraint=np.array([0])), META, m)
    assert c.job_class.tolist() == [0] and "ignored" in c.notices[0]


def test_partition_defaults_fill_memory_and_time_limit():
    m = cluster(mem=(1000,) * 4, def_mem_per_cpu=100, max_time=500)
    t = table(partition=np.array([1, 1]), unit_cores=np.array([3, 3]), unit_mem=np.array([0, 7]),
              estimate=np.array([-1, 20]), time_req=np.array([-1, 20]))
    c = node_classes(t, META, m)
    assert c.table.unit_mem.tolist() == [300, 7]
    assert c.table.estimate.tolist() == [500, 20]


def test_several_partitions_take_the_largest_max_time_and_a_comma_constraint_is_and():
    # plan/eligibility.py: a comma in a constraint is read as and (node 0 has only a), and a
    # job of partitions "cpu,gpu" without a time limit gets the largest of their MaxTimes,
    # 1000 (docs/slurm-cluster.md).
    m = cluster(cores=(4, 4), gpus=(0, 0), features=("a", "a,b"), mem=(0, 0),
                partitions=(("cpu", (0,), True), ("gpu", (1,), False)))
    m = m._replace(partitions=(m.partitions[0]._replace(max_time=500), m.partitions[1]._replace(max_time=1000)))
    meta = {"partitions": {"cpu,gpu": 0}, "constraints": ["a,b"]}
    t = table(partition=np.array([0]), constraint=np.array([0]), estimate=np.array([-1]), time_req=np.array([-1]))
    c = node_classes(t, meta, m)
    assert nodes_of(c, 0) == [1]
    assert c.table.estimate.tolist() == [1000]


# --------------------------------------------------------------------------- replays


def test_fcfs_waits_for_its_partition_although_other_nodes_are_free():
    # Two 4-core nodes per partition.  Job 1 fills cpu; job 2 (cpu) must wait for it even
    # though the gpu nodes are idle; job 3 (gpu) starts at once.
    t = table(submit=np.array([0, 1, 2]), run=np.array([100, 10, 10]), procs_req=np.array([8, 4, 4]),
              units=np.array([2, 1, 1]), unit_cores=np.array([4, 4, 4]), req_nodes=np.array([2, 1, 1]),
              partition=np.array([1, 1, 2]), time_req=np.array([100, 10, 10]))
    for sched in ("fcfs", "easy", "conservative"):
        r = replay(t, cluster(), sched, "ff", meta=META)
        assert r.start.tolist() == ([0, 100, 2] if sched != "fcfs" else [0, 100, 100]), sched
        for j in range(3):
            nodes = r.alloc_log[r.alloc_ptr[j] : r.alloc_ptr[j] + r.nodes_used[j], 0].tolist()
            assert set(nodes) <= {0: {0, 1}, 1: {0, 1}, 2: {2, 3}}[j], (sched, j, nodes)


def test_features_pick_the_nodes_and_easy_reserves_on_them():
    # Job 1 takes node 1 (the only "a&b" node) for 100 s; job 2 needs "a&b" too: it waits
    # until 100 although nodes 0, 2, 3 are free.  EASY's reservation for job 2 is on node
    # 1: job 3 (feature "a", 1 core, 200 s) may backfill on node 0, not on node 1.
    t = table(submit=np.array([0, 1, 2]), run=np.array([100, 10, 200]), procs_req=np.array([4, 4, 1]),
              units=np.array([1, 1, 1]), unit_cores=np.array([4, 4, 1]), partition=np.array([0, 0, 0]),
              constraint=np.array([2, 2, 0]), time_req=np.array([100, 10, 200]))
    r = replay(t, cluster(), "easy", "ff", meta=META)
    assert r.start.tolist() == [0, 100, 2]
    assert r.alloc_log[r.alloc_ptr[2], 0] == 0


def test_a_job_without_eligible_nodes_is_left_out_with_its_reason():
    t = table(partition=np.array([3, 1]))
    r = replay(t, cluster(), "easy", "ff", meta=META)
    assert r.status.tolist() == [Status.NO_ELIGIBLE_NODES, Status.REPLAYED]


def test_too_wide_for_its_partition():
    # 12 cores: the machine has 16 but the cpu partition 8.
    t = table(procs_req=np.array([12]), partition=np.array([1]))
    assert replay(t, cluster(), "fcfs", "ff", meta=META).status.tolist() == [Status.DROPPED_TOO_WIDE]


def test_balanced_orders_every_node_and_a_partition_job_skips_the_others():
    # docs/reference/allocators.md: the order is computed over every node, the nodes a job
    # may not use skipped on the way.  GPU nodes 0, 3, 4, 5 and MIC nodes 1, 2; partition p
    # is nodes 0-2.  Over every node the GPU bin (4) leads the MIC bin (2): 0, 3, 4, 1, 5, 2,
    # so a 1-core job of p lands on node 0.  Bins counted over p alone (GPU 1, MIC 2) would
    # put node 1 first.
    cap = np.array([[4, 1, 0, 0], [4, 0, 1, 0], [4, 0, 1, 0], [4, 1, 0, 0], [4, 1, 0, 0], [4, 1, 0, 0]], np.int64)
    parts = (Partition("p", np.array([0, 1, 2]), True), Partition("q", np.array([3, 4, 5]), False))
    mach = Machine(cap, spec_of(cap), "test", tuple(f"n{i}" for i in range(6)), (frozenset(),) * 6, parts)
    t = table(partition=np.array([0]))
    r = replay(t, mach, "fcfs", "balanced", meta={"partitions": {"p": 0, "q": 1}})
    assert r.alloc_log[r.alloc_ptr[0], 0] == 0
