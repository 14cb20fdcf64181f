"""Soner's synthetic workloads I-V: mixes, shapes, run times, arrivals, fit, CLI."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from naive_alloc import fits_empty
from schedbench.cli import main as cli
from schedbench.errors import UsageError
from schedbench.io import jobs, machine
from schedbench.workloads import soner

MACHINE_L = "1024x(cores=8,gpus=2)"
N = 4000


def gen(wtype="V", n=N, seed=0, m=MACHINE_L, **kw):
    return soner.generate(wtype, n, m, np.random.default_rng(seed), **kw)



@pytest.mark.parametrize("wtype", list(soner.MIXES))
def test_mix(wtype):
    t = gen(wtype)
    share = np.bincount(t.executable, minlength=5)[1:] / N
    p = np.asarray(soner.MIXES[wtype])
    tol = 4 * np.sqrt(p * (1 - p) / N) + 1e-12  # 4 binomial standard deviations
    assert np.all(np.abs(share - p) <= tol), (share, p)


def test_mix_v_is_thirds_and_sixths():
    assert sum(soner.MIXES["V"]) == pytest.approx(1.0)
    assert soner.MIXES["V"][2] == pytest.approx(1 / 6)


def test_shapes_on_machine_l():
    t = gen("V")
    cores = t.units * t.unit_cores
    assert np.array_equal(cores, t.procs_req)
    assert np.all(cores % 8 == 0) and cores.min() == 8 and cores.max() == 1024
    kind = t.executable
    only = kind == soner.CORES_ONLY
    assert np.all(t.unit_cores[only] == 1) and np.all(t.req_nodes[only] == -1) and np.all(t.unit_gpus[only] == 0)
    fixed = ~only
    assert np.array_equal(t.req_nodes[fixed], t.units[fixed])  # one unit per node
    assert np.all(t.units[fixed] % t.req_nodes[fixed] == 0)
    nodes = kind == soner.NODES
    assert set(np.unique(t.unit_cores[nodes]).tolist()) == {4, 8}
    assert np.all(t.unit_gpus[nodes] == 0)
    for k, g in ((soner.GPU1, 1), (soner.GPU2, 2)):
        sel = kind == k
        assert np.all(t.unit_gpus[sel] == g)
        assert set(np.unique(t.unit_cores[sel]).tolist()) == {g, 2 * g}  # x in {1, 2} cores per GPU
    # Node counts follow the paper: R/c, R/(x*G).
    assert np.array_equal(t.req_nodes[fixed], cores[fixed] // t.unit_cores[fixed])
    # Per-node choices are uniform.
    assert np.mean(t.unit_cores[nodes] == 4) == pytest.approx(0.5, abs=0.06)


def test_run_times_and_estimates():
    t = gen("III")
    assert t.run.min() >= 60 and t.run.max() <= 600
    assert t.run.min() < 65 and t.run.max() > 595
    # both ends are drawn: 60..600 inclusive (of 20,000 runs, about 37 at each end)
    many = gen("I", n=20_000).run
    assert (many == 60).sum() > 10 and (many == 600).sum() > 10
    assert t.run.mean() == pytest.approx(330, abs=10)
    assert np.array_equal(t.estimate, t.run)
    t2 = gen("III", estimate_factor=2.0)
    assert np.array_equal(t2.estimate, 2 * t.run)


def test_arrivals():
    t = gen("I")
    assert t.submit[0] == 0 and np.all(np.diff(t.submit) >= 0)
    gaps = np.diff(t.submit)
    assert gaps.mean() == pytest.approx(15, abs=1.0)
    assert gaps.std() == pytest.approx(15, abs=1.5)  # exponential: sd = mean
    assert np.all(gen("I", n=50, mean_interarrival=0).submit == 0)
    assert np.diff(gen("I", mean_interarrival=60).submit).mean() == pytest.approx(60, abs=4)


def test_determinism_and_common_random_numbers():
    a = gen("IV", n=300, seed=7)
    assert a.equals(gen("IV", n=300, seed=7))
    assert not a.equals(gen("IV", n=300, seed=8))
    v = gen("V", n=300, seed=7)
    assert np.array_equal(a.procs_req, v.procs_req) and np.array_equal(a.run, v.run)
    assert np.array_equal(a.submit, v.submit)


@settings(deadline=None, max_examples=10)
@given(
    wtype=st.sampled_from(list(soner.MIXES)),
    spec=st.sampled_from([MACHINE_L, "64x(cores=16,gpus=2)", "128x(cores=8,gpus=2)+64x(cores=12,gpus=4)"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_job_fits_on_the_empty_machine(wtype, spec, seed):
    m = machine.parse(spec)
    t = soner.generate(wtype, 200, m, np.random.default_rng(seed))
    assert all(fits_empty(t, m.capacity))
    assert np.all((t.units * t.unit_cores) % soner.size_step(m) == 0)
    fixed = t.req_nodes > 0
    assert np.all(t.units[fixed] % t.req_nodes[fixed] == 0)


def test_size_step_and_default_max_cores():
    assert soner.size_step(machine.parse(MACHINE_L)) == 8
    assert soner.default_max_cores(machine.parse(MACHINE_L)) == 1024
    m = machine.parse("128x(cores=12,gpus=2)")
    assert soner.size_step(m) == 24
    assert soner.default_max_cores(m, "I") == 192  # 1536 cores / 8
    assert soner.default_max_cores(m, "V") == 120  # 1 GPU/node at 1 core/GPU: 128 nodes -> 5 x 24
    # 1/8 of 1792 cores is 224, but 1 GPU/node at 1 core/GPU fits only 192 nodes.
    het = machine.parse("128x(cores=8,gpus=2)+64x(cores=12,gpus=4)")
    assert soner.default_max_cores(het, "I") == 224
    assert soner.default_max_cores(het, "IV") == 192
    assert soner.default_max_cores(machine.parse(MACHINE_L), "II") == 1024
    with pytest.raises(UsageError):
        soner.default_max_cores(machine.parse("4x(cores=8)"), "IV")  # no GPUs


def test_smaller_max_cores():
    t = gen("II", n=500, max_cores=64)
    assert (t.units * t.unit_cores).max() == 64


@pytest.mark.parametrize(
    "args, kw",
    [
        (("VI",), {}),
        (("I",), {"n": 0}),
        (("I",), {"mean_interarrival": -1.0}),
        (("I",), {"estimate_factor": 0.9}),
        (("I",), {"max_cores": 12}),  # not a multiple of 8
        (("I",), {"max_cores": 16384}),  # larger than the machine
        (("IV",), {"max_cores": 2048}),  # 1 GPU/node at 1 core/GPU: 2048 nodes > 1024
        (("II",), {"m": "16x(cores=8)", "max_cores": 128}),  # 4 cores/node: 32 nodes > 16
        (("IV",), {"m": "16x(cores=8)"}),  # no GPUs
    ],
)
def test_bad_options(args, kw):
    with pytest.raises(UsageError):
        gen(*args, **kw)


def test_rng_is_required():
    with pytest.raises(UsageError):
        soner.generate("I", 10, MACHINE_L, None)


def test_cli_end_to_end(tmp_path):
    out = tmp_path / "s.parquet"
    argv = ["workload", "soner", "--type", "IV", "--jobs", "300", "--seed", "3", "-o", str(out)]
    assert cli.main(argv) == 0
    table, meta = jobs.read_parquet(out)
    assert table.equals(gen("IV", n=300, seed=3))
    assert meta["machine"] == MACHINE_L and meta["type"] == "IV" and meta["seed"] == 3
    assert meta["max_cores"] == 1024


def test_cli_usage_error(tmp_path, capsys):
    out = tmp_path / "s.parquet"
    argv = ["workload", "soner", "--type", "V", "--seed", "1", "--machine", "8x(cores=8,gpus=2)", "--max-cores", "64", "-o", str(out)]
    assert cli.main(argv) == 2
    assert "max-cores" in capsys.readouterr().err
    assert not out.exists()
