"""``schedbench warm``: what it plans to compile, and that a replay after it compiles no loop."""

from __future__ import annotations

from numba.core import event

from repo_paths import ROOT
from schedbench.cli import main as cli
from schedbench.engine import warm as engine_warm
from schedbench.engine.replay import replay
from schedbench.sweep import warm


def _plan(capsys, *args) -> list[str]:
    assert cli.main(["warm", "--dry-run", *args]) == 0
    return capsys.readouterr().out.splitlines()


def test_default_plan_is_what_a_first_replay_of_a_log_needs(capsys):
    assert _plan(capsys) == ["easy+ff (pool)"]


def test_grid_plan_lists_jitted_schedulers_only(capsys):
    lines = _plan(capsys, "-s", "all", "-a", "bf", "--mode", "nodes", "--mode", "pool")
    assert "easy+bf (nodes, pool)" in lines and "conservative+bf (nodes, pool)" in lines
    assert not any(line.startswith(("ipsched", "aucsched", "backfill")) for line in lines)  # Python policies


def test_config_plan_is_the_sweeps_compile_phase(capsys):
    lines = _plan(capsys, "--config", str(ROOT / "bench" / "default.toml"))
    assert "easy+ff (soner-V, eurora_load=0.7, eurora_load=0.9)" in lines
    assert len(lines) == len(set(lines))
    both = _plan(capsys, "--config", str(ROOT / "bench" / "default.toml"), "-s", "easy", "-a", "ff", "--mode", "pool")
    assert both == ["easy+ff (pool)", *lines]


def test_usage_errors(capsys):
    assert cli.main(["warm", "-s", "nope", "--dry-run"]) == 2
    assert "unknown scheduler 'nope'" in capsys.readouterr().err
    assert cli.main(["warm", "-j", "0"]) == 2


class _Compiled(event.Listener):
    def __init__(self):
        self.names = set()

    def on_start(self, ev):
        self.names.add(getattr(ev.data["dispatcher"], "py_func", ev.data["dispatcher"]).__qualname__)

    def on_end(self, ev):
        pass


def test_a_replay_after_warm_compiles_no_loop():
    """The warm-up compiles the loop a replay of its mode runs, for the same types (one
    small pair, fcfs+ff, in this process)."""
    [task] = warm.mode_tasks(["fcfs"], ["ff"], ["pool"])
    result = warm.compile_task(task)
    assert result["error"] is None and not result["impossible"], result
    table, machine, meta = engine_warm.mode_input("pool")
    compiled = _Compiled()
    with event.install_listener("numba:compile", compiled):
        replay(table, machine, "fcfs", "ff", meta=meta)
    assert not compiled.names, compiled.names


def test_impossible_pairs_are_reported_not_failed():
    # conservative on nodes needs the allocator's planning order, which weighted does not
    # give: refused by the set-up, before any loop compile
    [task] = warm.mode_tasks(["conservative"], ["weighted"], ["nodes"])
    result = warm.compile_task(task)
    assert result["error"] is None and result["loops"] == 0
    assert [name for name, _ in result["impossible"]] == ["nodes"]
    assert warm.describe({**result, "compiled_s": 0.0}) == "conservative+weighted (nodes): not possible on nodes"
