"""``schedbench gantt DIR [--from T --to T] [--colour user|account|job|decision] [--max-rectangles N]
-o FILE.png``."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "gantt",
        help="draw a replay's nodes x time chart from its allocations (one rectangle per job and node block)",
        description="Read DIR/jobs.parquet and DIR/allocations.parquet (from `schedbench replay -o DIR`) and "
        "draw nodes x time: every job that ran in [--from, --to) as rectangles over its blocks of "
        "consecutive nodes, coloured by user, account (SWF group), job or scheduler decision.",
    )
    p.add_argument("run", metavar="DIR", help="a replay output folder")
    p.add_argument("--from", dest="t_from", type=_time, metavar="T", help="start of the window, s (default: first start)")
    p.add_argument("--to", dest="t_to", type=_time, metavar="T", help="end of the window, s (default: last end)")
    p.add_argument("--colour", choices=("user", "account", "job", "decision"), default="user",
                   help="colour jobs by user, account (SWF group), job, or decision: in submit order or jumped "
                   "ahead of an earlier job (default user)")
    p.add_argument("--max-rectangles", type=_positive, default=None, metavar="N",
                   help="refuse to draw more rectangles than this, with a hint of a window that holds fewer "
                   "(default 20,000: about what the figure's 1,100 pixels across can show)")
    p.add_argument("-o", "--output", required=True, metavar="FILE.png")
    p.set_defaults(func=_run)


def _time(text: str) -> int:
    """A time in s, within a job table's values (past int64, polars' filter raised OverflowError)."""
    import argparse

    from ..declarations import MAX_INT

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of seconds, not {text!r}") from None
    if not -MAX_INT <= value <= MAX_INT:
        raise argparse.ArgumentTypeError(f"{text}: out of range (at most {MAX_INT:,} either way)")
    return value


def _positive(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, not {text!r}")
    return value


def _run(args) -> int:
    from ..analysis import views

    limit = views.MAX_RECTANGLES if args.max_rectangles is None else args.max_rectangles
    n = views.gantt(args.run, args.output, args.t_from, args.t_to, args.colour, max_rectangles=limit)
    print(f"gantt: {n:,} jobs drawn into {args.output}")
    return 0
