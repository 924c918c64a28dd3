"""Routing by example phrases, as the routers on-device catalogs ship with (App Shortcuts phrases, Alexa samples,
Rasa examples, semantic-router utterances) do: a multinomial logistic regression over a sentence encoder's
embeddings, one class per action and the "no action" classes: ``none`` for the catalog's negatives, and the generic
out-of-scope bank under its routes (``chat``, ``delegate``) where the catalog has those route entries (under ``none``
where it has not). The route classes make an examples router's route step (chat or delegate) a decision learned
from examples too, as its actions' are.

An action's training texts are its ``examples`` and its own name and description in each language, so a catalog
without examples still gets a descriptions-only model. The model is fitted with scikit-learn and applied with numpy
(:meth:`ExampleModel.proba`); the encoder is never fine-tuned.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .catalog import actions
from .scores import ROUTE_STEP_IDS, has_routes

NONE = ""  # the "no action" class of the catalog's negatives (and of the bank where the catalog has no routes)
NOT_ACTIONS = (NONE, *ROUTE_STEP_IDS)  # classes that are no action: route ids are reserved where a catalog has routes


@dataclass(frozen=True)
class ExampleModel:
    classes: np.ndarray  # action ids, then route ids, NONE last where the model has them
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
        """(top action id, its probability) per request; the no-action classes' mass lowers every action's."""
        p = self.proba(emb)
        acts = ~np.isin(self.classes, NOT_ACTIONS)
        pa = p[:, acts]
        return self.classes[acts][pa.argmax(1)], pa.max(1)


def training_texts(catalog: list[dict], langs, bank: list[tuple[str, str]], use_examples: bool = True):
    """(texts, labels): each action's examples (``use_examples``) and its name + description per language; the
    catalog's negatives (``use_examples``) labelled NONE; ``bank`` ((text, route) rows) labelled by route where the
    catalog has the route entries, NONE where it has not."""
    texts, labels = [], []
    for t in actions(catalog):
        own = [f"{t['names'].get(lang, '')} {t['descriptions'].get(lang, '')}".strip() for lang in langs]
        mine = own + ([e["text"] for e in t.get("examples", []) if e["lang"] in langs] if use_examples else [])
        texts += [x for x in mine if x]
        labels += [t["id"]] * len([x for x in mine if x])
    if use_examples:
        neg = [e["text"] for t in catalog for e in t.get("negatives", []) if e["lang"] in langs]
        texts, labels = texts + neg, labels + [NONE] * len(neg)
    routed = has_routes([t["id"] for t in catalog])
    return texts + [t for t, _ in bank], labels + [r if routed else NONE for _, r in bank]


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
    order = np.lexsort((np.isin(lr.classes_, ROUTE_STEP_IDS), lr.classes_ == NONE))  # actions, routes, none last
    return ExampleModel(lr.classes_[order].astype(str), coef[order], intercept[order])


def action_matrix(model: ExampleModel, emb: np.ndarray, catalog: list[dict]) -> np.ndarray:
    """(requests x catalog) each entry's probability under ``model`` (an action's, a route entry's where the model
    has route classes; 0 for an entry it has no class of): the examples model as a ranker's score matrix, whose
    route columns choose the route step (:func:`toolgate.core.scores.route_choice`)."""
    p = model.proba(emb)
    col = {c: j for j, c in enumerate(model.classes) if c != NONE}
    out = np.zeros((len(emb), len(catalog)))
    for k, t in enumerate(catalog):
        if t["id"] in col:
            out[:, k] = p[:, col[t["id"]]]
    return out


def log_odds(p: np.ndarray) -> np.ndarray:
    """The examples model's gate value: the log-odds of the top action's probability (finite at 0 and 1)."""
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return np.log(p) - np.log1p(-p)
