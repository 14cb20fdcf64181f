"""``schedbench replay TRACE``: replay a workload with a ``scheduler+allocator`` pair."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import importlib
import sys
from concurrent.futures import ThreadPoolExecutor

from .. import registry
from .._jit import notify_compiles
from .._startup import startup_phase
from ..analysis.run_folder import check_output_folder
from ..declarations import ENGINE_OPTIONS
from ..engine.replay import replay
from ..errors import DataError, UsageError
from ..io import load as workload_io
from ..io.sacct import check_time_zone


def register(sub) -> None:
    p = sub.add_parser(
        "replay",
        help="replay a trace or workload and write per-job Parquet, allocations, a timeline and a summary",
        description="Replay TRACE (an SWF log, a Slurm sacct -P dump, a catalog log name, or a Parquet job table) "
        "and write DIR/jobs.parquet, DIR/allocations.parquet, DIR/timeline.parquet and "
        "DIR/summary.json.",
        epilog="schedulers (-s):\n" + registry.describe(registry.SCHEDULERS)
        + "\n\nallocators (-a):\n" + registry.describe(registry.ALLOCATORS)
        + "\n\npredictors (-p):\n" + registry.describe(registry.PREDICTORS),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("trace", metavar="TRACE")
    p.add_argument(
        "--scheduler", "-s", choices=registry.scheduler_names(), default="easy", metavar="NAME",
        help="a registered scheduler (listed below; default easy)",
    )
    p.add_argument(
        "--allocator", "-a", choices=registry.allocator_names(), default="ff", metavar="NAME",
        help="a registered allocator (listed below; default ff)",
    )
    p.add_argument(
        "--machine", "-m", metavar="SPEC",
        help="spec such as '1024x(cores=8,gpus=2)', a Eurora node file or an Alea FILE.machines "
        "(default: from the SWF header or the table's metadata)",
    )
    p.add_argument(
        "--predictor", "-p", choices=registry.predictor_names(), default="requested", metavar="NAME",
        help="what the scheduler believes a job runs: a registered predictor (listed below; default %(default)s)",
    )
    p.add_argument("--limit", type=int, metavar="N", help="replay only the first N jobs")
    p.add_argument(
        "--tz", default="UTC", metavar="ZONE",
        help="the time zone a sacct dump's times are in (an IANA name such as Europe/Paris; default UTC)",
    )
    p.add_argument(
        "--option", "-O", action="append", metavar="NAME=VALUE",
        help="a scheduler or allocator option (repeatable; the options are listed below)",
    )
    p.add_argument(
        "--period", type=int, default=None, metavar="S",
        help="decide only every S seconds from the first submission (as IPSCHED's 5 s "
        "cycle) instead of at every event instant (default: 5 for ipsched and aucsched, 0 = every event "
        "for the others)",
    )
    p.add_argument(
        "--site", metavar="FILE",
        help="site policies (TOML: limits, FreePools and kept GPU-node cores act on a planning scheduler's "
        "plan, maintenance windows bind every jitted scheduler); template: traces/site-template.toml",
    )
    p.add_argument(
        "-o", "--output", required=True, metavar="DIR",
        help="a new or empty folder, or a former run's folder, which is replaced whole (a folder holding "
        "other files is refused)",
    )
    p.add_argument(
        "--slurm-accounts", metavar="FILE",
        help="account shares and QOS priorities for the slurm scheduler: the output of 'sacctmgr -P show assoc "
        "format=Account,User,Share' and/or 'sacctmgr -P show qos format=Name,Priority' (default: equal shares)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p.add_argument(
        "--compare-log", action="store_true",
        help="then set every job's replayed start against the start its log recorded "
        "(as `schedbench compare-log DIR`)",
    )
    _option_flags(p)
    p.set_defaults(func=_run)


_OPTION_DEST = "option:"  # namespace prefix of the declared options' flags


def _option_flags(p) -> None:
    """A flag per option some registered scheduler or allocator declares (``--name`` with
    dashes, its help from the declaration); each is the same as ``--option name=VALUE``.
    A plug-in option whose flag another argument already has is given with -O only."""
    group = p.add_argument_group("scheduler and allocator options (each the same as --option NAME=VALUE)")
    for option in registry.declared_options().values():
        default = ",".join(option.default) if isinstance(option.default, tuple) else option.default
        with contextlib.suppress(argparse.ArgumentError):
            group.add_argument(
                option.flag, dest=_OPTION_DEST + option.name, choices=option.choices,
                metavar=None if option.choices else (option.metavar or "VALUE"),
                # a None default is resolved by the factory, whose help says how
                help=(option.help if default is None else f"{option.help} (default {default!s})").replace("%", "%%"),
            )


def _progress(total: int, quiet: bool):
    """Feedback over started jobs (see :mod:`schedbench.engine.progress`): a bar on a terminal
    once a replay has taken 2 s, a line every 30 s on a pipe or in a log file."""
    if quiet:
        return None, None
    from ..engine.progress import Progress

    bar = Progress(total, "jobs started", "job", "replay")
    return bar, bar.update


_FREEZE_AT_EXIT = False


def _freeze_heap_at_exit() -> None:
    """At interpreter exit, move every object to gc's permanent generation: the final
    collections then skip the ~100,000 objects numba's compiler leaves behind, which cost
    about 0.4 s at the end of every command run otherwise (objects are still freed by
    reference counting; only the cycle search is skipped)."""
    global _FREEZE_AT_EXIT
    if not _FREEZE_AT_EXIT:
        atexit.register(gc.freeze)
        _FREEZE_AT_EXIT = True


def options_of(args) -> dict:
    """The scheduler and allocator options of the command line: ``--option`` items, then the
    declared options' own flags."""
    options = registry.parse_option_args(args.option)
    for dest, value in vars(args).items():
        if dest.startswith(_OPTION_DEST) and value is not None:
            options[dest[len(_OPTION_DEST):]] = value
    return options


def refuse_options_the_pair_does_not_take(args, options: dict) -> None:
    """A usage error naming the first option (as it was given: ``-O NAME=...`` or its
    flag) that neither the run's scheduler nor its allocator takes, nor the engine (every
    run's, such as ``on_overrun``): a replay would ignore it silently.  (A sweep's runs keep ignoring them: one config spans several pairs.)"""
    sched, alloc = registry.scheduler(args.scheduler), registry.allocator(args.allocator)
    taken = set(sched.option_names()) | set(alloc.option_names()) | {o.name for o in ENGINE_OPTIONS}  # every run's
    from_flags = {dest[len(_OPTION_DEST):] for dest, value in vars(args).items()
                  if dest.startswith(_OPTION_DEST) and value is not None}
    for name in options:
        if name in taken:
            continue
        flag = registry.declared_options()[name].flag
        given = flag if name in from_flags else f"-O {name}=..."
        takes = "; ".join(f"{e.name} takes {', '.join(e.option_names()) or 'no options'}" for e in (sched, alloc))
        raise UsageError(f"{given}: not an option of {sched.name}+{alloc.name} ({takes})")


def print_notices(lines) -> None:
    """What the reading guessed or left out, and what the run would do silently: one
    warning line on stderr each (also with --quiet, which silences success only)."""
    for line in lines:
        print(f"schedbench: warning: {line}", file=sys.stderr)


def eligibility_notices(table, meta: dict, machine) -> list[str]:
    """What the jobs' partitions and features leave out or ignore on this machine
    (:func:`schedbench.plan.eligibility.node_classes`; the replay compiles them again)."""
    from ..plan.eligibility import node_classes

    classes = node_classes(table, meta, machine)
    return [] if classes is None else classes.notices


def fair_share_notices(args, options: dict, table) -> list[str]:
    """:func:`schedbench.plan.accounts.notices` for a scheduler that charges jobs to
    accounts (one declaring the ``account`` option); none for the others."""
    sched = registry.scheduler(args.scheduler)
    if "account" not in sched.option_names():
        return []
    from ..plan import accounts

    resolved = sched.resolve({k.replace("-", "_"): v for k, v in options.items()})
    return accounts.notices(table, resolved["account"], resolved.get("accounts") or None)


def site_notices(site, table, machine) -> list[str]:
    """Jobs that ask for more time than any node has between its weekly maintenance
    windows: predicted to run that long, none can start until the windows stop, which the
    replay puts after every other job (weekly windows are expanded to a horizon past the
    last submission)."""
    if site is None or not site.maintenance:
        return []
    from ..plan.site import FOREVER, longest_window_gaps

    gap = int(longest_window_gaps(site, machine).max())
    if gap >= FOREVER:
        return []
    over = int((table.estimate > gap).sum())  # the requested time (else the run)
    if not over:
        return []
    return [f"{site.path}: {over:,} jobs ask for more time than any node has between its weekly maintenance "
            f"windows ({gap:,} s at most): predicted to run that long, they start only after every other job, "
            f"once the replay's weekly windows stop"]


def _run(args) -> int:
    _freeze_heap_at_exit()
    # schedbench.analysis.results brings in polars and pyarrow (0.1-0.15 s), which only the writing
    # needs: imported in a second thread while this one reads and replays the trace (the
    # gzip inflation, the parse and the replay release the GIL); an import error is
    # raised here, by result(), when the writing asks for the module.
    preload = ThreadPoolExecutor(max_workers=1, thread_name_prefix="schedbench-preload")
    results = preload.submit(importlib.import_module, "schedbench.analysis.results")
    preload.shutdown(wait=False)
    options = options_of(args)
    registry.check_option_names(options)  # an unknown name first: it names every known one
    refuse_options_the_pair_does_not_take(args, options)
    for entry in (registry.scheduler(args.scheduler), registry.allocator(args.allocator)):
        entry.resolve(options)  # a value its parser refuses fails before the trace is read and compiles start
    check_time_zone(args.tz)
    if args.site:
        from ..plan.site import load as load_site

        site = load_site(args.site)
    else:
        site = None
    if args.slurm_accounts:  # a bad file fails before the trace is read
        from ..io.sacctmgr import read_accounts

        if not registry.scheduler(args.scheduler).capabilities.slurm_accounts:  # else read and ignored
            raise UsageError(f"--slurm-accounts is read by the slurm scheduler only, not by {args.scheduler} "
                             "(priority and sfs take their accounts file as --accounts FILE.toml)")

        slurm_accounts = read_accounts(args.slurm_accounts)
    else:
        slurm_accounts = None
    check_output_folder(args.output)  # an -o that cannot be written fails now, not after the replay
    notice = contextlib.nullcontext() if args.quiet else notify_compiles(f"{args.scheduler}+{args.allocator}")
    with notice:
        with startup_phase():  # the first kernel load builds numba's typing context
            table, machine, meta, parse_s = workload_io.load(args.trace, args.machine, args.limit, tz=args.tz)
        if table.n_jobs == 0:
            raise DataError(f"{args.trace}: no jobs to replay (the file holds no job lines)")
        if slurm_accounts is not None:
            meta["slurm_accounts"] = slurm_accounts
        print_notices(meta.get("notices", ()) + eligibility_notices(table, meta, machine)
                      + fair_share_notices(args, options, table) + site_notices(site, table, machine))
        bar, update = _progress(table.n_jobs, args.quiet)
        try:
            result = replay(
                table, machine, args.scheduler, args.allocator, args.predictor, progress=update,
                meta=meta, period=args.period, options=options, site=site,
            )
        finally:
            if bar is not None:
                bar.close()
    # a reader that names partitions (sacct) gives {name: code}: kept so that compare-log
    # and readers of jobs.parquet's partition codes can name them
    named = {"partitions": meta["partitions"]} if meta.get("partitions") else {}
    summary = results.result().write_run(
        result, args.output, timings={"parse_s": parse_s}, extra={"trace": meta["trace"], **named}
    )
    if not args.quiet:
        print(format_summary(summary))
    if summary["jobs_replayed"] == 0:
        print(f"schedbench: error: {args.trace}: none of its {table.n_jobs:,} jobs could be replayed "
              f"(jobs.parquet gives each one's status)", file=sys.stderr)
        return 1
    if args.compare_log:
        from .compare_log import compare_and_write

        if not args.quiet:
            print()
        compare_and_write(args.output, args.quiet)
    return 0


def _solver_line(policy: dict) -> str:
    statuses = ", ".join(f"{k} {v:,}" for k, v in sorted(policy["statuses"].items()))
    median = policy.get("solve_s_median")
    bound = policy.get("proved_by_bound", 0)  # decision points an upper bound settled: no model solved
    job_set = policy.get("proved_by_job_set", 0)  # AUCSCHED: settled by a few jobs' small model
    proved = f", {bound:,} of them proved by a bound without a model" if bound else ""
    if job_set:
        proved += (f", {job_set:,} by a job set's small model and a bound" if bound
                   else f", {job_set:,} of them proved by a job set's small model and a bound")
    return (f"{policy['solver']}, {policy['solves']:,} solves ({statuses or 'none'}{proved})"
            + (f", median {median:.3f} s, max {policy['solve_s_max']:.3f} s" if median is not None else ""))


def _links(links: dict) -> str:
    """The job dependencies' links in words (summary.json's ``dependency_links``)."""
    return (f"{links['waiting']:,} jobs waited for a predecessor; links not honoured: {links['absent']:,} to no job "
            f"of the input, {links['not_earlier']:,} to the job itself or a later one (both arrive at their submit)")


def format_summary(summary: dict) -> str:
    m = summary["metrics"]
    t = summary["timings"]

    def num(value, fmt="{:,.1f}"):
        return "-" if value is None else fmt.format(value)

    dropped = ", ".join(f"{k[8:]} {v}" for k, v in summary["jobs_dropped"].items() if v) or "none"
    if summary.get("jobs_rejected_by_limit"):
        dropped += f"; rejected by a site limit: {summary['jobs_rejected_by_limit']:,}"
    if summary.get("jobs_never_started"):
        dropped += f"; never started in the log: {summary['jobs_never_started']:,}"
    if summary.get("jobs_no_eligible_nodes"):
        dropped += f"; no eligible node (partition, features): {summary['jobs_no_eligible_nodes']:,}"
    if summary.get("jobs_predecessor_not_run"):
        dropped += f"; predecessor left out or never ended: {summary['jobs_predecessor_not_run']:,}"
    rows = [
        ("run", summary["label"] + f" (predictor {summary['predictor']}"
         + (f", every {summary['period']} s" if summary.get("period") else "") + ")"),
        ("machine", summary["machine"]),
        ("jobs", f"{summary['jobs_input']:,} input, {summary['jobs_replayed']:,} replayed, dropped: {dropped}"),
        *([("killed at their request", f"{summary['jobs_killed']:,}")] if summary.get("on_overrun") == "kill" else []),
        *([("dependencies", _links(summary["dependency_links"]))] if summary.get("dependency_links") else []),
        ("wait mean / median / p95 / p99 / max (s)",
         " / ".join(num(m.get(k)) for k in ("wait_mean", "wait_median", "wait_p95", "wait_p99", "wait_max"))),
        ("bounded slowdown (10 s)", num(m.get("bsld_mean"), "{:,.2f}")),
        ("utilisation", num(m.get("utilisation"), "{:.3f}")),
        ("mean queue length", num(m.get("queue_mean"), "{:,.2f}")),
        ("makespan (s)", num(m.get("makespan"), "{:,.0f}")),
        *([("solver", _solver_line(summary["policy"]))] if summary.get("policy", {}).get("solves") is not None else []),
        ("parse / simulate / write (s)", f"{t.get('parse_s', 0):.3f} / {t['simulate_s']:.3f} / {t['write_s']:.3f}"),
        ("throughput (jobs/s)", num(t.get("jobs_per_s"), "{:,.0f}")),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
