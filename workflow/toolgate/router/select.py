"""Which router to ship (``router.select``): bands of every configured (ranker, gate), the examples models and the
single-pool ladder, ranked by their worst held-out catalog and by utility out of fold, the choice measured nested.

docs/metrics.md, 'Router selection', defines the candidates, the rule and the nest; a candidate's latency is
declared (:func:`declared_latency`), never this run's timings.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..core import io
from ..core.errors import InputError
from ..core.evidence import Evidence
from ..core.examples import ExampleModel, action_matrix, fit_examples, log_odds, training_texts
from ..core.rankers import RankerSpec, fit_ranker, query_embeddings
from ..core.retarget import generic_bank
from ..core.runtime import Rules
from ..core.scores import Scores, route_step, top_actions
from ..core.signals import compared_gates, gate_encoders, signal_rows
from ..routing.baselines import Gold, Study, correct, ladder_setting, study_ladder, utility
from ..routing.pipelines import band_setting, versus_ladder
from . import LATENCY_TABLE

TOL = 1e-12
NESTED_FOLDS = 3  # an outer fold held out, thresholds chosen out of fold on the other two or more
EXAMPLES = "examples"  # the gate of a candidate that decides by its encoder's examples model (toolgate.core.examples)
LADDER = "ladder"  # the single-pool ladder candidate; router.pipelines / --pipeline export it (a router without an encoder)


@dataclass(frozen=True)
class Candidate:
    ranker: str
    gate: str | None  # a signal of the gate registry; None: the single-pool ladder
    models: tuple[str, ...]  # the rankers a request runs, the lexical one first
    p50_ms: float  # the models' median latencies summed (cost.csv)

    @property
    def name(self) -> str:
        return LADDER if self.gate is None else f"{self.ranker}+{self.gate}"


def ask_cap(settings, study: Study) -> float:
    """A shipped router's ask cap: router.ask_cap (``settings``), else the paper's pipelines' routing.ask_cap."""
    return study.routing.ask_cap if settings.ask_cap is None else settings.ask_cap


def exportable(rankers: dict) -> list[str]:
    """Rankers a router can run: lexical and dense (hybrids and late interaction are not exported)."""
    return [n for n, e in rankers.items() if RankerSpec.of(e).lexical or RankerSpec.of(e).encoder_gate]


def model_key(entry) -> str:
    """The kind of model a ranker runs, as the latency table names it: ``bm25:<tokenizer>``, an encoder's backend,
    or ``<backend>:<model>`` for a model other than the backend's bundled one."""
    r = RankerSpec.of(entry)
    spec = r.entry
    if r.lexical:
        return f"bm25:{spec.get('tokenizer', 'char')}"
    enc = spec["encoder"]
    return f"{enc['backend']}:{enc['model']}" if enc.get("model") else enc["backend"]


def declared_latency(rankers: dict, settings) -> dict[str, float]:
    """Each exportable ranker's median latency per request in ms, never a timing of this run (the same config and
    seed select the same router on any machine): ``router.latency_ms`` where the config declares it, else the
    latency table's entry for the ranker's kind of model (``router.latency_table``; empty: the shipped one)."""
    path = latency_table(settings.latency_table)
    doc = io.read_yaml(path) or {}
    table = doc.get("models") if isinstance(doc, dict) else None
    if not isinstance(table, dict):
        raise InputError(path, "expected a mapping `models: {<model kind>: ms}`", field="models")
    out = {}
    for name in exportable(rankers):
        key = model_key(rankers[name])
        ms = settings.latency_ms.get(name, table.get(key))
        if not isinstance(ms, (int, float)) or isinstance(ms, bool) or not 0 < ms < float("inf"):
            raise InputError(path, f"no positive latency for ranker '{name}' (model kind '{key}'): add it to this "
                                   f"table or declare router.latency_ms.{name} in the config", field=f"models.{key}")
        out[name] = float(ms)
    return out


def latency_table(configured: str) -> Path:
    """The latency table router.select reads: router.latency_table (``configured``), else the one toolgate ships."""
    return Path(configured) if configured else LATENCY_TABLE


def candidates(rankers: dict, study: Study, lexical: str, settings, latency: dict) -> list[Candidate]:
    """Every candidate of ``settings`` (RouterSettings): the fixed one, or rankers x gates and the ladder."""
    if settings.select == "fixed":
        pairs = [(settings.ranker or lexical, settings.gate)]
    else:
        gates = list(settings.gates) or compared_gates(study.signals)
        dense = list(settings.examples) or [r for r in exportable(rankers) if RankerSpec.of(rankers[r]).encoder_gate]
        pairs = ([(r, gt) for r in (list(settings.rankers) or exportable(rankers)) for gt in gates]
                 + [(r, EXAMPLES) for r in dense] + [(lexical, None)])
    out = []
    for ranker, gate in pairs:
        if ranker not in exportable(rankers):
            raise InputError("config", f"'{ranker}' is not a lexical or dense ranker under rankers", field="router.ranker")
        if gate == EXAMPLES and not RankerSpec.of(rankers[ranker]).encoder_gate:
            raise InputError("config", f"'{ranker}' has no encoder for an examples model", field="router.examples")
        if gate not in (None, EXAMPLES) and gate not in study.signals:
            raise InputError("config", f"unknown gate '{gate}' (known: {', '.join(study.signals)}, {EXAMPLES})",
                             field="router.gate")
        models = tuple(dict.fromkeys([lexical, ranker, *(gate_encoders(study.signals, gate)
                                                         if gate not in (None, EXAMPLES) else [])]))
        out.append(Candidate(ranker, gate, models, float(sum(latency[m] for m in models))))
    return out


class Outcomes:
    """One candidate's decisions on every row under each threshold pair, so thresholds are chosen on any rows by
    counting (as :func:`toolgate.routing.baselines.choose` does: the best utility (router.utility) within the danger
    budget and ask cap, first on ties; the least dangerous when none is within), except that the budget and the cap
    must hold on every fold of those rows, not only on all of them: a cap held on the pooled rows alone was exceeded
    out of fold (0.157 at a cap of 0.15, docs/router.md). Only the counts are kept; the decisions of a
    chosen pair are evaluated again when asked for (kept as strings for every pair, the 40 candidates of the
    default selection held about 1 GB)."""

    def __init__(self, evaluate, cands, limits: tuple[float, float], value, scale: np.ndarray, fold: np.ndarray):
        """``limits``: (ask cap, danger budget); ``value(kind, tool)``: each request's utility; ``fold``: each
        request's fold (gate.folds); ``scale``: per request
        the value a pair (lo, hi) compares, whose decision ``evaluate`` makes row by row from ``scale >= lo`` and
        ``scale >= hi`` alone (the ladder's and the band's). So a row has three outcomes, evaluated once each (below
        both thresholds, between, above both), and a pair's are read off them: as if every pair were evaluated."""
        self.evaluate, self.cands, (self.ask_cap, self.budget), self.fold = evaluate, cands, limits, fold
        res = [evaluate(pair) for pair in ((np.inf, np.inf), (-np.inf, np.inf), (-np.inf, -np.inf))]
        lo, hi = (np.array([c[j] for c in cands], float)[:, None] for j in (0, 1))
        level = (scale >= lo).astype(np.intp) + (scale >= hi)
        at = lambda per_level: np.stack(per_level)[level, np.arange(len(scale))]  # noqa: E731
        self.correct = at([np.asarray(m["accuracy"], np.int64) for _, _, m in res])
        self.danger = at([np.asarray(m["danger"], np.int64) for _, _, m in res])
        self.ask = at([(np.asarray(k) == "ask").astype(np.int64) for k, _, _ in res])
        self.utility = at([np.asarray(value(k, t), float) for k, t, _ in res])
        self._danger, self._ask = self.danger.astype(float), self.ask.astype(float)

    def pick(self, mask: np.ndarray) -> int:
        """The threshold pair chosen on the rows of ``mask``; ValueError when it holds none (no rates to compare)."""
        m = mask.astype(np.int64)
        n = m.sum()
        if not n:
            raise ValueError("no rows to choose thresholds on: out-of-fold thresholds need two folds or more")
        d, v = self._danger @ m / n, self.utility @ m / n
        folds = np.unique(self.fold[mask])
        at = (self.fold[:, None] == folds) & mask[:, None]  # rows x the folds of mask
        per = at.sum(0)
        worst = lambda counts: (counts @ at / per).max(1)  # noqa: E731  (counts: float 0/1, so BLAS counts exactly)
        ok = (worst(self._danger) <= self.budget + TOL) & (worst(self._ask) <= self.ask_cap + TOL)
        return int(np.argmax(np.where(ok, v, -np.inf))) if ok.any() else int(np.argmin(d))

    def oof(self, within: np.ndarray) -> np.ndarray:
        """Per row of ``within``, the threshold pair chosen on the other folds of ``within`` (-1 elsewhere)."""
        fold, out = self.fold, np.full(len(self.fold), -1)
        for f in np.unique(fold[within]):
            out[within & (fold == f)] = self.pick(within & (fold != f))
        return out

    def pair(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """(kind, tool) of every row under threshold pair ``t``."""
        kind, tool, _ = self.evaluate(self.cands[t])
        return np.asarray(kind), np.asarray(tool)

    def decisions(self, chosen: np.ndarray):
        """(kind, tool, rows) of the rows with a chosen threshold pair (``chosen``: one per row, -1 for none)."""
        rows = np.flatnonzero(chosen >= 0)
        kind, tool = np.empty(len(rows), object), np.empty(len(rows), object)
        for t in np.unique(chosen[rows]):
            at = chosen[rows] == t
            k, tl = self.pair(int(t))
            kind[at], tool[at] = k[rows[at]], tl[rows[at]]
        return kind.astype(str), tool.astype(str), rows


def examples_of(exp, ranker: str) -> tuple[ExampleModel, Scores]:
    """(model, scores) of the examples model on ``ranker``'s encoder (and router.examples_chars' n-grams): trained on
    the catalog (examples, own texts, negatives) and the generic bank, never on the experiment's requests, then
    applied to every request; made once per experiment."""
    key = ("examples", ranker, exp.router.examples_chars)
    if key not in exp.memo:
        spec, langs = RankerSpec.of(exp.rankers[ranker]).entry, tuple(exp.run.langs)
        texts, labels = training_texts(exp.catalog, langs, generic_bank(langs))
        model = fit_examples(query_embeddings(spec, texts, exp.run), labels, exp.router.examples_c, texts,
                             exp.router.examples_chars)
        requests = [r["text"] for r in exp.rows]
        emb = query_embeddings(spec, requests, exp.run)  # the scores rule's order: its cache
        lex = exp.scores(exp.provenance["lexical"])
        exp.memo[key] = model, Scores(lex.utterance_ids, lex.tool_ids, lex.kinds,
                                      action_matrix(model, emb, exp.catalog, requests))
    return exp.memo[key]


def gate_values(exp, c: Candidate) -> tuple[np.ndarray, object]:
    """(gate value per request of the main set, the ranker's scores) of band candidate ``c``: a registered gate's
    out-of-fold value (gate/signals.csv), or the examples model's log-odds of its top action, which saw none of
    the experiment's requests."""
    if c.gate != EXAMPLES:
        return signal_rows(exp.signal_table, exp.main)[c.gate].to_numpy(), exp.scores(c.ranker)
    scores = examples_of(exp, c.ranker)[1]
    return log_odds(scores.for_rows(exp.main).action_scores().max(1)), scores


def route_source(exp, c: Candidate, ranker: Scores) -> Scores:
    """The scores whose route entries choose candidate ``c``'s route step (chat or delegate): an examples model's
    own (its route classes, :mod:`toolgate.core.examples`), else the lexical ranker's, as the shipped router."""
    return ranker if c.gate == EXAMPLES else exp.scores(exp.provenance["lexical"])


def catalog_rules(exp) -> Rules:
    """The shipped router's evidence rules over the experiment's catalog (near-tie margin 0: see
    :func:`after_rules`), made once per experiment: they depend on the catalog alone."""
    if "rules" not in exp.memo:
        lexical, langs = exp.provenance["lexical"], tuple(exp.run.langs)
        lex = exp.scores(lexical)
        exp.memo["rules"] = Rules(Evidence(exp.catalog, langs),
                                  fit_ranker(exp.rankers[lexical], exp.catalog, langs, exp.run.text), lex.tool_ids,
                                  lex.actions, int(exp.provenance["limits"]["top_k"]), 0.0)
    return exp.memo["rules"]


def after_rules(exp, c: Candidate, ranker: Scores) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the shipped router's evidence rules (:class:`~toolgate.core.runtime.Rules`) make of candidate ``c``'s
    decisions on the main set, per request: (kind, tool) after a band act on the ranker's top action, after a band
    ask on it (arrays of 2 x requests), and whether the request takes the route step whatever the band says (no
    candidate, no evidence). The near-tie margin is fitted at export and left out here (an exact tie is not): by
    construction it asks at most router.tie_cost of a fold's action requests more. Made once per ranker."""
    key = ("rules", c.ranker, c.gate == EXAMPLES and exp.router.examples_chars)
    if key not in exp.memo:
        rows, lex = exp.main, exp.scores(exp.provenance["lexical"])
        rules = catalog_rules(exp)
        acts, lex_max = ranker.for_rows(rows).action_scores(), lex.for_rows(rows).action_scores().max(1)
        top1, route = top_actions(ranker, rows)[:, 0], route_step(route_source(exp, c, ranker), rows)
        kind, tool, away = np.empty((2, len(rows)), object), np.empty((2, len(rows)), object), np.zeros(len(rows), bool)
        for i, r in enumerate(rows):
            seen = np.isfinite(acts[i])
            for j, band in enumerate(("action", "ask")):
                kind[j, i], tool[j, i], why = rules.checked(r["text"], (band, str(top1[i]), route[i]), acts[i],
                                                            lex_max[i], seen)
            away[i] = why in ("no_candidates", "no_evidence")
        exp.memo[key] = kind.astype(str), tool.astype(str), (away, route)
    return exp.memo[key]


def shipped(exp, c: Candidate, ranker: Scores, evaluate, g: Gold):
    """``evaluate`` (threshold pair -> kind, tool, metrics) with the evidence rules applied as the shipped router
    applies them (:func:`after_rules`), its danger and accuracy counted on what remains."""
    kind_after, tool_after, (away, route) = after_rules(exp, c, ranker)

    def ruled(pair):
        kind, tool, met = evaluate(pair)
        kind, tool = np.asarray(kind, object).copy(), np.asarray(tool, object).copy()
        for j, band in enumerate(("action", "ask")):
            at = kind == band
            kind[at], tool[at] = kind_after[j][at], tool_after[j][at]
        kind[away], tool[away] = route[away], ""
        kind, tool = kind.astype(str), tool.astype(str)
        return kind, tool, {**met, "danger": g.delegate & (kind == "action"), "accuracy": correct(kind, tool, g)}
    return ruled


def valued(g: Gold, costs: dict):
    """Each request's utility of (kind, tool) arrays under ``costs`` (router.utility)."""
    return lambda kind, tool: utility(np.asarray(kind), np.asarray(tool), g, costs)


def outcomes(exp, c: Candidate, g: Gold) -> Outcomes:
    """Candidate ``c``'s decisions on the experiment's main set (``g``: its gold) under each threshold pair, after
    the shipped router's evidence rules (:func:`shipped`)."""
    study, rows, lexical = exp.study, exp.main, exp.provenance["lexical"]
    budget, value, fold = study.gate.danger_budget, valued(g, exp.router.utility), main_folds(exp)
    if c.gate is None:
        lex = exp.scores(lexical)
        evaluate, cands = ladder_setting(lex, rows, g, study.routing.grid)
        return Outcomes(shipped(exp, c, lex, evaluate, g), cands, (1.0, budget), value, lex.for_rows(rows).matrix.max(1),
                        fold)
    gate, ranker = gate_values(exp, c)
    evaluate, cands, _, _ = band_setting(ranker, route_source(exp, c, ranker), rows, g, gate, study.routing)
    return Outcomes(shipped(exp, c, ranker, evaluate, g), cands, (ask_cap(exp.router, study), budget), value, gate, fold)


def main_folds(exp) -> np.ndarray:
    """Each request's fold of the main set (gate/signals.csv)."""
    return signal_rows(exp.signal_table, exp.main)["fold"].to_numpy()


def rates(o: Outcomes, chosen: np.ndarray, within: np.ndarray) -> dict:
    rows = np.flatnonzero(within)
    idx = chosen[rows]
    return {"utility": o.utility[idx, rows].mean(), "accuracy": o.correct[idx, rows].mean(),
            "danger_rate": o.danger[idx, rows].mean(), "ask_rate": o.ask[idx, rows].mean()}


def _best(cands: list[Candidate], rate: dict, settings, study: Study, held: dict | None = None) -> Candidate | None:
    """The best candidate within the latency budget, danger budget and ask cap. With held-out catalogs (``held``:
    :func:`toolgate.router.loco.held_out`): none whose interval against the ladder lies below 0 on one of them,
    ranked by the worst of them (accuracy minus the ladder), then by utility on the experiment's own set; without:
    by that utility. Ties: the cheaper, then the ladder. ``select: fixed``: the one candidate, whatever its rates."""
    if settings.select == "fixed":
        return cands[0]
    ok = [c for c in cands if c.p50_ms <= settings.latency_budget_ms and rate[c.name]["danger_rate"]
          <= study.gate.danger_budget + TOL and rate[c.name]["ask_rate"] <= ask_cap(settings, study) + TOL
          and not (held and held[c.name]["below"])]

    def key(c):
        worst = -round(held[c.name]["worst"], 12) if held else 0.0
        return worst, -round(rate[c.name]["utility"], 12), c.p50_ms, c.gate is not None, c.name

    return min(ok, key=key) if ok else None


@dataclass
class Selection:
    table: pd.DataFrame  # one row per candidate, then the nested selection's
    chosen: Candidate | None
    why: str
    nested: dict  # accuracy, danger_rate, ask_rate, ladder_accuracy, accuracy_minus_ladder, ci_low, ci_high
    passed_over: list[str]  # one sentence per candidate of higher utility that was not chosen, and why


def select(exp, held: dict | None = None) -> Selection:
    """Every candidate out of fold on the experiment's main set, the selection nested (module docstring), each
    against the ladder. ``exp``: the experiment (:class:`toolgate.experiment.Experiment`: its ``router`` settings);
    ``held``: each candidate's held-out catalogs (:func:`toolgate.router.loco.held_out`; None or empty: the
    experiment's own set alone decides)."""
    rows, catalog, signals, study, settings = exp.main, exp.catalog, exp.signal_table, exp.study, exp.router
    rankers, lexical, held = exp.rankers, exp.provenance["lexical"], held or None
    g, fold = Gold(rows, catalog), main_folds(exp)
    if len(np.unique(fold)) < NESTED_FOLDS:  # inner thresholds are chosen out of fold within the outer training folds
        raise InputError(exp.input.signals, f"the nested selection needs {NESTED_FOLDS} folds or more, the main set "
                         f"has {len(np.unique(fold))} (gate.folds; each needs an in- and an out-of-catalog request group)",
                         field="fold")
    cands = candidates(rankers, study, lexical, settings, declared_latency(rankers, settings))
    missing = [c.name for c in cands if held and c.name not in held and settings.select != "fixed"]
    if missing:
        raise InputError("tables/router_loco.csv", f"no held-out row for candidate '{missing[0]}': the table was "
                         "written for other router.rankers or router.gates; run the workflow again")
    res, clusters = study.gate.resamples, np.array([r["utterance_id"] for r in rows])
    ladder = study_ladder(exp.scores(lexical), rows, g, signals, study)[:2]
    every, outs, plain, recs = np.ones(len(rows), bool), {}, {}, []
    for c in cands:
        outs[c.name] = outcomes(exp, c, g)
        plain[c.name] = outs[c.name].oof(every)
    rate = {n: rates(o, plain[n], every) for n, o in outs.items()}
    chosen = _best(cands, rate, settings, study, held)
    fallback = chosen is None  # nothing keeps the budgets: the ladder ships, and the reason says so
    chosen = next((c for c in cands if c.gate is None), None) if fallback else chosen
    for c in cands:
        kind, tool, _ = outs[c.name].decisions(plain[c.name])
        recs.append({"candidate": c.name, "ranker": c.ranker, "gate": c.gate or "(pool top score)",
                     "models": " + ".join(c.models), "p50_ms": c.p50_ms,
                     "within_latency": c.p50_ms <= settings.latency_budget_ms, **rate[c.name],
                     "danger_ok": rate[c.name]["danger_rate"] <= study.gate.danger_budget + TOL,
                     "ask_ok": rate[c.name]["ask_rate"] <= ask_cap(settings, study) + TOL,
                     **versus_ladder((kind, tool), ladder, g, res, study.run.seed, clusters),
                     **_held_columns(held, c), "chosen": c is chosen})
    nested_kind, nested_tool, by_fold = np.empty(len(rows), object), np.empty(len(rows), object), {}
    for f in np.unique(fold):
        train = fold != f
        inner = {c.name: rates(outs[c.name], outs[c.name].oof(train), train) for c in cands}
        best = _best(cands, inner, settings, study, held)
        by_fold[int(f)] = best.name if best else "none"
        o = outs[best.name] if best else None
        if o is None:  # nothing within the budgets on these folds: the ladder's decisions stand (reported as none)
            nested_kind[~train], nested_tool[~train] = ladder[0][~train], ladder[1][~train]
            continue
        t = o.pick(train)
        kind, tool = o.pair(t)
        nested_kind[~train], nested_tool[~train] = kind[~train], tool[~train]
    nested_kind, nested_tool = nested_kind.astype(str), nested_tool.astype(str)
    guard = versus_ladder((nested_kind, nested_tool), ladder, g, res, study.run.seed, clusters)
    nested = {"utility": float(utility(nested_kind, nested_tool, g, settings.utility).mean()),
              "accuracy": float(correct(nested_kind, nested_tool, g).mean()),
              "danger_rate": float((g.delegate & (nested_kind == "action")).mean()),
              "ask_rate": float((nested_kind == "ask").mean()), **{k: float(v) for k, v in guard.items()},
              "chosen_by_fold": "; ".join(f"{k}:{v}" for k, v in by_fold.items())}
    recs.append({"candidate": "nested selection", "ranker": "", "gate": "", "models": "", "p50_ms": np.nan,
                 "within_latency": np.nan, **{k: nested[k] for k in ("utility", "accuracy", "danger_rate", "ask_rate")},
                 "danger_ok": nested["danger_rate"] <= study.gate.danger_budget + TOL,
                 "ask_ok": nested["ask_rate"] <= ask_cap(settings, study) + TOL, **guard, "chosen": False,
                 "chosen_by_fold": nested["chosen_by_fold"]})
    why = (f"no candidate keeps the danger budget, the ask cap and the latency budget of {settings.latency_budget_ms} "
           "ms" + (" without an interval against the ladder below 0 on a held-out catalog" if held else "")
           + ": the single-pool ladder is shipped as the fallback, outside the budgets") if fallback else _why(
        chosen, rate, cands, settings, held)
    over = passed_over(chosen, cands, rate, settings, study, held)
    return Selection(pd.DataFrame(recs), chosen, why, nested, over)


def _held_columns(held: dict | None, c: Candidate) -> dict:
    """router_selection.csv's held-out columns of ``c`` (empty without held-out catalogs)."""
    if not held:
        return {}
    h = held[c.name]
    return {"held_out_worst": h["worst"], "held_out_worst_set": h["worst_set"], "held_out_below": " ".join(h["below"])}


def _why(chosen: Candidate, rate: dict, cands: list[Candidate], settings, held: dict | None) -> str:
    """Why ``chosen`` ships, in words that hold no timing (router.json records it: identical runs, identical bytes;
    the latencies are tables/router_selection.csv's p50_ms)."""
    budgets = (f"within the latency budget ({settings.latency_budget_ms} ms) that keeps the danger budget and ask "
               f"cap, out of {len(cands)}")
    mode = "the fixed router.ranker + router.gate" if settings.select == "fixed" else (
        f"the candidate with the best worst held-out catalog (routed accuracy minus the ladder, tables/router_loco.csv)"
        f" {budgets}, none of its intervals below the ladder" if held else f"the candidate of the highest utility {budgets}")
    text = (f"{chosen.name}: {mode}; out-of-fold utility {rate[chosen.name]['utility']:.3f}, routed accuracy "
            f"{rate[chosen.name]['accuracy']:.3f}")
    if held and settings.select != "fixed":
        h = held[chosen.name]
        text += f", worst held-out catalog {h['worst_set']} at {h['worst']:+.3f} against the ladder"
    return text


def passed_over(chosen: Candidate | None, cands: list[Candidate], rate: dict, settings, study: Study,
                held: dict | None = None) -> list[str]:
    """A sentence for each candidate of higher utility out of fold than ``chosen``: by how much, and which budget or
    held-out catalog kept it out."""
    if chosen is None:
        return []
    out = []
    for c in cands:
        r, gain = rate[c.name], rate[c.name]["utility"] - rate[chosen.name]["utility"]
        if c is chosen or gain <= TOL:
            continue
        why = [  # a fixed selection has one candidate: nothing is passed over
            text for failed, text in (
                (c.p50_ms > settings.latency_budget_ms, f"its declared latency {c.p50_ms:g} ms exceeds the budget of "
                                                        f"{settings.latency_budget_ms:g} ms"),
                (r["danger_rate"] > study.gate.danger_budget + TOL, f"its danger rate {r['danger_rate']:.3f} exceeds "
                                                                    f"the budget of {study.gate.danger_budget:g}"),
                (r["ask_rate"] > ask_cap(settings, study) + TOL, f"its ask rate {r['ask_rate']:.3f} exceeds the cap "
                                                                 f"of {ask_cap(settings, study):g}"),
                *_held_reasons(held, c, chosen)) if failed]
        out.append(f"passed over {c.name}: out-of-fold utility {r['utility']:.3f}, {gain:+.3f} over "
                   f"{chosen.name}, but {' and '.join(why)}")
    return out


def _held_reasons(held: dict | None, c: Candidate, chosen: Candidate) -> list[tuple[bool, str]]:
    """passed_over's held-out reasons: an interval below the ladder, or a worse worst held-out catalog."""
    if not held:
        return []
    h, best = held[c.name], held[chosen.name]
    return [(bool(h["below"]), f"its interval against the ladder lies below 0 on {', '.join(h['below'])}"),
            (not h["below"] and h["worst"] < best["worst"] - TOL,
             f"its worst held-out catalog, {h['worst_set']}, routes {h['worst']:+.3f} against the ladder "
             f"({chosen.name}: {best['worst']:+.3f} on {best['worst_set']})")]
