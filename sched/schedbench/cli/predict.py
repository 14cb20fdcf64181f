"""``schedbench predict TRACE``: how well each duration predictor does on a trace, offline.

Every predictor except ``actual`` (the oracle, whose error is 0 by definition) runs
through the same kernels as a replay (:func:`schedbench.predictors.evaluate`), in the
log's own order: a job is predicted at its submission and teaches the online predictors
from its historical end (submit + wait + run; with an unknown wait, -1, end = submit +
run).  Jobs without a run time (-1) are left out.  Reported per predictor: mean and
median absolute error (s) and the share of jobs whose run was under-predicted.
"""

from __future__ import annotations

import json

from .. import predictors, registry
from ..io import load as workload_io

# The machine plays no part in a prediction; a stand-in spares Parquet tables without one.
_ANY_MACHINE = "1x(cores=1)"


def register(sub) -> None:
    p = sub.add_parser(
        "predict",
        help="evaluate the duration predictors on a trace (MAE, median error, under-predictions)",
        description="Evaluate every duration predictor but 'actual' on TRACE (an SWF log, a "
        "catalog log name, or a Parquet job table) in trace order: a job is predicted at its "
        "submission, and online predictors learn from it from its historical end on.",
    )
    p.add_argument("trace", metavar="TRACE")
    p.add_argument("--limit", type=int, metavar="N", help="evaluate only the first N jobs")
    p.add_argument("--json", action="store_true", help="print the errors as JSON")
    p.set_defaults(func=_run)


def evaluate_all(table, meta: dict | None = None) -> dict[str, dict]:
    """``{predictor: {"mae_s", "median_ae_s", "under_share"}}`` for every registered
    predictor (plug-ins included) but ``actual``."""
    out = {}
    for name in registry.predictor_names():
        if name == "actual":
            continue
        pred = predictors.evaluate(table, name, meta)
        out[name] = predictors.errors(pred, table.run)
    return out


def _run(args) -> int:
    table, _machine, meta, _parse_s = workload_io.load(args.trace, _ANY_MACHINE, args.limit)
    result = evaluate_all(table, meta)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    n_eval = int((table.run >= 0).sum())
    print(f"{meta['trace']}: {n_eval:,} jobs with a run time (of {table.n_jobs:,})")
    no_est = float((table.time_req <= 0).mean()) if table.n_jobs else 0.0
    if no_est > 0:
        print(
            f"note: {no_est:.1%} of the jobs give no estimate; 'requested' uses their run "
            "time there (an oracle)",
        )
    rows = [("predictor", "MAE (s)", "median AE (s)", "under-predicted")]
    for name, e in result.items():
        if e["mae_s"] is None:
            rows.append((name, "-", "-", "-"))
        else:
            rows.append(
                (name, f"{e['mae_s']:,.0f}", f"{e['median_ae_s']:,.0f}", f"{e['under_share']:.1%}")
            )
    widths = [max(len(r[c]) for r in rows) for c in range(4)]
    for r in rows:
        print("  ".join([r[0].ljust(widths[0])] + [r[c].rjust(widths[c]) for c in range(1, 4)]))
    base = result.get("requested", {}).get("mae_s")
    if base:
        for name, e in result.items():
            if name != "requested" and e["mae_s"] is not None:
                print(f"{name}: MAE {e['mae_s'] / base - 1:+.1%} relative to requested")
    return 0
