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
