"""Embed once, at the head of the workflow, what the later stages read (rule ``embed_external``,
external/embedded-{shard}.json): the held-out sets' texts that the external study and router_loco read, and with
them the experiment's own that the scores and the leakage table read (its requests, its catalog as indexed, its
examples).

An encoder cached per text (:data:`toolgate.core.embedding_cache.PER_TEXT`) encodes each distinct text once here,
in shards side by side (the held-out sets alone left one core idle while the experiment's scores encoded after
them), so no later stage encodes; any other encoder stays with the stage that asks. The vectors are the same bits
whichever asks first.
"""
from __future__ import annotations

import json
import logging

from ..core import io
from ..core.catalog import index_text, own_queries
from ..core.rankers import per_text_rankers
from ..core.retarget import generic_requests
from ..external.adapters import load_all
from .loco import Encoders

console = logging.getLogger("toolgate.console")


def texts_of(sets: dict, catalog: list[dict], langs, variant: str, rows=()) -> tuple[list[str], list[str]]:
    """(documents, queries), each distinct once: the experiment's catalog as its scores index it (``variant``,
    ``langs``) and every set's catalog (the set's language) as documents; the experiment's requests (``rows``), its
    catalog's own texts (the fit catalog's anchor) and examples (the leakage table's), and every set's requests, own
    texts and the bank in its language as queries."""
    docs = [index_text(t, variant, tuple(langs)) for t in catalog]
    queries = [r["text"] for r in rows] + own_queries(catalog, tuple(langs))
    queries += [e["text"] for t in catalog for e in t.get("examples", [])]
    for ext in sets.values():
        docs += [index_text(t, variant, (ext.lang,)) for t in ext.catalog]
        queries += [u["text"] for u in ext.utterances] + own_queries(ext.catalog, (ext.lang,))
        queries += generic_requests((ext.lang,))
    return list(dict.fromkeys(docs)), list(dict.fromkeys(queries))


def write_embedded(exp) -> dict:
    """external/embedded-{shard}.json (``output.json``): per encoder, the distinct documents and queries of shard
    ``exp.shard`` of ``exp.shards`` now cached (every shards-th text from the shard-th: jobs side by side encode
    each a share, and a text's vector is the same bits whichever job encodes it); ``input.catalog`` and
    ``input.utterances``: the experiment's own (:func:`texts_of`)."""
    sets = load_all(exp.external, exp.run.seed)
    k, n = exp.shard, exp.shards
    out = {}
    for name, spec in per_text_rankers(exp.rankers).items():
        texts = texts_of(sets, exp.catalog, exp.run.langs, spec.get("variant", "E0"), exp.rows)
        docs, queries = (t[k::n] for t in texts)
        console.info("embed_external: %s, shard %d of %d: %d documents and %d queries of %s", name, k + 1, n,
                     len(docs), len(queries), ", ".join(sets))
        enc = Encoders(exp.run.cache)(spec)  # as router_loco makes it
        enc.encode_documents(docs)
        enc.encode_queries(queries)
        out[name] = {"backend": spec["encoder"]["backend"], "documents": len(docs), "queries": len(queries)}
    io.write_atomic(exp.output.json, json.dumps({"sets": list(sets), "shard": [k, n], "encoders": out}, indent=2) + "\n")
    return out
