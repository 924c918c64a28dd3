import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))

from toolgate.config import run as make_run  # noqa: E402  (after the path insert)
from toolgate.external import adapters as A  # noqa: E402
from toolgate.external import sources as S  # noqa: E402


def pytest_collection_modifyitems(items):
    """Mark every test with its tier, the folder under tests/ it lives in."""
    for item in items:
        tier = Path(item.fspath).relative_to(ROOT / "tests").parts[0]
        item.add_marker(getattr(pytest.mark, tier))


def tool(id_, required=("x",), kind="action", mutating=True):
    props = {p: {"type": "string", "description": {"en": p, "ko": p}} for p in ("x", "y")}
    return {"id": id_, "kind": kind, "group": "skill" if kind == "action" else "route", "domain": "d",
            "mutating": mutating, "names": {"en": id_.replace("_", " "), "ko": "알람"},
            "descriptions": {"en": f"Does {id_}.", "ko": "설명입니다."},
            "parameters": {"type": "object", "properties": props, "required": list(required)},
            "keywords": {"en": ["k"], "ko": ["키"]}}


@pytest.fixture
def small_catalog():
    return [tool("set_alarm"), tool("make_call"), tool("check_battery", required=(), mutating=False),
            tool("chat", required=(), kind="route", mutating=False)]


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def utterance(i, tool_id="set_alarm", outcome="action", slice_="match", lang="en", missing=()):
    return {"utterance_id": f"u{i}-{lang}", "pair_id": f"u{i}", "lang": lang, "text": f"request {i} {lang}",
            "gold_outcome": outcome, "gold_tool": tool_id, "slice": slice_, "subtype": "s", "missing_slots": list(missing)}


def copy_repo(dst: Path) -> Path:
    """The workflow's files (no results) copied to ``dst``, which must not exist."""
    dst.mkdir(parents=True)
    for name in ("Snakefile", "config.yaml"):
        shutil.copy(ROOT / name, dst / name)
    for name in ("workflow", "data", "config", "envs", "tests/expected", "tests/blind"):
        shutil.copytree(ROOT / name, dst / name, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


@pytest.fixture
def repo_copy(tmp_path):
    return copy_repo(tmp_path / "repo")


# ----------------------------------------------------------------------------- the external data mirror
# The read-only mirror at ../shared/external; tests that need it are skipped when it is absent.
MIRROR = ROOT.parent / "shared" / "external"


@pytest.fixture(scope="session")
def mirror() -> Path:
    if not (MIRROR / "functionchat").is_dir() or not (MIRROR / "bfcl").is_dir():
        pytest.skip("no external mirror at ../shared/external")
    return MIRROR


@pytest.fixture(scope="session")
def run0():
    """Seed 0, schema defaults for the text settings, no encoder cache."""
    return make_run(0, ("en",))


@pytest.fixture(scope="module")
def fc_single(mirror):
    return A.functionchat_singlecall(S.locate("functionchat", mirror))


@pytest.fixture(scope="module")
def fc_call(mirror):
    return A.functionchat_calldecision(S.locate("functionchat", mirror))


@pytest.fixture(scope="module")
def bfcl(mirror):
    return A.bfcl(S.locate("bfcl", mirror))
