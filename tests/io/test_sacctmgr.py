"""sacctmgr output as the slurm scheduler's accounts file: hand-made dumps with known shares."""

from __future__ import annotations

import re

import pytest

from schedbench.cli.main import main
from schedbench.errors import DataError
from schedbench.io import sacctmgr

ASSOC = """\
Account|User|Share
root||1
physics||40
physics|alice|3
physics|bob|parent
chemistry||60
chemistry|carol|1
"""

QOS = """\
Name|Priority
normal|0
high|1000
"""


def read(tmp_path, text: str):
    path = tmp_path / "accounts.txt"
    path.write_text(text)
    return sacctmgr.read_accounts(path)


def test_associations_and_qos_in_one_file(tmp_path):
    got = read(tmp_path, ASSOC + "\n" + QOS)
    assert got == {
        "shares": {"root": 1, "physics": 40, "chemistry": 60},  # account rows: User empty
        "user_shares": {"physics/alice": 3, "chemistry/carol": 1},  # bob's 'parent' has no number
        "qos_priority": {"normal": 0, "high": 1000},
    }


def test_qos_alone_or_first(tmp_path):
    assert read(tmp_path, QOS) == {"shares": {}, "user_shares": {}, "qos_priority": {"normal": 0, "high": 1000}}
    assert read(tmp_path, QOS + ASSOC)["shares"]["physics"] == 40


@pytest.mark.parametrize("header", ["Account|User|Fairshare", "Account|User|RawShares", "account|user|share"])
def test_share_column_names(tmp_path, header):
    assert read(tmp_path, f"{header}\nphysics||7\n")["shares"] == {"physics": 7}


def test_parsable_with_closing_bars_and_extra_columns_in_any_order(tmp_path):
    got = read(tmp_path, "Cluster|Share|User|Account|Partition|\nc1|5||physics||\nc1|2|alice|physics|gpu|\n"
                         "c2|5||physics||\n")
    assert got["shares"] == {"physics": 5} and got["user_shares"] == {"physics/alice": 2}


def test_an_account_column_without_users(tmp_path):
    assert read(tmp_path, "Account|Share\na|1\nb|3\n")["shares"] == {"a": 1, "b": 3}


@pytest.mark.parametrize("text, message", [
    ("physics||40\n", "accounts.txt:1: expected a header line such as 'Account|User|Share'"),
    ("Account|User|Share\nphysics|40\n", "accounts.txt:2: 2 fields where the header above has 3"),
    ("Account|User|Share\n\nphysics||forty\n", "accounts.txt:3: share 'forty' is not a whole number (nor 'parent')"),
    ("Account|User|Share\nphysics||-1\n", "accounts.txt:2: share '-1' is not a whole number"),
    ("Account|User|Share\n|alice|1\n", "accounts.txt:2: an association without an account"),
    ("Name|Priority\nhigh|top\n", "accounts.txt:2: priority 'top' is not a whole number"),
    ("Cluster|Account|Share\nc1|physics|5\nc2|physics|6\n", "accounts.txt:3: physics has 6 here but 5 at line 2"),
])
def test_errors_name_file_and_line(tmp_path, text, message):
    with pytest.raises(DataError, match=re.escape(message)):
        read(tmp_path, text)


def test_replay_reads_the_file_before_the_trace(tmp_path, capsys):
    bad = tmp_path / "accounts.txt"
    bad.write_text("Account|User|Share\nphysics||lots\n")
    assert main(["replay", str(tmp_path / "no-such-trace.swf"), "-s", "slurm", "--slurm-accounts", str(bad),
                 "-o", str(tmp_path / "run")]) == 1
    assert f"{bad}:2: share 'lots'" in capsys.readouterr().err


def test_replay_hands_the_accounts_to_the_run_in_meta(tmp_path, monkeypatch):
    from repo_paths import TINY
    from schedbench.cli import replay as replay_cli

    path = tmp_path / "accounts.txt"
    path.write_text(ASSOC)
    seen = {}

    def fake_replay(table, machine, *args, meta=None, **kwargs):
        seen.update(meta)
        raise DataError("stop here")

    monkeypatch.setattr(replay_cli, "replay", fake_replay)
    assert main(["replay", str(TINY), "-s", "slurm", "--slurm-accounts", str(path), "-o", str(tmp_path / "run")]) == 1
    assert seen["slurm_accounts"]["shares"] == {"root": 1, "physics": 40, "chemistry": 60}


@pytest.mark.parametrize("scheduler", ["sfs", "easy"])
def test_a_scheduler_that_reads_no_slurm_accounts_refuses_them(tmp_path, capsys, scheduler):
    """Only ``slurm`` reads the file: under another scheduler it would be read and
    ignored, so the run is refused before any work (exit 2)."""
    from repo_paths import TINY

    path = tmp_path / "accounts.txt"
    path.write_text(ASSOC)
    assert main(["replay", str(TINY), "-s", scheduler, "--slurm-accounts", str(path),
                 "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"--slurm-accounts is read by the slurm scheduler only, not by {scheduler}" in err
    assert not (tmp_path / "run").exists()


def test_a_slurm_run_records_the_accounts_it_read(tmp_path):
    """The shares and QOS priorities change the schedule: summary.json records them, so two
    runs that differ only in --slurm-accounts do not read as the same settings."""
    import json

    from repo_paths import ROOT

    example = ROOT / "traces" / "slurm-example"
    base = ["replay", str(example / "sacct.txt"), "--machine", str(example / "slurm.conf"), "-s", "slurm", "-q"]
    assert main([*base, "-o", str(tmp_path / "without")]) == 0
    assert main([*base, "--slurm-accounts", str(example / "accounts.txt"), "-o", str(tmp_path / "with")]) == 0
    without = json.loads((tmp_path / "without" / "summary.json").read_text())
    recorded = json.loads((tmp_path / "with" / "summary.json").read_text())
    assert "slurm_accounts" not in without
    assert recorded["slurm_accounts"] == sacctmgr.read_accounts(example / "accounts.txt")
    assert recorded["slurm_accounts"]["shares"]["physics"] == 40
