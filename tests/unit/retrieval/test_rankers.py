"""The ranker registry: a kind is a class and one line in RANKERS (and its entry in the config schema's enum, held to
the registry here); RankerSpec's capabilities and build_ranker both come from the registered type."""
import numpy as np
import pytest

from toolgate.config import Text
from toolgate.core import rankers
from toolgate.core.rankers import RANKERS, BM25Ranker, RankerSpec, RankerType, build_ranker, fit_ranker, size_bytes
from toolgate.core.schemas import schema
from toolgate.core.scores import scores_of


class Overlap:
    """A test kind: the number of words a request shares with each document."""

    @classmethod
    def from_spec(cls, spec: dict, build) -> "Overlap":
        return cls()

    def fit(self, docs):
        self.docs = [set(d.lower().split()) for d in docs]
        return self

    def score_many(self, queries):
        return np.array([[len(set(q.lower().split()) & d) for d in self.docs] for q in queries], float)

    def score(self, query):
        return self.score_many([query])[0]

    def size_bytes(self) -> int:
        return sum(len(w) for d in self.docs for w in d)


def test_the_config_schema_enumerates_the_registered_types():
    entry = schema("config")["properties"]["rankers"]["additionalProperties"]
    assert entry["properties"]["type"]["enum"] == list(RANKERS)
    embeds = next(c["if"]["properties"]["type"]["enum"] for c in entry["allOf"] if c["then"] == {"required": ["encoder"]})
    assert embeds == rankers.kinds("embeds")  # the schema asks an encoder of exactly the kinds that run one


def test_a_registered_type_builds_and_scores_through_the_normal_path(monkeypatch, small_catalog):
    monkeypatch.setitem(RANKERS, "overlap", RankerType(Overlap.from_spec))
    spec = {"type": "overlap", "variant": "E0"}
    assert isinstance(build_ranker(spec, 3, True), Overlap)
    r = RankerSpec.of(spec)
    assert (r.lexical, r.embeds, r.encoder_gate, r.hybrid, r.members) == (False, False, False, False, ())
    ranker = fit_ranker(spec, small_catalog, ("en",), Text(3, True))
    rows = [{"utterance_id": "a", "text": "make call now"}, {"utterance_id": "b", "text": "set alarm please"}]
    s = scores_of(ranker, small_catalog, rows)
    assert s.matrix.shape == (2, len(small_catalog))
    assert s.tool_ids[s.matrix.argmax(1)].tolist() == ["make_call", "set_alarm"] and s.matrix.max() == 2
    assert size_bytes(ranker) == ranker.size_bytes() > 0


def test_capabilities_come_from_the_registered_type(monkeypatch):
    monkeypatch.setitem(RANKERS, "bm25", RankerType(BM25Ranker.from_spec, lexical=False, encoder_gate=True))
    assert not RankerSpec.of({"type": "bm25"}).lexical and RankerSpec.of({"type": "bm25"}).encoder_gate
    assert rankers.kinds("lexical") == []


def test_an_unknown_type_names_the_registered_ones(monkeypatch):
    monkeypatch.setitem(RANKERS, "overlap", RankerType(Overlap.from_spec))
    with pytest.raises(ValueError, match="unknown ranker type 'nope' .known: bm25, dense, maxsim, hybrid, overlap."):
        build_ranker({"type": "nope", "variant": "E0"}, 3, True)
    with pytest.raises(ValueError, match="fitted member by member"):
        build_ranker({"type": "hybrid", "members": ["a", "b"], "method": "rrf"}, 3, True)


def test_bm25_from_spec_takes_the_entry_and_n_gram_settings():
    ranker = build_ranker({"type": "bm25", "k1": 0.9, "idf": "robertson", "tokenizer": "jamo"}, 2, False)
    index = ranker.index
    assert (index.k1, index.b, index.idf_variant, index.tokenizer, index.ngram, index.pad) == (0.9, 0.75, "robertson",
                                                                                               "jamo", 2, False)
