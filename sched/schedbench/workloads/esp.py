"""ESP-2 workloads (Wong et al.) as used by Soner and Özturan, with a CPU-GPU variant.

The 14 ESP job types (Soner & Özturan, IPSCHED/AUCSCHED paper, §5.1, Table 11) give each
job's size as a fraction of the machine's cores and a fixed run time in seconds:

====  ========  =====  =======
type  fraction  count  run (s)
====  ========  =====  =======
A     0.03125   75     257
B     0.06250   9      341
C     0.50000   3      536
D     0.25000   3      601
E     0.50000   3      312
F     0.06250   9      1846
G     0.12500   6      1321
H     0.15820   6      1078
I     0.03125   24     1438
J     0.06250   24     715
K     0.09570   15     495
L     0.12500   36     369
M     0.25000   15     192
Z     1.00000   2      100
====  ========  =====  =======

Variants (``variant=``):

* ``original``: the 230 jobs, each a core-only request of
  ``round(fraction × machine cores)`` cores (at least 1): ``units`` = cores,
  ``unit_cores`` = 1, free shape.
* ``cpu-gpu`` (the paper's modified ESP): every non-Z job twice, once as above and once
  asking 2 GPUs per node: ``nodes = round(cores / cores_per_node)`` nodes (at least 1),
  each hosting one unit of (``cores_per_node`` cores, 2 GPUs), shape fixed
  (``req_nodes`` = nodes).  ``cores_per_node`` is the smallest core count among the
  nodes with at least 2 GPUs (so the unit fits on each of them; on Machine-L it is 8), and
  the node count is capped at the number of such nodes (this never binds on Machine-L).
  The Z jobs are not duplicated (their submit times: ``z_times`` below).  458 jobs.
* ``random-size``: the 230 original jobs with the A–M sizes perturbed as in the PRACE
  IPSCHED paper: ``round(fraction × machine cores) + RAND(-4, 4)``, RAND an integer drawn
  uniformly from -4..4 inclusive, clamped to 1..machine cores.  Core-only: that paper ran
  these "with no node request" (its IP constraint on node counts was disabled because
  sizes are no longer multiples of the cores per node); this variant reads that as no
  GPU copies either (but see the next one).  The Z
  jobs stay exactly full-machine, since a Z job is by definition a full-configuration
  job (perturbing it upward would not fit, downward it would no longer be one).
* ``random-size-cpu-gpu``: ``cpu-gpu`` built from the ``random-size`` sizes, 458 jobs.
  The PRACE paper's Table 7 runs are "modified versions of experiment 4 and 6", which ran
  the CPU-GPU set, and their utilisations (0.88, 0.94) are out of reach of the 230
  core-only jobs, whose second Z job at 240 min bounds utilisation by
  11,011 / 14,500 = 0.76.  Each core-only copy asks its perturbed core count (free
  shape); its GPU copy asks the same cores with 2 GPUs on every node it uses, which in
  whole-node units is ``ceil(cores / cores_per_node)`` nodes of (``cores_per_node``
  cores, 2 GPUs): such a job holds the GPUs of every node it touches, so the node count,
  not the exact core count, is what it takes from GPU jobs (it over-asks by at most
  ``cores_per_node`` - 1 cores, 0.3 % of the work on Machine-L).

Arrivals.  The non-Z jobs are put in a seeded random order (ESP shuffles its job list);
the first 50 in that order are submitted at time 0 and each later one after a Gaussian
gap of mean 30 s and standard deviation ``interarrival_sd`` (default 10 s, chosen so
that a gap is negative, and clamped to 0, with probability 0.13 %; the paper gives only
the mean).  Submit times are the cumulative sums of the gaps rounded to whole seconds, so
they never go backwards.

The Z jobs: "the two Z jobs are submitted after all other jobs are submitted at the 80th
and 240th minute" is read as the Z jobs having *earliest* submit times which are
postponed, if need be, until the last other job has been submitted:
``submit(Z_k) = max(T_k, last non-Z submit)``.  A Z job submitted at the same second as
the last other job still comes after it, because job ids follow submission order with
the Z jobs last.  For ``cpu-gpu`` the paper adds "since we have doubled all of the jobs
other than the Z-jobs in the workload, we have also doubled the earliest time to submit
Z-jobs", which has two readings (``z_times=``, ``--z-times``):

* ``esp2`` (default): T = 80 and 240 min for every variant.  The sentence is read as
  ESP-2's own rule that the Z jobs come after all the others, which the doubled job list
  already postpones: in ``cpu-gpu`` the last of the 456 other jobs arrives at about
  203 min, so the first Z job comes right after it, the second at 240 min.  This is the
  reading that agrees with the papers' measurements: on Machine-L the second Z job can
  end by 14,500 s (4 h 2 min), well before the 6.06 h of work are done, so the schedule
  sets the makespan and utilisation (SLURM backfill, basic priority: 23,900 s and 0.913
  for seed 1; the PRACE paper, Table 6, measured 0.89-0.94).
* ``doubled``: T = 160 and 480 min for ``cpu-gpu`` (80 and 240 min for the variants
  whose jobs are not doubled).  The second Z job then cannot start before 8 h, when
  every other job has long ended, so the makespan is 28,900 s whatever the scheduler
  does and Soner utilisation 21,822 / 28,900 = 0.755, which neither paper measured.

Estimates.  ESP jobs have known run times, so ``estimate`` = ``ceil(run × estimate_factor)``
with ``estimate_factor`` = 1 by default (exact estimates).

Other columns: ``job_id`` 1..n in submission order; ``executable`` is the ESP type as
a number (A = 1 … M = 13, Z = 14), the closest SWF field to "which ESP application";
``procs_req`` is the total cores asked for, ``time_req`` the estimate; the rest -1.

Work: Σ cores(j) / machine cores × run(j) is 11,011 machine-seconds for ``original``
(Table 11; the paper's text says 10,984, which the table does not reproduce) and 21,822
for ``cpu-gpu`` on Machine-L (as the paper says); the random sizes move these by a few
machine-seconds, and ``random-size-cpu-gpu``'s whole-node GPU copies add about 0.3 %.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from ..errors import UsageError
from ..io import jobs
from ..io.machine import Machine, Resource
from ..io.machine import parse as parse_machine

DEFAULT_MACHINE = "1024x(cores=8,gpus=2)"  # Machine-L of the paper
VARIANTS: tuple[str, ...] = ("original", "cpu-gpu", "random-size", "random-size-cpu-gpu")
RANDOM_SIZE = ("random-size", "random-size-cpu-gpu")
GPU_COPIES = ("cpu-gpu", "random-size-cpu-gpu")

# (type, fraction of the machine's cores, count, run time in s): Table 11.
JOB_TYPES: tuple[tuple[str, float, int, int], ...] = (
    ("A", 0.03125, 75, 257),
    ("B", 0.06250, 9, 341),
    ("C", 0.50000, 3, 536),
    ("D", 0.25000, 3, 601),
    ("E", 0.50000, 3, 312),
    ("F", 0.06250, 9, 1846),
    ("G", 0.12500, 6, 1321),
    ("H", 0.15820, 6, 1078),
    ("I", 0.03125, 24, 1438),
    ("J", 0.06250, 24, 715),
    ("K", 0.09570, 15, 495),
    ("L", 0.12500, 36, 369),
    ("M", 0.25000, 15, 192),
    ("Z", 1.00000, 2, 100),
)
Z_TYPE = len(JOB_TYPES)  # executable number of the Z jobs (types are numbered from 1)

N_RELEASED_AT_ZERO = 50
MEAN_INTERARRIVAL = 30.0  # s, ESP
DEFAULT_INTERARRIVAL_SD = 10.0  # s, our choice (the paper gives only the mean)
Z_EARLIEST = (80 * 60, 240 * 60)  # s, ESP-2's Z submit times (doubled for cpu-gpu under z_times="doubled")
Z_TIMES: tuple[str, ...] = ("esp2", "doubled")  # readings of the Z submit times (module docstring)
DEFAULT_Z_TIMES = "esp2"
GPUS_PER_NODE = 2  # of the GPU copies in cpu-gpu
RANDOM_SIZE_SPREAD = 4  # RAND(-4, 4)


def generate(
    variant: str = "original",
    machine: Machine | str = DEFAULT_MACHINE,
    rng: np.random.Generator | None = None,
    *,
    interarrival_sd: float = DEFAULT_INTERARRIVAL_SD,
    estimate_factor: float = 1.0,
    z_times: str = DEFAULT_Z_TIMES,
) -> jobs.JobTable:
    """An ESP workload for ``machine`` (a :class:`Machine` or a ``--machine`` string).

    ``rng`` drives the job order, the inter-arrival gaps (s) and, for the ``random-size`` variants,
    the size perturbation; ``interarrival_sd`` is the standard deviation of the gaps (s,
    mean 30 s); ``estimate`` = ``ceil(run × estimate_factor)`` (``estimate_factor`` ≥ 1);
    ``z_times`` the reading of the Z jobs' earliest submit times, ``esp2`` or ``doubled``.
    """
    if variant not in VARIANTS:
        raise UsageError(f"unknown ESP variant {variant!r} (choose from {', '.join(VARIANTS)})")
    if rng is None:
        raise UsageError("give rng=np.random.default_rng(seed): ESP job order and arrivals are random")
    if not (math.isfinite(interarrival_sd) and interarrival_sd >= 0):
        raise UsageError(f"inter-arrival standard deviation must be >= 0 s, not {interarrival_sd}")
    if not (math.isfinite(estimate_factor) and estimate_factor >= 1):
        raise UsageError(f"estimate factor must be >= 1, not {estimate_factor}")
    if z_times not in Z_TIMES:
        raise UsageError(f"unknown Z submit-time reading {z_times!r} (choose from {', '.join(Z_TIMES)})")
    if isinstance(machine, str):
        machine = parse_machine(machine)
    total_cores = int(machine.totals[Resource.CORES])
    if total_cores <= 0:
        raise UsageError(f"machine {machine.spec} has no cores to run ESP jobs on")

    # Non-Z jobs of the table, one row per job, in type order (shuffled below).
    kinds = [(t, frac, count, run) for t, frac, count, run in JOB_TYPES if t != "Z"]
    type_no = np.repeat(np.arange(1, len(kinds) + 1), [k[2] for k in kinds])
    frac = np.repeat([k[1] for k in kinds], [k[2] for k in kinds])
    run = np.repeat([k[3] for k in kinds], [k[2] for k in kinds]).astype(np.int64)
    cores = _cores(frac, total_cores)
    if variant in RANDOM_SIZE:
        # Drawn in type order before shuffling so the draw does not depend on the order.
        noise = rng.integers(-RANDOM_SIZE_SPREAD, RANDOM_SIZE_SPREAD + 1, size=cores.shape[0])
        cores = np.clip(cores + noise, 1, total_cores)

    n_plain = cores.shape[0]
    units = cores.copy()
    unit_cores = np.ones(n_plain, dtype=np.int64)
    unit_gpus = np.zeros(n_plain, dtype=np.int64)
    req_nodes = np.full(n_plain, -1, dtype=np.int64)
    z_earliest = np.asarray(Z_EARLIEST, dtype=np.int64)
    if variant in GPU_COPIES:
        cpn, n_gpu_nodes = _gpu_nodes(machine)
        # whole nodes: the nearest count for cpu-gpu, enough to hold a perturbed core count
        per_node = np.ceil(cores / cpn) if variant == "random-size-cpu-gpu" else np.rint(cores / cpn)
        nodes = np.clip(per_node.astype(np.int64), 1, n_gpu_nodes)
        type_no = np.concatenate([type_no, type_no])
        run = np.concatenate([run, run])
        units = np.concatenate([units, nodes])
        unit_cores = np.concatenate([unit_cores, np.full(n_plain, cpn, dtype=np.int64)])
        unit_gpus = np.concatenate([unit_gpus, np.full(n_plain, GPUS_PER_NODE, dtype=np.int64)])
        req_nodes = np.concatenate([req_nodes, nodes])
        if z_times == "doubled":
            z_earliest = 2 * z_earliest

    # ESP submits its jobs in a random order: shuffle the non-Z jobs.
    order = rng.permutation(type_no.shape[0])
    type_no, run, units, unit_cores, unit_gpus, req_nodes = (
        a[order] for a in (type_no, run, units, unit_cores, unit_gpus, req_nodes)
    )
    submit = _arrivals(type_no.shape[0], interarrival_sd, rng)

    # The Z jobs: full machine, at their earliest time but after every other submission.
    n_z = JOB_TYPES[-1][2]
    last = int(submit[-1]) if submit.shape[0] else 0
    z_submit = np.maximum(z_earliest, last)
    type_no = np.concatenate([type_no, np.full(n_z, Z_TYPE)])
    run = np.concatenate([run, np.full(n_z, JOB_TYPES[-1][3], dtype=np.int64)])
    units = np.concatenate([units, np.full(n_z, total_cores, dtype=np.int64)])
    unit_cores = np.concatenate([unit_cores, np.ones(n_z, dtype=np.int64)])
    unit_gpus = np.concatenate([unit_gpus, np.zeros(n_z, dtype=np.int64)])
    req_nodes = np.concatenate([req_nodes, np.full(n_z, -1, dtype=np.int64)])
    submit = np.concatenate([submit, z_submit])

    return jobs.core_gpu_table(
        submit, run, units, unit_cores, unit_gpus, req_nodes, type_no, estimate_factor
    )


def _cores(frac: np.ndarray, total_cores: int) -> np.ndarray:
    """Core counts of jobs sized as fractions of the machine (nearest, at least 1)."""
    return np.clip(np.rint(frac * total_cores).astype(np.int64), 1, total_cores)


def _gpu_nodes(machine: Machine) -> tuple[int, int]:
    """(cores per node, node count) of the nodes that can host a 2-GPU-per-node unit."""
    cap = machine.capacity
    ok = (cap[:, Resource.GPUS] >= GPUS_PER_NODE) & (cap[:, Resource.CORES] > 0)
    if not ok.any():
        raise UsageError(
            f"the cpu-gpu ESP variant needs nodes with cores and >= {GPUS_PER_NODE} GPUs; "
            f"machine {machine.spec} has none"
        )
    return int(cap[ok, Resource.CORES].min()), int(ok.sum())


def _arrivals(n: int, sd: float, rng: np.random.Generator) -> np.ndarray:
    """Submit times (s) of ``n`` jobs: the first 50 at 0, then Gaussian gaps clamped at 0."""
    gaps = np.zeros(n)
    n_later = max(n - N_RELEASED_AT_ZERO, 0)
    if n_later:
        gaps[N_RELEASED_AT_ZERO:] = np.maximum(rng.normal(MEAN_INTERARRIVAL, sd, size=n_later), 0.0)
    # Round the cumulative time, not each gap, so rounding errors do not accumulate.
    return np.rint(np.cumsum(gaps)).astype(np.int64)


def work(table: jobs.JobTable, machine: Machine | str) -> float:
    """Σ cores(j) / machine cores × run(j): the workload's length in machine-seconds."""
    if isinstance(machine, str):
        machine = parse_machine(machine)
    total_cores = int(machine.totals[Resource.CORES])
    return float(np.sum(table.units * table.unit_cores * table.run) / total_cores)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--variant", choices=VARIANTS, default="original",
        help="original (230 core-only jobs), cpu-gpu (458 jobs: non-Z jobs duplicated "
        "with 2 GPUs per node), random-size (sizes + RAND(-4,4)) or random-size-cpu-gpu "
        "(cpu-gpu of the random sizes, PRACE Table 7); default original",
    )
    parser.add_argument(
        "--machine", default=DEFAULT_MACHINE,
        help=f"machine spec or node file (default Machine-L, {DEFAULT_MACHINE})",
    )
    parser.add_argument("--seed", type=int, required=True, help="random seed (job order, arrivals, sizes)")
    parser.add_argument(
        "--interarrival-sd", type=float, default=DEFAULT_INTERARRIVAL_SD, metavar="S",
        help=f"standard deviation of the Gaussian inter-arrival gaps, s (mean 30 s; default {DEFAULT_INTERARRIVAL_SD:g})",
    )
    parser.add_argument(
        "--estimate-factor", type=float, default=1.0, metavar="F",
        help="estimate = ceil(run x F), F >= 1 (default 1: exact estimates)",
    )
    parser.add_argument(
        "--z-times", choices=Z_TIMES, default=DEFAULT_Z_TIMES,
        help="earliest submit times of the two Z jobs: esp2 (80 and 240 min, as in ESP-2; "
        "matches the papers' utilisation) or doubled (160 and 480 min for cpu-gpu, the paper's "
        "'doubled the earliest time'; fixes the makespan at about 8 h); default esp2",
    )


def from_args(args: argparse.Namespace) -> tuple[jobs.JobTable, dict]:
    machine = parse_machine(args.machine)
    table = generate(
        args.variant,
        machine,
        np.random.default_rng(args.seed),
        interarrival_sd=args.interarrival_sd,
        estimate_factor=args.estimate_factor,
        z_times=args.z_times,
    )
    meta = {
        "machine": machine.spec,
        "generator": "esp",
        "variant": args.variant,
        "seed": args.seed,
        "interarrival_mean_s": MEAN_INTERARRIVAL,
        "interarrival_sd_s": args.interarrival_sd,
        "estimate_factor": args.estimate_factor,
        "z_times": args.z_times,
        "z_submit_s": table.submit[table.executable == Z_TYPE].tolist(),
        "work_machine_seconds": round(work(table, machine), 3),
    }
    return table, meta
