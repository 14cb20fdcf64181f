"""bench/soner_study.py's worker pool: a replay whose worker dies (as the out-of-memory
killer ended one in a whole-study run) costs that replay, not the study."""

from __future__ import annotations

import importlib.util
import os
import signal

from repo_paths import ROOT

_spec = importlib.util.spec_from_file_location("soner_study", ROOT / "bench" / "soner_study.py")
soner_study = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(soner_study)

DIES_ALWAYS = 3  # the task that kills its worker even alone
DIES_BESIDE = 5  # the task that kills its worker only beside another (a flag file tells)


def _fake_run(task):
    """run_one's stand-in: task (number, workload, seed, flag folder)."""
    number, workload, seed, flags = task
    if number == DIES_ALWAYS:
        os.kill(os.getpid(), signal.SIGKILL)
    if number == DIES_BESIDE:
        mark = os.path.join(flags, "died-once")
        if not os.path.exists(mark):
            open(mark, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
    return {"study": {"experiment": number, "workload": workload, "seed": seed, "wall_s": 0.0}}


def test_a_dead_worker_costs_only_the_replay_that_killed_it(tmp_path, capsys):
    tasks = [(n, "I", 1, str(tmp_path)) for n in range(1, 9)]
    lost = soner_study.run_all(tasks, 2, run=_fake_run)
    assert lost == [tasks[DIES_ALWAYS - 1]]
    err = capsys.readouterr().err
    finished = {line.split("]")[1].split(":")[0].strip() for line in err.splitlines() if line.startswith("[")}
    # every other replay finished once, the one that died beside another included
    assert finished == {f"exp {n} I seed 1" for n in range(1, 9) if n != DIES_ALWAYS}
    assert f"exp {DIES_ALWAYS} I seed 1 alone died" in err


def test_without_deaths_every_replay_runs_once(tmp_path, capsys):
    tasks = [(n, "II", s, str(tmp_path)) for n in (1, 2) for s in (1, 2)]
    assert soner_study.run_all(tasks, 2, run=_fake_run) == []
    assert sum(line.startswith("[") for line in capsys.readouterr().err.splitlines()) == len(tasks)
