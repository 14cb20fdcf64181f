"""The decorators every engine kernel uses, numba's cache folder, the compile notice, and
numba adjusted for compile time (its inliner's copies, its flags' hashing, LLVM at -O2, a
called kernel compiled once rather than once per constant it is passed).

``kernel`` is ``numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=False)``.
Why ``_nrt=False``: the engine's hot path is many small calls that pass arrays around in
branchy loops, where numba's reference-count pruning cannot remove the atomic incref /
decref it emits for every array on every call; measured here, a fit test went from about
150 ns to 20 ns per call without them.  The price is that kernels may not allocate: every
buffer lives in a state namedtuple, allocated once in Python.  ``error_model="numpy"``
drops the zero-division checks of integer divisions, which kernels guard themselves.

``inline_kernel`` adds ``inline="always"`` (numba IR-level inlining).  A call between
kernels costs tens of nanoseconds: numba passes every array as its unpacked struct (seven
to nine machine words) and a namedtuple state as all of its arrays, so a call taking the
core costs about as much as the work of a small step.  The steps run at every event or
start are therefore inlined into the replay loop (:mod:`schedbench.core.loop`): advancing
to the next decision point (heap pop and push included), the scheduler's pass (bound into
the loop), the allocator's ``choose`` (its hook is inlined), the fit test and the timeline
row.  Inlining copies a function's IR at each call site, once
per level of nesting, and numba's compile time grows with the copies, so the rest stays in
separate kernels: ``_commit`` (a start), the queue insertion, EASY's backfill scans, the
allocators' orderings and the placement scan.  Kernels only other kernels call are
``internal_kernel``: numba skips their Python wrapper, which costs as much to compile as a
small kernel.  The replay loop is one source compiled and cached per scheduler state class and
mode; the jitted allocators share one state class (:mod:`schedbench.allocators.dispatch`),
so a loop once compiled serves every allocator, and a run compiles (or loads) its
scheduler, the allocator families and its predictor
(:mod:`schedbench.core.hooks`, :func:`schedbench.core.loop.loop_for`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import inspect
import itertools
import os
import pickle
import shutil
import string
import sys
import tempfile
import time
from pathlib import Path

import numba
from numba.core import caching, event, inline_closurecall, targetconfig, types


def cache_root() -> str:
    """numba's cache root: ``$NUMBA_CACHE_DIR`` when set, else the user cache directory
    (``~/.cache/schedbench`` on Linux).  ``make`` and the bare command line use the same."""
    root = os.environ.get("NUMBA_CACHE_DIR")
    if not root:
        import platformdirs

        root = platformdirs.user_cache_dir("schedbench")
    return root


_PACKAGE_DIR = Path(__file__).resolve().parent


def _cache_dir() -> str:
    """numba's cache folder for this package's kernel sources.

    numba keys each cached function on its own file's content, so a kernel that calls
    into another module is served stale after that module alone changes (a ``git pull``,
    an edit).  Keying the folder on a digest of every file kernels can depend on
    (:mod:`schedbench.kernel_sources`) rules that out, while an edit elsewhere (the
    command line, reports, a Python policy) keeps every compiled kernel.  Which files
    those are is found by parsing the package, once per digest of all its files: the
    answer is kept in the cache root's ``numba-keys`` folder.  Each use stamps the folder,
    and a new one prunes the old (:func:`prune`).
    """
    from . import kernel_sources as sources

    every = sources.digest(_PACKAGE_DIR, sorted(_PACKAGE_DIR.rglob("*.py")))
    memo = Path(cache_root(), "numba-keys", every)
    try:
        key = memo.read_text()
    except OSError:
        key = ""
    else:
        with contextlib.suppress(OSError):
            os.utime(memo)  # in use (see prune)
    if len(key) != 40 or not set(key) <= set(string.hexdigits):
        key = sources.digest(_PACKAGE_DIR, sources.kernel_sources(_PACKAGE_DIR))
        with contextlib.suppress(OSError):  # a read-only cache root: parse again next time
            memo.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=memo.parent, prefix=".tmp-")
            with os.fdopen(fd, "w") as fh:
                fh.write(key)
            os.replace(tmp, memo)
    folder = Path(cache_root(), f"numba-{key[:12]}")
    _mark_used(folder)
    return str(folder)


# Old kernels' folders: every edit of a kernel source starts a new folder (about 10 MB
# each), so one is pruned when a new one is made.  The KEEP_RECENT most recently used
# always stay (switching between a few branches loads rather than compiles); beyond those
# a folder goes once unused for IDLE_S (not sooner: another checkout's long run may still
# be using it, and at worst recompiles), and any folder unused for MAX_IDLE_S goes.
KEEP_RECENT = 8
IDLE_S = 86_400
MAX_IDLE_S = 30 * 86_400


def _mark_used(folder: Path) -> None:
    """Stamp ``folder`` as used now (its modification time); when it is new, prune the
    other kernel folders and remembered answers first (:func:`prune`).  A cache root that
    cannot be written is left as it is."""
    with contextlib.suppress(OSError):
        if folder.is_dir():
            os.utime(folder)
            return
        prune(folder.parent, keep=folder.name)
        folder.mkdir(parents=True, exist_ok=True)


def prune(root: Path, keep: str = "", now: float | None = None) -> list[Path]:
    """Remove the kernel folders (``numba-<digest>``) of ``root`` that are no longer worth
    keeping, ``keep`` excepted: any unused for MAX_IDLE_S, and those beyond the
    KEEP_RECENT - 1 most recently used others once unused for IDLE_S; and remembered
    kernel-source digests (``numba-keys``) unused for MAX_IDLE_S.  Returns what it
    removed."""
    now = time.time() if now is None else now
    folders = []
    for path in root.glob("numba-*"):
        if path.name in (keep, "numba-keys") or not path.is_dir():
            continue
        with contextlib.suppress(OSError):
            folders.append((path.stat().st_mtime, path))
    folders.sort(reverse=True)
    gone = []
    for rank, (used, path) in enumerate(folders):
        idle = now - used
        if idle > MAX_IDLE_S or (rank >= KEEP_RECENT - 1 and idle > IDLE_S):
            shutil.rmtree(path, ignore_errors=True)
            gone.append(path)
    for path in (root / "numba-keys").glob("*"):
        with contextlib.suppress(OSError):
            if now - path.stat().st_mtime > MAX_IDLE_S:
                path.unlink()
                gone.append(path)
    return gone


numba.config.CACHE_DIR = _cache_dir()


def _llvm_at_o2() -> None:
    """LLVM optimises kernels at -O2, not numba's default -O3, unless ``NUMBA_OPT`` is set.

    More than half of compiling conservative's loop is LLVM's (numba's ``llvm_lock``
    events: 24 of 46 CPU s), and -O2 takes a third of that off (to 15-17 s) while the
    replays run as fast: HPC2N's simulate_s under easy, prb, sfs and conservative, and
    the burst cases on nodes, within the spread of -O3's (docs/internals/performance.md,
    "LLVM at -O2").  Set directly: numba reads its environment again only when a
    ``NUMBA_`` variable changes."""
    level = getattr(numba.core.config, "_OptLevel", None)
    if "NUMBA_OPT" not in os.environ and level is not None:
        numba.config.OPT = level(2)


_llvm_at_o2()


def _numba_typing_without_cffi() -> None:
    """Import numba's cffi typing support as if cffi were not installed.

    numba's typing context, built when the first kernel of a process is loaded, imports
    ``numba.core.typing.cffi_utils``, which builds a ``cffi.FFI()`` (its C parser) when
    cffi is importable: 25-30 ms of every command, for a feature no kernel here uses.
    cffi is installed (python-mip needs it), so it is hidden for that one import (numba's
    own no-cffi path); python-mip imports it as usual afterwards."""
    if "cffi" in sys.modules or "numba.core.typing.cffi_utils" in sys.modules:
        return
    sys.modules["cffi"] = None  # makes `import cffi` raise ImportError
    try:
        import numba.core.typing.cffi_utils  # noqa: F401
    finally:
        del sys.modules["cffi"]


_numba_typing_without_cffi()


class _PackageCacheLocator(caching.UserProvidedCacheLocator):
    """numba's user-folder locator, with one subfolder per package folder named by its path
    inside the package instead of numba's digest of its absolute path.

    The folder above is already keyed on the package's sources, so two checkouts of the
    same commit (a clean clone for CI, a second worktree, an installed copy) share their
    compiled kernels instead of compiling them all again; numba still checks each file's
    own content digest before it loads anything.
    """

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        inside = Path(py_file).resolve().parent.relative_to(_PACKAGE_DIR)
        self._cache_path = os.path.join(numba.config.CACHE_DIR, "schedbench", *inside.parts)

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            Path(py_file).resolve().relative_to(_PACKAGE_DIR)
        except ValueError:  # a kernel outside the package (a test's plug-in): numba's own locators
            return None
        return super().from_function(py_func, py_file)


caching.CacheImpl._locator_classes.insert(0, _PackageCacheLocator)


# --------------------------------------------------------------------------- inlining

_inline_function = inline_closurecall.InlineWorker.inline_function
_inline_ir = inline_closurecall.InlineWorker.inline_ir


def _copies_to_itself(block):
    return lambda memo: block


def _inline_ir_copying_once(self, caller_ir, block, i, callee_ir, callee_freevars, arg_typs=None,
                            fresh=False):
    """numba's ``InlineWorker.inline_ir`` (splicing an ``inline="always"`` callee's IR
    into its caller) with at most one copy of the callee's blocks.

    numba's own deep-copies the callee's IR twice before splicing it in: one copy to leave its
    argument untouched, one to return unchanged, which numba's callers discard.  Each copy
    copies block by block, each block with its own memo, so the callee's whole variable
    scope once per block.  Here the blocks are copied once, with one memo (none when
    ``fresh``: an IR built for this call site alone), and copy to themselves while
    numba's ``inline_ir`` runs, so the blocks it splices in are what its own copies would
    be (``tests/test_jit.py`` compares the LLVM IR of both).  A cold compile of a replay
    loop takes about a fifth less CPU time (docs/internals/performance.md, "numba's
    inliner without its copies"; numba issue 8989 and NVIDIA/numba-cuda issue 688
    describe the same copies)."""
    if not fresh:
        copied = callee_ir.copy()
        copied.blocks = copy.deepcopy(callee_ir.blocks)
        callee_ir = copied
    blocks = list(callee_ir.blocks.values())
    for b in blocks:
        b.__deepcopy__ = _copies_to_itself(b)  # copy.deepcopy asks the instance first
    try:
        return _inline_ir(self, caller_ir, block, i, callee_ir, callee_freevars, arg_typs=arg_typs)
    finally:
        # the caller's blocks too: on the typed path numba rebuilds the callee's IR
        # (SSA, phi stripping) before splicing, and a block rebuilt by copying another's
        # attributes would carry the marker into the caller
        for b in itertools.chain(blocks, caller_ir.blocks.values()):
            b.__dict__.pop("__deepcopy__", None)


def _inline_fresh_ir(self, caller_ir, block, i, function, arg_typs=None):
    """numba's ``InlineWorker.inline_function`` (an ``inline="always"`` kernel's call):
    its IR, built afresh for this call site, is spliced in without a copy
    (:func:`_inline_ir_copying_once`)."""
    callee_ir = self.run_untyped_passes(function)
    return _inline_ir_copying_once(self, caller_ir, block, i, callee_ir, function.__code__.co_freevars,
                                   arg_typs=arg_typs, fresh=True)


def _inline_worker_as_expected() -> bool:
    """Whether numba's inliner has the shape the two functions above replace (checked on
    import: another numba keeps its own)."""
    worker = inline_closurecall.InlineWorker
    try:
        function = list(inspect.signature(worker.inline_function).parameters)
        ir = list(inspect.signature(worker.inline_ir).parameters)
    except (TypeError, ValueError):
        return False
    return (function == ["self", "caller_ir", "block", "i", "function", "arg_typs"]
            and ir == ["self", "caller_ir", "block", "i", "callee_ir", "callee_freevars", "arg_typs"]
            and callable(getattr(worker, "run_untyped_passes", None)))


if _inline_worker_as_expected():
    inline_closurecall.InlineWorker.inline_function = _inline_fresh_ir
    inline_closurecall.InlineWorker.inline_ir = _inline_ir_copying_once


# --------------------------------------------------------------------------- compile flags

_flags_hash = targetconfig.TargetConfig.__hash__
_flags_eq = targetconfig.TargetConfig.__eq__


def _flags_set_apart_from_defaults(flags) -> tuple:
    """The options ``flags`` sets to something other than their defaults, sorted by name:
    two flag sets with the same values (every option's, set or default) have the same."""
    options = flags.options
    return tuple(sorted((name, value) for name, value in flags._values.items() if value != options[name].default))


_flags_hashes: dict[type, int] = {}


def _flags_hash_of_what_is_set(self):
    """numba's ``TargetConfig.__hash__``, ``hash(tuple(sorted(self.values())))``: sorting
    a dict sorts its keys, so it is a hash of the option names, the same for every flag
    set of a class; numba computes it (every option's value looked up) at every typing
    of an overloaded call (``templates._get_impl``'s cache key), here once per class."""
    cls = type(self)
    h = _flags_hashes.get(cls)
    if h is None:
        h = _flags_hashes[cls] = hash(tuple(sorted(self.options)))
    return h


def _flags_eq_of_what_is_set(self, other):
    """numba's ``TargetConfig.__eq__`` (every option's value equal), first on the options
    set: flags built the same way set the same (numba compares the flags of two compiles
    at each hit of ``templates._get_impl``'s cache, 165,000 times in a cold compile of
    conservative's loop)."""
    if not isinstance(other, targetconfig.TargetConfig):
        return NotImplemented
    if type(self) is type(other) and self._values == other._values:
        return True
    return _flags_set_apart_from_defaults(self) == _flags_set_apart_from_defaults(other)


def _flags_hash_and_eq_as_expected() -> bool:
    """Whether the two functions above give numba's answers on a few flag sets (checked
    on import: another numba keeps its own)."""
    try:
        from numba.core.compiler import Flags

        plain, set_default, changed = Flags(), Flags(), Flags()
        set_default.nrt = plain.nrt  # set, to its default: equal to unset
        changed.nrt = not plain.nrt
        pairs = [(plain, set_default), (plain, changed), (set_default, changed), (changed, changed.copy())]
        return (all(_flags_eq(a, b) == _flags_eq_of_what_is_set(a, b) for a, b in pairs)
                and all(_flags_hash(f) == _flags_hash_of_what_is_set(f) for f in (plain, set_default, changed)))
    except Exception:  # another numba: keep its own
        return False


if _flags_hash_and_eq_as_expected():
    targetconfig.TargetConfig.__hash__ = _flags_hash_of_what_is_set
    targetconfig.TargetConfig.__eq__ = _flags_eq_of_what_is_set

# --------------------------------------------------------------------------- calls between kernels


def _call_template_without_literals(dispatcher, args, kws):
    """numba's ``Dispatcher.get_call_template`` (a kernel called from another: compile,
    or find, the callee's specialisation for the argument types) with literal argument
    types widened to their plain types.

    A constant argument types as a literal (``Literal[int](1)``, ``Literal[bool](True)``),
    and numba compiles the callee once per literal value: a cold run of the tests compiled
    29 such specialisations (``_node_add_rows`` nine times for one scheduler state, a
    ``sign`` of 1 or -1 and a ``forget`` of True or False), about 10 CPU s.  The callee
    is compiled for the plain types instead, and the caller converts its constants; LLVM
    still sees both functions in one module and may propagate the constants.  No kernel
    of the package needs a literal argument: one that asked for it (``numba.literally``)
    would fail to type ("Cannot request literal type"), in every test that runs it, and
    would be decorated with ``numba.njit`` instead."""
    args = tuple(types.unliteral(a) for a in args)
    kws = {k: types.unliteral(v) for k, v in kws.items()}
    return type(dispatcher).get_call_template(dispatcher, args, kws)


def _called_without_literals(decorator):
    """``decorator`` (a ``numba.njit(...)``) whose dispatchers, when another kernel calls
    them, compile for plain argument types (:func:`_call_template_without_literals`)."""

    def decorate(func):
        dispatcher = decorator(func)
        dispatcher.get_call_template = functools.partial(_call_template_without_literals, dispatcher)
        return dispatcher

    return decorate


kernel = _called_without_literals(numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=False))

# Kernels only ever called from other kernels: numba skips the Python-callable wrapper,
# which costs as much to compile as a small kernel itself.
internal_kernel = _called_without_literals(numba.njit(
    cache=True, nogil=True, error_model="numpy", _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True
))

# See the module docstring for which kernels are inlined and why.
inline_kernel = numba.njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")


def bound(dispatcher, *args):
    """The compiled entry point of ``dispatcher`` for the types of ``args`` (compiled or
    loaded from the cache now if need be).  Calling it skips numba's per-call type
    resolution, which for a namedtuple of arrays (the core, a scheduler's state) costs
    about 3 us, most of a Python policy's decision point.  Only for arguments of exactly
    these types: rebind when a state object is replaced by one of another type."""
    return dispatcher.compile(tuple(dispatcher.typeof_pyval(a) for a in args))


# --------------------------------------------------------------------------- cache index

_load_index = caching.IndexDataCacheFile._load_index


def _load_index_tolerantly(self):
    """numba's cache index, or an empty one when it names a class this process cannot
    import.  A loop's index lists every signature it was compiled for; a plug-in's state
    class defined in a module that is not importable here (a test file, another
    environment sharing the cache) would otherwise make every later load of that loop
    fail.  An empty index only means a recompile."""
    try:
        return _load_index(self)
    except (AttributeError, ImportError, pickle.UnpicklingError, EOFError):
        return {}


caching.IndexDataCacheFile._load_index = _load_index_tolerantly


@contextlib.contextmanager
def _locked(path: str, wait: bool = True):
    """An exclusive advisory lock (``flock``) on the file ``path``, held for the block;
    no lock where ``fcntl`` is missing (Windows).  Yields whether it is held: always when
    ``wait``, else False when another process holds it (the block runs without it)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield True
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _save_serialised(self, key, data):
    """numba's ``IndexDataCacheFile.save``, one process at a time per index file, data
    file first.

    numba's own reads the index, picks the first free data file name, writes the index and
    then the data, with no lock.  Two processes saving two signatures of one function at
    once (sweep workers compiling easy+ff and easy+bf: one loop index per scheduler class)
    could both pick ``name.1.nbc``: one entry lost from the index, or worse, the index
    naming the data of the other signature, which numba loads without checking its key.
    Under the lock each save sees the other's entries; writing the data before the index
    means an index entry never names a file not yet complete."""
    with _locked(self._index_path + ".lock"):
        overloads = self._load_index()
        data_name = overloads.get(key)
        if data_name is None:
            taken = set(overloads.values())
            data_name = next(n for n in map(self._data_name, itertools.count(1)) if n not in taken)
        self._save_data(data_name, data)
        if overloads.get(key) != data_name:
            overloads[key] = data_name
            self._save_index(overloads)


caching.IndexDataCacheFile.save = _save_serialised


def compile_lock(what: str, wait: bool = True):
    """A lock, shared by every process using this cache folder, for compiling ``what``
    (a kernel and its signature, as a string): the second process to ask waits for the
    first's compile and then loads its result from the cache instead of compiling the same
    machine code again (:mod:`schedbench.sweep.warm`).  It yields whether it holds the
    lock: without ``wait``, False at once when another process does."""
    name = hashlib.sha1(what.encode()).hexdigest()[:16]
    return _locked(os.path.join(numba.config.CACHE_DIR, "locks", f"{name}.lock"), wait)


# --------------------------------------------------------------------------- compile notice


class _CompileNotice(event.Listener):
    """Says once on stderr, when numba starts compiling (not when it loads from its
    cache), that it is doing so."""

    def __init__(self, message: str):
        self.message = message
        self.said = False

    def on_start(self, ev):
        if not self.said:
            self.said = True
            print(self.message, file=sys.stderr, flush=True)

    def on_end(self, ev):
        pass


def notify_compiles(what: str):
    """A context manager under which the first numba compile prints one line on stderr
    ("compiling the kernels for WHAT ..."); loads from the cache print nothing."""
    message = (
        f"schedbench: compiling the kernels for {what} (once; cached in {cache_root()}) ..."
    )
    return event.install_listener("numba:compile", _CompileNotice(message))
