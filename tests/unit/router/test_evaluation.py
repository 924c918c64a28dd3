"""The router's evaluation card: its metrics by hand, a router over another catalog with per-request candidates,
and ``decide --eval``."""
import json

import numpy as np
import pytest

from conftest import utterance, write_jsonl
from router_fixtures import artifact, catalog, rows  # noqa: F401 (a fixture)
from toolgate.cli import main
from toolgate.router.evaluation import PIPELINE_KINDS, card_row, eval_rows, file_row
from toolgate.router.runtime import Router, RouterError
from toolgate.routing.baselines import Gold, correct


def test_card_metrics_by_hand():
    rs = [utterance(0, "set_alarm"), utterance(1, "make_call"), utterance(2, None, "delegate", "out"),
          utterance(3, None, "delegate", "out")]
    kind = ["action", "ask", "action", "delegate"]  # right tool; asked the wrong one; executed a delegate; delegated
    tool = ["set_alarm", "check_battery", "make_call", ""]
    row = card_row(kind, tool, np.array([0.9, 0.4, 0.6, 0.1]), Gold(rs, catalog()), [r["pair_id"] for r in rs], 200, 0)
    assert (row["n"], row["n_in"], row["n_out"]) == (4, 2, 2)
    assert (row["accuracy"], row["danger_rate"], row["ask_rate"]) == (0.5, 0.25, 0.25)
    assert row["auc"] == 0.75  # of the four in/out pairs only 0.4 < 0.6 is ordered wrong
    for name in ("accuracy", "danger", "ask", "auc"):
        assert row[f"{name}_low"] <= row["accuracy" if name == "accuracy" else "auc" if name == "auc"
                                          else f"{name}_rate"] <= row[f"{name}_high"]
    only_in = card_row(kind[:2], tool[:2], np.array([0.9, 0.4]), Gold(rs[:2], catalog()), ["a", "b"], 50, 0)
    assert np.isnan(only_in["auc"]) and only_in["danger_rate"] == 0


def test_a_router_over_its_own_catalog_again_decides_as_shipped(artifact):
    r = Router.load(artifact)
    texts = [x["text"] for x in rows()]
    again = r.on_catalog(catalog(), ("ko", "en"))
    assert [d.to_dict() | {"latency_ms": 0} for d in again.decide_many(texts)] == \
           [d.to_dict() | {"latency_ms": 0} for d in r.decide_many(texts)]


def test_each_request_chooses_only_among_its_candidates(artifact):
    r = Router.load(artifact)
    free, = r.decide_many(["alarm at 7 en"])
    assert free.candidates[0][0] == "set_alarm"
    held, = r.decide_many(["alarm at 7 en"], candidates=[["make_call", "check_battery"]])
    assert {t for t, _ in held.candidates} <= {"make_call", "check_battery"} and held.tool != "set_alarm"
    with pytest.raises(RouterError, match="candidate 'nope' is not a tool id of the router's catalog"):
        r.decide_many(["alarm at 7 en"], candidates=[["nope"]])


def test_decide_eval_reports_the_decisions_it_makes(artifact, tmp_path, capsys):
    path = write_jsonl(tmp_path / "eval.jsonl", rows())
    assert main(["decide", "--router", str(artifact), "--eval", str(path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    r = Router.load(artifact)
    ds = r.decide_many([x["text"] for x in rows()])
    kind = np.array([PIPELINE_KINDS[d.kind] for d in ds])
    tool = np.array([d.tool or "" for d in ds])
    assert got["n"] == len(rows()) and got["accuracy"] == correct(kind, tool, Gold(rows(), r.catalog)).mean()
    assert got == file_row(r, eval_rows(r, [path])[0], str(path))
    assert main(["decide", "--router", str(artifact), "--eval", str(path)]) == 0
    assert "routed accuracy" in capsys.readouterr().out


def test_decide_eval_names_a_bad_file_in_one_line(artifact, tmp_path, capsys):
    path = write_jsonl(tmp_path / "eval.jsonl", [{**rows()[0], "gold_tool": "no_such_tool"}])
    assert main(["decide", "--router", str(artifact), "--eval", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "no_such_tool" in err


@pytest.mark.parametrize("seed,message", [(None, "missing required field"), ("13", "'13' is not of type 'integer'"),
                                          (-1, "-1 is less than the minimum of 0")])
def test_decide_eval_refuses_a_router_without_a_usable_seed_in_one_line(artifact, tmp_path, capsys, seed, message):
    manifest = artifact / "router.json"
    m = {k: v for k, v in json.loads(manifest.read_text()).items() if k != "seed"}  # the resamples' seed
    manifest.write_text(json.dumps(m if seed is None else {**m, "seed": seed}))
    path = write_jsonl(tmp_path / "eval.jsonl", rows())
    assert main(["decide", "--router", str(artifact), "--eval", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {manifest}: field 'seed': {message}\n"


def test_decide_eval_reads_an_import_format_with_imports_flags(artifact, tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "set_alarm", "description": "Set an alarm."}]))  # not the router's definition
    reqs = write_jsonl(tmp_path / "requests.jsonl", [{"id": "a", "text": "alarm at 7 en", "tool": "set_alarm"},
                                                     {"id": "b", "text": "tell me a joke en", "tool": None}])
    argv = ["decide", "--router", str(artifact), "--eval", str(tools), str(reqs)]
    assert main([*argv, "--eval-format", "openai-tools", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["n"], got["n_in"], got["n_out"]) == (2, 0, 2)  # a tool the router lacks: its request is out of it
    assert main([*argv, "--eval-format", "openai-tools"]) == 0
    printed = capsys.readouterr()
    assert "routed accuracy" in printed.out and "read 2 requests: 0 in the router's catalog, 2 out" in printed.err
    assert "1 tools of the files are not in the router's catalog" in printed.err
    for extra, message in [(["--lang", "en"], "--lang: applies to the files of an import format (--eval FILE... "
                                              "--eval-format FORMAT), not to an utterances file or a request"),
                           (["--eval-format", "bfcl", "--text-field", "q"],
                            "--text-field: applies to --eval-format tool-rows only, not bfcl")]:
        assert main([*argv, *extra]) == 2
        assert capsys.readouterr().err == f"error: {message}\n"
    assert main(["decide", "alarm at 7", "--router", str(artifact), "--eval-format", "bfcl"]) == 2
    assert "give --eval FILE..." in capsys.readouterr().err


def test_probe_rows_count_right_wrong_and_wrong_acts(artifact, tmp_path):
    from toolgate.errors import InputError
    from toolgate.router.evaluation import probe_rows
    r = Router.load(artifact)
    r.t_low = r.t_high = 0.0  # the band executes whatever the evidence rules let through
    folder = tmp_path / "probes"
    folder.mkdir()
    write_jsonl(folder / "router-vague.jsonl", [{"text": "ok", "expect": "not_act"},
                                                 {"text": "call mom now", "expect": "not_act"}])
    write_jsonl(folder / "router-everyday.jsonl", [{"text": "alarm at 7", "expect": "action", "tool": "set_alarm"},
                                                    {"text": "alarm at 7", "expect": "ask", "tool": "set_alarm"},
                                                    {"text": "tell me a joke", "expect": "no_action", "route": "chat"}])
    files = lambda: sorted(folder.glob("router-*.jsonl"))  # noqa: E731  (the rule's input: router.probes' files)
    got = {x["set"]: x for x in probe_rows(r, files())}
    decided = [r.decide(t) for t in ("call mom now", "alarm at 7", "tell me a joke")]
    assert decided[0].kind == "act" and decided[1].kind == "act"  # what the counts below rest on
    assert (got["probes:vague"]["right"], got["probes:vague"]["wrong"], got["probes:vague"]["wrong_act"]) == (1, 1, 1)
    everyday = got["probes:everyday"]
    assert (everyday["n"], everyday["right"], everyday["wrong_act"]) == (3, 1 + (decided[2].kind == "chat"), 1)
    assert probe_rows(r, []) == []
    write_jsonl(folder / "router-other.jsonl", [{"text": "x", "expect": "action", "tool": "not_in_this_catalog"}])
    assert probe_rows(r, files()) == []  # probes of another catalog
    write_jsonl(folder / "router-other.jsonl", [{"text": "x", "expect": "maybe"}])
    with pytest.raises(InputError, match="router-other.jsonl:1: field 'expect'"):
        probe_rows(r, files())
