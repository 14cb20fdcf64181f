"""Compile once, in parallel: the replay loops a set of runs needs, compiled (or loaded
from numba's cache) in worker processes before anything replays.

A *task* is one scheduler+allocator with a predictor, options and a period, and the inputs
its loop's types are taken from: modes (``pool``, ``nodes``: tiny built-in workloads,
:func:`schedbench.engine.warm.mode_input`) or the workloads of a sweep's runs (one run per
workload, the first seed's: the seed changes the jobs, not their shape).  Each task
compiles the loops of its inputs (:func:`schedbench.engine.warm.ready`: usually one, as
every input of the default benchmark has the same shape).  Tasks are independent, so the
workers compile different loops side by side; two tasks needing the same loop (a grid of
option values that do not change the types) meet at the cache folder's lock for that
loop, and the second loads what the first compiled.

Used by ``schedbench warm`` (and ``make setup``) and by a sweep, whose workers then load
every loop from the cache instead of each compiling its own copy.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Sequence

from .. import registry
from . import executors
from .config import canonical_json
from .inputs import load_worker_plugins, workload_of

DEFAULT_PREDICTOR = "requested"


def _task(scheduler: str, allocator: str, predictor: str, options: dict, period: int | None,
          inputs: list[dict], plugins: tuple[str, ...]) -> dict:
    return dict(scheduler=scheduler, allocator=allocator, predictor=predictor, options=options, period=period,
                inputs=inputs, plugins=plugins)


def _plugins(schedulers: Iterable[str], allocators: Iterable[str], predictors: Iterable[str]) -> tuple[str, ...]:
    return registry.plugins_of(*map(registry.scheduler, schedulers), *map(registry.allocator, allocators),
                               *map(registry.predictor, predictors))


def jitted(scheduler: str) -> bool:
    """Whether ``scheduler`` runs a compiled loop (a Python policy compiles no loop)."""
    return registry.scheduler(scheduler).kind is registry.Kind.JITTED


def mode_tasks(schedulers: Sequence[str], allocators: Sequence[str], modes: Sequence[str],
               predictor: str = DEFAULT_PREDICTOR) -> list[dict]:
    """One task per jitted scheduler x allocator, its inputs the ``modes``."""
    plugins = _plugins(schedulers, allocators, [predictor])
    return [_task(s, a, predictor, {}, None, [{"mode": m} for m in modes], plugins)
            for s in schedulers if jitted(s) for a in allocators]


def run_tasks(runs: Sequence[dict]) -> list[dict]:
    """One task per distinct (scheduler, allocator, predictor, options, period) of a
    sweep's ``runs`` (:func:`schedbench.sweep.config.expand`) with a jitted scheduler, in
    the runs' order, its inputs one run per workload and machine."""
    groups: dict[tuple, dict] = {}
    for run in runs:
        if not jitted(run["scheduler"]):
            continue
        options = run.get("options") or {}
        key = (run["scheduler"], run["allocator"], run["predictor"], canonical_json(options), run.get("period"))
        task = groups.get(key)
        if task is None:
            task = groups[key] = _task(*key[:3], options, run.get("period"), [], ())
        if not any(i["run"]["workload"] == run["workload"] and i["run"]["machine"] == run["machine"]
                   for i in task["inputs"]):
            task["inputs"].append({"run": run})
    tasks = list(groups.values())
    plugins = _plugins({t["scheduler"] for t in tasks}, {t["allocator"] for t in tasks},
                       {t["predictor"] for t in tasks})
    for t in tasks:
        t["plugins"] = plugins
    return tasks


def interleaved(tasks: Sequence[dict]) -> list[dict]:
    """``tasks`` in the order to start them: the first task of each scheduler, then the
    second of each, and so on.  The tasks of one scheduler mostly need the same loop (every
    built-in allocator shares one state type), so started side by side one worker compiles
    it while the others wait at its lock and then load it: in a grid's scheduler-major
    order the workers compiled the loops one after another (a cold ``make bench``: 202 s
    for ten loops whose compiles took 221 s in all, on two workers)."""
    by_scheduler: dict[str, list[dict]] = {}
    for t in tasks:
        by_scheduler.setdefault(t["scheduler"], []).append(t)
    return [t for turn in itertools.zip_longest(*by_scheduler.values()) for t in turn if t is not None]


def _input_name(item: dict) -> str:
    return item["mode"] if "mode" in item else item["run"]["workload"]


def label(task: dict) -> str:
    """``easy+ff (pool)``, ``easy+bf -p user-mean (soner-V, eurora_load=0.7)``.  Options
    without a value (None or empty: ``slurm``'s many "from slurm.conf" settings) are left
    out: they made a line of several hundred characters."""
    extra = "" if task["predictor"] == DEFAULT_PREDICTOR else f" -p {task['predictor']}"
    extra += "".join(f" {k}={','.join(map(str, v)) if isinstance(v, (list, tuple)) else v}"
                     for k, v in sorted(task["options"].items()) if v is not None and v != "" and v != [] and v != ())
    if task["period"]:
        extra += f" every {task['period']} s"
    return f"{task['scheduler']}+{task['allocator']}{extra} ({', '.join(map(_input_name, task['inputs']))})"


# -------------------------------------------------------------------------- in a worker

_WORKLOADS: dict[str, tuple] = {}  # this process's sweep workloads, by run configuration
_WORKLOADS_KEPT_JOBS = 2_000_000  # jobs kept in all (a few hundred MB): the oldest go first


def _workload(item: dict) -> tuple:
    """(table, machine, meta) of a task input, each built once per process."""
    from ..engine.warm import mode_input

    if "mode" in item:
        return mode_input(item["mode"])
    run = item["run"]
    key = canonical_json({k: run.get(k) for k in ("source", "machine", "seed")})
    if key not in _WORKLOADS:
        table, machine, meta, _ = workload_of(run)
        while _WORKLOADS and sum(t.n_jobs for t, _, _ in _WORKLOADS.values()) + table.n_jobs > _WORKLOADS_KEPT_JOBS:
            del _WORKLOADS[next(iter(_WORKLOADS))]
        _WORKLOADS[key] = (table, machine, meta)
    return _WORKLOADS[key]


def compile_task(task: dict) -> dict:
    """Make the loops of ``task`` ready in this process (a worker's); returns what
    happened: ``label``, ``inputs`` (their number), ``loops`` (made ready here), ``compiled_s`` (seconds numba
    compiled: 0 when everything came from the cache), ``wall_s``, ``impossible`` (inputs
    its capabilities rule out: ``[(input, reason)]``) and ``error`` (a message, or None).
    Never raises: a task that fails leaves its runs to fail and say why."""
    from ..engine.warm import CompileTime, ready

    out = dict(label=label(task), inputs=len(task["inputs"]), loops=0, compiled_s=0.0, wall_s=0.0, impossible=[], error=None)
    timer = CompileTime()
    t0 = time.perf_counter()
    try:
        load_worker_plugins(tuple(task["plugins"]))
        with timer.installed():
            for item in task["inputs"]:
                table, machine, meta = _workload(item)
                try:
                    out["loops"] += ready(table, machine, task["scheduler"], task["allocator"], task["predictor"],
                                          meta=meta, options=task["options"], period=task["period"])
                except registry.Impossible as exc:
                    out["impossible"].append((_input_name(item), str(exc)))
    except Exception as exc:  # noqa: BLE001 - reported, and the runs will say it again
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["compiled_s"] = timer.seconds
    out["wall_s"] = time.perf_counter() - t0
    return out


def routine(result: dict) -> bool:
    """Whether a finished task is worth no line of its own: everything loaded from the
    cache, nothing failed or ruled out."""
    return not result["error"] and result["compiled_s"] == 0 and not result["impossible"]


def describe(result: dict) -> str:
    """One line for a finished task: ``easy+ff (pool): compiled, 9.1 s``."""
    if result["error"]:
        return f"{result['label']}: failed ({result['error']})"
    what = []
    if result["compiled_s"] > 0:
        what.append(f"compiled, {result['wall_s']:.1f} s")
    elif len(result["impossible"]) < result["inputs"]:
        what.append("loaded from the cache")
    if result["impossible"]:
        what.append("not possible on " + ", ".join(name for name, _ in result["impossible"]))
    return f"{result['label']}: {'; '.join(what)}"


# -------------------------------------------------------------------------- the driver


def compile_tasks(tasks: Sequence[dict], jobs: int | None = None, progress: bool = True) -> list[dict]:
    """Run ``tasks`` on ``jobs`` worker processes (default: the usable cores; 1: in this
    process), with a progress line per task (:class:`schedbench.engine.progress.Steps`)
    unless ``progress`` is False; returns the tasks' results in the order they finished."""
    from ..engine.progress import Steps

    results: list[dict] = []
    steps = Steps(len(tasks), "compile") if progress and tasks else None

    def record(result: dict) -> None:
        results.append(result)
        if steps is not None:
            steps.step(describe(result), routine(result))

    calls = [(compile_task, (t,)) for t in interleaved(tasks)]
    n = min(jobs or executors.default_jobs(), len(tasks))
    try:
        if n <= 1:
            executors.in_process(calls, record)
        else:
            executors.process_pool(calls, n, record)
    finally:
        if steps is not None:
            steps.close()
    return results
