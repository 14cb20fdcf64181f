"""Running a sweep: each run replayed and written under ``RESULTS/``, finished runs found
again and skipped, one sweep at a time per results directory.  Where the runs execute
(this process, local processes, a Dask cluster) is :mod:`schedbench.sweep.executors`'s business.

A run (:func:`schedbench.sweep.config.expand`) is found again by its key and never
recomputed.  Layout of ``RESULTS/``::

    runs/<key>/run.json        the run's row of runs.parquet (status "ok" or "failed")
    runs/<key>/summary.json    the replay summary (ok runs), error.json (failed runs)
    runs/<key>/NAME.parquet    a Python policy's own tables (decisions.parquet of ipsched
                               and aucsched: one row per solve)
    jobs/workload=W/scheduler=S/allocator=A/predictor=P/part-<key>.parquet
    allocations/workload=W/scheduler=S/allocator=A/predictor=P/part-<key>.parquet
    timeline/workload=W/scheduler=S/allocator=A/predictor=P/part-<key>.parquet
    runs.parquet               one row per run (rebuilt from runs/*/run.json)
    sweep.json                 the last sweep's config, version and git revision

A run is built in ``.tmp/`` and its directory renamed into ``runs/`` last, so a run
directory exists only for a finished run (the Parquet parts move into place just before:
an interrupted run's part is overwritten when it is redone).  A failing run (any
exception) is recorded with its message and does not stop the others; it is not retried
unless asked (``retry_failed``).  The ``jobs``, ``allocations`` and ``timeline`` parts are the frames of
:mod:`schedbench.analysis.results` without the scheduler and allocator columns (they are
partition keys) plus ``run_id`` (the run's key) and ``seed``:
``pl.scan_parquet("RESULTS/jobs/", hive_partitioning=True)`` reads them all.

Only one sweep may write to a results directory at a time (a lock file).  On a Dask
cluster the workers write the results themselves: ``RESULTS`` must be on a file system
they share with the client (as on a Slurm or PBS cluster).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import traceback
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__, registry
from ..engine.progress import Steps, is_terminal, keep_drawing
from ..errors import DataError, UsageError
from . import executors, warm
from .config import canonical_json
from .inputs import load_worker_plugins, workload_of

if TYPE_CHECKING:
    import polars as pl

PARTITION_KEYS: tuple[str, ...] = ("workload", "scheduler", "allocator", "predictor")
DATASETS: tuple[str, ...] = ("jobs", "allocations", "timeline")
# What a sweep writes in RESULTS (the module docstring's layout): a folder holding one of
# them is a sweep's, resumed where it stopped
SWEEP_ENTRIES = frozenset(("runs", *DATASETS, "runs.parquet", "sweep.json"))


def check_results_folder(results: str | os.PathLike) -> None:
    """Raise unless ``results`` can take a sweep's results: new, empty (hidden files
    aside), or a sweep's own (it holds one of :data:`SWEEP_ENTRIES`: its finished runs
    are kept and skipped).  Any other folder, a replay's output or one of other files,
    would have the runs written in among what it holds: a :class:`DataError` naming the
    folder and a file it holds.  A file is a :class:`FileExistsError`."""
    path = Path(results)
    if not path.exists():
        return
    if not path.is_dir():
        raise FileExistsError(errno.EEXIST, "a file, not a folder", str(path))
    names = sorted(p.name for p in path.iterdir() if not p.name.startswith("."))
    if not names or SWEEP_ENTRIES.intersection(names):
        return
    what = "a replay's output folder" if "summary.json" in names else "not a sweep's results folder"
    raise DataError(f"{path}: {what} (it holds {names[0]}): give a new or empty folder, or an earlier "
                    "sweep's to resume it")


def git_revision() -> str | None:
    """``git rev-parse HEAD`` of the source tree schedbench is imported from, or None."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    rev = out.stdout.strip()
    return rev if out.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", rev) else None


# -- one run --------------------------------------------------------------------------------


def _part_path(results: Path, dataset: str, run: dict) -> Path:
    parts = [f"{k}={run[k]}" for k in PARTITION_KEYS]
    return results.joinpath(dataset, *parts, f"part-{run['key']}.parquet")


def _base_row(run: dict, git_rev: str | None) -> dict:
    source = run["source"]
    return {
        "run_id": run["key"],
        "status": None,
        "error": None,
        "workload": run["workload"],
        "generator": source.get("generator"),
        "trace": source.get("trace"),
        "limit": source.get("limit"),
        "params": canonical_json(source.get("params", {})),
        "machine": run["machine"],
        "scheduler": run["scheduler"],
        "allocator": run["allocator"],
        "predictor": run["predictor"],
        "label": f"{run['scheduler']}+{run['allocator']}",
        "seed": run["seed"],
        "period": run.get("period", 0),
        "options": canonical_json(run.get("options", {})),
        "description": run.get("description"),
    }


def _write_json(obj, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(obj, indent=2, allow_nan=False) + "\n")
    os.replace(tmp, path)


def execute(run: dict, results: str, git_rev: str | None = None, plugins: tuple[str, ...] = ()) -> dict:
    """Run one configuration and write it under ``results``; returns its row of
    runs.parquet.  Exceptions of the run are caught and recorded (status "failed").
    ``plugins``: modules that register the run's scheduler or allocator (imported first,
    so that worker processes know them; one that cannot be imported stops the sweep,
    :func:`load_worker_plugins`)."""
    import polars as pl

    from ..analysis import results as results_mod
    from ..analysis.results import write_parquet
    from ..engine import replay

    load_worker_plugins(plugins)  # before any file: not a failure of this run
    results = Path(results)
    tmp = results / ".tmp" / f"{run['key']}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir(parents=True)
    row = _base_row(run, git_rev)
    t_run = time.perf_counter()
    try:
        table, mach, meta, timings = workload_of(run)
        row["machine"] = mach.spec
        result = replay.replay(
            table, mach, run["scheduler"], run["allocator"], run["predictor"], meta=meta,
            period=run.get("period", 0), options=run.get("options"),
        )
        t0 = time.perf_counter()
        jobs = results_mod.jobs_frame(result)
        timeline = results_mod.timeline_frame(result)
        summary = results_mod.summarize(result, jobs, timeline)
        extra = pl.DataFrame({"run_id": [run["key"]], "seed": [run["seed"]]}, schema={"run_id": pl.String, "seed": pl.Int64})
        paths = {name: _part_path(results, name, run) for name in DATASETS}
        frames = {
            "jobs": jobs.drop("scheduler", "allocator"),
            "allocations": results_mod.allocations_frame(result),
            "timeline": timeline,
        }
        for name, frame in frames.items():
            write_parquet(frame.join(extra, how="cross"), tmp / f"{name}.parquet")
        for name, frame in (result.tables or {}).items():  # a policy's own: ipsched's decisions
            write_parquet(frame, tmp / f"{name}.parquet")  # stay in runs/<key>/ with the run
        write_s = time.perf_counter() - t0
        metrics = {k: v for k, v in summary["metrics"].items() if k not in ("scheduler", "allocator")}
        simulate_s = result.simulate_s
        span = metrics.get("makespan")
        days = span / 86400 if span is not None else None
        timings.update(simulate_s=simulate_s, write_s=write_s)
        timings["jobs_per_s"] = summary["timings"]["jobs_per_s"]
        timings["sim_days_per_hour"] = days / (simulate_s / 3600) if days is not None and simulate_s > 0 else None
        ok = dict(
            status="ok",
            passes=summary["passes"],
            **metrics,
            parse_s=timings.get("parse_s"),
            generate_s=timings.get("generate_s"),
            simulate_s=simulate_s,
            write_s=write_s,
            jobs_per_s=timings["jobs_per_s"],
            sim_span_s=span,
            sim_days=days,
            sim_days_per_hour=timings["sim_days_per_hour"],
            input_digest=result.options["input_digest"],
            jobs_path=paths["jobs"].relative_to(results).as_posix(),
            allocations_path=paths["allocations"].relative_to(results).as_posix(),
            timeline_path=paths["timeline"].relative_to(results).as_posix(),
        )
        summary["timings"] = timings
        summary.update(run_id=run["key"], config={k: v for k, v in run.items() if k != "key"}, workload_meta=meta)
        _write_json(_json_safe(summary), tmp / "summary.json")
        for name, dest in paths.items():
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / f"{name}.parquet", dest)
        row.update(ok)
    except registry.Impossible as exc:  # a pair its capabilities rule out on this workload: no result
        shutil.rmtree(tmp, ignore_errors=True)
        row = _base_row(run, git_rev)
        row.update(status="impossible", error=str(exc))
        return row
    except Exception as exc:  # noqa: BLE001 - a failed run is recorded, whatever failed
        row = _base_row(run, git_rev)
        row.update(status="failed", error=f"{type(exc).__name__}: {exc}")
        for path in [*tmp.glob("*.parquet"), tmp / "summary.json"]:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        _write_json({"error": row["error"], "traceback": traceback.format_exc()}, tmp / "error.json")
    row.update(
        run_s=time.perf_counter() - t_run,
        schedbench_version=__version__,
        git_rev=git_rev,
        host=socket.gethostname(),
        finished_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    )
    _write_json(_json_safe(row), tmp / "run.json")
    final = results / "runs" / run["key"]
    final.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(tmp, final)
    except OSError:  # finished meanwhile by someone else: keep theirs
        shutil.rmtree(tmp, ignore_errors=True)
    return row


class _RunLines:
    """The runs' progress on a pipe or in a log file: a line every
    :data:`RUN_LINES_PERIOD_S` of wall time, also while no run ends (a thread keeps the
    time: runs of a Python policy can take minutes each), and one at the end (nothing
    when not ``show``)."""

    def __init__(self, total: int, done: int, show: bool):
        self.total, self.done, self.show = total, done, show
        self.t0 = self.last = time.monotonic()
        self._lock = threading.Lock()
        self._closed = threading.Event()
        if show:
            threading.Thread(target=self._keep_time, name="schedbench-sweep-lines", daemon=True).start()

    def _line(self, now: float) -> None:
        self.last = now
        print(f"schedbench: sweep: {self.done} of {self.total} runs done, {now - self.t0:.0f} s",
              file=sys.stderr, flush=True)

    def _keep_time(self) -> None:
        while not self._closed.wait(RUN_LINES_PERIOD_S / 4):
            with self._lock:
                now = time.monotonic()
                if now - self.last >= RUN_LINES_PERIOD_S and not self._closed.is_set():
                    self._line(now)

    def update(self, n: int) -> None:
        with self._lock:
            self.done += n
            now = time.monotonic()
            if self.show and (now - self.last >= RUN_LINES_PERIOD_S or self.done == self.total):
                self._line(now)

    def write(self, text: str, file=None) -> None:
        with self._lock:
            print(text, file=file or sys.stderr, flush=True)

    def close(self) -> None:
        self._closed.set()


RUN_LINES_PERIOD_S = 10.0


class _TerminalBar:
    """The runs' tqdm bar on a terminal, redrawn while no run ends
    (:func:`schedbench.engine.progress.keep_drawing`)."""

    def __init__(self, total: int, done: int):
        from tqdm import tqdm

        self.bar = tqdm(total=total, initial=done, unit="run", desc="sweep", file=sys.stderr, dynamic_ncols=True)
        self._redraw = keep_drawing(self.bar)

    def update(self, n: int) -> None:
        self.bar.update(n)

    def write(self, text: str, file=None) -> None:
        self.bar.write(text, file=file)

    def close(self) -> None:
        self._redraw.set()
        self.bar.close()


def _json_safe(obj):
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return _json_safe(obj.item())
    return obj


# -- the sweep ------------------------------------------------------------------------------


def finished(results: str | os.PathLike) -> dict[str, dict]:
    """``{key: row}`` of every run directory under ``results/runs``."""
    out = {}
    runs_dir = Path(results) / "runs"
    if not runs_dir.is_dir():
        return out
    for d in sorted(runs_dir.iterdir()):
        f = d / "run.json"
        if f.is_file():
            try:
                out[d.name] = json.loads(f.read_text())
            except (OSError, ValueError):
                continue
    return out


def write_runs_table(results: str | os.PathLike) -> pl.DataFrame:
    """Rebuild ``results/runs.parquet`` from the run directories and return it."""
    import polars as pl

    from ..analysis.results import write_parquet

    rows = list(finished(results).values())
    first = ["run_id", "status", "error", "workload", "scheduler", "allocator", "predictor", "label", "seed", "machine"]
    if rows:
        df = pl.DataFrame(rows, infer_schema_length=None)
        df = df.select([c for c in first if c in df.columns] + [c for c in df.columns if c not in first])
        df = df.sort(["workload", "scheduler", "allocator", "predictor", "seed"], nulls_last=True)
    else:
        df = pl.DataFrame(schema={c: pl.String for c in first})
    write_parquet(df, Path(results) / "runs.parquet")
    return df


class SweepLock:
    """An exclusive, non-blocking lock on ``results/.lock`` (held for the sweep)."""

    def __init__(self, results: Path):
        self.path = results / ".lock"
        self.fh = None

    def __enter__(self):
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return self
        self.fh = open(self.path, "a")  # noqa: SIM115
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.fh.close()
            raise UsageError(f"another sweep is writing to {self.path.parent}") from None
        return self

    def __exit__(self, *exc):
        if self.fh is not None:
            self.fh.close()


def sweep(
    runs: list[dict],
    results: str | os.PathLike,
    *,
    jobs: int | None = None,
    dask_address: str | None = None,
    retry_failed: bool = False,
    progress: bool | None = None,
    config_text: str | None = None,
) -> dict:
    """Run every configuration of ``runs`` (from :func:`schedbench.sweep.config.expand`)
    not yet finished under ``results``, then rebuild runs.parquet.  ``jobs``: local worker
    processes (default: the usable cores; 1 runs in this process); ``dask_address``: send
    the runs to that Dask scheduler instead.  ``progress``: tqdm bar on stderr (None: only on a terminal).
    Returns counts: ``total, skipped, ran, failed`` (failed among those run now),
    ``impossible`` (runs whose scheduler+allocator pair the registry's capabilities rule
    out on their workload, :func:`schedbench.registry.check_pair`: left out, nothing
    written), ``failed_total``."""
    import polars as pl

    check_results_folder(results)
    results = Path(results).resolve()
    results.mkdir(parents=True, exist_ok=True)
    with SweepLock(results):
        shutil.rmtree(results / ".tmp", ignore_errors=True)
        done = finished(results)
        if retry_failed:
            for key, row in list(done.items()):
                if row.get("status") == "failed" and any(r["key"] == key for r in runs):
                    shutil.rmtree(results / "runs" / key, ignore_errors=True)
                    del done[key]
        pending = [r for r in runs if r["key"] not in done]
        for r in runs:  # a reworded description reaches finished runs without rerunning them
            row = done.get(r["key"])
            if row is not None and row.get("description") != r.get("description"):
                row["description"] = r.get("description")
                _write_json(row, results / "runs" / r["key"] / "run.json")
        git_rev = git_revision()
        _write_json(
            {
                "schedbench_version": __version__, "git_rev": git_rev, "runs": len(runs),
                "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "config": config_text,
            },
            results / "sweep.json",
        )
        counts = {"total": len(runs), "skipped": len(runs) - len(pending), "ran": 0, "failed": 0, "impossible": 0}
        show = progress is not False
        bar = steps = None  # the runs' progress; the compile phase's, before it

        def start_runs() -> None:
            """The compile phase's progress ends, the runs' begins: on a terminal (or with
            ``progress=True``) a tqdm bar, on a pipe or in a log file a line every few
            seconds."""
            nonlocal bar, steps
            if steps is not None:
                steps.close()
                steps = None
            if bar is None:
                bar = (_TerminalBar(len(runs), counts["skipped"])
                       if progress or (show and is_terminal(sys.stderr)) else _RunLines(len(runs), counts["skipped"], show))

        def record(row: dict) -> None:
            start_runs()
            if row.get("status") == "impossible":  # checked before any replay work; nothing is written
                counts["impossible"] += 1
                bar.update(1)
                return
            counts["ran"] += 1
            if row.get("status") != "ok":
                counts["failed"] += 1
                bar.write(f"failed: {row['workload']} {row['label']} seed {row['seed']}: {row['error']}", file=sys.stderr)
            bar.update(1)

        def record_compile(result: dict | None) -> None:
            if steps is not None:
                if result is None:
                    steps.step("a worker failed")
                else:
                    steps.step(warm.describe(result), warm.routine(result))
                if steps.done == steps.total:
                    start_runs()

        plugins = registry.plugins_of(
            *{registry.scheduler(r["scheduler"]) for r in pending}, *{registry.allocator(r["allocator"]) for r in pending},
            *{registry.predictor(r["predictor"]) for r in pending},
        )
        calls = [(execute, (run, str(results), git_rev, plugins)) for run in pending]
        if show and pending and not is_terminal(sys.stderr):
            print(f"schedbench: sweep: {len(pending)} of {len(runs)} runs to do ({counts['skipped']} done before)",
                  file=sys.stderr, flush=True)
        try:
            if not pending:
                pass
            elif dask_address:
                start_runs()
                # every worker imports the plug-ins first: one missing is one error
                executors.dask(calls, dask_address, record,
                               setup=(load_worker_plugins, (plugins,)) if plugins else None)
            else:
                n = jobs or executors.default_jobs()
                if n < 1:
                    raise UsageError("--jobs must be at least 1")
                # Each loop the runs need is compiled (or loaded) once, in parallel across
                # loops, before the runs: workers that start runs of the same loop together
                # would each compile their own copy; the runs then load it from the cache.
                tasks = warm.interleaved(warm.run_tasks(pending)) if len(pending) > 1 else []
                if tasks and show:
                    steps = Steps(len(tasks), "compile")
                else:
                    start_runs()
                first = [(warm.compile_task, (t,)) for t in tasks]
                if n == 1 or len(pending) == 1:
                    executors.in_process(first, record_compile)
                    executors.in_process(calls, record)
                else:
                    executors.process_pool(calls, min(n, len(pending)), record, first=first, record_first=record_compile)
        except KeyboardInterrupt:
            # the local runs stopped (workers terminated): drop their half-written folders
            # now; finished runs stay in runs/ (and runs.parquet, below), a rerun resumes
            if not dask_address:
                shutil.rmtree(results / ".tmp", ignore_errors=True)
            raise
        finally:
            for b in (steps, bar):
                if b is not None:
                    b.close()
            table = write_runs_table(results)
        keys = {r["key"] for r in runs}
        counts["failed_total"] = (
            table.filter(pl.col("run_id").is_in(list(keys)) & (pl.col("status") == "failed")).height
            if table.height
            else 0
        )
        return counts
