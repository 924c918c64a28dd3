"""router.export: thresholds a deployed router ships."""
import numpy as np

from toolgate.router.export import in_gap


def test_a_threshold_moves_into_the_gap_below_it():
    v = np.array([0.1, 1 / 6, 0.5, 0.9])
    assert in_gap(v, 0.5) == (1 / 6 + 0.5) / 2  # a value 1e-10 below 0.5 still counts as >= the threshold
    assert in_gap(v, 0.1) == 0.0 and in_gap(v, 0.3) == (1 / 6 + 0.3) / 2  # nothing below the lowest: 0
    for t in (0.1, 0.3, 0.5, 0.9):
        assert ((v >= in_gap(v, t)) == (v >= t)).all()


def test_adapt_writes_the_router_for_another_catalog_and_fits_nothing(tmp_path, capsys):
    """toolgate adapt: the artifact re-targeted to another catalog loads (its index and embeddings are checked against
    that catalog) and decides as Router.on_catalog does; thresholds, calibrator and gate are the original's."""
    import json

    from conftest import write_jsonl
    from router_fixtures import catalog, make_artifact
    from toolgate.cli import main
    from toolgate.core.runtime import Router
    from toolgate.router.export import adapt_router

    (tmp_path / "src").mkdir()
    src = make_artifact(tmp_path / "src", real_gate=False)
    small = [t for t in catalog() if t["id"] != "make_call"]
    path = write_jsonl(tmp_path / "small.jsonl", small)
    m, written = adapt_router(src, path, tmp_path / "out")
    original, adapted = Router.load(src), Router.load(tmp_path / "out")
    assert written == "new" and m["catalog"]["actions"] == 3 and m["adapted_from"]["router"] == str(src)
    for key in ("calibrator", "thresholds", "gate", "pipeline", "limits"):
        assert m[key] == original.manifest[key], key
    texts = ["alarm at 7", "wifi on", "call mom now", "tell me a joke"]
    want = original.on_catalog(small, tuple(original.manifest["langs"])).decide_many(texts)
    assert [(d.kind, d.tool, d.candidates) for d in adapted.decide_many(texts)] == \
        [(d.kind, d.tool, d.candidates) for d in want]
    assert main(["adapt", str(src), "--catalog", str(path), "--out", str(tmp_path / "out")]) == 2  # not empty
    assert main(["adapt", str(src), "--catalog", str(path), "--out", str(tmp_path / "out"), "--force"]) == 0
    pin = capsys.readouterr().out.rsplit("digest ", 1)[1].strip()  # printed to be pinned, and it pins this router
    assert pin == json.loads((tmp_path / "out" / "router.json").read_text())["sealed"]
    assert Router.load(tmp_path / "out", sha256=pin)
    assert main(["adapt", str(tmp_path / "nowhere"), "--catalog", str(path), "--out", str(tmp_path / "o2")]) == 2
