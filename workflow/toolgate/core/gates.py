"""A router's gate: any gate of the signal registry, computed from what the artifact carries (the catalog's embeddings
per encoder and, for exemplar kNN, the exemplar index), with the gate study's own formulas.

The one difference from the study: a deployed router compares a request with every exemplar, the study only with
the training folds' ones outside the request's own pair.
"""
from __future__ import annotations

import numpy as np

from .bm25 import docs_sha256
from .catalog import index_text
from .inputs import Columns, exemplar_max, query_lengths, request_signals
from .models import payload_scores
from .signals import Signal, gate_inputs

EMBEDDINGS = "embeddings.npz"


def texts_sha256(catalog: list[dict], variant: str, langs) -> str:
    """The key of a catalog's embeddings and BM25 index: sha256 of the index texts embedded or indexed, in catalog
    order."""
    return docs_sha256([index_text(t, variant, langs) for t in catalog])


def needs_exemplars(reg: dict[str, Signal], gate: str, encoder: str) -> bool:
    return any(s.kind == "exemplar" and s.ranker == encoder for s in gate_inputs(reg, gate))


def gate_entry(reg: dict[str, Signal], gate: str, payloads: dict, lexical: str, top_k: int) -> dict:
    """The manifest's ``gate``: the signal, the payload of a fitted one (gates.json's fit on the main set)."""
    s = reg[gate]
    return {"signal": gate, "kind": s.kind, "label": s.label, "lexical": lexical, "top_k": top_k,
            "log_odds": s.log_odds, "payload": payloads[gate] if s.inputs else None}


class GateRuntime:
    """The gate of a loaded router. ``exemplars``: each encoder's exemplar index (rows: unit-norm embeddings);
    ``text``: the manifest's text settings (``ngram`` and ``pad``: :attr:`toolgate.core.runtime.Router.text`).

    Signals are numpy columns (:class:`toolgate.core.inputs.Columns`): a band loads and decides without pandas or
    the config (issue 37)."""

    def __init__(self, entry: dict, exemplars: dict[str, np.ndarray], text):
        # whole numbers as integers (the schema's integer takes 3.0 too): they cut rows and n-grams
        self.entry = {**entry, "top_k": int(entry["top_k"])}
        self.exemplars, self.text = exemplars, text

    def signals(self, texts, lexical_actions: np.ndarray, queries: dict) -> Columns:
        """Every raw signal of the registry for ``texts`` (columns as in gate/signals.csv); ``queries``: per encoder
        (cosines over the actions, request embeddings)."""
        knn = {n: exemplar_max(emb, self.exemplars[n]) for n, (_, emb) in queries.items()}
        return request_signals((self.entry["lexical"], lexical_actions), {n: c for n, (c, _) in queries.items()},
                               query_lengths(texts, self.text), self.entry["top_k"], knn)

    def values(self, signals) -> np.ndarray:
        """The gate's value per request of ``signals``: a fitted gate's log-odds, else the raw signal."""
        fit = self.entry["payload"]
        return payload_scores(fit, signals) if fit else np.asarray(signals[self.entry["signal"]], float)
