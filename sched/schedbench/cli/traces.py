"""``schedbench traces list|fetch|info``: the catalog of archive logs, downloads, summaries."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys

import numpy as np

from ..io import jobs, swf


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, not {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be >= 0, not {text}")
    return value


def _positive_seconds(text: str) -> float:
    value = _seconds(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be > 0")
    return value


def register(sub) -> None:
    parser = sub.add_parser("traces", help="list, download and summarise Parallel Workloads Archive logs")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    p = actions.add_parser("list", help="the catalog, marking the logs already in the cache")
    p.set_defaults(func=_list)

    p = actions.add_parser("fetch", help="download catalog logs into the cache and verify them")
    p.add_argument("names", nargs="+", metavar="NAME", help="log name from `schedbench traces list`")
    p.add_argument("--mirror", metavar="BASE_URL",
                   help="download from this base URL instead of the archive (keeps l_<folder>/<file>)")
    p.add_argument("--retries", type=_count, default=3,
                   help="extra attempts after a transient failure (default 3)")
    p.add_argument("--backoff", type=_seconds, default=1.0,
                   help="seconds before the first retry, doubling each time (default 1)")
    p.add_argument("--timeout", type=_positive_seconds, default=60.0,
                   help="network timeout in seconds (default 60)")
    p.add_argument("--force", action="store_true", help="download even if a verified copy is cached")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_fetch)

    p = actions.add_parser("info", help="header fields and a summary of an SWF log or a sacct -P dump")
    p.add_argument("log", metavar="PATH|NAME", help="an SWF file, a sacct -P dump, or the name of a cached catalog log")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--tz", default="UTC", metavar="ZONE",
                   help="the time zone a sacct dump's times are in (an IANA name; default UTC)")
    p.set_defaults(func=_info)

    p = actions.add_parser(
        "eurora", help="convert Eurora job instances (a file or a folder) to a Parquet job table"
    )
    p.add_argument("path", metavar="DIR|FILE", help="an instance file or a folder of overlapping instances")
    p.add_argument("--nodes", metavar="FILE", help="node file (default: system_configs/nodes_#64 beside the instances)")
    p.add_argument("--queues", metavar="FILE", help="queue file (default: system_configs/system_queues)")
    p.add_argument("-o", "--output", required=True, metavar="FILE.parquet")
    p.set_defaults(func=_eurora)


def _eurora(args) -> int:
    from ..io import eurora

    table, meta = eurora.read_instances(args.path, args.nodes, args.queues)
    jobs.write_parquet(table, args.output, meta)
    print(f"wrote {table.n_jobs} jobs to {args.output} (machine {meta['machine']})")
    return 0


def _list(args) -> int:
    from ..io import catalog, fetch

    cat = catalog.load()
    cache = fetch.cache_dir()
    rows = [("", "name", "jobs", "MaxProcs", "size", "period", "sha256")]
    for entry in cat.values():
        rows.append((
            "*" if fetch.is_cached(entry, cache) else "",
            entry.name,
            f"{entry.jobs:,}" if entry.jobs else "-",
            str(entry.max_procs) if entry.max_procs else "-",
            f"{entry.size / 1e6:.1f} MB" if entry.size else "-",
            entry.period or "-",
            "yes" if entry.sha256 else "-",
        ))
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    right = {2, 3, 4}
    for row in rows:
        cells = [c.rjust(w) if k in right else c.ljust(w) for k, (c, w) in enumerate(zip(row, widths, strict=True))]
        print("  ".join(cells).rstrip())
    print(f"\ncache: {cache}  (* = cached)")
    return 0


def _fetch(args) -> int:
    from ..io import catalog, fetch

    cat = catalog.load()
    entries = [cat.find(name) for name in args.names]  # all names checked before any download
    for entry in entries:
        result = fetch.fetch(
            entry,
            mirror=args.mirror,
            retries=args.retries,
            backoff=args.backoff,
            timeout=args.timeout,
            progress=not args.no_progress,
            force=args.force,
        )
        if result.downloaded:
            print(f"{entry.name}: downloaded and verified: {result.path}")
        else:
            print(f"{entry.name}: already cached and verified, nothing to do: {result.path}")
    return 0


def summarise(table: jobs.JobTable, header: swf.SWFHeader) -> dict:
    """The facts `traces info` prints: header fields, job count, out-of-order count, the SWF
    fields that are -1 throughout and the time span."""
    if not isinstance(table, jobs.JobTable) or not isinstance(header, swf.SWFHeader):
        raise TypeError("summarise takes a JobTable and an SWFHeader")
    head = {k: v for k, v in header.to_dict().items()
            if k not in ("raw", "path", "out_of_order") and v not in (None, [], {})}
    out: dict = {"path": header.path, "header": head, "jobs": table.n_jobs,
                 "out_of_order": header.out_of_order}
    out["unknown_fields"] = [name for name in jobs.SWF_FIELDS
                             if table.n_jobs and bool(np.all(getattr(table, name) == -1))]
    if table.n_jobs:
        first, last = int(table.submit.min()), int(table.submit.max())
        # End = submit + wait + run, for the jobs where both are known.
        known = (table.wait >= 0) & (table.run >= 0)
        ends = (table.submit + table.wait + table.run)[known]
        end = max(last, int(ends.max())) if ends.size else last
        span = {"first_submit": first, "last_submit": last, "last_end": end,
                "days": round((end - first) / 86400, 1)}
        if header.unix_start_time is not None:
            def utc(t: int) -> str:
                when = dt.datetime.fromtimestamp(header.unix_start_time + t, dt.UTC)
                return when.strftime("%Y-%m-%d %H:%M:%S UTC")
            span["first_submit_utc"] = utc(first)
            span["last_end_utc"] = utc(end)
        out["time_span"] = span
    return out


def _info(args) -> int:
    from ..errors import UsageError
    from ..io import fetch, sacct
    from ..io.load import is_parquet

    sacct.check_time_zone(args.tz)
    path = fetch.resolve(args.log)
    if is_parquet(path):  # read as SWF text, its bytes made a garbled 'non-numeric token' error
        raise UsageError(f"{path}: a Parquet job table; `traces info` summarises SWF logs and sacct dumps "
                         "(replay and predict read job tables)")
    if sacct.sniff(path):
        return _sacct_info(path, args)
    table, header = swf.read(path)
    summary = summarise(table, header)
    if args.json:
        json.dump(summary, sys.stdout, indent=2, default=str)
        print()
        return 0
    print(f"file: {path}")
    for attr, keyword in swf._CANONICAL.items():
        value = getattr(header, attr)
        if value is not None:
            print(f"{keyword}: {str(value).replace(chr(10), ' | ')}")
    for label, items in (("Queue", header.queues), ("Partition", header.partitions)):
        for q in items:
            print(f"{label}: {q.number} {q.name}".rstrip())
    for key, value in header.extra.items():
        print(f"{key}: {value}")
    for note in header.notes:
        print(f"Note: {note.replace(chr(10), ' | ')}")
    print(f"jobs: {summary['jobs']}")
    print(f"out-of-order submit times: {summary['out_of_order']}")
    print(f"fields -1 throughout: {', '.join(summary['unknown_fields']) or 'none'}")
    _print_span(summary)
    return 0


def _print_span(summary: dict) -> None:
    """The time-span line of `traces info` (SWF and sacct alike), when the log has one."""
    span = summary.get("time_span")
    if span:
        text = f"time span: {span['days']} days (submit {span['first_submit']} s to end {span['last_end']} s"
        if "first_submit_utc" in span:
            text += f"; {span['first_submit_utc']} to {span['last_end_utc']}"
        print(text + ")")


def summarise_sacct(table: jobs.JobTable, meta: dict, path) -> dict:
    """The facts `traces info` prints for a sacct dump (:func:`schedbench.io.sacct.read`'s
    table and meta): :func:`summarise`'s job count, unknown fields and time span, the jobs
    that never started, the partitions, QOS, accounts, users and constraints, the notices."""
    from ..io import sacct

    summary = summarise(table, swf.SWFHeader(unix_start_time=meta.get("unix_start_time"), path=str(path)))
    del summary["out_of_order"]  # the reader sorts by arrival; a dump's order is by job id
    summary.update(
        format="sacct", time_zone=meta["time_zone"],
        never_started=int(np.count_nonzero(table.status == sacct.NEVER_STARTED_STATUS)),
        partitions=list(meta["partitions"]), qos=list(meta["qos"]), accounts=len(meta["accounts"]),
        users=len(meta["users"]), constraints=meta["constraints"], notices=meta["notices"],
    )
    return summary


def _sacct_info(path, args) -> int:
    from ..io import sacct

    table, meta = sacct.read(path, args.tz)
    summary = summarise_sacct(table, meta, path)
    if args.json:
        json.dump(summary, sys.stdout, indent=2, default=str)
        print()
        return 0
    print(f"file: {path}")
    print(f"format: sacct -P dump, times read in {summary['time_zone']}")
    print(f"jobs: {summary['jobs']}")
    print(f"never started (left out of a replay as never_started): {summary['never_started']}")
    for label, key in (("partitions", "partitions"), ("QOS", "qos"), ("constraints", "constraints")):
        print(f"{label}: {', '.join(summary[key]) or 'none'}")
    print(f"accounts: {summary['accounts']}, users: {summary['users']}")
    print(f"fields -1 throughout: {', '.join(summary['unknown_fields']) or 'none'}")
    _print_span(summary)
    for line in summary["notices"]:
        print(f"notice: {line}")
    return 0
