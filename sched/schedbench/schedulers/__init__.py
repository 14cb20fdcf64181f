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
    Entry("easy-sjbf", Kind.JITTED, "schedbench.schedulers.easy:easy_sjbf",
          "EASY whose backfill candidates are tried shortest predicted run time first, ties in queue order "
          "(SJBF, Tsafrir et al. 2007); with -p tsafrir it is their EASY++"),
    Entry("prb", Kind.JITTED, "schedbench.schedulers.prb:prb",
          "priority = wait / expected wait of the job's queue, ties by demand (Netti et al. 2.2); "
          "tries every queued job in that order, skipping those that do not fit (as the authors' AccaSim)"),
    Entry("ebf-accasim", Kind.JITTED, "schedbench.schedulers.ebf_accasim:ebf_accasim",
          "EBF as the authors' AccaSim runs it (Netti et al.'s code, not their text): the blocked job's "
          "reservation is computed once and it is retried only from then; every other queued job that fits "
          "starts (greedy backfill)"),
    Entry("prb-blocking", Kind.JITTED, "schedbench.schedulers.prb:prb_blocking",
          "PRB's order, but stops at the first job that does not fit (like fcfs/sjf)"),
    # On nodes its bookings are placed in the allocator's planning order (plan_order hook).
    Entry("conservative", Kind.JITTED, "schedbench.schedulers.conservative:conservative",
          "conservative backfilling on a RUSV plan: every queued job holds a booking (Keller's OpenCCS)",
          capabilities=Capabilities(plans=True, plan_order="on nodes", site=_PLAN_SITE)),
    # On pool workloads they plan on totals, else on nodes (fairshare's docstring).
    Entry("priority", Kind.JITTED, "schedbench.schedulers.fairshare:priority",
          "linear multifactor priority (age, size, fair-share 2^-U/S) with depth-D reservations and backfill",
          _FAIRSHARE_OPTIONS),
    Entry("sfs", Kind.JITTED, "schedbench.schedulers.fairshare:sfs",
          "Simultaneous Fair-Share (Steffen): accounts at or below target occupancy first, then priority with "
          "depth-D reservations and backfill", _FAIRSHARE_OPTIONS + (
              Option("standing", True, "sfs: pass 1 honours standing reservations: the first D jobs in priority "
                     "order that cannot start now hold theirs, and pass 1 starts nothing that delays them", boolean,
                     metavar="BOOL"),)),
)

_SLURM_OPTIONS = tuple(
    Option(name, None, f"slurm: {text} (default: slurm.conf's value, else Slurm's {default})", parse, metavar=meta)
    for name, default, text, parse, meta in (
        ("priority_type", "multifactor", "PriorityType, multifactor or basic (submission order)", str, "TYPE"),
        ("weight_age", 0, "PriorityWeightAge", float, "W"),
        ("weight_fairshare", 0, "PriorityWeightFairshare", float, "W"),
        ("weight_jobsize", 0, "PriorityWeightJobSize", float, "W"),
        ("weight_partition", 0, "PriorityWeightPartition", float, "W"),
        ("weight_qos", 0, "PriorityWeightQOS", float, "W"),
        ("max_age", 604800, "PriorityMaxAge, s", int, "S"),
        ("decay_half_life", 604800, "PriorityDecayHalfLife, s (0: no decay)", int, "S"),
        ("favor_small", "false", "PriorityFavorSmall", boolean, "BOOL"),
        ("calc_period", 300, "PriorityCalcPeriod, s", int, "S"),
        ("default_queue_depth", 100, "jobs the main scheduler considers at each event", int, "N"),
        ("bf_interval", 30, "s between backfill cycles (0: at every event, -1: none)", int, "S"),
        ("bf_max_job_test", 500, "jobs a backfill cycle tests", int, "N"),
        ("bf_window", 86400, "s ahead within which backfill reserves", int, "S"),
        ("bf_resolution", 60, "s, the backfill plan's time step", int, "S"),
        ("bf_max_job_user", 0, "jobs per user a backfill cycle tests (0: no limit)", int, "N"),
    )
)

DECLARATIONS += (
    # Its backfill plan does not see maintenance windows: no site feature is honoured.
    Entry("slurm", Kind.JITTED, "schedbench.schedulers.slurm:slurm",
          "Slurm: multifactor priority, main scheduler with partition blocking, backfill cycles every bf_interval "
          "with reservations within bf_window", _SLURM_OPTIONS, Capabilities(site=frozenset(), slurm_accounts=True)),
)
