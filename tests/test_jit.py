"""``schedbench._jit``'s changes to numba: an inliner that copies less must give the same
machine code as numba's own, LLVM at -O2 unless ``NUMBA_OPT`` says otherwise, compile
flags hashed and compared as numba's own, a called kernel compiled once whatever
constants it is passed; and the compile lock that can be passed by."""

from __future__ import annotations

import subprocess
import sys
from collections import namedtuple

import numba
import numpy as np
from numba.core import inline_closurecall
from numba.extending import overload

from schedbench import _jit

State = namedtuple("State", "a b scal")


@numba.njit(inline="always")
def _leaf(a, i, x):
    if a[i] > x:
        a[i] -= x
        return True
    return False


@numba.njit(inline="always")
def _middle(state, x):
    hits = 0
    for i in range(state.a.shape[0]):
        if _leaf(state.a, i, x) or _leaf(state.b, i, x + 1):
            hits += 1
    return hits


@numba.njit(inline="always")
def _branchy(state, x):
    total = 0
    while x > 0:
        total += _middle(state, x)
        x = x // 2 if total % 2 else x - 3
    state.scal[0] = total
    return total


def _scaled(state, x):
    """Inlined by numba's typed inliner (an overload), which copies its cached IR."""


@overload(_scaled, inline="always")
def _scaled_typing(state, x):
    def impl(state, x):
        return _leaf(state.a, 1, x) + (state.b[1] * x if state.b[1] % 3 else state.scal[0] + 1)

    return impl


def _outer(state, x):
    return _branchy(state, x) + _middle(state, x + 2) + _scaled(state, x) + _scaled(state, 1)


# compiles _outer and rusv's _add (a kernel of the package, with nested inlined calls)
# afresh in a new process, with the inliner named by argv[1], and prints their LLVM IR
_CHILD = """
import sys
import numba, numpy as np
from numba.core import inline_closurecall
from schedbench import _jit
from schedbench.plan import rusv
sys.path.insert(0, {here!r})
import test_jit as t
worker = inline_closurecall.InlineWorker
if sys.argv[1] == "numba":
    worker.inline_function, worker.inline_ir = _jit._inline_function, _jit._inline_ir
out = []
outer = numba.njit(t._outer)
outer(t.State(np.arange(9), np.arange(9) * 2, np.zeros(2, np.int64)), 40)
add = numba.njit(nogil=True, error_model="numpy", _nrt=False)(rusv._add.py_func)
add(np.zeros((16, 3), np.int64), np.zeros(5, np.int64), np.int64(0), np.int64(5), np.int64(1))
for d in (outer, add):
    out.append(d.inspect_llvm(d.signatures[0]))
import gc
from numba.core import ir
marked = sum(1 for o in gc.get_objects() if isinstance(o, ir.Block) and "__deepcopy__" in vars(o))
sys.stdout.write("\\n".join(out) + f"\\nmarked blocks left: {{marked}}\\n")
"""


def _llvm(inliner: str) -> str:
    from pathlib import Path

    code = _CHILD.format(here=str(Path(__file__).resolve().parent))
    proc = subprocess.run([sys.executable, "-c", code, inliner], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_package_inlines_without_numbas_copies():
    worker = inline_closurecall.InlineWorker
    assert worker.inline_function is _jit._inline_fresh_ir
    assert worker.inline_ir is _jit._inline_ir_copying_once


def test_inlining_without_the_copies_gives_numbas_llvm_ir():
    # each in a new process: numba numbers blocks and inlined variables from
    # process-wide counters, so two compiles in one process differ in names
    fresh, numbas = _llvm("schedbench"), _llvm("numba")
    assert "_first_stop_after" in fresh and "_middle" in fresh and "impl" in fresh  # inlined calls' variables
    assert fresh == numbas
    assert fresh.endswith("marked blocks left: 0\n")  # every block copies as numba's again


def test_a_compile_lock_held_elsewhere_is_passed_by_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    holder = (
        "import sys, numba\n"
        "from schedbench import _jit\n"
        f"numba.config.CACHE_DIR = {str(tmp_path)!r}\n"
        "with _jit.compile_lock('a loop'):\n"
        "    print('held', flush=True)\n"
        "    sys.stdin.readline()\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "held\n"
        with _jit.compile_lock("a loop", wait=False) as held:
            assert not held
        with _jit.compile_lock("another loop", wait=False) as held:
            assert held
    finally:
        proc.communicate("\n", timeout=60)
    with _jit.compile_lock("a loop", wait=False) as held:
        assert held


def test_compile_flags_hash_and_compare_as_numbas_do():
    """Equal flags (every option's value, set or default) compare equal and hash alike;
    flags that differ in one option compare unequal, as numba's own say."""
    from numba.core import targetconfig
    from numba.core.compiler import Flags

    assert targetconfig.TargetConfig.__eq__ is _jit._flags_eq_of_what_is_set
    plain, explicit, other = Flags(), Flags(), Flags()
    explicit.nrt, explicit.error_model = plain.nrt, plain.error_model  # set to the defaults
    other.error_model = "numpy" if plain.error_model != "numpy" else "python"
    for a, b in [(plain, explicit), (plain, other), (explicit, other), (other, other.copy())]:
        assert (a == b) == _jit._flags_eq(a, b)
        assert (a != b) == (not _jit._flags_eq(a, b))
        assert hash(a) == _jit._flags_hash(a)
    assert plain == explicit and hash(plain) == hash(explicit) and plain != other
    assert {plain: 1}[explicit] == 1  # a cache keyed on flags finds equal ones
    other.nrt, other.boundscheck, other.inline = True, True, "always"  # an unhashable value (InlineOptions)
    assert hash(other) == hash(other.copy()) and other == other.copy()
    assert (plain == 3) is False


def test_llvm_runs_at_o2_unless_numba_opt_is_set():
    import os

    code = "import numba, schedbench._jit; print(int(numba.config.OPT))"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_OPT"}
    levels = [subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True).stdout.strip()
              for e in (env, {**env, "NUMBA_OPT": "3"})]
    assert levels == ["2", "3"]


def test_a_kernel_called_with_constants_is_compiled_once_for_their_plain_types():
    """Constants passed to a called kernel type as literals; numba would compile the
    callee once per literal value (here four times), the package's decorators once."""
    numba_callee = numba.njit(lambda a, sign, flag: a[0] + (sign if flag else -sign))
    callee = _jit.internal_kernel(lambda a, sign, flag: a[0] + (sign if flag else -sign))
    caller_numba = numba.njit(lambda a: numba_callee(a, 1, True) + numba_callee(a, -1, False)
                              + numba_callee(a, 1, False) + numba_callee(a, -1, True))
    caller = numba.njit(lambda a: callee(a, 1, True) + callee(a, -1, False) + callee(a, 1, False)
                        + callee(a, -1, True))
    a = np.arange(3, dtype=np.int64)
    assert caller(a) == caller_numba(a) == 0
    assert len(numba_callee.signatures) == 4  # numba's own: the literals, so this test can fail
    assert [str(t) for t in callee.signatures[0]] == ["array(int64, 1d, C)", "int64", "bool"]
    assert len(callee.signatures) == 1
