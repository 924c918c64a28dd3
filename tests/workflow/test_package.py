"""The package as a user installs it: a wheel built from the project, installed without the source tree, loads its
schemas from the installed package (package data), validates a catalog and runs an exported router."""
import os
import shutil
import subprocess
import sys

from conftest import ROOT


def test_a_wheel_in_a_fresh_venv_with_numpy_alone_validates_and_decides(tmp_path):
    """The router-only install: a fresh venv, the wheel with its declared dependencies (numpy alone), commands run
    from outside the checkout. A study command says which extra it needs."""
    from router_fixtures import make_artifact

    src, dist, venv = tmp_path / "src", tmp_path / "dist", tmp_path / "venv"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):  # a copy: the build writes build/ beside its sources
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "workflow" / "toolgate", src / "workflow" / "toolgate",
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist),
                    str(src)], check=True, capture_output=True)
    wheel = next(dist.glob("toolgate-*.whl"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing of the checkout's on the path
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    py = venv / "bin" / "python"
    subprocess.run([py, "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True, env=env)
    installed = subprocess.run([py, "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True,
                               check=True, env=env).stdout
    assert {line.split("==")[0].lower() for line in installed.split()} - {"pip", "setuptools"} == {"numpy", "toolgate"}
    (tmp_path / "r").mkdir()
    router = make_artifact(tmp_path / "r", real_gate=False)

    def toolgate(*args):
        return subprocess.run([venv / "bin" / "toolgate", *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True)

    where = subprocess.run([py, "-c", "from toolgate import Router; import toolgate; print(toolgate.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(venv))
    package = next(venv.glob("lib/python*/site-packages/toolgate"))
    assert sorted(p.name for p in (package / "core" / "schemas").glob("*.yaml")) == [
        "catalog.schema.yaml", "config.schema.yaml", "expected.schema.yaml", "router.schema.yaml",
        "utterances.schema.yaml"]
    assert (package / "core" / "generic_requests.jsonl").is_file() and (package / "router" / "latency.yaml").is_file()
    assert toolgate("--version").stdout.startswith("toolgate ")
    valid = toolgate("validate", "--catalog", str(ROOT / "data" / "catalogs" / "device70" / "catalog.jsonl"))
    assert valid.returncode == 0 and "70 actions" in valid.stdout, valid.stderr
    checked = toolgate("validate", "--router", str(router))
    assert checked.returncode == 0 and "files checked" in checked.stdout, checked.stderr
    decided = toolgate("decide", "--router", str(router), "alarm at 7")
    assert decided.returncode == 0 and decided.stdout.split()[0] in {"act", "ask", "delegate", "chat"}, decided.stderr
    study = toolgate("import", "pairs", "a.json", "b.csv", "--out", "x")
    assert study.returncode == 2 and "'.[study]'" in study.stderr and "Traceback" not in study.stderr
    # the default router is named by the experiment's config, and adapt refits: both need the study's libraries
    for needs_study in (toolgate("decide", "alarm at 7"), toolgate("adapt", str(router), "--catalog", "c.jsonl",
                                                                   "--out", "y")):
        assert needs_study.returncode == 2 and "'.[study]'" in needs_study.stderr, needs_study.stderr
        assert needs_study.stderr.count("\n") == 1
