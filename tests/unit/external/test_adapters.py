"""toolgate.external.adapters and .experiment: the three sets in the project's formats, and the FunctionChat experiment."""
import json
from collections import Counter

import numpy as np
import pytest

from toolgate.core import schemas
from toolgate.core.catalog import tool_id
from toolgate.core.errors import InputError
from toolgate.external import adapters as A
from toolgate.external import experiment as E
from toolgate.external import sources as S
from toolgate.utterances import check_utterances


def _valid(ext):
    ids = [t["id"] for t in ext.catalog]
    assert len(ids) == len(set(ids))
    for i, row in enumerate(ext.catalog, 1):
        schemas.check_schema(f"<{ext.dataset}>", i, row, "catalog")
    check_utterances(list(enumerate(ext.utterances, 1)), ext.catalog, f"<{ext.dataset}>", langs=(ext.lang,))
    n = len(ext.utterances)
    assert len(ext.candidates) == len(ext.clusters) == len(ext.conditions) == n
    known = set(ids)
    for u, cands in zip(ext.utterances, ext.candidates):
        assert cands and set(cands) <= known and len(set(cands)) == len(cands)
        assert u["text"].strip() and u["lang"] == ext.lang
        if u["gold_tool"] is not None:
            assert u["gold_tool"] in cands
    assert set(ext.names) == known


def test_singlecall_adapter(fc_single):
    _valid(fc_single)
    assert len(fc_single.utterances) == 500 and fc_single.lang == "ko"
    assert Counter(fc_single.conditions) == {c: 100 for c in A.SINGLECALL_CONDITIONS}
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


def test_bfcl_adapter(bfcl):
    _valid(bfcl)
    assert bfcl.lang == "en"
    assert Counter(bfcl.conditions) == {"multiple": 200, "live_multiple": 1053, "irrelevance": 240, "live_irrelevance": 880}
    inside = np.isin(bfcl.conditions, A.BFCL_RELEVANT)
    assert np.array_equal(bfcl.in_catalog.astype(bool), inside)
    assert len(set(bfcl.clusters)) == len(bfcl.utterances)
    # dotted names map to snake_case ids and the mapping is kept
    dotted = {i: n for i, n in bfcl.names.items() if "." in n}
    assert dotted and all(i == tool_id(n) or i.startswith(tool_id(n) + "_") for i, n in dotted.items())
    first = bfcl.utterances[0]
    assert first["utterance_id"] == "multiple_0" and bfcl.names[first["gold_tool"]] == "triangle_properties.get"


def test_bfcl_limit_is_seeded_subsample(mirror):
    a = A.bfcl(S.locate("bfcl", mirror), subsets=("irrelevance",), limit=30, seed=1)
    b = A.bfcl(S.locate("bfcl", mirror), subsets=("irrelevance",), limit=30, seed=1)
    ids = [u["utterance_id"] for u in a.utterances]
    assert len(ids) == 30 and ids == [u["utterance_id"] for u in b.utterances]
    assert ids == sorted(ids, key=lambda s: int(s.split("_")[1]))  # file order kept
    with pytest.raises(ValueError, match="unknown BFCL subset"):
        A.bfcl(S.locate("bfcl", mirror), subsets=("simple",))


def test_load_all_reads_only_the_configured_sets(mirror):
    """external.sets: the functionchat experiment holds BFCL alone out (its own data is FunctionChat's)."""
    from toolgate.config import section

    ext = section("external", {"enabled": True, "mirror": str(mirror), "bfcl_limit": 5, "sets": ["bfcl"]})
    assert list(A.load_all(ext, 13)) == ["bfcl"]
    both = section("external", {"enabled": True, "mirror": str(mirror), "bfcl_limit": 5,
                                "sets": ["bfcl", "functionchat_calldecision"]})
    assert list(A.load_all(both, 13)) == ["functionchat_calldecision", "bfcl"]


def test_functionchat_experiment_removes_the_reject_tools(mirror):
    catalog, utts, info = E.functionchat_experiment(seed=13, mirror=mirror)
    ids = {t["id"] for t in catalog}
    assert {"chat", "delegate", "clarify"} <= ids
    assert info["call_rows"] + info["reject_rows"] == info["requests"] == 100
    assert all(u["gold_tool"] in ids for u in utts if u["gold_tool"])
    # the REJECT rows' correct tools (their CALL twin's gold) are not in the catalog
    cd = A.functionchat_calldecision(S.locate("functionchat", mirror))
    gold_of = {c: u["gold_tool"] for u, c in zip(cd.utterances, cd.clusters) if u["gold_tool"]}
    kept_reject = {u["pair_id"] for u in utts if u["gold_tool"] is None}
    reject_clusters = {c for u, c in zip(cd.utterances, cd.clusters) if u["utterance_id"] in kept_reject}
    assert not {gold_of[c] for c in reject_clusters} & ids
    check_utterances(enumerate(utts, 1), catalog, "<fc>", ("ko",))
    assert E.functionchat_experiment(seed=13, mirror=mirror)[1] == utts


def test_a_bfcl_answer_naming_no_call_is_one_line(tmp_path):
    """A ground truth of [{}] raised StopIteration (issue 72's fuzzing): it is an InputError naming file, line and
    field."""
    (tmp_path / "possible_answer").mkdir()
    question = {"id": "multiple_0", "question": [[{"role": "user", "content": "area of a triangle"}]],
                "function": [{"name": "area", "description": "Area.", "parameters": {"type": "dict", "properties": {}}}]}
    (tmp_path / "BFCL_v4_multiple.json").write_text(json.dumps(question) + "\n")
    (tmp_path / "possible_answer" / "BFCL_v4_multiple.json").write_text(
        json.dumps({"id": "multiple_0", "ground_truth": [{}]}) + "\n")
    with pytest.raises(InputError, match="ground truth names no function call") as e:
        A.bfcl(tmp_path, subsets=("multiple",))
    first = e.value.problems[0]  # every problem of the files at once: then the question it leaves without an answer
    assert (first.line, first.field) == (1, "ground_truth") and len(e.value.problems) == 2
