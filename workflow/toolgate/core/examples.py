"""Routing by example phrases, as the routers on-device catalogs ship with (App Shortcuts phrases, Alexa samples,
Rasa examples, semantic-router utterances) do: a multinomial logistic regression over a sentence encoder's
embeddings, one class per action and the "no action" classes: ``none`` for the catalog's negatives, and the generic
out-of-scope bank under its routes (``chat``, ``delegate``) where the catalog has those route entries (under ``none``
where it has not). The route classes make an examples router's route step (chat or delegate) a decision learned
from examples too, as its actions' are.

An action's training texts are its ``examples`` and its own name and description in each language, so a catalog
without examples still gets a descriptions-only model. Beside the embedding, the model may read the request's
character n-grams (:class:`CharGrams`, router.examples_chars), as Rasa's default pipeline reads them beside its
dense features: an encoder puts every on/off setting near every other, while the words that tell them apart
(핫스팟, 절전, stopwatch) are on the surface. The model is fitted with scikit-learn and applied with numpy
(:meth:`ExampleModel.proba`); the encoder is never fine-tuned.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .catalog import actions
from .scores import ROUTE_STEP_IDS, has_routes
from .text import normalize

NONE = ""  # the "no action" class of the catalog's negatives (and of the bank where the catalog has no routes)
NOT_ACTIONS = (NONE, *ROUTE_STEP_IDS)  # classes that are no action: route ids are reserved where a catalog has routes


@dataclass(frozen=True)
class CharGrams:
    """Character n-grams of ``lo`` to ``hi`` characters within words (each word of the normalised text padded with a
    space; a word shorter than an n counted once), weighted by tf-idf: 1 + log of the count, times the smoothed idf
    ``1 + log((1 + n) / (1 + df))`` of the training texts, each text's vector of unit length. These are
    scikit-learn's ``TfidfVectorizer(analyzer="char_wb", sublinear_tf=True)`` features over
    :func:`toolgate.core.text.normalize`, computed with numpy so that a router needs no scikit-learn."""
    lo: int
    hi: int
    vocabulary: tuple[str, ...]  # sorted
    idf: np.ndarray

    @staticmethod
    def grams(text: str, lo: int, hi: int) -> list[str]:
        out = []
        for word in normalize(text).split():
            w = f" {word} "
            for n in range(lo, hi + 1):
                out += [w[i:i + n] for i in range(max(len(w) - n + 1, 1))]
                if len(w) <= n:
                    break
        return out

    @classmethod
    def fit(cls, texts, span) -> "CharGrams":
        lo, hi = (int(x) for x in span)
        df = Counter(g for t in texts for g in set(cls.grams(t, lo, hi)))
        vocabulary = tuple(sorted(df))
        idf = 1.0 + np.log((1.0 + len(texts)) / (1.0 + np.array([df[g] for g in vocabulary], float)))
        return cls(lo, hi, vocabulary, idf.astype(np.float32))  # as a router stores it: the same weights after loading

    @cached_property
    def columns(self) -> dict[str, int]:
        return {g: k for k, g in enumerate(self.vocabulary)}

    def weights(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(columns, weights) of one text's known n-grams, columns ascending."""
        col = self.columns
        counts = Counter(col[g] for g in self.grams(text, self.lo, self.hi) if g in col)
        j = np.array(sorted(counts), np.intp)
        w = (1.0 + np.log(np.array([counts[k] for k in j], float))) * self.idf[j].astype(float)
        norm = np.sqrt(w @ w)
        return j, (w / norm if norm else w)

    def matrix(self, texts):
        """(texts x vocabulary) scipy CSR matrix of :meth:`weights` (fitting only)."""
        from scipy import sparse

        parts = [self.weights(t) for t in texts]
        indptr = np.cumsum([0] + [len(j) for j, _ in parts])
        cat = (lambda k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0))  # noqa: E731
        return sparse.csr_matrix((cat(1), cat(0).astype(np.intp), indptr), shape=(len(texts), len(self.vocabulary)))


@dataclass(frozen=True)
class ExampleModel:
    classes: np.ndarray  # action ids, then route ids, NONE last where the model has them
    coef: np.ndarray  # classes x embedding size
    intercept: np.ndarray
    grams: CharGrams | None = None  # the request's character n-grams, read beside its embedding
    gram_coef: np.ndarray | None = None  # classes x n-gram vocabulary

    @classmethod
    def of(cls, entry: dict, arrays: dict) -> "ExampleModel":
        """The model a manifest's ``examples`` entry and its arrays (embeddings.npz) describe."""
        chars = entry.get("chars")
        grams = None if chars is None else CharGrams(*map(int, chars["ngram"]), tuple(chars["vocabulary"]),
                                                     np.asarray(arrays["examples__idf"], float))
        return cls(np.array(entry["classes"], dtype=str), np.asarray(arrays["examples__coef"], float),
                   np.asarray(arrays["examples__intercept"], float), grams,
                   None if grams is None else np.asarray(arrays["examples__chars"], float))

    def proba(self, emb: np.ndarray, texts=None) -> np.ndarray:
        """(requests x classes) class probabilities of request embeddings (and of their ``texts``, which a model
        with n-grams needs)."""
        z = emb @ self.coef.T + self.intercept
        if self.grams is not None:
            if texts is None or len(texts) != len(z):
                raise ValueError("a model with character n-grams needs the requests' texts beside their embeddings")
            for i, t in enumerate(texts):
                j, w = self.grams.weights(t)
                z[i] += self.gram_coef[:, j] @ w
        z = np.exp(z - z.max(1, keepdims=True))
        return z / z.sum(1, keepdims=True)

    def top_action(self, emb: np.ndarray, texts=None) -> tuple[np.ndarray, np.ndarray]:
        """(top action id, its probability) per request; the no-action classes' mass lowers every action's."""
        p = self.proba(emb, texts)
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


def fit_examples(emb: np.ndarray, labels, c: float = 10.0, texts=None, chars=None) -> ExampleModel:
    """The logistic regression (L2, inverse strength ``c``, lbfgs: deterministic) on training embeddings, and on the
    character n-grams of their ``texts`` where ``chars`` gives their span (lo, hi; None: the embeddings alone)."""
    from sklearn.linear_model import LogisticRegression

    labels = np.asarray(labels)
    if len(set(labels)) < 2:
        raise ValueError("an example model needs two classes at least (two actions, or an action and 'none')")
    if chars is not None and (texts is None or len(texts) != len(emb)):
        raise ValueError("a model with character n-grams is fitted on the training texts beside their embeddings")
    grams = None if chars is None else CharGrams.fit(texts, chars)
    x = emb
    if grams is not None:
        from scipy import sparse

        x = sparse.hstack([sparse.csr_matrix(emb), grams.matrix(texts).astype(emb.dtype)], format="csr")
    lr = LogisticRegression(C=c, max_iter=5000).fit(x, labels)
    coef, intercept = lr.coef_, lr.intercept_
    if len(lr.classes_) == 2:  # scikit-learn keeps one row for two classes: the second class's log-odds
        coef, intercept = np.vstack([-coef / 2, coef / 2]), np.array([-intercept[0] / 2, intercept[0] / 2])
    order = np.lexsort((np.isin(lr.classes_, ROUTE_STEP_IDS), lr.classes_ == NONE))  # actions, routes, none last
    coef, dim = coef[order], emb.shape[1]
    return ExampleModel(lr.classes_[order].astype(str), coef[:, :dim], intercept[order], grams,
                        None if grams is None else coef[:, dim:])


def span_label(chars) -> str:
    """A table's name of an n-gram span (lo, hi): ``lo-hi``, or ``none``."""
    return "none" if chars is None else f"{chars[0]}-{chars[1]}"


def examples_entry(model: ExampleModel) -> dict:
    """The manifest fields of a fitted model (router.json's ``examples``): its classes and its n-grams (none: no
    field, as a router written before them has none)."""
    g = model.grams
    return {"classes": [str(c) for c in model.classes],
            **({} if g is None else {"chars": {"ngram": [g.lo, g.hi], "vocabulary": list(g.vocabulary)}})}


def examples_arrays(model: ExampleModel) -> dict[str, np.ndarray]:
    """The arrays of a fitted model in embeddings.npz."""
    out = {"examples__coef": model.coef, "examples__intercept": model.intercept}
    if model.grams is not None:
        out |= {"examples__chars": model.gram_coef, "examples__idf": model.grams.idf}
    return out


def action_matrix(model: ExampleModel, emb: np.ndarray, catalog: list[dict], texts=None) -> np.ndarray:
    """(requests x catalog) each entry's probability under ``model`` (an action's, a route entry's where the model
    has route classes; 0 for an entry it has no class of): the examples model as a ranker's score matrix, whose
    route columns choose the route step (:func:`toolgate.core.scores.route_choice`)."""
    p = model.proba(emb, texts)
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
