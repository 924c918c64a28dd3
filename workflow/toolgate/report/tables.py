"""Paper values beside reproduced ones.

Paper values live in ``data/paper/reported.yaml``. An entry that this pipeline
reproduces names where its value is, with ``ours: {table, where, column}``:
the CSV ``results/{experiment}/tables/<table>.csv``, the row whose columns
equal ``where``, and the column; ``scale`` multiplies (e.g. 100 for percent,
N for counts). Entries without ``ours`` carry ``why`` (not computable here).
The same lookup serves the regression check (``tests/expected/*.yaml``).
"""
from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import Roles
from ..errors import InputError


def load_tables(tables_dir) -> dict[str, pd.DataFrame]:
    if not Path(tables_dir).is_dir():  # glob would find no tables, and every lookup would say "not produced"
        raise InputError(tables_dir, "no such folder of result tables")
    return {p.stem: pd.read_csv(p) for p in sorted(Path(tables_dir).glob("*.csv"))}


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
        return float(value) * spec.get("scale", 1)
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
        paper_s = _fmt(float(paper)) if isinstance(paper, (int, float)) else str(paper)
        if e.get("of"):
            paper_s += f" / {e['of']}"
        if e.get("ci"):
            paper_s += f" [{e['ci'][0]}, {e['ci'][1]}]"
        rec = {"key": e["key"], "where in paper": e.get("ref", ""), "paper": paper_s, "reproduced": "", "difference": "",
               "source": "", "note": ""}
        spec = e.get("ours")
        if spec is None:
            rec["note"] = e.get("why", "not computed by this pipeline")
        else:
            try:
                ours = lookup(tables, spec, roles)
                rec["reproduced"] = _fmt(ours)
                if isinstance(ours, float) and isinstance(paper, (int, float)):
                    rec["difference"] = _fmt(ours - float(paper))
                where = {k: v.format(**asdict(roles)) if isinstance(v, str) else v
                         for k, v in (spec.get("where") or {}).items()}
                rec["source"] = f"tables/{spec['table']}.csv: {spec['column']}" + (
                    f" where {', '.join(f'{k}={v}' for k, v in where.items())}" if where else "")
            except KeyError as exc:
                rec["note"] = f"not computable: {exc}"
        recs.append(rec)
    return pd.DataFrame(recs)
