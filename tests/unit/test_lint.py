"""The tree is pyflakes-clean under the project's ruff settings (pyproject.toml, [tool.ruff])."""
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def test_ruff_finds_nothing():
    pytest.importorskip("ruff", reason="ruff is in the test extra")
    ruff = shutil.which("ruff") or f"{sys.executable} -m ruff"
    proc = subprocess.run([*ruff.split(), "check", "--output-format", "concise", "workflow", "tests"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]
