"""Re-target a router to another catalog without labels (``toolgate adapt``, router_loco's re-targeted rows).

A gate's value is in its catalog's units: a BM25 score grows with the catalog's vocabulary and description lengths,
an encoder's cosine with how its tools are worded. Thresholds fitted on one catalog are therefore moved to another
by two anchors that need no labelled request of the new catalog, computed on each catalog by the router itself:

* **in**: the median gate value of the catalog's own actions as requests (:func:`toolgate.core.catalog.own_queries`: each action's name
  and description in each language the router reads: what a request to it paraphrases);
* **out**: the median gate value of a shipped bank of generic out-of-catalog requests (:data:`GENERIC_REQUESTS`:
  chat, weather, bookings, shopping, knowledge, news, food and advice, 80 in Korean and 80 in English, written once
  for this purpose, blind-annotated against the default catalog, drawn from no evaluation set).

A value ``v`` on the new catalog is read as ``out_fit + (v - out_new) * (in_fit - out_fit) / (in_new - out_new)``
on the fit catalog's scale: a band's Platt calibrator absorbs that affine map (its thresholds, on P(in catalog),
stay), the ladder's thresholds on the pool's top score move by its inverse. Ranker, gate payload, evidence rules and
limits are as shipped. A catalog that carries a generic request's service (a weather tool, a booking tool) raises
its ``out`` anchor, so the router acts less there: the bank errs towards asking.
"""
from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import numpy as np

from . import io
from .artifact import EncoderSet, RouterError
from .catalog import own_queries

GENERIC_REQUESTS = files(__package__) / "generic_requests.jsonl"


def generic_bank(langs, path=GENERIC_REQUESTS) -> list[tuple[str, str]]:
    """(text, route) of the bank's requests in ``langs`` (every request when none of its languages is read: an
    encoder reads across languages). Route: ``chat`` for the chat topic (small talk, answered without a service),
    ``delegate`` for every other topic (each needs a service the device lacks)."""
    rows = [r for _, r in io.read_jsonl(Path(path))]
    rows = [r for r in rows if r["lang"] in langs] or rows
    return [(r["text"], "chat" if r["topic"] == "chat" else "delegate") for r in rows]


def generic_requests(langs, path=GENERIC_REQUESTS) -> list[str]:
    """The bank's texts in ``langs`` (:func:`generic_bank`)."""
    return [t for t, _ in generic_bank(langs, path)]


def anchors(router, bank: list[str]) -> dict:
    """{"in", "out"}: the medians of ``router``'s gate values (the ladder: the pool's top BM25 score) over its
    catalog's own texts and over ``bank``."""
    router = router.fallback() if router.kind == "examples" else router  # what it runs on a catalog without examples

    def median(texts):
        return float(np.median(router.scores([router.check(t) for t in texts])[3]))

    return {"in": median(own_queries(router.catalog, router.manifest["langs"])), "out": median(bank)}


def retargeted_manifest(manifest: dict, fit: dict, new: dict) -> dict:
    """``manifest`` with its calibrator (a band) or thresholds (the ladder) moved from the anchors ``fit`` to
    ``new`` (module docstring), and the anchors recorded under ``retarget``; RouterError when the new catalog's own
    texts do not reach a higher gate value than the generic requests (no direction to map)."""
    span_fit, span_new = fit["in"] - fit["out"], new["in"] - new["out"]
    if not (span_fit > 0 and span_new > 0):
        raise RouterError(f"cannot re-target without labels: the catalog's own texts reach a gate value "
                          f"{new['in']:.4g} against {new['out']:.4g} for generic requests (fit catalog "
                          f"{fit['in']:.4g} against {fit['out']:.4g}); the two must differ upwards")
    s = span_fit / span_new
    m = json.loads(json.dumps(manifest))
    if m["pipeline"]["kind"] != "ladder":
        cal = m["calibrator"]
        cal["coef"], cal["intercept"] = cal["coef"] * s, cal["intercept"] + cal["coef"] * (fit["out"] - s * new["out"])
    else:
        th = m["thresholds"]
        th["execute"], th["confirm"] = (new["out"] + (th[k] - fit["out"]) / s for k in ("execute", "confirm"))
    m["retarget"] = {"method": "anchors", "bank": GENERIC_REQUESTS.name, "fit": fit, "new": new, "scale": s}
    return m


def retargeted(over, fit: dict, bank: list[str]):
    """``over``, a router already over the new catalog (:meth:`~toolgate.core.runtime.Router.on_catalog`), with
    its gate's scale moved from the fit catalog's anchors ``fit`` (:func:`anchors`) to its own on ``bank``."""
    if over.kind == "examples":
        raise RouterError("an examples model over a catalog with examples is remade from them: nothing to re-target")
    m = retargeted_manifest(over.manifest, fit, anchors(over, bank))
    return type(over)(m, over.catalog, over.lexical, EncoderSet(over.encoders, over.docs, over.exemplars),
                      over.evidence, over.examples)


def retarget(router, catalog: list[dict], langs, bank: list[str] | None = None):
    """``router`` over ``catalog`` with its gate's scale moved by the anchors of both catalogs; ``bank``: the
    generic requests (default: the shipped bank in ``langs``)."""
    bank = generic_requests(langs) if bank is None else bank
    return retargeted(router.on_catalog(catalog, langs), anchors(router, bank), bank)
