"""A sweep's TOML config: its schema, its validation and its expansion into runs.

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

A run is one (workload, machine, scheduler, allocator, predictor, seed, period, options).
Each run gets the options its scheduler and allocator declare (others are ignored for
it).  "all" is every registered name, plug-ins included.  Its key is the
first 16 hex digits of the SHA-256 of the canonical JSON (sorted keys, no spaces) of its
configuration plus the package version, so a finished run is found again by its key and
never recomputed; changing any setting (or the version) makes a new run.  The
scheduler+allocator pairs a sweep runs are chosen in one place, :func:`pairs`.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import itertools
import json
import os
import re
import tomllib
from pathlib import Path

from .. import __version__, registry
from ..declarations import MAX_INT
from ..errors import UsageError
from ..workloads import GENERATORS

TOP_KEYS = frozenset({
    "name", "description", "schedulers", "allocators", "exclude", "predictors", "seeds", "machines", "workloads",
    "period", "options",
})
RESERVED_WORKLOAD_KEYS = frozenset({"name", "description", "generator", "trace", "machine", "machines", "seeds", "limit"})
DEFAULT_SEEDS = (1,)
DEFAULT_PREDICTORS = ("requested",)
_LABEL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9._=-]*$")


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


def load(path: str | os.PathLike) -> list[dict]:
    """The runs of the config file ``path`` (:func:`expand`, relative traces read from its
    folder); a mistake in it is a UsageError naming the file, as its TOML errors do."""
    path = Path(path)
    config = load_config(path)
    try:
        return expand(config, path.parent)
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None


def _names(value, table: dict | tuple[str, ...], what: str, default) -> list[str]:
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
        or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= MAX_INT for s in value)
    ):  # a larger seed made runs.parquet's Int64 seed column fail, every run recorded as failed
        raise UsageError(f"{where}: seeds must be an integer 0 to {MAX_INT:,} or a non-empty list of them")
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
            for group in getattr(generator_module(gen), "REQUIRED_ONE_OF", ()):  # e.g. --jobs or --months
                if not given & set(group):
                    raise UsageError(f"{where}: generator {gen} needs " + " or ".join(f"--{d}" for d in group))
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
        for (sched, alloc), pred, seed, period, given in itertools.product(
            pairs(schedulers, allocators, excluded), predictors, wl_seeds, periods, option_grid
        ):
            s_opts, a_opts = registry.split_options(registry.scheduler(sched), registry.allocator(alloc), given)
            cfg = {
                "workload": label, "source": source, "machine": machine, "scheduler": sched,
                "allocator": alloc, "predictor": pred, "seed": seed,
                "period": registry.scheduler(sched).default_period if period is None else period,
                "options": _plain({**s_opts, **a_opts, **registry.engine_options(given, changed_only=True)}),
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


def pairs(schedulers: list[str], allocators: list[str], excluded: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The scheduler+allocator pairs a sweep runs, in grid order (schedulers outer): every
    pair of the listed names but the ``excluded`` ones.  The one place where pairs are
    left out of a sweep."""
    return [(s, a) for s in schedulers for a in allocators if (s, a) not in excluded]


def _plain(options: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(options.items())}


def _periods(value) -> list[int]:
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_INT for v in values):
        raise UsageError(f"period must be 0 to {MAX_INT:,} seconds or a non-empty list of them")
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
