"""The examples model with and without the request's character n-grams (tables/examples_ablation.csv, rule
examples_ablation): each examples candidate of the selection, once on its encoder's embedding alone and once with
the n-grams beside it (router.examples_chars where the config sets it, else :data:`ABLATION_CHARS`), scored as the
selection scores it (out of fold, through the shipped evidence rules; also on the clean row of router_eval.csv) and
built as router_loco builds it on each probe file. Whichever the config ships, the other is measured beside it.
"""
from __future__ import annotations

import dataclasses
import logging
from types import SimpleNamespace

import numpy as np
import pandas as pd

from ..core.evidence import Evidence
from ..core.examples import span_label
from ..experiment import Experiment
from ..routing.baselines import Gold
from ..tables import write_table
from .evaluation import leaked_rows, probe_rows, read_probes
from .loco import Encoders, candidate_router
from .select import EXAMPLES, candidates, declared_latency, outcomes, rates

log = logging.getLogger(__name__)
ABLATION_CHARS = (1, 4)  # the char_wb span of the CountVectorsFeaturizer in Rasa's documented pipelines
COLUMNS = ["ranker", "chars", "set", "rows", "n", "utility", "accuracy", "danger_rate", "ask_rate", "wrong_act",
           "right"]


def spans(configured) -> list:
    """The two n-gram settings compared: none, and the configured span (else :data:`ABLATION_CHARS`)."""
    return [None, tuple(configured) if configured else ABLATION_CHARS]


def with_chars(exp: Experiment, chars) -> Experiment:
    """``exp`` with router.examples_chars set to ``chars`` (itself where it already is: its memo is kept)."""
    if (tuple(exp.router.examples_chars) if exp.router.examples_chars else None) == chars:
        return exp
    params = SimpleNamespace(**{**vars(exp.params), "router": dataclasses.replace(exp.router, examples_chars=chars)})
    return Experiment(params, exp.input, exp.output)


def ablation_frame(exp: Experiment, leaked: np.ndarray, probes: dict) -> pd.DataFrame:
    """The rows of examples_ablation.csv (module docstring); ``leaked``: per main-set request, near an example
    (router_eval.csv's clean row leaves it out); ``probes``: :func:`~toolgate.router.evaluation.read_probes`."""
    settings, rankers = exp.router, exp.rankers
    cands = [c for c in candidates(rankers, exp.study, exp.provenance["lexical"], settings,
                                   declared_latency(rankers, settings)) if c.gate == EXAMPLES]
    rows = exp.main
    g, gold = Gold(rows, exp.catalog), np.array([r["gold_tool"] or "" for r in rows])
    everything = np.ones(len(rows), bool)
    recs, evidence, encoders = [], Evidence(exp.catalog, tuple(exp.run.langs)), Encoders(exp.run.cache)
    settings_of = {chars: with_chars(exp, chars) for chars in spans(settings.examples_chars)}  # one memo each
    for c in cands:
        for chars, e in settings_of.items():
            label = span_label(chars)
            log.info("examples_ablation: %s, character n-grams %s", c.name, label)
            o = outcomes(e, c, g)
            chosen = o.oof(everything)
            kind, tool, _ = o.decisions(chosen)
            wrong_act = (kind == "action") & (tool != gold)
            for name, within in (("within (out of fold)", everything), ("clean", ~leaked)):
                recs.append({"ranker": c.ranker, "chars": label, "set": exp.provenance["experiment"], "rows": name,
                             "n": int(within.sum()), **rates(o, chosen, within),
                             "wrong_act": int(wrong_act[within].sum())})
            router = candidate_router(e, c, encoders, {}, evidence)
            recs += [{"ranker": c.ranker, "chars": label, "set": p["set"], "rows": "probes", "n": p["n"],
                      "accuracy": p["accuracy"], "wrong_act": p["wrong_act"], "right": p["right"]}
                     for p in probe_rows(router, probes)]
    return pd.DataFrame(recs).reindex(columns=COLUMNS)


def write_examples_ablation(exp: Experiment) -> pd.DataFrame:
    """tables/examples_ablation.csv (``output.table``); inputs an export's, ``leakage`` (example_leakage.csv) and
    ``probes`` (router.probes' files)."""
    table = ablation_frame(exp, leaked_rows(exp.input.leakage, exp.main),
                           read_probes(getattr(exp.input, "probes", []), exp.catalog))
    write_table(table, exp.output.table, "The examples model with and without character n-grams",
                "Each examples candidate as the selection scores it (out of fold, evidence rules included; clean: "
                "router_eval.csv's clean row) and on each probe file; chars: router.examples_chars, none: the "
                "embedding alone. docs/metrics.md, 'Examples ablation'.", exp.run.seed)
    return table
