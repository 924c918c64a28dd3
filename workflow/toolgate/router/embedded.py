"""Embed once what the external study and router_loco read (rule ``embed_external``, external/embedded-{shard}.json).

An encoder cached per text (:data:`toolgate.core.embedding_cache.PER_TEXT`) encodes each distinct text once here,
in shards beside the scores (this is the head of the workflow's longest path), so neither stage encodes
afterwards; any other encoder stays with the stage that asks. The vectors are the same bits whichever asks first.
"""
from __future__ import annotations

import json
import logging

from ..core import io
from ..core.catalog import index_text, load_catalog, own_queries
from ..core.embedding_cache import PER_TEXT
from ..core.rankers import RankerSpec
from ..core.retarget import generic_requests
from ..external.adapters import load_all
from .loco import Encoders

console = logging.getLogger("toolgate.console")


def per_text_rankers(rankers: dict) -> dict[str, dict]:
    """The dense rankers whose encoder caches per text, by name."""
    specs = {n: RankerSpec.of(e) for n, e in rankers.items()}
    return {n: s.entry for n, s in specs.items() if s.encoder_gate and s.entry["encoder"]["backend"] in PER_TEXT}


def texts_of(sets: dict, catalog: list[dict], langs, variant: str) -> tuple[list[str], list[str]]:
    """(documents, queries), each distinct once: every set's catalog as index texts (``variant``, the set's
    language), its requests, its own texts and the bank in its language as queries, and the experiment's catalog's
    own texts (the fit catalog's anchor)."""
    docs, queries = [], own_queries(catalog, tuple(langs))
    for ext in sets.values():
        docs += [index_text(t, variant, (ext.lang,)) for t in ext.catalog]
        queries += [u["text"] for u in ext.utterances] + own_queries(ext.catalog, (ext.lang,))
        queries += generic_requests((ext.lang,))
    return list(dict.fromkeys(docs)), list(dict.fromkeys(queries))


def write_embedded(exp) -> dict:
    """external/embedded-{shard}.json (``output.json``): per encoder, the distinct documents and queries of shard
    ``exp.shard`` of ``exp.shards`` now cached (every shards-th text from the shard-th: jobs side by side encode
    each a share, and a text's vector is the same bits whichever job encodes it); ``input.catalog``: the
    experiment's catalog, whose own texts are the fit catalog's anchor."""
    sets, catalog = load_all(exp.external, exp.run.seed), load_catalog(exp.input.catalog, exp.run.langs)
    k, n = exp.shard, exp.shards
    out = {}
    for name, spec in per_text_rankers(exp.rankers).items():
        docs, queries = (texts[k::n] for texts in texts_of(sets, catalog, exp.run.langs, spec.get("variant", "E0")))
        console.info("embed_external: %s, shard %d of %d: %d documents and %d queries of %s", name, k + 1, n,
                     len(docs), len(queries), ", ".join(sets))
        enc = Encoders(exp.run.cache)(spec)  # as router_loco makes it
        enc.encode_documents(docs)
        enc.encode_queries(queries)
        out[name] = {"backend": spec["encoder"]["backend"], "documents": len(docs), "queries": len(queries)}
    io.write_atomic(exp.output.json, json.dumps({"sets": list(sets), "shard": [k, n], "encoders": out}, indent=2) + "\n")
    return out
