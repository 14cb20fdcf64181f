"""One registry of what a run can use: schedulers (jitted or Python policies), allocators
and duration predictors.

An entry (:class:`schedbench.declarations.Entry`) is the whole description of its policy:
name, kind, factory, one-line description, the options the factory takes (with defaults
and help) and its capabilities.  The built-in entries are declared beside their factories,
in :mod:`schedbench.schedulers`, :mod:`schedbench.allocators` and
:mod:`schedbench.policies` (``DECLARATIONS``); the built-in predictors below.
``replay -s NAME``, ``sweep`` and ``report`` accept every registered name, and
``schedbench replay`` gets a flag per declared option.

* A **jitted scheduler**'s factory is ``factory(setup, **options) ->``
  :class:`schedbench.core.JittedScheduler` (its state namedtuple and its compiled loop).
* A **Python policy**'s factory is ``factory(sim, **options) -> policy``, an object with
  ``decide(view) -> starts`` (:mod:`schedbench.engine.simulation`), driven step by step.
* An **allocator**'s factory is ``factory(setup, **options) -> state`` (a namedtuple
  whose class implements :func:`schedbench.core.hooks.choose`).
* A **predictor**'s factory is ``factory(table, meta) -> state`` (a namedtuple whose class
  implements :func:`schedbench.core.hooks.predict`, and ``learn`` if it learns online).

Factories are given as ``"module:attribute"`` strings (imported when first used, so that
listing the registry imports no kernels) or as callables.  :func:`check_pair` refuses a
pair its capabilities rule out, before any replay work.  Outside the package, register
with :func:`register_scheduler` / :func:`register_allocator` / :func:`register_predictor`,
from a module named in the ``SCHEDBENCH_PLUGINS`` environment variable (comma-separated;
imported on first use of the registry, also in sweep workers) or from an entry point of the
``schedbench.plugins`` group.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Callable
from typing import NamedTuple

from . import allocators as _allocators
from . import policies as _policies
from . import schedulers as _schedulers
from .declarations import (
    ENGINE_OPTIONS,
    PLAN_SITE_FEATURES,
    Capabilities,
    Entry,
    Kind,
    Option,
    boolean,
    names,
)
from .errors import UsageError

__all__ = [
    "Capabilities", "Entry", "Impossible", "Kind", "Option", "Workload", "allocator", "allocator_names",
    "check_pair", "predictor", "predictor_names", "register_allocator", "register_predictor",
    "register_scheduler", "scheduler", "scheduler_names", "site_features", "workload_shape",
]

_names = names  # the parser of comma-separated options (plug-ins used the private name)
_boolean = boolean

SCHEDULERS: dict[str, Entry] = {}
ALLOCATORS: dict[str, Entry] = {}
PREDICTORS: dict[str, Entry] = {}


def _add(table: dict, entry: Entry, replace: bool) -> Entry:
    if not replace and entry.name in table:
        raise UsageError(f"{entry.name!r} is already registered")
    table[entry.name] = entry
    return entry


def _plugin(factory) -> str | None:
    return None if isinstance(factory, str) else factory.__module__


def register_scheduler(
    name: str,
    factory: str | Callable,
    description: str,
    *,
    kind: Kind | str = Kind.JITTED,
    options: tuple[Option, ...] = (),
    replace: bool = False,
    default_period: int | None = None,
    capabilities: Capabilities | None = None,
) -> Entry:
    """Register a scheduler (``kind`` "jitted" or "python") under ``name``;
    ``capabilities``: what it needs and honours (default: none of the plan's needs,
    maintenance windows only); ``default_period``: its decision period (s) when a run
    gives none (0: every event; overrides the capabilities' one)."""
    caps = capabilities or Capabilities()
    if default_period is not None:
        caps = dataclasses.replace(caps, default_period=int(default_period))
    entry = Entry(name, Kind(kind), factory, description, tuple(options), caps, _plugin(factory))
    return _add(SCHEDULERS, entry, replace)


def register_allocator(
    name: str, factory: str | Callable, description: str, *, options: tuple[Option, ...] = (), replace: bool = False,
    gives_plan_order: bool = False,
) -> Entry:
    """Register an allocator under ``name``; ``gives_plan_order``: whether its state class
    implements the ``plan_order`` hook (planners on nodes need it)."""
    caps = Capabilities(gives_plan_order=gives_plan_order)
    entry = Entry(name, Kind.JITTED, factory, description, tuple(options), caps, _plugin(factory))
    return _add(ALLOCATORS, entry, replace)


def register_predictor(name: str, factory: str | Callable, description: str, *, replace: bool = False) -> Entry:
    """Register a duration predictor under ``name``: ``factory(table, meta) -> state``, a
    namedtuple whose class implements the core's ``predict`` hook (and ``learn``)."""
    return _add(PREDICTORS, Entry(name, Kind.JITTED, factory, description, (), Capabilities(), _plugin(factory)),
                replace)


def unregister(name: str) -> None:
    """Remove a scheduler, allocator or predictor registered under ``name`` (tests use it)."""
    SCHEDULERS.pop(name, None)
    ALLOCATORS.pop(name, None)
    PREDICTORS.pop(name, None)


# --------------------------------------------------------------------------- built-ins

for _entry in (*_schedulers.DECLARATIONS, *_policies.DECLARATIONS):
    _add(SCHEDULERS, _entry, False)
for _entry in _allocators.DECLARATIONS:
    _add(ALLOCATORS, _entry, False)
for _name, _attr, _text in (
    ("requested", "requested", "the user's estimate (the run time where the log has none)"),
    ("actual", "actual", "the real run time (an oracle)"),
    ("user-profile", "user_profile", "last duration of the user's jobs of the same profile (Netti et al. 2.3)"),
    ("user-mean2", "user_mean2", "mean of the user's last two ended jobs, capped by the estimate (Tsafrir et al.)"),
    ("user-profile-capped", "user_profile_capped", "user-profile, also capped at the job's own estimate"),
    ("tsafrir", "tsafrir", "user-mean2 plus Tsafrir et al.'s correction: a running job that outlives its "
     "prediction is predicted to end at its estimate"),
    ("tsafrir-steps", "tsafrir_steps", "user-mean2 with stepwise correction: an outlived prediction is raised "
     "by 1 min, 5 min, 15 min, 30 min, 1 h ... 100 h, at most to the estimate (a pyss fork's reading)"),
):
    register_predictor(_name, f"schedbench.predictors:{_attr}", _text)
BUILTIN = frozenset(SCHEDULERS) | frozenset(ALLOCATORS) | frozenset(PREDICTORS)

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


def predictor(name: str) -> Entry:
    return _lookup(PREDICTORS, name, "predictor")


def predictor_names() -> list[str]:
    """The registered predictors' names, built-ins first (imports no numba)."""
    load_plugins()
    return list(PREDICTORS)


def declared_options() -> dict[str, Option]:
    """Every option some registered scheduler or allocator declares, and the options every
    run takes (:data:`schedbench.declarations.ENGINE_OPTIONS`), by name (the first
    declaration of a shared name gives its help and parser)."""
    load_plugins()
    out: dict[str, Option] = {}
    for e in (*SCHEDULERS.values(), *ALLOCATORS.values()):
        for o in e.options:
            out.setdefault(o.name, o)
    for o in ENGINE_OPTIONS:
        out.setdefault(o.name, o)
    return out


def engine_options(options: dict | None, *, changed_only: bool = False) -> dict:
    """The options every run takes (:data:`schedbench.declarations.ENGINE_OPTIONS`) from
    ``options`` (names with ``-`` read as ``_``), with their defaults for the rest
    (``changed_only``: only those given with another value than the default).  A value
    outside an option's choices is a usage error."""
    given = {k.replace("-", "_"): v for k, v in (options or {}).items()}
    out = {}
    for o in ENGINE_OPTIONS:
        value = o.coerce(given.get(o.name, o.default))
        if o.choices is not None and value not in o.choices:
            raise UsageError(f"option {o.name}={value!r}: choose from {', '.join(o.choices)}")
        if not changed_only or value != o.default:
            out[o.name] = value
    return out


# --------------------------------------------------------------------------- capabilities


class Impossible(UsageError):
    """A scheduler+allocator pair that cannot run on a workload or with a site, by their
    capabilities (a sweep skips such runs)."""


class Workload(NamedTuple):
    """What capabilities ask of a workload (:func:`workload_shape`).  ``on_nodes``: a
    plan's bookings must hold nodes (some replayed job asks for more than single units of
    one type spread freely, or the site has per-node windows or kept cores on a machine
    with GPU nodes); ``pool``: every replayed job is single units of one type spread
    freely."""

    on_nodes: bool
    pool: bool


def workload_shape(all_pool: bool, per_node_site: bool = False) -> Workload:
    """The :class:`Workload` of a run whose replayed jobs are all pool jobs or not
    (``all_pool``: :attr:`schedbench.core.Setup.all_pool`, from each job's pool type, the
    one test every planner uses); ``per_node_site``: the site has maintenance windows, or
    kept cores and the machine GPU nodes."""
    return Workload(on_nodes=bool(per_node_site or not all_pool), pool=bool(all_pool))


def site_features(site) -> frozenset[str]:
    """The features a :class:`schedbench.plan.site.Site` uses (names of
    :data:`schedbench.declarations.SITE_FEATURES`)."""
    used = {
        "limits": bool(site.limits), "freepools": bool(site.freepools),
        "kept_cores": bool(site.gpu_node_cores), "maintenance": bool(site.maintenance),
    }
    return frozenset(k for k, v in used.items() if v)


_FEATURE_TEXT = {"limits": "limits", "freepools": "FreePools", "kept_cores": "kept GPU-node cores",
                 "maintenance": "maintenance windows"}


def check_pair(scheduler: str, allocator: str, *, site=None, workload: Workload | None = None,
               options: dict | None = None) -> None:
    """Raise :class:`Impossible` (a usage error naming the pair and the reason) when the
    capabilities of ``scheduler`` and ``allocator`` rule them out together, with ``site``
    (a :class:`schedbench.plan.site.Site`), on ``workload`` (:func:`workload_shape`;
    None: only the checks that need no jobs) and with the scheduler's ``options`` (those
    not given take their defaults)."""
    s, a = _lookup(SCHEDULERS, scheduler, "scheduler"), _lookup(ALLOCATORS, allocator, "allocator")
    caps = s.capabilities
    pair = f"{s.name}+{a.name}"
    if site is not None:
        missing = sorted(site_features(site) - caps.site, key=list(_FEATURE_TEXT).index)
        if missing:
            what = ", ".join(_FEATURE_TEXT[f] for f in missing)
            planners = [n for n, e in SCHEDULERS.items() if set(missing) <= e.capabilities.site]
            hint = f"; use {_either(planners)}" if planners else ""
            why = " (they act on a plan of future starts)" if set(missing) <= PLAN_SITE_FEATURES else ""
            raise Impossible(f"{pair}: {s.name} does not honour the site's {what}{why}{hint}")
    needs_order = caps.plan_order == "always" or (
        caps.plan_order == "on nodes" and workload is not None and workload.on_nodes
    )
    who, lifted = s.name, ""
    if caps.plan_order_option is not None:
        opt = next(o for o in s.options if o.name == caps.plan_order_option)
        needs_order = needs_order and bool(opt.coerce((options or {}).get(opt.name, opt.default)))
        who, lifted = f"{s.name} with {opt.name}=true", f", or -O {opt.name}=false"
    if needs_order and not a.capabilities.gives_plan_order:
        givers = planning_order_givers()
        where = " on nodes" if caps.plan_order == "on nodes" else ""
        raise Impossible(f"{pair}: {who}{where} places jobs in the allocator's planning order, which {a.name} "
                         f"does not give (use {givers}{lifted})")
    if caps.pool_only and workload is not None and not workload.pool:
        raise Impossible(f"{pair}: {s.name} plans on pools of units only: every job must be single units of one "
                         "resource type spread freely (node-level reservations for jobs with a node count or "
                         "several types per unit are not implemented)")


def planning_order_givers() -> str:
    """The allocators that give a planning order, as a phrase for a message."""
    return _either([n for n, e in ALLOCATORS.items() if e.capabilities.gives_plan_order])


def _either(names: list[str]) -> str:
    return " or ".join(filter(None, (", ".join(names[:-1]), names[-1]))) if names else "none registered"


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
    known = set(declared_options())
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
