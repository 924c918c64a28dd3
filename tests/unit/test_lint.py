"""The tree is pyflakes-clean under the project's ruff settings (pyproject.toml, [tool.ruff]), and pytest collects
every folder of tests."""
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
