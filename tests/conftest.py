import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow"))


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
    for name in ("workflow", "data", "config", "envs", "tests/expected"):
        shutil.copytree(ROOT / name, dst / name, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


@pytest.fixture
def repo_copy(tmp_path):
    return copy_repo(tmp_path / "repo")
