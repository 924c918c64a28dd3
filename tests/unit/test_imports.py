"""The package's import graph has no cycle, counting imports inside functions too (a lazy import that breaks a
cycle hides it rather than removing it). The package root is left out: it holds only ``__version__`` and the
lazy ``toolgate.Router`` of the public API, which every module may read."""
import ast
from pathlib import Path

from conftest import ROOT

PKG = ROOT / "workflow" / "toolgate"


def _module(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            mod = (f"{base}.{node.module}" if node.module else base) if node.level else node.module
            out |= {mod} | {f"{mod}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


def graph() -> dict[str, set[str]]:
    modules = {_module(p): p for p in PKG.rglob("*.py")}
    modules.pop("toolgate")
    return {m: {i for i in _imports(p, m) if i in modules and i != m} for m, p in modules.items()}


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(edges[m]):
            if state.get(n) == "open":
                return stack[stack.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        state[m] = "done"
        stack.pop()
        return None

    return next((c for m in sorted(edges) if m not in state and (c := visit(m))), None)


def test_the_cycle_finder_finds_one():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"] and cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_in_the_package():
    assert cycle(graph()) is None, " -> ".join(cycle(graph()))


# The layers by folder, lowest first (docs/architecture.md): a module imports only from its own layer or a lower
# one. core/ is the library the router ships on; it knows nothing of tables, Snakemake or pandas' studies. A new
# file takes the layer of the folder it is put in.
LAYERS = {
    "core": ["core.*"],
    "studies": None,  # every module not in another layer's folder: the studies that write tables, the benchmarks
    "report": ["report.*"],
    "interface": ["cli", "smk"],
}


def layer_of(module: str, layers=LAYERS) -> int:
    """The index of ``module``'s layer in ``layers`` (``x.*``: the folder x and everything in it)."""
    name = module.removeprefix("toolgate.")
    for i, members in enumerate(layers.values()):
        for m in members or []:
            if name == m or (m.endswith(".*") and (name == m[:-2] or name.startswith(m[:-1]))):
                return i
    return list(layers).index("studies")


def upward(edges: dict[str, set[str]], layers=LAYERS) -> list[str]:
    return [f"{m} ({list(layers)[layer_of(m, layers)]}) imports {n} ({list(layers)[layer_of(n, layers)]})"
            for m, targets in sorted(edges.items()) for n in sorted(targets) if layer_of(n, layers) > layer_of(m, layers)]


def test_the_layer_check_finds_a_planted_upward_import():
    edges = {"toolgate.core.runtime": {"toolgate.tables"}, "toolgate.tables": {"toolgate.core.io"}}
    assert upward(edges) == ["toolgate.core.runtime (core) imports toolgate.tables (studies)"]
    assert upward({"toolgate.report.build": {"toolgate.gate.study"}, "toolgate.cli": {"toolgate.report.build"}}) == []
    # a new file is placed by its folder: one added to core/ is core, and may not import a study
    assert upward({"toolgate.core.new_ranker": {"toolgate.router.select"}}) == [
        "toolgate.core.new_ranker (core) imports toolgate.router.select (studies)"]


def test_a_planted_upward_import_in_a_real_core_file_fails_the_check():
    edges = graph()
    edges["toolgate.core.runtime"] = edges["toolgate.core.runtime"] | {"toolgate.config"}
    assert upward(edges) == ["toolgate.core.runtime (core) imports toolgate.config (studies)"]


def test_every_import_goes_down_the_layers():
    assert not upward(graph()), "\n".join(upward(graph()))


def test_no_import_cycle_between_subpackages():
    """Beyond modules: the subpackages (and top-level modules) form no loop either."""
    edges: dict[str, set[str]] = {}
    for m, targets in graph().items():
        top = m.split(".")[1]
        edges.setdefault(top, set()).update(n.split(".")[1] for n in targets if n.split(".")[1] != top)
    for n in {x for t in edges.values() for x in t}:
        edges.setdefault(n, set())
    assert cycle(edges) is None, " -> ".join(cycle(edges))
