"""The package as a user installs it: a wheel built from the project, installed without the source tree, loads its
schemas from the installed package (package data), validates a catalog and runs an exported router."""
import os
import shutil
import subprocess
import sys

from conftest import ROOT


def test_a_wheel_installed_apart_from_the_source_tree_validates_and_decides(tmp_path):
    from router_fixtures import make_artifact

    src, dist, site = tmp_path / "src", tmp_path / "dist", tmp_path / "site"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):  # a copy: the build writes build/ beside its sources
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "workflow" / "toolgate", src / "workflow" / "toolgate",
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist),
                    str(src)], check=True, capture_output=True)
    wheel = next(dist.glob("toolgate-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True)
    (tmp_path / "r").mkdir()
    router = make_artifact(tmp_path / "r", real_gate=False)
    env = {**os.environ, "PYTHONPATH": str(site)}  # before the editable install's path: the wheel's package wins

    def toolgate(*args):
        return subprocess.run([sys.executable, "-m", "toolgate.cli", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True)

    where = subprocess.run([sys.executable, "-c", "import toolgate; print(toolgate.__file__)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(site))
    assert sorted(p.name for p in (site / "toolgate" / "schemas").glob("*.yaml")) == [
        "catalog.schema.yaml", "config.schema.yaml", "expected.schema.yaml", "router.schema.yaml",
        "utterances.schema.yaml"]
    valid = toolgate("validate", "--catalog", str(ROOT / "data" / "catalogs" / "device70" / "catalog.jsonl"))
    assert valid.returncode == 0 and "70" in valid.stdout, valid.stderr
    decided = toolgate("decide", "--router", str(router), "alarm at 7")
    assert decided.returncode == 0 and decided.stdout.split()[0] in {"act", "ask", "delegate", "chat"}, decided.stderr
