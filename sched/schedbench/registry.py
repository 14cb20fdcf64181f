"""One registry of what a run can use: schedulers (jitted or Python policies) and allocators.

An entry is a name, a kind, a factory, a one-line description and the options the
factory takes.  ``replay -s NAME``, ``sweep`` and ``report`` accept every registered name.

* A **jitted scheduler**'s factory is ``factory(setup, **options) ->``
  :class:`schedbench.core.JittedScheduler` (its state namedtuple and its compiled loop).
* A **Python policy**'s factory is ``factory(sim, **options) -> policy``, an object with
  ``decide(view) -> starts`` (:mod:`schedbench.engine.simulation`), driven step by step.
* An **allocator**'s factory is ``factory(setup, **options) -> state`` (a namedtuple
  whose class implements :func:`schedbench.core.hooks.choose`).

Factories are given as ``"module:attribute"`` strings (imported when first used, so that
listing the registry imports no kernels) or as callables.  Outside the package, register
with :func:`register_scheduler` / :func:`register_allocator`, from a module named in the
``SCHEDBENCH_PLUGINS`` environment variable (comma-separated; imported on first use of
the registry, also in sweep workers) or from an entry point of the ``schedbench.plugins``
group.
"""

from __future__ import annotations

import enum
import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import UsageError


class Kind(enum.Enum):
    JITTED = "jitted"
    PYTHON = "python"


def _names(value) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(filter(None, (v.strip() for v in value.split(","))))
    return tuple(value)


@dataclass(frozen=True)
class Option:
    """A factory option: its keyword, default, help line and the parser of its CLI text."""

    name: str
    default: Any
    help: str
    parse: Callable[[str], Any] = str

    def coerce(self, value):
        """``value`` as the factory takes it (strings from the CLI or TOML are parsed)."""
        if isinstance(value, str) and self.parse is not str:
            try:
                return self.parse(value)
            except ValueError as exc:
                raise UsageError(f"option {self.name}={value!r}: {exc}") from None
        if self.parse is _names:
            return _names(value)
        return value


@dataclass(frozen=True)
class Entry:
    name: str
    kind: Kind
    factory: str | Callable
    description: str
    options: tuple[Option, ...] = ()
    plugin: str | None = field(default=None, compare=False)  # module to import in workers
    default_period: int = 0  # decision period (s) when a run does not give one

    def load(self) -> Callable:
        if callable(self.factory):
            return self.factory
        module, _, attr = self.factory.partition(":")
        return getattr(importlib.import_module(module), attr)

    def option_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.options)

    def resolve(self, given: dict) -> dict:
        """This entry's options: its defaults updated with the ones of ``given`` it takes."""
        out = {o.name: o.coerce(o.default) for o in self.options}
        for o in self.options:
            if o.name in given:
                out[o.name] = o.coerce(given[o.name])
        return out


_CRITICAL = Option(
    "critical", ("gpus", "mics"), "critical resource types, comma-separated (balanced, priority-weighted)", _names
)
_BOUND = Option("priority_bound", 10, "priority-weighted's bound on priorities", int)
_WEIGHT_RULE = Option(
    "weight_rule", "authors",
    "weighted / priority-weighted w_k: 'authors' (default: AccaSim's smoothing, counters start at 1 over a "
    "window of the next jobs) or 'text' (the paper's Eq. 1 over the whole queue)",
)
_WINDOW = Option("window", 100, "jobs in the 'authors' weight rule's window", int)

SCHEDULERS: dict[str, Entry] = {}
ALLOCATORS: dict[str, Entry] = {}


def _add(table: dict, entry: Entry, replace: bool) -> Entry:
    if not replace and entry.name in table:
        raise UsageError(f"{entry.name!r} is already registered")
    table[entry.name] = entry
    return entry


def register_scheduler(
    name: str,
    factory: str | Callable,
    description: str,
    *,
    kind: Kind | str = Kind.JITTED,
    options: tuple[Option, ...] = (),
    replace: bool = False,
    default_period: int = 0,
) -> Entry:
    """Register a scheduler (``kind`` "jitted" or "python") under ``name``;
    ``default_period``: its decision period (s) when a run gives none (0: every event)."""
    plugin = None if isinstance(factory, str) else factory.__module__
    entry = Entry(name, Kind(kind), factory, description, tuple(options), plugin, default_period)
    return _add(SCHEDULERS, entry, replace)


def register_allocator(
    name: str, factory: str | Callable, description: str, *, options: tuple[Option, ...] = (), replace: bool = False
) -> Entry:
    """Register an allocator under ``name``."""
    plugin = None if isinstance(factory, str) else factory.__module__
    return _add(ALLOCATORS, Entry(name, Kind.JITTED, factory, description, tuple(options), plugin), replace)


def unregister(name: str) -> None:
    """Remove a scheduler or allocator registered under ``name`` (tests use it)."""
    SCHEDULERS.pop(name, None)
    ALLOCATORS.pop(name, None)


# --------------------------------------------------------------------------- built-ins

register_scheduler("fcfs", "schedbench.schedulers.inorder:fcfs", "queue order, stop at the first job that does not fit")
register_scheduler(
    "sjf", "schedbench.schedulers.inorder:sjf",
    "(pred, submit, id) order, stop at the first job that does not fit (as AccaSim)",
)
register_scheduler(
    "easy", "schedbench.schedulers.easy:easy",
    "EASY backfilling; on heterogeneous nodes the head's reservation is node-feasible",
)
register_scheduler(
    "prb", "schedbench.schedulers.prb:prb",
    "priority = wait / expected wait of the job's queue, ties by demand (Netti et al. 2.2); "
    "tries every queued job in that order, skipping those that do not fit (as the authors' AccaSim)",
)
register_scheduler(
    "prb-blocking", "schedbench.schedulers.prb:prb_blocking",
    "PRB's order, but stops at the first job that does not fit (like fcfs/sjf)",
)
register_scheduler(
    "conservative", "schedbench.schedulers.conservative:conservative",
    "conservative backfilling on a RUSV plan: every queued job holds a booking (Keller's OpenCCS)",
)
def _boolean(text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "yes", "1", "on"):
        return True
    if value in ("false", "no", "0", "off"):
        return False
    raise ValueError("expected true or false")


_FAIRSHARE_OPTIONS = (
    Option("priority_weights", "", "weights age=A,size=S,fairshare=F (per minute queued, per unit, per unit of "
           "the fair-share factor; default age=1,size=1,fairshare=1440)"),
    Option("depth", 1, "reservations per pass (1: EASY over the priority order)", int),
    Option("account", "group", "a job's account: its SWF group or user", str),
    Option("accounts", "", "accounts file (TOML [accounts.ID] target = U or allocation = U*s); default: "
           "each account's share of the trace's work"),
    Option("half_life", 7 * 86400, "half-life of the fair-share usage, s", int),
    Option("target_factor", 2.0, "target occupancy / ideal occupancy (Steffen 4.1)", float),
    Option("backfill", True, "false: pass 2 stops at the first job that cannot start (strict priority)", _boolean),
)
register_scheduler(
    "priority", "schedbench.schedulers.fairshare:priority",
    "linear multifactor priority (age, size, fair-share 2^-U/S) with depth-D reservations and backfill",
    options=_FAIRSHARE_OPTIONS,
)
register_scheduler(
    "sfs", "schedbench.schedulers.fairshare:sfs",
    "Simultaneous Fair-Share (Steffen): accounts at or below target occupancy first, then priority with "
    "depth-D reservations and backfill", options=_FAIRSHARE_OPTIONS,
)
_PRIORITY_TYPE = Option("priority_type", "basic", "ipsched, aucsched, backfill: 'basic' (first submitted highest) "
                        "or 'multifactor' (age and size, +1 per minute queued)")
_IP_OPTIONS = (
    _PRIORITY_TYPE,
    Option("max_jobs", 200, "ipsched, aucsched: MAX_JOB_COUNT, jobs in the window", int),
    Option("solver", "cbc", "ipsched, aucsched: 'cbc' or 'highs' (python-mip, one thread)"),
    Option("max_nodes", 200, "ipsched, aucsched: branch-and-bound node limit per solve (deterministic)", int),
    Option("on_limit", "halve", "ipsched, aucsched: at the node limit 'halve' (start nothing, halve the window; "
           "the paper) or 'incumbent' (start the best solution found)"),
    Option("solver_seed", 0, "ipsched, aucsched: the solver's random seed", int),
)
register_scheduler(
    "ipsched", "schedbench.policies.ipsched:ipsched",
    "IPSCHED (Soner & Ozturan): one IP per period allocates nodes' free cores and GPUs to a window of jobs",
    kind=Kind.PYTHON, default_period=5,
    options=(*_IP_OPTIONS, Option("objective", "priority", "ipsched: 'priority' (sum P_j(s_j - c_j)) or 'cores' "
                                  "(sum P_j R_j^cpu (s_j - c_j))")),
)
register_scheduler(
    "aucsched", "schedbench.policies.aucsched:aucsched",
    "AUCSCHED (Soner & Ozturan): an auction of contiguous-block bids per period, solved as an IP",
    kind=Kind.PYTHON, default_period=5,
    options=(*_IP_OPTIONS,
             Option("max_bids", 10, "aucsched: MAXBIDSPERJOB", int),
             Option("slurm_bids", True, "aucsched: add each job's SLURM bid (the allocator's placement)", _boolean),
             Option("spread_bids", False, "aucsched: our extension, bid whole nodesets for core-only jobs", _boolean)),
)
register_scheduler(
    "backfill", "schedbench.policies.backfill:backfill",
    "SLURM backfill as Soner & Ozturan's baseline: EASY over a basic or multifactor priority order, node-level",
    kind=Kind.PYTHON, options=(_PRIORITY_TYPE,),
)
register_allocator("ff", "schedbench.allocators.fit:first_fit", "First-Fit: node index order")
register_allocator("bf", "schedbench.allocators.fit:best_fit", "Best-Fit: non-decreasing free cores + GPUs + MICs")
register_allocator(
    "balanced", "schedbench.allocators.netti:balanced",
    "Balanced: nodes without free critical resources first, then interleaved bins", options=(_CRITICAL,),
)
register_allocator(
    "weighted", "schedbench.allocators.netti:weighted",
    "Weighted: rank by sum of w_k * impact_k, w_k = mean queued request x load / capacity",
    options=(_WEIGHT_RULE, _WINDOW),
)
register_allocator(
    "priority-weighted", "schedbench.allocators.netti:priority_weighted",
    "Weighted with bounded per-critical-type priorities", options=(_CRITICAL, _BOUND, _WEIGHT_RULE, _WINDOW),
)
BUILTIN = frozenset(SCHEDULERS) | frozenset(ALLOCATORS)

# --------------------------------------------------------------------------- plugins

_PLUGINS_LOADED = False


def load_plugins(modules: tuple[str, ...] = ()) -> None:
    """Import ``modules``, the modules of ``SCHEDBENCH_PLUGINS`` and the ``schedbench.plugins``
    entry points (once), so that the policies they register are known."""
    global _PLUGINS_LOADED
    for module in modules:
        importlib.import_module(module)
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    for module in _names(os.environ.get("SCHEDBENCH_PLUGINS", "")):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise UsageError(f"SCHEDBENCH_PLUGINS: cannot import {module}: {exc}") from None
    from importlib.metadata import entry_points

    for ep in entry_points(group="schedbench.plugins"):
        ep.load()


def _lookup(table: dict, name: str, what: str) -> Entry:
    load_plugins()
    try:
        return table[name]
    except KeyError:
        raise UsageError(f"unknown {what} {name!r}; choose from {', '.join(table)}") from None


def scheduler(name: str) -> Entry:
    return _lookup(SCHEDULERS, name, "scheduler")


def allocator(name: str) -> Entry:
    return _lookup(ALLOCATORS, name, "allocator")


def scheduler_names() -> list[str]:
    load_plugins()
    return list(SCHEDULERS)


def allocator_names() -> list[str]:
    load_plugins()
    return list(ALLOCATORS)


def plugins_of(*entries: Entry) -> tuple[str, ...]:
    """Modules a worker process must import to know ``entries`` (those registered from
    outside the package)."""
    return tuple(dict.fromkeys(e.plugin for e in entries if e.plugin and e.name not in BUILTIN))


def split_options(sched: Entry, alloc: Entry, options: dict) -> tuple[dict, dict]:
    """The resolved options of a ``scheduler+allocator`` pair from ``options`` (names with
    ``-`` read as ``_``): each entry takes those it declares, with its defaults for the
    rest.  A name that no registered scheduler or allocator declares is a usage error."""
    options = {k.replace("-", "_"): v for k, v in (options or {}).items()}
    check_option_names(options)
    return sched.resolve(options), alloc.resolve(options)


def check_option_names(options) -> None:
    """A usage error unless some registered scheduler or allocator declares each name."""
    load_plugins()
    known = {o.name for e in (*SCHEDULERS.values(), *ALLOCATORS.values()) for o in e.options}
    unknown = sorted(set(options) - known)
    if unknown:
        raise UsageError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known)) or 'none'}")


def parse_option_args(items: list[str] | None) -> dict:
    """``["name=value", ...]`` (``--option``) as a dict of strings."""
    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--option {item!r}: expected NAME=VALUE")
        out[name.strip().replace("-", "_")] = value.strip()
    return out


def describe(table: dict[str, Entry]) -> str:
    """One line per entry: name, kind and description (for ``--help``)."""
    load_plugins()
    width = max((len(n) for n in table), default=0)
    lines = []
    for name, e in table.items():
        kind = " (Python policy)" if e.kind is Kind.PYTHON else ""
        opts = f" [options: {', '.join(e.option_names())}]" if e.options else ""
        lines.append(f"  {name:<{width}}  {e.description}{kind}{opts}")
    return "\n".join(lines)
