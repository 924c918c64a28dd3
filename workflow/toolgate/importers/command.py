"""``toolgate import FORMAT SRC... --out DIR``: the command line of each format (``toolgate import FORMAT --help``)
and the lines of its summary."""
from __future__ import annotations

import argparse

from ..core import io
from ..core.errors import InputError
from .build import DUPLICATES, SEED, Options
from .pairs import COMMON, Columns
from .policy import EMPTY_CANDIDATES, OTHER_LANGS
from .readers import FORMATS
from .toolrows import OUTCOMES, PRESETS, Fields, fields


def _presets() -> str:
    """The presets of tool-rows as help text: the fields each sets, and its label map."""
    return "; ".join(f"{name}: " + "".join(f"--{k}-field {v}, " for k, v in vars(f).items()
                                          if k != "label_map" and v != getattr(Fields(), k))
                     + "--label-map " + ",".join(f"{a}={b}" for a, b in f.label_map) for name, f in PRESETS.items())


SOURCES = {  # format: (SRC, short help, description)
    "openai-tools": (
        "TOOLS.json REQUESTS.jsonl", "OpenAI tool schemas and a JSONL of requests",
        "TOOLS.json: a JSON list of OpenAI tool schemas ({'type': 'function', 'function': {...}} or bare "
        "functions), or {'tools': [...]}; names unique. REQUESTS.jsonl, one request a line: text (or messages: the "
        "last user message is the request, earlier ones its context), tool (the gold tool's name, or null), and "
        "optionally candidates (tool names), missing_slots (gold ask), outcome (delegate or chat, with tool null), "
        "id, pair_id, subtype. Other fields are kept in the row's meta."),
    "tool-rows": (
        "ROWS.jsonl...", "JSONL rows, each with its own tools and conversation",
        "One request a line with its own tools and conversation, as most function-calling sets ship (BFCL live and "
        "the sets built the same way); each row's tools are its candidates, identical definitions one catalog "
        "tool, another definition under a taken name renamed _2, _3. Fields (flag: default): --tools-field: tools; "
        "--text-field: messages (the last user message is the request, earlier ones its context; or a plain "
        "string); --call-field: tool_calls, else answers, else (and where the field is empty) an assistant message "
        "after the request (the first "
        "call names the gold tool); --label-field: none (label 'call' when the row has a call, else 'no_call'); "
        f"--label-map: call=action (outcomes: {', '.join(OUTCOMES)}); --slots-field: missing_slots (an ask row "
        "without them gets ['unknown']); --id-field: id. Other fields are kept in the row's meta. The whole file "
        "is checked first: every missing field, a call, slot or id field under another name and every unmapped label "
        "in one error, with the flags that fit. Presets: "
        f"{_presets()}."),
    "pairs": (
        "TOOLS.json PAIRS.csv|PAIRS.jsonl", "a tools file and (request, tool) rows",
        "TOOLS.json: a JSON list of tool objects (OpenAI schemas or bare {name, description, parameters}), "
        "{'tools': [...]}, a name -> description map, or JSON Lines of tool objects. PAIRS: CSV or TSV with a "
        "header row, or JSONL; one (request, tool) pair a row, an empty tool cell a request no tool answers (gold "
        "delegate). Columns (flag: default, the first the file has): --text-column: "
        f"{', '.join(COMMON['text'])}; --tool-column: {', '.join(COMMON['tool'])}; --id-column: "
        f"{', '.join(COMMON['id'])} (none: rows of the same text are one request); --outcome-column: outcome (act "
        "or ask with a tool, delegate or chat without); --lang-column: lang, language; headers match in any case. Rows of one request: a repeated "
        "pair is counted, a second tool counted (the first row's is the gold one); other columns are kept in the "
        "row's meta. One pooled catalog: --holdout-tools FRACTION makes the out-of-catalog requests, --per-tool K "
        "and --sample N balance the draw."),
    "bfcl": (
        "FOLDER | BFCL_v4_<subset>.json...", "BFCL v4 question and possible-answer files",
        "BFCL v4 question files (English): multiple and live_multiple in catalog (gold: the first call of "
        "possible_answer/BFCL_v4_<subset>.json), irrelevance and live_irrelevance out of catalog; each row's "
        "function list is its candidates. --subsets: multiple live_multiple irrelevance live_irrelevance."),
    "functionchat": (
        "FOLDER | FunctionChat-*.jsonl...", "FunctionChat-Bench Singlecall and CallDecision",
        "FunctionChat-Bench (Korean): Singlecall (one request per candidate condition) and CallDecision (CALL in "
        "catalog, REJECT out of catalog within its own tools); each row's tools are its candidates. --subsets: "
        "exact 4_random 4_close 8_random 8_close call reject."),
    "clinc150": (
        "FOLDER | data_full.json", "CLINC150 intents, their training requests and the evaluation splits",
        "CLINC150 (Larson et al. 2019, CC BY 3.0; English): a folder holding data_full.json, or one file of its "
        "shape (split -> [[text, intent], ...]). Each intent is a tool, described by its name made readable, its "
        "training requests its examples; validation and test requests are in catalog, their out-of-scope ones out "
        "of it (gold delegate); out-of-scope training requests are not read. One pooled catalog. --subsets: val "
        "test (a request's subtype is its key: val, oos_val, test, oos_test). Whether the file is the pinned "
        "data_full.json is recorded in import.json."),
    "beir": (
        "FOLDER | corpus.jsonl queries.jsonl qrels.tsv", "BEIR-style corpus, queries and qrels",
        "A BEIR-style retrieval set: corpus entries (_id, title, text) are tools, judged queries (_id, text) "
        "requests, the highest-scored relevant entry of qrels.tsv (or qrels/test.tsv) the gold tool. One pooled "
        "catalog: --holdout-tools makes the out-of-catalog requests."),
}
FIELD_FLAGS = ("text", "tools", "call", "label", "slots", "id")


def declare(p, count, fraction) -> None:
    """The ``import`` subcommand's arguments on its parser ``p``, a parser of its own for each format; ``count``,
    ``fraction``: argparse types."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", required=True, metavar="DIR", help="experiment folder to write (new or empty; "
                        "never a git work tree's root or inside a .git folder, the current folder or the workflow's results/)")
    common.add_argument("--force", action="store_true", help="replace an earlier import in DIR (only the unchanged "
                        "files toolgate recorded writing there) or write beside other files when no name clashes")
    common.add_argument("--license", default="", metavar="TEXT", help="the licence of your data (an SPDX id such as "
                        "CC-BY-4.0, or a sentence), recorded in import.json's licenses for the report to cite")
    add_reading_flags(common)
    common.add_argument("--sample", type=count, default=0, metavar="N", help="at most N requests, drawn with --seed "
                        "(0: all)")
    common.add_argument("--per-tool", type=count, default=0, metavar="K", help="at most K requests per gold tool, "
                        "drawn with --seed before --sample (out-of-catalog requests uncapped; 0: all)")
    common.add_argument("--examples-per-tool", type=count, default=0, metavar="N", help="move up to N requests of "
                        "each tool into the catalog as its examples (drawn with --seed, a request with its "
                        "translations, never a tool's last one); they leave the evaluation set (0: none)")
    common.add_argument("--seed", type=int, default=SEED, help=f"seed of the sample and the tool split (default "
                        f"{SEED}, the experiments' seed)")
    common.add_argument("--holdout-tools", type=fraction, default=0.0, metavar="FRACTION",
                        help="remove this share of the gold tools from the catalog; their requests become out of "
                        "catalog")
    common.add_argument("--subsets", nargs="+", metavar="NAME", help="keep only these subsets (bfcl, functionchat, "
                        "clinc150: above; tool-rows: labels; openai-tools: subtypes)")
    common.add_argument("--duplicates", choices=DUPLICATES, default="keep", help="a request repeating an earlier "
                        "one (same text, earlier turns and candidates): keep it or drop it; counted either way "
                        "(default keep)")
    common.add_argument("--no-routes", action="store_true", help="do not add the route entries chat, delegate, "
                        "clarify")
    p.description = ("Write DIR/catalog.jsonl, DIR/utterances.jsonl, DIR/config.yaml (experiment name: DIR's name; "
                     "paths relative to itself) and DIR/import.json (counts and every decision), validated; then run "
                     "snakemake --configfile DIR/config.yaml from the project root. `toolgate import FORMAT --help` "
                     "describes a format; docs/formats.md, 'Import formats', gives an example of each.")
    formats = p.add_subparsers(dest="format", required=True, metavar="FORMAT", help=", ".join(FORMATS))
    for name in FORMATS:
        metavar, short, text = SOURCES[name]
        f = formats.add_parser(name, parents=[common], help=short, description=text)
        f.add_argument("sources", nargs="+", metavar="SRC", help=metavar)
    add_field_flags(formats.choices["tool-rows"])
    add_column_flags(formats.choices["pairs"])


def add_reading_flags(p) -> None:
    """How a request is read, for every format: ``import``'s and ``decide --eval``'s."""
    p.add_argument("--lang", choices=io.LANGS, help="language of every text, the rows whose script reads otherwise "
                   "counted (default: each row's own, read from its script: Hangul ko, Latin en; BFCL is en, "
                   "FunctionChat ko)")
    p.add_argument("--other-langs", choices=OTHER_LANGS, help="a row whose script is neither Hangul (ko) nor Latin "
                   "(en): left out (skip, the default), kept as en (keep) or an error; counted either way")
    p.add_argument("--empty-candidates", choices=EMPTY_CANDIDATES, default="", help="what a request offered no tools "
                   "means: it sees the whole catalog (a gold delegate is then counted as ambiguous), or it sees no tool "
                   "and its gold is delegate (left out of an import, whose candidate lists are never empty; routed so "
                   "by decide --eval) (default: an error)")
    p.add_argument("--no-candidates", action="store_true",
                   help="pool every request's tools into one catalog instead of keeping each request's own list")


def add_field_flags(p) -> None:
    """Where tool-rows keeps each part of a request: ``import tool-rows``'s and ``decide --eval``'s."""
    p.add_argument("--preset", choices=sorted(PRESETS), default="", help="tool-rows: field names and label map of a "
                   "known shape (flags below override them)")
    for name in FIELD_FLAGS:
        p.add_argument(f"--{name}-field", metavar="FIELD", help=f"tool-rows: the row's field holding the {name}")
    p.add_argument("--label-map", default="", metavar="LABEL=OUTCOME,...", help="tool-rows: label -> gold outcome, "
                   "added to the preset's (e.g. call=action,needs_info=ask,cannot_answer=delegate,chit_chat=chat,"
                   "other=skip)")


def add_column_flags(p) -> None:
    """Where pairs keeps each part of a row: ``import pairs``'s and ``decide --eval``'s."""
    for name in COMMON:
        p.add_argument(f"--{name}-column", metavar="COLUMN", help=f"pairs: the column holding the {name} (default: "
                       f"the first of {', '.join(COMMON[name])} the file has)")


def _fields(args, fmt: str) -> Fields | Columns | None:
    """tool-rows' field mapping or pairs' columns of parsed arguments (None for the other formats)."""
    if fmt == "pairs":
        return Columns(**{k: getattr(args, f"{k}_column") or "" for k in COMMON})
    if fmt != "tool-rows":
        return None
    return fields(args.preset, args.label_map, **{k: getattr(args, f"{k}_field") for k in FIELD_FLAGS})


def options(args) -> Options:
    """The import options of parsed arguments."""
    return Options(sample=args.sample, per_tool=args.per_tool, seed=args.seed, holdout=args.holdout_tools, subsets=tuple(args.subsets or ()),
                   candidates=not args.no_candidates, routes=not args.no_routes, duplicates=args.duplicates,
                   empty_candidates=args.empty_candidates, other_langs=args.other_langs or "skip",
                   fields=_fields(args, args.format), examples=args.examples_per_tool)


def eval_options(args, fmt: str | None) -> Options | None:
    """The options ``decide --eval`` reads a set in import format ``fmt`` with (None: an utterances file, read as
    it is): ``import``'s reading flags; nothing sampled or split (the router's catalog decides which tools are out
    of it), no route entries (the router has its own). A flag the format does not read is an error naming it."""
    rows = [f"--{k.replace('_', '-')}" for k in ("preset", "label_map", *(f"{n}_field" for n in FIELD_FLAGS))
            if getattr(args, k)]
    cols = [f"--{k}-column" for k in COMMON if getattr(args, f"{k}_column")]
    reading = [f"--{k.replace('_', '-')}" for k in ("lang", "empty_candidates", "other_langs", "no_candidates")
               if getattr(args, k)]
    if fmt is None and rows + cols + reading:
        raise InputError((rows + cols + reading)[0], "applies to the files of an import format (--eval FILE... "
                                                     "--eval-format FORMAT), not to an utterances file or a request")
    for flags, only in ((rows, "tool-rows"), (cols, "pairs")):
        if flags and fmt != only:
            raise InputError(flags[0], f"applies to --eval-format {only} only, not {fmt}")
    if fmt is None:
        return None
    return Options(candidates=not args.no_candidates, routes=False, empty_candidates=args.empty_candidates,
                   other_langs=args.other_langs or "skip", fields=_fields(args, fmt))


def summary_lines(info: dict) -> list[str]:
    """What the import decided, with counts, for the printed summary."""
    langs = info["langs"]
    lines = [f"languages: {', '.join(f'{k}={v}' for k, v in langs.items())}"
             + (" (mixed: the tables split by language)" if sum(n > 0 for n in langs.values()) > 1 else "")]
    lines += [f"warning: {line}" for line in info["language_warnings"]]
    if info.get("examples"):
        lines.append(f"examples: {info['examples']} in the catalog" + (
            " (--examples-per-tool: requests moved out of the evaluation set)" if info["options"]["examples"]
            else " (from the source)"))
    lines += [f"decided: {what}: {n}" for what, n in info["decisions"].items()]
    lines += _dropped(info) + _ambiguous(info)
    if info["unknown_types"]:
        lines.append("warning: parameter types outside JSON Schema, kept as given (import.json: unknown_types): "
                     + ", ".join(f"{k} ({n} parameters)" for k, n in info["unknown_types"].items()))
    if info["meta_fields"]:
        lines.append("kept in meta: " + ", ".join(f"{k} ({n} rows)" for k, n in info["meta_fields"].items()))
    renamed = list(info["renamed_tools"].items())
    lines += [f"renamed: '{name}' -> {tid} (another definition had the name first)" for tid, name in renamed[:10]]
    if len(renamed) > 10:
        lines.append(f"renamed: {len(renamed) - 10} more (import.json: renamed_tools)")
    return lines


def _dropped(info: dict) -> list[str]:
    return [f"dropped {n} requests: {why}" for why, n in info["dropped"].items()]


def _ambiguous(info: dict) -> list[str]:
    n = info.get("ambiguous_gold", 0)
    return [f"warning: {n} requests offered no tools are gold delegate but see the whole catalog "
            "(--empty-candidates catalog): a tool of it may answer them, so their gold is ambiguous "
            "(import.json: ambiguous_gold; --empty-candidates delegate: they see no tool)"] if n else []


def eval_lines(info: dict) -> list[str]:
    """What ``decide --eval`` decided reading the files of an import format (``info``: :func:`~.build.requests_over`'s;
    nothing for an utterances file)."""
    if not info:
        return []
    lines = [f"read {info['requests']} requests: {info['in_catalog']} in the router's catalog, "
             f"{info['out_of_catalog']} out"]
    if info["removed_tools"]:
        lines.append(f"{info['removed_tools']} tools of the files are not in the router's catalog (no action of the "
                     "same definition): their requests count as out of it")
    matched, tools = info["tools_matched"]
    if matched < tools / 2:
        lines.append(f"warning: only {matched} of the files' {tools} tools are in the router's catalog: most "
                     "requests are scored as out of it (are these the tools the router was exported with?)")
    return lines + _dropped(info) + _ambiguous(info)
