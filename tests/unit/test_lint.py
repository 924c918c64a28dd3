"""The tree is pyflakes-clean under the project's ruff settings (pyproject.toml, [tool.ruff]), no function of the
package takes more than ``MAX_PARAMS`` parameters, comments stay under ``MAX_COMMENT_SHARE`` of the code, and
pytest collects every folder of tests."""
import ast
import io
import shutil
import subprocess
import sys
import tokenize
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


MAX_COMMENT_SHARE = 0.20  # comment lines per code line: comments say why; what a table means is in docs/metrics.md


def comment_and_code_lines(source: str) -> tuple[int, int]:
    """(comment lines, code lines) of ``source``: a comment line is a whole-line ``#`` comment or a line of a
    module, class or function docstring; blank lines count as neither."""
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docs = {line for n in ast.walk(ast.parse(source)) if isinstance(n, kinds) and ast.get_docstring(n, clean=False)
            is not None for line in range(n.body[0].lineno, n.body[0].end_lineno + 1)}
    comments = {t.start[0] for t in tokenize.generate_tokens(io.StringIO(source).readline)
                if t.type == tokenize.COMMENT and not t.line[:t.start[1]].strip()}
    lines = source.splitlines()
    blank = {i for i, line in enumerate(lines, 1) if not line.strip()}
    comment = (docs | comments) - blank
    return len(comment), len(lines) - len(blank) - len(comment)


def test_the_comment_count_reads_docstrings_and_whole_line_comments_only():
    planted = (
        '"""Module.\n\nTwo lines."""\n'
        "# a comment\n"
        "x = 1  # a trailing comment: a code line\n"
        "s = \'\'\'# a string, not a comment\n\'\'\'\n"
        "\n"
        "def f():\n"
        "    \'\'\'Doc.\'\'\'\n"
        "    return '# no'\n"
    )
    assert comment_and_code_lines(planted) == (4, 5)


def test_comments_are_at_most_a_fifth_of_the_code():
    counts = {str(p.relative_to(ROOT)): comment_and_code_lines(p.read_text(encoding="utf-8"))
              for p in sorted((ROOT / "workflow" / "toolgate").rglob("*.py"))}
    comment, code = (sum(c[i] for c in counts.values()) for i in (0, 1))
    most = sorted(counts, key=lambda p: -counts[p][0])[:5]
    assert comment <= MAX_COMMENT_SHARE * code, (
        f"{comment} comment lines for {code} code lines ({comment / code:.3f} > {MAX_COMMENT_SHARE}); the most: "
        + ", ".join(f"{p} ({counts[p][0]})" for p in most))
