"""The report's blocks as Markdown and as one self-contained HTML page (figures inlined, tables scrolling).

Blocks: ("h", level, text), ("p", text), ("toc",), ("table", df[, colour]), ("fig", png, caption, table or None),
("details", summary, blocks). ``colour``: "verdicts" (each cell by its verdict) or "within" (each row by its
``within`` column: the paper-vs-reproduced table).
"""
from __future__ import annotations

import base64
import html
import os
import re
from pathlib import Path

from ..tables import to_markdown
from .claims import MARK

_PATH = re.compile(r"(?<![\w.:/~])(?:/[\w.+-]+)+/([\w.+-]+)")  # an absolute path: the report keeps only its last part
_CODE = re.compile(r"`([^`]+)`")
_COUNT = re.compile(r"(\d+) of (\d+) hold")
ROW_CLASS = {"yes": "holds", "no": "fails", "": "untested"}
STYLE = ("body{font-family:sans-serif;max-width:1400px;margin:1em auto;line-height:1.4;padding:0 1em}"
         "h1{margin:.3em 0}table{border-collapse:collapse;font-size:12px}.scroll{overflow-x:auto;margin:.8em 0}"
         "td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}th{background:#f3f3f3}"
         "code{background:#f3f3f3;padding:0 .2em;font-size:90%}img{max-width:100%}"
         "figure{margin:1.2em 0;max-width:1000px}figcaption{font-style:italic}details{margin:.6em 0}"
         "summary{cursor:pointer;color:#245}td.holds{background:#dff3df}td.fails{background:#f8dcdc}"
         "td.partly{background:#fbf0cf}td.untested{background:#eee;color:#666}nav li{display:inline;margin-right:1em}")


def no_paths(text: str) -> str:
    """``text`` with every absolute machine path cut to its last part (a report names no machine's folders)."""
    return _PATH.sub(r"\1", text)


def anchor(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _sections(blocks) -> list[str]:
    out = []
    for b in blocks:
        out += [b[2]] if b[0] == "h" and b[1] == 2 else _sections(b[2]) if b[0] == "details" else []
    return out


def to_md(blocks, md_path, toc=None) -> str:
    out, base = [], Path(md_path).parent
    toc = _sections(blocks) if toc is None else toc
    for b in blocks:
        if b[0] == "h":
            out += ["#" * b[1] + " " + b[2], ""]
        elif b[0] == "p":
            out += [no_paths(b[1]), ""]
        elif b[0] == "toc":
            out += ["Contents: " + " · ".join(f"[{t}](#{anchor(t)})" for t in toc), ""]
        elif b[0] == "table":
            out += [no_paths(to_markdown(b[1].fillna(""))), ""]
        elif b[0] == "details":
            out += [f"<details><summary>{b[1]}</summary>", "", to_md(b[2], md_path, toc), "</details>", ""]
        else:
            rel = os.path.relpath(Path(b[1]).resolve(), base.resolve())
            out += [f"![{b[2]}]({Path(rel).as_posix()})", "", f"*{b[2]}*", ""]
    return "\n".join(out)


def inline(text: str) -> str:
    """Escaped text with Markdown's `code` as <code>."""
    return _CODE.sub(r"<code>\1</code>", html.escape(no_paths(str(text))))


def cell_class(text: str) -> str:
    """A verdict cell's class: a mark (holds / fails), 'k of n hold' (all, none or partly), 'not testable'."""
    count = _COUNT.match(text)
    if count:
        held, of = map(int, count.groups())
        return "holds" if held == of else "fails" if held == 0 else "partly"
    return next((c for k, c in ((MARK["holds"] + " ", "holds"), (MARK["does not hold"] + " ", "fails"),
                                ("not testable", "untested")) if text.startswith(k)), "")


def html_table(df, colour: str | None = None, ident: str = "") -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    rows = []
    for rec in df.fillna("").to_dict("records"):
        row = ROW_CLASS.get(str(rec.get("within", ""))) if colour == "within" else ""
        cells = []
        for i, v in enumerate(rec.values()):
            cls = row or (cell_class(str(v)) if colour == "verdicts" and i > 0 else "")
            cells.append(f"<td class='{cls}'>{inline(v)}</td>" if cls else f"<td>{inline(v)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f"<div class='scroll'><table{f' id={ident}' if ident else ''}><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def _html_blocks(blocks, toc) -> list[str]:
    parts = []
    for b in blocks:
        if b[0] == "h":
            parts.append(f"<h{b[1]} id='{anchor(b[2])}'>{html.escape(b[2])}</h{b[1]}>")
        elif b[0] == "p":
            parts.append(f"<p>{inline(b[1])}</p>")
        elif b[0] == "toc":
            items = "".join(f"<li><a href='#{anchor(t)}'>{html.escape(t)}</a></li>" for t in toc)
            parts.append(f"<nav><b>Contents:</b> <ul style='display:inline;padding:0'>{items}</ul></nav>")
        elif b[0] == "table":
            colour = b[2] if len(b) > 2 else None
            parts.append(html_table(b[1], colour, "claims-matrix" if colour == "verdicts" and "test" in b[1] else ""))
        elif b[0] == "details":
            parts.append(f"<details><summary>{inline(b[1])}</summary>{''.join(_html_blocks(b[2], toc))}</details>")
        else:
            data = base64.b64encode(Path(b[1]).read_bytes()).decode()
            parts.append(f"<figure><img alt='{html.escape(b[2])}' src='data:image/png;base64,{data}'>"
                         f"<figcaption>{inline(b[2])}</figcaption></figure>")
            if b[3] is not None:
                parts.append(f"<details><summary>The table it draws ({len(b[3])} rows)</summary>"
                             f"{html_table(b[3])}</details>")
    return parts


def to_html(blocks, title) -> str:
    return "\n".join([f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
                      f"<style>{STYLE}</style></head><body>", *_html_blocks(blocks, _sections(blocks)),
                      "</body></html>"])
