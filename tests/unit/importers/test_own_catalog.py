"""The own-catalog loop (issue 54) and the importer repros of issue 55: bilingual tools, the language of mixed
text, a pairs outcome column, every problem of a file in one run, decide --eval on the wrong tools, --license,
requests over the router's limit, Korean-only tool names, an oversized CSV cell, headers in any case."""
import json

import pytest

from conftest import write_jsonl
from import_fixtures import EXAMPLE, NO_TOOL, PAIR_TEXTS, PAIR_TOOLS, beir_folder, bfcl_folder, functionchat_folder
from toolgate.cli import main
from toolgate.core import io
from toolgate.core.catalog import load_catalog
from toolgate.core.errors import LIMIT
from toolgate.core.schemas import schema
from toolgate.importers.command import eval_lines
from toolgate.utterances import load_utterances

KO = {"alarm_set": "정해진 시간에 알람을 맞춥니다.", "timer_start": "타이머를 시작합니다.",
      "weather_now": "도시의 현재 날씨를 알려 줍니다.", "music_play": "노래나 재생 목록을 틉니다."}


def _rows(out):
    return {r["utterance_id"]: r for _, r in io.read_jsonl(out / "utterances.jsonl")}


def _bilingual(root):
    """Tools with {en, ko} descriptions, or a description beside description_ko; pairs with the headers Query,
    Tool, Outcome (an ask and a chat row) and Korean requests."""
    root.mkdir(parents=True, exist_ok=True)
    tools = [{"name": k, "description": {"en": v, "ko": KO[k]}} if k in KO and i % 2 else
             {"name": k, "description": v, **({"description_ko": KO[k]} if k in KO else {})}
             for i, (k, v) in enumerate(PAIR_TOOLS.items())]
    (root / "tools.json").write_text(json.dumps(tools, ensure_ascii=False), encoding="utf-8")
    rows = [(t, k, "") for k, texts in PAIR_TEXTS.items() for t in texts] + [(t, "", "") for t in NO_TOOL]
    rows += [("알람 좀 맞춰 줘", "alarm_set", "ask"), ("내일 아침 일곱 시에 알람 맞춰 줘", "alarm_set", "act"),
             ("고마워, 오늘 하루도 힘내자", "", "chat"), ("오늘 서울 날씨 어때?", "weather_now", "")]
    (root / "pairs.csv").write_text("Query,Tool,Outcome\n" + "".join(f'"{t}",{k},{o}\n' for t, k, o in rows),
                                    encoding="utf-8")
    return root / "tools.json", root / "pairs.csv"


def test_bilingual_tools_and_an_outcome_column_import_with_no_glue(tmp_path, capsys):
    tools, pairs = _bilingual(tmp_path / "src")
    out = tmp_path / "run"
    assert main(["import", "pairs", str(tools), str(pairs), "--license", "CC-BY-4.0", "--out", str(out)]) == 0
    catalog = {t["id"]: t for t in load_catalog(out / "catalog.jsonl")}
    assert all(catalog[k]["descriptions"] == {"en": PAIR_TOOLS[k], "ko": KO[k]} for k in KO)
    assert catalog["lights_dim"]["descriptions"] == {"en": PAIR_TOOLS["lights_dim"]}
    by_text = {r["text"]: r for r in _rows(out).values()}
    ask, chat = by_text["알람 좀 맞춰 줘"], by_text["고마워, 오늘 하루도 힘내자"]
    assert (ask["gold_outcome"], ask["gold_tool"], ask["missing_slots"], ask["lang"]) == ("ask", "alarm_set",
                                                                                         ["unknown"], "ko")
    assert (chat["gold_outcome"], chat["gold_tool"]) == ("chat", None)
    assert by_text["오늘 서울 날씨 어때?"]["gold_outcome"] == "action"
    info = json.loads((out / "import.json").read_text())
    assert info["decisions"]["outcome column: 'Outcome' (--outcome-column names another)"] == 1
    assert {"name": "CC-BY-4.0", "declared": "--license"} in info["licenses"]
    assert "error" not in capsys.readouterr().err


@pytest.mark.parametrize("text, lang", [
    ("Sets an alarm for the given time 알람 설정", "en"),  # the mixed description: English words lead
    ("Netflix에서 Stranger Things 틀어 줘", "ko"), ("이 QR 코드 스캔", "ko"), ("SBS 파워FM 틀어 줘", "ko"),
    ("ローマの天気は？iPhoneで", None), ("Play 아이유 songs", "en")])
def test_mixed_script_text_reads_as_its_majority_script(text, lang):
    assert io.script_lang(text) == lang


@pytest.mark.parametrize("text, lang", [
    ("BTS Dynamite 틀어줘", "ko"), ("Play 아이유 songs", "en"), ("Sets an alarm for the given time 알람 설정", "ko"),
    ("The company says Amazon and Google plan it. 이 영어문장의 단어 수를 계산해주세요.", "ko"), ("Call mom", "en"),
    ("ローマの天気は？iPhoneで", None),
    ("Send a text to 김민수", "en"), ("Navigate to 강남역", "en"), ("Set an alarm for 7 ㅋㅋ", "en")])  # a name at the end
def test_a_request_ending_on_a_korean_word_is_korean(text, lang):
    """A request's language: a Korean request ends on its verb or particle, whatever it names in Latin letters."""
    assert io.request_lang(text) == lang


def test_the_default_sets_language_labels_are_their_script(tmp_path):
    rows = [obj for _, obj in io.read_jsonl(EXAMPLE / "requests.jsonl")]
    assert all(io.script_lang(r["text"]) == ("ko" if any("가" <= c <= "힣" for c in r["text"]) else "en")
               for r in rows)


def test_a_row_declares_its_language(tmp_path):
    rows = [obj for _, obj in io.read_jsonl(EXAMPLE / "requests.jsonl")]
    rows[0]["lang"] = "ko"  # an English text declared Korean: the declaration wins, counted
    write_jsonl(tmp_path / "requests.jsonl", rows)
    out = tmp_path / "run"
    assert main(["import", "openai-tools", str(EXAMPLE / "tools.json"), str(tmp_path / "requests.jsonl"), "--out",
                 str(out)]) == 0
    assert _rows(out)[rows[0]["id"]]["lang"] == "ko"
    assert json.loads((out / "import.json").read_text())["decisions"]["language ko: declared by the row"] == 1


def _lines(path, edits: dict):
    """Rewrite lines of a JSON Lines file: line number -> a function of the object returning the new line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, edit in edits.items():
        lines[n - 1] = edit(json.loads(lines[n - 1]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _dump(change):
    """An edit of :func:`_lines`: ``change`` the object in place, then write it."""
    def edit(obj):
        change(obj)
        return json.dumps(obj, ensure_ascii=False)
    return edit


def _openai(root):
    root.mkdir(parents=True)
    reqs = _lines(write_jsonl(root / "r.jsonl", [o for _, o in io.read_jsonl(EXAMPLE / "requests.jsonl")]), {1: _dump(lambda o: o.update(tool="nosuch")), 2: _dump(lambda o: o.pop("text")),
                                     3: lambda o: "{not json"})
    return ["openai-tools", str(EXAMPLE / "tools.json"), str(reqs)], reqs, (1, 2, 3)


def _toolrows(root):
    good = {"tools": [{"name": "get_weather", "description": "Weather of a city."}],
            "messages": [{"role": "user", "content": "Weather in Rome?"}], "tool_calls": [{"name": "get_weather"}]}
    rows = [{**good, "id": f"r{i}"} for i in range(6)]
    root.mkdir(parents=True)
    path = _lines(write_jsonl(root / "rows.jsonl", rows), {
        2: _dump(lambda o: o.update(tool_calls=[{"name": "play_song"}])),
        3: _dump(lambda o: o.update(tools=[{"name": "x", "description": ["a"]}])), 5: lambda o: "[1, 2"})
    return ["tool-rows", str(path)], path, (2, 3, 5)


def _pairs(root):
    tools, pairs = _bilingual(root)
    lines = pairs.read_text(encoding="utf-8").splitlines()
    lines[1], lines[3], lines[5] = '"x",nosuch,', '"",alarm_set,', '"y",alarm_set,maybe'
    pairs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["pairs", str(tools), str(pairs)], pairs, (2, 4, 6)


def _beir(root):
    folder = beir_folder(root)
    _lines(folder / "corpus.jsonl", {1: _dump(lambda o: o.pop("_id")), 2: _dump(lambda o: o.update(title="", text="")),
                                     4: lambda o: "{"})
    return ["beir", str(folder)], folder / "corpus.jsonl", (1, 2, 4)


def _bfcl(root):
    folder = bfcl_folder(root)
    path = _lines(folder / "BFCL_v4_multiple.json", {
        1: _dump(lambda o: o["function"][1]["parameters"].update(properties="x")),
        2: _dump(lambda o: o.pop("question")), 3: _dump(lambda o: o.update(id="unanswered"))})
    return ["bfcl", str(folder)], path, (1, 2, 3)


def _functionchat(root):
    folder = functionchat_folder(root)
    path = _lines(folder / "FunctionChat-CallDecision.jsonl", {
        1: _dump(lambda o: o["input_tools"][0]["function"].update(description=3)),
        2: _dump(lambda o: o["ground_truth"]["tool_calls"][0]["function"].update(name="nosuch")),
        3: _dump(lambda o: o.pop("ground_truth"))})
    return ["functionchat", str(folder)], path, (1, 2, 3)


@pytest.mark.parametrize("make", [_openai, _toolrows, _pairs, _beir, _bfcl, _functionchat])
def test_a_file_with_three_different_errors_reports_all_three_in_one_run(tmp_path, capsys, make):
    args, path, lines = make(tmp_path / "src")
    assert main(["import", *args, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: 3 problems") and err.count("\n") == 4
    assert all(f"{path}:{n}: " in err for n in lines) and not (tmp_path / "out").exists()


def test_validators_list_fifty_problems_and_count_the_rest(tmp_path):
    catalog = load_catalog(EXAMPLE.parents[1] / "catalogs" / "device70" / "catalog.jsonl")
    write_jsonl(tmp_path / "u.jsonl", [{"utterance_id": f"u{i}"} for i in range(LIMIT + 10)])
    with pytest.raises(io.InputError) as exc:
        load_utterances(tmp_path / "u.jsonl", catalog)
    message, each = str(exc.value), len(schema("utterances")["required"]) - 1  # a row's every missing field
    total = (LIMIT + 10) * each
    assert f"{total} problems" in message and message.count("\n") == LIMIT + 1 and f"... and {total - LIMIT} more" in message
    rows = [json.dumps(t) for t in catalog[:3]]
    (tmp_path / "c.jsonl").write_text("\n".join([rows[0], "{", rows[0], json.dumps({"id": "x"})]) + "\n")
    with pytest.raises(io.InputError, match=f"{2 + len(schema('catalog')['required']) - 1} problems") as exc:
        load_catalog(tmp_path / "c.jsonl")  # a malformed line, a duplicate id, and each field line 4 misses
    assert all(f"c.jsonl:{n}: " in str(exc.value) for n in (2, 3, 4))


def test_decide_eval_warns_when_fewer_than_half_of_the_tools_match():
    info = {"requests": 10, "in_catalog": 2, "out_of_catalog": 8, "removed_tools": 3, "tools_matched": [1, 4],
            "dropped": {}, "ambiguous_gold": 0}
    assert any(line.startswith("warning: only 1 of the files' 4 tools") for line in eval_lines(info))
    assert not any("warning" in line for line in eval_lines({**info, "tools_matched": [2, 4]}))


def test_a_command_without_config_names_the_flag_to_pass(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["decide", "알람 맞춰 줘"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "config.yaml: cannot read file" in err and "--router DIR" in err


def test_a_request_over_the_routers_limit_is_dropped_and_counted(tmp_path):
    from toolgate.importers.build import MAX_CHARS

    rows = [o for _, o in io.read_jsonl(EXAMPLE / "requests.jsonl")]
    rows[0]["text"] = "turn on the lights " * 80_000  # 1.5 million characters
    write_jsonl(tmp_path / "r.jsonl", rows)
    out = tmp_path / "run"
    assert main(["import", "openai-tools", str(EXAMPLE / "tools.json"), str(tmp_path / "r.jsonl"), "--out",
                 str(out)]) == 0
    assert rows[0]["id"] not in _rows(out) and max(len(r["text"]) for r in _rows(out).values()) <= MAX_CHARS
    dropped = json.loads((out / "import.json").read_text())["dropped"]
    assert dropped == {f"the text is longer than the router's limit of {MAX_CHARS} characters (router.max_chars; "
                       f"first: {rows[0]['id']})": 1}


def test_korean_tool_names_get_distinct_ids(tmp_path):
    tools, pairs = _bilingual(tmp_path / "src")
    objs = json.loads(tools.read_text())
    objs[0]["name"], objs[1]["name"] = "알람 설정", "타이머 시작"
    tools.write_text(json.dumps(objs, ensure_ascii=False))
    text = pairs.read_text(encoding="utf-8").replace(",alarm_set,", ",알람 설정,").replace(",timer_start,", ",타이머 시작,")
    pairs.write_text(text, encoding="utf-8")
    out = tmp_path / "run"
    assert main(["import", "pairs", str(tools), str(pairs), "--out", str(out)]) == 0
    ids = [t["id"] for t in load_catalog(out / "catalog.jsonl")[:2]]
    assert ids[0] != ids[1] and all(i.startswith("t_") and len(i) == 10 for i in ids)


def test_an_oversized_pairs_cell_is_an_input_error(tmp_path, capsys):
    tools, pairs = _bilingual(tmp_path / "src")
    lines = pairs.read_text(encoding="utf-8").splitlines()
    lines[3] = f'"{"a" * 200_000}",alarm_set,'
    pairs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["import", "pairs", str(tools), str(pairs), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {pairs}:4: unreadable CSV") and err.count("\n") == 1
