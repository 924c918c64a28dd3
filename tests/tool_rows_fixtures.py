"""Small tool-rows files written for the tests (not taken from any data set): labelled rows (call / needs_info /
cannot_answer, English and Korean, several call shapes) and rows in BFCL live's shape (question turns, function
lists, the possible answer merged in as ground_truth)."""
import json
from pathlib import Path

from toolgate.core import io


def _jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _fn(name, desc, params, required=None):
    props = {p: {"type": "string", "description": f"The {p.replace('_', ' ')}."} for p in params}
    return {"type": "function", "function": {"name": name, "description": desc, "parameters": {
        "type": "object", "properties": props, "required": list(params if required is None else required)}}}


TOOLS = {
    "weather": _fn("get_weather", "Current weather and forecast for a city.", ["city"]),
    "table": _fn("book_table", "Reserve a table at a restaurant.", ["restaurant", "time"]),
    "message": _fn("send_message", "Send a text message to a contact.", ["to", "body"]),
    "reminder": _fn("set_reminder", "Create a reminder at a given time.", ["time", "text"]),
    "song": _fn("play_song", "Play a song by title.", ["title"]),
    "translate": _fn("translate_text", "Translate text into another language.", ["text", "target"]),
    "web": _fn("search", "Search the web for pages.", ["query"]),
    "files": _fn("search", "Search the files on this device by name.", ["name"]),  # same name, other definition
}
CALLS = [  # (tools offered, gold, text)
    (["weather", "table", "song"], "weather", "What's the weather like in Lisbon today?"),
    (["weather", "reminder"], "weather", "Will it rain in Oslo tomorrow?"),
    (["table", "message", "song"], "table", "Book a table at Nopa for 7 pm"),
    (["message", "reminder"], "message", "Text Sam that I'm running ten minutes late"),
    (["reminder", "song", "weather"], "reminder", "Remind me at 6 to call the dentist"),
    (["song", "translate"], "song", "Put on Clair de Lune"),
    (["translate", "web"], "translate", "How do you say good morning in Italian?"),
    (["web", "song"], "web", "Look up the opening hours of the city library"),
    (["files", "message"], "files", "Find the file called budget"),
    (["web", "translate", "table"], "web", "Search for reviews of the new phone"),
    (["weather", "song"], "weather", "서울 내일 날씨 어때?"),
    (["message", "table"], "message", "엄마한테 곧 간다고 문자 보내 줘"),
    (["song", "reminder"], "song", "아이유 노래 틀어 줘"),
    (["reminder", "weather"], "reminder", "내일 아침 8시에 약 먹으라고 알려 줘"),
]
ASKS = [  # (tools offered, gold, text, missing slots or None)
    (["message", "song"], "message", "Send a message to Alex", ["body"]),
    (["table", "weather"], "table", "Book me a table for tonight", ["restaurant"]),
    (["reminder", "song"], "reminder", "Set a reminder for me", None),
    (["translate", "web"], "translate", "Translate this sentence please", None),
]
REFUSALS = [  # (tools offered, text)
    (["weather", "song"], "Order me a large pizza with mushrooms"),
    (["message", "translate"], "Transfer fifty dollars to my savings account"),
    (["table", "reminder"], "What is the square root of 1764?"),
    (["song", "web"], "Call a taxi to the airport"),
    (["translate", "weather"], "Turn the living room lights off"),
    (["reminder", "files"], "택시 불러 줘"),
]


def _tool_call(name, shape):
    args = {"x": "1"}
    if shape == "answers":
        return {"answers": [{"name": name, "arguments": args}]}
    return {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}


def labelled_rows(root: Path) -> Path:
    """25 rows plus a repeat and one offered no tools: 14 call (4 Korean; 2 through `answers`, 1 as the assistant
    message after the request, 1 in a multi-turn conversation), 4 needs_info (2 without slot labels), 6
    cannot_answer; unknown fields `source` on every row, `difficulty` on the call rows."""
    rows = []
    for i, (offered, gold, text) in enumerate(CALLS):
        tools = [TOOLS[k] for k in offered]
        name = TOOLS[gold]["function"]["name"]
        messages = [{"role": "user", "content": text}]
        row = {"id": f"call-{i}", "label": "call", "tools": tools, "messages": messages, "source": "fixture",
               "difficulty": "easy"}
        if i == 3:  # multi-turn: the earlier turns are the request's context
            messages[:0] = [{"role": "system", "content": "You are a phone assistant."},
                            {"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello!"}]
        if i == 5:  # the expected call as the assistant message after the request
            messages.append({"role": "assistant", "content": None, **_tool_call(name, "tool_calls")})
        else:
            row.update(_tool_call(name, "answers" if i in (6, 12) else "tool_calls"))
        rows.append(row)
    rows.append({**rows[0], "id": "call-0-again"})  # a repeat of call-0 (same text, turns and tools)
    for i, (offered, gold, text, slots) in enumerate(ASKS):
        row = {"id": f"ask-{i}", "label": "needs_info", "tools": [TOOLS[k] for k in offered],
               "messages": [{"role": "user", "content": text}], "source": "fixture",
               **_tool_call(TOOLS[gold]["function"]["name"], "tool_calls")}
        rows.append({**row, "missing_slots": slots} if slots else row)
    for i, (offered, text) in enumerate(REFUSALS):
        rows.append({"id": f"refuse-{i}", "label": "cannot_answer", "tools": [TOOLS[k] for k in offered],
                     "messages": [{"role": "user", "content": text}], "source": "fixture"})
    rows.append({"id": "refuse-empty", "label": "cannot_answer", "tools": [], "source": "fixture",
                 "messages": [{"role": "user", "content": "Book a flight to Tokyo for next Friday"}]})
    return _jsonl(root / "labelled.jsonl", rows)


def _bfcl_fn(name, desc, params):
    return {"name": name, "description": desc, "parameters": {
        "type": "dict", "required": params[:1],
        "properties": {p: {"type": "string", "description": f"The {p}."} for p in params}}}


LIVE_TOOLS = [_bfcl_fn("cafe.order_drink", "Order a drink from the cafe menu.", ["drink", "size"]),
              _bfcl_fn("ride.request", "Request a ride to a destination.", ["destination", "seats"]),
              _bfcl_fn("calendar.add_event", "Add an event to the user's calendar.", ["title", "date"]),
              _bfcl_fn("stocks.quote", "Latest price of a stock ticker.", ["ticker"]),
              _bfcl_fn("http.get", "Send an HTTP GET request to a URL.", ["url"]),
              _bfcl_fn("http.get", "Fetch a web page and return its text.", ["url", "timeout"])]
LIVE_CALLS = ["Get me a large oat latte", "I need a ride to the train station for two people",
              "Put the team lunch on my calendar for Friday", "How is AAPL trading right now?",
              "Fetch https://example.org/status for me", "Grab the page at https://example.org/news",
              "A small espresso, please", "Take me to 500 Main Street", "Add dentist appointment on May 3",
              "What's the price of TSLA?", "Order a medium hot chocolate", "Book a ride home for one"]
LIVE_IRRELEVANT = ["Tell me a joke about penguins", "What is the capital of Australia?",
                   "Write a haiku about autumn leaves", "How many legs does a spider have?",
                   "Translate 'thank you' into German", "Who painted the Mona Lisa?",
                   "Recommend a good science fiction novel"]


def bfcl_live_rows(root: Path) -> Path:
    """19 rows in BFCL live's shape plus one that lists no function: 12 with a ground_truth (two `http.get`
    definitions, one request in two turns), 7 without (irrelevance)."""
    rows = []
    for i, text in enumerate(LIVE_CALLS):
        gold = LIVE_TOOLS[i % len(LIVE_TOOLS)]
        others = [t for t in LIVE_TOOLS if t["name"] != gold["name"]][i % 3: i % 3 + 2]
        funcs = others[: i % 3] + [gold] + others[i % 3:]
        question = [[{"role": "user", "content": text}]]
        if i == 2:
            question = [[{"role": "user", "content": "I have a team lunch on Friday"},
                         {"role": "assistant", "content": "Nice! Anything I can do?"}], question[0]]
        rows.append({"id": f"live_multiple_{i}-{i}-0", "question": question, "function": funcs,
                     "ground_truth": [{gold["name"]: {gold["parameters"]["required"][0]: ["x"]}}]})
    for i, text in enumerate(LIVE_IRRELEVANT):
        rows.append({"id": f"live_irrelevance_{i}-0-{i}", "question": [[{"role": "user", "content": text}]],
                     "function": [LIVE_TOOLS[(i + 1) % len(LIVE_TOOLS)]]})
    rows.append({"id": "live_irrelevance_7-0-7", "question": [[{"role": "user", "content": "Sing me a song"}]],
                 "function": []})
    return _jsonl(root / "BFCL_live_rows.json", rows)


MISNAMED = {"messages": "conversation", "tools": "functions", "label": "category", "tool_calls": "expected_call",
            "answers": "expected_call", "missing_slots": "missing_params", "id": "uid"}


def misnamed_rows(root: Path) -> Path:
    """labelled_rows with every field under another common name (MISNAMED) and two rows labelled 'unclear'."""
    rows = [{MISNAMED.get(k, k): v for k, v in row.items()} for _, row in io.read_jsonl(labelled_rows(root))]
    for row in rows[-3:-1]:
        row["category"] = "unclear"
    return _jsonl(root / "misnamed.jsonl", rows)
