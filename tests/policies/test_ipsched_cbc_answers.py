"""IPSCHED on ESP cpu-gpu, seed 1 (Soner's study, experiment 6): at t = 2645 CBC, handed
a start without the states model's continuous counts y, read them as 0, rejected the
start and answered "optimal" with objective 1e50 and a 64-node job on 62 nodes (the
replay stopped with a PolicyError).  The start now gives every y (its feasibility with
every variable fixed: test_ipsched_scale_and_start), and an answer without a solution's
objective is never used."""

from __future__ import annotations

import mip
import numpy as np
import pytest

from schedbench.engine.replay import replay
from schedbench.io.machine import from_spec
from schedbench.policies import window as win
from schedbench.workloads import esp


@pytest.mark.slow
def test_esp_cpu_gpu_seed1_experiment6_places_every_job_on_its_units():
    m = from_spec("1024x(cores=8,gpus=2)")
    table = esp.generate("cpu-gpu", m, np.random.default_rng(1), z_times="esp2")
    table = table.take(np.flatnonzero(table.submit < 2650))  # the jobs queued by t = 2645
    r = replay(table, m, "ipsched", "bf", period=5, priority_type="multifactor", objective="cores")
    assert np.all(r.start >= 0)
    d = r.tables["decisions"]
    at = d.filter(d["time"] == 2645).row(0, named=True)
    assert at["status"] == "optimal" and at["objective"] >= at["start_objective"] * (1 - 1e-12)
    assert (d["objective"].drop_nulls() < win.NO_OBJECTIVE).all()


class _Answer:
    """A model whose solve ends as CBC's did at t = 2645: status optimal, objective 1e50."""

    num_cols = num_rows = 1
    cuts = -1  # python-mip's default
    objective_value = 1e50

    def optimize(self, max_nodes):
        return mip.OptimizationStatus.OPTIMAL


@pytest.mark.parametrize("on_limit", ["halve", "incumbent"])
def test_optimal_status_with_the_solvers_infinity_is_no_solution(on_limit):
    solver = win.Solver(on_limit=on_limit)
    solve = solver.solve(_Answer(), 2645, 84, 76)
    assert solve == win.Solve("no_solution_found", None, False, False)
    assert solver.rows[0].status == "no_solution_found" and solver.rows[0].objective is None
