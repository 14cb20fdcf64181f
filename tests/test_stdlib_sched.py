"""The source root is called sched/; it must never shadow the standard library's sched."""

import sys
import sysconfig
from pathlib import Path

from repo_paths import ROOT


def test_import_sched_is_the_standard_library():
    import sched

    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    assert sched.__file__ is not None, "sched resolved to a namespace package (the source root?)"
    assert Path(sched.__file__).resolve().parent == stdlib
    assert hasattr(sched, "scheduler")
    assert "sched" in sys.stdlib_module_names


def test_source_root_has_no_init():
    root = ROOT / "sched"
    assert not (root / "__init__.py").exists()
