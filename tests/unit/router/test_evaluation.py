"""The router's evaluation card: its metrics by hand, a router over another catalog with per-request candidates,
and ``decide --eval``."""
import json
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import tool, utterance, write_jsonl
from router_fixtures import artifact, catalog, rows, tiny_experiment  # noqa: F401 (a fixture)
from toolgate.cli import main
from toolgate.core.runtime import Router, RouterError
from toolgate.router.evaluation import (
    PIPELINE_KINDS,
    act_ece,
    card_row,
    eval_rows,
    file_row,
    leaked_rows,
    on_catalog,
    reference_rows,
    routed,
    within_rows,
    write_leakage,
)
from toolgate.router.export import Route, export_router, pipeline_route
from toolgate.router.select import Candidate, outcomes
from toolgate.routing.baselines import Gold, correct


def test_card_metrics_by_hand():
    rs = [utterance(0, "set_alarm"), utterance(1, "make_call"), utterance(2, None, "delegate", "out"),
          utterance(3, None, "delegate", "out")]
    kind = ["action", "ask", "action", "delegate"]  # right tool; asked the wrong one; executed a delegate; delegated
    tool = ["set_alarm", "check_battery", "make_call", ""]
    row = card_row((kind, tool, np.array([0.9, 0.4, 0.6, 0.1])), Gold(rs, catalog()), [r["pair_id"] for r in rs], 200, 0)
    assert (row["n"], row["n_in"], row["n_out"]) == (4, 2, 2)
    assert (row["accuracy"], row["danger_rate"], row["ask_rate"]) == (0.5, 0.25, 0.25)
    assert row["auc"] == 0.75  # of the four in/out pairs only 0.4 < 0.6 is ordered wrong
    for name in ("accuracy", "danger", "ask", "auc"):
        assert row[f"{name}_low"] <= row["accuracy" if name == "accuracy" else "auc" if name == "auc"
                                          else f"{name}_rate"] <= row[f"{name}_high"]
    # BFCL: a tool called on in-catalog requests (the ask calls none), none called on out-of-catalog ones
    assert (row["relevance_detection"], row["irrelevance_detection"]) == (0.5, 0.5)
    only_in = card_row((kind[:2], tool[:2], np.array([0.9, 0.4])), Gold(rs[:2], catalog()), ["a", "b"], 50, 0)
    assert np.isnan(only_in["auc"]) and only_in["danger_rate"] == 0
    assert only_in["relevance_detection"] == 0.5 and np.isnan(only_in["irrelevance_detection"])
    only_out = card_row((kind[3:], tool[3:], np.array([0.1])), Gold(rs[3:], catalog()), ["d"], 50, 0)
    assert np.isnan(only_out["relevance_detection"]) and only_out["irrelevance_detection"] == 1.0
    assert "ece" not in row  # no top tool given: the P is not scored as P(the act is right)


def test_leakage_lists_the_requests_near_an_example_and_the_clean_row_reads_them_back(tmp_path):
    """'turn wifi on' shares 10 of the 15 distinct padded 3-grams of 'turn wifi off' and itself (Jaccard 2/3 >= 0.5);
    its Korean twin shares no gram, and 'call mom' none either: only the English text is leaked."""
    cat = catalog()
    cat[0]["examples"] = [{"text": "turn wifi off", "lang": "en"}]
    main = [{"utterance_id": "p1", "text": "turn wifi on"}, {"utterance_id": "p1-ko", "text": "와이파이 켜 줘"},
            {"utterance_id": "p2", "text": "call mom"}]
    exp = SimpleNamespace(catalog=cat, main=main, rows=main, rankers={}, run=SimpleNamespace(seed=0),
                          output=SimpleNamespace(table=tmp_path / "example_leakage.csv"))
    near = write_leakage(exp)  # no dense ranker: no cosine
    assert near["jaccard"].round(4).tolist() == [0.6667, 0.0, 0.0] and near["cosine"].isna().all()
    assert near["nearest"][0] == "turn wifi off" and near["leaked"].tolist() == [True, False, False]
    assert leaked_rows(exp.output.table, main).tolist() == [True, False, False]
    cat[0]["examples"] = []
    assert not write_leakage(exp)["leaked"].any() and not leaked_rows(exp.output.table, main).any()


def test_ece_of_the_act_by_hand():
    """P against acting on the top tool being right, 10 equal-width bins: bin 9 holds 0.9 (right) and 0.95 (the
    wrong tool), gap |1/2 - 0.925| = 0.425 over half the requests; bin 1 holds 0.1 (out of catalog) and 0.15 (the
    right tool of an in-catalog request the router delegated), gap |1/2 - 0.125| = 0.375 over the other half."""
    rs = [utterance(0, "set_alarm"), utterance(1, "make_call"), utterance(2, None, "delegate", "out"),
          utterance(3, "set_alarm")]
    top = ["set_alarm", "check_battery", "make_call", "set_alarm"]
    kind, tool = ["action", "action", "delegate", "delegate"], ["set_alarm", "check_battery", "", ""]
    p = np.array([0.9, 0.95, 0.1, 0.15])
    row = card_row((kind, tool, p), Gold(rs, catalog()), [r["pair_id"] for r in rs], 50, 0, top)
    assert row["ece"] == pytest.approx(0.5 * 0.425 + 0.5 * 0.375)
    assert act_ece(p, top, Gold(rs, catalog())) == row["ece"]


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
    right = correct(kind, tool, Gold(rows(), r.catalog))
    assert got["n"] == len(rows()) and got["accuracy"] == right.mean()
    assert got.pop("references") == reference_rows(r, rows(), str(path))
    assert got == file_row(r, eval_rows(r, [path])[0], str(path))
    langs = [x["lang"] for x in rows()]
    assert got["by_lang"] == {lang: {"n": langs.count(lang), "accuracy": float(right[np.array(langs) == lang].mean())}
                              for lang in dict.fromkeys(langs)}
    assert [w["utterance_id"] for w in got["wrong"]] == [x["utterance_id"] for x, ok in zip(rows(), right) if not ok]
    assert main(["decide", "--router", str(artifact), "--eval", str(path)]) == 0
    out = capsys.readouterr().out
    assert "routed accuracy" in out and (f"not right ({len(got['wrong'])} requests" in out) == bool(got["wrong"])


def other_catalog():
    """An imported catalog the tiny router was not exported from: three tools of its own and the two routes."""
    return [tool("water_plants"), tool("feed_cat"), tool("lock_door"), *catalog()[-2:]]


OTHER = [("water the plants en", "water_plants"), ("feed the cat en", "feed_cat"), ("lock the door en", "lock_door"),
         ("water my garden plants en", "water_plants"), ("water for the cat en", "feed_cat"),
         ("book a table for four tonight en", None), ("what is the weather in Paris en", None),
         ("order a pizza en", None), ("find a plumber en", None)]


def other_rows(candidates=False):
    out = []
    for i, (text, gold) in enumerate(OTHER):
        u = {**utterance(i, gold, "action" if gold else "delegate", "in" if gold else "out"), "text": text}
        if candidates:  # its tool (if any) and another
            u["candidates"] = [gold or "water_plants", "lock_door" if gold != "lock_door" else "feed_cat"]
        out.append(u)
    return out


def test_decide_eval_on_another_catalog_retargets_the_router_with_references(artifact, tmp_path, capsys):
    folder = tmp_path / "imported"
    folder.mkdir()
    cat = write_jsonl(folder / "catalog.jsonl", other_catalog())
    plain, offered = write_jsonl(folder / "u.jsonl", other_rows()), write_jsonl(tmp_path / "c.jsonl", other_rows(True))
    argv = ["decide", "--router", str(artifact), "--json", "--catalog", str(cat), "--eval"]
    assert main([*argv, str(plain)]) == 0
    got = json.loads(capsys.readouterr().out)
    over = on_catalog(Router.load(artifact), cat)
    assert over.ids.tolist() == [t["id"] for t in other_catalog()] and got["mode"].startswith("file (re-targeted")
    refs = {r["router"]: r for r in got.pop("references")}
    delegate = refs["always delegate"]
    assert (delegate["accuracy"], delegate["danger_rate"], delegate["ask_rate"]) == (4 / 9, 0, 0)
    assert refs["single-pool ladder (BM25, thresholds out of fold)"]["n"] == got["n"] == 9
    assert got == {**file_row(over, other_rows(), str(plain)), "mode": got["mode"]}
    assert main([*argv, str(offered)]) == 0  # each request over its own candidates: the card's numbers
    with_lists = json.loads(capsys.readouterr().out)
    kind, tool_, p, *_ = routed(over, [u["text"] for u in other_rows(True)],
                               [u.get("candidates") for u in other_rows(True)])
    card = card_row((kind, tool_, p), Gold(other_rows(), other_catalog()), [u["pair_id"] for u in other_rows()], 2000,
                    Router.load(artifact).manifest["seed"])
    assert {k: with_lists[k] for k in card} == card and with_lists["accuracy"] != got["accuracy"]
    (folder / "import.json").write_text("{}")  # an import's utterances: its catalog.jsonl beside them is the default
    assert main(["decide", "--router", str(artifact), "--eval", str(plain)]) == 0
    printed = capsys.readouterr().out
    assert f"re-targeted to {cat}" in printed and "reference on the same requests: always delegate" in printed
    assert "reference on the same requests: single-pool ladder" in printed


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


def own_tool(t: dict) -> dict:
    """A catalog action as a tools file gives it, names and descriptions per language (the router's definition)."""
    return {"name": t["names"], "description": t["descriptions"], "parameters": t["parameters"]}


def test_decide_eval_reads_an_import_format_with_imports_flags(artifact, tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([own_tool(catalog()[0]), {"name": "set_timer", "description": "Set a timer."}]))
    reqs = write_jsonl(tmp_path / "requests.jsonl", [{"id": "a", "text": "alarm at 7 en", "tool": "set alarm"},
                                                     {"id": "b", "text": "tell me a joke en", "tool": None},
                                                     {"id": "c", "text": "timer for 5 minutes", "tool": "set_timer"}])
    argv = ["decide", "--router", str(artifact), "--eval", str(tools), str(reqs)]
    assert main([*argv, "--eval-format", "openai-tools", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["n"], got["n_in"], got["n_out"]) == (3, 1, 2)  # a tool the router lacks: its request is out of it
    assert main([*argv, "--eval-format", "openai-tools"]) == 0
    printed = capsys.readouterr()
    assert "routed accuracy" in printed.out and "read 3 requests: 1 in the router's catalog, 2 out" in printed.err
    assert "1 tools of the files are not in the router's catalog" in printed.err and "warning" not in printed.err
    tools.write_text(json.dumps([{"name": "set_alarm", "description": "Set an alarm."}]))  # not the router's definition
    reqs = write_jsonl(reqs, [{"id": "a", "text": "alarm at 7 en", "tool": "set_alarm"}])
    assert main([*argv, "--eval-format", "openai-tools"]) == 2
    assert "none of the files' 1 tools is in the router's catalog" in capsys.readouterr().err
    for extra, message in [(["--lang", "en"], "--lang: applies to the files of an import format (--eval FILE... "
                                              "--eval-format FORMAT), not to an utterances file or a request"),
                           (["--eval-format", "bfcl", "--text-field", "q"],
                            "--text-field: applies to --eval-format tool-rows only, not bfcl")]:
        assert main([*argv, *extra]) == 2
        assert capsys.readouterr().err == f"error: {message}\n"
    assert main(["decide", "alarm at 7", "--router", str(artifact), "--eval-format", "bfcl"]) == 2
    assert "give --eval FILE..." in capsys.readouterr().err


def test_probe_rows_count_right_wrong_and_wrong_acts(artifact, tmp_path):
    from toolgate.core.errors import InputError
    from toolgate.router.evaluation import probe_rows, read_probes
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
    got = {x["set"]: x for x in probe_rows(r, read_probes(files(), r.catalog))}
    decided = [r.decide(t) for t in ("call mom now", "alarm at 7", "tell me a joke")]
    assert decided[0].kind == "act" and decided[1].kind == "act"  # what the counts below rest on
    assert (got["probes:vague"]["right"], got["probes:vague"]["wrong"], got["probes:vague"]["wrong_act"]) == (1, 1, 1)
    everyday = got["probes:everyday"]
    assert (everyday["n"], everyday["right"], everyday["wrong_act"]) == (3, 1 + (decided[2].kind == "chat"), 1)
    assert probe_rows(r, read_probes([], r.catalog)) == []
    write_jsonl(folder / "router-other.jsonl", [{"text": "x", "expect": "action", "tool": "not_in_this_catalog"}])
    assert probe_rows(r, read_probes(files(), r.catalog)) == []  # probes of another catalog
    for probe, field in (({"text": "x", "expect": "maybe"}, "expect"), ({"text": "x", "expect": "ask"}, "tool"),
                         ({"text": "x", "expect": "no_action"}, "route"), ({"expect": "not_act"}, "text"),
                         ({"text": "x", "expect": "action", "tool": ["a"]}, "tool")):
        write_jsonl(folder / "router-other.jsonl", [probe])
        with pytest.raises(InputError, match=f"router-other.jsonl:1: field '{field}'"):
            probe_rows(r, read_probes(files(), r.catalog))


def test_decide_eval_shows_a_request_offered_no_tools_none_under_delegate(artifact, tmp_path):
    from tool_rows_fixtures import labelled_rows
    from toolgate.importers import Options
    from toolgate.importers.toolrows import fields

    r, src = Router.load(artifact), labelled_rows(tmp_path)
    known = {"id": "known", "tools": [own_tool(catalog()[0])], "label": "call", "tool_calls": [{"name": "set alarm"}],
             "messages": [{"role": "user", "content": "alarm at 7"}]}  # one tool of the router's: not refused
    src.write_text(src.read_text() + json.dumps(known) + "\n")
    rows, info = eval_rows(r, [src], "tool-rows", Options(routes=False, empty_candidates="delegate",
                                                          fields=fields("labelled")))
    empty = next(u for u in rows if u["utterance_id"] == "refuse-empty")
    assert empty["candidates"] == [] and empty["gold_outcome"] == "delegate" and info["ambiguous_gold"] == 0
    (d,) = r.decide_many([empty["text"]], [[]])
    kind, *_ = routed(r, [u["text"] for u in rows], [u.get("candidates", list(r.ids)) for u in rows])
    assert d.reason == "no_candidates" and kind[rows.index(empty)] == PIPELINE_KINDS[d.kind]
    assert file_row(r, rows, "labelled")["n"] == len(rows)
    _, seen_all = eval_rows(r, [src], "tool-rows", Options(routes=False, empty_candidates="catalog",
                                                           fields=fields("labelled")))
    assert seen_all["ambiguous_gold"] == 1


def test_decide_eval_leaves_out_requests_in_a_language_the_router_does_not_read(artifact, tmp_path):
    from toolgate.core.errors import InputError
    from toolgate.importers import Options

    english = Router.load(artifact).on_catalog(catalog(), ("en",))
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([own_tool(catalog()[0])]))
    reqs = write_jsonl(tmp_path / "r.jsonl", [{"id": "a", "text": "alarm at 7", "tool": "set alarm"},
                                              {"id": "b", "text": "알람 맞춰 줘", "tool": "set alarm"}])
    rows, info = eval_rows(english, [tools, reqs], "openai-tools", Options(routes=False))
    assert [r["utterance_id"] for r in rows] == ["a"]
    assert info["dropped"] == {"in a language the router does not read (en; --other-langs skip)": 1}
    assert len(eval_rows(english, [tools, reqs], "openai-tools", Options(routes=False, other_langs="keep"))[0]) == 2
    with pytest.raises(InputError, match="request 'b' is in 'ko'; the router reads en"):
        eval_rows(english, [tools, reqs], "openai-tools", Options(routes=False, other_langs="error"))


# requests whose words sit on a tool, in and out of the catalog: the band's thresholds decide them (with the tiny
# router's own rows alone, every request is decided by its evidence and any thresholds do)
NEAR = [("alarm please for the morning", "set_alarm"), ("wake me with an alarm at six", "set_alarm"),
        ("call dad", "make_call"), ("phone mom", "make_call"), ("is my battery low", "check_battery"),
        ("battery", "check_battery"), ("wifi off please", "set_wifi"), ("turn wifi on", "set_wifi"),
        ("buy a new battery charger", None), ("wifi router reviews online", None), ("alarm clock shop nearby", None),
        ("call center hours of the bank", None), ("order pizza tonight", None), ("who won the game", None)]


def test_the_card_and_decide_eval_agree_at_the_exported_thresholds(tmp_path, capsys):
    """Issue 53, item 7. The card's within row is out of fold (each fold's thresholds chosen on the other two
    folds); decide --eval on the same requests runs the thresholds an export fits on all of them. At those
    thresholds the card's decision code (the selection's outcomes, evidence rules included) is the router's, row by
    row, and its routed accuracy, ask and danger rates are decide --eval's; the gate's values are the same on both
    sides here (in sample), so AUC and ECE agree as well, and router.json's in-sample rates are decide --eval's."""
    near = [{**utterance(20 + i, gold, "action" if gold else "delegate", "in" if gold else "out"), "text": text}
            for i, (text, gold) in enumerate(NEAR)]
    exp, _ = tiny_experiment(tmp_path, real_gate=False, rs=rows() + near)
    export_router(exp, Route("selected", "bm25", "g3", "utility"), tmp_path / "router")
    router, g, n = Router.load(tmp_path / "router"), Gold(exp.main, exp.catalog), len(exp.main)
    fold = exp.signal_table.set_index("utterance_id").loc[[r["utterance_id"] for r in exp.main], "fold"].to_numpy()
    o = outcomes(exp, Candidate("bm25", "g3", (), 0.0), g)
    exported, oof = o.pick(np.ones(n, bool)), o.oof(np.ones(n, bool))
    assert (o.fold == fold).all()
    assert len(set(fold)) == 3 and set(oof) != {exported}  # folds whose own thresholds differ from the export's
    kind, tool = o.pair(exported)
    words = {v: k for k, v in PIPELINE_KINDS.items()}
    assert [(words[k], t or None) for k, t in zip(kind, tool)] == \
           [(d.kind, d.tool) for d in router.decide_many([r["text"] for r in exp.main])]
    card = card_row((kind, tool, np.zeros(n)), g, [r["utterance_id"] for r in exp.main], 200, 0)
    path = write_jsonl(tmp_path / "main.jsonl", exp.main)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fold is empty: no divide warning, no NaN
        within, _ = within_rows(router, exp, np.zeros(n, bool))
        assert main(["decide", "--router", str(tmp_path / "router"), "--eval", str(path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    for name in ("accuracy", "ask_rate", "danger_rate"):
        assert got[name] == card[name]
    assert router.manifest["thresholds"]["in_sample"] == {k: got[k] for k in ("danger_rate", "ask_rate")}
    assert (got["ask_rate"], got["danger_rate"]) != (within["ask_rate"], within["danger_rate"])  # out of fold
    assert got["auc"] == pytest.approx(within["auc"]) and got["ece"] == pytest.approx(within["ece"])
    with pytest.raises(ValueError, match="no rows to choose thresholds on"):
        o.pick(np.zeros(n, bool))


def test_the_ladder_exports_as_a_router_without_an_encoder(tmp_path):
    """router.pipelines' ``ladder``: the selection's ladder candidate (thresholds for router.utility) as an artifact
    of its own, which loads no encoder, so router_cost times a router against the goals for one without."""
    exp, _ = tiny_experiment(tmp_path, real_gate=False)
    m, _ = export_router(exp, pipeline_route("ladder", exp), tmp_path / "ladder")
    router = Router.load(tmp_path / "ladder")
    assert (m["pipeline"]["kind"], m["pipeline"]["ranker"], m["encoders"]) == ("ladder", "bm25", {})
    assert m["thresholds"]["objective"] == "utility" and not router.encoders
    assert router.decide("set an alarm for 7").kind in ("act", "ask", "delegate", "chat")
