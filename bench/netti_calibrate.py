"""Fit the continuous Eurora-like months to Netti et al.'s baselines (Tables 2-3).

For each month of :data:`eurora_like.CHRONOLOGICAL`, in that order (a month's results
depend on the backlog the earlier months of its chain leave, never on the later ones), a coordinate
descent over a fixed grid of the month's parameters (arrival rate, GPU and CPU duration
scales, burstiness, named-burst size; the burst keeps the position the paper gives it)
minimises the mean |ln(ours / paper)|
of FF's and BF's mean slowdown and mean queue size under SJF, EASY, EBF-AccaSim and PRB
(the paper's EBF figures stand beside both EBF readings): 16 targets a month.  Each
candidate replays the month's chain (``netti_study.CHAINS``, as the study runs it) up to
the month being fitted (the earlier months at their fitted values), seeded, node file
order, so the search is deterministic.  ``--seeds N`` minimises the mean loss over N
workloads (seeds from ``--seed`` on) instead of one: a month's loss moves by a factor of two
or more from one seed to the next at the same parameters, so a single seed's optimum is
partly that draw's luck.  Prints the fitted table (paste it into ``eurora_like.CALIBRATED``) and the
residuals (ours / paper − 1) of every target.

    python bench/netti_calibrate.py [--scale F] [--seed 0] [--seeds 1] [--sweeps 1] [--months M,..] [--fixed REPORT]
                                    [--grid NAME=V,..] [-o FILE]

``--grid`` replaces one parameter's candidate values (repeatable), e.g. ``--grid gpu_scale=1``
to hold it at 1 where the larger values would replay an overloaded month for too long.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from netti_study import CHAINS, PAPER, PAPER_KEY, continuous_cells, read_fitted
from schedbench import registry
from schedbench.io import machine
from schedbench.workloads import eurora_like

SCHEDULERS = ("sjf", "easy", "ebf-accasim", "prb")
ALLOCATORS = ("ff", "bf")
#: Candidate values per parameter, tried in this order; the named-burst grids are
#: multiples of the paper's figure (months without a named burst try plain sizes).
GRID = {
    "rate": (0.5, 1.0, 2.0, 3.0),
    "gpu_scale": (1.0, 3.0, 5.0),
    "cpu_scale": (0.5, 1.0, 2.0),
    "burstiness": (0.3, 1.0, 3.0),
    # x the paper's figure (or x 2,000 core hours); the small multiples because a burst
    # keeps its size when --scale shortens the month, so it weighs more in a shorter month
    "burst_core_hours": (0.0, 0.1, 0.25, 0.5, 1.0, 2.0),
}


def paper_targets(month):
    """{(scheduler, allocator, metric): paper value} for FF and BF."""
    out = {}
    for sc in SCHEDULERS:
        for ai, a in enumerate(ALLOCATORS):
            s, q = PAPER[month][PAPER_KEY.get(sc, sc)][ai]
            out[sc, a, "s"], out[sc, a, "q"] = s, q
    return out


def residuals(month_cells, month):
    """{target: ours / paper - 1} (None when ours is undefined)."""
    out = {}
    for (sc, a, metric), ref in paper_targets(month).items():
        ours = month_cells[sc, a][0 if metric == "s" else 1]
        out[sc, a, metric] = None if ours is None else ours / ref - 1
    return out


def loss(res):
    """Mean |ln(ours / paper)|; an undefined value counts as a factor of 100."""
    return sum(math.log(100) if r is None else abs(math.log(max(r + 1, 1e-9))) for r in res.values()) / len(res)


def fit(scale, seed, predictor, sweeps, log, only=eurora_like.CHRONOLOGICAL, fixed=None, grid=None, seeds=1):
    """Fit the months in ``only`` (chronological order); a month runs in its chain of
    :data:`netti_study.CHAINS` up to its last copy, the months before it in the chain at
    their fitted values (or ``fixed[month]``, or :data:`eurora_like.CALIBRATED`'s, as the
    study runs them), and a month's descent starts from ``fixed[month]`` or its CALIBRATED
    values.  ``grid``: the candidate
    values per parameter (default :data:`GRID`).  ``seeds``: a candidate's loss is the
    mean over the workloads of seeds seed .. seed + seeds - 1 (one draw's luck is not
    fitted); its residuals are the first seed's (the study's).  Returns the fitted values,
    the residuals and each month's losses seed by seed."""
    grid = GRID if grid is None else grid
    mach = machine.from_spec(eurora_like.MACHINE_SPEC)
    fitted, all_res, all_losses = dict(fixed or {}), {}, {}
    for month in sorted(only, key=eurora_like.CHRONOLOGICAL.index):
        chain = next(c for c in CHAINS if month in c)
        months = chain[: len(chain) - chain[::-1].index(month)]
        for m in months:
            if m != month and m not in fitted:
                fitted[m] = {key: v for key, v in eurora_like.month_params(m).items() if key in GRID}
        base_core = eurora_like.NAMED_BURSTS.get(month, (2000.0,))[0]
        current = dict(fitted.get(month) or {key: v for key, v in eurora_like.month_params(month).items()
                                              if key in GRID})
        seen = {}

        def evaluate(params, bound=math.inf, month=month, months=months, seen=seen):
            """(mean loss, the first seed's residuals, each seed's loss) of a candidate.
            Seeds are replayed in turn, and a candidate whose losses so far already put its
            mean at ``bound`` or above stops there (a loss is never negative, so it cannot
            end below): its mean is then a lower bound and the list is short.  The
            candidates the descent rejects are the dearest to replay (overloaded months)."""
            key = tuple(sorted(params.items()))
            each, losses = seen.setdefault(key, ([], []))
            replayed = len(losses)
            while len(losses) < seeds and sum(losses) / seeds < bound:
                table, meta = eurora_like.generate_months(
                    months, seed + len(losses), scale, calibrated=False, overrides={**fitted, month: params})
                cells = continuous_cells(table, mach, meta, predictor, SCHEDULERS, ALLOCATORS)[month]
                each.append(residuals(cells, month))
                losses.append(loss(each[-1]))
            if len(losses) > replayed:
                per_seed = f" (seeds: {', '.join(f'{x:.3f}' for x in losses)})" if seeds > 1 else ""
                cut = f", stopped after {len(losses)} of {seeds} seeds" if len(losses) < seeds else ""
                log(f"{month} candidate {len(seen)}: loss {sum(losses) / seeds:.3f}{cut}{per_seed} {params}")
            return sum(losses) / seeds, each[0], list(losses)

        best = evaluate(current)[0]
        for _ in range(sweeps):
            improved = False
            for name, values in grid.items():
                for v in values:
                    value = v * base_core if name == "burst_core_hours" else v
                    trial = {**current, name: value}
                    score = evaluate(trial, best - 1e-12)[0]
                    if score < best - 1e-12:
                        best, current, improved = score, trial, True
            log(f"{month}: loss {best:.3f} after a sweep ({len(seen)} candidates) {current}")
            if not improved:
                break
        fitted[month] = current
        all_res[month], all_losses[month] = evaluate(current)[1:]
    return {m: fitted[m] for m in only}, all_res, all_losses


def parse_grid(items):
    """GRID with the ``NAME=V1,V2,..`` items of ``--grid`` replacing their parameters' values."""
    grid = dict(GRID)
    for item in items:
        name, _, values = item.partition("=")
        name = name.strip()
        if name not in GRID:
            raise ValueError(f"--grid {item!r}: choose a parameter from {', '.join(GRID)}")
        try:
            grid[name] = tuple(float(v) for v in values.split(",") if v.strip())
        except ValueError:
            raise ValueError(f"--grid {item!r}: the values must be numbers") from None
        if not grid[name]:
            raise ValueError(f"--grid {item!r}: give at least one value")
    return grid


def report(fitted, all_res, scale, seed, predictor, seconds, grid_args=(), fixed=None, sweeps=1, seeds=1,
           losses=None):
    extra = (f" --sweeps {sweeps}" + (f" --seeds {seeds}" if seeds > 1 else "") + (f" --fixed {fixed}" if fixed else "")
             + "".join(f" --grid {g}" for g in grid_args))
    lines = [f"Fitted with `python bench/netti_calibrate.py --scale {scale:g} --seed {seed} --months {','.join(fitted)}{extra}` "
             f"(predictor {predictor}, node file order; {seconds:.0f} s).", "",
             "```python", "CALIBRATED = {"]
    for month, p in fitted.items():
        lines.append(f"    {month!r}: {{" + ", ".join(f"{k!r}: {v:g}" for k, v in p.items()) + "},")
    lines += ["}", "```", "", "Residuals, ours / paper - 1 (FF, BF; s = mean slowdown, q = mean queue size):", "",
              "| month | loss | " + " | ".join(f"{sc} {a} {m}" for sc in SCHEDULERS for a in ALLOCATORS for m in "sq") + " | within ±25 % |",
              "|---|---|" + "---|" * (4 * len(SCHEDULERS)) + "---|"]
    for month, res in all_res.items():
        cells = [("n/a" if res[sc, a, m] is None else f"{100 * res[sc, a, m]:+.0f}%")
                 for sc in SCHEDULERS for a in ALLOCATORS for m in "sq"]
        ok = sum(r is not None and abs(r) <= 0.25 for r in res.values())
        lines.append(f"| {month} | {loss(res):.2f} | " + " | ".join(cells) + f" | {ok} of {len(res)} |")
    if seeds > 1 and losses:
        lines += ["", f"The loss minimised is the mean over seeds {seed}-{seed + seeds - 1}; the residuals above are "
                  f"seed {seed}'s (the study's).  Loss seed by seed:", ""]
        for month, each in losses.items():
            lines.append(f"- {month}: " + ", ".join(f"{x:.2f}" for x in each) + f" (mean {sum(each) / len(each):.2f})")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=eurora_like.DEFAULT_SCALE,
                    help=f"month length as a fraction of the real month (default {eurora_like.DEFAULT_SCALE:g})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sweeps", type=int, default=1, help="coordinate-descent sweeps per month (default 1)")
    ap.add_argument("--seeds", type=int, default=1,
                    help="minimise the mean loss over the workloads of this many seeds from --seed (default 1)")
    default_pred = "user-profile" if "user-profile" in registry.predictor_names() else "requested"
    ap.add_argument("--predictor", default=default_pred)
    ap.add_argument("--months", default=",".join(eurora_like.CHRONOLOGICAL),
                    help="months to fit (default all four, in order)")
    ap.add_argument("--fixed", type=Path, help="an earlier report: the other months keep its fitted values, and the "
                    "months fitted start from them (months it does not list: eurora_like.CALIBRATED's)")
    ap.add_argument("--grid", action="append", default=[], metavar="NAME=V,..",
                    help="replace one parameter's candidate values (repeatable; burst_core_hours in "
                    "multiples of the paper's figure, as in GRID)")
    ap.add_argument("-o", "--output", type=Path, help="also write the report (Markdown) here")
    args = ap.parse_args(argv)
    only = tuple(m.strip() for m in args.months.split(",") if m.strip())
    if not only or any(m not in eurora_like.CHRONOLOGICAL for m in only):
        ap.error(f"--months: choose from {', '.join(eurora_like.CHRONOLOGICAL)}")
    try:
        grid = parse_grid(args.grid)
    except ValueError as exc:
        ap.error(str(exc))
    if args.seeds < 1:
        ap.error("--seeds must be at least 1")
    t0 = time.perf_counter()
    fitted, res, losses = fit(args.scale, args.seed, args.predictor, args.sweeps,
                              lambda msg: print(f"[{time.perf_counter() - t0:.0f} s] {msg}", file=sys.stderr, flush=True),
                              only, read_fitted(args.fixed) if args.fixed else None, grid, args.seeds)
    text = report(fitted, res, args.scale, args.seed, args.predictor, time.perf_counter() - t0, args.grid, args.fixed,
                  args.sweeps, args.seeds, losses)
    print(text)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
