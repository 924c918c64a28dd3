"""docs/formats.md's worked example of each import format is what the importer writes: every example input read
back through the importer gives the utterance rows the docs show."""
import json
import re
from pathlib import Path

import pytest

from import_fixtures import EXAMPLE
from toolgate.importers import Options, read
from toolgate.importers.build import prepare
from toolgate.importers.toolrows import fields

DOC = Path(__file__).resolve().parents[3] / "docs" / "formats.md"


def _section(name: str) -> str:
    return DOC.read_text(encoding="utf-8").split(f"### {name}\n", 1)[1].split("\n#", 1)[0]


def _blocks(name: str) -> list[str]:
    return re.findall(r"```json\n(.*?)```", _section(name), re.S)


def _rows(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _written(fmt, sources, preset=""):
    opt = Options(fields=fields(preset) if fmt == "tool-rows" else None)
    ext, notes = read(fmt, sources, options=opt)
    return {u["utterance_id"]: u for u in prepare(ext, opt, notes)[1]}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _sources(fmt: str, tmp: Path):
    """(sources, preset, the example's expected rows) of each worked example."""
    b, text = _blocks(fmt.split(":")[0]), _section(fmt.split(":")[0])
    if fmt == "openai-tools":
        return [EXAMPLE / "tools.json", EXAMPLE / "requests.jsonl"], "", b[1]
    if fmt.startswith("tool-rows"):
        i = 0 if fmt.endswith("labelled") else 2
        return [_write(tmp / "rows.jsonl", b[i])], fmt.split(":")[1], b[i + 1]
    if fmt == "bfcl":
        answer = re.search(r"`(\{\"id\": \"multiple_0\", \"ground_truth\".*?)`", text).group(1)
        _write(tmp / "bfcl" / "possible_answer" / "BFCL_v4_multiple.json", answer + "\n")
        return [_write(tmp / "bfcl" / "BFCL_v4_multiple.json", b[0]).parent], "", b[1]
    if fmt == "pairs":
        pairs = re.search(r"```csv\n(.*?)```", text, re.S).group(1)
        return [_write(tmp / "tools.json", b[0]), _write(tmp / "pairs.csv", pairs)], "", b[1]
    if fmt == "functionchat":
        return [_write(tmp / "FunctionChat-CallDecision.jsonl", b[0])], "", b[1]
    if fmt == "clinc150":
        return [_write(tmp / "clinc" / "data_full.json", b[0]).parent], "", b[1]
    corpus, query = re.findall(r"`(\{\"_id\".*?\})`", text)
    _write(tmp / "beir" / "qrels.tsv", "q9\td3\t1\n")
    _write(tmp / "beir" / "queries.jsonl", query + "\n")
    return [_write(tmp / "beir" / "corpus.jsonl", corpus + "\n").parent], "", b[0]


@pytest.mark.parametrize("fmt", ["openai-tools", "tool-rows:labelled", "tool-rows:bfcl-live", "pairs", "bfcl",
                                 "functionchat", "clinc150", "beir"])
def test_worked_example_is_what_the_importer_writes(tmp_path, fmt):
    sources, preset, expected = _sources(fmt, tmp_path)
    written = _written(fmt.split(":")[0], sources, preset)
    for row in _rows(expected):
        assert written[row["utterance_id"]] == row
