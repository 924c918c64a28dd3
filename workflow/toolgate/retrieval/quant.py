"""Quantization retention on the routing task (the second seed's lesson): reduced-precision variants against their
full-precision reference on top-1, top-5 and NDCG@10 of the gold action, not only on cosine (docs/metrics.md,
'Quantization retention').
"""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..config import Run
from ..core.catalog import actions as catalog_actions
from ..core.catalog import index_text, is_action
from ..core.embedding_cache import CachedEncoder
from ..core.encoders import ModelUnavailable, make_encoder
from ..core.errors import MissingExtra
from ..core.rankers import encoder_kwargs, encoder_rankers
from ..core.scores import candidate_mask, gold_rank, mode_note
from ..tables import write_table
from ..utterances import in_catalog, main_set

log = logging.getLogger(__name__)
console = logging.getLogger("toolgate.console")  # a rule's terminal (toolgate.smk.logged) as well as its log


def quantize_int8(x: np.ndarray) -> np.ndarray:
    """Symmetric per-vector int8 round trip (returned dequantised, float32)."""
    scale = np.abs(x).max(axis=1, keepdims=True) / 127.0
    scale = np.where(scale == 0, 1, scale)
    return (np.round(x / scale).astype(np.int8).astype(np.float32) * scale).astype(np.float32)


def binarize(x: np.ndarray) -> np.ndarray:
    return np.where(x >= 0, 1.0, -1.0).astype(np.float32)


def task_metrics(q: np.ndarray, d: np.ndarray, gold: np.ndarray, hidden: np.ndarray | None = None) -> dict:
    """Top-1, top-5 and NDCG@10 of the gold column; ``hidden`` (rows x docs, True: not a candidate) scores -inf."""
    scores = q @ d.T
    if hidden is not None:
        scores[hidden] = -np.inf
    ranks = gold_rank(scores, gold)
    return {"top1": float((ranks == 1).mean()), "top5": float((ranks <= 5).mean()),
            "ndcg10": float(np.where(ranks <= 10, 1 / np.log2(ranks + 1), 0).mean())}


def mean_cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    return float(((a * b).sum(1) / np.maximum(na * nb, 1e-12)).mean())


def _row(name, variant, ref, ref_m, var_m, cos):
    rec = {"encoder": name, "variant": variant, "reference": ref}
    for k in ("top1", "top5", "ndcg10"):
        rec[f"{k}_ref"], rec[k] = ref_m[k], var_m[k]
        rec[f"{k}_retention"] = var_m[k] / ref_m[k] if ref_m[k] else float("nan")
    rec["mean_cosine"] = cos
    return rec


def retention_frame(catalog, rows, rankers: dict, run: Run, onnx_model: str) -> pd.DataFrame:
    """``rows``: every utterance in file order; the study uses the main set's in-catalog requests.

    The dense rankers' float32 embeddings are read through the cache the scores rule filled: the same
    lists (every utterance, every catalog entry) are asked for, then the study's rows and actions taken.
    """
    langs, cache_dir = run.langs, run.cache
    acts = catalog_actions(catalog)
    ids = [t["id"] for t in acts]
    inrows = in_catalog(main_set(rows))
    gold = np.array([ids.index(r["gold_tool"]) for r in inrows])
    texts = [r["text"] for r in inrows]
    pos = {r["utterance_id"]: i for i, r in enumerate(rows)}
    q_rows = [pos[r["utterance_id"]] for r in inrows]
    d_cols = [i for i, t in enumerate(catalog) if is_action(t)]
    hidden = candidate_mask(inrows, ids, [t["kind"] for t in acts])
    recs = []
    for name in encoder_rankers(rankers):
        spec = rankers[name]
        console.info("%s: float32 vectors against int8 and binary", name)
        enc = CachedEncoder(make_encoder(encoder_kwargs(spec["encoder"]), cache_dir), cache_dir)
        d = enc.encode_documents([index_text(t, spec["variant"], langs) for t in catalog])[d_cols]
        q = enc.encode_queries([r["text"] for r in rows])[q_rows]
        ref = task_metrics(q, d, gold, hidden)
        for variant, fn in (("int8-vectors", quantize_int8), ("binary-vectors", binarize)):
            qv, dv = fn(q), fn(d)
            recs.append(_row(name, variant, "float32 vectors", ref, task_metrics(qv, dv, gold, hidden),
                             mean_cosine(q, qv)))
    if onnx_model:
        try:
            docs = [index_text(t, "E1", langs) for t in acts]
            out = {}
            for int8 in (False, True):
                console.info("ONNX %s %s: %d queries, %d documents", onnx_model, "int8" if int8 else "fp32",
                             len(texts), len(docs))
                # one thread: the rule holds one core, and two runtime threads spin against the job beside it
                # (fp32 and int8 give the same vectors bit for bit on one thread or two)
                enc = make_encoder({"backend": "onnx", "model": onnx_model, "int8": int8, "threads": 1}, cache_dir)
                out[int8] = (enc.encode_queries(texts), enc.encode_documents(docs))
            (q32, d32), (q8, d8) = out[False], out[True]
            recs.append(_row(f"onnx:{onnx_model}", "onnx-int8", "onnx fp32",
                             task_metrics(q32, d32, gold, hidden), task_metrics(q8, d8, gold, hidden), mean_cosine(q32, q8)))
        except (MissingExtra, ModelUnavailable) as exc:
            log.warning("ONNX retention not computed: %s", exc)
            recs.append({"encoder": f"onnx:{onnx_model}", "variant": "onnx-int8", "reference": f"not computed: {exc}"})
    return pd.DataFrame(recs)


def write_retention(exp):
    """``exp.rankers``: the config's entries, whose dense ones are studied; ``exp.onnx_model``: the ONNX pair's."""
    # the mismatch_hard slice stays out of this study
    df = retention_frame(exp.catalog, exp.rows, exp.rankers, exp.run, exp.onnx_model)
    write_table(df, exp.output[0], "Quantization retention on the routing task",
                "In-catalog utterances of the main set against the catalog's actions. retention = variant / reference. "
                + mode_note(exp.main), exp.seed)
    return df
