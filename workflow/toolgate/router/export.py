"""Export a router of an experiment as an artifact: a paper pipeline (``--pipeline P1``) or the selected router.

Unlike the pipelines rule, which measures thresholds out of fold, an export fits the Platt calibrator and the
thresholds on every utterance of the main set at once, under the same danger budget and ask cap, on the gate's
out-of-fold values (gate/signals.csv, the values a request the gate was not fitted on gets): these are the numbers
a deployed router ships with. A fitted gate ships its payload fitted on the main set (gate/gates.json). The artifact
holds no encoder weights: the manifest names each encoder (backend, model, revision) and carries the catalog's
embeddings and, for an exemplar gate, the exemplar index (:mod:`.gates`).
"""
from __future__ import annotations

import json
import logging
import platform
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from .. import __version__
from ..core.artifact import FILES, FORMAT, MANIFEST, SEAL, file_entry, manifest_digest, npz_bytes, sha256
from ..core.calibration import fit_platt, platt_probability
from ..core.catalog import actions, load_catalog, route_ids
from ..core.decisions import band_decisions, ladder_decisions
from ..core.errors import InputError
from ..core.evidence import tie_margin
from ..core.examples import examples_arrays, examples_entry
from ..core.gates import EMBEDDINGS, gate_entry, needs_exemplars, texts_sha256
from ..core.rankers import RankerSpec, fit_ranker, query_embeddings
from ..core.scores import mode_note, route_step, top_actions
from ..core.signals import gate_encoders, gate_signal
from ..outdir import write_folder
from ..routing.baselines import Gold, choose, ladder_setting
from ..routing.pipelines import band_setting
from ..utterances import is_in_catalog
from .select import (
    EXAMPLES,
    LADDER,
    Candidate,
    Outcomes,
    ask_cap,
    examples_of,
    gate_values,
    main_folds,
    route_source,
    shipped,
    valued,
)

KINDS = {None: "ladder", EXAMPLES: "examples"}  # a pipeline's kind by its gate; any other gate: band

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Route:
    """What an artifact runs: ``gate`` a signal of the registry (None: the single-pool ladder); ``objective``: what
    its thresholds maximise (coverage: the paper's pipelines; utility: a selected router, router.utility)."""
    name: str
    ranker: str
    gate: str | None
    objective: str


def pipeline_route(name: str, exp) -> Route:
    """A paper pipeline of routing.pipelines (thresholds for coverage), or ``ladder``: the single-pool ladder on the
    lexical ranker with thresholds for router.utility, as the selection fits its ladder candidate."""
    if name == LADDER:
        return Route(LADDER, exp.provenance["lexical"], None, "utility")
    p = exp.study.routing.pipelines[name]
    return Route(name, p["ranker"], gate_signal(exp.study.signals, p["gate"]).name, "coverage")


def in_gap(values: np.ndarray, t: float) -> float:
    """A threshold that splits ``values`` as ``t`` does, halfway to the next lower value (0, the lowest probability
    or BM25 score, when none is lower): a request whose value differs from a fitted one in the last digits
    (signals.csv keeps 10) stays on the same side."""
    below = values[values < t]
    return float((below.max() + t) / 2) if len(below) else min(float(t), 0.0)


def fit_pair(exp, route: Route, ranker, setting: tuple, g: Gold, limits: tuple[float, float]):
    """(lo, hi) of ``setting`` (evaluate, threshold pairs, the value per request they compare) fitted on every
    request of the main set within ``limits`` (ask cap, danger budget): a selected router's for the utility after
    the evidence rules, counted as the selection counts it (:class:`~toolgate.router.select.Outcomes`); a paper
    pipeline's for coverage (the ladder's: accuracy)."""
    evaluate, cands, scale = setting
    if route.objective == "utility":
        ruled = shipped(exp, Candidate(route.ranker, route.gate, (), 0.0), ranker, evaluate, g)
        return cands[Outcomes(ruled, cands, limits, valued(g, exp.router.utility), scale, main_folds(exp)).pick(np.ones(g.n, bool))]
    objective = "accuracy" if route.gate is None else route.objective
    return choose(evaluate, cands, np.ones(g.n, bool), limits[1], limits[0], objective)


def fitted_router(exp, route: Route):
    """(calibrator and thresholds of ``route`` fitted on the experiment's main set with their in-sample rates, the
    band's decision kind per row, the ranker's scores the decisions read). The rates are of the decisions as the
    router makes them, after the evidence rules (:func:`toolgate.router.select.shipped`; the near-tie rule, whose
    margin :func:`limits` fits, aside)."""
    rows, lexical, study = exp.main, exp.provenance["lexical"], exp.study
    g, rt, budget = Gold(rows, exp.catalog), study.routing, study.gate.danger_budget
    cand = Candidate(route.ranker, route.gate, (), 0.0)
    cap = ask_cap(exp.router, study) if route.objective == "utility" else rt.ask_cap  # a paper pipeline: the paper's
    if route.gate is None:
        lex = exp.scores(lexical)
        pool = lex.for_rows(rows).matrix
        score, scale = pool.max(1), "pool_score"
        evaluate, cands = ladder_setting(lex, rows, g, rt.grid)
        lo, hi = fit_pair(exp, route, lex, (evaluate, cands, score), g, (1.0, budget))
        kind, _ = ladder_decisions(pool, lex.tool_ids, lex.kinds, lo, hi)
        ranker, read = exp.scores(route.ranker), lex
    else:
        score, ranker = gate_values(exp, cand)
        scale = "probability"
    coef, intercept = fit_platt(score, g.in_catalog.astype(int))
    if route.gate is not None:
        if coef <= 0:
            raise InputError("gate/signals.csv", f"gate '{route.gate}' does not rise with in-catalog requests (Platt "
                             f"slope {coef:.3g}); a band cannot be fitted on it", field=route.gate)
        prob = platt_probability(score, coef, intercept)
        routes = route_source(exp, cand, ranker)
        evaluate, cands, _, _ = band_setting(ranker, routes, rows, g, prob, rt)
        lo, hi = fit_pair(exp, route, ranker, (evaluate, cands, prob), g, (cap, budget))
        kind, _ = band_decisions(prob, lo, hi, top_actions(ranker, rows)[:, 0], route_step(routes, rows))
        read = ranker
    shipped_kind = shipped(exp, cand, read, evaluate, g)((lo, hi))[0]
    on = score if route.gate is None else prob
    return {"calibrator": {"method": "platt", "coef": coef, "intercept": intercept, "fitted_on": len(rows)},
            "thresholds": {"execute": in_gap(on, hi), "confirm": in_gap(on, lo), "scale": scale, "objective": route.objective,
                           "band_top": rt.band_top, "danger_budget": budget, "ask_cap": cap,
                           "in_sample": {"danger_rate": float((g.delegate & (shipped_kind == "action")).mean()),
                                         "ask_rate": float((shipped_kind == "ask").mean())}}}, kind, ranker


def limits(exp, ranker, kind: np.ndarray) -> dict:
    """The manifest's ``limits``: max_chars, top_k and, where the provenance names ``tie_margins`` and ``tie_cost``
    (router settings), the tie margin :func:`.evidence.tie_margin` chooses on the main set's folds for the ranker's
    scores (``ranker``: :class:`~toolgate.core.scores.Scores`) and the band's decisions ``kind``."""
    lim, rows = exp.provenance["limits"], exp.main
    out = {k: lim[k] for k in ("max_chars", "top_k")}
    if lim.get("tie_margins"):
        s = ranker.for_rows(rows)
        decided = (kind, Gold(rows, exp.catalog).outcome == "action", main_folds(exp))
        out["tie_margin"] = tie_margin(s.action_scores(), s.action_ids, decided, lim["tie_margins"], lim["tie_cost"])
    return out


def encoder_parts(exp, route: Route) -> tuple:
    """(manifest ``encoders``, arrays of embeddings.npz): per encoder the ranker or gate reads, the catalog's
    embeddings and, for an exemplar gate, the exemplar index (the in-catalog requests of the main set)."""
    rankers, study, run, catalog, every_row = exp.rankers, exp.study, exp.run, exp.catalog, exp.rows
    names = [route.ranker] if RankerSpec.of(rankers[route.ranker]).encoder_gate else []
    names = list(dict.fromkeys(names + (gate_encoders(study.signals, route.gate)
                                        if route.gate not in (None, EXAMPLES) else [])))
    entries, arrays = {}, {}
    in_catalog = {r["utterance_id"] for r in exp.main if is_in_catalog(r["gold_outcome"])}
    for name in names:
        spec = RankerSpec.of(rankers[name]).entry
        ranker = fit_ranker(spec, catalog, run.langs, run.text, run.cache or None)
        arrays[f"catalog__{name}"] = ranker.docs
        emb = np.zeros((0, ranker.docs.shape[1]), ranker.docs.dtype)
        if route.gate not in (None, EXAMPLES) and needs_exemplars(study.signals, route.gate, name):
            emb = query_embeddings(spec, [r["text"] for r in every_row], run)  # the scores rule's order: its cache
            emb = emb[[r["utterance_id"] in in_catalog for r in every_row]]
        arrays[f"exemplars__{name}"] = emb
        entries[name] = {"spec": spec, "key": ranker.raw.key, "exemplars": len(emb),
                         "texts_sha256": texts_sha256(catalog, spec["variant"], run.langs)}
    return entries, arrays


def catalog_entry(catalog: list[dict], data: bytes, source) -> dict:
    """The manifest's ``catalog``: the file's sha256 and where it came from, its action count and route entries."""
    return {"sha256": sha256(data), "source": str(source), "actions": len(actions(catalog)),
            "routes": route_ids(catalog)}


def write_artifact(out_dir, manifest: dict, blobs: dict[str, bytes], force: bool = False) -> str:
    """Write ``blobs`` (file name -> bytes) and ``manifest`` (its ``files`` filled from them) into ``out_dir``
    (:func:`toolgate.outdir.write_folder`: an existing folder is refused unless ``force``); how it was written."""
    manifest["files"] = {name: file_entry(data) for name, data in blobs.items()}
    manifest[SEAL] = manifest_digest(json.loads(json.dumps(manifest)))  # as it will read back (keys as strings)

    def write(tmp: Path) -> None:
        for name, data in blobs.items():
            (tmp / name).write_bytes(data)
        (tmp / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")

    return write_folder(Path(out_dir), FILES, write, force, allowed_output="router")


@dataclass(frozen=True)
class Artifact:
    """An exported router before it is written: the manifest, the files' bytes, and the parts a
    :class:`~toolgate.core.runtime.Router` is built of (catalog, BM25 ranker, encoders' arrays)."""
    manifest: dict
    blobs: dict
    catalog: list
    lexical: object
    arrays: dict


def build_artifact(exp, route: Route, selection: dict | None = None) -> Artifact:
    """The artifact of ``route`` on the experiment ``exp`` (:class:`toolgate.experiment.Experiment`: its
    ``provenance`` names the experiment, config_hash, lexical ranker and limits (max_chars, top_k); ``selection``:
    how the route was chosen)."""
    run, provenance, rankers, study = exp.run, exp.provenance, exp.rankers, exp.study
    lexical, catalog = provenance["lexical"], exp.catalog
    fit, kind, ranker = fitted_router(exp, route)
    gate = (gate_entry(study.signals, route.gate, exp.payloads, lexical, study.gate.top_k)
            if route.gate not in (None, EXAMPLES) else None)
    encoders, arrays = encoder_parts(exp, route)
    model_parts = {}  # an examples router's model and the ladder it falls back to on a catalog without examples
    if route.gate == EXAMPLES:
        model = examples_of(exp, route.ranker)[0]
        arrays |= examples_arrays(model)
        model_parts = {"examples": {"encoder": route.ranker, **examples_entry(model), "c": exp.router.examples_c,
                                    "examples": sum(len(t.get("examples", [])) for t in catalog),
                                    "negatives": sum(len(t.get("negatives", [])) for t in catalog)},
                       "fallback": {"kind": "ladder",
                                    **fitted_router(exp, pipeline_route(LADDER, exp))[0]}}
    bm25 = fit_ranker(rankers[lexical], catalog, run.langs, run.text)
    blobs = {"bm25.index": bm25.index.to_bytes(), "catalog.jsonl": Path(exp.input.catalog).read_bytes(),
             EMBEDDINGS: npz_bytes(arrays)}
    manifest = {
        "format": FORMAT, "toolgate_version": __version__,
        "experiment": provenance["experiment"], "config_hash": provenance["config_hash"], "seed": run.seed,
        "pipeline": {"name": route.name, "kind": KINDS.get(route.gate, "band"), "ranker": route.ranker,
                     "gate": None if route.gate == EXAMPLES else route.gate,
                     "ranker_spec": RankerSpec.of(rankers[route.ranker]).entry},
        **model_parts,
        "lexical": {"name": lexical, "spec": RankerSpec.of(rankers[lexical]).entry},
        "text": {"ngram": run.text.ngram, "pad": run.text.pad}, "langs": list(run.langs),
        "gate": gate, "encoders": encoders, **fit,
        **({"selection": selection} if selection else {}),
        "catalog": catalog_entry(catalog, blobs["catalog.jsonl"], exp.input.catalog),
        "fitted_candidates": mode_note(exp.main),  # the tools each request saw when the thresholds were fitted
        "limits": limits(exp, ranker, kind),
        "versions": {"python": platform.python_version(), "numpy": np.__version__, "scikit-learn": metadata.version("scikit-learn")},
    }
    return Artifact(manifest, blobs, catalog, bm25, arrays)


def export_router(exp, route: Route, out_dir, force: bool = False, selection: dict | None = None) -> tuple[dict, str]:
    """Write ``out_dir``/{router.json, bm25.index, catalog.jsonl, embeddings.npz} (:func:`toolgate.outdir.write_folder`,
    so an existing folder is refused unless ``force``); return the manifest and how the folder was written.

    ``exp``: an experiment whose inputs are named ``catalog``, ``utterances``, ``signals`` (signals.csv), ``gates``
    (gates.json) and ``scores``; ``selection``: :func:`build_artifact`'s.
    """
    a = build_artifact(exp, route, selection)
    written = write_artifact(out_dir, a.manifest, a.blobs, force)
    log.info("exported %s (%s + %s) to %s", route.name, route.ranker, route.gate or "ladder", out_dir)
    return a.manifest, written


def adapt_router(router_dir, catalog_path, out_dir, force: bool = False, calibrate: str = "none") -> tuple[dict, str]:
    """The router of ``router_dir`` re-targeted to the catalog ``catalog_path``, written to ``out_dir`` (``toolgate
    adapt``): its BM25 index fitted and its encoders' catalog embeddings made for the new tools, nothing fitted on the
    new catalog's requests (ranker, gate payload, limits and exemplar index as shipped:
    :meth:`toolgate.core.runtime.Router.on_catalog`). ``calibrate``: ``none`` keeps calibrator and thresholds;
    ``anchors`` moves the gate's scale by the label-free anchors (:mod:`.retarget`; router.json's ``retarget``
    records them). (manifest, how the folder was written)."""
    from ..core.retarget import retarget
    from ..core.runtime import Router

    router = Router.load(router_dir)
    langs = tuple(router.manifest["langs"])
    catalog = load_catalog(catalog_path, langs)
    over = router.on_catalog(catalog, langs) if calibrate == "none" else retarget(router, catalog, langs)
    m = json.loads(json.dumps(over.manifest))  # a copy, then only what the catalog changes
    cat_bytes = Path(catalog_path).read_bytes()
    arrays = {}
    for name, entry in m["encoders"].items():
        arrays[f"catalog__{name}"], arrays[f"exemplars__{name}"] = over.docs[name], router.exemplars[name]
        entry["texts_sha256"] = texts_sha256(catalog, entry["spec"]["variant"], langs)
    if over.examples is not None:
        arrays |= examples_arrays(over.examples)
    source = m["catalog"]
    m["catalog"] = catalog_entry(catalog, cat_bytes, catalog_path)
    m["adapted_from"] = {"catalog": source, "router": str(router_dir)}
    blobs = {"bm25.index": over.lexical.index.to_bytes(), "catalog.jsonl": cat_bytes}
    if m["encoders"]:
        blobs[EMBEDDINGS] = npz_bytes(arrays)
    return m, write_artifact(out_dir, m, blobs, force)
