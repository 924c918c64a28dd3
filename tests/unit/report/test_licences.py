"""The report's Setup names the licences of the data the experiment used: the external sets it read, and an
imported set's."""
import json
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from conftest import utterance, write_jsonl
from toolgate.config import load
from toolgate.report.build import build

ROOT = Path(__file__).resolve().parents[3]


def test_the_report_names_the_licences_of_the_data_it_used_after_its_scope(tmp_path, small_catalog):
    tables = tmp_path / "tables"
    tables.mkdir()
    pd.DataFrame({"ranker": ["bm25"], "lang": ["all"], "slice": ["match"], "top1": [0.9]}).to_csv(
        tables / "selection.csv", index=False)
    (tmp_path / "import.json").write_text(json.dumps({"licenses": [{"name": "MIT", "file": "src/LICENSE"}]}))
    inputs = SimpleNamespace(reported=ROOT / "data/paper/reported.yaml",
                             catalog=write_jsonl(tmp_path / "c.jsonl", small_catalog),
                             utterances=write_jsonl(tmp_path / "u.jsonl", [utterance(1), utterance(1, lang="ko")]))
    config = load(ROOT / "config.yaml")

    def licences(cfg):
        paragraphs = [b[1] for b in build("x", tables, tmp_path, inputs, cfg) if b[0] == "p"]
        return paragraphs[next(i for i, p in enumerate(paragraphs) if p.startswith("Scope: ")) + 1]

    both = licences(config)
    assert both.startswith("Data licences: ") and both.count("under Apache-2.0") == 2
    assert "FunctionChat-Bench" in both and "BFCL" in both
    assert both.endswith("The imported set's licence: MIT (`src/LICENSE`).")
    # an imported catalog's experiment that runs no external study cites its own data's licence alone
    alone = licences({**config, "utterances": {**config["utterances"], "source": "file"},
                      "external": {**config["external"], "enabled": False}})
    assert alone == ("Data licences: this experiment's set is an import (below); it read no other external data set. "
                     "The imported set's licence: MIT (`src/LICENSE`).")
