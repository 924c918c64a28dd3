"""Command-line interface: ``toolgate <subcommand>``."""
from __future__ import annotations

import argparse
import sys

import numpy as np

from . import io
from .errors import InputError


def _validate(args) -> int:
    catalog = io.load_catalog(args.catalog)
    rows = io.load_utterances(args.utterances, catalog) if args.utterances else None
    s = io.summarize(catalog, rows)
    print(f"catalog {args.catalog}: {s['tools']} tools ({s['actions']} actions, {s['routes']} routes), "
          f"{s['mutating_actions']} mutating actions")
    if rows is not None:
        print(f"utterances {args.utterances}: {s['utterances']} rows, {s['pairs']} pairs")
        for key in ("slice", "gold_outcome", "lang", "subtype"):
            print(f"  by {key}: " + ", ".join(f"{k}={v}" for k, v in s[f"by_{key}"].items()))
    return 0


def _route(args) -> int:
    from . import config as cfgmod
    from .rankers import fit_ranker
    from .scores import top_order

    cfg = cfgmod.load(args.config)
    if args.ranker not in cfg["rankers"]:
        print(f"error: unknown ranker '{args.ranker}' (config {args.config} has: {', '.join(cfg['rankers'])})", file=sys.stderr)
        return 2
    catalog = io.load_catalog(args.catalog or cfg["catalog"], tuple(cfg["langs"]))
    run = cfgmod.run(cfg["seed"], cfg["langs"], cfg["text"])
    ranker = fit_ranker(cfg["rankers"][args.ranker], catalog, run.langs, run.text.ngram, run.text.pad)
    scores = np.asarray(ranker.score(args.text))
    order = [i for i in top_order(scores) if args.routes or catalog[i]["kind"] == "action"]
    lang = "ko" if any("가" <= ch <= "힣" for ch in args.text) else "en"
    print(f"{args.ranker} top {args.top} for: {args.text}")
    for rank, i in enumerate(order[: args.top], start=1):
        t = catalog[i]
        name = t["names"].get(lang) or next(iter(t["names"].values()))
        print(f"{rank:>3}. {scores[i]:9.4f}  {t['id']:<22} {name}{'  [mutating]' if t['mutating'] else ''}")
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolgate", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate", help="check a catalog (and utterances) and print counts")
    p.add_argument("--catalog", required=True, help="catalog JSONL")
    p.add_argument("--utterances", help="utterances JSONL")
    p.set_defaults(func=_validate)
    p = sub.add_parser("route", help="rank the catalog for one request and print the top candidates")
    p.add_argument("text", help="the request, Korean or English")
    p.add_argument("--ranker", default="bm25", help="a ranker named in the config (default: bm25)")
    p.add_argument("--top", type=int, default=5, help="candidates to print (default: 5)")
    p.add_argument("--catalog", help="catalog JSONL (default: the config's)")
    p.add_argument("--config", default="config.yaml", help="experiment config (default: config.yaml)")
    p.add_argument("--routes", action="store_true", help="also rank the route entries (chat, delegate, clarify)")
    p.set_defaults(func=_route)
    p = sub.add_parser("check", help="compare result tables with an expected-values file")
    p.add_argument("--expected", required=True, help="expected YAML, e.g. tests/expected/default.yaml")
    p.add_argument("--results", required=True, help="tables folder, e.g. results/default/tables")
    p.add_argument("--write", action="store_true", help="refresh the expected values from the results instead")
    p.add_argument("--config", default="config.yaml", help="experiment config naming the roles (default: config.yaml)")
    p.set_defaults(func=_check)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
