"""The on-disk embedding cache: a wrapped encoder's embeddings stored per (encoder key, role, prefix, texts)."""
from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)
console = logging.getLogger("toolgate.console")  # a rule's terminal (toolgate.smk.logged) as well as its log


class CachedEncoder:
    """Wraps an encoder; embeddings are stored per (encoder key, role, prefix, texts) under ``cache_dir``."""

    def __init__(self, encoder, cache_dir):
        self.encoder, self.cache_dir = encoder, Path(cache_dir)

    def _cached(self, texts, role, fn):
        prefix = getattr(self.encoder, f"{role}_prefix", "")  # the same model with other prefixes embeds otherwise
        digest = hashlib.sha256("\x1f".join([self.encoder.key, role, prefix, *texts]).encode()).hexdigest()[:24]
        path = self.cache_dir / f"{self.encoder.backend}-{role}-{digest}.npy"
        if path.exists():
            log.info("%s %s embeddings of %d texts read from the cache", self.encoder.backend, role, len(texts))
            return np.load(path)
        console.info("%s: encoding %d %s texts (not in the cache)", self.encoder.backend, len(texts), role)
        emb = fn(list(texts))
        log.info("%s %s embeddings of %d texts encoded and cached", self.encoder.backend, role, len(texts))
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, emb)
        os.replace(tmp, path)
        return emb

    def encode_queries(self, texts):
        return self._cached(texts, "query", self.encoder.encode_queries)

    def encode_documents(self, texts):
        return self._cached(texts, "document", self.encoder.encode_documents)
