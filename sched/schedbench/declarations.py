"""What a registry entry declares: options (name, default, help, parser) and capabilities.

A policy's family declares its entries beside its factories, in the family package's
``__init__`` (:mod:`schedbench.schedulers`, :mod:`schedbench.allocators`,
:mod:`schedbench.policies`): those modules and this one import neither numba nor the
kernels, so that listing the registry (``schedbench replay --help``) stays cheap; the
factory itself (``"module:attribute"``) is imported when a run first uses it.  The
factories take exactly the declared options, already resolved: defaults live here only.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import UsageError


class Kind(enum.Enum):
    JITTED = "jitted"
    PYTHON = "python"


def names(value) -> tuple[str, ...]:
    """A comma-separated string or a sequence as a tuple of names."""
    if isinstance(value, str):
        return tuple(filter(None, (v.strip() for v in value.split(","))))
    return tuple(value)


def boolean(text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "yes", "1", "on"):
        return True
    if value in ("false", "no", "0", "off"):
        return False
    raise ValueError("expected true or false")


MAX_INT = 10**18 - 1
"""The largest magnitude of an integer option and of a job table's values: an SWF field's
18 digits (:data:`schedbench.io.swf.MAX_DIGITS`), so that sums with times stay within
int64."""


@dataclass(frozen=True)
class Option:
    """A factory option: its keyword, default, help line and the parser of its CLI text.
    ``flag``: the ``schedbench replay`` flag (default ``--name`` with dashes); ``choices``:
    the values the CLI accepts, if it restricts them."""

    name: str
    default: Any
    help: str
    parse: Callable[[str], Any] = str
    choices: tuple[str, ...] | None = None
    metavar: str | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def coerce(self, value):
        """``value`` as the factory takes it (strings from the CLI or TOML are parsed)."""
        given = value
        if isinstance(value, str) and self.parse is not str:
            try:
                value = self.parse(value)
            except ValueError as exc:
                raise UsageError(f"option {self.name}={given!r}: {exc}") from None
        elif self.parse is names:
            return names(value)
        if isinstance(value, int) and not isinstance(value, bool) and not -MAX_INT <= value <= MAX_INT:
            # past int64 the kernels' parameter arrays raised OverflowError: an internal error
            raise UsageError(f"option {self.name}={given!r}: out of range (at most {MAX_INT:,} either way)")
        return value


ENGINE_OPTIONS: tuple[Option, ...] = (
    Option("on_overrun", "run",
           "every scheduler: a job that runs past its request (estimate) 'run's its logged time, or is 'kill'ed "
           "at its request, as sites that enforce wall times do", choices=("run", "kill")),
    Option("dependencies", "off",
           "every scheduler: 'on' honours SWF fields 17 and 18, a job arriving when its preceding job ends plus "
           "its think time; 'off' replays every job at its submit time", choices=("on", "off")),
)
"""Options every run takes whatever its scheduler and allocator: the set-up pipeline
(:func:`schedbench.engine.prepare.start_run`) applies them, no factory sees them."""

SITE_FEATURES = ("limits", "freepools", "kept_cores", "maintenance")
"""The features of a site file (:mod:`schedbench.plan.site`), as capabilities name them."""
PLAN_SITE_FEATURES = frozenset(("limits", "freepools", "kept_cores"))
"""Site features that act on a plan of future starts only."""


@dataclass(frozen=True)
class Capabilities:
    """What an entry can do and needs, checked before any replay work
    (:func:`schedbench.registry.check_pair`).

    Schedulers:

    * ``plans``: it books future starts (a plan), so it honours limits, FreePools and kept
      cores, and books around maintenance windows itself;
    * ``plan_order``: when it needs the allocator's planning order (the ``plan_order``
      hook): ``"never"``, ``"on nodes"`` (when its bookings must hold nodes: some job asks
      for more than single units of one type spread freely, or the site has per-node
      windows or kept cores) or ``"always"``;
    * ``plan_order_option``: a boolean option of its own that, set false, lifts that need
      (aucsched's ``slurm_bids``: only its SLURM bids are placed in that order);
    * ``pool_only``: it runs only when every replayed job is single units of one resource
      type spread freely (a pool of units), the only jobs its plan can hold;
    * ``default_period``: its decision period (s) when a run gives none (0: every event);
    * ``site``: the site features it honours (:data:`SITE_FEATURES`);
    * ``slurm_accounts``: it reads the account shares and QOS priorities of
      ``--slurm-accounts`` (a ``sacctmgr -P`` dump; the others' accounts come from their own
      options, or none).

    Allocators: ``gives_plan_order``, whether it implements the ``plan_order`` hook.
    """

    plans: bool = False
    plan_order: str = "never"
    plan_order_option: str | None = None
    pool_only: bool = False
    default_period: int = 0
    site: frozenset[str] = frozenset(("maintenance",))
    slurm_accounts: bool = False
    gives_plan_order: bool = False

    def __post_init__(self):
        if self.plan_order not in ("never", "on nodes", "always"):
            raise ValueError(f"plan_order must be 'never', 'on nodes' or 'always', not {self.plan_order!r}")
        unknown = set(self.site) - set(SITE_FEATURES)
        if unknown:
            raise ValueError(f"unknown site feature(s) {sorted(unknown)}; known: {', '.join(SITE_FEATURES)}")


@dataclass(frozen=True)
class Entry:
    """A registry entry: name, kind, factory (``"module:attribute"`` or a callable),
    one-line description, options and capabilities."""

    name: str
    kind: Kind
    factory: str | Callable
    description: str
    options: tuple[Option, ...] = ()
    capabilities: Capabilities = Capabilities()
    plugin: str | None = field(default=None, compare=False)  # module to import in workers

    @property
    def default_period(self) -> int:
        return self.capabilities.default_period

    def load(self) -> Callable:
        if callable(self.factory):
            return self.factory
        import importlib

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
