"""External data (FunctionChat-Bench, BFCL): location, checksums, adapters, per-row candidate scoring.

Adapters run on the read-only mirror at ../shared/external (skipped when it is
absent); nothing here touches the network. Only BM25 is used, to stay fast.
"""
import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from toolgate import external as X
from toolgate import io
from toolgate.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
MIRROR = ROOT.parent / "shared" / "external"
BM25 = {"bm25": {"type": "bm25", "variant": "E1"}}

needs_mirror = pytest.mark.skipif(not (MIRROR / "functionchat").is_dir() or not (MIRROR / "bfcl").is_dir(),
                                  reason="no external mirror at ../shared/external")


@pytest.fixture(scope="module")
def fc_single():
    return X.functionchat_singlecall(X.locate("functionchat", MIRROR))


@pytest.fixture(scope="module")
def fc_call():
    return X.functionchat_calldecision(X.locate("functionchat", MIRROR))


@pytest.fixture(scope="module")
def bfcl():
    return X.bfcl(X.locate("bfcl", MIRROR))


def _valid(ext):
    ids = [t["id"] for t in ext.catalog]
    assert len(ids) == len(set(ids))
    for i, row in enumerate(ext.catalog, 1):
        io._check_schema(f"<{ext.dataset}>", i, row, "catalog")
    io.check_utterances(list(enumerate(ext.utterances, 1)), ext.catalog, f"<{ext.dataset}>", langs=(ext.lang,))
    n = len(ext.utterances)
    assert len(ext.candidates) == len(ext.clusters) == len(ext.conditions) == n
    known = set(ids)
    for u, cands in zip(ext.utterances, ext.candidates):
        assert cands and set(cands) <= known and len(set(cands)) == len(cands)
        assert u["text"].strip() and u["lang"] == ext.lang
        if u["gold_tool"] is not None:
            assert u["gold_tool"] in cands
    assert set(ext.names) == known


# ------------------------------------------------------------------------------------------ adapters

@needs_mirror
def test_singlecall_adapter(fc_single):
    _valid(fc_single)
    assert len(fc_single.utterances) == 500 and fc_single.lang == "ko"
    assert Counter(fc_single.conditions) == {c: 100 for c in X.SINGLECALL_CONDITIONS}
    sizes = {"exact": 1, "4_random": 4, "4_close": 4, "8_random": 8, "8_close": 8}
    assert all(len(c) == sizes[k] for c, k in zip(fc_single.candidates, fc_single.conditions))
    assert all(u["gold_outcome"] == "action" for u in fc_single.utterances)
    # 119 function names; convert_currency has two different definitions -> two ids
    assert len(fc_single.catalog) == 120 and len(set(fc_single.names.values())) == 119
    assert sorted(i for i, n in fc_single.names.items() if n == "convert_currency") == ["convert_currency", "convert_currency_2"]
    # the five conditions of one request share its pair and cluster
    by_pair = Counter(u["pair_id"] for u in fc_single.utterances)
    assert len(by_pair) == 100 and set(by_pair.values()) == {5}
    assert len(set(fc_single.clusters)) == 100


@needs_mirror
def test_calldecision_adapter(fc_call):
    _valid(fc_call)
    kinds = Counter(fc_call.conditions)
    assert kinds == {"call": 100, "reject": 100}  # SLOT rows ignored
    assert all(len(c) == 5 for c in fc_call.candidates)
    assert fc_call.in_catalog.sum() == 100
    gold_of = {}
    for u, cond, cl in zip(fc_call.utterances, fc_call.conditions, fc_call.clusters):
        assert (u["gold_tool"] is not None) == (cond == "call")
        assert u["pair_id"] == cl
        if cond == "call":
            gold_of[cl] = u["gold_tool"]
            assert u["text"] == cl
        else:
            assert u["gold_outcome"] == "delegate" and u["slice"] == "out"
    # every cluster is one CALL and its REJECT; the REJECT candidates lack the CALL's gold
    assert set(Counter(fc_call.clusters).values()) == {2}
    for cond, cl, cands in zip(fc_call.conditions, fc_call.clusters, fc_call.candidates):
        if cond == "reject":
            assert gold_of[cl] not in cands


@needs_mirror
def test_bfcl_adapter(bfcl):
    _valid(bfcl)
    assert bfcl.lang == "en"
    assert Counter(bfcl.conditions) == {"multiple": 200, "live_multiple": 1053, "irrelevance": 240, "live_irrelevance": 880}
    inside = np.isin(bfcl.conditions, X.BFCL_RELEVANT)
    assert np.array_equal(bfcl.in_catalog.astype(bool), inside)
    assert len(set(bfcl.clusters)) == len(bfcl.utterances)
    # dotted names map to snake_case ids and the mapping is kept
    dotted = {i: n for i, n in bfcl.names.items() if "." in n}
    assert dotted and all(i == io.tool_id(n) or i.startswith(io.tool_id(n) + "_") for i, n in dotted.items())
    first = bfcl.utterances[0]
    assert first["utterance_id"] == "multiple_0" and bfcl.names[first["gold_tool"]] == "triangle_properties.get"


@needs_mirror
def test_bfcl_limit_is_seeded_subsample():
    a = X.bfcl(X.locate("bfcl", MIRROR), subsets=("irrelevance",), limit=30, seed=1)
    b = X.bfcl(X.locate("bfcl", MIRROR), subsets=("irrelevance",), limit=30, seed=1)
    ids = [u["utterance_id"] for u in a.utterances]
    assert len(ids) == 30 and ids == [u["utterance_id"] for u in b.utterances]
    assert ids == sorted(ids, key=lambda s: int(s.split("_")[1]))  # file order kept
    with pytest.raises(ValueError, match="unknown BFCL subset"):
        X.bfcl(X.locate("bfcl", MIRROR), subsets=("simple",))


# ------------------------------------------------------------------------------------------ location

@needs_mirror
def test_mirror_copy_with_wrong_bytes_fails_checksum(tmp_path):
    shutil.copytree(MIRROR / "functionchat", tmp_path / "functionchat")
    assert X.locate("functionchat", tmp_path) == tmp_path / "functionchat"
    f = tmp_path / "functionchat" / "FunctionChat-CallDecision.jsonl"
    f.chmod(0o644)
    data = bytearray(f.read_bytes())
    data[100] ^= 1
    f.write_bytes(bytes(data))
    with pytest.raises(InputError, match="sha256 mismatch") as err:
        X.locate("functionchat", tmp_path)
    assert "FunctionChat-CallDecision.jsonl" in str(err.value)
    f.unlink()
    with pytest.raises(InputError, match="missing file"):
        X.locate("functionchat", tmp_path)


def test_locate_without_mirror_or_network_names_both_options(tmp_path, monkeypatch):
    def offline(source, dest, timeout=60):
        raise OSError("network is unreachable")

    monkeypatch.setattr(X, "_download", offline)
    with pytest.raises(X.ExternalDataUnavailable) as err:
        X.locate("bfcl", tmp_path / "no-mirror", tmp_path / "cache")
    msg = str(err.value)
    assert str(tmp_path / "no-mirror" / "bfcl") in msg and X.ENV_MIRROR in msg and "external.mirror" in msg
    assert "https://raw.githubusercontent.com/ShishirPatil/gorilla/6ea57973c7a6097fd7c5915698c54c17c5b1b6c8/" in msg
    assert "network is unreachable" in msg
    assert not list((tmp_path / "cache").rglob("*.json"))  # nothing half-written


def test_locate_uses_environment_mirror(tmp_path, monkeypatch):
    monkeypatch.setenv(X.ENV_MIRROR, str(tmp_path))
    monkeypatch.setattr(X, "_download", lambda *a, **k: (_ for _ in ()).throw(OSError("offline")))
    with pytest.raises(X.ExternalDataUnavailable, match=str(tmp_path / "functionchat")):
        X.locate("functionchat", cache=tmp_path / "cache")


@needs_mirror
def test_download_path_verifies_and_caches(tmp_path, monkeypatch):
    """The download branch, with the 'network' served from the mirror."""
    calls = []

    def fake(source, dest, timeout=60):
        calls.append(source)
        rel = source.split("/bfcl_eval/data/")[1]
        shutil.copyfile(MIRROR / "bfcl" / rel, dest)

    monkeypatch.setattr(X, "_download", fake)
    files = ["BFCL_v4_irrelevance.json"]
    folder = X.locate("bfcl", tmp_path / "none", tmp_path / "cache", files)
    assert folder == tmp_path / "cache" / "bfcl" and (folder / files[0]).is_file()
    assert calls == [X.url("bfcl", files[0])]
    X.locate("bfcl", tmp_path / "none", tmp_path / "cache", files)  # cached: no second download
    assert len(calls) == 1

    def corrupt(source, dest, timeout=60):
        Path(dest).write_bytes(b"{}\n")

    monkeypatch.setattr(X, "_download", corrupt)
    with pytest.raises(InputError, match="sha256 mismatch"):
        X.locate("bfcl", tmp_path / "none", tmp_path / "cache2", files)
    assert not (tmp_path / "cache2" / "bfcl" / files[0]).exists()


# ------------------------------------------------------------------------------------------ scoring

def _tool(i, name, desc):
    return {"id": i, "kind": "action", "group": "external", "domain": "t", "mutating": False,
            "names": {"en": name}, "descriptions": {"en": desc},
            "parameters": {"type": "object", "properties": {}, "required": []}, "keywords": {}}


def _tiny():
    catalog = [_tool("alpha", "weather", "get the weather forecast"),
               _tool("beta", "weather", "get the weather forecast"),  # same text as alpha: always tied
               _tool("gamma", "alarm", "set an alarm clock")]
    texts = ["weather forecast please", "weather forecast please", "set an alarm", "tell me a joke"]
    golds = ["alpha", "beta", "gamma", None]
    cands = [["alpha", "beta", "gamma"], ["beta", "alpha"], ["alpha", "gamma"], ["gamma"]]
    utts = [X._utt(f"t{i}", f"t{i}", "en", t, g, "tiny") for i, (t, g) in enumerate(zip(texts, golds))]
    return X.ExternalSet("bfcl", "en", catalog, utts, cands, [f"t{i}" for i in range(4)],
                         ["multiple", "multiple", "multiple", "irrelevance"], {t["id"]: t["id"] for t in catalog})


def test_row_scores_use_own_candidates_and_ties_keep_candidate_order():
    ext = _tiny()
    scores = X.row_scores(ext, BM25["bm25"])
    assert [len(s) for s in scores] == [3, 2, 2, 1]
    assert scores[0][0] == scores[0][1] > scores[0][2]  # alpha and beta tie
    assert scores[1][0] == scores[0][1] and scores[1][1] == scores[0][0]  # columns follow the row's order
    assert X.top1(scores, ext.candidates) == ["alpha", "beta", "gamma", "gamma"]
    sel = X.external_selection(BM25, {"bfcl": ext})
    row = sel.iloc[0]
    assert (row["dataset"], row["condition"], row["n"]) == ("bfcl", "multiple", 3) and row["top1"] == 1.0
    assert row["chance"] == pytest.approx(np.mean([1 / 3, 1 / 2, 1 / 2]))


def test_row_features_cap_k_and_pad_single_candidates():
    scores = [np.array([3.0]), np.array([4.0, 1.0]), np.array([0.0])]
    f = X.row_features(scores, ["a b", "c d", "e"], k=5)
    assert f.loc[0, "raw_margin"] == 3 and f.loc[0, "norm_margin"] == 1 and f.loc[0, "score_over_mean"] == 1
    assert f.loc[0, "topk_entropy"] == 0
    assert f.loc[1, "score_over_mean"] == pytest.approx(4 / 2.5)  # k = 2 candidates, not 5
    assert f.loc[2, "norm_margin"] == 0 and not f.isna().any().any()


def test_transfer_payload_is_applied_unchanged():
    import pandas as pd
    feats = pd.DataFrame({"top_score": [1.0, 2.0], "length": [3.0, 4.0]})
    payload = {"features": ["top_score", "length"], "coef": [2.0, -1.0], "intercept": 0.5}
    np.testing.assert_allclose(X._payload_scores(payload, feats), [-0.5, 0.5])


@needs_mirror
def test_external_gate_on_functionchat_with_bm25(fc_call, tmp_path):
    g3 = tmp_path / "g3.json"
    g3.write_text(json.dumps({"features": list(X._gate.FEATURES), "coef": [0, 0, 0, 0, 0, 1, 0], "intercept": -1}))
    df = X.external_gate(BM25, g3, {"functionchat_calldecision": fc_call}, n_resamples=200)
    assert list(df.columns) == ["dataset", "signal", "mode", "auc", "ci_low", "ci_high", "n_in", "n_out"]
    assert set(df["dataset"]) == {"functionchat"} and (df["n_in"] == 100).all() and (df["n_out"] == 100).all()
    assert set(df["mode"]) == {"raw", "within", "transfer"}
    assert ((df["ci_low"] <= df["auc"] + 1e-12) & (df["auc"] <= df["ci_high"] + 1e-12)).all()
    by = df.set_index("signal")["auc"]
    # the transfer model here is score_per_term alone: same ranking, same AUC
    assert by["g3_transfer"] == pytest.approx(by["score_per_term"])
    assert by["top_score"] > 0.8  # removing the right tool lowers the best lexical score


@needs_mirror
def test_selection_and_jaccard_on_mirror(fc_single, fc_call):
    sets = {"functionchat_singlecall": fc_single}
    sel = X.external_selection(BM25, sets)
    assert list(sel["condition"]) == list(X.SINGLECALL_CONDITIONS) and (sel["n"] == 100).all()
    assert sel.set_index("condition").loc["exact", "top1"] == 1.0
    summary, items = X.jaccard_external(sets)
    assert len(items) == 100 and summary.iloc[0]["n"] == 100 and summary.iloc[0]["lang"] == "ko"
    assert 0 <= summary.iloc[0]["q1"] <= summary.iloc[0]["median"] <= summary.iloc[0]["q3"] <= 1


@needs_mirror
def test_functionchat_experiment_removes_the_reject_tools():
    catalog, utts, info = X.functionchat_experiment(seed=13, mirror=MIRROR)
    ids = {t["id"] for t in catalog}
    assert {"chat", "delegate", "clarify"} <= ids
    assert info["call_rows"] + info["reject_rows"] == info["requests"] == 100
    assert all(u["gold_tool"] in ids for u in utts if u["gold_tool"])
    # the REJECT rows' correct tools (their CALL twin's gold) are not in the catalog
    cd = X.functionchat_calldecision(X.locate("functionchat", MIRROR))
    gold_of = {c: u["gold_tool"] for u, c in zip(cd.utterances, cd.clusters) if u["gold_tool"]}
    kept_reject = {u["pair_id"] for u in utts if u["gold_tool"] is None}
    reject_clusters = {c for u, c in zip(cd.utterances, cd.clusters) if u["utterance_id"] in kept_reject}
    assert not {gold_of[c] for c in reject_clusters} & ids
    io.check_utterances(enumerate(utts, 1), catalog, "<fc>", ("ko",))
    assert X.functionchat_experiment(seed=13, mirror=MIRROR)[1] == utts
