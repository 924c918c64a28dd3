"""Regression check of headline numbers (Pyserini-style expected-scores YAML).

Each entry ``{name, table, where, column, value, tol}`` of ``tests/expected/<experiment>.yaml`` is looked up with
the report's lookup and must lie within ``tol``; ``data/paper/reported.yaml`` is an expected file too, each value
within its tolerance (:func:`.tables.bounds`).
"""
from __future__ import annotations

import math
from dataclasses import asdict

import yaml

from ..config import Roles
from ..core import io, schemas
from ..core.errors import InputError
from .tables import bounds, load_tables, lookup, within


def paper_entries(reported: list[dict]) -> list[dict]:
    """The entries of a paper-values file that name their table cell, as expected entries (``low``/``high``: the
    bounds of :func:`.tables.bounds`, ``tol`` in words)."""
    out = []
    for e in reported:
        if e.get("ours"):
            low, high, words = bounds(e)
            out.append({"name": e["key"], **e["ours"], "value": math.nan if e["value"] is None else e["value"],
                        "low": low, "high": high, "tol_words": words})
    return out


def load_expected(path) -> dict:
    """An expected-values file, validated against ``workflow/toolgate/core/schemas/expected.schema.yaml``; or a paper-values file
    (``data/paper/reported.yaml``: a list), whose entries with ``ours`` become expected entries (experiment: none)."""
    expected = io.read_yaml(path) or {}
    if isinstance(expected, list):
        bad = next((i for i, e in enumerate(expected) if not isinstance(e, dict)), None)
        if bad is not None:
            raise InputError(path, "a paper-values file is a list of entries (mappings), as data/paper/reported.yaml",
                             field=f"[{bad}]")
        return {"experiment": None, "entries": paper_entries(expected), "paper": True}
    schemas.check_schema(path, None, expected, "expected")
    return expected


def check(tables_dir, expected_path, roles: Roles) -> tuple[list[str], list[str]]:
    """(failures, passes) as readable lines."""
    expected = load_expected(expected_path)
    tables = load_tables(tables_dir)
    failures, passes = [], []
    for e in expected["entries"]:
        where = ", ".join(f"{k}={v.format(**asdict(roles)) if isinstance(v, str) else v}"
                          for k, v in (e.get("where") or {}).items())
        label = f"{e['name']}: {e['table']}.csv {e['column']}" + (f" [{where}]" if where else "")
        try:
            got = lookup(tables, e, roles)
        except KeyError as exc:
            failures.append(f"- {label}: missing ({exc})")
            continue
        if isinstance(e["value"], bool) or isinstance(e["value"], str):
            ok = str(got) == str(e["value"])
            line = f"{label}: expected {e['value']}, got {got}"
        elif "low" in e:  # a paper value: within its tolerance (tables.bounds)
            ok = within(got, e["low"], e["high"])
            line = (f"{label}: paper none, got {float(got):.4f}" if math.isnan(float(e["value"])) else
                    f"{label}: paper {float(e['value']):.4f} {e['tol_words']}, got {float(got):.4f} "
                    f"(diff {float(got) - float(e['value']):+.4f})")
        else:
            value, tol = float(e["value"]), float(e.get("tol", 0))  # e.g. "no crossover" (NaN) stays so
            ok = within(got, value - tol, value + tol)
            line = f"{label}: expected {e['value']:.4f} +- {e.get('tol', 0)}, got {float(got):.4f} (diff {float(got) - float(e['value']):+.4f})"
        (passes if ok else failures).append(("  " if ok else "- ") + line)
    return failures, passes


def run_check(tables_dir, expected_path, roles: Roles, out_path=None) -> bool:
    failures, passes = check(tables_dir, expected_path, roles)
    text = (f"check {tables_dir} against {expected_path}: {len(passes)} ok, {len(failures)} differ\n"
            + "".join(line + "\n" for line in failures + passes))
    print(text, end="")
    if out_path and not failures:
        io.write_atomic(out_path, text)
    return not failures


def write_expected(tables_dir, expected_path, roles: Roles) -> None:
    """Refresh the values of an expected file from current results, keeping names, lookups and tolerances."""
    expected = load_expected(expected_path)
    if expected.get("paper"):
        raise InputError(expected_path, "a paper-values file holds the paper's numbers; --write refreshes only an "
                                        "expected-values file such as tests/expected/default.yaml")
    tables = load_tables(tables_dir)
    for e in expected["entries"]:
        try:
            v = lookup(tables, e, roles)
        except KeyError as exc:
            raise InputError(tables_dir, f"no value for entry '{e['name']}' ({exc.args[0]})") from None
        e["value"] = round(v, 4) if isinstance(v, float) else v
    io.write_atomic(expected_path, yaml.safe_dump(expected, sort_keys=False, allow_unicode=True, width=120))
