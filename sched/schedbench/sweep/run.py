"""Benchmark sweeps: replay a grid of workloads x machines x schedulers x allocators x
predictors x seeds, resumably, on local cores or on a Dask cluster.

Config (TOML)
-------------

Top level::

    schedulers = "all"            # (default) or a list of registered scheduler names
    allocators = "all"            # (default) or a list of registered allocator names
    exclude = ["conservative+balanced", "sfs+*"]  # optional: scheduler+allocator pairs left out
                                  # (pairs that cannot run on a workload are skipped anyway:
                                  # schedbench.registry.check_pair)
    predictors = ["requested"]    # "all" or a list (default ["requested"])
    seeds = [1, 2]                # generator seeds (default [1])
    machines = ["16x(cores=8)"]   # optional default machines of the workloads
    period = [0, 5]               # decision period(s) in s (default: the scheduler's, 5 s for
                                  # ipsched and aucsched, 0 = every event for the others)

    [options]                     # scheduler / allocator options (schedbench.registry);
    priority_bound = [5, 10]      # a list is a grid axis

    [[workloads]]                 # one table per workload (at least one)
    name = "esp2-cpu-gpu"         # label (optional; letters, digits, . _ -)
    generator = "esp"             # a name of schedbench.workloads.GENERATORS ...
    variant = "cpu-gpu"           # ... and its options (those of `schedbench workload esp`,
    machine = "1024x(cores=8,gpus=2)"  # dashes or underscores); a list value is a grid axis

    [[workloads]]
    trace = "KTH-SP2-1996-2.1-cln"   # ... or a trace: SWF path, catalog name or Parquet table
    limit = 20000                    # optional: first N jobs
    machine = "100x(cores=1)"        # optional: default from the trace

Reserved workload keys: ``name``, ``description`` (why the workload is in the sweep: the
report shows it; not part of a run's key), ``generator`` or ``trace``, ``machine`` / ``machines``
(string or list), ``seeds`` (overrides the top-level seeds), ``limit`` (traces).  Every
other key is a generator option; a list expands into one workload per value (and the
label gets a ``_<key>=<value>`` suffix, the key as the config writes it: ``soner_type=I``).  The generator's ``seed`` comes from the sweep's
seeds; a trace replay is deterministic and runs once (seed null).  ``machine``, when the
generator has that option, is passed to it; otherwise the generated jobs are replayed on
it instead of the generator's own machine.  Relative trace paths are read from the
config file's directory.

Runs and results
----------------

A run is one (workload, machine, scheduler, allocator, predictor, seed, period, options).
Each run gets the options its scheduler and allocator declare (others are ignored for
it).  "all" is every registered name, plug-ins included.  Its key is the
first 16 hex digits of the SHA-256 of the canonical JSON (sorted keys, no spaces) of its
configuration plus the package version, so a finished run is found again by its key and
never recomputed; changing any setting (or the version) makes a new run.  Layout of
``RESULTS/``::

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

import argparse
import concurrent.futures as cf
import contextlib
import datetime as dt
import hashlib
import importlib
import itertools
import json
import math
import multiprocessing
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import traceback
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__, registry
from ..errors import DataError, UsageError
from ..workloads import GENERATORS

if TYPE_CHECKING:
    import polars as pl

TOP_KEYS = frozenset({
    "name", "description", "schedulers", "allocators", "exclude", "predictors", "seeds", "machines", "workloads",
    "period", "options",
})
RESERVED_WORKLOAD_KEYS = frozenset({"name", "description", "generator", "trace", "machine", "machines", "seeds", "limit"})
PARTITION_KEYS: tuple[str, ...] = ("workload", "scheduler", "allocator", "predictor")
DATASETS: tuple[str, ...] = ("jobs", "allocations", "timeline")
DEFAULT_SEEDS = (1,)
DEFAULT_PREDICTORS = ("requested",)
_LABEL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9._=-]*$")


# -- config ---------------------------------------------------------------------------------


def load_config(path: str | os.PathLike) -> dict:
    """The parsed TOML config at ``path`` (UsageError when missing or malformed)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read sweep config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a TOML file (not UTF-8 text)") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: invalid TOML: {exc}") from None


def _names(value, table: dict, what: str, default) -> list[str]:
    if value is None:
        value = list(default)
    if value == "all":
        return list(table)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{what}s must be \"all\" or a non-empty list of names")
    unknown = [v for v in value if v not in table]
    if unknown:
        raise UsageError(f"unknown {what} {', '.join(map(repr, unknown))}; choose from {', '.join(table)} or \"all\"")
    return list(dict.fromkeys(value))


def _seeds(value, where: str) -> list[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value)
    ):
        raise UsageError(f"{where}: seeds must be a non-negative integer or a non-empty list of them")
    return list(dict.fromkeys(value))


def _machines(value, where: str) -> list[str | None]:
    if value is None:
        return [None]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(m, str) and m.strip() for m in value):
        raise UsageError(f"{where}: machine(s) must be a spec string or a non-empty list of them")
    return list(dict.fromkeys(value))


def _slug(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return re.sub(r"[^A-Za-z0-9.-]+", "", text) or "x"


def generator_module(name: str):
    """The module of generator ``name`` (UsageError for an unknown name)."""
    if name not in GENERATORS:
        raise UsageError(f"unknown generator {name!r}; choose from {', '.join(GENERATORS)}")
    return importlib.import_module(GENERATORS[name])


def generator_options(name: str) -> dict[str, argparse.Action]:
    """The options of generator ``name`` as ``{key: argparse action}``, a key being the
    action's ``dest`` or a long option name without its dashes (``-`` read as ``_``)."""
    parser = argparse.ArgumentParser(add_help=False)
    generator_module(name).add_arguments(parser)
    out: dict[str, argparse.Action] = {}
    for action in parser._actions:
        out[action.dest] = action
        for opt in action.option_strings:
            if opt.startswith("--"):
                out[opt[2:].replace("-", "_")] = action
    return out


def expand(config: dict, base_dir: str | os.PathLike = ".") -> list[dict]:
    """The run configurations of a sweep config, in grid order: a list of dicts with keys
    ``key, workload, source, machine, scheduler, allocator, predictor, seed``.  ``source``
    is ``{"generator": name, "params": {...}}`` or ``{"trace": path, "limit": N|None}``.
    Structural mistakes (unknown keys, schedulers, generators or options, a missing
    required option, clashing labels) raise UsageError; bad option *values* fail their
    runs instead."""
    if not isinstance(config, dict):
        raise UsageError("a sweep config is a TOML table")
    unknown = sorted(set(config) - TOP_KEYS)
    if unknown:
        raise UsageError(f"unknown sweep config key(s) {', '.join(unknown)}; known: {', '.join(sorted(TOP_KEYS))}")
    sched_table = {n: None for n in registry.scheduler_names()}
    alloc_table = {n: None for n in registry.allocator_names()}
    schedulers = _names(config.get("schedulers", "all"), sched_table, "scheduler", sched_table)
    allocators = _names(config.get("allocators", "all"), alloc_table, "allocator", alloc_table)
    excluded = _excluded(config.get("exclude", []), sched_table, alloc_table)
    periods = _periods(config["period"]) if "period" in config else [None]  # None: each scheduler's default
    option_grid = _option_grid(config.get("options", {}))
    pred_table = {n: None for n in registry.predictor_names()}
    predictors = _names(config.get("predictors"), pred_table, "predictor", DEFAULT_PREDICTORS)
    seeds = _seeds(config.get("seeds", list(DEFAULT_SEEDS)), "sweep")
    default_machines = _machines(config.get("machines"), "sweep")
    entries = config.get("workloads")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise UsageError("the sweep config needs at least one [[workloads]] table")

    # label -> (source, machine, seeds, description: why the workload is in the sweep)
    workloads: dict[str, tuple[dict, str | None, list[int | None], str | None]] = {}
    for i, entry in enumerate(entries, 1):
        where = f"workload {entry.get('name', i)!s}"
        has_gen, has_trace = "generator" in entry, "trace" in entry
        if has_gen == has_trace:
            raise UsageError(f"{where}: give exactly one of generator = \"NAME\" or trace = \"PATH\"")
        if "machine" in entry and "machines" in entry:
            raise UsageError(f"{where}: give machine or machines, not both")
        machines = _machines(entry.get("machine", entry.get("machines")), where) if (
            "machine" in entry or "machines" in entry
        ) else default_machines
        params = {k: v for k, v in entry.items() if k not in RESERVED_WORKLOAD_KEYS}
        description = entry.get("description")
        if description is not None and not isinstance(description, str):
            raise UsageError(f"{where}: description must be a string")
        if has_gen:
            params = {k.replace("-", "_"): v for k, v in params.items()}
            gen = entry["generator"]
            if not isinstance(gen, str):
                raise UsageError(f"{where}: generator must be a name")
            options = generator_options(gen)
            if "limit" in entry:
                raise UsageError(f"{where}: limit applies to traces only (use the generator's job count)")
            bad = sorted(k for k in params if k not in options or options[k].dest in ("help", "output"))
            if bad:
                known = sorted({k for k, a in options.items() if a.dest not in ("help", "output", "seed", "machine")})
                raise UsageError(f"{where}: unknown option(s) {', '.join(bad)} of generator {gen}; known: {', '.join(known)}")
            if any(options[k].dest == "seed" for k in params):
                raise UsageError(f"{where}: the seed comes from the sweep's seeds, not from a workload option")
            given = {options[k].dest for k in params} | {"seed"} | ({"machine"} if machines != [None] else set())
            missing = [a for a in set(options.values()) if a.required and a.dest not in given]
            if missing:
                raise UsageError(f"{where}: generator {gen} needs {', '.join(a.option_strings[-1] for a in missing)}")
            for k, v in params.items():
                for value in v if isinstance(v, list) else [v]:
                    _check_option_value(where, gen, k, options[k], value)
            wl_seeds = _seeds(entry["seeds"], where) if "seeds" in entry else seeds
            base = entry.get("name") or gen
            canon = {options[k].dest: v for k, v in params.items()}
            shown = {options[k].dest: k for k in params}  # labels use the config's own keys
        else:
            trace = entry["trace"]
            if not isinstance(trace, str) or not trace:
                raise UsageError(f"{where}: trace must be a path or catalog name")
            if params:
                raise UsageError(f"{where}: unknown key(s) {', '.join(sorted(params))} for a trace")
            limit = entry.get("limit")
            if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0):
                raise UsageError(f"{where}: limit must be a positive number of jobs")
            local = Path(base_dir) / trace
            if not Path(trace).is_absolute() and local.exists():
                trace = str(local.resolve())
            wl_seeds = [None]
            base = entry.get("name") or re.sub(r"\.(swf|gz|parquet)$", "", Path(trace).name)
            base = re.sub(r"\.(swf|gz|parquet)$", "", base)
            canon = {}
            shown = {}
        base = str(base)
        axes = {k: (v if isinstance(v, list) else [v]) for k, v in canon.items()}
        varying = [k for k, v in axes.items() if len(v) > 1]
        for k, v in axes.items():
            if not v:
                raise UsageError(f"{where}: option {k} has an empty list")
        for combo in itertools.product(*axes.values()):
            chosen = dict(zip(axes, combo, strict=True))
            for machine in machines:
                label = base + "".join(f"_{shown[k]}={_slug(chosen[k])}" for k in varying)
                if len(machines) > 1:
                    label += "_" + _slug(machine)
                if not _LABEL_RE.match(label):
                    raise UsageError(
                        f"{where}: workload label {label!r} must start with a letter and hold only "
                        "letters, digits, '.', '_', '=' and '-' (set name = \"...\")"
                    )
                source = (
                    {"generator": entry["generator"], "params": dict(sorted(chosen.items()))}
                    if has_gen
                    else {"trace": trace, "limit": entry.get("limit")}
                )
                if label in workloads and workloads[label][:2] != (source, machine):
                    raise UsageError(f"two different workloads are labelled {label!r}: give them distinct names")
                workloads[label] = (source, machine, wl_seeds, description or None)

    runs = []
    for label, (source, machine, wl_seeds, description) in workloads.items():
        for sched, alloc, pred, seed, period, given in itertools.product(
            schedulers, allocators, predictors, wl_seeds, periods, option_grid
        ):
            if (sched, alloc) in excluded:
                continue
            s_opts, a_opts = registry.split_options(registry.scheduler(sched), registry.allocator(alloc), given)
            cfg = {
                "workload": label, "source": source, "machine": machine, "scheduler": sched,
                "allocator": alloc, "predictor": pred, "seed": seed,
                "period": registry.scheduler(sched).default_period if period is None else period,
                "options": _plain({**s_opts, **a_opts}),
            }
            run = {"key": run_key(cfg), **cfg}
            if description:  # shown by the report, outside the key: rewording reruns nothing
                run["description"] = description
            runs.append(run)
    # option values a pair does not take give it the same run more than once
    return list({r["key"]: r for r in runs}.values())


def _check_option_value(where: str, gen: str, key: str, action: argparse.Action, value) -> None:
    """A generator option's value as its command-line option would accept it (a choice, a
    number of the right kind), so that a typo fails before any run, not in each run."""
    if action.choices is not None and value not in action.choices:
        raise UsageError(
            f"{where}: generator {gen} option {key} = {value!r}: choose from {', '.join(map(repr, action.choices))}"
        )
    if isinstance(value, (dict, list)):
        raise UsageError(f"{where}: generator {gen} option {key}: a value or a flat list of values, not {value!r}")
    kind = action.type
    if kind is None and isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        if not isinstance(value, bool):
            raise UsageError(f"{where}: generator {gen} option {key} = {value!r}: true or false")
        return
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise UsageError(f"{where}: generator {gen} option {key} = {value!r}: an integer")
    if kind is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise UsageError(f"{where}: generator {gen} option {key} = {value!r}: a number")
    if callable(kind) and kind not in (int, float, str):
        try:
            kind(value if isinstance(value, str) else str(value))
        except (ValueError, TypeError, argparse.ArgumentTypeError) as exc:
            raise UsageError(f"{where}: generator {gen} option {key} = {value!r}: {exc}") from None


def _excluded(value, schedulers: dict, allocators: dict) -> set[tuple[str, str]]:
    """The ``exclude`` list: ``"scheduler+allocator"`` labels of registered names, either
    side may be ``*`` (``"sfs+*"``: every allocator with sfs)."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError('exclude must be a list of "scheduler+allocator" labels')
    out = set()
    for label in value:
        sched, plus, alloc = label.partition("+")
        if not plus or (sched != "*" and sched not in schedulers) or (alloc != "*" and alloc not in allocators):
            raise UsageError(f"exclude: {label!r} is not a scheduler+allocator pair of registered names (or *)")
        out |= {(s, a) for s in (schedulers if sched == "*" else [sched])
                for a in (allocators if alloc == "*" else [alloc])}
    return out


def _plain(options: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(options.items())}


def _periods(value) -> list[int]:
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise UsageError("period must be a non-negative number of seconds or a non-empty list of them")
    return list(dict.fromkeys(values))


def _option_grid(options) -> list[dict]:
    """Every combination of the ``[options]`` table's values (a list is an axis)."""
    if not isinstance(options, dict):
        raise UsageError("options must be a table of NAME = value (a list of values is a grid axis)")
    axes = {k.replace("-", "_"): (v if isinstance(v, list) and k not in ("critical",) else [v]) for k, v in options.items()}
    if "critical" in options and isinstance(options["critical"], list) and options["critical"] and all(
        isinstance(v, list) for v in options["critical"]
    ):
        axes["critical"] = options["critical"]  # a list of lists is an axis of critical sets
    for k, v in axes.items():
        if not v:
            raise UsageError(f"option {k} has an empty list")
    registry.check_option_names(axes)
    return [dict(zip(axes, combo, strict=True)) for combo in itertools.product(*axes.values())]


def canonical_json(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def run_key(config: dict) -> str:
    """16 hex digits of SHA-256 over the canonical JSON of ``config`` and the version."""
    blob = canonical_json({"config": config, "schedbench_version": __version__})
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


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


def _workload(run: dict):
    """(table, machine, meta, timings) of a run's workload."""
    from ..io import load as workload_io
    from ..io import machine as machine_mod

    source = run["source"]
    if "trace" in source:
        table, mach, meta, parse_s = workload_io.load(source["trace"], run["machine"], source.get("limit"))
        return table, mach, meta, {"parse_s": parse_s}
    name = source["generator"]
    module = generator_module(name)
    options = generator_options(name)
    ns = argparse.Namespace()
    for action in set(options.values()):
        if action.dest not in ("help", "output"):
            setattr(ns, action.dest, action.default)
    for key, value in source["params"].items():
        action = options[key]
        if action.choices is not None and value not in action.choices:
            raise UsageError(f"{name} option {key}={value!r}: choose from {', '.join(map(str, action.choices))}")
        setattr(ns, key, value)
    ns.seed = run["seed"]
    if run["machine"] is not None and "machine" in options:
        ns.machine = run["machine"]
    t0 = time.perf_counter()
    table, meta = module.from_args(ns)
    generate_s = time.perf_counter() - t0
    if run["machine"] is not None:
        mach = machine_mod.parse(run["machine"])
    else:
        mach = machine_mod.parse(meta["machine"])
    return table, mach, meta, {"generate_s": generate_s}


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


def _write_parquet(df: pl.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    df.write_parquet(tmp, compression="zstd", statistics=True)
    os.replace(tmp, path)


def _write_json(obj, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(obj, indent=2, allow_nan=False) + "\n")
    os.replace(tmp, path)


def execute(run: dict, results: str, git_rev: str | None = None, plugins: tuple[str, ...] = ()) -> dict:
    """Run one configuration and write it under ``results``; returns its row of
    runs.parquet.  Exceptions of the run are caught and recorded (status "failed").
    ``plugins``: modules that register the run's scheduler or allocator (imported first,
    so that worker processes know them)."""
    import polars as pl

    from ..analysis import results as results_mod
    from ..engine import replay

    results = Path(results)
    tmp = results / ".tmp" / f"{run['key']}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir(parents=True)
    row = _base_row(run, git_rev)
    t_run = time.perf_counter()
    try:
        registry.load_plugins(plugins)
        table, mach, meta, timings = _workload(run)
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
            _write_parquet(frame.join(extra, how="cross"), tmp / f"{name}.parquet")
        for name, frame in (result.tables or {}).items():  # a policy's own: ipsched's decisions
            _write_parquet(frame, tmp / f"{name}.parquet")  # stay in runs/<key>/ with the run
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

    rows = list(finished(results).values())
    first = ["run_id", "status", "error", "workload", "scheduler", "allocator", "predictor", "label", "seed", "machine"]
    if rows:
        df = pl.DataFrame(rows, infer_schema_length=None)
        df = df.select([c for c in first if c in df.columns] + [c for c in df.columns if c not in first])
        df = df.sort(["workload", "scheduler", "allocator", "predictor", "seed"], nulls_last=True)
    else:
        df = pl.DataFrame(schema={c: pl.String for c in first})
    _write_parquet(df, Path(results) / "runs.parquet")
    return df


class _Lock:
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


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover
        return max(1, os.cpu_count() or 1)


def _mp_context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


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
    """Run every configuration of ``runs`` (from :func:`expand`) not yet finished under
    ``results``, then rebuild runs.parquet.  ``jobs``: local worker processes (default: the
    usable cores; 1 runs in this process); ``dask_address``: send the runs to that Dask
    scheduler instead.  ``progress``: tqdm bar on stderr (None: only on a terminal).
    Returns counts: ``total, skipped, ran, failed`` (failed among those run now),
    ``impossible`` (runs whose scheduler+allocator pair the registry's capabilities rule
    out on their workload, :func:`schedbench.registry.check_pair`: left out, nothing
    written), ``failed_total``."""
    import polars as pl
    from tqdm import tqdm

    results = Path(results).resolve()
    results.mkdir(parents=True, exist_ok=True)
    with _Lock(results):
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
        bar = tqdm(
            total=len(runs), initial=counts["skipped"], unit="run", desc="sweep", file=sys.stderr,
            disable=(None if progress is None else not progress), dynamic_ncols=True,
        )

        def record(row: dict) -> None:
            if row.get("status") == "impossible":  # checked before any replay work; nothing is written
                counts["impossible"] += 1
                bar.update(1)
                return
            counts["ran"] += 1
            if row.get("status") != "ok":
                counts["failed"] += 1
                bar.write(f"failed: {row['workload']} {row['label']} seed {row['seed']}: {row['error']}", file=sys.stderr)
            bar.update(1)

        plugins = registry.plugins_of(
            *{registry.scheduler(r["scheduler"]) for r in pending}, *{registry.allocator(r["allocator"]) for r in pending},
            *{registry.predictor(r["predictor"]) for r in pending},
        )
        try:
            if not pending:
                pass
            elif dask_address:
                _run_dask(pending, results, git_rev, dask_address, record, plugins)
            else:
                n = jobs or default_jobs()
                if n < 1:
                    raise UsageError("--jobs must be at least 1")
                if n == 1 or len(pending) == 1:
                    for run in pending:
                        record(execute(run, str(results), git_rev, plugins))
                else:
                    _run_pool(pending, results, git_rev, min(n, len(pending)), record, plugins)
        finally:
            bar.close()
            table = write_runs_table(results)
        keys = {r["key"] for r in runs}
        counts["failed_total"] = (
            table.filter(pl.col("run_id").is_in(list(keys)) & (pl.col("status") == "failed")).height
            if table.height
            else 0
        )
        return counts


def _warm(scheduler: str, allocator: str, plugins: tuple[str, ...]) -> None:
    from ..engine.replay import warm_up

    registry.load_plugins(plugins)
    warm_up(scheduler, allocator)


def _run_pool(pending, results: Path, git_rev, n: int, record, plugins: tuple[str, ...]) -> None:
    with cf.ProcessPoolExecutor(max_workers=n, mp_context=_mp_context()) as pool:
        # Compile (or load) each pair's loop once, in parallel, before the runs: workers
        # that start the same pair together would otherwise both compile it.
        pairs = dict.fromkeys((r["scheduler"], r["allocator"]) for r in pending)
        for fut in [pool.submit(_warm, s, a, plugins) for s, a in pairs]:
            try:
                fut.result()
            except Exception:  # noqa: BLE001 - the pair's runs will fail and say why
                pass
        futures = [pool.submit(execute, run, str(results), git_rev, plugins) for run in pending]
        try:
            for fut in cf.as_completed(futures):
                try:
                    row = fut.result()
                except cf.process.BrokenProcessPool:
                    raise DataError("a worker process died; rerun the sweep to resume") from None
                record(row)
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise


def _run_dask(pending, results: Path, git_rev, address: str, record, plugins: tuple[str, ...]) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:  # pragma: no cover - a declared dependency
        raise UsageError("--dask needs dask.distributed: pip install 'dask[distributed]'") from None
    try:
        client = Client(address, timeout="20s", set_as_default=False)
    except OSError as exc:
        raise DataError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    with client:
        futures = [client.submit(execute, run, str(results), git_rev, plugins, pure=False) for run in pending]
        try:
            for fut in as_completed(futures, loop=client.loop):
                record(fut.result())
        except BaseException:
            client.cancel(futures)
            raise
