"""Jitted schedulers, one module per family: :mod:`.inorder` (FCFS, SJF), :mod:`.easy`
(EASY backfilling), :mod:`.prb` (Netti et al.'s PRB), :mod:`.conservative`
(conservative backfilling on a RUSV plan) and :mod:`.fairshare` (multifactor priority and
Steffen's Simultaneous Fair-Share).

A scheduler is a namedtuple state class whose pass kernel implements the
:func:`schedbench.core.hooks.schedule` hook (plus the optional hooks it needs) and a
factory ``factory(setup, **options) -> JittedScheduler`` taking exactly the options declared
below; the core's replay loop (:mod:`schedbench.core.loop`) runs it.  :data:`DECLARATIONS`
is each scheduler's whole description (name, factory, options with defaults and help,
capabilities); :mod:`schedbench.registry` registers them.  It lives here, not in the
kernel modules, so that listing the registry imports no kernels.
"""

from ..declarations import Capabilities, Entry, Kind, Option, boolean

_FAIRSHARE_OPTIONS = (
    Option("priority_weights", "", "priority and sfs: weights age=A,size=S,fairshare=F (per minute queued, per "
           "unit, per unit of the fair-share factor; default age=1,size=1,fairshare=1440)", metavar="W"),
    Option("depth", 1, "priority and sfs: reservations per pass (1: EASY over the priority order)", int,
           metavar="D"),
    Option("account", "group", "priority and sfs: a job's account is its SWF group or user",
           choices=("group", "user")),
    Option("accounts", "", "priority and sfs: accounts file (TOML [accounts.ID] target = U or allocation = U*s, "
           "optional factor); default: each account's share of the trace's work", metavar="FILE.toml"),
    Option("half_life", 7 * 86400, "priority and sfs: half-life of the fair-share usage, s", int, metavar="S"),
    Option("target_factor", 2.0, "sfs: target occupancy / ideal occupancy (Steffen 4.1)", float, metavar="X"),
    Option("backfill", True, "priority and sfs: false: pass 2 stops at the first job that cannot start "
           "(strict priority)", boolean, metavar="BOOL"),
)

_PLAN_SITE = frozenset(("limits", "freepools", "kept_cores", "maintenance"))

DECLARATIONS: tuple[Entry, ...] = (
    Entry("fcfs", Kind.JITTED, "schedbench.schedulers.inorder:fcfs",
          "queue order, stop at the first job that does not fit"),
    Entry("sjf", Kind.JITTED, "schedbench.schedulers.inorder:sjf",
          "(pred, submit, id) order, stop at the first job that does not fit (as AccaSim)"),
    Entry("easy", Kind.JITTED, "schedbench.schedulers.easy:easy",
          "EASY backfilling; on heterogeneous nodes the head's reservation is node-feasible"),
    Entry("prb", Kind.JITTED, "schedbench.schedulers.prb:prb",
          "priority = wait / expected wait of the job's queue, ties by demand (Netti et al. 2.2); "
          "tries every queued job in that order, skipping those that do not fit (as the authors' AccaSim)"),
    Entry("prb-blocking", Kind.JITTED, "schedbench.schedulers.prb:prb_blocking",
          "PRB's order, but stops at the first job that does not fit (like fcfs/sjf)"),
    # On nodes its bookings are placed in the allocator's planning order (plan_order hook).
    Entry("conservative", Kind.JITTED, "schedbench.schedulers.conservative:conservative",
          "conservative backfilling on a RUSV plan: every queued job holds a booking (Keller's OpenCCS)",
          capabilities=Capabilities(plans=True, plan_order="on nodes", site=_PLAN_SITE)),
    # Its plan holds pools of units only (fairshare._pool_types refuses other jobs).
    Entry("priority", Kind.JITTED, "schedbench.schedulers.fairshare:priority",
          "linear multifactor priority (age, size, fair-share 2^-U/S) with depth-D reservations and backfill",
          _FAIRSHARE_OPTIONS, Capabilities(pool_only=True)),
    Entry("sfs", Kind.JITTED, "schedbench.schedulers.fairshare:sfs",
          "Simultaneous Fair-Share (Steffen): accounts at or below target occupancy first, then priority with "
          "depth-D reservations and backfill", _FAIRSHARE_OPTIONS, Capabilities(pool_only=True)),
)
