"""Keller's greedy mapper (allocator ``keller``, schedbench.allocators.keller): its node
order by hand and against tests/naive_alloc.py's exact-fraction reference, bad
``node_prio`` values, and conservative backfilling on nodes with it against the
reference replay (Keller's fixed order is First-Fit on the reordered nodes)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from naive_alloc import order_keller, replay_conservative_keller
from schedbench import core, registry
from schedbench.analysis import results
from schedbench.core import layout
from schedbench.engine import replay
from schedbench.errors import UsageError
from schedbench.io import jobs, machine
from strategies import node_case, node_traces

STATUS = {s.value: s.name.lower() for s in replay.Status}

# totals: 72 cores, 2 GPUs, 2 MICs.  W_node: 16/72, max(16/72, 2/2) = 1, 32/72, max(8/72, 2/2) = 1
HAND = [(16, 0, 0, 0), (16, 2, 0, 0), (32, 0, 0, 0), (8, 0, 2, 0)]


def _order(cap, node_prio=""):
    cap = np.array(cap, dtype=np.int64)
    mach = machine.Machine(cap, machine.spec_of(cap))
    table = jobs.from_columns(submit=np.array([0]), run=np.array([1]), units=np.array([1]))
    entry = registry.allocator("keller")
    state = entry.load()(core.Setup(table, mach, layout.job_matrix(table), {}), **entry.resolve({"node_prio": node_prio}))
    return state.order.tolist()


@pytest.mark.parametrize(("node_prio", "expected"), [
    ("", [0, 2, 1, 3]),  # accelerator nodes hold all of a type: most expensive
    ("2:-1", [2, 0, 1, 3]),  # a negative priority makes node 2 the cheapest
    ("gpu:-1", [1, 0, 2, 3]),  # the GPU node: 1 - 1 = 0 < 16/72
    ("all:3; 3:0", [3, 0, 2, 1]),  # the last entry naming a node wins
    ("0-1,3:1", [2, 0, 1, 3]),  # 1 + 16/72 < 1 + 1, ties (nodes 1, 3 at 2) by index
])
def test_order_by_hand(node_prio, expected):
    assert _order(HAND, node_prio) == expected
    prio = [0] * len(HAND)
    for part in filter(None, node_prio.split(";")):
        spec, p = part.rsplit(":", 1)
        spec = spec.strip()
        nodes = (range(4) if spec == "all" else [1] if spec == "gpu"
                 else [n for r in spec.split(",") for n in range(int(r.split("-")[0]), int(r.split("-")[-1]) + 1)])
        for n in nodes:
            prio[n] = int(p)
    assert order_keller(HAND, prio) == expected


def test_identical_nodes_keep_index_order_and_memory_counts():
    assert _order([(8, 0, 0, 0)] * 4) == [0, 1, 2, 3]
    # a third of the cores each; node 1 has two thirds of the memory: the expensive one.
    # Nodes 0 and 2 tie at 1/3 (node 0's memory share equals its core share): index order
    assert _order([(8, 0, 0, 32), (8, 0, 0, 64), (8, 0, 0, 0)]) == [0, 2, 1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 3), st.integers(0, 2), st.sampled_from([0, 16, 64])),
                min_size=1, max_size=10),
       st.data())
def test_order_equals_the_exact_reference(cap, data):
    # a machine without cores runs nothing, and the text's weights (times cores_system)
    # are all 0 on it, where ours (divided by cores_system) keep prio_node's order
    assume(sum(node[0] for node in cap) > 0)
    prio = data.draw(st.lists(st.integers(-2, 2), min_size=len(cap), max_size=len(cap)))
    text = ";".join(f"{i}:{p}" for i, p in enumerate(prio))
    assert _order(cap, text) == order_keller(cap, prio)


@pytest.mark.parametrize(("text", "words"), [
    ("0-3", "expected NODES:PRIORITY"),
    ("x:1", "nodes must be all, gpu, mic"),
    ("3-1:1", "nodes must be"),
    ("0:1.5", "expected NODES:PRIORITY"),
    ("4:1", "node 4 is not on this machine (4 nodes, 0-3)"),
])
def test_bad_node_priorities_are_one_line(text, words):
    with pytest.raises(UsageError) as e:
        _order(HAND, text)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_the_registry_lists_keller_as_a_planning_order_giver():
    entry = registry.allocator("keller")
    assert entry.capabilities.gives_plan_order and entry.option_names() == ("node_prio",)


# --------------------------------------------------------------------------- conservative on nodes


def test_conservative_keeps_the_gpu_node_for_the_gpu_job():
    # node 0 has the machine's GPUs (W = 1), nodes 1-2 a third of the cores each: order
    # [1, 2, 0].  Job 1 (4 cores) goes to node 1, so job 2 (2 x (1 core, 1 GPU)) starts at
    # once on node 0 and job 3 (4 cores) at 1 on node 2.  First-Fit puts job 1 on node 0:
    # job 2 waits for its end at 10.
    spec = "1x(cores=4,gpus=2)+2x(cores=4)"
    table = jobs.from_columns(job_id=[1, 2, 3], submit=[0, 0, 1], run=[10, 10, 5], estimate=[10, 10, 5],
                              units=[1, 2, 1], unit_cores=[4, 1, 4], unit_gpus=[0, 1, 0], unit_mics=[0, 0, 0],
                              unit_mem=[0, 0, 0])
    mach = machine.from_spec(spec)
    got = replay.replay(table, mach, "conservative", "keller")
    assert got.start.tolist() == [0, 0, 1]
    nodes = results.allocations_frame(got).sort("job_id")["node"].to_list()
    assert nodes == [1, 0, 2]
    assert replay.replay(table, mach, "conservative", "ff").start.tolist() == [0, 10, 1]
    # prio_node 1 on nodes 1-2 makes node 0 the cheapest again: First-Fit's schedule
    assert replay.replay(table, mach, "conservative", "keller", node_prio="1-2:1").start.tolist() == [0, 10, 1]


def _node_jobs(table, predictor):
    est = np.where(table.estimate > 0, table.estimate, table.run)
    pred = table.run if predictor == "actual" else est
    return [dict(job_id=int(table.job_id[i]), submit=int(table.submit[i]), run=int(table.run[i]),
                 pred=int(pred[i]), estimate=int(est[i]), units=int(table.units[i]),
                 unit=(int(table.unit_cores[i]), int(table.unit_gpus[i]), int(table.unit_mics[i]),
                       int(table.unit_mem[i])), req_nodes=int(table.req_nodes[i]))
            for i in range(table.job_id.size)]


def _within_capacity(r, cap):
    """Per node, running amounts (ends before starts at equal times) never exceed capacity."""
    frame = results.jobs_frame(r).filter(pl.col("start").is_not_null() & (pl.col("end") > pl.col("start")))
    rows = results.allocations_frame(r).join(frame.select("job_id", "start", "end", "cores", "gpus", "mics", "mem"),
                                             on="job_id")
    for (node,), part in rows.group_by("node"):
        amount = part.select([(pl.col("units") * pl.col(c).clip(lower_bound=0)).alias(c)
                              for c in ("cores", "gpus", "mics", "mem")]).to_numpy()
        times = np.concatenate([part["end"].to_numpy(), part["start"].to_numpy()])
        kind = np.concatenate([np.zeros(part.height), np.ones(part.height)])
        level = np.cumsum(np.concatenate([-amount, amount])[np.lexsort((kind, times))], axis=0)
        assert (level <= cap[node]).all()


@settings(max_examples=150, deadline=None)
@given(node_traces(zero_runs=True, min_est=0), st.sampled_from(["requested", "actual"]), st.data())
def test_conservative_with_keller_equals_the_reference(trace, predictor, data):
    nodes, rows = trace
    table, mach = node_case(nodes, rows)
    prio = data.draw(st.lists(st.integers(-1, 1), min_size=len(nodes), max_size=len(nodes)))
    nv = replay_conservative_keller(_node_jobs(table, predictor), nodes, prio)
    r = replay.replay(table, mach, "conservative", "keller", predictor,
                      node_prio=";".join(f"{i}:{p}" for i, p in enumerate(prio)))
    assert r.start.tolist() == [-1 if s is None else s for s in nv.start]
    assert [STATUS[s] for s in r.status] == nv.status
    alloc = results.allocations_frame(r)
    for jid, a in zip(nv.job_id, nv.alloc, strict=True):
        got = sorted(alloc.filter(pl.col("job_id") == jid).select("node", "units").rows())
        assert got == (a or [])
    ran = r.start >= 0
    assert (r.start[ran] >= table.submit[ran]).all()
    _within_capacity(r, mach.capacity)
    if predictor == "actual":  # exact predictions: nothing starts after its first booking
        first = {}
        for _, jid, frm in nv.passes:
            first.setdefault(jid, frm)
        assert all(s is None or s <= first[j] for j, s in zip(nv.job_id, nv.start, strict=True))
