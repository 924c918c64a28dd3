"""The multiple-choice tournament ranker: the bracket with a fake model, then the rule against a stand-in endpoint."""
import json
import sys
from types import SimpleNamespace

import pandas as pd
import pytest

from conftest import utterance, write_jsonl
from native_fixtures import native_section, outputs, standin, standin_script  # noqa: F401  (standin is a fixture)
from toolgate.config import run as run_config
from toolgate.config import section
from toolgate.core.catalog import actions
from toolgate.experiment import Experiment
from toolgate.native import tournament as T
from toolgate.native.tournament_run import TABLE_COLUMNS, build_jobs, run_tournament, tournament_frame, write_tournament

from .test_run import _gpu_and_vllm

TEN = [f"c{i}" for i in range(10)]


def by_index(choice):
    """An ``ask`` that picks ``choice(group)`` and remembers every group it was shown."""
    seen = []

    def ask(group, rnd, g):
        seen.append((rnd, g, list(group)))
        return choice(group)
    return ask, seen


def test_bracket_ranks_by_elimination_round_with_ties_in_catalog_order():
    ask, seen = by_index(lambda group: len(group) - 1)  # the last option of each group wins
    b = T.run_bracket(TEN, ask, group_size=3)  # 10 = 3 + 3 + 3 + 1: the remainder advances without a prompt
    assert [s[2] for s in seen[:3]] == [TEN[0:3], TEN[3:6], TEN[6:9]]
    assert seen[3:] == [(2, 1, ["c2", "c5", "c8"]), (3, 1, ["c8", "c9"])]
    assert b.prompts_by_round == [3, 1, 1] and b.invalid == 0
    # c9 outlasts all; c8 falls in round 3; c2, c5 in round 2; the rest in round 1 - each tie in catalog order
    assert b.ranking == ["c9", "c8", "c2", "c5", "c0", "c1", "c3", "c4", "c6", "c7"]


def test_ties_keep_catalog_order_whatever_the_winners():
    b = T.run_bracket(TEN, by_index(lambda group: 0)[0], group_size=3)
    assert b.ranking == ["c0", "c9", "c3", "c6", "c1", "c2", "c4", "c5", "c7", "c8"]
    b = T.run_bracket(TEN, by_index(lambda group: 0)[0], group_size=10)  # one group: one prompt, all losers tie
    assert b.ranking == TEN and b.prompts_by_round == [1]


def test_small_brackets_and_bad_group_size():
    ask, seen = by_index(lambda group: 0)
    assert T.run_bracket(["only"], ask, 5) == T.Bracket(["only"], [], 0) and not seen  # nothing to ask
    assert T.run_bracket([], ask, 5).ranking == []
    assert T.run_bracket(["a", "b"], by_index(lambda group: 1)[0], 5).ranking == ["b", "a"]
    with pytest.raises(ValueError, match="at least 2"):
        T.run_bracket(TEN, ask, 1)


def test_parse_letter_accepts_only_a_letter_of_the_group():
    group = ["set_alarm", "make_call", "list_alarms", "check_battery"]
    for answer, want in (("B", 1), (" b ", None), ("(C)", 2), ("A) set_alarm: ...", 0), ("D.", 3), ("E", None),
                         ("I think A", None), ("", None), (None, None), ("AB", None), ("C. list_alarms", 2),
                         ("(B) make_call", 1), ("A: the first one", 0)):
        assert T.parse_letter(answer, group) == want, answer


def test_parse_letter_refuses_option_text_that_contradicts_the_letter():
    """A letter with another option's id after it names two options: invalid, whichever the model meant."""
    group = ["set_alarm", "make_call", "list_alarms"]
    for answer in ("A) list_alarms: list alarms: Lists the alarms.", "B. set_alarm", "C: make_call", "(A) make_call"):
        assert T.parse_letter(answer, group) is None, answer
    b = T.rank_request("u", "x", {t: t for t in group}, lambda s, u: "A) list_alarms: ...", 3, 10_000)
    assert b.invalid == 1 and b.ranking[0] == "set_alarm"  # counted as invalid: the first option advances


def test_choice_prompt_in_the_request_language(small_catalog):
    ko, en = T.option_texts(actions(small_catalog), "ko"), T.option_texts(actions(small_catalog), "en")
    assert list(en) == ["set_alarm", "make_call", "check_battery"]
    assert en["set_alarm"] == "set_alarm: set alarm: Does set_alarm."
    assert ko["set_alarm"].startswith("set_alarm: 알람")
    prompt = T.choice_prompt("wake me at 7", list(en.values())[:2])
    assert prompt.splitlines()[0] == "Request: wake me at 7"
    assert "A) set_alarm: set alarm" in prompt and "B) make_call:" in prompt and prompt.endswith("A-B.")


def test_overlong_prompt_is_an_error_naming_the_limit_and_never_sent():
    options = {t: f"{t}: does {t}" for t in TEN}
    sent = []
    with pytest.raises(T.PromptTooLong) as exc:
        T.rank_request("u1-en", "wake me", options, lambda s, u: sent.append(u) or "A", 5, max_chars=100)
    msg = str(exc.value)
    assert msg.startswith("request 'u1-en': field 'tournament.max_prompt_chars': round 1, group 1: prompt of ")
    assert "over the limit of 100" in msg and "never truncated" in msg and not sent
    assert T.rank_request("u1-en", "wake me", options, lambda s, u: "A", 5, max_chars=10_000).ranking[0] == "c0"


def test_server_context_error_is_the_overlong_error_and_other_failures_pass_through():
    def overflow(system, user):
        raise RuntimeError("HTTP 400: This model's maximum context length is 64 tokens. However, ...")

    with pytest.raises(T.PromptTooLong, match=r"request 'u2-ko': round 1, group 1: .* over the server's context "
                                              r"\(HTTP 400: This model's maximum context length is 64"):
        T.rank_request("u2-ko", "x", {"a": "a", "b": "b"}, overflow, 5, 10_000)

    def down(system, user):
        raise RuntimeError("request failed: connection refused")

    with pytest.raises(RuntimeError, match="connection refused"):
        T.rank_request("u2-ko", "x", {"a": "a", "b": "b"}, down, 5, 10_000)


def test_invalid_answers_are_counted_and_the_first_option_advances():
    b = T.rank_request("u", "x", {t: t for t in TEN}, lambda s, u: "no idea", 3, 10_000)
    assert b.invalid == 5 == sum(b.prompts_by_round)
    assert b.ranking == T.run_bracket(TEN, by_index(lambda group: 0)[0], 3).ranking


# ---------------------------------------------------------------- the rule, against a stand-in endpoint


def tournament_rows():
    """In-catalog rows naming the tool the stand-in picks, plus one that babbles, one that overflows the server's
    context, one with its own candidates and one out of catalog (not ranked)."""
    rows = [utterance(1, "set_alarm"), utterance(2, "make_call", lang="ko"), utterance(3, "check_battery"),
            utterance(4, "set_alarm"), utterance(5, "make_call"), utterance(6, "make_call"),
            utterance(7, None, outcome="chat", slice_="out")]
    texts = ["please set_alarm now", "please make_call now", "please check_battery now", "babble set_alarm",
             "overflow make_call", "please make_call now", "hello there"]
    for r, text in zip(rows, texts):
        r["text"] = text
    rows[5]["candidates"] = ["check_battery", "make_call"]
    return rows


def tournament_section(**settings):
    return section("tournament", {"enabled": True, "checkpoint": "c", **settings})


def words(text, options):
    """The stand-in's token count of one prompt: whitespace-separated words of system and user text."""
    return len(T.SYSTEM_PROMPT.split()) + len(T.choice_prompt(text, options).split())


def test_build_jobs_in_catalog_requests_with_their_candidates(small_catalog):
    rows = tournament_rows()
    jobs = build_jobs(small_catalog, rows, "utterance", tournament_section(group_size=2, max_prompt_chars=900))
    assert [j["utterance_id"] for j in jobs] == [r["utterance_id"] for r in rows[:6]]  # the chat row is not ranked
    assert list(jobs[5]["options"]) == ["make_call", "check_battery"]  # its own candidates, in catalog order
    assert "알람" in jobs[1]["options"]["set_alarm"] and (jobs[0]["group_size"], jobs[0]["max_chars"]) == (2, 900)
    both = build_jobs(small_catalog, rows, "both", tournament_section())
    assert " / " in both[0]["options"]["set_alarm"]


def test_protocol_tournament_against_standin(standin, small_catalog, tmp_path):
    """Protocol test: brackets through the stand-in endpoint (its answers, not a model's), records and table."""
    rows = tournament_rows()
    native = native_section(endpoint=standin, concurrency=3, readiness_timeout_s=5, request_timeout_s=10)
    out = outputs(tmp_path, "records.jsonl")
    dep, recs = run_tournament(small_catalog, rows, {"name": "c", "model": "org/x"}, out, native,
                               tournament_section(group_size=2))
    assert dep["deployed"] and dep["served_model"] == "stand-in" and dep["group_size"] == 2
    assert json.loads(out.deployment.read_text())["n_records"] == 6 and dep["n_errors"] == 1
    saved = [json.loads(line) for line in out.records.read_text().splitlines()]
    assert saved == recs and [r["utterance_id"] for r in recs] == [r["utterance_id"] for r in rows[:6]]
    by = {r["utterance_id"]: r for r in recs}
    # 3 actions in groups of 2: round 1 asks about (set_alarm, make_call), check_battery waits; round 2 one prompt
    assert by["u1-en"]["ranking"] == ["set_alarm", "check_battery", "make_call"]
    assert by["u3-en"]["top5"] == ["check_battery", "set_alarm", "make_call"]
    assert by["u2-ko"]["ranking"][0] == "make_call"
    assert all(by[u]["prompts_by_round"] == [1, 1] and by[u]["rounds"] == 2 for u in ("u1-en", "u2-ko", "u3-en"))
    en = list(T.option_texts(actions(small_catalog), "en").values())
    assert by["u1-en"]["prompts"] == 2 and by["u1-en"]["completion_tokens"] == 2
    assert by["u1-en"]["prompt_tokens"] == words("please set_alarm now", en[:2]) + \
        words("please set_alarm now", [en[0], en[2]])
    assert by["u4-en"]["invalid"] == 2 and by["u4-en"]["ranking"][0] == "set_alarm"  # no letter: first option
    assert by["u5-en"]["ranking"] == [] and "over the server's context" in by["u5-en"]["error"]
    assert by["u6-en"]["n_candidates"] == 2 and by["u6-en"]["prompts"] == 1 and by["u6-en"]["top5"][0] == "make_call"
    assert all(r["latency_s"] > 0 for r in recs)
    table = tournament_frame(dep, recs, rows)
    assert list(table.columns) == TABLE_COLUMNS
    table = table.set_index(["lang", "slice"])
    everything = table.loc[("all", "all")]
    assert everything["n"] == 6 and everything["n_errors"] == 1 and everything["status"] == "ok"
    assert everything["top1"] == pytest.approx(5 / 6) and everything["top5"] == pytest.approx(5 / 6)
    # the failed request is unranked (rank inf): it adds 0 to nDCG@10 and recall@5 as to top1
    assert everything["ndcg_at_10"] == pytest.approx(5 / 6) and everything["recall_at_5"] == pytest.approx(5 / 6)
    assert everything["invalid_rate"] == pytest.approx(2 / 9)  # 2 + 2 + 2 + 2 + 0 (failed) + 1 prompts answered


def experiment(cat, utt, out, native):
    """The tournament rule's experiment: its params, inputs and outputs."""
    params = SimpleNamespace(run=run_config(0, ["ko", "en"]), native=native, tournament=tournament_section())
    return Experiment(params, SimpleNamespace(catalog=cat, utterances=utt), out)


def test_write_tournament_with_a_launched_standin(small_catalog, tmp_path):
    """Protocol test: the rule's entry point launches the roster entry's own command, ranks, stops it, writes."""
    rows = tournament_rows()[:3]
    cat, utt = write_jsonl(tmp_path / "c.jsonl", small_catalog), write_jsonl(tmp_path / "u.jsonl", rows)
    entry = {"model": "org/x", "parser": "hermes", "command": [sys.executable, str(standin_script(tmp_path)), "{port}"]}
    native = native_section(roster={"c": entry}, readiness_timeout_s=20, request_timeout_s=10)
    out = outputs(tmp_path, "r.jsonl", "t/tournament.csv")
    df = write_tournament(experiment(cat, utt, out, native), out.server_log)
    assert json.loads(out.deployment.read_text())["server_alive_after_run"]
    assert df.set_index(["lang", "slice"]).loc[("all", "all"), "top1"] == 1.0
    md = (tmp_path / "t" / "tournament.md").read_text()
    assert "docs/metrics.md, 'Multiple-choice tournament'" in md and "Candidates: the whole catalog." in md
    assert pd.read_csv(out.table)["status"].eq("ok").all()


@pytest.mark.skipif(_gpu_and_vllm(), reason="vLLM and a GPU are present: a real launch is not a unit test")
def test_without_a_model_the_table_says_not_run(small_catalog, tmp_path):
    rows = tournament_rows()
    cat, utt = write_jsonl(tmp_path / "c.jsonl", small_catalog), write_jsonl(tmp_path / "u.jsonl", rows)
    native = native_section(roster={"c": {"model": "Qwen/Qwen3-4B-Instruct-2507", "parser": "hermes"}},
                            readiness_timeout_s=5)
    out = outputs(tmp_path, "r.jsonl", "tournament.csv")
    df = write_tournament(experiment(cat, utt, out, native), out.server_log)
    dep = json.loads(out.deployment.read_text())
    assert not dep["deployed"] and dep["stage"] in ("vllm_not_importable", "no_cuda_device")
    assert len(df) == 1 and df.loc[0, "status"] == "not run" and df.loc[0, "reason"].startswith(dep["stage"] + ": ")
    assert out.records.read_text() == "" and "not run" in (tmp_path / "tournament.md").read_text()


def test_report_paragraph_from_the_table():
    from toolgate.report.build import tournament_blocks

    assert tournament_blocks({}) == []
    not_run = pd.DataFrame([{"checkpoint": "c", "status": "not run", "reason": "no_cuda_device: no GPU"}],
                           columns=TABLE_COLUMNS)
    text = tournament_blocks({"tournament": not_run})[1][1]
    assert "not run, no model could be served (no_cuda_device: no GPU)" in text
    ok = pd.DataFrame([{"checkpoint": "c", "status": "ok", "lang": "all", "slice": "all", "n": 6, "n_errors": 1,
                        "top1": 0.5, "top5": 0.75, "mrr": 0.6, "prompts": 17.5, "latency_s": 0.25}],
                      columns=TABLE_COLUMNS)
    assert tournament_blocks({"tournament": ok})[1][1].endswith(
        "top-1 0.500, top-5 0.750, MRR 0.600 over 6 in-catalog requests (1 failed), 17.5 prompts and 0.25 s per "
        "request.")


def test_tokens_are_unknown_when_the_server_reports_no_usage(monkeypatch):
    from toolgate.native import tournament_run

    answer = {"choices": [{"message": {"content": "B"}}]}  # no "usage"
    monkeypatch.setattr(tournament_run, "post_chat", lambda url, body, timeout: answer)
    job = {"utterance_id": "u", "lang": "en", "text": "x", "options": {"a": "a", "b": "b"}, "group_size": 2,
           "max_chars": 1000, "model": "m"}
    rec = tournament_run.call_bracket("http://127.0.0.1:9", job, 1)
    assert rec["ranking"] == ["b", "a"] and rec["prompts"] == 1 and rec["error"] == ""
    assert rec["prompt_tokens"] is None and rec["completion_tokens"] is None
