"""Planning cost per job against the jobs already planned *and* against the slots (rows)
of the plan's vector (Keller §5: "the complexity of the planning process without mapping
is independent of the number of jobs in the system, since we process only RUSVs").

A RUSV has one row per interval of constant use, so the search and the booking walk rows,
not jobs; how many rows N planned jobs leave depends on the requests.  Three request
streams, each planned on the totals of a 616-node x 16-core machine (9,856 cores), all
jobs submitted at once:

* ``uniform``: 1-256 cores, 1 min - 24 h, uniform at random (the study's first stream);
* ``arrays``: job arrays as OpenCCS users submit them: arrays of 1-500 identical jobs
  (log-uniform), 1-256 cores (powers of two, small ones most often), wall times from a
  menu (15 min, 30 min, 1, 2, 4, 8, 12, 24, 48, 72 h);
* ``hpc2n``: HPC2N's own requests (cores, requested time) in log order
  (``../shared/traces/swf/HPC2N-2002-2.2-cln.swf.gz``; skipped when absent), and
  ``hpc2n-240`` the same planned on HPC2N's own 240 cores.

For each stream and N, plans the first N jobs, each at its earliest fit
(``rusv.kernel_earliest_fit`` then ``rusv.kernel_add``: what the conservative scheduler
does for an arrival), then times the planning of the next 1,000 jobs of the same stream
(5 repeats, each on a fresh copy of the plan), once with the plain kernels and once with
the slot index (``rusv.kernel_*_indexed``, built before the clock starts), alternately so
that both see the same machine load.  Prints, per stream, the slots before and after the
probe and the microseconds per job (median and fastest repeat), and writes a PNG of the
cost against jobs and against slots.

``--replays`` instead steps the conservative scheduler through whole replays of the
shared HPC2N and KTH logs (:class:`schedbench.engine.simulation.Simulation`) and reads
the plan after every pass: jobs in the plan (queued and running) and rows of its vector,
the numbers the curve is read at.  ``--parts`` times the searches alone and the bookings
alone (``--stream``, default uniform).  ``--kept [N ...]`` times planning after N planned
jobs (default 100 and 30,000) with the scan and as the conservative scheduler plans now
(the same dispatch as ``conservative.fit._pool_fit`` and ``conservative.bookings._pool_add``:
the plain kernels while the vector has no index, else the index kept by
``rusv.kernel_index_keep``, built past ``rusv.INDEX_ON_ROWS`` rows, and the indexed
kernels); then the same bookings alone, at the starts that planning found (the rest of a
job's cost is its search).

The timed kernels are compiled as the engine's are (``schedbench._jit.kernel``: no
reference counting, among its flags): with numba's defaults the slot index's views each
cost two atomic reference-count operations that the scheduler's own kernels do not pay.

Run: ``PYTHONPATH=sched .venv/bin/python bench/plan_cost_curve.py [--out PNG] [--replays] [--parts]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from schedbench._jit import kernel
from schedbench.plan import rusv

CORES = 616 * 16
SIZES = (100, 300, 1_000, 3_000, 10_000, 30_000)
PROBE = 1_000
TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces" / "swf"
HPC2N = TRACES / "HPC2N-2002-2.2-cln.swf.gz"
KTH = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
MENU = np.array([15, 30, 60, 120, 240, 480, 720, 1440, 2880, 4320], np.int64) * 60  # wall times offered (s)


@kernel
def _plan(slots, meta, sizes, lengths):
    """Book each job at its earliest fit from t = 0; returns False if the vector filled."""
    for i in range(sizes.shape[0]):
        t = rusv.kernel_earliest_fit(slots, meta, sizes[i], lengths[i], np.int64(0), rusv.INF,
                                     np.int64(0), np.int64(0), np.int64(0))
        if not rusv.kernel_add(slots, meta, t, t + lengths[i], sizes[i]):
            return False
    return True


@kernel
def _plan_indexed(slots, meta, index, sizes, lengths):
    """:func:`_plan` with a slot index kept along (the search skips blocks)."""
    for i in range(sizes.shape[0]):
        t = rusv.kernel_earliest_fit_indexed(slots, meta, index, sizes[i], lengths[i], np.int64(0), rusv.INF,
                                             np.int64(0), np.int64(0), np.int64(0))
        if not rusv.kernel_add_indexed(slots, meta, index, t, t + lengths[i], sizes[i]):
            return False
    return True


@kernel
def _indexed_fit(slots, meta, index, size, d):
    """The scheduler's search past the index's threshold (``conservative.fit._indexed_fit``,
    a call of its own there too)."""
    rusv.kernel_index_keep(slots, meta, index, np.int64(0))
    return rusv.kernel_earliest_fit_indexed(slots, meta, index, size, d, np.int64(0), rusv.INF,
                                            np.int64(0), np.int64(0), np.int64(0))


@kernel
def _plan_kept(slots, meta, index, sizes, lengths, starts):
    """:func:`_plan_indexed` as the conservative scheduler plans on a pool
    (``conservative.fit._pool_fit`` and ``conservative.bookings._pool_add``): the plain
    search inlined while the vector has no index and at most INDEX_ON_ROWS rows, else the
    index kept by ``rusv.kernel_index_keep`` and the indexed search; the indexed booking
    while there is an index.  Each start into ``starts``."""
    for i in range(sizes.shape[0]):
        if index[0, 0] == 0 and meta[rusv.M_N] <= index[rusv.X_ON, 0]:
            t = rusv.kernel_earliest_fit(slots, meta, sizes[i], lengths[i], np.int64(0), rusv.INF,
                                         np.int64(0), np.int64(0), np.int64(0))
        else:
            t = _indexed_fit(slots, meta, index, sizes[i], lengths[i])
        starts[i] = t
        if index[0, 0] > 0:
            ok = rusv.kernel_add_indexed(slots, meta, index, t, t + lengths[i], sizes[i])
        else:
            ok = rusv.kernel_add(slots, meta, t, t + lengths[i], sizes[i])
        if not ok:
            return False
    return True


@kernel
def _book_kept(slots, meta, index, sizes, lengths, starts):
    """The bookings of :func:`_plan_kept` alone, at the starts it found (the index kept
    before each, as its search would)."""
    for i in range(sizes.shape[0]):
        if index[0, 0] > 0 or meta[rusv.M_N] > index[rusv.X_ON, 0]:
            rusv.kernel_index_keep(slots, meta, index, np.int64(0))
        if index[0, 0] > 0:
            rusv.kernel_add_indexed(slots, meta, index, starts[i], starts[i] + lengths[i], sizes[i])
        else:
            rusv.kernel_add(slots, meta, starts[i], starts[i] + lengths[i], sizes[i])


@kernel
def _fits(slots, meta, index, sizes, lengths, out, indexed):
    """Each job's earliest fit on the plan as it is (nothing booked) into out."""
    for i in range(sizes.shape[0]):
        if indexed:
            out[i] = rusv.kernel_earliest_fit_indexed(slots, meta, index, sizes[i], lengths[i], np.int64(0), rusv.INF,
                                                      np.int64(0), np.int64(0), np.int64(0))
        else:
            out[i] = rusv.kernel_earliest_fit(slots, meta, sizes[i], lengths[i], np.int64(0), rusv.INF,
                                              np.int64(0), np.int64(0), np.int64(0))


@kernel
def _books(slots, meta, index, sizes, lengths, starts, indexed):
    """Book each job at the given start (the bookings alone, without the searches)."""
    for i in range(sizes.shape[0]):
        if indexed:
            rusv.kernel_add_indexed(slots, meta, index, starts[i], starts[i] + lengths[i], sizes[i])
        else:
            rusv.kernel_add(slots, meta, starts[i], starts[i] + lengths[i], sizes[i])


# -- request streams: (cores int64 (n,), wall time int64 (n,) in s) ---------------------------


def _uniform(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(1, 257, n).astype(np.int64), rng.integers(60, 86_400, n).astype(np.int64)


def _arrays(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Arrays of identical jobs; an array's size is 2^k cores with weight 1/(k+1) (one
    core most often), its wall time one of MENU, its length log-uniform in 1-500."""
    rng = np.random.default_rng(seed)
    weights = 1 / np.arange(1, 10)
    count = 2_000  # arrays of about 80 jobs on average: some 160,000 jobs, the same for every n
    length = np.exp(rng.uniform(0, np.log(500), count)).astype(np.int64).clip(1, 500)
    cores = 2 ** rng.choice(9, count, p=weights / weights.sum())
    wall = rng.choice(MENU, count)
    assert length.sum() >= n, "more jobs than the arrays hold"
    return np.repeat(cores, length)[:n].astype(np.int64), np.repeat(wall, length)[:n].astype(np.int64)


_HPC2N_REQUESTS: tuple[np.ndarray, np.ndarray] | None = None


def _hpc2n(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The log's requests in order (``seed`` ignored: there is one log)."""
    global _HPC2N_REQUESTS
    if _HPC2N_REQUESTS is None:
        from schedbench.io import swf

        table, _ = swf.read(HPC2N)
        cores, wall = table.units * table.unit_cores, table.estimate
        keep = (cores > 0) & (wall > 0)
        _HPC2N_REQUESTS = cores[keep].astype(np.int64), wall[keep].astype(np.int64)
    cores, wall = _HPC2N_REQUESTS
    return cores[:n], wall[:n]


# name: (the stream, the cores of the machine it is planned on)
STREAMS = {"uniform": (_uniform, CORES), "arrays": (_arrays, CORES), "hpc2n": (_hpc2n, CORES),
           "hpc2n-240": (_hpc2n, 240)}


def _streams() -> dict:
    return {k: v for k, v in STREAMS.items() if not k.startswith("hpc2n") or HPC2N.exists()}


def _planned(stream, n: int, seed: int = 0):
    """The plan of the stream's first n jobs and the next PROBE jobs (sizes, lengths)."""
    stream, cores = stream
    sizes, lengths = stream(n + PROBE, seed)
    r = rusv.new(cores, cap=4 * (n + PROBE) + 64)
    assert _plan(r.slots, r.meta, sizes[:n], lengths[:n])
    return r, sizes[n:], lengths[n:]


def parts(stream, n: int) -> tuple[float, ...]:
    """The two halves of planning, fastest of 5, us per job: the searches alone on the
    plan of n jobs (plain, indexed), then the bookings alone at the starts planning
    would give them (plain, indexed)."""
    r, psizes, plengths = _planned(stream, n)
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


def measure(stream, n: int) -> tuple[int, int, float, float, float, float]:
    """(slots in the plan of n jobs, slots after the probe, us per job planned without
    the index: median and fastest of the repeats, then the same with it)."""
    r, psizes, plengths = _planned(stream, n)
    plain, indexed = [], []
    after = 0
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
        after = int(m[rusv.M_N])
    us = [f(x) / PROBE * 1e6 for x in (plain, indexed) for f in (statistics.median, min)]
    return int(r.meta[rusv.M_N]), after, *us


def kept(stream, n: int, rounds: int = 5) -> tuple[int, float, float, float, float, float, float]:
    """(slots in the plan of n jobs, us per job planned with the scan (the scheduler until
    issue 27) and as the scheduler plans now (:func:`_plan_kept`), then its bookings alone
    at the starts it found (:func:`_book_kept`): median and fastest of ``rounds``,
    alternated)."""
    r, psizes, plengths = _planned(stream, n)
    plain, now, books = [], [], []
    starts = np.empty(PROBE, np.int64)
    for _ in range(rounds):
        s, m = r.slots.copy(), r.meta.copy()
        t0 = time.perf_counter()
        assert _plan(s, m, psizes, plengths)
        plain.append(time.perf_counter() - t0)
        s2, m2 = r.slots.copy(), r.meta.copy()
        index = rusv.kept_index(s2.shape[0])
        rusv.kernel_index_keep(s2, m2, index, np.int64(0))  # as the scheduler's first search would
        t0 = time.perf_counter()
        assert _plan_kept(s2, m2, index, psizes, plengths, starts)
        now.append(time.perf_counter() - t0)
        assert np.array_equal(s[: m[rusv.M_N]], s2[: m2[rusv.M_N]])
        s3, m3 = r.slots.copy(), r.meta.copy()
        index = rusv.kept_index(s3.shape[0])
        rusv.kernel_index_keep(s3, m3, index, np.int64(0))
        t0 = time.perf_counter()
        _book_kept(s3, m3, index, psizes, plengths, starts)
        books.append(time.perf_counter() - t0)
        assert np.array_equal(s[: m[rusv.M_N]], s3[: m3[rusv.M_N]])
    us = [f(x) / PROBE * 1e6 for x in (plain, now, books) for f in (statistics.median, min)]
    return int(r.meta[rusv.M_N]), *us


def _slope(x, y) -> float:
    """The least-squares slope of log y against log x: 0 flat, 1 proportional."""
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def curves(out: str) -> None:
    for stream, cores in _streams().values():  # compile (and read the log) before timing
        r = rusv.new(cores, cap=64)
        _plan(r.slots, r.meta, *stream(10, 1))
        r = rusv.new(cores, cap=64)
        _plan_indexed(r.slots, r.meta, rusv.build_index(r), *stream(10, 1))
    rows = {name: [(n, *measure(stream, n)) for n in SIZES] for name, stream in _streams().items()}
    for name, table in rows.items():
        print(f"\nstream {name}{'':>{max(1, 27 - len(name))}} {'us/job scan':>19} {'us/job index':>19}")
        print(f"{'planned jobs':>12} {'slots':>8} {'after':>8} {'median':>9} {'min':>9} {'median':>9} {'min':>9}")
        for n, s, a, *us in table:
            print(f"{n:>12,} {s:>8,} {a:>8,}" + "".join(f" {x:>9.2f}" for x in us))
        n, s = [t[0] for t in table], [(t[1] + t[2]) / 2 for t in table]  # the slots during the probe
        scan = [t[4] for t in table]  # the fastest repeat: the least disturbed by the load
        print(f"log-log slope of the scan's us/job (min): against jobs {_slope(n, scan):.2f}, "
              f"against slots {_slope(s, scan) if len(set(s)) > 1 else float('nan'):.2f}; "
              f"slots/jobs at {n[-1]:,}: {table[-1][1] / n[-1]:.4f}")
    every = [t for table in rows.values() for t in table]
    cost = np.array([t[4] for t in every])
    for axis, x in (("jobs", [t[0] for t in every]), ("slots", [(t[1] + t[2]) / 2 for t in every])):
        fit = np.polyfit(np.log(x), np.log(cost), 1)
        spread = np.exp(np.abs(np.log(cost) - np.polyval(fit, np.log(x))).max())
        print(f"all streams, the scan's us/job (min) against {axis}: log-log slope {fit[0]:.2f}, "
              f"every point within x{spread:.1f} of the fitted line")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    for name, table in rows.items():
        for ax, x in zip(axes, ([t[0] for t in table], [(t[1] + t[2]) / 2 for t in table]), strict=True):
            ax.loglog(x, [t[4] for t in table], "o-", label=f"{name}, scan")
            ax.loglog(x, [t[6] for t in table], "s--", label=f"{name}, index")
    axes[0].set_xlabel("jobs already planned")
    axes[1].set_xlabel("slots (rows) in the plan's vector during the probe (mean)")
    axes[0].set_ylabel("planning cost per job (µs, fastest of 5)")
    axes[1].legend(fontsize=7)
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle("Earliest fit + booking on a RUSV (9,856 cores; hpc2n-240: 240)", fontsize=10)
    fig.tight_layout()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    print(f"figure: {out}")


def replay_slots(path: Path) -> None:
    """Step conservative (first fit, requested estimates) through the whole log and print
    how many jobs and slots its plan holds after the passes."""
    from schedbench.core.state import C_QN, C_RN
    from schedbench.engine.simulation import Simulation
    from schedbench.io import machine, swf

    table, header = swf.read(path)
    mach = machine.from_swf_header(header.max_procs, header.max_nodes, int(table.units.max()))
    sim = Simulation(table, mach, scheduler="conservative", allocator="ff")
    jobs, slots = [], []
    t0 = time.perf_counter()
    while sim.step() is not None:
        jobs.append(int(sim.core.scal[C_QN] + sim.core.scal[C_RN]))
        slots.append(int(sim.sched.meta[:, rusv.M_N].max()))  # the cores' vector: SWF jobs are pool jobs
    wall = time.perf_counter() - t0
    jobs_a, slots_a = np.array(jobs), np.array(slots)
    busy = jobs_a >= 10
    ratio = slots_a[busy] / jobs_a[busy]
    top = int(np.argmax(jobs_a))
    print(f"\n{path.name}: {table.n_jobs:,} jobs, {len(jobs):,} passes stepped in {wall:.1f} s")
    print(f"  jobs in the plan: median {np.median(jobs_a):.0f}, 99th percentile {np.percentile(jobs_a, 99):.0f}, "
          f"most {jobs_a[top]:,} (slots then {slots_a[top]:,})")
    print(f"  slots in the plan: median {np.median(slots_a):.0f}, 99th percentile {np.percentile(slots_a, 99):.0f}, "
          f"most {slots_a.max():,}")
    print(f"  slots/jobs over passes with >= 10 jobs planned ({busy.sum():,}): median {np.median(ratio):.2f}, "
          f"10-90th percentile {np.percentile(ratio, 10):.2f}-{np.percentile(ratio, 90):.2f}")
    for lo, hi in ((10, 100), (100, 300), (300, 1_000), (1_000, 3_000), (3_000, 10**9)):
        sel = (jobs_a >= lo) & (jobs_a < hi)
        if sel.any():
            print(f"  {lo:>5,}-{min(hi, jobs_a.max()):>6,} jobs: {sel.sum():>7,} passes, slots median "
                  f"{np.median(slots_a[sel]):>6.0f}, slots/jobs median {np.median(slots_a[sel] / jobs_a[sel]):.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench-report/plan_cost_curve.png")
    ap.add_argument("--parts", action="store_true", help="time the searches and the bookings apart instead")
    ap.add_argument("--stream", choices=list(STREAMS), default="uniform", help="the stream --parts plans")
    ap.add_argument("--replays", action="store_true",
                    help="the plan's jobs and slots during conservative replays of the shared HPC2N and KTH logs")
    ap.add_argument("--kept", type=int, nargs="*", metavar="N",
                    help="time planning after N planned jobs (default 100 and 30,000) with the scan and as the "
                         "conservative scheduler plans now (index kept past INDEX_ON_ROWS rows); --stream")
    args = ap.parse_args()
    if args.kept is not None:
        stream = _streams()[args.stream]
        r = rusv.new(stream[1], cap=64)
        _plan_kept(r.slots, r.meta, rusv.kept_index(64), *stream[0](10, 1), np.empty(10, np.int64))  # compile
        _book_kept(r.slots, r.meta, rusv.kept_index(64), *stream[0](10, 1), np.zeros(10, np.int64))
        print(f"stream {args.stream}: planned jobs, slots, us/job scan median/min, as the scheduler median/min, "
              "its bookings alone median/min")
        for n in args.kept or (100, 30_000):
            slots, *us = kept(stream, n)
            print(f"{n:>8,} {slots:>8,}" + "".join(f" {x:>8.2f}" for x in us))
        return
    if args.replays:
        for path in (HPC2N, KTH):
            if path.exists():
                replay_slots(path)
            else:
                print(f"{path}: absent, skipped")
        return
    if args.parts:
        stream = _streams()[args.stream]
        print(f"stream {args.stream}")
        print(f"{'planned jobs':>12} {'search plain':>13} {'indexed':>8} {'book plain':>11} {'indexed':>8}  (us/job, min of 5)")
        for n in SIZES:
            print(f"{n:>12,}" + "".join(f" {x:>{w}.2f}" for x, w in zip(parts(stream, n), (13, 8, 11, 8), strict=True)))
        return
    curves(args.out)


if __name__ == "__main__":
    main()
