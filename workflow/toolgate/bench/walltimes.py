"""Wall times of whole commands (`make reproduce`, `make test`), kept in one CSV and shown from it: the full table in
docs/timings.md and the latest run per command in the README, between marker comments. Times are measured by
``python -m toolgate.bench.walltimes record --label LABEL -- COMMAND...``, never typed into prose."""
from __future__ import annotations

import argparse
import csv
import io
import os
import shlex
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from ..core.errors import InputError
from ..core.io import read_text, write_atomic

FIELDS = ("date", "label", "wall_s", "load_before", "load_after", "cores", "commit", "source", "note")
BEGIN, END = "<!-- timings -->", "<!-- /timings -->"
CONDITIONS = ("Wall time of the whole command; load is the 1-minute load average (`uptime`) before and after it. "
              "Shared machines vary by a tenth or more with load. `~`: stated as approximate; a date `<= D`: "
              "measured in an earlier session, first stated in that commit.")


def measure(cmd: list[str], label: str, cwd, note: str = "") -> tuple[int, dict | None]:
    """Run ``cmd`` in ``cwd``; its exit code and, when it succeeded, its row (a failed run is no timing)."""
    before = os.getloadavg()[0]
    start = time.perf_counter()
    rc = subprocess.call(cmd, cwd=cwd)
    wall = time.perf_counter() - start
    if rc != 0:
        return rc, None
    commit = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=7"], cwd=cwd, capture_output=True,
                            text=True).stdout.strip()
    return rc, {"date": datetime.now().astimezone().strftime("%Y-%m-%d %H:%M"), "label": label, "wall_s": f"{wall:.1f}",
                "load_before": f"{before:.2f}", "load_after": f"{os.getloadavg()[0]:.2f}",
                "cores": str(os.cpu_count()), "commit": commit, "source": "measured: " + shlex.join(cmd), "note": note}


def read_rows(path) -> list[dict]:
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != FIELDS:
        raise InputError(path, f"header must be {','.join(FIELDS)}", 1)
    rows = list(reader)
    for line, row in enumerate(rows, start=2):
        try:
            _seconds(row["wall_s"])
        except ValueError:
            raise InputError(path, f"not a number of seconds: {row['wall_s']!r}", line, "wall_s") from None
    return rows


def append_row(path, row: dict) -> None:
    path = Path(path)
    out = io.StringIO()
    writer = csv.DictWriter(out, FIELDS, lineterminator="\n")
    if not path.exists():
        writer.writeheader()
    writer.writerow(row)
    write_atomic(path, (read_text(path) if path.exists() else "") + out.getvalue())


def _seconds(wall: str) -> float:
    return float(wall.lstrip("~"))


def clock(wall: str) -> str:
    """``"138"`` -> ``2:18``, ``"38.7"`` -> ``38.7 s``; a leading ``~`` (approximate) is kept."""
    s = _seconds(wall)
    mark = "~" if wall.startswith("~") else ""
    return f"{mark}{s:g} s" if s < 60 else f"{mark}{round(s) // 60}:{round(s) % 60:02d}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(c.replace("|", "/") for c in r) + " |" for r in rows]) + "\n"


def full_markdown(rows: list[dict]) -> str:
    """docs/timings.md: every row, grouped by command in the order each first appears."""
    order = {label: i for i, label in reversed(list(enumerate(r["label"] for r in rows)))}
    ranked = sorted(rows, key=lambda r: order[r["label"]])
    body = _table(["command", "wall", "load before -> after", "cores", "date", "commit", "source", "note"],
                  [[r["label"], clock(r["wall_s"]), f"{r['load_before'] or '?'} -> {r['load_after'] or '?'}",
                    r["cores"], r["date"], r["commit"], r["source"], r["note"]] for r in ranked])
    return (f"# Measured times\n\n{CONDITIONS}\n\nWritten from `timings.csv` by `python -m toolgate.bench.walltimes`; "
            f"record a run with `python -m toolgate.bench.walltimes record --label LABEL -- COMMAND...`.\n\n{body}")


def short_markdown(rows: list[dict]) -> str:
    """The README's table: the latest row of each command, and the range over all its rows."""
    by_label: dict[str, list[dict]] = {}
    for r in rows:
        by_label.setdefault(r["label"], []).append(r)
    out = []
    for label, runs in by_label.items():
        walls = sorted(runs, key=lambda r: _seconds(r["wall_s"]))
        spread = f"{clock(walls[0]['wall_s'])} to {clock(walls[-1]['wall_s'])}" if len(runs) > 1 else ""
        out.append([label, clock(runs[-1]["wall_s"]), f"{spread} ({len(runs)} runs)" if spread else "1 run",
                    runs[-1]["date"]])
    return _table(["command", "latest", "all runs", "date"], out)


def with_block(readme: str, path, block: str) -> str:
    """The README text with ``block`` between its two markers."""
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < start:
        raise InputError(path, f"no '{BEGIN}' ... '{END}' markers to write the timings table between")
    return readme[:start + len(BEGIN)] + "\n" + block + readme[end:]


def render(csv_path, md_path, readme_path) -> None:
    rows = read_rows(csv_path)
    readme = with_block(read_text(readme_path), readme_path, short_markdown(rows))  # checked before writing either
    write_atomic(md_path, full_markdown(rows))
    write_atomic(readme_path, readme)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolgate.bench.walltimes", description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default="docs", help="folder of timings.csv and timings.md (default: docs)")
    parser.add_argument("--readme", default="README.md")
    sub = parser.add_subparsers(dest="action", required=True)
    rec = sub.add_parser("record", help="run COMMAND, append its wall time, regenerate the tables")
    rec.add_argument("--label", required=True)
    rec.add_argument("--note", default="")
    rec.add_argument("cmd", nargs=argparse.REMAINDER)
    sub.add_parser("render", help="regenerate docs/timings.md and the README's table from the CSV")
    args = parser.parse_args(argv)
    csv_path, md_path = Path(args.docs) / "timings.csv", Path(args.docs) / "timings.md"
    try:
        if args.action == "record":
            cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
            if not cmd:
                parser.error("record needs a command after --")
            with_block(read_text(args.readme), args.readme, "")  # a README without markers fails before the run
            rc, row = measure(cmd, args.label, Path.cwd(), args.note)
            if row is None:
                print(f"error: {shlex.join(cmd)} exited {rc}; nothing recorded", file=sys.stderr)
                return rc
            append_row(csv_path, row)
        render(csv_path, md_path, args.readme)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
