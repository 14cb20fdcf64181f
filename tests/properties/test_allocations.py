"""allocations.parquet, rebuilt into per-node usage over time, never puts a node above
its capacity of any resource at any instant, for every scheduler x allocator; and it
agrees with jobs.parquet (units, node counts, node lists, fragments, spread)."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from schedbench import registry
from schedbench.analysis import results
from schedbench.engine import replay
from schedbench.io import jobs, machine

# Every allocator under each scheduler: the jitted allocators share one compiled loop per
# scheduler (schedbench.allocators.dispatch), so the allocator axis costs runs, not compiles.
PAIRS = [(s, a) for s in ("fcfs", "sjf", "easy", "prb", "prb-blocking") for a in registry.allocator_names()] + [
    ("conservative", "ff"), ("conservative", "bf"), ("conservative", "balanced")]  # those with a planning order


@st.composite
def traces(draw):
    m = draw(st.integers(1, 6))
    cap = np.array(
        [[draw(st.integers(1, 8)), draw(st.integers(0, 2)), draw(st.integers(0, 2)), draw(st.sampled_from([0, 32]))]
         for _ in range(m)],
        dtype=np.int64,
    )
    n = draw(st.integers(1, 30))
    cols = {k: [] for k in ("submit", "run", "estimate", "units", "unit_cores", "unit_gpus", "unit_mics",
                            "unit_mem", "req_nodes", "queue", "wait")}
    for _ in range(n):
        units = draw(st.integers(1, 6))
        cols["submit"].append(draw(st.integers(0, 40)))
        cols["run"].append(draw(st.integers(0, 25)))
        cols["estimate"].append(draw(st.integers(1, 30)))
        cols["units"].append(units)
        cols["unit_cores"].append(draw(st.integers(1, 3)))
        cols["unit_gpus"].append(draw(st.integers(0, 1)))
        cols["unit_mics"].append(draw(st.integers(0, 1)))
        cols["unit_mem"].append(draw(st.sampled_from([0, 0, 8])))
        cols["req_nodes"].append(
            draw(st.sampled_from([d for d in range(1, units + 1) if units % d == 0])) if draw(st.booleans()) else -1
        )
        cols["queue"].append(draw(st.integers(0, 2)))
        cols["wait"].append(draw(st.integers(-1, 50)))
    order = np.argsort(cols["submit"], kind="stable")
    table = jobs.from_columns(**{k: np.asarray(v)[order] for k, v in cols.items()})
    return table, machine.Machine(cap, machine.spec_of(cap))


def usage_never_exceeds_capacity(alloc: pl.DataFrame, job_frame: pl.DataFrame, cap: np.ndarray) -> None:
    """Sweep each node's (start, +amount) and (end, -amount) events, ends first at equal
    times: the running total of every resource stays within the node's capacity.  A job of
    run time 0 holds its nodes over [start, start): nothing."""
    rows = alloc.join(job_frame.select("job_id", "start", "end", "cores", "gpus", "mics", "mem"), on="job_id")
    rows = rows.filter(pl.col("end") > pl.col("start"))
    for node, part in rows.group_by("node"):
        node = node[0]
        amounts = part.select(
            [(pl.col("units") * pl.col(c).clip(lower_bound=0)).alias(c) for c in ("cores", "gpus", "mics", "mem")]
        ).to_numpy()
        times = np.concatenate([part["end"].to_numpy(), part["start"].to_numpy()])
        kind = np.concatenate([np.zeros(part.height), np.ones(part.height)])  # ends first
        delta = np.concatenate([-amounts, amounts])
        order = np.lexsort((kind, times))
        level = np.cumsum(delta[order], axis=0)
        assert (level <= cap[node]).all(), f"node {node} above capacity {cap[node].tolist()}"
        assert (level >= 0).all()


@settings(max_examples=25, deadline=None)
@given(traces(), st.sampled_from(PAIRS))
def test_rebuilt_per_node_usage_stays_within_capacity(trace, pair):
    table, mach = trace
    scheduler, allocator = pair
    result = replay.replay(table, mach, scheduler, allocator)
    alloc = results.allocations_frame(result)
    job_frame = results.jobs_frame(result)
    ran = job_frame.filter(pl.col("start").is_not_null())
    usage_never_exceeds_capacity(alloc, job_frame, mach.capacity)
    per_job = alloc.group_by("job_id").agg(
        pl.col("units").sum().alias("units"), pl.len().alias("n"), pl.col("node").sort().alias("sorted")
    )
    check = ran.join(per_job, on="job_id", how="left")
    assert (check["units"] == check["size"]).all(), "a started job's units do not add up to its size"
    assert (check["n"] == check["nodes_used"]).all() and (check["nodes"] == check["nodes_used"]).all()
    for nodes, fragments, spread in check.select("sorted", "fragments", "spread").iter_rows():
        blocks = 1 + sum(1 for a, b in zip(nodes, nodes[1:], strict=False) if b - a > 1)
        assert fragments == blocks and spread == (nodes[-1] - nodes[0] + 1) / len(nodes)
    assert alloc["job_id"].is_in(ran["job_id"].implode()).all()
    # rows come in the order jobs started
    starts = alloc.join(job_frame.select("job_id", "start"), on="job_id", maintain_order="left")["start"]
    assert (starts.diff().drop_nulls() >= 0).all()
    idle = job_frame.filter(pl.col("start").is_null())
    assert idle["nodes"].null_count() == idle.height and idle["packing"].null_count() == idle.height


def test_the_check_catches_an_overfull_node():
    cap = np.array([[2, 0, 0, 0]])
    frame = pl.DataFrame({"job_id": [1, 2], "start": [0, 5], "end": [10, 8], "cores": [1, 1], "gpus": [0, 0],
                          "mics": [0, 0], "mem": [0, 0]})
    alloc = pl.DataFrame({"job_id": [1, 2], "node": [0, 0], "units": [2, 1]})
    try:
        usage_never_exceeds_capacity(alloc, frame, cap)
    except AssertionError:
        return
    raise AssertionError("an overfull node went unnoticed")


def test_packing_and_fewest_nodes_by_hand():
    cap = np.array([[4, 0, 0, 0], [8, 0, 0, 0], [2, 0, 0, 0]])
    req = np.array([[1, 0, 0, 0], [1, 0, 0, 0], [2, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]])
    units = np.array([8, 9, 5, 20, 3])
    req_nodes = np.array([-1, -1, -1, -1, 3])
    # 8 cores: node 1 alone; 9: nodes 1 + 0; 5 units of 2 cores: 4 + 2 (nodes 1, 0); 20: too wide
    assert results.fewest_nodes(cap, units, tuple(req.T), req_nodes).tolist() == [1, 2, 2, 0, 3]
