"""The package's import graph: no cycles, the core imports no policy, and no module uses
another subpackage's ``_private`` names (the core's kernel API is :mod:`schedbench.core.api`)."""

from __future__ import annotations

import ast
from pathlib import Path

import schedbench

ROOT = Path(schedbench.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = ["schedbench", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = ROOT.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or path.is_dir()


def _imports() -> dict[str, list[tuple[str, list[str]]]]:
    """module -> [(imported module, names imported from it)], every import statement,
    function-level ones included."""
    graph = {}
    for path in sorted(ROOT.rglob("*.py")):
        name = _module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                names = [a.name for a in node.names]
                if target.startswith("schedbench"):
                    edges.append((target, names))
                    # "from . import x" imports the module x
                    edges.extend((f"{target}.{n}", []) for n in names if _is_module(f"{target}.{n}"))
            elif isinstance(node, ast.Import):
                edges.extend((a.name, []) for a in node.names if a.name.startswith("schedbench"))
        graph[name] = edges
    return graph


def _known(graph, target: str) -> str | None:
    while target and target not in graph:
        target = target.rpartition(".")[0]
    return target or None


def test_no_import_cycles():
    imports = _imports()
    graph = {m: {_known(imports, t) for t, _ in edges} - {None, m} for m, edges in imports.items()}
    # a package's __init__ importing its own submodules is not a cycle of the submodules
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(m, path):
        state[m] = 1
        for t in sorted(graph.get(m, ())):
            if t.startswith(m + "."):
                continue
            if state.get(t) == 1:
                cycle.extend(path[path.index(t):] + [t] if t in path else [m, t])
                return True
            if state.get(t) is None and visit(t, path + [t]):
                return True
        state[m] = 2
        return False

    for m in sorted(graph):
        if state.get(m) is None and visit(m, [m]):
            break
    assert not cycle, " -> ".join(cycle)


def test_the_core_imports_no_policy():
    for module, edges in _imports().items():
        if module.startswith("schedbench.core"):
            for target, _ in edges:
                assert not target.startswith(
                    ("schedbench.schedulers", "schedbench.allocators", "schedbench.policies", "schedbench.predictors")
                ), f"{module} imports {target}"


def test_no_private_name_crosses_subpackages_or_top_level_modules():
    def area(module: str) -> str:
        # a subpackage is one area; each top-level module is an area of its own
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else "<package>"

    bad = []
    for module, edges in _imports().items():
        for target, names in edges:
            if area(target) == area(module) or target == "schedbench._jit":
                continue
            bad += [f"{module}: {target}.{n}" for n in names if n.startswith("_") and n != "__version__"]
    assert not bad, bad


def test_the_graph_sees_relative_and_function_level_imports():
    graph = _imports()
    assert ("schedbench.core.hooks", ["implements", "learn", "predict", "revise", "revises"]) in graph["schedbench.predictors"]
    targets = {t for t, _ in graph["schedbench.engine.replay"]}
    assert "schedbench.engine.simulation" in targets  # imported inside replay()
    assert "schedbench.core" in targets


# --------------------------------------------------------------------------- layers

LAYER_OF = {
    "io": "io", "analysis": "analysis", "core": "core", "engine": "engine", "plan": "plan", "sweep": "sweep",
    "cli": "cli", "schedulers": "policy", "allocators": "policy", "policies": "policy", "predictors": "policy",
    "workloads": "io",
}
# what each layer may import from the package (besides the top-level infrastructure:
# errors, registry, _jit, _startup, __version__, schema); a policy is found through the registry
MAY_IMPORT = {
    "io": {"io"},
    "analysis": {"analysis", "io", "plan.accounts"},  # account shares: numpy only, shared with fair share
    "core": {"core", "io"},
    "plan": {"plan", "core", "io"},
    "policy": {"policy", "core", "plan", "io", "engine.policy"},
    "engine": {"engine", "core", "plan", "io", "policy-registry"},
    "sweep": {"sweep", "engine", "analysis", "io", "plan"},
    "cli": {"cli", "engine", "analysis", "io", "plan", "sweep", "workloads", "policy"},
}
INFRASTRUCTURE = {"schedbench", "schedbench.errors", "schedbench.registry", "schedbench.declarations", "schedbench._jit",
                  "schedbench._startup",
                  "schedbench.schema"}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return LAYER_OF.get(parts[1]) if len(parts) > 1 else None


def test_layers_import_only_downwards():
    bad = []
    for module, edges in _imports().items():
        layer = _layer(module)
        if layer is None:
            continue
        for target, _ in edges:
            if target in INFRASTRUCTURE or target == module:
                continue
            t = _layer(target)
            allowed = MAY_IMPORT[layer]
            if t == layer or t in allowed or ".".join(target.split(".")[1:3]) in allowed:
                continue
            if module.startswith("schedbench.workloads") and t == "io":
                continue
            bad.append(f"{module} ({layer}) imports {target} ({t})")
    assert not bad, "\n".join(bad)


def test_the_engine_imports_no_concrete_policy():
    for module, edges in _imports().items():
        if module.startswith("schedbench.engine"):
            for target, _ in edges:
                assert not target.startswith(
                    ("schedbench.schedulers", "schedbench.allocators", "schedbench.policies")
                ), f"{module} imports {target}: policies are found through the registry"


def test_io_and_analysis_load_no_engine_and_analysis_no_numba():
    code = (
        "import sys\n"
        "import schedbench.io.jobs, schedbench.io.machine, schedbench.io.catalog, schedbench.io.fetch\n"
        "assert not any(m.startswith(('schedbench.core', 'schedbench.engine')) for m in sys.modules), 'io'\n"
        "assert 'numba' not in sys.modules, 'io loads numba'\n"
        "import schedbench.analysis.metrics, schedbench.analysis.views\n"
        "assert 'numba' not in sys.modules, 'analysis loads numba'\n"
    )
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
