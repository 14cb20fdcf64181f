"""Planning cost per job against the number of jobs already planned (Keller §5: "the
complexity of the planning process without mapping is independent of the number of jobs
in the system, since we process only RUSVs").

Plans N random jobs (1-256 cores, 1 min - 24 h, all submitted at once) on the totals of a
616-node x 16-core machine, each at its earliest fit (``rusv.kernel_earliest_fit`` then
``rusv.kernel_add``: what the conservative scheduler does for an arrival), then times the
planning of 1,000 more jobs (5 repeats, each on a fresh copy of the plan), once with the
plain kernels and once with a slot index (``rusv.kernel_earliest_fit_indexed`` and
``rusv.kernel_add_indexed``; the index built before the clock starts), alternately so
that both see the same machine load.  Prints a table (planned jobs, slots in the vector,
microseconds per job: the median and the fastest repeat of each) and writes a PNG.

Run: ``.venv/bin/python bench/plan_cost_curve.py [--out bench-report/plan_cost_curve.png]``;
``--parts`` times the searches alone and the bookings alone instead (where the cost goes).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numba
import numpy as np

from schedbench.plan import rusv

CORES = 616 * 16
SIZES = (100, 300, 1_000, 3_000, 10_000, 30_000)
PROBE = 1_000


@numba.njit(cache=True)
def _plan(slots, meta, sizes, lengths):
    """Book each job at its earliest fit from t = 0; returns False if the vector filled."""
    for i in range(sizes.shape[0]):
        t = rusv.kernel_earliest_fit(slots, meta, sizes[i], lengths[i], np.int64(0), rusv.INF,
                                     np.int64(0), np.int64(0), np.int64(0))
        if not rusv.kernel_add(slots, meta, t, t + lengths[i], sizes[i]):
            return False
    return True


@numba.njit(cache=True)
def _plan_indexed(slots, meta, index, sizes, lengths):
    """:func:`_plan` with a slot index kept along (the search skips blocks)."""
    for i in range(sizes.shape[0]):
        t = rusv.kernel_earliest_fit_indexed(slots, meta, index, sizes[i], lengths[i], np.int64(0), rusv.INF,
                                             np.int64(0), np.int64(0), np.int64(0))
        if not rusv.kernel_add_indexed(slots, meta, index, t, t + lengths[i], sizes[i]):
            return False
    return True


@numba.njit(cache=True)
def _fits(slots, meta, index, sizes, lengths, out, indexed):
    """Each job's earliest fit on the plan as it is (nothing booked) into out."""
    for i in range(sizes.shape[0]):
        if indexed:
            out[i] = rusv.kernel_earliest_fit_indexed(slots, meta, index, sizes[i], lengths[i], np.int64(0), rusv.INF,
                                                      np.int64(0), np.int64(0), np.int64(0))
        else:
            out[i] = rusv.kernel_earliest_fit(slots, meta, sizes[i], lengths[i], np.int64(0), rusv.INF,
                                              np.int64(0), np.int64(0), np.int64(0))


@numba.njit(cache=True)
def _books(slots, meta, index, sizes, lengths, starts, indexed):
    """Book each job at the given start (the bookings alone, without the searches)."""
    for i in range(sizes.shape[0]):
        if indexed:
            rusv.kernel_add_indexed(slots, meta, index, starts[i], starts[i] + lengths[i], sizes[i])
        else:
            rusv.kernel_add(slots, meta, starts[i], starts[i] + lengths[i], sizes[i])


def parts(n: int, seed: int = 0) -> tuple[float, float, float, float]:
    """The two halves of planning, fastest of 5, us per job: the searches alone on the
    plan of n jobs (plain, indexed), then the bookings alone at the starts planning
    would give them (plain, indexed)."""
    rng = np.random.default_rng(seed)
    r = rusv.new(CORES, cap=4 * (n + PROBE) + 64)
    assert _plan(r.slots, r.meta, *_jobs(n, rng))
    psizes, plengths = _jobs(PROBE, rng)
    starts = np.empty(PROBE, np.int64)
    s, m = r.slots.copy(), r.meta.copy()
    for i in range(PROBE):  # the starts of planning them one after the other
        starts[i] = rusv.kernel_earliest_fit(s, m, psizes[i], plengths[i], np.int64(0), rusv.INF,
                                             np.int64(0), np.int64(0), np.int64(0))
        rusv.kernel_add(s, m, starts[i], starts[i] + plengths[i], psizes[i])
    best = [np.inf] * 4
    out = np.empty(PROBE, np.int64)
    for _ in range(5):
        for k, (step, indexed) in enumerate([(_fits, False), (_fits, True), (_books, False), (_books, True)]):
            s, m = r.slots.copy(), r.meta.copy()
            index = rusv.build_index(rusv.Rusv(s, m))
            arg = out if step is _fits else starts
            t0 = time.perf_counter()
            step(s, m, index, psizes, plengths, arg, indexed)
            best[k] = min(best[k], time.perf_counter() - t0)
    return tuple(b / PROBE * 1e6 for b in best)


def _jobs(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    sizes = rng.integers(1, 257, n).astype(np.int64)
    lengths = rng.integers(60, 86_400, n).astype(np.int64)
    return sizes, lengths


def measure(n: int, seed: int = 0) -> tuple[int, float, float, float, float]:
    """(slots in the plan of n jobs, us per job planned without the index: median and
    fastest of the repeats, then the same with it)."""
    rng = np.random.default_rng(seed)
    r = rusv.new(CORES, cap=4 * (n + PROBE) + 64)
    sizes, lengths = _jobs(n, rng)
    assert _plan(r.slots, r.meta, sizes, lengths)
    slots_used = int(r.meta[rusv.M_N])
    psizes, plengths = _jobs(PROBE, rng)
    plain, indexed = [], []
    for _ in range(5):  # alternate the two, so that both see the same machine load
        s, m = r.slots.copy(), r.meta.copy()
        t0 = time.perf_counter()
        assert _plan(s, m, psizes, plengths)
        plain.append(time.perf_counter() - t0)
        s2, m2 = r.slots.copy(), r.meta.copy()
        index = rusv.build_index(rusv.Rusv(s2, m2))  # built before timing, as a scheduler keeps one
        t0 = time.perf_counter()
        assert _plan_indexed(s2, m2, index, psizes, plengths)
        indexed.append(time.perf_counter() - t0)
        assert np.array_equal(s[: m[rusv.M_N]], s2[: m2[rusv.M_N]])  # the same plan
    us = [f(x) / PROBE * 1e6 for x in (plain, indexed) for f in (statistics.median, min)]
    return slots_used, *us


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench-report/plan_cost_curve.png")
    ap.add_argument("--parts", action="store_true", help="time the searches and the bookings apart instead")
    args = ap.parse_args()
    if args.parts:
        print(f"{'planned jobs':>12} {'search plain':>13} {'indexed':>8} {'book plain':>11} {'indexed':>8}  (us/job, min of 5)")
        for n in SIZES:
            print(f"{n:>12,}" + "".join(f" {x:>{w}.2f}" for x, w in zip(parts(n), (13, 8, 11, 8), strict=True)))
        return
    r = rusv.new(CORES, cap=64)
    _plan(r.slots, r.meta, *_jobs(10, np.random.default_rng(1)))  # compile before timing
    r = rusv.new(CORES, cap=64)
    _plan_indexed(r.slots, r.meta, rusv.build_index(r), *_jobs(10, np.random.default_rng(1)))
    rows = [(n, *measure(n)) for n in SIZES]
    print(f"{'':>21} {'us/job plain':>19} {'us/job indexed':>19}")
    print(f"{'planned jobs':>12} {'slots':>8} {'median':>9} {'min':>9} {'median':>9} {'min':>9}")
    for n, s, *us in rows:
        print(f"{n:>12,} {s:>8,}" + "".join(f" {x:>9.2f}" for x in us))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.loglog([r[0] for r in rows], [r[2] for r in rows], "o-", label="scan from now (median)")
    ax.loglog([r[0] for r in rows], [r[4] for r in rows], "s-", label="slot index (median)")
    ax.legend()
    ax.set_xlabel("jobs already planned")
    ax.set_ylabel("planning cost per job (µs)")
    ax.set_title("Earliest fit + booking on a RUSV (616 x 16 cores)")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print(f"figure: {args.out}")


if __name__ == "__main__":
    main()
