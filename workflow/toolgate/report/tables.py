"""Paper values beside reproduced ones.

An entry of ``data/paper/reported.yaml`` that this pipeline reproduces names its cell with ``ours: {table, where,
column}`` (``scale`` multiplies, ``complement: true`` reads 1 - the value); one without ``ours`` says ``why``. The
same lookup serves the regression check; :func:`bounds` is the tolerance (docs/metrics.md, 'Claims by data set').
"""
from __future__ import annotations

import math
from dataclasses import asdict
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import Roles
from ..core.errors import InputError
from ..core.io import read_text

ABSOLUTE = {"auc": 0.03, "auc_difference": 0.03, "mcc_difference": 0.03, "fraction": 0.03, "crossover": 0.03,
            "percent": 3.0, "count": 0.0}
RELATIVE = {"kilobytes": 0.25, "megabytes": 0.25, "bytes": 0.25, "ms": 0.25, "ratio": 0.25}
INTERVAL_UNITS = ("auc_difference", "mcc_difference")  # units whose `ci` is a bootstrap interval of the estimate
COUNT_OF_SHARE = 0.03  # a count out of a denominator: 3% of that denominator, as a fraction's 0.03


def bounds(entry: dict) -> tuple[float, float, str]:
    """(low, high, in words) of the values that reproduce a paper entry (module docstring); NaN bounds for a paper
    value of none (it is reproduced only by none)."""
    value = entry["value"]
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return math.nan, math.nan, "none"
    value = float(value)
    if "tol" in entry:
        tol, words = float(entry["tol"]), f"+- {entry['tol']:g}"
    elif entry.get("ci") and entry.get("unit") in INTERVAL_UNITS:
        lo, hi = entry["ci"]
        return float(lo), float(hi), f"in the paper's [{lo:g}, {hi:g}]"
    elif entry.get("unit") == "count" and entry.get("of"):
        tol = COUNT_OF_SHARE * float(entry["of"])
        words = f"+- {tol:g} (3% of {entry['of']})"
    elif entry.get("unit") in RELATIVE:
        tol, words = RELATIVE[entry["unit"]] * abs(value), "+- 25%"
    else:
        tol = ABSOLUTE.get(entry.get("unit"), 0.0)
        words = f"+- {tol:g}" if tol else "exact"
    return value - tol, value + tol, words


def within(got, low: float, high: float) -> bool:
    """``got`` inside [low, high] (float rounding forgiven); NaN bounds take only NaN."""
    got = float(got)
    if math.isnan(low):
        return math.isnan(got)
    return low - 1e-9 <= got <= high + 1e-9


def load_tables(tables_dir) -> dict[str, pd.DataFrame]:
    if not Path(tables_dir).is_dir():  # glob would find no tables, and every lookup would say "not produced"
        raise InputError(tables_dir, "no such folder of result tables")
    out = {}
    for p in sorted(Path(tables_dir).glob("*.csv")):
        try:
            out[p.stem] = pd.read_csv(StringIO(read_text(p)))
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise InputError(p, f"not a CSV table: {str(exc).strip().splitlines()[0]}") from None
    return out


def lookup(tables: dict, spec: dict, roles: Roles):
    """The value ``spec`` points at, or raise KeyError saying what is missing.

    String values in ``where`` may name the config's roles: ``{lexical}``,
    ``{encoder}``, ``{second_encoder}``.
    """
    name = spec["table"]
    if name not in tables:
        raise KeyError(f"table '{name}' was not produced")
    df = tables[name]
    m = np.ones(len(df), bool)
    for col, val in (spec.get("where") or {}).items():
        val = val.format(**asdict(roles)) if isinstance(val, str) else val
        if col not in df:
            raise KeyError(f"table '{name}' has no column '{col}'")
        m &= (df[col].astype(str) == str(val)).to_numpy()
    rows = df[m]
    if len(rows) != 1:
        raise KeyError(f"table '{name}': {len(rows)} rows match {spec.get('where')}")
    if spec["column"] not in rows:
        raise KeyError(f"table '{name}' has no column '{spec['column']}'")
    value = rows[spec["column"]].iloc[0]
    note = rows["note"].iloc[0] if "note" in rows else None
    if pd.isna(value) and isinstance(note, str) and note.startswith("not available"):
        raise KeyError(f"table '{name}': {note}")
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        value = 1 - float(value) if spec.get("complement") else float(value)
        return value * spec.get("scale", 1)
    return value


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        return f"{v:.0f}" if v.is_integer() else f"{v:.3f}"
    return str(v)


def side_by_side(reported: list[dict], tables: dict, roles: Roles) -> pd.DataFrame:
    recs = []
    for e in reported:
        paper = e["value"]
        paper_s = "none" if paper is None else _fmt(float(paper)) if isinstance(paper, (int, float)) else str(paper)
        if e.get("of"):
            paper_s += f" / {e['of']}"
        if e.get("ci"):
            paper_s += f" [{e['ci'][0]}, {e['ci'][1]}]"
        rec = {"key": e["key"], "where in paper": e.get("ref", ""), "paper": paper_s, "reproduced": "", "difference": "",
               "tolerance": "", "within": "", "source": "", "note": ""}
        spec = e.get("ours")
        if spec is None:
            rec["note"] = e.get("why", "not computed by this pipeline")
        else:
            try:
                ours = lookup(tables, spec, roles)
                rec["reproduced"] = "none" if isinstance(ours, float) and math.isnan(ours) else _fmt(ours)
                if isinstance(ours, float) and isinstance(paper, (int, float)):
                    rec["difference"] = _fmt(ours - float(paper))
                if isinstance(ours, float):
                    low, high, rec["tolerance"] = bounds(e)
                    rec["within"] = "yes" if within(ours, low, high) else "no"
                where = {k: v.format(**asdict(roles)) if isinstance(v, str) else v
                         for k, v in (spec.get("where") or {}).items()}
                rec["source"] = (("1 - " if spec.get("complement") else "") + f"tables/{spec['table']}.csv: {spec['column']}"
                                 + (f" where {', '.join(f'{k}={v}' for k, v in where.items())}" if where else ""))
            except KeyError as exc:
                rec["note"] = f"not computable: {exc}"
        recs.append(rec)
    return pd.DataFrame(recs)
