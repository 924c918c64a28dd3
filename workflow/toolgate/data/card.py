"""Data card: composition, vocabulary overlap with the catalog, lengths, examples."""
from __future__ import annotations

import math
import random
from pathlib import Path

import pandas as pd

from .. import __version__, metrics
from ..core import io, schemas, text
from ..core.catalog import actions
from ..tables import paper_note, to_markdown
from ..utterances import main_set
from .annotations import agreement_frame, confusions, joined, load_passes
from .sources import EXTERNAL_LICENCES, PINS


def gold_text(tool: dict, lang: str) -> str:
    """The catalog text an utterance is compared with: name + description in its language."""
    return f"{tool['names'].get(lang, '')} {tool['descriptions'].get(lang, '')}".strip()


def composition_table(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    keys = ["lang", "slice", "gold_outcome", "subtype"]
    return df.groupby(keys).size().rename("n").reset_index().sort_values(keys, kind="stable")


def jaccard_frame(rows: list[dict], catalog: list[dict], ngram: int) -> pd.DataFrame:
    """Per in-catalog utterance: Jaccard of its n-gram set with its gold tool's text."""
    tools = {t["id"]: t for t in catalog}
    recs = [{"utterance_id": r["utterance_id"], "lang": r["lang"], "slice": r["slice"],
             "jaccard": text.jaccard(r["text"], gold_text(tools[r["gold_tool"]], r["lang"]), ngram)}
            for r in rows if r["gold_tool"] is not None]
    return pd.DataFrame(recs, columns=["utterance_id", "lang", "slice", "jaccard"])


def summarize_distribution(df: pd.DataFrame, keys: list[str], value: str) -> pd.DataFrame:
    """n, median, first and third quartile of ``value`` by ``keys``, and the share of zeros."""
    g = df.groupby(keys)[value]
    out = pd.DataFrame({"n": g.size(), "median": g.median(), "q1": g.quantile(0.25), "q3": g.quantile(0.75),
                        "zero_share": g.apply(lambda v: (v == 0).mean())})
    return out.reset_index()


def ngram_length(row: dict, ngram: int) -> int:
    """An utterance's length as the paper counts it: its character n-grams, repeats kept."""
    return len(text.char_ngrams(row["text"], ngram))


def length_table(rows: list[dict], ngram: int) -> pd.DataFrame:
    df = pd.DataFrame([{"lang": r["lang"], "slice": r["slice"], "chars": len(text.normalize(r["text"])),
                        "ngrams": ngram_length(r, ngram)} for r in rows])
    g = df.groupby(["lang", "slice"])
    return pd.DataFrame({"n": g.size(), "chars_median": g["chars"].median(), "chars_mean": g["chars"].mean(),
                         "ngrams_median": g["ngrams"].median()}).reset_index()


def length_auc(rows: list[dict], ngram: int) -> dict[str, float]:
    """AUC of the raw n-gram count for out-of-catalog (positive: the longer side) against mismatch items,
    pooled over languages (``all``) and within each: the paper's untransformed query-length statistic."""
    pool = [r for r in rows if r["slice"] in ("out", "mismatch")]
    out = {}
    for lang in ["all"] + sorted({r["lang"] for r in pool}):
        sub = [r for r in pool if lang in ("all", r["lang"])]
        out[lang] = metrics.auc([ngram_length(r, ngram) for r in sub], [r["slice"] == "out" for r in sub])
    return out


LOW_TEXT_SHARE = 0.5  # below it, most of a language's requests meet tools with no words of theirs to match


def language_table(catalog: list[dict], rows: list[dict]) -> pd.DataFrame:
    """Per language of the requests: their count, and the catalog's actions with a name or description in it
    (what a lexical ranker can match a request of that language against) out of all its actions."""
    acts = actions(catalog)
    return pd.DataFrame([{"lang": lang, "requests": sum(r["lang"] == lang for r in rows),
                          "actions_with_text": sum(lang in t["names"] or lang in t["descriptions"] for t in acts),
                          "actions": len(acts)} for lang in sorted({r["lang"] for r in rows})],
                        columns=["lang", "requests", "actions_with_text", "actions"])


def language_gaps(table: pd.DataFrame) -> list[str]:
    """A sentence per language whose requests mostly meet catalog texts in another language (``table``:
    :func:`language_table`), naming the lexical ranker's likely failure and the rankers that cross languages (the
    schema's default roles: the names an imported config and the default config use)."""
    roles = {k: v["default"] for k, v in schemas.schema("config")["properties"]["roles"]["properties"].items()}
    total = int(table["requests"].sum())
    return [f"{r.requests} of {total} requests are in {r.lang}, but only {r.actions_with_text} of the catalog's "
            f"{r.actions} actions have a {r.lang} name or description: the lexical ranker ({roles['lexical']}) matches "
            f"words, so it will likely miss most {r.lang} requests; the multilingual encoders ({roles['encoder']}, "
            f"{roles['second_encoder']}) rank across languages (or give each tool a {r.lang} name and description)"
            for r in table.itertuples() if r.actions_with_text < LOW_TEXT_SHARE * r.actions]


AGREEMENT_COLUMNS = ["lang", "slice", "compare", "n", "annotated", "agreement", "kappa"]


def annotation_section(rows, catalog, folder) -> tuple[list[str], pd.DataFrame]:
    """Markdown lines and the agreement table of the blind annotation passes in ``folder``."""
    passes = load_passes(folder, catalog) if folder else {}
    if not passes:
        return [], pd.DataFrame(columns=AGREEMENT_COLUMNS)
    ann = joined(rows, passes)
    agree = agreement_frame(ann, passes)
    conf = confusions(ann, passes)
    notes = [line[1:].strip() for p in sorted(Path(folder).glob("*.csv"))
             for line in p.read_text(encoding="utf-8").splitlines()[:3] if line.startswith("#")]
    lines = ["## Blind annotation", "", f"Passes in `{folder}`: {', '.join(passes)}. " + " ".join(notes[:2]), "",
             "Agreement with gold and between passes (raw share and Cohen's kappa; `annotated`: items the pass "
             "covers). Items a pass maps away from gold are rewritten in the banks or dropped.", "",
             to_markdown(agree), "", "Confusable action pairs (gold -> a pass's answer, over all passes):", "",
             to_markdown(conf) if len(conf) else "none", ""]
    return lines, agree


def used_external(source: str, external) -> list[str]:
    """The external data (keys of EXTERNAL_LICENCES) an experiment reads: its requests' ``source`` (the config's
    utterances.source), and the cross-check sets of its ``external`` section when that study runs."""
    sets = external.sets if external.enabled else ()
    used = {"functionchat": source == "functionchat" or any(s.startswith("functionchat_") for s in sets),
            "bfcl": "bfcl" in sets, "clinc150": source == "clinc150"}
    return [key for key in EXTERNAL_LICENCES if used[key]]


def licence_sentences(utterances_path, source: str, external) -> list[str]:
    """The licences of the data this experiment used, for the data card and the report: each external set it read
    (:func:`used_external`), and an imported set's as ``toolgate import`` recorded them (``licenses`` of the
    import.json beside the utterances: what a LICENSE beside the source states, and the user's own declaration)."""
    used = used_external(source, external)
    sets = "; ".join(f"{EXTERNAL_LICENCES[k][0]} ({PINS[k]['repo']} at {PINS[k]['commit'][:12]}) under "
                     f"{EXTERNAL_LICENCES[k][1]}" for k in used)
    record = Path(utterances_path).parent / "import.json"
    out = [f"Data licences: this experiment read {sets}, from a local mirror or a pinned download, never stored in "
           "this repository." if used else "Data licences: this experiment's set is an import (below); it read no "
           "other external data set." if record.is_file() else "Data licences: this experiment read no external "
           "data set."]
    if record.is_file():
        stated = io.loads_json(io.read_text(record), record).get("licenses") or []
        out.append("The imported set's licence: " + "; ".join(
            x["name"] + (f" (`{x['file']}`)" if x.get("file") else "") for x in stated) + "." if stated else
            "The imported set records no licence: `toolgate import --license` declares it.")
    return out


def write_data_card(exp) -> None:
    """``exp.output``: named ``card``, ``composition``, ``jaccard``, ``agreement`` (annotation agreement);
    ``exp.utterances``: the config section (its template folder's README.md says how the banks were written)."""
    catalog_path, utterances_path, outputs = exp.input.catalog, exp.input.utterances, exp.output
    examples, utterances, ngram, seed = exp.examples, exp.utterances, exp.run.text.ngram, exp.seed
    catalog, rows = exp.catalog, exp.rows
    comp = composition_table(rows)
    jac = summarize_distribution(jaccard_frame(rows, catalog, ngram), ["lang", "slice"], "jaccard")
    lengths = length_table(rows, ngram)
    lang_table = language_table(catalog, rows)
    rng = random.Random(seed)
    aucs = length_auc(main_set(rows), ngram)
    parts = [
        f"# Data card: {utterances_path}",
        "",
        f"Generated by toolgate {__version__} (seed {seed}). {len(rows)} utterances, "
        f"{len({r['pair_id'] for r in rows})} pairs, catalog `{catalog_path}` "
        f"({sum(t['kind'] == 'action' for t in catalog)} actions).",
        "",
        " ".join(licence_sentences(utterances_path, utterances.get("source"), exp.external)),
        "",
        "## Composition (language x slice x outcome x subtype)",
        "",
        to_markdown(comp),
        "",
        f"## Vocabulary overlap: character {ngram}-gram Jaccard with the gold action's name + description",
        "",
        "In-catalog utterances only, in the utterance's language. " + paper_note(("jaccard.",)),
        "",
        to_markdown(jac),
        "",
        "## Length (normalised characters and character n-grams)",
        "",
        to_markdown(lengths, ".1f"),
        "",
        "AUC of the n-gram count alone for out-of-catalog against mismatch items (main set; longer = out): "
        + ", ".join(f"{lang} " + ("not computed" if math.isnan(v) else f"{v:.3f}") for lang, v in aucs.items())
        + (" (no mismatch items, or no out-of-catalog ones)" if any(math.isnan(v) for v in aucs.values()) else "")
        + ". The paper's value, pooled and untransformed, is the target of `data_check.length_auc`. "
        + paper_note(("gate.query_length.auc_raw",)),
        "",
        "## Languages: the requests' and the catalog's texts",
        "",
        to_markdown(lang_table),
        "",
        " ".join(f"{g[0].upper()}{g[1:]}." for g in language_gaps(lang_table)) or "Every request language has a name or "
        "description in it for most actions.",
        "Top-1 by language and ranker: tables/selection.csv.",
        "",
    ]
    ann_lines, agree = annotation_section(rows, catalog, utterances.get("annotations"))
    readme = Path(utterances.get("templates") or "") / "README.md"
    if utterances.get("source") == "generate" and readme.is_file():
        parts += ["## How the template banks were written", "", readme.read_text(encoding="utf-8").strip(), ""]
    parts += ann_lines + [f"## Random examples ({examples} per slice and language)", ""]
    for lang in sorted({r["lang"] for r in rows}):
        for slice_ in schemas.schema("utterances")["properties"]["slice"]["enum"]:
            pool = [r for r in rows if r["lang"] == lang and r["slice"] == slice_]
            if not pool:
                continue
            parts.append(f"**{lang} / {slice_}**")
            parts.append("")
            for r in rng.sample(pool, min(examples, len(pool))):
                label = r["gold_tool"] or r["gold_outcome"]
                parts.append(f"- `{r['utterance_id']}` {r['text']} -> {label} ({r['subtype']})")
            parts.append("")
    io.write_atomic(outputs.agreement, agree.to_csv(index=False, float_format="%.4f", lineterminator="\n"))
    io.write_atomic(outputs.composition, comp.to_csv(index=False))
    io.write_atomic(outputs.jaccard, jac.to_csv(index=False, float_format="%.4f"))
    io.write_atomic(outputs.card, "\n".join(parts))
