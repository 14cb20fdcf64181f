"""What a sweep's report shows, as data: the metric catalogue (titles, units, which way
is better, what each means), and the sweep's results loaded into frames.

:func:`load_runs` reads ``RESULTS/runs.parquet`` as written by :mod:`schedbench.sweep`;
:func:`summarise` averages, for each workload, the runs of one scheduler+allocator (and
predictor, when a sweep has several) over their seeds.  Within a workload every duration
is shown in one unit (:func:`unit_of`), chosen from the workload's largest value of that
quantity; utilisation is given per resource type the machine has (cores, GPUs, MICs), so
a GPU-bound run is not summed up by its idle cores.

Rows are ordered as the registry lists schedulers and allocators, and predictors as
:func:`schedbench.registry.predictor_names` does: no numba is imported to sort them.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ... import registry
from ...errors import DataError


@dataclass(frozen=True)
class Metric:
    column: str
    title: str
    kind: str  # "duration" (s), "ratio" (x), "share" (0..1), "number", "rate"
    better: str  # "lower" or "higher"
    explain: str
    own_unit: bool = False
    """A duration shown in a unit of its own (:func:`metric_unit`): a tail (the longest
    wait) can be days where the means are minutes, and would otherwise set the unit of all."""


METRICS: tuple[Metric, ...] = (
    Metric("wait_mean", "mean wait", "duration", "lower",
           "average time a job waits in the queue, from its submission to its start."),
    Metric("wait_p99", "p99 wait", "duration", "lower",
           "the wait that 99 % of the jobs do not exceed (linear interpolation between jobs): the tail "
           "a mean hides.", own_unit=True),
    Metric("wait_max", "max wait", "duration", "lower",
           "the longest time one job waited: a scheduler that starves a job (e.g. PRB skipping a wide "
           "one) shows here, not in the mean.", own_unit=True),
    Metric("bsld_mean", "bounded slowdown", "ratio", "lower",
           "average of max(1, (wait + run) / max(run, 10 s)): how many times longer than its own run "
           "time a job took to finish; 1 means no waiting (jobs under 10 s count as 10 s long)."),
    Metric("utilisation", "utilisation", "share", "higher",
           "share of the machine's cores kept busy by jobs between the first submission and the "
           "last job's end (the rest idled: no job fitted, or none was waiting)."),
    Metric("queue_mean", "mean queue length", "number", "lower",
           "number of jobs waiting in the queue, averaged over time."),
    Metric("worst_account_wait_mean", "worst account mean wait", "duration", "lower",
           "the mean wait of the account (SWF group, or the fair-share schedulers' accounts) whose "
           "jobs waited longest on average; summary.json's fairness block has every account."),
)
_RESOURCE_NAMES = {"cores": ("core", "cores"), "gpus": ("GPU", "GPUs"), "mics": ("MIC", "MICs")}
UTILISATION: dict[str, Metric] = {
    k: Metric(f"utilisation_{k}", f"{one} utilisation", "share", "higher",
              f"share of the machine's {many} kept busy by jobs between the first submission and the "
              "last job's end (the rest idled: no job fitted, or none was waiting).")
    for k, (one, many) in _RESOURCE_NAMES.items()
}
"""Utilisation per resource type, shown in place of ``utilisation`` for the types a
workload's machine has (runs of older versions have only ``utilisation``, cores).  Memory
is left out: summary.json and runs.parquet have ``utilisation_mem``."""


THROUGHPUT: tuple[Metric, ...] = (
    Metric("jobs_per_s", "jobs/s", "rate", "higher",
           "simulator speed: jobs replayed per second of simulation wall time (parsing, "
           "generating and writing excluded)."),
    Metric("sim_days_per_s", "simulated days/s", "rate", "higher",
           "simulator speed: days of simulated time (the makespan) replayed per second of "
           "simulation wall time."),
)
NAME_NOTES: dict[str, str] = {
    "fcfs": "first come, first served",
    "sjf": "shortest (estimated) job first",
    "easy": "first come, first served with EASY backfilling: a later job may start early when "
            "that does not delay the first waiting job",
    "easy-sjbf": "EASY whose backfill candidates go shortest predicted run first (Tsafrir et al.'s SJBF)",
    "slurm": "Slurm's multifactor priority, main scheduler and backfill scheduler",
    "prb": "priority-based backfilling (Netti et al. 2.2): jobs in order of wait over their queue's "
           "expected wait; every waiting job that fits starts, in that order, and those that do not fit "
           "are skipped without any reservation, so a wide job can wait for ever while smaller ones pass it",
    "prb-blocking": "PRB's priority order without backfilling: the first waiting job blocks the others",
    "conservative": "conservative backfilling: every waiting job holds a reservation, and a later job "
                    "starts early only when that delays none of them",
    "ff": "first fit: the lowest-numbered nodes that fit",
    "bf": "best fit: the nodes with the fewest free resources that fit",
    "balanced": "Netti et al.'s Balanced: takes nodes in turn from the groups with the most free GPUs "
                "or MICs, nodes without them first, so that no scarce type runs out first",
    "weighted": "Netti et al.'s Weighted: first the nodes that would keep the least of the resources "
                "the waiting jobs are asking for and that are busy",
    "priority-weighted": "Weighted, with the weight of GPUs and MICs raised each time a job needing them "
                         "fails to start and lowered when one starts",
    "requested": "the scheduler trusts the users' requested wall times",
    "actual": "the scheduler knows the actual run times (an oracle)",
    "tsafrir": "the mean of the user's last two jobs, raised to the estimate when a job outlives it",
    "tsafrir-steps": "the mean of the user's last two jobs, raised step by step (1 min, 5 min, 15 min, ...) "
                     "when a job outlives it",
}
"""One-line notes on the scheduler, allocator and predictor names the report may meet;
names without a note are listed bare."""


def headline_metrics(sub: pl.DataFrame) -> tuple[Metric, ...]:
    """The headline metrics of a workload's rows: :data:`METRICS` with ``utilisation``
    replaced by one utilisation per resource type that the rows' machine has; metrics
    the rows lack (runs.parquet of an older version: no ``wait_max``) are left out."""
    per_type = [m for m in UTILISATION.values() if m.column in sub.columns and sub[m.column].drop_nulls().len() > 0]
    out = []
    for m in METRICS:
        if m.column != "utilisation" and m.column not in sub.columns:
            continue
        out.extend(per_type if m.column == "utilisation" and per_type else [m])
    return tuple(out)


def duration_unit(seconds: float | None) -> tuple[float, str]:
    """(seconds per unit, unit) in which to show durations up to ``seconds``: s below 2 min,
    min below 2 h, h below 2 days, else days."""
    top = abs(seconds) if seconds is not None and math.isfinite(seconds) else 0.0
    if top < 120:
        return 1.0, "s"
    if top < 2 * 3600:
        return 60.0, "min"
    if top < 2 * 86400:
        return 3600.0, "h"
    return 86400.0, "d"


def glossary_rank(m: Metric) -> int:
    """A metric's place in the glossary: that of METRICS, each utilisation at utilisation's."""
    columns = [x.column for x in METRICS]
    if m.column.startswith("utilisation_"):
        return columns.index("utilisation")
    return columns.index(m.column)


def unit_of(sub: pl.DataFrame, metrics: tuple[Metric, ...]) -> tuple[float, str]:
    """The one duration unit of a workload's tables and figures (but for the metrics
    shown in their own unit, :func:`metric_unit`)."""
    values = [v for m in metrics if m.kind == "duration" and not m.own_unit and m.column in sub.columns
              for v in sub[m.column].drop_nulls().to_list()]
    return duration_unit(max(values, default=0.0))


def metric_unit(m: Metric, sub: pl.DataFrame, unit: tuple[float, str]) -> tuple[float, str]:
    """The unit of ``m``'s values in a workload's rows ``sub``: the workload's ``unit``, or,
    for a metric with its own unit, the one of its largest value."""
    if m.kind != "duration" or not m.own_unit or m.column not in sub.columns:
        return unit
    return duration_unit(max(sub[m.column].drop_nulls().to_list(), default=0.0))


def titled(m: Metric, unit: tuple[float, str]) -> str:
    """``m``'s title with its unit: the workload's duration ``unit``, or % for shares."""
    return f"{m.title} ({unit[1]})" if m.kind == "duration" else f"{m.title} (%)" if m.kind == "share" else m.title


def best(values: list, better: str) -> float | None:
    """The best of ``values`` (the lowest when ``better`` is "lower", else the highest),
    None and non-finite values left out; None when none is left."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return None
    return min(vals) if better == "lower" else max(vals)


def slug(text: str) -> str:
    """``text`` as a file name and HTML anchor (a workload's figures and section)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "workload"


# -- loading and aggregating ----------------------------------------------------------------


# Columns of every run a sweep writes to runs.parquet, failed or not, which the report
# cannot do without (a failed run has no file paths, an older version's lack some metrics).
RUN_COLUMNS = ("run_id", "status", "workload", "scheduler", "allocator", "predictor", "seed", "machine")


def load_runs(results: str | os.PathLike) -> pl.DataFrame:
    if Path(results).is_file():  # (else "FILE/runs.parquet not found")
        what = "a sweep's runs table" if Path(results).name == "runs.parquet" else "a file"
        raise DataError(f"{results}: {what}, not a sweep's results folder (give the folder `schedbench sweep "
                        "CONFIG -o RESULTS` wrote)")
    path = Path(results) / "runs.parquet"
    if not path.is_file():
        raise DataError(f"{path} not found: run `schedbench sweep CONFIG -o {results}` first")
    try:
        runs = pl.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is a data error
        raise DataError(f"cannot read {path}: {exc}") from None
    missing = [c for c in RUN_COLUMNS if c not in runs.columns] if runs.height else []
    if missing:  # else polars' ColumnNotFoundError deep in the report: an internal error
        raise DataError(f"{path}: not a sweep's runs table (no column {missing[0]})")
    return runs


def read_run_file(path: Path, columns: list[str]) -> pl.DataFrame:
    """``columns`` of one of a run's Parquet files (jobs, timeline, allocations); a
    :class:`DataError` naming the file when it cannot be read or lacks a column (a folder
    copied in part, a file written by hand), where polars' error named none."""
    try:
        return pl.read_parquet(path, columns=columns)
    except (OSError, pl.exceptions.PolarsError) as exc:
        text = str(exc).strip().splitlines()
        raise DataError(f"{path}: unreadable ({text[0] if text else type(exc).__name__})") from None


def _order_key(names: list[str] | tuple[str, ...], name: str) -> tuple[int, str]:
    """Sort key of ``name``: its place in ``names``, unknown names last (by name)."""
    return (names.index(name), name) if name in names else (len(names), name)


def summarise(runs: pl.DataFrame) -> pl.DataFrame:
    """One row per (workload, scheduler, allocator, predictor) of the successful runs:
    ``seeds`` (runs averaged), ``<metric>`` means and ``<metric>_sd`` standard deviations
    (null for a single seed) of the headline and throughput metrics, ``label``."""
    ok = runs.filter(pl.col("status") == "ok")
    if "sim_days_per_hour" in ok.columns and "sim_days_per_s" not in ok.columns:
        ok = ok.with_columns((pl.col("sim_days_per_hour") / 3600.0).alias("sim_days_per_s"))
    cols = [m.column for m in METRICS + tuple(UTILISATION.values()) + THROUGHPUT]
    cols = [c for c in cols + ["sim_days_per_hour", "makespan", "jobs_replayed", "jobs_input"] if c in ok.columns]
    keys = ["workload", "scheduler", "allocator", "predictor"]
    agg = ok.group_by(keys).agg(
        pl.len().alias("seeds"),
        pl.col("machine").first(),
        *[pl.col(c).cast(pl.Float64).mean().alias(c) for c in cols],
        *[pl.col(c).cast(pl.Float64).std().alias(f"{c}_sd") for c in cols],
    )
    n_pred = agg.group_by("workload").agg(pl.col("predictor").n_unique().alias("_np"))
    agg = agg.join(n_pred, on="workload").with_columns(
        pl.when(pl.col("_np") > 1)
        .then(pl.format("{}+{} ({})", "scheduler", "allocator", "predictor"))
        .otherwise(pl.format("{}+{}", "scheduler", "allocator"))
        .alias("label")
    ).drop("_np")
    schedulers, allocators = registry.scheduler_names(), registry.allocator_names()
    rows = sorted(
        agg.iter_rows(named=True),
        key=lambda r: (
            r["workload"], _order_key(schedulers, r["scheduler"]), _order_key(allocators, r["allocator"]),
            _order_key(registry.predictor_names(), r["predictor"]),
        ),
    )
    return pl.DataFrame(rows, schema=agg.schema) if rows else agg


def names_in_order(ok: pl.DataFrame) -> dict[str, list[str]]:
    """The scheduler, allocator and predictor names of the runs ``ok``, each in its table's
    order (plug-ins and unknown names last)."""
    return {
        "scheduler": sorted(set(ok["scheduler"]), key=lambda n: _order_key(registry.scheduler_names(), n)),
        "allocator": sorted(set(ok["allocator"]), key=lambda n: _order_key(registry.allocator_names(), n)),
        "predictor": sorted(set(ok["predictor"]), key=lambda n: _order_key(registry.predictor_names(), n)),
    }


def labels_in_order(sub: pl.DataFrame) -> list[str]:
    return list(dict.fromkeys(sub["label"].to_list()))


ACCOUNT_COLUMNS = 6
"""The accounts (most jobs first) whose mean wait the fairness table shows."""


def account_waits(results: Path, runs: pl.DataFrame, summary: pl.DataFrame, workload: str
                  ) -> tuple[str, list[str], dict[str, int], list[list]] | None:
    """Fairness across accounts (Steffen; the ``fairness`` block of each run's summary.json),
    mean over seeds: ``(by, shown, jobs, rows)``, where ``by`` names the accounts (group,
    user), ``shown`` lists the :data:`ACCOUNT_COLUMNS` accounts with the most jobs,
    ``jobs`` counts each account's jobs and each row is ``[label, Jain's index of
    delivered over allocated shares, worst account's mean wait, mean wait of each shown
    account]`` (None where unknown), one per scheduler+allocator.  None when the workload
    has fewer than two accounts."""
    sub = summary.filter(pl.col("workload") == workload)
    ok = runs.filter((pl.col("workload") == workload) & (pl.col("status") == "ok"))
    label_of = {(x["scheduler"], x["allocator"], x["predictor"]): x["label"] for x in sub.iter_rows(named=True)}
    per_label: dict[str, list[tuple[float | None, dict]]] = {}  # label -> [(Jain's index, accounts)] per seed
    jobs_of: dict[str, int] = {}
    by = "account"
    for r in ok.iter_rows(named=True):
        path = results / "runs" / str(r["run_id"]) / "summary.json"
        try:
            fairness = json.loads(path.read_text()).get("fairness") or {}
        except (OSError, ValueError):
            continue
        accounts = fairness.get("accounts") or {}
        by = fairness.get("by", by)
        label = label_of.get((r["scheduler"], r["allocator"], r["predictor"]))
        if label is None:
            continue
        per_label.setdefault(label, []).append((fairness.get("jain_delivered_vs_allocated"), accounts))
        for a, v in accounts.items():
            jobs_of[a] = max(jobs_of.get(a, 0), int(v.get("jobs") or 0))
    if len(jobs_of) < 2:
        return None
    shown = sorted(jobs_of, key=lambda a: (-jobs_of[a], a))[:ACCOUNT_COLUMNS]

    def mean(values):
        vals = [v for v in values if v is not None]
        return sum(vals) / len(vals) if vals else None

    rows = []
    for label in labels_in_order(sub):
        seeds = per_label.get(label, [])
        worst = mean([max((v["wait_mean"] for v in accounts.values() if v.get("wait_mean") is not None), default=None)
                      for _, accounts in seeds])
        rows.append([label, mean([jain for jain, _ in seeds]), worst]
                    + [mean([accounts.get(a, {}).get("wait_mean") for _, accounts in seeds]) for a in shown])
    return by, shown, jobs_of, rows
