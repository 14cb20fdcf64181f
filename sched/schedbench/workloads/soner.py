"""Soner and Özturan's synthetic CPU-GPU workloads I–V (AUCSCHED paper, §5.2, Table 12).

Each job is one of four request kinds, drawn independently per job with the
probabilities of its workload type (Table 12; V's 33.3/33.3/16.6/16.6 % is read as
1/3, 1/3, 1/6, 1/6 so that it sums to one):

====  ==========  ============  ==========  ==========
type  cores only  nodes (4|8    1 GPU/node  2 GPU/node
                  cores/node)   (1|2 c/GPU) (1|2 c/GPU)
====  ==========  ============  ==========  ==========
I     1           0             0           0
II    0           1             0           0
III   1/2         1/2           0           0
IV    2/5         2/5           1/5         0
V     1/3         1/3           1/6         1/6
====  ==========  ============  ==========  ==========

The ``executable`` column holds the kind (1 cores only, 2 node request, 3 one GPU per
node, 4 two GPUs per node) so analyses can split results by it.

Sizes.  A job asks for ``R`` cores, a multiple of the machine's cores per node (paper:
"taken as multiples of the CPU cores per node in the system"): ``R = step × k`` with
``k`` uniform in ``1 .. max_cores // step``.  ``step`` is the smallest core count of a
node (8 on Machine-L) raised to the least common multiple with 8, so that ``R`` divides
by every per-node core count below (4, 8, and x·G ∈ {1, 2, 4}); on Machine-L it is 8.
The paper's generator takes "the maximum number of cores a job can request" as an input
but does not report it; the default ``max_cores`` is 1/8 of the machine's cores, 1024
on Machine-L, the largest value for which the most node-hungry shape (1 GPU per node at
1 core per GPU: ``R`` nodes) still fits on Machine-L's 1024 nodes.  On other machines
it is lowered, if need be, until the largest job of every kind in the type's mix fits
on the empty machine, then rounded down to a multiple of ``step``.  The mean job is
then about 1/16 of the machine for 330 s.

Shapes, for a job of ``R`` cores (the paper's rules):

* cores only (``-n R``): ``units`` = R, one core each, free shape;
* node request with c ∈ {4, 8} cores per node (uniform): ``R / c`` nodes, each one unit
  of c cores;
* G ∈ {1, 2} GPUs per node with x ∈ {1, 2} cores per GPU (x uniform): ``R / (x·G)``
  nodes, each one unit of (x·G cores, G GPUs).

For fixed shapes ``units`` = ``req_nodes`` = the node count.  :func:`generate` refuses
(UsageError) a machine on which some shape of the mix could not fit when empty.

Run times are uniform integers in 60..600 s inclusive (paper).  The paper does not give
job estimates; we use the exact run time (``estimate = ceil(run × estimate_factor)``,
factor 1 by default), as for the ESP workloads.

Arrivals.  The paper is silent (its generator takes an "estimated run time of a
workload", and the runs were emulated in real time).  We use a Poisson process: the
first job at time 0, then exponential gaps of mean ``mean_interarrival`` seconds
(default 15 s), submit times being the rounded cumulative sums.  With the default sizes
a job is about 20.6 machine-seconds of work on any machine, so 15 s offers a load of
about 1.4: a queue builds up, as in the heavy ESP workloads the paper also used.
``mean_interarrival = 0`` submits every job at time 0.  The default of 500 jobs is about
2.9 hours of machine time, close to ESP's 3.05.

Random numbers are drawn in the same order and amounts whatever the type, so one seed
gives the same sizes, run times and arrivals for workloads I–V (only the kinds and
shapes differ): comparisons between types use common random numbers.

Default machine: Machine-L, ``1024x(cores=8,gpus=2)``, on which the paper ran these tests.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from ..errors import UsageError
from ..io import jobs
from ..io.machine import Machine, Resource
from ..io.machine import parse as parse_machine

DEFAULT_MACHINE = "1024x(cores=8,gpus=2)"  # Machine-L
DEFAULT_JOBS = 500
DEFAULT_MEAN_INTERARRIVAL = 15.0  # s
RUN_MIN, RUN_MAX = 60, 600  # s, inclusive

CORES_ONLY, NODES, GPU1, GPU2 = 1, 2, 3, 4  # request kinds (also the executable column)
KIND_NAMES: dict[int, str] = {CORES_ONLY: "cores only", NODES: "node request", GPU1: "1 GPU/node", GPU2: "2 GPUs/node"}
# Probabilities of (cores only, node request, 1 GPU/node, 2 GPUs/node): Table 12.
MIXES: dict[str, tuple[float, float, float, float]] = {
    "I": (1.0, 0.0, 0.0, 0.0),
    "II": (0.0, 1.0, 0.0, 0.0),
    "III": (0.5, 0.5, 0.0, 0.0),
    "IV": (0.4, 0.4, 0.2, 0.0),
    "V": (1 / 3, 1 / 3, 1 / 6, 1 / 6),
}
CORES_PER_NODE_CHOICES = (4, 8)  # node requests (--ntasks-per-node)
CORES_PER_GPU_CHOICES = (1, 2)  # GPU requests


def generate(
    workload_type: str,
    n_jobs: int = DEFAULT_JOBS,
    machine: Machine | str = DEFAULT_MACHINE,
    rng: np.random.Generator | None = None,
    *,
    mean_interarrival: float = DEFAULT_MEAN_INTERARRIVAL,
    max_cores: int | None = None,
    estimate_factor: float = 1.0,
) -> jobs.JobTable:
    """``n_jobs`` jobs of Soner's workload ``workload_type`` (I..V) for ``machine``.

    ``mean_interarrival``: mean of the exponential gaps between submissions (s; 0 = all
    at time 0); ``max_cores``: largest core count a job asks for (default about 1/8
    of the machine, see :func:`default_max_cores`); ``estimate = ceil(run × estimate_factor)``.
    """
    if workload_type not in MIXES:
        raise UsageError(f"unknown workload type {workload_type!r} (choose from {', '.join(MIXES)})")
    if rng is None:
        raise UsageError("give rng=np.random.default_rng(seed): the workload is random")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise UsageError(f"number of jobs must be a positive integer, not {n_jobs!r}")
    if not (math.isfinite(mean_interarrival) and mean_interarrival >= 0):
        raise UsageError(f"mean inter-arrival time must be >= 0 s, not {mean_interarrival}")
    if not (math.isfinite(estimate_factor) and estimate_factor >= 1):
        raise UsageError(f"estimate factor must be >= 1, not {estimate_factor}")
    if isinstance(machine, str):
        machine = parse_machine(machine)
    mix = np.asarray(MIXES[workload_type])
    step = size_step(machine)
    if max_cores is None:
        max_cores = default_max_cores(machine, workload_type)
    if max_cores < step or max_cores % step:
        raise UsageError(
            f"max cores per job must be a positive multiple of {step} "
            f"(the job size step on {machine.spec}: lcm(cores per node, 8)), not {max_cores}"
        )
    _check_fits(machine, mix, max_cores)

    n = int(n_jobs)
    kind = rng.choice(np.arange(1, 5), size=n, p=mix / mix.sum())
    cores = step * rng.integers(1, max_cores // step + 1, size=n)
    run = rng.integers(RUN_MIN, RUN_MAX + 1, size=n)
    cpn = rng.choice(CORES_PER_NODE_CHOICES, size=n)
    cpg = rng.choice(CORES_PER_GPU_CHOICES, size=n)
    if mean_interarrival > 0:
        gaps = rng.exponential(mean_interarrival, size=n)
        gaps[0] = 0.0  # the first job opens the workload at time 0
        # Round the cumulative time, not each gap, so rounding errors do not accumulate.
        submit = np.rint(np.cumsum(gaps)).astype(np.int64)
    else:
        submit = np.zeros(n, dtype=np.int64)

    # Per-node cores and GPUs of the fixed-shape kinds (ignored for cores-only jobs).
    gpus = np.where(kind == GPU1, 1, np.where(kind == GPU2, 2, 0))
    per_node = np.where(kind == NODES, cpn, cpg * gpus)
    fixed = kind != CORES_ONLY
    units = np.where(fixed, cores // np.maximum(per_node, 1), cores)
    unit_cores = np.where(fixed, per_node, 1)
    req_nodes = np.where(fixed, units, -1)
    return jobs.core_gpu_table(submit, run, units, unit_cores, gpus, req_nodes, kind, estimate_factor)


def size_step(machine: Machine) -> int:
    """Granularity of job core counts: lcm(smallest cores per node, 8)."""
    cores = machine.capacity[:, Resource.CORES]
    if not (cores > 0).any():
        raise UsageError(f"machine {machine.spec} has no cores")
    return math.lcm(int(cores[cores > 0].min()), 8)


def default_max_cores(machine: Machine, workload_type: str = "V") -> int:
    """The default largest job: 1/8 of the machine's cores, lowered if need be so that every
    shape of ``workload_type``'s mix fits on the empty machine, rounded down to a multiple
    of :func:`size_step` (1024 on Machine-L for every type)."""
    step = size_step(machine)
    limit = min(int(machine.totals[Resource.CORES]) // 8, _largest_fitting(machine, MIXES[workload_type]))
    if limit < step:
        raise UsageError(
            f"machine {machine.spec} cannot host a {step}-core job of every kind in workload {workload_type}"
        )
    return limit // step * step


def _shapes(mix) -> list[tuple[str, int, int]]:
    """(description, cores per node, GPUs per node) of the fixed shapes in ``mix``."""
    shapes: list[tuple[str, int, int]] = []
    if mix[NODES - 1] > 0:
        shapes += [(f"{c} cores/node", c, 0) for c in CORES_PER_NODE_CHOICES]
    for kind, g in ((GPU1, 1), (GPU2, 2)):
        if mix[kind - 1] > 0:
            shapes += [(f"{g} GPU/node at {x} cores/GPU", x * g, g) for x in CORES_PER_GPU_CHOICES]
    return shapes


def _hosts(machine: Machine, cores: int, gpus: int) -> int:
    """Nodes that can host one (cores, GPUs) unit when empty."""
    cap = machine.capacity
    return int(((cap[:, Resource.CORES] >= cores) & (cap[:, Resource.GPUS] >= gpus)).sum())


def _largest_fitting(machine: Machine, mix) -> int:
    """Largest core count for which every kind in ``mix`` fits on the empty machine."""
    limit = int(machine.totals[Resource.CORES])  # cores-only jobs
    for _, c, g in _shapes(mix):
        limit = min(limit, _hosts(machine, c, g) * c)  # R / c nodes of c cores
    return limit


def _check_fits(machine: Machine, mix, max_cores: int) -> None:
    """UsageError unless the largest job of every kind in ``mix`` fits on the empty machine."""
    total_cores = int(machine.totals[Resource.CORES])
    if mix[CORES_ONLY - 1] > 0 and max_cores > total_cores:
        raise UsageError(
            f"jobs of up to {max_cores} cores do not fit on {machine.spec} ({total_cores} cores); "
            "lower --max-cores"
        )
    for what, c, g in _shapes(mix):
        hosts, need = _hosts(machine, c, g), max_cores // c
        if need > hosts:
            raise UsageError(
                f"a {max_cores}-core job asking {what} needs {need} nodes but {machine.spec} "
                f"has {hosts} that can host it; lower --max-cores"
            )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--type", dest="workload_type", choices=tuple(MIXES), required=True,
                        help="workload type of Table 12 (job mix)")
    parser.add_argument("--jobs", type=int, default=DEFAULT_JOBS, metavar="N",
                        help=f"number of jobs (default {DEFAULT_JOBS})")
    parser.add_argument("--machine", default=DEFAULT_MACHINE,
                        help=f"machine spec or node file (default Machine-L, {DEFAULT_MACHINE})")
    parser.add_argument("--mean-interarrival", type=float, default=DEFAULT_MEAN_INTERARRIVAL, metavar="S",
                        help="mean of the exponential gaps between submissions, s "
                        f"(0 = all at time 0; default {DEFAULT_MEAN_INTERARRIVAL:g})")
    parser.add_argument("--max-cores", type=int, default=None, metavar="C",
                        help="largest core count a job asks for, a multiple of the cores per node "
                        "(default 1/8 of the machine's cores, lowered until every job fits)")
    parser.add_argument("--estimate-factor", type=float, default=1.0, metavar="F",
                        help="estimate = ceil(run x F), F >= 1 (default 1: exact estimates)")
    parser.add_argument("--seed", type=int, required=True, help="random seed")


def from_args(args: argparse.Namespace) -> tuple[jobs.JobTable, dict]:
    machine = parse_machine(args.machine)
    table = generate(
        args.workload_type,
        args.jobs,
        machine,
        np.random.default_rng(args.seed),
        mean_interarrival=args.mean_interarrival,
        max_cores=args.max_cores,
        estimate_factor=args.estimate_factor,
    )
    meta = {
        "machine": machine.spec,
        "generator": "soner",
        "type": args.workload_type,
        "jobs": args.jobs,
        "seed": args.seed,
        "mean_interarrival_s": args.mean_interarrival,
        "max_cores": args.max_cores if args.max_cores is not None else default_max_cores(machine, args.workload_type),
        "estimate_factor": args.estimate_factor,
        "kinds": {str(k): v for k, v in KIND_NAMES.items()},
    }
    return table, meta
