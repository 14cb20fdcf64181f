"""The sweep's compile phase (schedbench.sweep.warm): which loops it plans from a sweep's
runs, and numba's cache index under concurrent saves (the workers compile side by side)."""

from __future__ import annotations

import multiprocessing

from numba.core import caching

from schedbench.sweep import config as sweep_config
from schedbench.sweep import warm


def _runs(text: str, tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    return sweep_config.expand(sweep_config.load_config(path), tmp_path)


def test_one_task_per_loop_setting_with_one_input_per_workload(tmp_path):
    runs = _runs("""
schedulers = ["easy", "ipsched"]
allocators = ["ff", "bf"]
seeds = [1, 2, 3]
[options]
priority_bound = [5, 10]

[[workloads]]
name = "a"
generator = "esp"
variant = "original"
machine = ["16x(cores=8,gpus=2)", "8x(cores=4)"]

[[workloads]]
name = "b"
generator = "eurora-like"
jobs = 50
""", tmp_path)
    tasks = warm.run_tasks(runs)
    # ipsched is a Python policy: no loop; easy takes no priority_bound (one options set)
    assert [(t["scheduler"], t["allocator"]) for t in tasks] == [("easy", "ff"), ("easy", "bf")]
    for t in tasks:
        # one input per workload and machine (seeds change the jobs, not their shape)
        assert [(i["run"]["workload"], i["run"]["machine"]) for i in t["inputs"]] == [
            ("a_16xcores8gpus2", "16x(cores=8,gpus=2)"), ("a_8xcores4", "8x(cores=4)"), ("b", None)]
        assert {i["run"]["seed"] for i in t["inputs"]} == {1}
    assert warm.label(tasks[0]) == "easy+ff (a_16xcores8gpus2, a_8xcores4, b)"


def test_option_values_make_tasks_of_their_own(tmp_path):
    runs = _runs("""
schedulers = ["conservative"]
allocators = ["ff"]
[options]
priority_bound = [5, 10]
[[workloads]]
generator = "esp"
variant = "original"
machine = "16x(cores=8,gpus=2)"
""", tmp_path)
    options = [t["options"] for t in warm.run_tasks(runs)]
    assert len(options) == len({sweep_config.canonical_json(o) for o in options})
    assert len(options) == len({sweep_config.canonical_json(r.get("options") or {}) for r in runs})


def test_mode_tasks_leave_python_policies_out():
    tasks = warm.mode_tasks(["easy", "ipsched"], ["ff", "bf"], ["pool", "nodes"])
    assert [warm.label(t) for t in tasks] == ["easy+ff (pool, nodes)", "easy+bf (pool, nodes)"]


def _save_many(args) -> None:
    folder, first = args
    index = caching.IndexDataCacheFile(folder, "loop", "stamp")
    for k in range(first, first + 25):
        index.save(("sig", k), {"payload": k})


def test_concurrent_saves_keep_every_entry_and_its_own_data(tmp_path):
    """numba's own save (read the index, pick a free data name, write) lost entries and
    could name one data file for two signatures when two processes saved at once;
    schedbench._jit serialises saves per index."""
    import schedbench._jit  # noqa: F401 - installs the serialised save

    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        pool.map(_save_many, [(str(tmp_path), 25 * i) for i in range(4)])
    index = caching.IndexDataCacheFile(str(tmp_path), "loop", "stamp")
    for k in range(100):
        assert index.load(("sig", k)) == {"payload": k}


def test_a_label_leaves_out_options_without_a_value():
    task = warm._task("slurm", "balanced", "requested", {"bf_window": None, "node_prio": "", "accounts": [],
                                                          "critical": ["gpus", "mics"], "depth": 1}, None,
                      [{"mode": "nodes"}], ())
    assert warm.label(task) == "slurm+balanced critical=gpus,mics depth=1 (nodes)"


def test_tasks_start_one_scheduler_after_another():
    # two workers on easy+ff and easy+bf (one loop) compiled it once and waited once
    tasks = warm.mode_tasks(["easy", "conservative", "fcfs"], ["ff", "bf", "balanced"], ["pool"])
    tasks = [t for t in tasks if not (t["scheduler"] == "fcfs" and t["allocator"] == "balanced")]
    order = [(t["scheduler"], t["allocator"]) for t in warm.interleaved(tasks)]
    assert order == [("easy", "ff"), ("conservative", "ff"), ("fcfs", "ff"),
                     ("easy", "bf"), ("conservative", "bf"), ("fcfs", "bf"),
                     ("easy", "balanced"), ("conservative", "balanced")]
    assert warm.interleaved([]) == []


def test_only_a_task_loaded_whole_from_the_cache_is_routine():
    done = dict(label="easy+ff (pool)", inputs=1, loops=1, compiled_s=0.0, wall_s=0.2, impossible=[], error=None)
    assert warm.routine(done)
    assert not warm.routine({**done, "compiled_s": 8.0})
    assert not warm.routine({**done, "error": "ImportError: no module"})
    assert not warm.routine({**done, "impossible": [("pool", "needs nodes")]})
