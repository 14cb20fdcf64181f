"""What a sweep's worker needs before a run or a compile: the plug-in modules imported and
the run's workload built (read or generated)."""

from __future__ import annotations

import argparse
import importlib
import socket
import time

from .. import registry
from ..errors import DataError, UsageError
from .config import generator_module, generator_options


def load_worker_plugins(plugins: tuple[str, ...]) -> None:
    """Import the plug-in modules ``plugins`` (and the registry's own) in this process,
    a worker's.  A module that cannot be imported here is a DataError naming it and the
    host: it stops the sweep once, where recording each run as failed would repeat the
    same missing module for every run."""
    for module in plugins:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise DataError(
                f"plug-in module {module!r} cannot be imported on the worker host {socket.gethostname()} "
                f"({type(exc).__name__}: {exc}): install it where the sweep's workers run, or put it on "
                "their PYTHONPATH") from None
    registry.load_plugins(plugins)


def workload_of(run: dict):
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
