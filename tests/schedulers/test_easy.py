"""``easy`` (schedbench.schedulers.easy) on heterogeneous nodes: hand-made cases with known
starts for the head's node-feasible reservation (replay contract §4, the module's
docstring).  Each pins a rule that the generated oracle cases met too seldom to catch a
change of it."""

from __future__ import annotations

import numpy as np
import pytest

from schedbench.engine.replay import replay
from schedbench.io import jobs, machine


def _table(run, units, cores, req_nodes):
    """Jobs all submitted at 0, estimates exact."""
    n = len(run)
    return jobs.from_columns(job_id=np.arange(1, n + 1), submit=np.zeros(n, np.int64), run=run, estimate=run,
                             units=units, unit_cores=cores, req_nodes=req_nodes)


@pytest.mark.parametrize("allocator", ["ff", "bf"])
def test_every_job_predicted_to_end_by_the_shadow_time_counts_as_ended(allocator):
    # 3 nodes of 4 cores.  A and B take a node each until 10; the head H needs two whole
    # nodes: shadow time 10, when A's, B's and the third node are free.  C (a node, 100 s)
    # takes the third node now: H still fits at 10 on A's and B's.  Releasing only A at
    # the shadow time would leave H one node short and keep C waiting until 10.
    t = _table(run=[10, 10, 10, 100], units=[1, 1, 2, 1], cores=[4, 4, 4, 4], req_nodes=[-1] * 4)
    r = replay(t, machine.from_spec("3x(cores=4)"), "easy", allocator)
    assert r.start.tolist() == [0, 0, 10, 0]


def test_a_head_asking_for_a_node_count_is_placed_on_nodes_not_on_the_totals():
    # 2 nodes of 2 cores.  A (1 core, 10 s) and B (2 cores, 20 s) fill node 0 half and
    # node 1; the head H asks for one core on each of two nodes (req_nodes = 2): at 10 the
    # totals hold 2 free cores, both on node 0, so its shadow time is 20, not 10.  C (1
    # core, 15 s) ends by 20 and starts now; with a shadow time of 10 it would wait.
    t = _table(run=[10, 20, 5, 15], units=[1, 1, 2, 1], cores=[1, 2, 1, 1], req_nodes=[-1, -1, 2, -1])
    r = replay(t, machine.from_spec("2x(cores=2)"), "easy", "ff")
    assert r.start.tolist() == [0, 0, 20, 0]
