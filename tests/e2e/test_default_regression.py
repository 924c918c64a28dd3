"""The complete default workflow in a copy of the project, then the headline regression check.

This is what `make reproduce` runs, with the benchmarks cut to fewer sizes and timed queries
(tests/e2e/benchmarks_cut.yaml, laid over config.yaml: their timings are measured by `make reproduce`, not
tested); a rerun after it has nothing to do. The
`check` rule is part of the default target (config.yaml sets report.expected),
so a drift in any headline number fails this test with the check's diff. The
tables' consistency with each other is checked on the same run (the suite runs
each workflow once). The copy sits beside a link to ../shared, so nothing is written into the checkout's
results/ and any test of this file can run alone (the module's fixture runs the workflow when first asked).
"""
import json
import os
import shutil
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT, copy_repo
from smk import UNTIMED, snakemake
from toolgate.core.signals import registry

pytestmark = pytest.mark.slow


CONFIG = ("--configfile", "config.yaml", "tests/e2e/benchmarks_cut.yaml")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """(root, proc): the workflow's files copied beside a link to ../shared, and the default workflow run there."""
    base = tmp_path_factory.mktemp("default")
    (base / "shared").symlink_to(ROOT.parent / "shared")
    root = copy_repo(base / "main")
    (root / CONFIG[2]).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / CONFIG[2], root / CONFIG[2])
    return SimpleNamespace(root=root, proc=snakemake("--cores", "2", *CONFIG, *UNTIMED, cwd=root, check=False))


def test_default_workflow_and_check(tmp_path, project):
    root, proc = project.root, project.proc
    log = (root / "logs" / "default" / "check.log")
    assert proc.returncode == 0, (log.read_text() if log.exists() else "") + proc.stderr[-4000:]
    res = root / "results" / "default"
    assert "0 differ" in (res / "check.txt").read_text()
    html = (res / "report.html").read_text()
    assert "Claims ledger" in html and "data:image/png;base64," in html and "http" not in html.split("<body>")[1][:200]
    assert "Nothing to be done" in snakemake("-n", *CONFIG, cwd=root).stdout
    snakemake("--report", str(tmp_path / "report.zip"), *CONFIG, cwd=root)
    assert (tmp_path / "report.zip").stat().st_size > 100_000


def test_outputs_exist_and_are_consistent(project):
    res = project.root / "results" / "default"
    ok = json.loads((res / "inputs_ok.json").read_text())
    assert ok["utterances"] == 2 * (210 + 45 + 30 + 15 + 50)  # 50 mismatch_hard pairs beside the main set
    assert ok["by_gold_outcome"]["ask"] == 40
    for f in ("data_card.md", "tables/composition.csv", "tables/jaccard.csv", "data/utterances.meta.json",
              "tables/selection.md", "tables/rerank.md", "tables/cost.md", "tables/quant_retention.md"):
        assert (res / f).stat().st_size > 0
    sel = pd.read_csv(res / "tables/selection.csv")
    assert set(sel["ranker"]) == {"bm25", "e5", "usem3", "rrf", "convex"}
    assert set(sel["slice"]) == {"match", "mismatch", "mismatch_hard", "all"} and set(sel["lang"]) == {"ko", "en", "all"}
    assert (sel[(sel["slice"] == "all") & (sel["lang"] == "all")]["n"] == 420).all()  # the main set only
    cross = pd.read_csv(res / "tables/crossover.csv")
    assert cross.loc[cross["encoder"] == "e5", "rrf_within_spread"].notna().all()
    auc = pd.read_csv(res / "tables/gate_auc.csv")
    assert list(auc["signal"]) == list(registry("bm25", ["e5", "usem3"]))  # the paper's signals, then v2's
    assert auc.set_index("signal")[["auc_overall", "auc_mismatch_hard"]].notna().all().all()
    assert {"auc_mismatch_hard", "auc_mismatch_length_matched"} <= set(auc.columns)
    comp = pd.read_csv(res / "tables/gate_comparison.csv")
    assert set(comp["slice"]) == {"overall", "match", "mismatch", "mismatch_hard", "mismatch_length_matched"}
    cov = comp.query("cluster_unit == 'utterance' and slice == 'overall' and measure == 'best_coverage'")
    ops = pd.read_csv(res / "tables/operating_points.csv").set_index("gate")["best_coverage"]
    for g in ("g3", "e5_maxcos", "usem3_maxcos"):  # the comparison's coverage is operating_points' own
        assert abs(cov.set_index("gate").loc[g, "value"] - ops[g]) < 1e-4
    transfer = pd.read_csv(res / "tables/gate_transfer.csv")
    own = transfer[transfer["set"] == "default"].set_index("gate")
    assert own.loc["g3_enc", "mode"] == "within" and {"transfer"} <= set(transfer["mode"])  # external sets present
    assert abs(own.loc["g3", "auc"] - auc.set_index("signal").loc["g3", "auc_overall"]) < 1e-4
    overlap = pd.read_csv(res / "tables/gate_by_overlap.csv")
    assert {"auc", "auc difference", "top1"} == set(overlap["measure"]) and overlap["n_in"].sum() > 0
    sub = pd.read_csv(res / "tables/gate_by_subtype.csv").query("cluster_unit == 'utterance' and measure == 'auc'")
    assert list(dict.fromkeys(sub["out_subtype"])) == ["external_service", "multistep", "chat"]
    mm = sub[sub["in_slice"] == "mismatch"]  # AUC over all out items = the subtypes' AUCs weighted by their counts
    pooled = (mm["value"] * mm["n_out"]).groupby(mm["name"]).sum() / mm.groupby("name")["n_out"].sum()
    assert (pooled - auc.set_index("signal")["auc_mismatch"]).abs().max() < 1e-3
    cells = pd.read_csv(res / "tables/gate_overlap_map.csv").drop_duplicates(["in_bin", "out_bin"])
    assert cells.drop_duplicates("in_bin")["n_in"].sum() == 2 * (210 + 50)  # every in-catalog item, mismatch_hard too
    assert cells.drop_duplicates("out_bin")["n_out"].sum() == 2 * 90
    checks = json.loads((res / "data_check.json").read_text())
    assert checks["enabled"] and checks["checks"] and all(c["ok"] for c in checks["checks"])
    boot = pd.read_csv(res / "tables/bootstrap.csv")
    assert len(boot) == 12 and set(boot["cluster_unit"]) == {"utterance", "pair"}
    for fig in ("fig2_operating_points", "fig3_reliability", "fig_gate_by_overlap", "fig_gate_overlap_map",
                "fig_gate_transfer"):
        for ext in ("png", "pdf"):
            assert (project.root / "figures" / "default" / f"{fig}.{ext}").stat().st_size > 10_000
    pipes, base = pd.read_csv(res / "tables/pipelines.csv"), pd.read_csv(res / "tables/routing_baselines.csv")
    ladder = base.set_index("metric").loc["accuracy", "single_pool_ladder"]
    assert (pipes["ladder_accuracy"] - ladder).abs().max() < 1e-4  # the guard's ladder is routing_baselines' own
    assert ((pipes["accuracy"] - pipes["ladder_accuracy"] - pipes["accuracy_minus_ladder"]).abs() < 2e-4).all()
    assert (pipes["ci_low"] <= pipes["accuracy_minus_ladder"] + 1e-4).all()
    assert (pipes["accuracy_minus_ladder"] <= pipes["ci_high"] + 1e-4).all()
    cost = pd.read_csv(res / "tables/cost.csv")
    assert set(cost["implementation"]) == {"toolgate", "rank_bm25", "bm25s"}
    assert {"rrf", "convex"} <= set(cost["ranker"])
    assert (project.root / "logs" / "default" / "generate_utterances.log").exists()


def _pipeline_embeddings(make_encoder, cfg: dict, run, texts: list[str], sample: int = 8):
    """``make_encoder`` for the routers of a test on the default experiment's requests: each model loads once, and
    the request embeddings are the pipeline's own (``query_embeddings``: the cache the scores rules filled with
    ``texts`` in one batch) once the loaded encoder has embedded ``sample`` of the texts the same. The routers then
    decide without encoding the requests again; the encoding itself runs in the router probes, the README
    examples and tests/models/test_router_encoder.py."""
    from toolgate.core.artifact import WARM_UP
    from toolgate.core.rankers import encoder_rankers, query_embeddings

    specs = {cfg["rankers"][n]["encoder"]["backend"]: cfg["rankers"][n] for n in encoder_rankers(cfg["rankers"])}
    made = {}

    class Pipeline:
        def __init__(self, enc, table):
            self.enc, self.table = enc, table

        def __getattr__(self, name):
            return getattr(self.enc, name)

        def encode_queries(self, batch):
            if list(batch) == [WARM_UP]:  # Router.load's warm-up: not a request of the pipeline
                return self.enc.encode_queries(batch)
            return np.vstack([self.table[t] for t in batch])

    def make(kwargs):
        key = json.dumps(kwargs, sort_keys=True)
        if key not in made:
            enc = make_encoder(kwargs)
            table = dict(zip(texts, query_embeddings(specs[kwargs["backend"]], texts, run)))
            probe = texts[:: len(texts) // sample][:sample]
            assert np.allclose(enc.encode_queries(probe), [table[t] for t in probe], atol=1e-6), kwargs
            made[key] = Pipeline(enc, table)
        return made[key]
    return make


def test_exported_router_decides_as_the_pipeline_does(monkeypatch, project):
    """In-sample consistency: P1's artifact and the pipeline's band give the same decision on every utterance."""
    from toolgate import Router
    from toolgate.config import load
    from toolgate.core import artifact
    from toolgate.core.calibration import platt_probability
    from toolgate.core.decisions import band_decisions
    from toolgate.core.scores import load_scores, route_step, top_actions
    from toolgate.experiment import Experiment
    from toolgate.utterances import main_set

    monkeypatch.chdir(project.root)
    res = project.root / "results" / "default"
    folder = res / "router" / "P1"
    m = json.loads((folder / "router.json").read_text())
    rows = [json.loads(line) for line in (res / "data" / "utterances.jsonl").read_text().splitlines()]
    texts = [r["text"] for r in rows]  # the batch the score matrices were made from
    cfg = load("config.yaml")
    monkeypatch.setattr(artifact, "make_encoder", _pipeline_embeddings(artifact.make_encoder, cfg,
                                                                       Experiment.from_config(cfg, "config.yaml").run,
                                                                       texts))
    got = Router.load(folder).decide_many(texts)
    main = main_set(rows)
    lexical, gate = load_scores(res / "scores" / "bm25.npz"), load_scores(res / "scores" / "e5.npz")
    prob = platt_probability(gate.for_rows(main).action_scores().max(1), m["calibrator"]["coef"],
                             m["calibrator"]["intercept"])
    kind, tool = band_decisions(prob, m["thresholds"]["confirm"], m["thresholds"]["execute"],
                                top_actions(lexical, main)[:, 0], route_step(lexical, main))
    words = {"action": "act", "ask": "ask", "chat": "chat", "delegate": "delegate"}
    by_id = {r["utterance_id"]: d for r, d in zip(rows, got)}
    decided = [by_id[r["utterance_id"]] for r in main]
    band = [d.reason == "band" for d in decided]
    assert [d.kind for d, b in zip(decided, band) if b] == [words[k] for k, b in zip(kind, band) if b]
    assert [d.tool or "" for d, b in zip(decided, band) if b] == [t for t, b in zip(tool, band) if b]
    # The evidence rules only ever make a decision more careful, and they are the exception: measured, 107 of the 600
    # decisions (42 multistep, 25 missing slots, 15 operation, 11 mood, 7 without evidence), 23 of them on the 380
    # gold-action requests (9 operation, 9 mood: router v4's reading; 17 before it).
    assert all(d.kind != "act" for d, b in zip(decided, band) if not b) and sum(band) >= 0.8 * len(main)
    actions = [b for b, r in zip(band, main) if r["gold_outcome"] == "action"]
    assert actions.count(False) <= 0.065 * len(actions)
    delegated = [d for d, r in zip(decided, main) if r["subtype"] == "multistep"]
    assert sum(d.reason == "multistep" for d in delegated) >= 0.5 * len(delegated)
    cost = (res / "tables" / "router_cost.csv").read_text().splitlines()
    assert cost[0].startswith("pipeline,") and len(cost) == 7  # P1, the ladder and the selected router, two ways each
    ladder = [line.split(",") for line in cost if line.startswith("ladder,ladder,")]
    assert len(ladder) == 2 and all(row[cost[0].split(",").index("encoders")] == "0" for row in ladder)


def test_the_evaluation_card_restates_the_selection_and_covers_every_external_set(project):
    """router_eval.csv's within row is router_selection.csv's chosen candidate; every external set has a row."""
    import pandas as pd

    tables = project.root / "results" / "default" / "tables"
    card, sel = pd.read_csv(tables / "router_eval.csv"), pd.read_csv(tables / "router_selection.csv")
    chosen = sel[sel["chosen"].astype(str) == "True"].iloc[0]
    within = card[card["mode"] == "within (out of fold)"].iloc[0]
    for col in ("accuracy", "danger_rate", "ask_rate"):
        assert within[col] == chosen[col]
    probes = card[card["mode"] == "probes"].set_index("set")
    assert set(card["set"]) - set(probes.index) == {"default", "functionchat_singlecall", "functionchat_calldecision",
                                                    "bfcl"}
    # one row per file of ../shared/probes, matching the pinned decisions of tests/expected/router_probes_selected.yaml
    import yaml
    pinned = yaml.safe_load((ROOT / "tests" / "expected" / "router_probes_selected.yaml").read_text())
    for name, decisions in pinned.items():
        row = probes.loc[f"probes:{name}"]
        assert (row["n"], row["right"]) == (len(decisions), sum(x["meets_probe"] for x in decisions))
        assert row["wrong_act"] == sum(not x["meets_probe"] and x["decision"].startswith("act ") for x in decisions)
    # router_probes.csv counts every candidate as router_loco builds it: the chosen one's rows are the card's
    probed = pd.read_csv(tables / "router_probes.csv")
    assert probed.groupby("set").size().eq(sel["candidate"].ne("nested selection").sum()).all()
    mine = probed[probed["candidate"] == chosen["candidate"]].set_index("set")
    for col in ("n", "right", "wrong", "wrong_act"):
        assert mine[col].to_dict() == probes[col].to_dict()
    rated = card[card["mode"] != "probes"]
    assert (rated["accuracy_low"] <= rated["accuracy"]).all() and (rated["accuracy"] <= rated["accuracy_high"]).all()
    m = json.loads((project.root / "results" / "default" / "router" / "selected" / "router.json").read_text())
    assert m["selection"]["evaluation"] == "tables/router_eval.csv"
    # the ablation's shipped setting (no n-grams) restates the card: within, clean and every probe file
    ab = pd.read_csv(tables / "examples_ablation.csv")
    assert set(ab["chars"]) == {"none", "1-4"} and "chars" not in m["examples"]
    shipped = ab[(ab["chars"] == "none") & (ab["ranker"] == chosen["ranker"])]
    clean = card[card["mode"].str.startswith("within (out of fold), clean")].iloc[0]
    for rows, want in (("within (out of fold)", within), ("clean", clean)):
        got = shipped[shipped["rows"] == rows].iloc[0]
        assert got["n"] == want["n"] and all(abs(got[c] - want[c]) < 1e-12 for c in ("accuracy", "ask_rate", "danger_rate"))
    assert shipped[shipped["rows"] == "probes"].set_index("set")["wrong_act"].to_dict() == probes["wrong_act"].to_dict()


GATE_KINDS = ("g3", "usem3_maxcos", "e5_maxcos", "usem3_agrees", "usem3_bm25_rr", "usem3_knn", "usem3_knn_catalog",
              "g3_enc", "rank_agreement")  # every kind: fitted on BM25, encoder, agreement, exemplar, fitted on those


def test_every_gate_kind_computes_the_study_signals_and_decides_as_its_band(tmp_path, monkeypatch, project):
    """Each gate kind exported and run on the 420 main-set requests: its raw signals are gate/signals.csv's, its
    value the payload (gates.json) on them, its decisions the band's on the same thresholds. Exemplar kNN differs
    by design (a deployed router sees every exemplar); with the exemplar index cut to each fold's training
    requests, as the study cuts it, it equals the study's too."""
    from toolgate import Router
    from toolgate.config import load
    from toolgate.core import artifact
    from toolgate.core.calibration import platt_probability
    from toolgate.core.decisions import band_decisions
    from toolgate.core.models import load_payloads, payload_scores
    from toolgate.core.scores import route_step, top_actions
    from toolgate.core.signals import signal_rows
    from toolgate.experiment import Experiment
    from toolgate.router.export import Route, export_router
    from toolgate.utterances import IN_CATALOG, main_set

    monkeypatch.chdir(project.root)
    cfg = load("config.yaml")
    exp = Experiment.from_config(cfg, "config.yaml")
    inputs, study, every = exp.input, exp.study, exp.rows
    monkeypatch.setattr(artifact, "make_encoder", _pipeline_embeddings(artifact.make_encoder, cfg, study.run,
                                                                       [r["text"] for r in every]))
    main = main_set(every)
    sig, fits = signal_rows(pd.read_csv(inputs.signals), main), load_payloads(inputs.gates)
    fold = sig["fold"].to_numpy()
    exemplar_ids = [r["utterance_id"] for r in main if r["gold_outcome"] in IN_CATALOG]  # the artifact's order
    lexical = exp.scores("bm25")
    top1, route = top_actions(lexical, main)[:, 0], route_step(lexical, main)
    words = {"action": "act", "ask": "ask", "chat": "chat", "delegate": "delegate"}
    exp.params.provenance = {"experiment": "default", "config_hash": "0" * 64, "lexical": "bm25",
                             "limits": {"max_chars": 1000, "top_k": 5}}
    for gate in GATE_KINDS:
        m, _ = export_router(exp, Route(gate, "bm25", gate, "accuracy"), tmp_path / gate)
        router = Router.load(tmp_path / gate)
        full = dict(router.gate.exemplars)
        fold_of = dict(zip(sig["utterance_id"], fold))
        for f in np.unique(fold):  # the study's exemplars: in-catalog requests of the other folds
            keep = np.array([fold_of[u] != f for u in exemplar_ids])
            router.gate.exemplars = {n: e[keep] if len(e) else e for n, e in full.items()}
            test = np.flatnonzero(fold == f)
            texts = [main[i]["text"] for i in test]
            scored = router.scores(texts)
            _, _, frame, value = scored
            study_raw = sig.iloc[test]
            raw = [c for c in frame.columns if c in study_raw and not (  # kNN only where exemplars are shipped
                study.signals[c].kind == "exemplar" and not len(full[study.signals[c].ranker]))]
            assert np.allclose(frame[raw].to_numpy(), study_raw[raw].to_numpy(), atol=1e-4), (gate, f)
            want = payload_scores(fits[gate], study_raw) if gate in fits else study_raw[gate].to_numpy()
            assert np.allclose(value, want, atol=1e-3), (gate, f)
            prob = platt_probability(want, m["calibrator"]["coef"], m["calibrator"]["intercept"])
            kind, tool = band_decisions(prob, m["thresholds"]["confirm"], m["thresholds"]["execute"], top1[test],
                                        route[test])
            got = router.decisions(texts, scored)  # decide_many's own path, without encoding the texts again
            band = [d.reason == "band" for d in got]
            assert [(d.kind, d.tool or "") for d, b in zip(got, band) if b] == \
                [(words[k], t) for k, t, b in zip(kind, tool, band) if b], (gate, f)
        assert {n: len(e) for n, e in full.items()} == {n: len(exemplar_ids) if "knn" in gate else 0 for n in full}


def test_readme_decide_examples(project):
    """Every `toolgate decide "..."` line of the README prints the decision its comment names."""
    import re
    import subprocess
    import sys

    examples = re.findall(r'^toolgate decide "([^"]+)" +# (\w+)( [a-z_]+)?', (ROOT / "README.md").read_text(), re.M)
    lines = re.findall(r'^toolgate decide "', (ROOT / "README.md").read_text(), re.M)
    assert len(examples) == len(lines) >= 5 and any(k == "delegate" for _, k, _ in examples)
    assert {_lang(t) for t, _, _ in examples} == {"ko", "en"}
    for text, kind, tool in examples:
        out = subprocess.run([sys.executable, "-m", "toolgate.cli", "decide", text], cwd=project.root, capture_output=True,
                             text=True, check=True).stdout.split()
        assert out[0] == kind and (out[1] == tool.strip() if tool else out[1].startswith("(")), (text, out[:2])


def _lang(text):
    return "ko" if any("가" <= ch <= "힣" for ch in text) else "en"


def test_decide_on_the_command_line(project):
    import subprocess
    import sys

    one = subprocess.run([sys.executable, "-m", "toolgate.cli", "decide", "내일 아침 7시에 깨워 줘"], cwd=project.root,
                         capture_output=True, text=True)
    assert one.returncode == 0 and one.stdout.split()[0] in {"act", "ask", "delegate", "chat"}
    assert "P(in catalog)" in one.stdout and " ms)" in one.stdout
    many = subprocess.run([sys.executable, "-m", "toolgate.cli", "decide", "--jsonl"], cwd=project.root, capture_output=True,
                          input='{"text": "Turn on Wi-Fi"}\n{"text": "Tell me a joke"}\nplain text line\n{"text": " "}\n'
                          .encode() + b'{"text": "\xff"}\n', env={**os.environ, "LANG": "en_US.UTF-8"})
    lines = [json.loads(x) for x in many.stdout.decode().splitlines()]
    assert many.returncode == 2 and len(lines) == 5 and [x.get("line") for x in lines] == [None, None, 3, 4, 5]
    assert lines[3]["error"].startswith("empty request") and lines[4]["error"].startswith("not UTF-8")


PROBES_HEADER = """# Decisions of the default experiment's exported router ({folder}) on ../shared/probes, pinned by
# tests/e2e/test_default_regression.py::test_router_probes. Asserted on their own: no `act` on a content-free or
# vague input nor on a missing-detail line that expects not_act (for the selected router: no wrong `act` on any of
# them), and at least {floor} of the 42 missing-detail lines meet their expectation; every decision is also a
# regression pin. When the router changes on purpose:
#   TOOLGATE_REFRESH_PROBES=1 python -m pytest tests/e2e/test_default_regression.py -k router_probes
# rewrites this file; say why in the commit. meets_probe: the decision satisfies the probe file's
# expectation (action with its tool as act or ask; no_action with its route; not_act: anything but act).
"""


# Missing-detail lines each router meets at least. The selected router (usem3 + examples since issue 53) meets 32: it
# turns bare requests such as "Set an alarm" away that the ladder before it asked about, as it asked about 57% of all
# requests; it executes none of them wrongly (asserted above), and meets 27 of the 28 realistic lines (the ladder 19).
# Since its route step is learned from the generic bank (chat or delegate), 일정 삭제해 줘 is turned away, not asked.
MISSING_DETAIL_FLOOR = {"P1": 41, "selected": 38}


@pytest.mark.parametrize("folder,pins", [("P1", "router_probes.yaml"), ("selected", "router_probes_selected.yaml")])
def test_router_probes(folder, pins, project):
    """../shared/probes through both exported routers: P1 never `act`s on content-free text; every decision pinned."""
    import yaml

    from toolgate import Router
    from toolgate.router.evaluation import probe_meets

    router = Router.load(project.root / "results" / "default" / "router" / folder)
    path = ROOT / "tests" / "expected" / pins
    now, probes = {}, {}
    for name in ("content-free", "vague", "missing-detail", "realistic"):
        probes[name] = [json.loads(x) for x in (ROOT.parent / "shared" / "probes" / f"router-{name}.jsonl").open()]
        decided = router.decide_many([p["text"] for p in probes[name]])
        now[name] = [{"text": p["text"], "decision": f"{d.kind} {d.tool}" if d.tool else d.kind, "reason": d.reason,
                      "meets_probe": probe_meets(p, d)} for p, d in zip(probes[name], decided)]
    for name in ("content-free", "vague"):
        assert not [x["text"] for x in now[name] if x["decision"].startswith("act")], name
    detail = list(zip(probes["missing-detail"], now["missing-detail"]))
    assert all(x["meets_probe"] for p, x in detail if p["expect"] == "not_act")
    if folder == "selected":  # P1, the paper's pipeline, acts on one (issue 55: 미리 알림 설정해 줘 -> list_reminders)
        assert not [x for _, x in detail if not x["meets_probe"] and x["decision"].startswith("act")]
    assert sum(x["meets_probe"] for _, x in detail) >= MISSING_DETAIL_FLOOR[folder], [x for _, x in detail
                                                                                    if not x["meets_probe"]]
    for text in ("Order me an Uber to the airport", "Factory reset", "Delete everything", "Wipe my phone"):
        assert router.decide(text).kind != "act", text  # issue 36's repros
    if os.environ.get("TOOLGATE_REFRESH_PROBES"):
        path.write_text(PROBES_HEADER.format(folder=folder, floor=MISSING_DETAIL_FLOOR[folder])
                        + yaml.safe_dump(now, allow_unicode=True, sort_keys=False, width=200))
    pinned = yaml.safe_load(path.read_text())
    diffs = [f"{x['text']!r}: pinned {y['decision']} ({y['reason']}), now {x['decision']} ({x['reason']})"
             for name in now for x, y in zip(now[name], pinned[name]) if x != y]
    assert [x["text"] for n in now for x in now[n]] == [y["text"] for n in pinned for y in pinned[n]]
    assert not diffs, "router decisions changed (see the file's header to refresh):\n" + "\n".join(diffs)


# The blind sets of tests/blind (written blind from the catalog, never fitted on) through both routers: at most this
# many executions of a must-not-act request (router-must-not-act and router-talk), this few right executions of a
# should-act one, and no execution of a wrong tool there. Measured when router v4's reading was made (docs/router.md,
# "Reading a request"): a change that lets more through fails here.
BLIND_CEILING = {"P1": {"not_act_acts": 7, "right_acts": 110, "wrong_tool_acts": 1},
                 "selected": {"not_act_acts": 15, "right_acts": 178, "wrong_tool_acts": 0}}


@pytest.mark.parametrize("folder", ["P1", "selected"])
def test_blind_sets(folder, project):
    from toolgate import Router

    router = Router.load(project.root / "results" / "default" / "router" / folder)
    read = lambda name: [json.loads(x) for x in (ROOT / "tests" / "blind" / f"router-{name}.jsonl").open()]  # noqa: E731
    talk = read("must-not-act") + read("talk")
    acts = [p["text"] for p, d in zip(talk, router.decide_many([p["text"] for p in talk])) if d.kind == "act"]
    should = read("should-act")
    decided = router.decide_many([p["text"] for p in should])
    right = sum(d.kind == "act" and d.tool == p["tool"] for p, d in zip(should, decided))
    wrong = [(p["text"], d.tool) for p, d in zip(should, decided) if d.kind == "act" and d.tool != p["tool"]]
    pins = BLIND_CEILING[folder]
    assert len(acts) <= pins["not_act_acts"], acts
    assert right >= pins["right_acts"] and len(wrong) <= pins["wrong_tool_acts"], (right, wrong)


CHECK_SCRIPT = """<script>window.addEventListener('load', () => {
  const imgs = [...document.images], m = document.getElementById('claims-matrix');
  const r = m ? m.getBoundingClientRect() : null;
  document.body.dataset.check = JSON.stringify({images: imgs.length,
    loaded: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
    matrix: !!(r && r.width > 0 && r.height > 0), links: document.querySelectorAll('nav a').length});
});</script>"""


def test_report_renders_in_chromium(tmp_path, project):
    """report.html in headless Chromium: every figure decodes and the claims matrix is on the page."""
    import re
    import shutil
    import subprocess

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("headless Chromium is not installed (Debian package chromium)")
    page = tmp_path / "report.html"
    page.write_text((project.root / "results" / "default" / "report.html").read_text().replace("</body>", CHECK_SCRIPT + "</body>"))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
             "--disable-background-networking", "--disable-component-update", f"--user-data-dir={tmp_path / 'profile'}",
             "--virtual-time-budget=10000"]
    dom = subprocess.run([browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'data-check="([^"]+)"', dom.stdout)
    assert found, dom.stderr[-2000:]
    check = json.loads(found.group(1).replace("&quot;", '"'))
    assert check["images"] >= 5 and check["loaded"] == check["images"] and check["matrix"] and check["links"] >= 5, check


def test_the_selection_scores_what_the_selected_router_decides(project, monkeypatch):
    """router_selection.csv's figures are the shipped router's (issue 53): the selected router, run by the runtime
    on the main set, decides as its candidate does in the selection at the thresholds an export fits on every
    request, evidence rules included. Only the near-tie rule, whose margin the export fits, may ask where the
    selection executes."""
    from toolgate import Router
    from toolgate.config import load
    from toolgate.core import artifact
    from toolgate.experiment import Experiment
    from toolgate.router.select import EXAMPLES, Candidate, outcomes
    from toolgate.routing.baselines import Gold

    monkeypatch.chdir(project.root)
    cfg = load("config.yaml")
    exp = Experiment.from_config(cfg, "config.yaml")
    monkeypatch.setattr(artifact, "make_encoder", _pipeline_embeddings(artifact.make_encoder, cfg, exp.run,
                                                                       [r["text"] for r in exp.rows]))
    router = Router.load(project.root / "results" / "default" / "router" / "selected")
    p = router.manifest["pipeline"]
    o = outcomes(exp, Candidate(p["ranker"], EXAMPLES if p["kind"] == "examples" else p["gate"], (), 0.0),
                 Gold(exp.main, exp.catalog))
    kind, tool = o.pair(o.pick(np.ones(len(exp.main), bool)))
    words = {"action": "act", "ask": "ask", "chat": "chat", "delegate": "delegate"}
    got = router.decide_many([r["text"] for r in exp.main])
    differ = [(r["text"], words[k], t, d.kind, d.tool, d.reason) for r, k, t, d in zip(exp.main, kind, tool, got)
              if (words[k], t or None) != (d.kind, d.tool)]
    assert all(x[1] == "act" and x[3:] == ("ask", x[2], "tie") for x in differ), differ[:5]
    assert len(differ) <= 0.01 * len(exp.main)  # router.tie_cost
