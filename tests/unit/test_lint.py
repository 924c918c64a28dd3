"""The tree is pyflakes-clean under the project's ruff settings (pyproject.toml, [tool.ruff]), no function of the
package takes more than ``MAX_PARAMS`` parameters, and pytest collects every folder of tests."""
import ast
import shutil
import subprocess
import sys
import tomllib

import pytest

from conftest import ROOT


def test_ruff_finds_nothing():
    pytest.importorskip("ruff", reason="ruff is in the test extra")
    ruff = shutil.which("ruff") or f"{sys.executable} -m ruff"
    proc = subprocess.run([*ruff.split(), "check", "--output-format", "concise", "workflow", "tests"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]


def test_testpaths_name_every_folder_of_tests():
    """pyproject's testpaths set the order `make test` runs the files in; a folder left out of it is never run."""
    paths = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["testpaths"]
    folders = {f"tests/{d.name}" for d in (ROOT / "tests").iterdir() if d.is_dir() and any(d.rglob("test_*.py"))}
    assert set(paths) == folders and not list((ROOT / "tests").glob("test_*.py"))


MAX_PARAMS = 6  # more, and a function's parameters want grouping into a small dataclass


def parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    """A function's parameters, positional, keyword-only, *args and **kwargs, less a leading self or cls."""
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def too_many(source: str, where: str = "<planted>") -> list[str]:
    """``file:line name (n)`` of every function (lambdas too) in ``source`` with more than ``MAX_PARAMS`` parameters."""
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
    nodes = sorted((n for n in ast.walk(ast.parse(source)) if isinstance(n, kinds)), key=lambda n: n.lineno)
    return [f"{where}:{n.lineno} {getattr(n, 'name', 'lambda')} ({len(parameters(n))})"
            for n in nodes if len(parameters(n)) > MAX_PARAMS]


def test_the_parameter_count_counts_every_kind_and_leaves_out_self():
    planted = (
        "def six(a, b, /, c, *args, d, **kw): pass\n"
        "def seven(a, b, /, c, *args, d, e, **kw): pass\n"
        "class C:\n"
        "    def method(self, a, b, c, d, e, f): pass\n"
        "    def many(self, a, b, c, d, e, f, g): pass\n"
        "    @classmethod\n"
        "    def make(cls, a, b, c, d, e, f, *, g=1): pass\n"
        "async def coro(a, b, c, d, e, f, g): pass\n"
        "f = lambda a, b, c, d, e, f, g: a\n"
    )
    assert too_many(planted) == ["<planted>:2 seven (7)", "<planted>:5 many (7)", "<planted>:7 make (7)",
                                 "<planted>:8 coro (7)", "<planted>:9 lambda (7)"]


def test_no_function_takes_more_than_six_parameters():
    package = ROOT / "workflow" / "toolgate"
    found = [hit for path in sorted(package.rglob("*.py"))
             for hit in too_many(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert not found, f"more than {MAX_PARAMS} parameters (group them): " + "; ".join(found)
