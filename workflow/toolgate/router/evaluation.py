"""The router's evaluation card (tables/router_eval.csv, ``toolgate decide --eval FILE``): the selected router on
labelled requests, within the experiment and on every external set.

* **within**: the selection's own out-of-fold figures of the chosen candidate (thresholds chosen on four folds of
  the gate study, applied to the fifth; the gate's out-of-fold values), the numbers router_selection.csv reports;
  ``decide --eval`` on the main set runs the thresholds fitted on all of it instead (in sample).
* **external**: the exported artifact applied unchanged (:meth:`toolgate.core.runtime.Router.on_catalog`: ranker,
  gate, calibrator, thresholds and evidence rules as shipped; the BM25 index and catalog embeddings made for the
  set's tools, nothing fitted on request labels), each request over its own candidate tools.
* **file** (``decide --eval``): the artifact unchanged over its own catalog, or re-targeted to another one
  (:func:`on_catalog`, as the external rows are), on an utterances file, or on the files of an import format read as
  ``toolgate import`` reads them (:func:`eval_rows`); each request over its own candidates where it has a list (an
  empty list: it sees no tool); with the single-pool ladder and always-delegate on the same requests as reference
  rows (:func:`reference_rows`).

Routed accuracy is routing_baselines' (:func:`toolgate.routing.baselines.correct`): an in-catalog request to its
gold tool (executed or asked), an out-of-catalog one to its gold route (the external sets' out-of-catalog requests
are gold-delegate, and with no route entries in their catalogs the route step is delegate). Abstention AUC: the
AUC of P(in catalog) (the gate's value for the within rows) for in-catalog against out-of-catalog requests; danger:
the share of all requests that are gold-delegate and executed; ask: the share asked; relevance / irrelevance
detection (BFCL's names): the share of in-catalog requests executed / of out-of-catalog ones not. Intervals: 95%
percentile intervals over cluster-bootstrap resamples (the set's clusters; utterances within the experiment, as in
router_selection.csv). A request the router refuses (over router.max_chars) is routed to the server: delegate.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import External
from ..core import io, schemas
from ..core.artifact import RouterError, sha256
from ..core.calibration import platt_probability
from ..core.catalog import action_ids, load_catalog
from ..core.errors import InputError
from ..core.rankers import RankerSpec, query_embeddings
from ..core.retarget import anchors, generic_requests, retargeted
from ..core.runtime import KIND_WORDS, Router
from ..core.scores import Scores, top_actions
from ..core.text import char_ngrams
from ..metrics import calibration_errors
from ..routing.baselines import Gold, Study, correct, ladder
from ..stats import auc_interval, cluster_weights, folds, percentile_interval, resampled_means
from ..tables import write_table
from ..utterances import load_utterances
from .select import EXAMPLES, Candidate, gate_values, outcomes

log = logging.getLogger(__name__)
PIPELINE_KINDS = {word: kind for kind, word in KIND_WORDS.items()}  # a Decision's act -> action, ...
LEVEL = 0.95
FILE_RESAMPLES = 2000  # decide --eval: an artifact does not record the experiment's gate.resamples
REFERENCE_FOLDS = 5    # decide --eval's ladder: thresholds chosen out of fold over the file's pairs
REFERENCE_GRID = schemas.schema("config")["properties"]["routing"]["properties"]["grid"]["default"]
BUDGET = schemas.schema("config")["properties"]["gate"]["properties"]["danger_budget"]["default"]  # a manifest without its own
NOTE = ("within: out of fold (decide --eval runs the export's in-sample thresholds, hence differs); external: the "
        "artifact unchanged on each set's own candidates; re-targeted: label-free anchors; ladder: the reference. "
        "refused: over router.max_chars. docs/metrics.md, 'Router evaluation card'.")
COLUMNS = ["set", "mode", "router", "n", "n_in", "n_out", "refused", "accuracy", "accuracy_low", "accuracy_high",
           "auc", "auc_low", "auc_high", "danger_rate", "danger_low", "danger_high", "ask_rate", "ask_low", "ask_high",
           "relevance_detection", "irrelevance_detection", "right", "wrong", "wrong_act", "ece"]
PROBE_EXPECTS = ("action", "ask", "not_act", "no_action")
ECE_BINS = 10
LEAK_JACCARD, LEAK_COSINE = 0.5, 0.97  # a request this near an example may be a copy of it: the clean row drops it


def card_row(decided: tuple, g: Gold, clusters, resamples: int, seed: int, top=None) -> dict:
    """Routed accuracy, abstention AUC, danger and ask rates of ``decided`` (kind, tool and P(in catalog) arrays)
    with their intervals, and BFCL's relevance and irrelevance detection; the AUC, and the detection of the missing
    kind, are NaN when the requests are all in or all out of catalog. ``top``: the tool an act would run on each
    request; given, ``ece`` is the calibration error of the P against that act being right (:func:`act_ece`)."""
    kind, tool, p_in = decided
    kind, tool, y = np.asarray(kind, str), np.asarray(tool, str), g.in_catalog.astype(int)
    clusters = np.asarray(clusters)
    out = {"n": g.n, "n_in": int(y.sum()), "n_out": int(g.n - y.sum())}
    hits = {"accuracy": correct(kind, tool, g), "danger": g.delegate & (kind == "action"), "ask": kind == "ask"}
    hits = {name: hit.astype(float) for name, hit in hits.items()}
    for name, boot in resampled_means(hits, clusters, resamples, seed).items():
        out["accuracy" if name == "accuracy" else f"{name}_rate"] = float(hits[name].mean())
        out[f"{name}_low"], out[f"{name}_high"] = percentile_interval(boot, LEVEL)
    # BFCL's names: a tool called (executed) on an in-catalog request, none on an out-of-catalog one
    acted = kind == "action"
    out["relevance_detection"] = float(acted[y == 1].mean()) if y.any() else np.nan
    out["irrelevance_detection"] = float((~acted[y == 0]).mean()) if (y == 0).any() else np.nan
    both = 0 < y.sum() < len(y)
    w = cluster_weights(clusters, resamples, seed)  # the same resamples (drawn once)
    auc = auc_interval(p_in, y, w, LEVEL) if both else (np.nan, np.nan, np.nan)
    out["auc"], out["auc_low"], out["auc_high"] = auc
    if top is not None:
        out["ece"] = act_ece(p_in, top, g)
    return out


def act_ece(p, top, g: Gold) -> float:
    """Expected calibration error (:data:`ECE_BINS` equal-width bins) of P against acting on ``top`` (per request,
    the tool an act would run) being right: an in-catalog request whose gold tool it is."""
    right = g.in_catalog & (np.asarray(top, str) == g.tool)
    return calibration_errors(p, right, ECE_BINS)[0] if g.n else np.nan


def routed(router: Router, texts, candidates=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]:
    """(kind, tool, P(in catalog), refused count, top tool) of the router's decisions (top: the tool an act would
    run, its best candidate); a refused request is delegated, with P(in catalog) 0 and no top tool."""
    ok = np.array([_accepted(router, t) for t in texts], bool)
    keep = np.flatnonzero(ok)
    ds = router.decide_many([texts[i] for i in keep], None if candidates is None else [candidates[i] for i in keep])
    kind, tool, p = np.full(len(texts), "delegate", object), np.full(len(texts), "", object), np.zeros(len(texts))
    top = np.full(len(texts), "", object)
    for i, d in zip(keep, ds):
        kind[i], tool[i], p[i] = PIPELINE_KINDS[d.kind], d.tool or "", d.p_in_catalog
        top[i] = d.candidates[0][0] if d.candidates else ""
    return kind.astype(str), tool.astype(str), p, int((~ok).sum()), top.astype(str)


def on_set(router: Router, ext, bank: list[str], fit: dict | None = None, lexical=None, evidence=None) -> dict:
    """{mode: ((kind, tool, P(in catalog), refused) or None, note)} of ``router`` on external set ``ext``, each request
    over its own candidates: ``unchanged`` (:meth:`Router.on_catalog`; ``lexical``, ``evidence``: the set's BM25
    ranker and evidence rules when they are at hand) and ``re-targeted`` by the anchors on ``bank``
    (:mod:`.retarget`; ``fit``: the router's own anchors on ``bank``, computed when not given; None and why where the
    anchors give no direction)."""
    over, texts = router.on_catalog(ext.catalog, (ext.lang,), lexical, evidence), [u["text"] for u in ext.utterances]
    out = {"unchanged": (routed(over, texts, ext.candidates), "")}
    try:
        moved = retargeted(over, anchors(router, bank) if fit is None else fit, bank)
    except RouterError as exc:
        return out | {"re-targeted": (None, str(exc))}
    return out | {"re-targeted": (routed(moved, texts, ext.candidates), "")}


def loco_path(inputs):
    """router_loco.csv among named ``inputs`` (``loco``: a list of one, or empty where the external study is off;
    the workflow's and :meth:`toolgate.experiment.Experiment.from_config`'s), or None."""
    loco = getattr(inputs, "loco", [])
    return loco[0] if loco else None


def _accepted(router: Router, text) -> bool:
    try:
        router.check(text)
    except RouterError:
        return False
    return True


def leakage(exp) -> pd.DataFrame:
    """Per request of the main set: its highest character-3-gram Jaccard and cosine (the first dense ranker's
    encoder; NaN without one) to any example of the catalog, the nearest example by Jaccard, and ``leaked`` when
    either reaches its threshold (LEAK_JACCARD, LEAK_COSINE): a request the examples may have written for it."""
    examples = [e["text"] for t in exp.catalog for e in t.get("examples", [])]
    rows = exp.main
    out = pd.DataFrame({"utterance_id": [r["utterance_id"] for r in rows], "text": [r["text"] for r in rows],
                        "jaccard": 0.0, "nearest": "", "cosine": np.nan})
    if not examples:
        return out.assign(leaked=False)
    grams = [set(char_ngrams(x, 3)) for x in examples]  # text.jaccard's sets, each example's made once
    best = []
    for r in rows:
        q = set(char_ngrams(r["text"], 3))
        sims = [len(q & e) / len(q | e) if q | e else 0.0 for e in grams]
        best.append((max(sims), examples[int(np.argmax(sims))]))
    out["jaccard"], out["nearest"] = [b[0] for b in best], [b[1] for b in best]
    dense = [n for n, e in exp.rankers.items() if RankerSpec.of(e).encoder_gate]
    if dense:
        spec = RankerSpec.of(exp.rankers[dense[0]]).entry
        emb = query_embeddings(spec, [r["text"] for r in exp.rows], exp.run)
        keep = {r["utterance_id"]: i for i, r in enumerate(exp.rows)}
        q = emb[[keep[u] for u in out["utterance_id"]]]
        out["cosine"] = (q @ query_embeddings(spec, examples, exp.run).T).max(1)
    return out.assign(leaked=(out["jaccard"] >= LEAK_JACCARD) | (out["cosine"] >= LEAK_COSINE))


def write_leakage(exp) -> pd.DataFrame:
    """tables/example_leakage.csv (``output.table``): :func:`leakage`'s leaked requests, with the medians over all
    requests in its note (rule ``example_leakage``, beside the selection: the examples' vectors come from the
    cache embed_external filled, or are encoded here where no external study runs)."""
    near = leakage(exp)
    write_table(near[near["leaked"]], exp.output.table, "Evaluation requests near a catalog example",
                f"Main-set requests with Jaccard to a catalog example >= {LEAK_JACCARD} or cosine >= {LEAK_COSINE}, left "
                f"out of router_eval.csv's clean row. Of {len(near)}: median Jaccard {near['jaccard'].median():.3f}, "
                f"cosine {near['cosine'].median():.3f}. docs/metrics.md, 'Router evaluation card'.", exp.run.seed)
    return near


def leaked_rows(path, rows: list[dict]) -> np.ndarray:
    """Per row, whether :func:`write_leakage`'s table at ``path`` lists its utterance id (unique in a set:
    :func:`toolgate.utterances.load_utterances` refuses a repeated one)."""
    listed = set(pd.read_csv(path, dtype=str, keep_default_na=False)["utterance_id"])
    return np.array([str(r["utterance_id"]) in listed for r in rows], bool)


def within_rows(router: Router, exp, leaked: np.ndarray) -> list[dict]:
    """The chosen candidate's out-of-fold figures on the experiment's main set (the selection's own decisions), then
    on its clean part (``leaked``: per request, near an example of the catalog; :func:`leakage`)."""
    rows, study = exp.main, exp.study
    p = router.manifest["pipeline"]
    g = Gold(rows, exp.catalog)
    c = Candidate(p["ranker"], EXAMPLES if p["kind"] == "examples" else p["gate"], (), 0.0)
    o = outcomes(exp, c, g)
    kind, tool, _ = o.decisions(o.oof(np.ones(len(rows), bool)))
    value, ranker = gate_values(exp, c) if c.gate else (None, exp.scores(exp.provenance["lexical"]))
    value = ranker.for_rows(rows).matrix.max(1) if value is None else value
    p_act = platt_probability(value, router.coef, router.intercept)  # the exported calibrator on out-of-fold values
    top = top_actions(ranker, rows)[:, 0].astype(str)
    clusters = np.array([r["utterance_id"] for r in rows])
    clean = ~leaked
    g_clean, name = Gold([r for r, c in zip(rows, clean) if c], exp.catalog), router.manifest["experiment"]
    return [{"set": name, "mode": "within (out of fold)", "refused": 0,
             **card_row((kind, tool, value), g, clusters, study.gate.resamples, study.run.seed),
             "ece": act_ece(p_act, top, g)},
            {"set": name, "mode": f"within (out of fold), clean: {int(leaked.sum())} near an example left out",
             "refused": 0, **card_row((kind[clean], tool[clean], value[clean]), g_clean, clusters[clean],
                                      study.gate.resamples, study.run.seed), "ece": act_ece(p_act[clean], top[clean], g_clean)}]


def external_rows(router: Router, external: External, study: Study, loco=None) -> list[dict]:
    """Per external set: the artifact unchanged and re-targeted without labels
    (:func:`toolgate.core.retarget.retarget`), each request over its own candidates, then the single-pool ladder
    fitted on the same experiment and applied unchanged (``loco``: router_loco.csv's rows of it, None: no row)."""
    from ..external.adapters import load_all

    recs = []
    for name, ext in load_all(external, study.run.seed).items():
        g, bank = Gold(ext.utterances, ext.catalog), generic_requests((ext.lang,))
        for mode, (out, note) in on_set(router, ext, bank).items():
            if out is None:
                log.warning("%s: not re-targeted: %s", name, note)
                continue
            kind, tool, p, refused, top = out
            recs.append({"set": name, "mode": f"external ({mode})", "refused": refused,
                         **card_row((kind, tool, p), g, ext.clusters, study.gate.resamples, study.run.seed, top)})
            log.info("%s (%s): routed accuracy %.3f over %d requests (%d refused)", name, mode,
                     recs[-1]["accuracy"], len(kind), refused)
        if loco is not None:
            ladder = loco[(loco["candidate"] == "ladder") & (loco["test_set"] == name) & (loco["mode"] == "unchanged")]
            recs += [{**r, "set": name, "mode": "external (ladder unchanged)", "router": "single-pool ladder"}
                     for r in ladder.drop(columns=["candidate", "ranker", "gate", "test_set", "mode", "fit_set",
                                                   "note"]).to_dict("records")]
    return recs


def eval_rows(router: Router, sources, fmt: str | None = None, options=None, lang: str | None = None):
    """(rows, info) of ``decide --eval``: the labelled requests of ``sources`` over the router's catalog. ``fmt``:
    None for the project's utterances JSONL (one file; info {}), or an import format whose files are read and
    prepared as ``toolgate import`` does (:func:`toolgate.importers.read_over`, ``options``: its reading options;
    info: what that decided, import.json's keys). An InputError names the file, line and field."""
    langs = tuple(router.manifest["langs"])
    if fmt is None:
        if len(sources) != 1:
            raise InputError(" ".join(map(str, sources)), "an utterances file is one file (the files of an import "
                                                          "format: --eval-format FORMAT)")
        return load_utterances(sources[0], router.catalog, langs), {}
    from ..importers import read_over

    rows, info = read_over(fmt, sources, router.catalog, options, lang)
    other = [r for r in rows if r["lang"] not in langs]  # --other-langs: left out (counted), kept, or an error
    if other and options.other_langs == "error":
        raise InputError(sources[-1], f"request '{other[0]['utterance_id']}' is in '{other[0]['lang']}'; the router "
                                      f"reads {', '.join(langs)}", field="lang")
    if other and options.other_langs == "skip":
        info["dropped"][f"in a language the router does not read ({', '.join(langs)}; --other-langs skip)"] = len(other)
        rows = [r for r in rows if r["lang"] in langs]
        info.update(requests=len(rows), in_catalog=sum(r["gold_tool"] is not None for r in rows),
                    out_of_catalog=sum(r["gold_tool"] is None for r in rows))  # the counts of what is evaluated
    return rows, info


def on_catalog(router: Router, path) -> Router:
    """``decide --eval --catalog FILE``: the router itself when it was exported from that catalog file, else the
    artifact re-targeted to it (:meth:`Router.on_catalog`, as the external rows are) in the languages the router
    reads that the file's tools are named in."""
    if sha256(Path(path).read_bytes()) == router.manifest["catalog"]["sha256"]:
        return router
    catalog = load_catalog(path)
    langs = [lang for lang in router.manifest["langs"] if any(lang in t["names"] for t in catalog)]
    if not langs:
        raise InputError(path, f"no tool is named in a language the router reads ({', '.join(router.manifest['langs'])})",
                         field="names")
    return router.on_catalog(catalog, langs)


def _candidates(router: Router, rows: list[dict]) -> list | None:
    """Each request's candidate ids (the catalog's actions where it has no list; an empty list: none), or None
    when no request has a list."""
    actions = action_ids(router.catalog)
    return [r.get("candidates", actions) for r in rows] if any("candidates" in r for r in rows) else None


def _card(rows: list[dict], router: Router, decided: tuple, resamples: int, top=None) -> dict:
    """:func:`card_row` of ``decided`` (kind, tool, P(in catalog)) on a file's rows, clustered by pair_id."""
    return card_row(decided, Gold(rows, router.catalog), [r.get("pair_id") or r["utterance_id"] for r in rows],
                    resamples, router.manifest["seed"], top)


def file_row(router: Router, rows: list[dict], name: str, resamples: int = FILE_RESAMPLES,
             mode: str = "file (unchanged)") -> dict:
    """``decide --eval``: the artifact (over its own catalog, or re-targeted by :func:`on_catalog`: ``mode`` says
    which) on labelled ``rows`` (:func:`eval_rows`) named ``name``, each request over its own candidates where it
    has a list (clusters: pair_id)."""
    if not rows:
        raise RouterError(f"{name}: no utterances to evaluate")
    kind, tool, p, refused, top = routed(router, [r["text"] for r in rows], _candidates(router, rows))
    right = correct(kind, tool, Gold(rows, router.catalog))
    langs = np.array([r["lang"] for r in rows])
    by_lang = {lang: {"n": int((langs == lang).sum()), "accuracy": float(right[langs == lang].mean())}
               for lang in dict.fromkeys(langs)}
    wrong = [{"utterance_id": r["utterance_id"], "text": r["text"], "decision": _said(kind[i], tool[i]),
              "gold": _said(r["gold_outcome"], r["gold_tool"] or "")} for i, r in enumerate(rows) if not right[i]]
    return {"set": name, "mode": mode, "router": router.label, "refused": refused,
            **_card(rows, router, (kind, tool, p), resamples, top), "by_lang": by_lang, "wrong": wrong}


def _said(kind: str, tool: str) -> str:
    """A decision as the router's line words it (``act set_alarm``, ``delegate``) from the pipelines' kinds."""
    word = KIND_WORDS.get(kind, kind)
    return f"{word} {tool}" if tool and word in ("act", "ask") else word


def reference_rows(router: Router, rows: list[dict], name: str, resamples: int = FILE_RESAMPLES) -> list[dict]:
    """``decide --eval``'s reference rows on the same requests, each over its own candidates: the single-pool ladder
    on the router's BM25 scores (thresholds chosen out of fold over the file's pairs, under the router's danger
    budget: it has seen the file's labels, so it is an optimistic reference) and always-delegate (P(in catalog) 0)."""
    g, n = Gold(rows, router.catalog), len(rows)
    recs = [{"set": name, "mode": "reference", "router": "always delegate", "refused": 0,
             **_card(rows, router, (np.full(n, "delegate"), np.full(n, ""), np.zeros(n)), resamples)}]
    groups = np.array([r.get("pair_id") or r["utterance_id"] for r in rows])
    k = min(REFERENCE_FOLDS, len(set(groups[g.in_catalog])), len(set(groups[~g.in_catalog])))
    if k < 2:  # out-of-fold thresholds need two groups of each kind
        log.info("%s: fewer than 2 in- or out-of-catalog pairs: no ladder reference row", name)
        return recs
    pool = np.asarray(router.lexical.score_many([r["text"] for r in rows]), float)
    cands = _candidates(router, rows)
    if cands is not None:  # as the router masks (an empty list hides every action), not as the study's rows do
        pool = np.where(router.visible(cands, n), pool, -np.inf)
    fold = np.zeros(n, int)
    for f, (_, test) in enumerate(folds(g.in_catalog.astype(int), groups, k, router.manifest["seed"])):
        fold[test] = f
    lex = Scores(np.array([r["utterance_id"] for r in rows]), router.ids, router.kinds, pool)
    plain = [{"utterance_id": r["utterance_id"]} for r in rows]  # the candidates are in the pool already
    kind, tool, _ = ladder(lex, plain, g, fold, router.manifest["thresholds"].get("danger_budget", BUDGET),
                           REFERENCE_GRID)
    recs.append({"set": name, "mode": "reference", "router": "single-pool ladder (BM25, thresholds out of fold)",
                 "refused": 0, **_card(rows, router, (kind, tool, pool.max(1)), resamples)})
    return recs


def probe_meets(probe: dict, decision) -> bool:
    """Does a decision (act / ask / delegate / chat with its tool) give what a probe expects: ``action`` its tool,
    executed or asked; ``ask`` its tool, asked; ``not_act`` anything but an execution; ``no_action`` its route?"""
    if probe["expect"] == "not_act":
        return decision.kind != "act"
    if probe["expect"] in ("action", "ask"):
        return decision.kind in (("act", "ask") if probe["expect"] == "action" else ("ask",)) and \
            decision.tool == probe["tool"]
    return decision.kind == probe["route"]


def read_probes(files, catalog: list[dict]) -> dict[Path, list[dict]]:
    """The probes of each file ``router-<name>.jsonl`` of ``files`` (InputError names the first malformed line), or
    none (with a warning) when a probe names a tool ``catalog`` lacks: the probes were written for another catalog."""
    probes = {}
    for f in map(Path, files):
        for lineno, p in io.read_jsonl(f):
            needs = {"action": "tool", "ask": "tool", "no_action": "route"}.get(p.get("expect"))
            bad = next((k for k in ("text", "expect", needs) if k and not (
                p.get(k) in PROBE_EXPECTS if k == "expect" else isinstance(p.get(k), str))), None)
            if bad is not None:
                raise InputError(f, f"a probe is {{\"text\": ..., \"expect\": one of {', '.join(PROBE_EXPECTS)}}}, "
                                    "with a \"tool\" for action and ask and a \"route\" for no_action", lineno, bad)
            probes.setdefault(f, []).append(p)
    tools = {t["id"] for t in catalog}
    if any(p.get("tool") and p["tool"] not in tools for rows in probes.values() for p in rows):
        log.warning("probes in %s name tools outside the router's catalog: no probe rows", ", ".join(map(str, probes)))
        return {}
    return probes


def probe_rows(router: Router, probes: dict[Path, list[dict]]) -> list[dict]:
    """One row per probe file of ``probes`` (:func:`read_probes`, read against the router's catalog)."""
    recs = []
    for f, rows in probes.items():
        ds = router.decide_many([p["text"] for p in rows])
        right = [probe_meets(p, d) for p, d in zip(rows, ds)]
        recs.append({"set": f"probes:{f.stem.removeprefix('router-')}", "mode": "probes", "n": len(rows),
                     "accuracy": sum(right) / len(rows), "right": sum(right), "wrong": right.count(False),
                     "wrong_act": sum(not r and d.kind == "act" for r, d in zip(right, ds))})
    return recs


def write_router_eval(exp):
    """tables/router_eval.csv (``output.table``): the within row, one row per external set (``external``: None when
    off), one row per probe file (:func:`probe_rows`).

    ``input``: named ``router`` (the selected router's router.json), ``catalog``, ``utterances``, ``signals``,
    ``scores``, ``leakage`` (:func:`write_leakage`'s table), ``loco`` and ``probes`` (the probe files,
    router.probes' ``router-*.jsonl``; none: no probe rows)."""
    inputs, study = exp.input, exp.study
    router = Router.load(Path(inputs.router).parent)
    recs = within_rows(router, exp, leaked_rows(inputs.leakage, exp.main))
    loco = pd.read_csv(loco_path(inputs)) if loco_path(inputs) else None
    recs += external_rows(router, exp.external, study, loco) if exp.external is not None else []
    recs += probe_rows(router, read_probes(getattr(inputs, "probes", []), router.catalog))
    table = pd.DataFrame([{"router": router.label, **r} for r in recs]).reindex(columns=COLUMNS)
    write_table(table, exp.output.table, "Router evaluation card: the selected router within the experiment and on "
                "every external set", NOTE, study.run.seed)
    return table
