"""numba's cache folder is keyed on the files kernels can depend on (schedbench.kernel_sources,
issue 28): an edit elsewhere keeps the compiled kernels, an edit of any of them does not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import schedbench
from schedbench import kernel_sources as ks

ROOT = Path(schedbench.__file__).resolve().parent

# A package shaped as schedbench is: kernels, the constants and state they read, a Python
# policy, a command line.
TOY = {
    "__init__.py": "from .cli import main\n",
    "_jit.py": "import numba\nkernel = numba.njit\n",
    "consts.py": "LIMIT = 3\n",
    "layout.py": "import typing\nclass State(typing.NamedTuple):\n    a: int\n    b: int\n",
    "kernels/__init__.py": "from .pool import step\n",
    "kernels/pool.py": ("from .._jit import kernel\nfrom ..consts import LIMIT\n\n"
                        "@kernel\ndef step(x):\n    from .. import deep\n    return x + LIMIT\n"),
    "deep.py": "import schedbench.deeper\n",
    "deeper.py": "X = 1\n",
    "policy.py": "from .kernels.pool import step\n\ndef decide(view):\n    return step(view)\n",
    "cli.py": "from . import policy\n\ndef main():\n    return 0\n",
    "records.py": "import collections\nRow = collections.namedtuple('Row', 'a b')\n",
}


@pytest.fixture
def toy(tmp_path):
    root = tmp_path / "schedbench"
    for name, text in TOY.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _names(root):
    return sorted(p.relative_to(root).as_posix() for p in ks.kernel_sources(root))


def test_kernel_sources_follow_imports_from_modules_with_compiled_code(toy):
    # kernels/pool.py holds a kernel; it imports _jit, consts and (inside the kernel) deep,
    # which imports deeper; layout.py and records.py define named tuples.  The package's
    # and kernels' __init__ run on import, but no kernel source imports a name from them.
    assert _names(toy) == ["_jit.py", "consts.py", "deep.py", "deeper.py", "kernels/pool.py",
                           "layout.py", "records.py"]


@pytest.mark.parametrize("edited, same", [
    ("cli.py", True), ("policy.py", True), ("__init__.py", True),
    ("kernels/pool.py", False), ("consts.py", False), ("deeper.py", False), ("layout.py", False),
])
def test_the_digest_changes_with_a_kernel_source_only(toy, edited, same):
    before = ks.digest(toy, ks.kernel_sources(toy))
    (toy / edited).write_text((toy / edited).read_text() + "\n# edited\n")
    assert (ks.digest(toy, ks.kernel_sources(toy)) == before) is same


def test_from_a_package_import_a_name_reads_its_init(toy):
    (toy / "cli.py").write_text("from .kernels import step\n")
    (toy / "_jit.py").write_text("import numba\nfrom .cli import step\nkernel = numba.njit\n")
    assert "kernels/__init__.py" in _names(toy) and "cli.py" in _names(toy)


def test_every_module_with_a_kernel_is_a_kernel_source_and_the_command_line_is_not():
    sources = set(ks.kernel_sources(ROOT))
    decorated = {p for p in ROOT.rglob("*.py")
                 if any(line.lstrip().startswith(("@kernel", "@inline_kernel", "@internal_kernel", "@numba."))
                        for line in p.read_text().splitlines())}
    assert len(decorated) > 20 and decorated <= sources
    for module in ("core/loop.py", "core/state.py", "io/jobs.py", "registry.py", "_jit.py"):
        assert ROOT / module in sources
    for module in ("cli/main.py", "cli/replay.py", "analysis/report/render.py", "policies/ipsched.py",
                   "sweep/run.py"):
        assert ROOT / module not in sources


def _cache_dir_in(cache: Path) -> str:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    code = "import numba, schedbench._jit; print(numba.config.CACHE_DIR)"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_cache_folder_is_named_by_thekernel_sources_digest_remembered_per_package_digest(tmp_path):
    kernels = ks.digest(ROOT, ks.kernel_sources(ROOT))
    every = ks.digest(ROOT, sorted(ROOT.rglob("*.py")))
    assert _cache_dir_in(tmp_path) == str(tmp_path / f"numba-{kernels[:12]}")
    memo = tmp_path / "numba-keys" / every
    assert memo.read_text() == kernels
    # what is remembered is used: a different (well-formed) answer names another folder ...
    memo.write_text("f" * 40)
    assert _cache_dir_in(tmp_path) == str(tmp_path / f"numba-{'f' * 12}")
    # ... and a damaged one is found again
    memo.write_text("not a digest")
    assert _cache_dir_in(tmp_path) == str(tmp_path / f"numba-{kernels[:12]}")
    assert memo.read_text() == kernels
    assert [p.name for p in memo.parent.iterdir()] == [every]  # no temporary file left


def test_cache_folder_where_the_answer_cannot_be_kept(tmp_path):
    (tmp_path / "numba-keys").write_text("a file where the folder would be")
    kernels = ks.digest(ROOT, ks.kernel_sources(ROOT))
    assert _cache_dir_in(tmp_path) == str(tmp_path / f"numba-{kernels[:12]}")


def test_a_new_kernel_folder_prunes_the_old_ones_by_last_use(tmp_path):
    import time

    from schedbench import _jit

    kernels = ks.digest(ROOT, ks.kernel_sources(ROOT))
    now = time.time()
    hour, day = 3600, 86_400
    ages = {  # folder: hours since its last use
        **{f"numba-recent{i}": 1 + i for i in range(5)},  # the five most recent of the others
        "numba-daysold1": 48, "numba-daysold2": 72,  # ranks 5 and 6: kept, however idle
        "numba-daysold3": 96, "numba-daysold4": 120,  # ranks 7 and 8, idle over a day: gone
        "numba-monthsold": 24 * 40,  # unused for over 30 days: gone
    }
    for name, hours in ages.items():
        (tmp_path / name / "schedbench").mkdir(parents=True)
        os.utime(tmp_path / name, (now - hours * hour,) * 2)
    (tmp_path / "numba-afile").write_text("not a kernel folder")
    (tmp_path / "numba-keys").mkdir()
    old_key = tmp_path / "numba-keys" / ("0" * 40)
    old_key.write_text("1" * 40)
    os.utime(old_key, (now - 31 * day,) * 2)
    # a new digest's folder: made, and the others pruned
    folder = Path(_cache_dir_in(tmp_path))
    assert folder.name == f"numba-{kernels[:12]}" and folder.is_dir()
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {folder.name, "numba-afile", "numba-keys", *(f"numba-recent{i}" for i in range(5)),
                    "numba-daysold1", "numba-daysold2"}
    assert not old_key.exists() and len(list((tmp_path / "numba-keys").iterdir())) == 1
    # a folder already there is only stamped: nothing else goes, however old
    os.utime(folder, (now - 2 * day,) * 2)
    (tmp_path / "numba-daysold5").mkdir()
    os.utime(tmp_path / "numba-daysold5", (now - 5 * day,) * 2)
    assert _cache_dir_in(tmp_path) == str(folder)
    assert folder.stat().st_mtime > now - hour
    assert (tmp_path / "numba-daysold5").is_dir()
    # the rule itself, as a function
    assert _jit.prune(tmp_path, keep=folder.name) == [tmp_path / "numba-daysold5"]
