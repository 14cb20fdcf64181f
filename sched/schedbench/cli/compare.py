"""``schedbench compare DIR DIR... [-o WAITS.png]``: replay output folders side by side."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "compare",
        help="compare replay output folders: a table of their summary metrics (best marked) and wait CDFs",
        description="Print one Markdown table of the headline metrics of each folder's summary.json "
        "(from `schedbench replay -o DIR`), the best value of each row in bold; with -o, also draw "
        "the folders' wait CDFs overlaid into a PNG file.",
    )
    p.add_argument("runs", nargs="+", metavar="DIR", help="replay output folders")
    p.add_argument("-o", "--output", metavar="WAITS.png", help="write the overlaid wait CDFs here")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from ..analysis import views

    if args.output:
        views.figure_format(args.output)  # a name it cannot write fails before the table is printed
    print(views.compare(args.runs), end="")
    if args.output:
        views.wait_cdfs(args.runs, args.output)
    return 0
