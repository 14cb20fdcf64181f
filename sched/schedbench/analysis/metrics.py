"""Metrics of one replay, computed from its ``jobs`` and ``timeline`` frames.

Inputs (as written by a replay):

- ``jobs``: one row per input job; Int64 columns ``job_id, submit, start, end, wait, run,
  size, cores, gpus, mics, mem, estimate, pred, user, group, queue, nodes_used`` (start, end
  and wait are null for jobs that did not run; cores, gpus, mics and mem, in MiB, are *per
  unit* and ``size`` is the number of units), String ``status`` (one of :data:`STATUSES`),
  ``scheduler`` and ``allocator``.
- ``timeline``: one row per decision instant, sorted by distinct ``time``: ``queue`` (jobs
  waiting after the pass), ``running``, ``used_cores``, ``used_gpus``, ``used_mics``,
  ``used_mem``.  The state of a row holds from its time until the next row's time; the last
  row closes the observed interval and gets no weight of its own.
- ``totals``: machine capacity summed over nodes, ``{"cores", "gpus", "mics", "mem"}``.

Every job metric is computed over the jobs whose status is ``"replayed"`` only (a frame
without a ``status`` column is taken to hold replayed jobs only).  Each function
returns plain Python numbers, and ``None`` where the metric is undefined (no job to average,
a zero-length interval, a zero capacity); no function returns NaN or infinity.  The formulas
are in the docstrings; :func:`summary` gathers them in one JSON-serialisable dict.

Notation: for a replayed job j, w_j = wait, r_j = run, s_j = size (units), c_j, g_j, m_j,
M_j = cores, GPUs, MICs, MiB per unit; C, G, X, MEM = machine totals; J = replayed jobs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import polars as pl

STATUSES: tuple[str, ...] = (
    "replayed",
    "dropped_no_runtime",
    "dropped_no_size",
    "dropped_too_wide",
    "not_started",
    "rejected_by_limit",
    "dropped_no_submit",
    "never_started",
    "no_eligible_nodes",
    "predecessor_not_run",
)
"""Every value the ``status`` column may take."""

RESOURCES: tuple[str, ...] = ("cores", "gpus", "mics", "mem")
"""Resource types, as named in ``totals`` and as per-unit columns of ``jobs``; the timeline
column of type k is ``used_<k>``."""

BSLD_THRESHOLD = 10
"""Bounded-slowdown threshold in seconds (docs/reference/replay-contract.md §5)."""

P95 = 0.95
P99 = 0.99
QUANTILE_METHOD = "linear"
"""Percentiles interpolate linearly between order statistics: for n sorted values
x_0 <= ... <= x_{n-1}, the q-quantile is x_i + (h - i)(x_{i+1} - x_i) with h = (n - 1) q and
i = floor(h) (Hyndman and Fan's type 7).  This is polars' ``interpolation="linear"`` and
numpy's default ``percentile(..., method="linear")``."""


# -- helpers ------------------------------------------------------------------------------


def _replayed(jobs: pl.DataFrame) -> pl.DataFrame:
    """The replayed jobs; a frame without a ``status`` column is taken as replayed jobs
    only (:func:`summary` filters once and hands such a frame to the other metrics)."""
    if "status" not in jobs.columns:
        return jobs
    return jobs.filter(pl.col("status") == "replayed")


def _float(x) -> float | None:
    """A plain float, or None for null, NaN and infinities."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _int(x) -> int | None:
    return None if x is None else int(x)


def _resource_seconds(k: str) -> pl.Expr:
    """s_j * (per-unit amount of type k)_j * r_j, in Float64 (memory MiB-seconds of a large
    trace overflow Int64 when summed)."""
    return pl.col("size").cast(pl.Float64) * pl.col(k).cast(pl.Float64) * pl.col("run")


def _by_time(timeline: pl.DataFrame) -> pl.DataFrame:
    """The timeline sorted by time (stable); itself when it already is (a replay's is)."""
    if timeline.height < 2 or timeline.get_column("time").is_sorted():
        return timeline
    return timeline.sort("time", maintain_order=True)


def _time_weighted_means(timeline: pl.DataFrame, values: Mapping[str, pl.Expr]) -> dict[str, float | None]:
    """For each named value v: sum_i v_i (t_{i+1} - t_i) / (t_last - t_first) over the rows
    sorted by time; None when the timeline is empty or its span is 0 (a single instant).
    One pass over the timeline for all the values."""
    if timeline.height == 0 or not values:
        return dict.fromkeys(values)
    tl = _by_time(timeline)
    dt = pl.col("time").diff().shift(-1)
    row = tl.select(
        *((v.cast(pl.Float64) * dt).sum().alias(f"v{i}") for i, v in enumerate(values.values())),
        (pl.col("time").max() - pl.col("time").min()).alias("span"),
    ).row(0)
    span = row[-1]
    if not span:
        return dict.fromkeys(values)
    return {name: _float(w / span) for name, w in zip(values, row, strict=False)}


def _time_weighted_mean(timeline: pl.DataFrame, value: pl.Expr) -> float | None:
    """sum_i v_i (t_{i+1} - t_i) / (t_last - t_first) over the rows sorted by time; None when
    the timeline is empty or its span is 0 (a single instant)."""
    return _time_weighted_means(timeline, {"v": value})["v"]


# -- counts -------------------------------------------------------------------------------


def counts(jobs: pl.DataFrame) -> dict[str, int]:
    """Number of jobs by outcome.

    ``input`` = all rows; ``replayed``; ``dropped_no_submit``, ``dropped_no_runtime``,
    ``dropped_no_size``, ``dropped_too_wide`` (left out of the replay, contract §2);
    ``dropped`` = the sum of the four; ``not_started`` (queued when the replay ended);
    ``rejected_by_limit`` (a site policy refuses the job for ever, :mod:`schedbench.plan.site`);
    ``never_started`` (the log says the job never ran: a Slurm job cancelled while pending,
    or pending or running when the history was dumped); ``no_eligible_nodes`` (its
    partition and features leave it no node, :mod:`schedbench.plan.eligibility`);
    ``predecessor_not_run`` (job dependencies: its predecessor was left out or never ended).
    Raises ValueError on a status outside :data:`STATUSES`.
    """
    by = dict(jobs.group_by("status").len().iter_rows())
    unknown = sorted(str(s) for s in by if s not in STATUSES)
    if unknown:
        raise ValueError(f"unknown job status {', '.join(unknown)}")
    out = {"input": jobs.height}
    out.update({s: int(by.get(s, 0)) for s in STATUSES})
    out["dropped"] = sum(out[s] for s in STATUSES if s.startswith("dropped_"))
    return out


# -- waiting time and slowdowns -----------------------------------------------------------


def wait_stats(jobs: pl.DataFrame) -> dict[str, float | None]:
    """Waiting time w_j = start_j - submit_j of the replayed jobs, in seconds.

    ``mean`` = (1/|J|) sum_j w_j; ``median``, ``p95``, ``p99`` = the 0.5-, 0.95- and
    0.99-quantiles with linear interpolation (:data:`QUANTILE_METHOD`); ``max`` = max_j w_j
    (the longest wait: a mean hides a job a scheduler starves).  All None when J is empty.
    """
    w = pl.col("wait")
    row = (
        _replayed(jobs)
        .select(
            w.mean().alias("mean"),
            w.quantile(0.5, interpolation=QUANTILE_METHOD).alias("median"),
            w.quantile(P95, interpolation=QUANTILE_METHOD).alias("p95"),
            w.quantile(P99, interpolation=QUANTILE_METHOD).alias("p99"),
            w.max().alias("max"),
        )
        .row(0, named=True)
    )
    return {k: _float(v) for k, v in row.items()}


def mean_wait(jobs: pl.DataFrame) -> float | None:
    """(1/|J|) sum_j w_j; None when J is empty."""
    return wait_stats(jobs)["mean"]


def slowdown(jobs: pl.DataFrame) -> float | None:
    """Mean slowdown over replayed jobs with r_j > 0:  mean of (w_j + r_j) / r_j.

    Jobs with run time 0 are left out (their ratio is undefined); this is the slowdown of
    Netti et al., Sec. 4.1.  None when no replayed job has r_j > 0.
    """
    r = pl.col("run")
    v = _replayed(jobs).select(((pl.col("wait") + r) / r).filter(r > 0).mean()).item()
    return _float(v)


def bounded_slowdown(jobs: pl.DataFrame, threshold: int = BSLD_THRESHOLD) -> float | None:
    """Mean bounded slowdown over all replayed jobs (including run time 0):

        bsld_j = max(1, (w_j + r_j) / max(r_j, threshold)),  threshold = 10 s,

    the definition of the replay contract (docs/reference/replay-contract.md §5).  None when J
    is empty.
    """
    r = pl.col("run")
    ratio = (pl.col("wait") + r) / pl.max_horizontal(r, pl.lit(threshold, pl.Int64))
    v = _replayed(jobs).select(pl.max_horizontal(ratio, pl.lit(1.0)).mean()).item()
    return _float(v)


# -- makespan and utilisation -------------------------------------------------------------


def makespan(jobs: pl.DataFrame) -> int | None:
    """max_j end_j - min_j submit_j over replayed jobs, in seconds; None when J is empty.

    The interval starts at the first submission, not at the first start: the time the
    scheduler lets the machine idle while the first job already waits is the scheduler's
    doing and is charged to it (as ESP's elapsed time starts when the workload is released).
    """
    v = _replayed(jobs).select(pl.col("end").max() - pl.col("submit").min()).item()
    return _int(v)


def used_seconds(jobs: pl.DataFrame, kind: str = "cores") -> float:
    """sum_j s_j a_jk r_j over replayed jobs, a_jk the per-unit amount of type ``kind``
    (0 when J is empty)."""
    return float(_replayed(jobs).select(_resource_seconds(kind).sum()).item())


def used_core_seconds(jobs: pl.DataFrame) -> float:
    """sum_j s_j c_j r_j over replayed jobs (0 when J is empty)."""
    return used_seconds(jobs, "cores")


def utilisation(jobs: pl.DataFrame, totals: Mapping[str, int], kind: str = "cores") -> float | None:
    """Utilisation of resource type ``kind`` (cores by default) over the makespan:

        U_k = sum_j s_j a_jk r_j / (cap_k * makespan),

    a_jk the job's per-unit amount of type k.  None when J is empty, cap_k = 0 or the
    makespan is 0.  At most 1 whenever the schedule never uses more than cap_k at once.
    """
    span = makespan(jobs)
    cap = int(totals[kind])
    if not span or cap <= 0:
        return None
    return _float(used_seconds(jobs, kind) / (cap * span))


def theoretical_runtime(jobs: pl.DataFrame, totals: Mapping[str, int]) -> float | None:
    """Soner and Özturan's *theoretical run-time*: sum_j r_j (s_j c_j) / C, the duration of
    each job times its requested core count, all divided by the total number of cores
    (IPSCHED/AUCSCHED paper, Sec. 6 "Results").  A lower bound of the makespan, not the
    optimum.  None when C = 0."""
    cap = int(totals["cores"])
    if cap <= 0:
        return None
    return used_core_seconds(jobs) / cap


def soner_utilisation(jobs: pl.DataFrame, totals: Mapping[str, int]) -> float | None:
    """Utilisation as Soner and Özturan define it (Integer Programming Based Heterogeneous
    CPU-GPU Cluster Schedulers for SLURM Resource Manager, Sec. 6 "Results", the
    *Utilization* bullet):

        U_SO = theoretical run-time / run-time taken by the test
             = (sum_j r_j s_j c_j / C) / (max_j end_j - min_j submit_j).

    "Run-time is the time it takes to schedule all jobs in workload": read here as the test's
    elapsed time, from the release of the workload (first submission) to the completion of
    the last job, i.e. :func:`makespan`.  Only cores count, not GPUs, even for their CPU-GPU
    workloads.  (Their PRACE paper, Tables 6-7, reports "Utilization" without defining it;
    its "sum of completion times ... 21822 seconds" for the modified ESP set is exactly the
    theoretical run-time of this definition: sum of job fraction x duration over Table 4
    with non-Z jobs doubled.)  With these choices U_SO equals :func:`utilisation`.
    None when J is empty, C = 0 or the makespan is 0.
    """
    theo = theoretical_runtime(jobs, totals)
    span = makespan(jobs)
    if theo is None or not span:
        return None
    return _float(theo / span)


# -- offered load and load ratio ----------------------------------------------------------


def offered_load(jobs: pl.DataFrame, totals: Mapping[str, int]) -> dict[str, float | None]:
    """Offered load of each resource type k over the submission span:

        rho_k = sum_j s_j a_jk r_j / (cap_k * (max_j submit_j - min_j submit_j)),

    a_jk the per-unit amount of type k (MiB for memory), over replayed jobs.  Above 1, more
    work of type k arrived than the machine could do while it was arriving.  None for a type
    with cap_k = 0, and for every type when the span is 0 or J is empty.  (Not Netti et al.'s
    *load ratio*: see :func:`load_ratio`.)
    """
    rep = _replayed(jobs)
    row = rep.select(
        (pl.col("submit").max() - pl.col("submit").min()).alias("span"),
        *(_resource_seconds(k).sum().alias(k) for k in RESOURCES),
    ).row(0, named=True)
    span = row["span"]
    out: dict[str, float | None] = {}
    for k in RESOURCES:
        cap = int(totals[k])
        out[k] = _float(row[k] / (cap * span)) if cap > 0 and span else None
    return out


def load_ratio(timeline: pl.DataFrame, totals: Mapping[str, int]) -> dict[str, float | None]:
    """System load ratio of each resource type k, as in Netti et al. (Heterogeneity-Aware
    Resource Allocation in HPC Systems, Sec. 3 "Weighted heuristic" and Sec. 4.1, after
    Emeras et al.): the amount of type k in use at a time over the total capacity of type k,
    assuming that resources assigned to jobs are always used fully, averaged over time
    (Sec. 4.4: "average ... over all time points").  Here the average is time-weighted over
    the timeline:

        L_k = sum_i used_k(t_i) (t_{i+1} - t_i) / (cap_k * (t_last - t_first)).

    None for a type with cap_k = 0, and for every type when the timeline is empty or spans a
    single instant.
    """
    caps = {k: int(totals[k]) for k in RESOURCES}
    means = _time_weighted_means(timeline, {k: pl.col(f"used_{k}") for k in RESOURCES if caps[k] > 0})
    out: dict[str, float | None] = {}
    for k in RESOURCES:
        m = means.get(k)
        out[k] = None if m is None else _float(m / caps[k])
    return out


# -- queue length -------------------------------------------------------------------------


def mean_queue_length(timeline: pl.DataFrame) -> float | None:
    """Time-weighted mean number of waiting jobs over [t_first, t_last]:

        Q = sum_i q_i (t_{i+1} - t_i) / (t_last - t_first),

    each row's queue q_i holding until the next row's time (the last row gets no weight).
    None when the timeline is empty or has a single instant.
    """
    return _time_weighted_mean(timeline, pl.col("queue"))


def mean_queue_length_per_instant(timeline: pl.DataFrame) -> float | None:
    """Unweighted mean of q_i over the decision instants, (1/n) sum_i q_i: Netti et al.'s
    "average queue size ... over all dispatching times" (Sec. 4.2).  None when empty."""
    return _float(timeline.select(pl.col("queue").mean()).item()) if timeline.height else None


def max_queue_length(timeline: pl.DataFrame) -> int | None:
    """max_i q_i over all rows; None when the timeline is empty."""
    return _int(timeline.select(pl.col("queue").max()).item()) if timeline.height else None


# -- per-user waits and fairness ----------------------------------------------------------


def per_user_wait(jobs: pl.DataFrame) -> pl.DataFrame:
    """One row per user with a replayed job: ``user`` (Int64), ``mean_wait`` (Float64,
    (1/|J_u|) sum_{j in J_u} w_j) and ``jobs`` (Int64, |J_u|), sorted by user.  An unknown user
    (-1 in SWF) is one user like any other."""
    return (
        _replayed(jobs)
        .group_by("user")
        .agg(pl.col("wait").mean().cast(pl.Float64).alias("mean_wait"), pl.len().alias("jobs"))
        .with_columns(pl.col("jobs").cast(pl.Int64))
        .sort("user")
    )


def fairness(jobs: pl.DataFrame) -> float | None:
    """Jain's fairness index (Jain, Chiu and Hawe, DEC-TR-301, 1984) of the per-user mean
    waits x_u (:func:`per_user_wait`) over the n users:

        F = (sum_u x_u)^2 / (n sum_u x_u^2),   1/n <= F <= 1,

    1 when every user waits the same on average, 1/n when one user does all the waiting.
    It measures equality of treatment, not its level.  F = 1 when every x_u is 0 (everyone
    is treated the same).  None when no user has a replayed job.
    """
    return _jain(per_user_wait(jobs))


def _jain(per_user: pl.DataFrame) -> float | None:
    s, s2, n = (
        per_user
        .select(
            pl.col("mean_wait").sum(),
            (pl.col("mean_wait") ** 2).sum().alias("s2"),
            pl.len(),
        )
        .row(0)
    )
    if not n:
        return None
    if not s2:
        return 1.0
    return _float(s * s / (n * s2))


# -- summary ------------------------------------------------------------------------------


def _label(jobs: pl.DataFrame, column: str) -> str | None:
    if column not in jobs.columns or jobs.height == 0:
        return None
    v = jobs.get_column(column)[0]
    return None if v is None else str(v)


_JOB_COLUMNS = ("submit", "end", "wait", "run", "size", "user", *RESOURCES)
"""The columns of ``jobs`` the metrics read (besides ``status``)."""


def summary(jobs: pl.DataFrame, timeline: pl.DataFrame, totals: Mapping[str, int]) -> dict:
    """Every scalar metric of one replay, in a flat JSON-serialisable dict of str, int,
    float or None (never NaN): scheduler, allocator, ``jobs_<outcome>`` counts, wait_mean,
    wait_median, wait_p95, wait_p99, wait_max, slowdown_mean, bsld_mean, makespan, utilisation (cores),
    utilisation_<k> per resource type (None where the machine has none of k),
    soner_utilisation, queue_mean (time-weighted), queue_mean_per_instant, queue_max,
    offered_load_<k> and load_ratio_<k> per resource type, users, fairness_jain_wait."""
    out: dict = {"scheduler": _label(jobs, "scheduler"), "allocator": _label(jobs, "allocator")}
    n_by = counts(jobs)
    out.update({f"jobs_{k}": v for k, v in n_by.items()})
    # Only the columns the metrics read, filtered once (all rows, without a copy, when
    # every job was replayed): a large jobs frame is never copied whole.
    wanted = [c for c in _JOB_COLUMNS if c in jobs.columns]
    if n_by["replayed"] == jobs.height:
        rep = jobs.select(wanted)
    else:
        rep = jobs.lazy().filter(pl.col("status") == "replayed").select(wanted).collect()
    out.update({f"wait_{k}": v for k, v in wait_stats(rep).items()})
    out["slowdown_mean"] = slowdown(rep)
    out["bsld_mean"] = bounded_slowdown(rep)
    out["makespan"] = makespan(rep)
    # per resource type: a GPU-bound run is not summed up by its cores alone
    per_type = {f"utilisation_{k}": utilisation(rep, totals, k) for k in RESOURCES}
    out["utilisation"] = per_type["utilisation_cores"]
    out.update(per_type)
    out["soner_utilisation"] = soner_utilisation(rep, totals)
    tl = _by_time(timeline)
    out["queue_mean"] = mean_queue_length(tl)
    out["queue_mean_per_instant"] = mean_queue_length_per_instant(tl)
    out["queue_max"] = max_queue_length(tl)
    out.update({f"offered_load_{k}": v for k, v in offered_load(rep, totals).items()})
    out.update({f"load_ratio_{k}": v for k, v in load_ratio(tl, totals).items()})
    per_user = per_user_wait(rep)
    out["users"] = per_user.height
    out["fairness_jain_wait"] = _jain(per_user)
    return out


def per_account(jobs: pl.DataFrame, by: str, targets: Mapping[int, float]) -> dict:
    """Fairness across accounts (Steffen; issue 12): for each account (the ``by`` column,
    "group" or "user") with a replayed job in ``jobs`` (an account none of whose jobs was
    replayed has no wait to compare): jobs, mean and p95 wait (s) of its replayed jobs,
    first-start latency (s: its first start minus its first submit over all its jobs,
    dropped ones included), delivered
    unit-hours per day over the trace's span (first submit to last end of the replayed
    jobs; units of the job's resource type, cores for SWF logs) beside its target
    occupancy x 24 (``targets``: units), and Jain's index over the accounts with a target
    of (delivered share / allocated share).  JSON-ready: {"accounts": {id: {...}},
    "jain_delivered_vs_allocated": float | None}."""
    rep = _replayed(jobs)
    if rep.height == 0:
        return {"accounts": {}, "jain_delivered_vs_allocated": None}
    span = rep.select(pl.col("end").max() - pl.col("submit").min()).item()
    days = max(float(span), 1.0) / 86400.0
    first_submit = jobs.group_by(by).agg(pl.col("submit").min().alias("first_submit"))
    rows = (
        rep.group_by(by)
        .agg(
            pl.len().alias("jobs"),
            pl.col("wait").mean().alias("wait_mean"),
            pl.col("wait").quantile(0.95, interpolation="linear").alias("wait_p95"),
            pl.col("start").min().alias("first_start"),
            (pl.col("size").cast(pl.Float64) * pl.col("run")).sum().alias("work"),
        )
        .join(first_submit, on=by, how="left")
        .sort(by)
    )
    accounts = {}
    for r in rows.iter_rows(named=True):
        target = float(targets.get(int(r[by]), 0.0))
        accounts[str(r[by])] = {
            "jobs": int(r["jobs"]),
            "wait_mean": _float(r["wait_mean"]),
            "wait_p95": _float(r["wait_p95"]),
            "first_start_latency": int(r["first_start"] - r["first_submit"]),
            "delivered_unit_hours_per_day": float(r["work"]) / 3600.0 / days,
            "target_unit_hours_per_day": target * 24.0,
        }
    delivered = {a: v["delivered_unit_hours_per_day"] for a, v in accounts.items() if v["target_unit_hours_per_day"] > 0}
    total_d = sum(delivered.values())
    total_t = sum(accounts[a]["target_unit_hours_per_day"] for a in delivered)
    jain = None
    if delivered and total_d > 0:
        x = [(delivered[a] / total_d) / (accounts[a]["target_unit_hours_per_day"] / total_t) for a in delivered]
        jain = sum(x) ** 2 / (len(x) * sum(v * v for v in x))
    return {"accounts": accounts, "jain_delivered_vs_allocated": jain}
