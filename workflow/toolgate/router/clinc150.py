"""CLINC150, the public out-of-scope benchmark (Larson et al., EMNLP-IJCNLP 2019; CC BY 3.0), under its published
oos-threshold protocol: an intent classifier trained on the training split; the threshold on its top probability
chosen on the validation split (in-scope and out-of-scope requests, the threshold with the best accuracy there,
out of scope counted as its own class); in-scope accuracy and out-of-scope recall reported on the test split, beside
the paper's Table 2 (oos-threshold, Full). The classifier is :mod:`toolgate.router.examples`' model on a frozen
encoder, in two conditions: the training split as each intent's examples, and the intent's name alone.
"""
from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd

from ..metrics import auc
from .examples import fit_examples

log = logging.getLogger(__name__)
OOS = "oos"
# Larson et al. 2019, Table 2, oos-threshold on the Full training set: (in-scope accuracy, out-of-scope recall) in %.
PUBLISHED = {"BERT": (96.2, 52.3), "MLP on USE": (93.4, 49.1), "Rasa": (90.9, 31.2), "DialogFlow": (90.8, 26.7),
             "SVM": (88.2, 18.0)}
COLUMNS = ["system", "condition", "train_texts", "threshold", "in_scope_accuracy", "oos_recall", "auroc",
           "fpr_at_95_recall", "source"]


def read_clinc(folder) -> dict[str, list[tuple[str, str]]]:
    """The splits of data_full.json: in-scope train/val/test and oos_train/oos_val/oos_test, rows (text, intent)."""
    from ..external.sources import locate

    path = locate("clinc150", folder) / "data_full.json"
    return {k: [(str(t), str(i)) for t, i in v] for k, v in json.loads(path.read_text(encoding="utf-8")).items()}


def threshold_on(p: np.ndarray, pred: np.ndarray, gold: np.ndarray) -> float:
    """The threshold on top probability with the best accuracy (below it: out of scope), the lowest on ties."""
    best, best_acc = 0.0, -1.0
    for t in np.unique(np.concatenate([[0.0], p])):
        acc = float((np.where(p >= t, pred, OOS) == gold).mean())
        if acc > best_acc + 1e-12:
            best, best_acc = float(t), acc
    return best


def scored(model, encode, rows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(top intent, its probability, gold) of ``rows``."""
    pred, p = model.top_action(encode([t for t, _ in rows]))
    return pred, p, np.array([i for _, i in rows])


def condition_row(name: str, model, encode, data: dict, n_train: int) -> dict:
    """One condition: threshold on validation, the four figures on test."""
    pv, ppv, gv = scored(model, encode, data["val"] + data["oos_val"])
    t = threshold_on(ppv, pv, gv)
    pt, ppt, gt = scored(model, encode, data["test"] + data["oos_test"])
    inscope = gt != OOS
    decided = np.where(ppt >= t, pt, OOS)
    keep95 = np.quantile(ppt[inscope], 0.05)  # the threshold that keeps 95% of in-scope requests
    return {"system": "toolgate examples model", "condition": name, "train_texts": n_train, "threshold": t,
            "in_scope_accuracy": 100 * float((decided[inscope] == gt[inscope]).mean()),
            "oos_recall": 100 * float((decided[~inscope] == OOS).mean()),
            "auroc": auc(ppt, inscope.astype(int)), "fpr_at_95_recall": float((ppt[~inscope] >= keep95).mean()),
            "source": "this run"}


def clinc150_frame(data: dict, encode, c: float = 10.0) -> pd.DataFrame:
    """Both conditions on ``data`` (:func:`read_clinc`) with ``encode`` (texts -> unit embeddings), then the
    published rows. Out-of-scope training requests are never used (the oos-threshold protocol)."""
    train = data["train"]
    names = sorted({i for _, i in train})
    rows = []
    for name, texts, labels in (("examples (training split)", [t for t, _ in train], [i for _, i in train]),
                                ("intent names only", [n.replace("_", " ") for n in names], names)):
        log.info("clinc150: %s, %d training texts", name, len(texts))
        rows.append(condition_row(name, fit_examples(encode(texts), labels, c), encode, data, len(texts)))
    rows += [{"system": s, "condition": "published, oos-threshold, Full", "in_scope_accuracy": a, "oos_recall": r,
              "source": "Larson et al. 2019, Table 2"} for s, (a, r) in PUBLISHED.items()]
    return pd.DataFrame(rows).reindex(columns=COLUMNS)
