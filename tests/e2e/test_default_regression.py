"""The complete default workflow in the checkout, then the headline regression check.

This is what `make reproduce` runs; a rerun after it has nothing to do. The
`check` rule is part of the default target (config.yaml sets report.expected),
so a drift in any headline number fails this test with the check's diff.
"""
import json

import pytest

from conftest import ROOT
from smk import snakemake

pytestmark = pytest.mark.slow


def test_default_workflow_and_check(tmp_path):
    proc = snakemake("--cores", "2", cwd=ROOT, check=False)
    log = (ROOT / "logs" / "default" / "check.log")
    assert proc.returncode == 0, (log.read_text() if log.exists() else "") + proc.stderr[-4000:]
    res = ROOT / "results" / "default"
    assert "0 differ" in (res / "check.txt").read_text()
    html = (res / "report.html").read_text()
    assert "Claims ledger" in html and "data:image/png;base64," in html and "http" not in html.split("<body>")[1][:200]
    assert "Nothing to be done" in snakemake("-n", cwd=ROOT).stdout
    snakemake("--report", str(tmp_path / "report.zip"), cwd=ROOT)
    assert (tmp_path / "report.zip").stat().st_size > 100_000


def test_exported_router_decides_as_the_pipeline_does():
    """In-sample consistency: P1's artifact and the pipeline's band give the same decision on every utterance."""
    from toolgate import Router, io
    from toolgate.calibration import platt_probability
    from toolgate.pipelines import band_decisions
    from toolgate.scores import load_scores, route_step, top_actions

    res = ROOT / "results" / "default"
    folder = res / "router" / "P1"
    m = json.loads((folder / "router.json").read_text())
    rows = [json.loads(line) for line in (res / "data" / "utterances.jsonl").read_text().splitlines()]
    got = Router.load(folder).decide_many([r["text"] for r in rows])  # the batch the score matrices were made from
    main = io.main_set(rows)
    lexical, gate = load_scores(res / "scores" / "bm25.npz"), load_scores(res / "scores" / "e5.npz")
    prob = platt_probability(gate.for_rows(main).action_scores().max(1), m["calibrator"]["coef"],
                             m["calibrator"]["intercept"])
    kind, tool = band_decisions(prob, m["thresholds"]["confirm"], m["thresholds"]["execute"],
                                top_actions(lexical, main)[:, 0], route_step(lexical, main))
    words = {"action": "act", "ask": "ask", "chat": "chat", "delegate": "delegate"}
    by_id = {r["utterance_id"]: d for r, d in zip(rows, got)}
    decided = [by_id[r["utterance_id"]] for r in main]
    assert [d.kind for d in decided] == [words[k] for k in kind]
    assert [d.tool or "" for d in decided] == list(tool)
    cost = (res / "tables" / "router_cost.csv").read_text().splitlines()
    assert cost[0].startswith("pipeline,") and len(cost) == 3  # P1 with default and single-thread encoders


def test_decide_on_the_command_line():
    import subprocess
    import sys

    one = subprocess.run([sys.executable, "-m", "toolgate.cli", "decide", "내일 아침 7시에 깨워 줘"], cwd=ROOT,
                         capture_output=True, text=True)
    assert one.returncode == 0 and one.stdout.split()[0] in {"act", "ask", "delegate", "chat"}
    assert "P(in catalog)" in one.stdout and " ms)" in one.stdout
    many = subprocess.run([sys.executable, "-m", "toolgate.cli", "decide", "--jsonl"], cwd=ROOT, capture_output=True,
                          text=True, input='{"text": "Turn on Wi-Fi"}\n"Tell me a joke"\nplain text line\n\n')
    lines = many.stdout.splitlines()
    assert many.returncode == 2 and len(lines) == 4 and json.loads(lines[3])["error"].startswith("empty request")
