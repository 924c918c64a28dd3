"""Small source files in each importable format (BFCL, FunctionChat-Bench, BEIR, pairs), written into a test's folder."""
import json
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "examples" / "smarthome"


def _jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def fn(name, desc, required=("x",)):
    return {"name": name, "description": desc,
            "parameters": {"type": "dict", "properties": {"x": {"type": "string", "description": "an argument"}},
                           "required": list(required)}}


BFCL_TOOLS = [fn("math.gcd", "Greatest common divisor of two numbers."), fn("math.lcm", "Least common multiple."),
              fn("weather.get", "Current weather of a city."), fn("stock.price", "Price of a stock."),
              fn("flight.book", "Book a flight."), fn("hotel.book", "Book a hotel room.")]


def bfcl_folder(root: Path, n: int = 6) -> Path:
    """multiple (n rows, 3 functions each, gold first call) + irrelevance (n rows, 1 function each)."""
    folder = root / "bfcl"
    q, a, irr = [], [], []
    for i in range(n):
        funcs = [BFCL_TOOLS[(i + j) % len(BFCL_TOOLS)] for j in range(3)]
        gold = funcs[i % 3]
        q.append({"id": f"multiple_{i}", "question": [[{"role": "user", "content": f"please {gold['description']} #{i}"}]],
                  "function": funcs})
        a.append({"id": f"multiple_{i}", "ground_truth": [{gold["name"]: {"x": ["1"]}}]})
        irr.append({"id": f"irrelevance_{i}", "question": [[{"role": "user", "content": f"write a poem about cats {i}"}]],
                    "function": [BFCL_TOOLS[i % len(BFCL_TOOLS)]]})
    _jsonl(folder / "BFCL_v4_multiple.json", q)
    _jsonl(folder / "possible_answer" / "BFCL_v4_multiple.json", a)
    _jsonl(folder / "BFCL_v4_irrelevance.json", irr)
    return folder


FC_TOOLS = [{"type": "function", "function": fn(f"tool_{k}", f"{k}번 기능을 실행합니다.")} for k in range(8)]


def functionchat_folder(root: Path, n: int = 6) -> Path:
    """CallDecision: n CALL rows and their n REJECT twins (serial + 100), 3 candidates each."""
    folder = root / "functionchat"
    rows = []
    for i in range(n):
        cands = [FC_TOOLS[(i + j) % len(FC_TOOLS)] for j in range(3)]
        gold = cands[0]["function"]["name"]
        msgs = [{"role": "user", "content": f"{i}번 요청: {gold} 실행해 줘"}]
        rows.append({"serial_num": i + 1, "category": "CALL", "input_messages": msgs, "input_tools": cands,
                     "ground_truth": {"tool_calls": [{"function": {"name": gold, "arguments": "{}"}}]}})
    for i in range(n):
        cands = [FC_TOOLS[(i + j) % len(FC_TOOLS)] for j in range(1, 4)]  # the gold tool replaced
        msgs = [{"role": "user", "content": f"{i}번 요청: {FC_TOOLS[i % len(FC_TOOLS)]['function']['name']} 실행해 줘"}]
        rows.append({"serial_num": i + 101, "category": "REJECT", "input_messages": msgs, "input_tools": cands,
                     "ground_truth": {"content": "그 기능은 없습니다."}})
    _jsonl(folder / "FunctionChat-CallDecision.jsonl", rows)
    return folder


def clinc_folder(root: Path, data: dict | None = None) -> Path:
    """A data_full.json-shaped CLINC150 file: three intents, two training requests each, two validation and test
    requests, out of scope in every split (or ``data`` as given)."""
    intents = ("translate", "balance", "change_accent")
    data = data or {
        "train": [[f"{i} please, variant {k}", i] for i in intents for k in range(2)],
        "val": [["translate bye to german", "translate"], ["what is my balance", "balance"]],
        "test": [["use a british accent", "change_accent"], ["how much money do i have", "balance"]],
        "oos_train": [["what is the meaning of life", "oos"]], "oos_val": [["who won the game", "oos"]],
        "oos_test": [["book a flight to mars", "oos"], ["sing me a song", "oos"]]}
    folder = root / "clinc150"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data_full.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def beir_folder(root: Path) -> Path:
    """8 tools, 8 judged queries (one with two relevant tools) and one unjudged query."""
    folder = root / "beir"
    names = ["alarm", "timer", "weather", "music", "lights", "camera", "calendar", "notes"]
    _jsonl(folder / "corpus.jsonl", [{"_id": f"d{i}", "title": n, "text": f"Manage the {n} of the device."}
                                     for i, n in enumerate(names)])
    _jsonl(folder / "queries.jsonl", [{"_id": f"q{i}", "text": f"I need help with my {n} please"}
                                      for i, n in enumerate(names + ["nothing"])])
    lines = ["query-id\tcorpus-id\tscore"] + [f"q{i}\td{i}\t1" for i in range(len(names))] + ["q0\td1\t2"]
    (folder / "qrels.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


PAIR_TOOLS = {"alarm_set": "Set an alarm clock for a given time.", "timer_start": "Start a countdown timer.",
              "weather_now": "Current weather forecast of a city.", "music_play": "Play a song or a playlist.",
              "lights_dim": "Dim or brighten the room lights.", "camera_snap": "Take a photo with the camera.",
              "calendar_add": "Add an event to the calendar.", "notes_write": "Write a note down."}
PAIR_TEXTS = {"alarm_set": ["wake me at seven with an alarm", "set an alarm for 6 am", "alarm clock at noon please"],
              "timer_start": ["start a ten minute timer", "countdown timer for the pasta", "timer for 30 seconds"],
              "weather_now": ["what is the weather in Oslo", "forecast for Paris today", "is it raining in Rome"],
              "music_play": ["play some jazz music", "play my running playlist", "put on a song by Queen"],
              "lights_dim": ["dim the lights in the room", "brighten the kitchen lights", "lights down low please"],
              "camera_snap": ["take a photo now", "snap a picture with the camera", "camera, take a selfie"],
              "calendar_add": ["add lunch to my calendar", "put the meeting on the calendar", "calendar event friday"],
              "notes_write": ["write a note about milk", "note down the wifi password", "take a note for me"]}
NO_TOOL = ["order me a pizza", "what is the meaning of life", "book a flight to Tokyo", "translate hello to French"]


def pairs_files(root: Path, tools_shape: str = "list") -> tuple[Path, Path]:
    """(tools file, pairs CSV): 8 tools (a JSON list of {name, description}, or with ``tools_shape`` 'map' a name ->
    description map), 3 requests each, 4 requests no tool answers (an empty tool cell), one pair repeated and one
    request with a second tool; columns query, api, source (kept in meta)."""
    root.mkdir(parents=True, exist_ok=True)
    tools = root / "tools.json"
    tools.write_text(json.dumps(PAIR_TOOLS if tools_shape == "map" else
                                [{"name": k, "description": v} for k, v in PAIR_TOOLS.items()]), encoding="utf-8")
    rows = [(text, name) for name, texts in PAIR_TEXTS.items() for text in texts] + [(t, "") for t in NO_TOOL]
    rows += [("set an alarm for 6 am", "alarm_set"), ("start a ten minute timer", "alarm_set")]
    lines = ["query,api,source"] + [f'"{text}",{name},fixture' for text, name in rows]
    pairs = root / "pairs.csv"
    pairs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tools, pairs


DOC = Path(__file__).resolve().parents[1] / "docs" / "new-catalog.md"
# bootstrap resamples cut and the timing rules left out, appended to an imported run's config: its numbers are not
# under test, and the default run (tests/e2e/test_default_regression.py) and the unit tests cover the timing rules
FASTER = "gate: {resamples: 100}\ntiming: false\n"
TIMED = {"cost", "pipeline_cost", "router_cost"}
NON_ROUTINE = {"external", "fig_jaccard", "quant_retention", "native_calls", "native_tables", "tournament",
               "import_functionchat", "import_clinc150"}


def doc_commands() -> list[list[str]]:
    """The commands of docs/new-catalog.md's first bash block, as argument lists."""
    block = DOC.read_text(encoding="utf-8").split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.split() for line in block.splitlines() if line.strip()]


def ran(repo: Path, experiment: str) -> set[str]:
    """The rules that ran for ``experiment``, by their benchmark files (tests/workflow: every rule writes one; a rule
    with wildcards as its name and their values, e.g. scores_bm25)."""
    return {p.stem for p in (repo / "benchmarks" / experiment).glob("*.tsv")}
