"""Command-line interface: ``toolgate <subcommand>``."""
from __future__ import annotations

import argparse
import sys

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolgate", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate", help="check a catalog (and utterances) and print counts")
    p.add_argument("--catalog", required=True, help="catalog JSONL")
    p.add_argument("--utterances", help="utterances JSONL")
    p.set_defaults(func=_validate)
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
