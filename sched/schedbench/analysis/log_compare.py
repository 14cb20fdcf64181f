"""How close a replay came to what the real scheduler did: every job's replayed start set
against the start its log recorded (``schedbench compare-log DIR``).

A run folder's ``jobs.parquet`` holds both: ``start`` (the replay's) and ``log_start`` (the
input's own: SWF field 3's wait, a sacct dump's Start).  Per job, ``delta`` = start −
log_start (s; positive: the replay started the job later than the real scheduler did).
Only jobs with both are compared; the others are counted by why they are not:

* ``no_log_start``: the log recorded no start (SWF wait -1; a job that never ran);
* ``not_replayed``: the log recorded a start but the replay did not start the job (its
  ``status`` says why: dropped, never started, refused by a limit...).

The summary has one row for the whole run (partition ``all``) and one per partition, in
code order: jobs, compared, no_log_start, not_replayed, the median and the 90th
percentile of |delta| (linear interpolation, as the other metrics), the share of compared
jobs within :data:`WITHIN_S` seconds, the mean signed delta, and the mean wait of the
compared jobs in the log and in the replay (the same jobs on both sides).

Partitions are named from summary.json's ``partitions`` ({name: code}, which the command
line records when the reader named them: a sacct dump); otherwise by their codes.  The
results are written beside the run's files as :data:`JOBS_FILE` and :data:`SUMMARY_FILE`
(Parquet, so that the folder stays a run's folder a later replay may replace).

No numba and no engine: reading a folder loads polars only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl

from ..errors import DataError
from .report.model import read_run_file
from .results import REPLAY_COMPRESSION_LEVEL, write_parquet

WITHIN_S = 60
"""A replayed start this close to the logged one (s, inclusive) counts as a match."""
JOBS_FILE = "log_compare.parquet"
SUMMARY_FILE = "log_compare_summary.parquet"
ALL = "all"
"""The partition label of the whole run's summary row."""
DEFAULT_PARTITION = "(default)"
"""The label of code -1 when the run names its partitions (a sacct job that named none)."""

_COLUMNS = ["job_id", "submit", "start", "log_start", "status", "partition"]


def _read(run: Path) -> tuple[pl.DataFrame, dict]:
    """(jobs.parquet's columns this needs, summary.json) of the run folder ``run``."""
    if not run.is_dir():
        what = "a file, not a folder" if run.exists() else "no such folder"
        raise DataError(f"{run}: {what} (give a replay's output folder, `schedbench replay ... -o DIR`)")
    jobs_path, summary_path = run / "jobs.parquet", run / "summary.json"
    for path in (jobs_path, summary_path):
        if not path.is_file():
            raise DataError(f"{run}: not a replay output folder (no {path.name})")
    try:
        summary = json.loads(summary_path.read_text())
    except (OSError, ValueError) as exc:
        raise DataError(f"{summary_path}: unreadable summary ({exc})") from None
    try:
        schema = pl.read_parquet_schema(jobs_path)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise DataError(f"{jobs_path}: unreadable ({exc})") from None
    missing = [c for c in _COLUMNS if c not in schema]
    if missing:
        raise DataError(f"{jobs_path}: no {missing[0]} column (written by an older schedbench): replay it again")
    return read_run_file(jobs_path, _COLUMNS), summary  # its pages may be damaged behind a whole footer


def partition_names(codes: pl.Series, summary: dict) -> pl.Series:
    """String labels of the partition ``codes``: the names summary.json's ``partitions``
    ({name: code}) gives (-1: :data:`DEFAULT_PARTITION`); else the codes themselves."""
    named = summary.get("partitions") or {}
    if not named:
        return codes.cast(pl.String)
    mapping = {int(code): name for name, code in named.items()} | {-1: DEFAULT_PARTITION}
    return codes.replace_strict(mapping, default=codes.cast(pl.String), return_dtype=pl.String)


def per_job(jobs: pl.DataFrame, summary: dict) -> pl.DataFrame:
    """Every job of ``jobs`` (jobs.parquet's columns) with its partition code and label, ``delta``
    (start − log_start, s; null unless both are known), and ``compared``: ``compared``,
    ``no_log_start`` or ``not_replayed``."""
    return jobs.select(
        "job_id",
        pl.col("partition").alias("partition_code"),
        partition_names(jobs["partition"], summary).alias("partition"),
        "status",
        "submit",
        "log_start",
        "start",
        (pl.col("start") - pl.col("log_start")).alias("delta"),
        (pl.col("log_start") - pl.col("submit")).alias("log_wait"),
        (pl.col("start") - pl.col("submit")).alias("wait"),
        pl.when(pl.col("log_start").is_null()).then(pl.lit("no_log_start"))
        .when(pl.col("start").is_null()).then(pl.lit("not_replayed"))
        .otherwise(pl.lit("compared")).alias("compared"),
    )


def _aggregates() -> list[pl.Expr]:
    compared = pl.col("delta").is_not_null()
    gap = pl.col("delta").abs()
    return [
        pl.len().alias("jobs"),
        compared.sum().alias("compared"),
        (pl.col("compared") == "no_log_start").sum().alias("no_log_start"),
        (pl.col("compared") == "not_replayed").sum().alias("not_replayed"),
        gap.median().alias("abs_delta_median"),
        gap.quantile(0.9, interpolation="linear").alias("abs_delta_p90"),
        ((gap <= WITHIN_S).sum() / compared.sum()).alias(f"within_{WITHIN_S}s"),
        pl.col("delta").mean().alias("delta_mean"),
        pl.col("log_wait").filter(compared).mean().alias("log_wait_mean"),
        pl.col("wait").filter(compared).mean().alias("replay_wait_mean"),
    ]


def summarize(per_job_frame: pl.DataFrame) -> pl.DataFrame:
    """One row for the whole run (partition :data:`ALL`), then one per partition in code
    order (the module docstring lists the columns)."""
    whole = per_job_frame.select(pl.lit(ALL).alias("partition"), *_aggregates())
    parts = (per_job_frame.group_by("partition_code", "partition").agg(_aggregates())
             .sort("partition_code").drop("partition_code"))
    out = pl.concat([whole, parts], how="vertical_relaxed")
    share = f"within_{WITHIN_S}s"
    # a partition with no compared job has no share (0 / 0): null, not NaN
    return out.with_columns(pl.when(pl.col("compared") > 0).then(pl.col(share)).alias(share))


def compare(run: str | os.PathLike) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    """(per-job frame, summary frame, summary.json) of the run folder ``run``.  A
    :class:`DataError` when the folder is not a run's, or when its input recorded no start
    for any job (nothing to compare against)."""
    folder = Path(run)
    jobs, summary = _read(folder)
    if jobs["log_start"].null_count() == jobs.height:
        trace = summary.get("trace") or "its input"
        raise DataError(f"{folder}: {trace} recorded no start times (SWF wait -1 or no sacct Start on every job): "
                        "nothing to compare the replay against")
    frame = per_job(jobs, summary)
    return frame, summarize(frame), summary


def write(run: str | os.PathLike, frame: pl.DataFrame, table: pl.DataFrame) -> None:
    """Write the per-job frame and the summary beside the run's files."""
    folder = Path(run)
    write_parquet(frame, folder / JOBS_FILE, REPLAY_COMPRESSION_LEVEL)
    write_parquet(table, folder / SUMMARY_FILE, REPLAY_COMPRESSION_LEVEL)


def _seconds(value) -> str:
    return "-" if value is None else f"{value:,.0f}"


def format_table(run: str | os.PathLike, table: pl.DataFrame, summary: dict) -> str:
    """A Markdown table of the summary frame, under one line naming the run."""
    from .report.render import markdown_table

    share = f"within_{WITHIN_S}s"
    header = ["partition", "jobs", "compared", "no log start", "not replayed", "median abs Δ (s)",
              "p90 abs Δ (s)", f"within {WITHIN_S} s", "mean Δ (s)", "mean wait log (s)", "mean wait replay (s)"]
    cells = [
        [r["partition"], f"{r['jobs']:,}", f"{r['compared']:,}", f"{r['no_log_start']:,}", f"{r['not_replayed']:,}",
         _seconds(r["abs_delta_median"]), _seconds(r["abs_delta_p90"]),
         "-" if r[share] is None else f"{r[share]:.1%}", _seconds(r["delta_mean"]),
         _seconds(r["log_wait_mean"]), _seconds(r["replay_wait_mean"])]
        for r in table.iter_rows(named=True)
    ]
    title = f"{Path(run)} ({summary.get('label', '?')}): replayed start − logged start (Δ), per job\n\n"
    return title + markdown_table(header, cells) + "\n"
