"""The report names the data licences beside its Scope: the external sets', and an imported set's."""
import json
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from conftest import utterance, write_jsonl
from toolgate.config import load
from toolgate.report.build import build

ROOT = Path(__file__).resolve().parents[3]


def test_the_report_names_the_data_licences_after_its_scope(tmp_path, small_catalog):
    tables = tmp_path / "tables"
    tables.mkdir()
    pd.DataFrame({"ranker": ["bm25"], "lang": ["all"], "slice": ["match"], "top1": [0.9]}).to_csv(
        tables / "selection.csv", index=False)
    (tmp_path / "import.json").write_text(json.dumps({"licenses": [{"name": "MIT", "file": "src/LICENSE"}]}))
    inputs = SimpleNamespace(reported=ROOT / "data/paper/reported.yaml",
                             catalog=write_jsonl(tmp_path / "c.jsonl", small_catalog),
                             utterances=write_jsonl(tmp_path / "u.jsonl", [utterance(1), utterance(1, lang="ko")]))
    paragraphs = [b[1] for b in build("x", tables, tmp_path, inputs, load(ROOT / "config.yaml")) if b[0] == "p"]
    scope = next(i for i, p in enumerate(paragraphs) if p.startswith("Scope: "))
    licences = paragraphs[scope + 1]
    assert licences.startswith("Data licences: ") and licences.count("under Apache-2.0") == 2
    assert "FunctionChat-Bench" in licences and "BFCL" in licences
    assert licences.endswith("The imported set's source states its licence: MIT (`src/LICENSE`).")
