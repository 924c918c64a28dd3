"""Leave one catalog out for routers (tables/router_loco.csv): every candidate of the selection, fitted on the
experiment's own set as an export fits it, applied to each external set it was not fitted on; and the same
candidates on each probe file over the experiment's own catalog (tables/router_probes.csv).

Each candidate (a band of ranker x gate, or the single-pool ladder; :func:`toolgate.router.select.candidates`) is
built as :func:`toolgate.router.export.build_artifact` builds it (calibrator and thresholds fitted on every request
of the main set) and run by the shipped runtime, evidence rules included, over each external set's requests, each
over its own candidate tools, in two modes:

* **unchanged**: :meth:`~toolgate.core.runtime.Router.on_catalog`: the BM25 index and catalog embeddings made for
  the set's tools, everything else as fitted (what ``toolgate adapt`` writes by default);
* **re-targeted**: :func:`toolgate.core.retarget.retarget`: the gate's scale moved by the label-free anchors
  (``toolgate adapt --calibrate anchors``); a set where the anchors give no direction has no row values (note).

Every row is set against the ladder applied the same way to the same requests (routing_baselines' paired
cluster bootstrap over the set's clusters, :func:`toolgate.routing.pipelines.versus_ladder`). ``router.select``
ranks candidates by their worst unchanged row (:func:`held_out`).
"""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..core.artifact import EncoderSet
from ..core.embedding_cache import CachedEncoder
from ..core.encoders import make_encoder
from ..core.evidence import Evidence
from ..core.examples import ExampleModel
from ..core.rankers import encoder_kwargs
from ..core.retarget import anchors, generic_requests
from ..core.runtime import Router
from ..routing.baselines import Gold
from ..routing.pipelines import versus_ladder
from ..tables import write_table
from .evaluation import card_row, on_set, probe_rows, read_probes
from .export import Route, build_artifact
from .select import Candidate, candidates, declared_latency

log = logging.getLogger(__name__)
console = logging.getLogger("toolgate.console")  # a rule's terminal (toolgate.smk.logged) as well as its log
MODES = ("unchanged", "re-targeted")
COLUMNS = ["candidate", "ranker", "gate", "test_set", "mode", "fit_set", "n", "n_in", "n_out", "refused", "accuracy", "accuracy_low",
           "accuracy_high", "auc", "auc_low", "auc_high", "danger_rate", "ask_rate", "relevance_detection",
           "irrelevance_detection", "ladder_accuracy", "accuracy_minus_ladder", "ci_low", "ci_high", "note"]
PROBE_COLUMNS = ["candidate", "ranker", "gate", "set", "n", "right", "wrong", "wrong_act", "accuracy"]


class Encoders:
    """Each encoder a candidate names, made once and read through the experiment's embedding cache (the external
    study embedded the same texts), so forty candidates encode each text once."""

    def __init__(self, cache_dir):
        self.cache_dir, self.made = cache_dir, {}

    def __call__(self, spec: dict):
        key = repr(sorted(spec["encoder"].items()))
        if key not in self.made:
            enc = make_encoder(encoder_kwargs(spec["encoder"]))
            self.made[key] = CachedEncoder(enc, self.cache_dir) if self.cache_dir else enc
        return self.made[key]


class Memo:
    """A BM25 ranker whose scores are kept per request text (read-only arrays): every candidate has the same lexical
    ranker, so forty of them score the same requests, and their parts, on one index."""

    def __init__(self, ranker):
        self.ranker, self.kept = ranker, {}

    def _kept(self, key, score):
        if key not in self.kept:
            self.kept[key] = np.asarray(score(), float)
            self.kept[key].flags.writeable = False
        return self.kept[key]

    def score_many(self, texts):
        texts = list(texts)
        return self._kept(("many", *texts), lambda: self.ranker.score_many(texts))

    def score(self, text):
        return self._kept(("one", text), lambda: self.ranker.score(text))


def candidate_router(exp, c: Candidate, encoders: Encoders, lexical: dict, evidence: Evidence | None = None) -> Router:
    """Candidate ``c`` as an export of the experiment would ship it, built in memory; ``lexical``: the BM25 rankers
    met so far by their manifest entry (one :class:`Memo` per index); ``evidence``: the evidence rules over the
    experiment's catalog, shared by every candidate."""
    a = build_artifact(exp, Route(c.name, c.ranker, c.gate, "utility"))
    names = a.manifest["encoders"]
    bm25 = lexical.setdefault(repr(a.manifest["lexical"]), Memo(a.lexical))
    examples = ExampleModel.of(a.manifest["examples"], a.arrays) if "examples" in a.manifest else None
    encoded = EncoderSet({n: encoders(e["spec"]) for n, e in names.items()},
                         {n: a.arrays[f"catalog__{n}"] for n in names}, {n: a.arrays[f"exemplars__{n}"] for n in names})
    return Router(a.manifest, a.catalog, bm25, encoded, evidence, examples)


def named(c: Candidate) -> dict:
    """A candidate's columns in both tables: its name, ranker and gate (the ladder's: the pool's top score)."""
    return {"candidate": c.name, "ranker": c.ranker, "gate": c.gate or "(pool top score)"}


def loco_frame(exp, sets: dict, probes: dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(router_loco, router_probes): every candidate of the experiment's ``router`` settings (the ladder always) on
    every set of ``sets`` (name -> ExternalSet) in both modes, against the ladder (module docstring), and on each
    probe file of ``probes`` (:func:`toolgate.router.evaluation.read_probes`, read against the experiment's catalog)
    over that catalog."""
    if not sets:  # nothing held out: no candidate is built
        return pd.DataFrame(columns=COLUMNS), pd.DataFrame(columns=PROBE_COLUMNS)
    rankers, study, provenance, settings = exp.rankers, exp.study, exp.provenance, exp.router
    cands = candidates(rankers, study, provenance["lexical"], settings, declared_latency(rankers, settings))
    ladder = next((c for c in cands if c.gate is None), Candidate(provenance["lexical"], None, (), 0.0))
    cands = [ladder] + [c for c in cands if c is not ladder]  # the reference first: every row is set against it
    encoders, res, seed = Encoders(study.run.cache), study.gate.resamples, study.run.seed
    banks = {lang: generic_requests((lang,)) for lang in {e.lang for e in sets.values()}}
    recs, probed, reference, lexical, over = [], [], {}, {}, {}
    own = Evidence(exp.catalog, tuple(exp.run.langs))  # the experiment's catalog: the same for every candidate
    for i, c in enumerate(cands, 1):
        console.info("router_loco: candidate %d of %d, %s, on %d sets", i, len(cands), c.name, len(sets))
        router = candidate_router(exp, c, encoders, lexical, own)
        probed += [{**named(c), **r} for r in probe_rows(router, probes or {})]
        fits = {lang: anchors(router, bank) for lang, bank in banks.items()}  # the fit catalog's, once per bank
        for name, ext in sets.items():
            g = Gold(ext.utterances, ext.catalog)
            if name not in over:  # the set's BM25 index and evidence rules, made once (the same for every candidate)
                over[name] = Memo(router.lexical_on(ext.catalog, (ext.lang,))), Evidence(ext.catalog, (ext.lang,))
            for mode, (out, note) in on_set(router, ext, banks[ext.lang], fits[ext.lang], *over[name]).items():
                row = {**named(c), "test_set": name, "mode": mode, "fit_set": provenance["experiment"], "note": note}
                if out is not None:
                    kind, tool, p, refused, _ = out
                    if c is ladder:
                        reference[(name, mode)] = (kind, tool)
                    ref = reference.get((name, mode))  # none: the ladder could not be re-targeted on this set
                    row |= {"refused": refused, **card_row((kind, tool, p), g, ext.clusters, res, seed),
                            **(versus_ladder((kind, tool), ref, g, res, seed, ext.clusters) if ref else {})}
                recs.append(row)
    return pd.DataFrame(recs).reindex(columns=COLUMNS), pd.DataFrame(probed).reindex(columns=PROBE_COLUMNS)


def held_out(table: pd.DataFrame) -> dict[str, dict]:
    """Per candidate of router_loco.csv's unchanged rows: ``worst`` (the lowest accuracy minus the ladder over the
    held-out sets), ``worst_set``, and ``below`` (the sets where the interval against the ladder lies below 0).
    A candidate without a compared row is left out (:func:`toolgate.router.select.select` refuses to rank it)."""
    out = {}
    for name, d in table[table["mode"] == "unchanged"].groupby("candidate", sort=False):
        d = d.dropna(subset=["accuracy_minus_ladder"])
        if len(d):
            w = d.loc[d["accuracy_minus_ladder"].idxmin()]
            out[str(name)] = {"worst": float(w["accuracy_minus_ladder"]), "worst_set": str(w["test_set"]),
                              "below": [str(s) for s in d.loc[d["ci_high"] < 0, "test_set"]]}
    return out


def write_router_loco(exp) -> pd.DataFrame:
    """tables/router_loco.csv (``output.table``) and router_probes.csv (``output.probes``) of the experiment (inputs
    an export's and ``probes``, router.probes' files; ``external``: the external section, None when the study is
    off: tables with no rows, and the selection falls back to the own set)."""
    from ..external.adapters import load_all

    study, provenance = exp.study, exp.provenance
    sets = load_all(exp.external, study.run.seed) if exp.external is not None else {}
    table, probed = loco_frame(exp, sets, read_probes(getattr(exp.input, "probes", []), exp.catalog))
    write_table(probed, exp.output.probes, "Probes: every router candidate on each probe file, over the experiment's "
                "own catalog", "Each candidate as router_loco builds it, on each file of router.probes. A check, not a "
                "fitting set: router.select does not read it. docs/metrics.md, 'Router probes'.", study.run.seed)
    write_table(table, exp.output.table, "Leave one catalog out: every router candidate fitted on the experiment, applied to "
                "each external set", f"Fit set: {provenance['experiment']}; test sets: "
                + (", ".join(sets) or "none (the external study is off)") + ". Modes unchanged and re-targeted "
                "(label-free anchors); router.select ranks by the worst unchanged row. docs/metrics.md, 'Router leave "
                "one catalog out'.", study.run.seed)
    log.info("router_loco: %d rows, %d candidates x %d sets x %d modes", len(table),
             table["candidate"].nunique() if len(table) else 0, len(sets), len(MODES))
    return table

