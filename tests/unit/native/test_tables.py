"""Native tool calling, the tables: deployment outcomes and accuracy; paper values cited by reported.yaml key."""
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import yaml

from conftest import ROOT, write_jsonl
from native_fixtures import AMBIGUOUS, lexical_scores, sample_rows
from toolgate.config import run as run_config
from toolgate.core.scores import save_scores
from toolgate.experiment import Experiment
from toolgate.native import tables
from toolgate.native.client import RECORD_COLUMNS


def test_lexical_gap_over_in_catalog_utterances(small_catalog):
    rows = sample_rows()
    assert tables.lexical_gap(rows, lexical_scores(rows, small_catalog)) == (0.75, 1.0)
    assert tables.lexical_gap(rows, lexical_scores(rows, small_catalog), k=1) == (0.75, 0.75)
    assert all(np.isnan(tables.lexical_gap(rows[3:4], lexical_scores(rows, small_catalog))))  # no in-catalog row


def test_write_native_tables(small_catalog, tmp_path):
    rows = sample_rows()
    cat = write_jsonl(tmp_path / "catalog.jsonl", small_catalog)
    utt = write_jsonl(tmp_path / "utterances.jsonl", rows)
    save_scores(tmp_path / "bm25.npz", lexical_scores(rows, small_catalog))
    dep = {"checkpoint": "g", "model": "google/gemma-4-E2B-it", "parser": "pythonic", "deployed": False,
           "stage": "weights_not_admitted", "error": AMBIGUOUS,
           "environment": {"vllm": "0.27.1", "gpu": "NVIDIA H200", "gpu_memory": "143771 MiB", "driver": "570.1"}}
    (tmp_path / "g.deployment.json").write_text(json.dumps(dep))
    (tmp_path / "g.records.csv").write_text(",".join(RECORD_COLUMNS) + "\n")
    exp = Experiment(SimpleNamespace(run=run_config(0, ["ko", "en"])),
                     SimpleNamespace(catalog=cat, utterances=utt, lexical=tmp_path / "bm25.npz",
                                     deployments=[tmp_path / "g.deployment.json"], records=[tmp_path / "g.records.csv"]),
                     SimpleNamespace(deployment=tmp_path / "t" / "native_deployment.csv",
                                     calls=tmp_path / "t" / "native_calls.csv"))
    dep_df, calls = tables.write_native_tables(exp)
    assert dep_df.loc[0, "gpu"] == "NVIDIA H200" and "AmbiguousGlobalPerLayerAttributeError" in dep_df.loc[0, "error"]
    assert calls.empty
    md = (tmp_path / "t" / "native_deployment.md").read_text()
    assert "deployment outcome, not an accuracy result" in md and "weights_not_admitted" in md
    calls_md = (tmp_path / "t" / "native_calls.md").read_text()
    reported = [e["key"] for e in yaml.safe_load((ROOT / "data" / "paper" / "reported.yaml").read_text(encoding="utf-8"))]
    for text, prefixes in ((md, tables.DEPLOYMENT_PAPER), (calls_md, tables.CALLS_PAPER)):
        for p in prefixes:
            assert f"`{p}" in text and any(k.startswith(p) for k in reported)
    assert {"native.lfm25.no_tool_call.full.percent", "native.lfm25.no_tool_call.top5.percent",
            "rerank.recovered_share.native"} <= {k for k in reported if k.startswith(tables.CALLS_PAPER)}
    assert "%" not in calls_md.split("\n\n")[1]  # the note cites keys, not the paper's numbers
    assert pd.read_csv(tmp_path / "t" / "native_calls.csv").empty
