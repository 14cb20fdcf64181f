"""``schedbench compare-log DIR``: how close a replay came to the starts its log recorded."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "compare-log",
        help="set a replay's job starts against the starts its input log recorded (sacct Start, SWF wait)",
        description="For every job of DIR (a `schedbench replay -o DIR` folder) whose input recorded a start, "
        "delta = replayed start - logged start.  Prints, for the whole run and per partition, the jobs "
        "compared, the median and p90 of |delta|, the share within 60 s, the mean delta, and the logged "
        "and replayed mean wait of the compared jobs; the jobs without a logged start or not replayed are "
        "counted.  Writes DIR/log_compare.parquet (per job) and DIR/log_compare_summary.parquet.",
    )
    p.add_argument("run", metavar="DIR", help="a replay output folder")
    p.add_argument("--quiet", "-q", action="store_true", help="write the files, print nothing")
    p.set_defaults(func=_run)


def compare_and_write(run, quiet: bool = False) -> None:
    """Compare the run folder ``run`` with its log, write the two files, print the table."""
    from ..analysis import log_compare

    frame, table, summary = log_compare.compare(run)
    log_compare.write(run, frame, table)
    if not quiet:
        print(log_compare.format_table(run, table, summary), end="")


def _run(args) -> int:
    compare_and_write(args.run, args.quiet)
    return 0
