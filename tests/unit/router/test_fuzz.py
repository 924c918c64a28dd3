"""Hypothesis over the router's inputs: any text, any --jsonl line, any manifest mutation. No traceback ever;
no ``act`` on content-free text; one request alone decides as it does in a batch."""
import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from router_fixtures import make_artifact, manifest
from toolgate.core.runtime import Router, RouterError, check_request

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
CONTENT_FREE = st.lists(st.sampled_from(list("ㅋㅠㅎㅜㅡ…!?.,~ 😀🔥💤👍\u200d\ufeff") + ["ok ", "응 ", "now ", "지금 ", "7 "]),
                        min_size=1, max_size=30).map("".join)
# Korean typed without spaces, up to the length limit: the evidence rules spell it out of these words
UNSPACED = st.lists(st.sampled_from(["알람", "와이파이", "켜", "줘", "좀", "를", "고", "7", "시", "전부", "지워", "가", "하고"]),
                    max_size=400).map("".join)


@pytest.fixture(scope="module")
def router(tmp_path_factory):
    return Router.load(make_artifact(tmp_path_factory.mktemp("fuzz"), real_gate=False))


def _forgiving(router):
    router.t_low = router.t_high = 0.0  # the band would execute everything: only the evidence rules stand between
    return router


@SETTINGS
@given(st.text(max_size=1200) | UNSPACED)
def test_any_text_is_decided_or_refused_in_one_line(router, text):
    try:
        d = router.decide(text)
    except RouterError as exc:
        assert "\n" not in str(exc)
        return
    assert d.kind in {"act", "ask", "delegate", "chat"} and 0 <= d.p_in_catalog <= 1


@SETTINGS
@given(CONTENT_FREE)
def test_content_free_text_is_never_executed(router, text):
    r = _forgiving(router)
    try:
        check_request(text, r.max_chars)
    except RouterError:
        return
    assert r.evidence.content_free(text) and r.decide(text).kind != "act"


@SETTINGS
@given(st.lists(st.text(min_size=1, max_size=60), min_size=1, max_size=6))
@example(texts=["_CALL"])  # CI's find: BM25 alone summed in another order than the batch, a last bit apart
def test_decide_equals_decide_many(router, texts):
    try:
        many = router.decide_many(texts)
    except RouterError:
        return
    for text, d in zip(texts, many):
        one = router.decide(text)
        assert (one.kind, one.tool, one.reason, one.candidates) == (d.kind, d.tool, d.reason, d.candidates)
        assert one.p_in_catalog == pytest.approx(d.p_in_catalog)


@SETTINGS
@given(st.binary(max_size=200))
def test_any_jsonl_line_gets_a_decision_or_its_own_error(router, raw):
    from toolgate.core.runtime import line_text
    try:
        router.decide(line_text(raw.replace(b"\n", b" ") + b"\n"))
    except RouterError as exc:
        assert "\n" not in str(exc)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=6)


@pytest.fixture(scope="module")
def artifact_dir(tmp_path_factory):
    return make_artifact(tmp_path_factory.mktemp("manifests"), real_gate=False)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))


@SETTINGS
@given(st.data())
def test_any_manifest_mutation_loads_or_is_refused_in_one_line(artifact_dir, tmp_path_factory, data):
    m = manifest(artifact_dir)
    path = data.draw(st.sampled_from([p for p in _paths(m) if p]))
    target = m
    for k in path[:-1]:
        target = target[k]
    if data.draw(st.booleans()):
        del target[path[-1]]
    else:
        target[path[-1]] = data.draw(JSON)
    folder = tmp_path_factory.mktemp("m")
    for name in ("bm25.index", "catalog.jsonl", "embeddings.npz"):
        (folder / name).write_bytes((artifact_dir / name).read_bytes())
    (folder / "router.json").write_text(json.dumps(m, allow_nan=True))
    try:
        Router.load(folder).decide("alarm at 7")  # what loads also decides
    except RouterError as exc:
        assert "\n" not in str(exc)


def test_a_version_with_a_newline_is_refused_in_one_line(artifact_dir, tmp_path):
    """The fuzz test's find: a toolgate_version of another major version holding a newline was echoed as it was."""
    m = json.loads((artifact_dir / "router.json").read_text())
    m["toolgate_version"] = "9\nexport me"
    for name in ("bm25.index", "catalog.jsonl", "embeddings.npz"):
        (tmp_path / name).write_bytes((artifact_dir / name).read_bytes())
    (tmp_path / "router.json").write_text(json.dumps(m))
    with pytest.raises(RouterError, match="another major version") as e:
        Router.load(tmp_path)
    assert "\n" not in str(e.value)
