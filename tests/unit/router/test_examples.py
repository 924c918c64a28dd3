"""The examples model (toolgate.core.examples) and the catalog's examples and negatives."""
import json

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from conftest import ROOT
from toolgate.core import io
from toolgate.core.catalog import actions, load_catalog
from toolgate.core.errors import InputError
from toolgate.core.examples import NONE, action_matrix, fit_examples, training_texts
from toolgate.core.scores import route_choice

CATALOG = load_catalog(ROOT / "data" / "catalogs" / "device70" / "catalog.jsonl")


def test_device70_carries_examples_in_both_languages_and_negatives():
    for t in actions(CATALOG):
        langs = [e["lang"] for e in t["examples"]]
        assert langs.count("ko") >= 4 and langs.count("en") >= 4, t["id"]
    texts = [e["text"] for t in CATALOG for f in ("examples", "negatives") for e in t.get(f, [])]
    assert len(texts) == len(set(texts)) and sum(len(t.get("negatives", [])) for t in CATALOG) >= 70


def test_training_texts_label_examples_own_texts_negatives_and_the_bank():
    bank = [("hello there", "chat"), ("weather in Busan", "delegate")]
    texts, labels = training_texts(CATALOG, io.LANGS, bank)
    alarm = [x for x, y in zip(texts, labels) if y == "set_alarm"]
    assert "알람 설정 지정한 시간에 알람을 설정합니다." in alarm and len(alarm) == 2 + len(CATALOG[0]["examples"])
    negatives = sum(len(t.get("negatives", [])) for t in CATALOG)
    assert labels[-2:] == ["chat", "delegate"] and texts[-2:] == ["hello there", "weather in Busan"]
    assert labels.count(NONE) == negatives  # the negatives: no route is known for them
    no_routes = actions(CATALOG)  # a catalog without the route entries: the bank is 'none' too
    assert training_texts(no_routes, io.LANGS, bank)[1][-2:] == [NONE, NONE]
    plain, plain_labels = training_texts(CATALOG, io.LANGS, [], use_examples=False)
    assert len(plain) == 2 * len(actions(CATALOG)) and NONE not in plain_labels


def test_route_classes_choose_the_route_step_and_are_never_an_action():
    x = np.array([[3.0, 0, 0], [0, 3.0, 0], [0, 0, 3.0], [-3.0, -3.0, -3.0]] * 5)
    y = np.array(["set_alarm", "chat", "delegate", NONE] * 5)
    model = fit_examples(x, y, c=10.0)
    assert list(model.classes) == ["set_alarm", "chat", "delegate", NONE]
    tool, _ = model.top_action(x[:3])
    assert list(tool) == ["set_alarm"] * 3
    m = action_matrix(model, x[:3], CATALOG)
    ids = [t["id"] for t in CATALOG]
    assert list(route_choice(m, ids)) == ["delegate", "chat", "delegate"]  # the higher of the two route columns
    assert m[1, ids.index("chat")] > 0.5 and m[2, ids.index("delegate")] > 0.5 and m[:, ids.index("clarify")].max() == 0


def test_the_model_matches_scikit_learn_and_keeps_none_last():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(60, 5))
    y = np.array(["b", NONE, "a"] * 20)
    x[y == "a"] += 2
    model = fit_examples(x, y, c=1.0)
    assert list(model.classes) == ["a", "b", NONE]
    ref = LogisticRegression(C=1.0, max_iter=5000).fit(x, y)
    want = ref.predict_proba(x)[:, [list(ref.classes_).index(c) for c in model.classes]]
    assert np.allclose(model.proba(x), want, atol=1e-9)
    tool, p = model.top_action(x[:3])
    assert set(tool) <= {"a", "b"} and np.all((0 < p) & (p < 1))


def test_two_classes_give_the_same_probabilities_as_scikit_learn():
    x = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array(["a", "a", NONE, NONE])
    model = fit_examples(x, y)
    ref = LogisticRegression(C=10.0, max_iter=5000).fit(x, y)
    assert np.allclose(model.proba(x)[:, 0], ref.predict_proba(x)[:, list(ref.classes_).index("a")])


def test_one_class_is_refused():
    with pytest.raises(ValueError, match="two classes"):
        fit_examples(np.zeros((2, 3)), ["a", "a"])


@pytest.mark.parametrize("change,field", [({"examples": [{"text": "hi", "lang": "fr"}]}, "examples[0].lang"),
                                          ({"negatives": [{"text": " ", "lang": "en"}]}, "negatives"),
                                          ({"examples": [{"text": "x", "lang": "en", "tool": "y"}]}, "examples")])
def test_a_bad_example_is_refused_naming_its_field(tmp_path, change, field):
    path = tmp_path / "catalog.jsonl"
    path.write_text(json.dumps({**CATALOG[0], **change}, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_catalog(path)
    assert err.value.field.startswith(field)


def test_a_route_entry_carries_no_examples(tmp_path):
    route = next(t for t in CATALOG if t["kind"] == "route")
    path = tmp_path / "catalog.jsonl"
    rows = [CATALOG[0], {**route, "examples": [{"text": "tell me a joke", "lang": "en"}]}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError, match="only an action carries examples"):
        load_catalog(path)


def test_character_n_grams_are_scikit_learns_char_wb_tf_idf():
    from sklearn.feature_extraction.text import TfidfVectorizer

    from toolgate.core.examples import CharGrams
    from toolgate.core.text import normalize

    texts = ["Turn  on Wi-Fi", "와이파이 꺼 줘", "a", "I", "Ｆｕｌｌ-width ＡＢＣ", "알람 알람 알람", "go go"]
    ref = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 4), sublinear_tf=True, preprocessor=normalize)
    want = ref.fit_transform(texts)
    grams = CharGrams.fit(texts, (1, 4))
    assert list(grams.vocabulary) == ref.get_feature_names_out().tolist()
    assert np.allclose(grams.idf, ref.idf_, atol=1e-6)
    new = ["turn off wifi", "블루투스 켜", "", "zzz"]  # unseen n-grams count for nothing; no known one: a zero row
    assert np.allclose(grams.matrix(texts + new).toarray(), np.vstack([want.toarray(), ref.transform(new).toarray()]),
                       atol=1e-6)


def test_a_model_with_n_grams_reads_the_texts_and_needs_them():
    texts = ["turn on the flashlight", "flashlight on", "start the stopwatch", "stopwatch go", "tell me a joke", "hi"]
    labels = ["set_flashlight", "set_flashlight", "start_stopwatch", "start_stopwatch", "chat", "chat"]
    blind = np.ones((len(texts), 2), np.float32)  # an encoder that tells nothing apart
    model = fit_examples(blind, labels, 10.0, texts, (1, 4))
    assert model.gram_coef.shape == (3, len(model.grams.vocabulary)) and model.gram_coef.dtype == np.float32
    tool, _ = model.top_action(blind[:2], ["stopwatch please", "flashlight please"])
    assert list(tool) == ["start_stopwatch", "set_flashlight"]
    with pytest.raises(ValueError, match="texts"):
        model.proba(blind[:2])
    with pytest.raises(ValueError, match="training texts"):
        fit_examples(blind, labels, 10.0, texts[:-1], (1, 4))
    plain = fit_examples(blind, labels, 10.0)
    assert plain.grams is None and np.allclose(plain.proba(blind[:1])[0], plain.proba(blind[:1], ["x"])[0])
