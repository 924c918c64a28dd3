"""Routing by example phrases, as the routers on-device catalogs ship with (App Shortcuts phrases, Alexa samples,
Rasa examples, semantic-router utterances) do: a multinomial logistic regression over a sentence encoder's
embeddings, one class per action and one ``none`` class (the catalog's negatives and the generic out-of-scope bank).

An action's training texts are its ``examples`` and its own name and description in each language, so a catalog
without examples still gets a descriptions-only model. The model is fitted with scikit-learn and applied with numpy
(:meth:`ExampleModel.proba`); the encoder is never fine-tuned.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .catalog import actions, is_action

NONE = ""  # the "no action" class


@dataclass(frozen=True)
class ExampleModel:
    classes: np.ndarray  # action ids, NONE last where the model has it
    coef: np.ndarray  # classes x embedding size
    intercept: np.ndarray

    @classmethod
    def of(cls, entry: dict, arrays: dict) -> "ExampleModel":
        """The model a manifest's ``examples`` entry and its arrays (embeddings.npz) describe."""
        return cls(np.array(entry["classes"], dtype=str), np.asarray(arrays["examples__coef"], float),
                   np.asarray(arrays["examples__intercept"], float))

    def proba(self, emb: np.ndarray) -> np.ndarray:
        """(requests x classes) class probabilities of request embeddings."""
        z = emb @ self.coef.T + self.intercept
        z = np.exp(z - z.max(1, keepdims=True))
        return z / z.sum(1, keepdims=True)

    def top_action(self, emb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(top action id, its probability) per request; the none class's mass lowers every action's probability."""
        p = self.proba(emb)
        acts = self.classes != NONE
        pa = p[:, acts]
        return self.classes[acts][pa.argmax(1)], pa.max(1)


def training_texts(catalog: list[dict], langs, bank: list[str], use_examples: bool = True):
    """(texts, labels): each action's examples (``use_examples``) and its name + description per language; the
    catalog's negatives (``use_examples``) and ``bank`` labelled NONE."""
    texts, labels = [], []
    for t in actions(catalog):
        own = [f"{t['names'].get(lang, '')} {t['descriptions'].get(lang, '')}".strip() for lang in langs]
        mine = own + ([e["text"] for e in t.get("examples", []) if e["lang"] in langs] if use_examples else [])
        texts += [x for x in mine if x]
        labels += [t["id"]] * len([x for x in mine if x])
    if use_examples:
        neg = [e["text"] for t in catalog for e in t.get("negatives", []) if e["lang"] in langs]
        texts, labels = texts + neg, labels + [NONE] * len(neg)
    return texts + list(bank), labels + [NONE] * len(bank)


def fit_examples(emb: np.ndarray, labels, c: float = 10.0) -> ExampleModel:
    """The logistic regression (L2, inverse strength ``c``, lbfgs: deterministic) on training embeddings."""
    from sklearn.linear_model import LogisticRegression

    labels = np.asarray(labels)
    if len(set(labels)) < 2:
        raise ValueError("an example model needs two classes at least (two actions, or an action and 'none')")
    lr = LogisticRegression(C=c, max_iter=5000).fit(emb, labels)
    coef, intercept = lr.coef_, lr.intercept_
    if len(lr.classes_) == 2:  # scikit-learn keeps one row for two classes: the second class's log-odds
        coef, intercept = np.vstack([-coef / 2, coef / 2]), np.array([-intercept[0] / 2, intercept[0] / 2])
    order = np.argsort(lr.classes_ == NONE, kind="stable")  # the none class last
    return ExampleModel(lr.classes_[order].astype(str), coef[order], intercept[order])


def action_matrix(model: ExampleModel, emb: np.ndarray, catalog: list[dict]) -> np.ndarray:
    """(requests x catalog) each action's probability under ``model`` (route entries, and actions the model has no
    class of, 0): the examples model as a ranker's score matrix."""
    p = model.proba(emb)
    col = {c: j for j, c in enumerate(model.classes)}
    out = np.zeros((len(emb), len(catalog)))
    for k, t in enumerate(catalog):
        if is_action(t) and t["id"] in col:
            out[:, k] = p[:, col[t["id"]]]
    return out


def log_odds(p: np.ndarray) -> np.ndarray:
    """The examples model's gate value: the log-odds of the top action's probability (finite at 0 and 1)."""
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return np.log(p) - np.log1p(-p)
