"""``schedbench report RESULTS/ -o REPORT/``: tables and figures of a sweep."""

from __future__ import annotations

import sys


def register(sub) -> None:
    p = sub.add_parser(
        "report",
        help="summarise a sweep's results as report.md, a standalone report.html and PNG figures",
        description="Read RESULTS/runs.parquet (from `schedbench sweep`) and write REPORT/report.md, "
        "REPORT/report.html (figures embedded) and REPORT/figures/*.png; print the summary tables.",
    )
    p.add_argument("results", metavar="RESULTS")
    p.add_argument("-o", "--output", required=True, metavar="REPORT", help="report directory")
    p.add_argument("--quiet", "-q", action="store_true", help="do not print the summary tables")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from ..analysis import report

    data = report.write_report(args.results, args.output)
    if not args.quiet:
        print(report.text_summary(data))
        print(f"report: {data['paths']['html']} and {data['paths']['markdown']}", file=sys.stderr)
    return 0
