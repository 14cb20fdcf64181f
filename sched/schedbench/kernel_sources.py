"""The package's source files that its compiled kernels can depend on.

numba's cache folder is keyed on a digest of these files (:func:`schedbench._jit._cache_dir`)
rather than of every file of the package, so that an edit of the command line, the
reports, the sweeps or a Python policy does not make every kernel compile again.

numba checks a cached kernel against its own file only: a kernel whose machine code
inlines a kernel, a constant or a state layout of another module is served stale when
that other module alone changes.  So the digest must cover every file whose change can
alter some compiled code.  The rule is static and errs on the side of too many files:

* a module **holds compiled code** when it imports numba or llvmlite (anything from
  them: kernels, intrinsics, overloads, typing), imports one of the kernel decorators of
  :mod:`schedbench._jit`, or defines a named-tuple class.  The last is for state
  classes: numba keys a named tuple's type on its class and field types, not its field
  names, so a field order changed in a module with no kernel would otherwise be read
  with the old offsets;
* the kernel sources are those modules and every package module they import,
  transitively: every ``import`` statement of the file, those inside functions included.
  ``from P import n`` follows the submodule ``P.n`` when there is one, else ``P`` itself
  (the names a package's ``__init__`` defines).  A package's ``__init__`` that no kernel
  source imports a name from is left out: running it on import changes no kernel.

Parsing every file takes about 0.3 s, so :mod:`schedbench._jit` remembers the result per
digest of all the files.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable
from pathlib import Path

PACKAGE = __name__.partition(".")[0]
_COMPILING_PACKAGES = ("numba", "llvmlite")
_KERNEL_DECORATORS = frozenset({"kernel", "inline_kernel", "internal_kernel"})


def digest(root: Path, paths: Iterable[Path]) -> str:
    """sha1 (hex) of ``paths``: each file's path inside ``root`` and its bytes, in the
    order given."""
    h = hashlib.sha1()
    for path in paths:
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def modules(root: Path) -> dict[str, Path]:
    """{dotted name inside the package ('' for the package itself): file} of every ``.py``
    file under ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imported(name: str, is_package: bool, node: ast.Import | ast.ImportFrom, known) -> set[str]:
    """The package modules one import statement of module ``name`` reads."""
    if isinstance(node, ast.Import):
        targets = [a.name.split(".") for a in node.names]
        return {".".join(t[1:]) for t in targets if t[0] == PACKAGE and ".".join(t[1:]) in known}
    if node.level:
        base = name.split(".") if name else []
        if not is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        base = ".".join([*base, *([node.module] if node.module else [])])
    elif node.module and node.module.split(".")[0] == PACKAGE:
        base = node.module.partition(".")[2]
    else:
        return set()
    out = set()
    for alias in node.names:
        sub = f"{base}.{alias.name}" if base else alias.name
        out.add(sub if sub in known else base)
    return {m for m in out if m in known}


def _holds_compiled_code(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(a.name.split(".")[0] in _COMPILING_PACKAGES for a in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            top = (node.module or "").split(".")[0]
            if node.level == 0 and top in _COMPILING_PACKAGES:
                return True
            if (node.module or "").endswith("_jit") and any(a.name in _KERNEL_DECORATORS for a in node.names):
                return True
        elif isinstance(node, ast.ClassDef):
            if any(isinstance(b, ast.Name | ast.Attribute) and ast.unparse(b).endswith("NamedTuple")
                   for b in node.bases):
                return True
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith("namedtuple"):
            return True
    return False


def kernel_sources(root: Path) -> list[Path]:
    """The files under ``root`` (the package folder) whose change can change a compiled
    kernel, by the module docstring's rule, in path order."""
    known = modules(root)
    graph, seeds = {}, []
    for name, path in known.items():
        tree = ast.parse(path.read_bytes(), filename=str(path))
        is_package = path.name == "__init__.py"
        graph[name] = set().union(*(_imported(name, is_package, node, known) for node in ast.walk(tree)
                                    if isinstance(node, ast.Import | ast.ImportFrom)))
        if _holds_compiled_code(tree):
            seeds.append(name)
    reached, stack = set(), seeds
    while stack:
        name = stack.pop()
        if name not in reached:
            reached.add(name)
            stack.extend(graph[name] - reached)
    return sorted(known[name] for name in reached)
