"""Where numba's compile time goes: per kernel, per scheduler x allocator x mode, and how
often one function is compiled again under another specialisation.

Every measurement starts from an empty numba cache: each child process gets a fresh
``NUMBA_CACHE_DIR`` (``schedbench._jit.cache_root``), so nothing is loaded from disk and
every kernel a run needs is compiled in that process.  numba announces each compile with
a ``numba:compile`` event (:mod:`numba.core.event`) carrying the dispatcher and the
argument types; compiles nest (typing a kernel compiles the kernels it calls), so a
kernel's *own* time is its event's time minus that of the compiles nested in it, and the
own times add up to the process's compile time.

One child process per (scheduler, mode) replays the allocators one after the other in
one process: the first pair's figure is what that scheduler costs cold (shared kernels
included), each later pair's is what one more allocator adds beside it.  Modes: ``pool``
(KTH-SP2's first jobs: every job is a number of cores spread freely, schedulers plan on
the machine's totals) and ``nodes`` (an Eurora-like workload of CPU, MIC and GPU jobs on
Eurora's heterogeneous nodes: placements are per node).

    python bench/compile_cost.py                          # everything, 2 rounds, markdown on stdout
    python bench/compile_cost.py --rounds 1 -s easy -a ff   # one scheduler, one allocator
    python bench/compile_cost.py --json out.json          # also keep the raw figures
    python bench/compile_cost.py --replay-kth 3           # cold and warm `schedbench replay KTH -s easy -a ff`
    python bench/compile_cost.py --tests tests/allocators # compile seconds per test, cold

The machine's load average is printed beside the figures: on a shared machine give the
ranges, not one round.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from numba.core import event

REPO = Path(__file__).resolve().parent.parent
SCHED = REPO / "sched"
KTH = os.environ.get("SCHEDBENCH_KTH", "/work/shared/traces/swf/KTH-SP2-1996-2.1-cln.swf.gz")
POOL_JOBS = 400  # KTH jobs replayed in pool mode: enough to take the loop's rare paths, seconds to run
NODES_JOBS = 400  # Eurora-like jobs in nodes mode
ALLOCATORS = ["ff", "bf", "balanced", "weighted", "priority-weighted"]


# --------------------------------------------------------------------------- in the child


def _kernel_name(dispatcher) -> str:
    """module.qualname of the Python function a dispatcher compiles (a scheduler's replay
    loop is named after its state class by schedbench.core.loop.loop_for)."""
    f = getattr(dispatcher, "py_func", None)
    if f is None:
        return repr(dispatcher)
    return f"{f.__module__}.{f.__qualname__}"


def _kernel_source(dispatcher) -> str:
    """file:line of the function's code: the same machine code's source, whatever the
    dispatcher (the replay loop is one code object under one dispatcher per class)."""
    f = getattr(dispatcher, "py_func", None)
    code = getattr(f, "__code__", None)
    if code is None:
        return "?"
    path = Path(code.co_filename)
    try:
        path = path.resolve().relative_to(SCHED)
    except ValueError:
        pass
    return f"{path.as_posix()}:{code.co_firstlineno}"


def _params(dispatcher) -> list[str]:
    try:
        return list(inspect.signature(dispatcher.py_func).parameters)
    except (AttributeError, TypeError, ValueError):
        return []


class _Recorder(event.Listener):
    """numba:compile listener: one record per compile with its inclusive and own wall and
    CPU seconds (own: minus the compiles nested in it), kernel, source, dispatcher and
    signature.  CPU seconds (this thread's) hardly depend on the machine's load."""

    def __init__(self):
        self.records: list[dict] = []
        self.stack: list[list] = []  # [wall start, cpu start, nested wall, nested cpu]
        self.tag = ""

    def on_start(self, ev):
        self.stack.append([time.perf_counter(), time.thread_time(), 0.0, 0.0])

    def on_end(self, ev):
        wall0, cpu0, nested_wall, nested_cpu = self.stack.pop()
        wall, cpu = time.perf_counter() - wall0, time.thread_time() - cpu0
        if self.stack:
            self.stack[-1][2] += wall
            self.stack[-1][3] += cpu
        disp = ev.data["dispatcher"]
        self.records.append(dict(
            kernel=_kernel_name(disp),
            source=_kernel_source(disp),
            dispatcher=id(disp),
            args=[str(a) for a in ev.data["args"]],
            params=_params(disp),
            signature=", ".join(str(a) for a in ev.data["args"]),
            wall_s=wall,
            own_wall_s=wall - nested_wall,
            own_s=cpu - nested_cpu,
            depth=len(self.stack),
            tag=self.tag,
        ))


def _inputs(mode: str):
    """(table, machine, meta) of the mode's workload."""
    import numpy as np

    if mode == "pool":
        from schedbench.io.load import load

        table, machine, meta, _ = load(KTH, limit=POOL_JOBS)
        return table, machine, meta
    from schedbench.io.machine import from_spec
    from schedbench.workloads import eurora_like

    table, meta = eurora_like.generate(NODES_JOBS, np.random.default_rng(1), load=0.9)
    return table, from_spec(eurora_like.MACHINE_SPEC), meta


def child(args) -> None:
    """Run the pairs in this process (fresh cache set by the parent) and write JSON."""
    t_import = time.perf_counter()
    recorder = _Recorder()
    event.register("numba:compile", recorder)
    from schedbench import registry
    from schedbench.engine.replay import replay

    import_s = time.perf_counter() - t_import
    recorder.tag = "(inputs)"
    t0 = time.perf_counter()
    table, machine, meta = _inputs(args.mode)
    pairs = []
    for pair in args.pairs:
        sched, alloc = pair.split("+")
        recorder.tag = pair
        t = time.perf_counter()
        try:
            replay(table, machine, sched, alloc, meta=meta)
            outcome = "ok"
        except registry.Impossible as e:
            outcome = f"impossible: {e}"
        pairs.append(dict(pair=pair, wall_s=time.perf_counter() - t, outcome=outcome))
    out = dict(mode=args.mode, import_s=import_s, run_s=time.perf_counter() - t0,
               pairs=pairs, records=recorder.records)
    Path(args.out).write_text(json.dumps(out))


# --------------------------------------------------------------------------- in the parent


def _env(cache: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SCHED), env.get("PYTHONPATH")]))
    return env


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def run_child(mode: str, pairs: list[str], tmp: Path) -> dict:
    cache = tempfile.mkdtemp(prefix="numba-cold-", dir=tmp)
    out = Path(cache) / "result.json"
    cmd = [sys.executable, __file__, "_child", "--mode", mode, "--out", str(out), *pairs]
    t = time.perf_counter()
    subprocess.run(cmd, env=_env(cache), check=True)
    result = json.loads(out.read_text())
    result["process_s"] = time.perf_counter() - t
    result["load"] = _loadavg()
    shutil.rmtree(cache, ignore_errors=True)
    return result


def _jitted_schedulers() -> list[str]:
    sys.path.insert(0, str(SCHED))
    from schedbench import registry

    return [n for n in registry.scheduler_names() if registry.scheduler(n).kind is not registry.Kind.PYTHON]


def _rng(values) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    lo, hi = min(values), max(values)
    return f"{lo:.1f}" if hi - lo < 0.05 else f"{lo:.1f}–{hi:.1f}"


def _med(values) -> float:
    return statistics.median(values) if values else 0.0


def report(rounds: list[list[dict]], top: int) -> str:
    """Markdown tables from the children's results: ``rounds[r]`` lists one result per
    (scheduler, mode) child."""
    lines = []
    # per pair and mode: seconds compiled while that pair ran, per round
    pair_s: dict[tuple, list] = defaultdict(list)
    pair_n: dict[tuple, list] = defaultdict(list)
    outcome: dict[tuple, str] = {}
    first_pair: set[tuple] = set()
    child_total: dict[tuple, list] = defaultdict(list)
    child_wall: dict[tuple, list] = defaultdict(list)
    for results in rounds:
        for res in results:
            own = defaultdict(float)
            count = defaultdict(int)
            for r in res["records"]:
                own[r["tag"]] += r["own_s"]
                count[r["tag"]] += 1
            for i, p in enumerate(res["pairs"]):
                key = (p["pair"], res["mode"])
                if i == 0:
                    first_pair.add(key)
                outcome[key] = p["outcome"]
                if p["outcome"] == "ok":
                    pair_s[key].append(own[p["pair"]])
                    pair_n[key].append(count[p["pair"]])
            sched = res["pairs"][0]["pair"].split("+")[0]
            child_total[(sched, res["mode"])].append(sum(own.values()))
            child_wall[(sched, res["mode"])].append(res["process_s"])

    loads = [res["load"] for results in rounds for res in results]
    lines.append(f"Rounds: {len(rounds)}; load average (1, 5, 15 min) after each child: "
                 f"{loads[0]} ... {loads[-1]}.  Seconds are ranges over the rounds.\n")

    # ------------------------------------------------------------ per scheduler x allocator x mode
    modes = sorted({res["mode"] for results in rounds for res in results}, reverse=True)
    scheds = list(dict.fromkeys(p["pair"].split("+")[0] for res in rounds[0] for p in res["pairs"]))
    allocs = list(dict.fromkeys(p["pair"].split("+")[1] for res in rounds[0] for p in res["pairs"]))
    lines.append("### Compile CPU seconds per scheduler x allocator x mode\n")
    lines.append(f"First allocator ({allocs[0]}): the scheduler cold, every kernel its run needs "
                 "(core, set-up and scheduler kernels included).  Other allocators: what that pair "
                 "adds in the same process once the first pair is compiled.  Total: the whole "
                 "process.  n/a: the pair is ruled out on that workload.\n")
    for mode in modes:
        lines.append(f"**{mode}**\n")
        lines.append("| scheduler | " + " | ".join(allocs) + " | total | process wall s | compiles (first pair) |")
        lines.append("|---" * (len(allocs) + 4) + "|")
        for s in scheds:
            cells = []
            for a in allocs:
                key = (f"{s}+{a}", mode)
                if key not in outcome:
                    cells.append("")
                elif outcome[key] != "ok":
                    cells.append("n/a")
                else:
                    cells.append(("+" if key not in first_pair else "") + _rng(pair_s[key]))
            first = (f"{s}+{allocs[0]}", mode)
            n = str(min(pair_n[first])) if pair_n.get(first) else "–"
            lines.append(f"| {s} | " + " | ".join(cells) + f" | {_rng(child_total[(s, mode)])} | {_rng(child_wall[(s, mode)])} | {n} |")
        lines.append("")

    # ------------------------------------------------------------ per kernel
    # own seconds per kernel, summed over every child of a round
    per_kernel: dict[str, list] = defaultdict(list)
    sigs: dict[str, set] = defaultdict(set)
    compiles: dict[str, list] = defaultdict(list)
    source: dict[str, str] = {}
    for results in rounds:
        tot = defaultdict(float)
        n = defaultdict(int)
        for res in results:
            for r in res["records"]:
                tot[r["kernel"]] += r["own_s"]
                n[r["kernel"]] += 1
                sigs[r["kernel"]].add(r["signature"])
                source[r["kernel"]] = r["source"]
        for k in tot:
            per_kernel[k].append(tot[k])
            compiles[k].append(n[k])
    all_s = [sum(r["own_s"] for res in results for r in res["records"]) for results in rounds]
    lines.append(f"### Top {top} kernels by own compile seconds (all children of a round summed)\n")
    lines.append(f"All children together compiled for {_rng(all_s)} s per round.  Compiles: numba "
                 "compile events in one round (every child starts cold, so a kernel every run needs "
                 "counts once per child); signatures: distinct argument types over all rounds.\n")
    lines.append("| kernel | source | own s | compiles | s per compile | signatures |")
    lines.append("|---|---|---|---|---|---|")
    ranked = sorted(per_kernel, key=lambda k: -_med(per_kernel[k]))
    for k in ranked[:top]:
        lines.append(f"| `{k.removeprefix('schedbench.')}` | {source[k]} | {_rng(per_kernel[k])} | "
                     f"{min(compiles[k])} | {_med(per_kernel[k]) / min(compiles[k]):.2f} | {len(sigs[k])} |")
    lines.append("")

    # ------------------------------------------------------------ repeats within one process
    # a function compiled more than once in one process: under other argument types, or
    # under the same ones by another dispatcher (numba compiles an @overload's kernel once
    # per calling function, inlined or not)
    rep_s: dict[str, list] = defaultdict(list)
    rep_most: dict[str, tuple] = {}
    rep_args: dict[str, set] = defaultdict(set)
    params: dict[str, list] = {}
    for results in rounds:
        extra = defaultdict(float)
        for res in results:
            by_kernel = defaultdict(list)
            for r in res["records"]:
                by_kernel[r["kernel"]].append(r)
            for k, rs in by_kernel.items():
                if len(rs) < 2:
                    continue
                extra[k] += sum(r["own_s"] for r in rs) - rs[0]["own_s"]
                most = (len(rs), len({r["signature"] for r in rs}), len({r["dispatcher"] for r in rs}))
                rep_most[k] = max(rep_most.get(k, most), most)
                params[k] = rs[0]["params"]
                for i in range(len(rs[0]["args"])):
                    if len({tuple(r["args"])[i] if i < len(r["args"]) else "" for r in rs}) > 1:
                        rep_args[k].add(i)
        for k, v in extra.items():
            rep_s[k].append(v)
    lines.append("### The same function compiled more than once in one process\n")
    lines.append("Within one child (one scheduler, its allocators, one mode): compiles / distinct "
                 "signatures / dispatchers of a function (the most in any child); repeat s: the CPU "
                 "seconds of every compile after the first, summed over a round's children; the "
                 "arguments whose types differ between the compiles (none: the same signature "
                 "compiled again by another dispatcher).\n")
    lines.append("| kernel | compiles / signatures / dispatchers | repeat s per round | differing arguments |")
    lines.append("|---|---|---|---|")
    for k in sorted(rep_s, key=lambda k: -_med(rep_s[k]))[:top]:
        c, n_sig, n_disp = rep_most[k]
        names = params.get(k) or []
        differ = ", ".join(names[i] if i < len(names) else f"#{i}" for i in sorted(rep_args[k])) or "none"
        lines.append(f"| `{k.removeprefix('schedbench.')}` | {c} / {n_sig} / {n_disp} | {_rng(rep_s[k])} | {differ} |")
    lines.append("")

    # ------------------------------------------------------------ literal specialisations
    lit_s: dict[str, list] = defaultdict(list)
    lit_sigs: dict[str, set] = defaultdict(set)
    for results in rounds:
        tot = defaultdict(float)
        for res in results:
            for r in res["records"]:
                if "Literal[" in r["signature"]:
                    tot[r["kernel"]] += r["own_s"]
                    names = r["params"] or []
                    lit_sigs[r["kernel"]].add(", ".join(
                        f"{names[i] if i < len(names) else i}={a}" for i, a in enumerate(r["args"]) if "Literal[" in a))
        for k, v in tot.items():
            lit_s[k].append(v)
    if lit_s:
        lines.append("### Compiles with literal arguments\n")
        lines.append("A constant argument typed as a literal makes numba compile the function once per "
                     "value; CPU seconds of those compiles per round.\n")
        lines.append("| kernel | CPU s per round | literal arguments seen |")
        lines.append("|---|---|---|")
        for k in sorted(lit_s, key=lambda k: -_med(lit_s[k]))[:top]:
            seen = "; ".join(sorted(lit_sigs[k]))
            seen = seen if len(seen) < 160 else seen[:157] + "..."
            lines.append(f"| `{k.removeprefix('schedbench.')}` | {_rng(lit_s[k])} | `{seen}` |")
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------- replay and tests


def _child_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def replay_kth(times: int, tmp: Path) -> str:
    """Wall and CPU seconds (user + system, of the command's process) of ``schedbench
    replay KTH -s easy -a ff``: cold (a fresh cache each time) and warm (the same command
    again on that cache).  CPU seconds hardly depend on the machine's load."""
    runs = {"cold": [], "warm": []}
    for _ in range(times):
        cache = tempfile.mkdtemp(prefix="numba-kth-", dir=tmp)
        out = Path(cache) / "run"
        cmd = [sys.executable, "-m", "schedbench", "replay", KTH, "-s", "easy", "-a", "ff", "-q", "-o", str(out)]
        for bucket in ("cold", "warm"):
            t, c = time.perf_counter(), _child_cpu()
            subprocess.run(cmd, env=_env(cache), check=True)
            runs[bucket].append((time.perf_counter() - t, _child_cpu() - c))
        shutil.rmtree(cache, ignore_errors=True)
    return "\n".join(
        [f"`schedbench replay KTH -s easy -a ff`, {times} runs each, load {_loadavg()} at the end:\n",
         "| cache | wall s | CPU s |", "|---|---|---|"]
        + [f"| {k} | {', '.join(f'{w:.1f}' for w, _ in v)} | {', '.join(f'{c:.1f}' for _, c in v)} |"
           for k, v in runs.items()])


_PLUGIN = '''
"""pytest plug-in written by bench/compile_cost.py: numba compile CPU seconds per test."""
import json, os, time
from numba.core import event

_now = {"test": "(collection)"}
_own = {}
_stack = []
_loops = []  # [test, loop, signature, CPU s] of each replay loop compiled (not loaded)
_kernels = []  # the same of every compile, its own CPU s (those of the kernels it compiled for itself excluded)
_tests = []  # [test, start, wall s] of every test in this worker: the worker's timeline

class _L(event.Listener):
    def on_start(self, ev):
        _stack.append([time.thread_time(), 0.0])
    def on_end(self, ev):
        t0, nested = _stack.pop()
        total = time.thread_time() - t0
        if _stack:
            _stack[-1][1] += total
        _own[_now["test"]] = _own.get(_now["test"], 0.0) + total - nested
        name = getattr(getattr(ev.data["dispatcher"], "py_func", None), "__qualname__", "")
        sig = ", ".join(str(a) for a in ev.data["args"])
        if name.startswith("_run_for_"):
            _loops.append([_now["test"], name, sig, total - nested])
        _kernels.append([_now["test"], name, sig, total - nested])

event.register("numba:compile", _L())

# Every replay loop a test runs, compiled or loaded: the loop core.run (and the replay's
# compile-ahead, and engine.warm) asks core.loop_for for, with the types of its call, so
# that a loop's users are known, not only the test that happened to compile it.
_calls = set()  # (test, loop, signature)
import numba
from schedbench import core as _core

_loop_for = _core.loop_for

class _Recorded:
    def __init__(self, loop):
        self._loop = loop
    def __getattr__(self, name):
        return getattr(self._loop, name)
    def compile(self, sig):
        _calls.add((_now["test"], self._loop.py_func.__qualname__, ", ".join(str(a) for a in sig)))
        return self._loop.compile(sig)
    def __call__(self, *args):
        _calls.add((_now["test"], self._loop.py_func.__qualname__, ", ".join(str(numba.typeof(a)) for a in args)))
        return self._loop(*args)

_wrapped = {}  # one wrapper per loop: tests compare loops by identity

def _recording_loop_for(*args, **kwargs):
    loop = _loop_for(*args, **kwargs)
    if id(loop) not in _wrapped:
        _wrapped[id(loop)] = (loop, _Recorded(loop))
    return _wrapped[id(loop)][1]

_core.loop_for = _recording_loop_for

def pytest_runtest_logstart(nodeid, location):
    _now["test"] = nodeid
    _tests.append([nodeid, time.time(), 0.0])

def pytest_runtest_logfinish(nodeid, location):
    if _tests and _tests[-1][0] == nodeid:
        _tests[-1][2] = time.time() - _tests[-1][1]

def pytest_sessionfinish(session):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    out = os.environ["COMPILE_COST_OUT"]
    with open(os.path.join(out, f"tests-{worker}.json"), "w") as f:
        json.dump({"own": _own, "loops": _loops, "kernels": _kernels, "tests": _tests,
                   "calls": sorted(_calls)}, f)
'''


def _short_loop(name: str) -> str:
    """A replay loop's name without its generated prefix and digest suffix."""
    return re.sub(r"_run_for_schedbench_|_[0-9a-f]{8,}$", "", name)


def _short_types(sig: str) -> str:
    """A loop's argument types with their field lists and module paths dropped."""
    types = re.sub(r"\((?:[^()]|\([^()]*\))*\)", "", sig)
    return re.sub(r"\b\w+\.", "", types)


def tests_cost(paths: list[str], tmp: Path, workers: str, top: int) -> str:
    """Run ``pytest paths`` on an empty cache; compile seconds per test (its fixtures
    included: a module fixture's compiles count for the test that first uses it)."""
    cache = tempfile.mkdtemp(prefix="numba-tests-", dir=tmp)
    (Path(cache) / "compile_cost_plugin.py").write_text(_PLUGIN)
    env = _env(cache)
    env["PYTHONPATH"] = os.pathsep.join([cache, env["PYTHONPATH"]])
    env["COMPILE_COST_OUT"] = cache
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "compile_cost_plugin",
           "-n", workers, "--dist", "loadfile", "--durations=15", *paths]
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t
    own: dict[str, float] = {}
    loops: list[list] = []
    kernels: list[list] = []
    timeline: list[list] = []  # [worker, test, start, wall s]
    calls: set[tuple] = set()  # (test, loop, signature) of every loop a test ran, compiled or loaded
    for f in Path(cache).glob("tests-*.json"):
        got = json.loads(f.read_text())
        for k, v in got["own"].items():
            own[k] = own.get(k, 0.0) + v
        loops += got["loops"]
        kernels += [[f.stem, *k] for k in got["kernels"]]
        calls |= {tuple(c) for c in got.get("calls", [])}
        if f.stem != "tests-main" or workers == "0":  # xdist's controller logs every test too
            timeline += [[f.stem, *t] for t in got.get("tests", [])]
    shutil.rmtree(cache, ignore_errors=True)
    durations = [line for line in proc.stdout.splitlines() if re.match(r"\s*[\d.]+s (call|setup|teardown) ", line)]
    lines = [f"`pytest -n {workers} {' '.join(paths)}` on an empty cache: wall {wall:.0f} s, "
             f"compile {sum(own.values()):.0f} CPU s (all workers), load {_loadavg()}; "
             f"{proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]}\n",
             f"Replay loops compiled (every worker starts cold; loaded ones do not count): {len(loops)}, "
             f"{sum(s for *_, s in loops):.0f} CPU s; distinct loop specialisations (scheduler class "
             f"x argument types): {len({(n, sig) for _, n, sig, _ in loops})}.\n",
             ]
    # Each worker's share: its tests' wall seconds and its compile CPU seconds; the run
    # lasts as long as the busier worker.
    worker_of = {test: w for w, test, *_ in timeline}
    lines += ["| worker | tests | files | tests' wall s | compile CPU s | last test ended (s after the first start) |",
              "|---|---|---|---|---|---|"]
    t_first = min((t for *_, t, _ in timeline), default=0.0)
    for w in sorted({w for w, *_ in timeline}):
        mine = [t for t in timeline if t[0] == w]
        comp = sum(s for k in kernels if k[0] == w for s in [k[-1]])
        lines.append(f"| {w.removeprefix('tests-')} | {len(mine)} | {len({t[1].split('::')[0] for t in mine})} | "
                     f"{sum(t[3] for t in mine):.0f} | {comp:.0f} | {max(t[2] + t[3] for t in mine) - t_first:.0f} |")
    lines += ["", "| test | worker | compile CPU s |", "|---|---|---|"]
    for k, v in sorted(own.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"| `{k}` | {worker_of.get(k, '?').removeprefix('tests-')} | {v:.1f} |")
    by_file = defaultdict(float)
    for k, v in own.items():
        by_file[k.split("::")[0]] += v
    file_wall = defaultdict(float)
    for _w, test, _t, s in timeline:
        file_wall[test.split("::")[0]] += s
    worker_of_file = {test.split("::")[0]: w.removeprefix("tests-") for w, test, *_ in timeline}
    lines += ["", "| test file | worker | compile CPU s | wall s |", "|---|---|---|---|"]
    for k, v in sorted(by_file.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"| `{k}` | {worker_of_file.get(k, '?')} | {v:.1f} | {file_wall.get(k, 0.0):.0f} |")
    # Which loops, and which tests first asked for each: a loop one test alone compiles is
    # a specialisation that test could perhaps avoid; one compiled twice was compiled by
    # both workers (nothing shares a compile between them unless under the cache's lock).
    by_loop: dict[tuple, list] = defaultdict(list)
    for test, name, sig, s in loops:
        by_loop[(name, sig)].append((test, s))
    lines += ["", f"Replay loops compiled, costliest first (every one of the {len(by_loop)}; the types "
              "shortened to their class names):", "",
              "| loop | argument types | times | CPU s | compiled during |", "|---|---|---|---|---|"]
    for (name, sig), got in sorted(by_loop.items(), key=lambda kv: -sum(s for _, s in kv[1])):
        short = _short_loop(name)
        types = _short_types(sig)
        lines.append(f"| {short} | {types[:120]} | {len(got)} | {sum(s for _, s in got):.1f} | "
                     f"{'; '.join(sorted({t for t, _ in got}))[:200]} |")
    # Every loop's users (compiled or loaded): a loop only one file runs costs that file its
    # compile in every cold run, and is a candidate for a pair another test compiles anyway.
    users: dict[tuple, set] = defaultdict(set)
    for test, name, sig in calls:
        if test != "(collection)":
            users[(name, sig)].add(test)
    cost = defaultdict(float)
    for _test, name, sig, s in loops:
        cost[(name, sig)] += s
    lines += ["", f"Every replay loop the tests ran, compiled or loaded ({len(users)} distinct), with the files "
              "that ran it, fewest users first:", "",
              "| loop | argument types | compile CPU s | files (tests) |", "|---|---|---|---|"]
    for (name, sig), tests in sorted(users.items(), key=lambda kv: (len({t.split('::')[0] for t in kv[1]}),
                                                                       -cost[kv[0]])):
        per_file = defaultdict(int)
        for t in tests:
            per_file[t.split("::")[0]] += 1
        lines.append(f"| {_short_loop(name)} | {_short_types(sig)[:120]} | "
                     f"{cost[(name, sig)]:.1f} | {'; '.join(f'{k} ({v})' for k, v in sorted(per_file.items()))} |")
    # Every kernel (loops included), by its own compile seconds: the same kernel and
    # signature compiled by both workers counts twice; many signatures of one kernel are
    # the specialisations tests ask for by calling it with other types.
    by_kernel: dict[str, list] = defaultdict(list)
    for worker, _test, name, sig, s in kernels:
        by_kernel[re.sub(r"_[0-9a-f]{8,}$", "", name)].append((worker, sig, s))
    lines += ["", f"Every kernel compiled ({len(kernels)} compiles, {sum(k[-1] for k in kernels):.0f} CPU s own), "
              f"costliest first:", "",
              "| kernel | compiles | signatures | compiled by both workers | own CPU s |", "|---|---|---|---|---|"]
    for name, got in sorted(by_kernel.items(), key=lambda kv: -sum(s for *_, s in kv[1]))[:3 * top]:
        workers_of = defaultdict(set)
        for w, sig, _ in got:
            workers_of[sig].add(w)
        lines.append(f"| {name} | {len(got)} | {len(workers_of)} | {sum(len(w) > 1 for w in workers_of.values())} | "
                     f"{sum(s for *_, s in got):.1f} |")
    if os.environ.get("COMPILE_COST_LOOPS_JSON"):
        Path(os.environ["COMPILE_COST_LOOPS_JSON"]).write_text(json.dumps({"own": own, "loops": loops,
                                                                            "kernels": kernels, "tests": timeline,
                                                                            "calls": sorted(calls)}))
    lines += ["", "pytest --durations:", "```", *durations[:15], "```"]
    return "\n".join(lines)


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["_child"]:
        p = argparse.ArgumentParser()
        p.add_argument("--mode", required=True)
        p.add_argument("--out", required=True)
        p.add_argument("pairs", nargs="+")
        child(p.parse_args(argv[1:]))
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=2, help="cold rounds of every child (default 2)")
    p.add_argument("-s", "--scheduler", action="append", help="only these schedulers (default: every jitted one)")
    p.add_argument("-a", "--allocator", action="append", help=f"only these allocators (default {' '.join(ALLOCATORS)})")
    p.add_argument("--mode", action="append", choices=["pool", "nodes"], help="only this mode (default both)")
    p.add_argument("--top", type=int, default=20, help="rows of the per-kernel tables (default 20)")
    p.add_argument("--json", help="also write the raw records here")
    p.add_argument("--replay-kth", type=int, default=0, metavar="N",
                   help="also time `schedbench replay KTH -s easy -a ff` cold and warm N times")
    p.add_argument("--tests", nargs="*", metavar="PATH",
                   help="also run these test files or folders cold, with compile seconds per test")
    p.add_argument("--test-workers", default="2", help="pytest -n for --tests (default 2)")
    p.add_argument("--parallel", type=int, default=1,
                   help="children at a time (default 1; CPU seconds barely change, wall seconds do)")
    p.add_argument("--from-json", help="only print the tables of a former --json file")
    p.add_argument("--no-pairs", action="store_true", help="skip the scheduler x allocator children")
    args = p.parse_args(argv)
    if args.from_json:
        print(report(json.loads(Path(args.from_json).read_text()), args.top))
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="compile-cost-"))
    out = []
    try:
        raw = []
        if not args.no_pairs:
            scheds = args.scheduler or _jitted_schedulers()
            allocs = args.allocator or ALLOCATORS
            modes = args.mode or ["pool", "nodes"]
            for r in range(args.rounds):
                jobs = [(mode, s) for mode in modes for s in scheds]

                def one(job, r=r):
                    mode, s = job
                    res = run_child(mode, [f"{s}+{a}" for a in allocs], tmp)
                    print(f"round {r + 1}/{args.rounds}: {s} on {mode}: {res['process_s']:.0f} s "
                          f"(load {res['load']})", file=sys.stderr, flush=True)
                    return res

                with ThreadPoolExecutor(args.parallel) as pool:
                    raw.append(list(pool.map(one, jobs)))
            out.append(report(raw, args.top))
        if args.replay_kth:
            print("timing schedbench replay KTH cold and warm", file=sys.stderr, flush=True)
            out.append(replay_kth(args.replay_kth, tmp) + "\n")
        if args.tests:
            print("running the tests cold", file=sys.stderr, flush=True)
            out.append(tests_cost(args.tests, tmp, args.test_workers, args.top))
        if args.json:
            Path(args.json).write_text(json.dumps(raw))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
