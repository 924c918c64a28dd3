# Helpers and target lists shared by every stage.
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))
from toolgate.config import check_inputs, rebase, resolve, study_on
from toolgate.core.errors import InputError
from toolgate.core.io import read_yaml
from toolgate.experiment import Layout, provenance
from toolgate.config import utterances_path as config_utterances
from toolgate.core.artifact import FILES, MANIFEST
from toolgate.core.rankers import RankerSpec, encoder_rankers, per_text_rankers
from toolgate.report.check import load_expected
from toolgate.core.signals import registry, studied_gates
from toolgate.router import SELECTED
from toolgate.router.select import latency_table

# Validate the config against workflow/toolgate/core/schemas/config.schema.yaml and fill its
# defaults, then against its template banks, catalog and utterances where they exist
# (utterances.templates, ablation.ks, gate.folds); an invalid value stops the workflow naming its file and key.
# A config with `relative_to: config` names its files relative to itself (toolgate.config.rebase).
CONFIG_SOURCE = " + ".join(map(str, workflow.configfiles)) or "config"
try:
    for path in workflow.configfiles:  # Snakemake's reading keeps the last of a key given twice: ours refuses it
        read_yaml(path)
    config.update(resolve(rebase(config, workflow.configfiles), CONFIG_SOURCE))
    check_inputs(config, CONFIG_SOURCE)
except InputError as exc:  # the error alone, as the command line gives it: no traceback through this file
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(2)

EXP = config["experiment"]
LAYOUT = Layout(EXP)  # where the experiment's files live: the stages' and commands' own (toolgate.experiment)
RES, FIG, LOGS = str(LAYOUT.res), str(LAYOUT.fig), str(LAYOUT.logs)
ENV = "../../envs/toolgate.yaml"
# What every stage needs (toolgate.config.Run): rules pass it as `run=RUN`.
RUN = {"seed": config["seed"], "langs": config["langs"], "text": config["text"], "cache": str(LAYOUT.cache)}


def table(name):
    """A table's CSV (toolgate.experiment.Layout.table)."""
    return str(LAYOUT.table(name))


def router_files(pipeline):
    """Every file of a router artifact (toolgate.core.artifact.FILES), the manifest, which other rules read, first."""
    return [str(LAYOUT.router(pipeline) / f) for f in sorted(FILES, key=lambda f: f != MANIFEST)]


# Each file that two or more rules or the targets name, written once (scores, gate files, tables and routers from
# toolgate.experiment.Layout, which the commands read too). "{ranker}", "{shard}", "{checkpoint}", "{pipeline}":
# the producing rule's wildcards, filled by expand() where others list them.
PATHS = SimpleNamespace(
    utterances_meta=f"{RES}/data/utterances.meta.json",
    imported_catalog=f"{RES}/data/catalog.jsonl",  # an importing source's catalog (utterances.source)
    inputs_ok=f"{RES}/inputs_ok.json",
    data_check=f"{RES}/data_check.json",
    data_card=f"{RES}/data_card.md",
    scores=str(LAYOUT.scores("{ranker}")),
    lexical_scores=str(LAYOUT.scores(config["roles"]["lexical"])),
    signals=str(LAYOUT.signals),
    gates=str(LAYOUT.gates),
    embedded=f"{RES}/external/embedded-{{shard}}.json",
    external_signals=f"{RES}/external/gate_signals.csv",
    native_records=f"{RES}/native/{{checkpoint}}.records.csv",
    native_deployment=f"{RES}/native/{{checkpoint}}.deployment.json",
    router=router_files("{pipeline}")[0],
    selected=router_files(SELECTED)[0],
    report_md=f"{RES}/report.md",
    report_html=f"{RES}/report.html",
    check=f"{RES}/check.txt",
    # the tables named beyond their own rule and the table lists (TABLES, optional_tables)
    **{t: table(t) for t in ("reliability", "operating_points", "operating_sweep", "gate_by_overlap",
                             "gate_overlap_map", "gate_transfer", "gate_loco", "candidate_ablation", "scaling",
                             "tokenizer_ablation", "external_gate", "jaccard_items", "router_loco", "router_selection",
                             "router_eval", "router_probes", "router_cost", "example_leakage",
                             "examples_ablation", "mood", "kiwi_agreement")},
)


def utterances_path():
    """The experiment's utterances: generated, or the file the config names (toolgate.config.utterances_path)."""
    return config_utterances(config)


def annotation_files():
    folder = config["utterances"]["annotations"]
    return sorted(str(p) for p in Path(folder).glob("*.csv")) if folder else []


def template_files():
    folder = Path(config["utterances"]["templates"])
    return sorted(str(p) for p in folder.glob("*.yaml"))


def rerankers():
    """Every ranker except the lexical one reranks the lexical shortlist."""
    return [r for r in config["rankers"] if r != config["roles"]["lexical"]]


def member_scores(wildcards):
    """A hybrid ranker's inputs: its members' score matrices (none for other rankers)."""
    return expand(PATHS.scores, ranker=RankerSpec.of(config["rankers"][wildcards.ranker]).members)


# The gate signals' registry (toolgate.core.signals): rules pass it as `signals=SIGNALS`.
SIGNALS = {"lexical": config["roles"]["lexical"], "encoders": encoder_rankers(config["rankers"])}


def gate_signals():
    """Gates studied for calibration and operating points."""
    return studied_gates(registry(**SIGNALS))


TABLES = ["composition", "jaccard", "selection", "rerank", "cost", "gate_auc", "bootstrap",
          "calibration", "operating_points", "routing_baselines", "pipelines", "pipeline_cost", "signal_diversity",
          "candidate_ablation", "crossover", "gate_by_overlap", "gate_overlap_map", "gate_by_subtype",
          "annotation_agreement", "gate_comparison", "gate_transfer", "gate_loco"]
TIMED_TABLES = ["cost", "pipeline_cost"]  # the timing rules' tables (config: timing; router_cost's: router_targets)


def core_tables():
    """TABLES, less the timing rules' where `timing` is off."""
    return [t for t in TABLES if config["timing"] or t not in TIMED_TABLES]


FIGURES = ["fig2_operating_points", "fig3_reliability", "fig_candidate_ablation", "fig_gate_by_overlap",
           "fig_gate_overlap_map", "fig_gate_transfer", "fig_gate_loco"]




def optional_tables():
    """Tables of the stages a config can switch off."""
    out = []
    if config["quantization"]["enabled"]:
        out += ["quant_retention"]
    if config["external"]["enabled"]:
        out += ["external_selection", "external_gate", "external_bootstrap", "jaccard_external"]
    if config["native"]["enabled"]:
        out += ["native_deployment", "native_calls"]
    if config["tournament"]["enabled"]:
        out += ["tournament"]
    if study_on(config, "scaling"):
        out += ["scaling"]
    if study_on(config, "tokenizer_ablation"):
        out += ["tokenizer_ablation"]
    return out


def router_targets():
    if not config["router"]["enabled"]:
        return []
    return (expand(PATHS.router, pipeline=[*config["router"]["pipelines"], SELECTED])
            + ([PATHS.router_cost] if config["timing"] else [])
            + [PATHS.router_selection, PATHS.router_eval, PATHS.router_loco, PATHS.router_probes,
               PATHS.examples_ablation, PATHS.mood, PATHS.kiwi_agreement])


def all_figures():
    optional = {"fig4_jaccard": config["external"]["enabled"], "fig_scaling": study_on(config, "scaling"),
                "fig_tokenizer_ablation": study_on(config, "tokenizer_ablation")}
    return FIGURES + [f for f, on in optional.items() if on]


def all_targets():
    targets = [PATHS.inputs_ok, PATHS.data_check, PATHS.data_card, PATHS.report_md, PATHS.report_html]
    targets += [table(t) for t in core_tables() + optional_tables()]
    targets += [f"{FIG}/{f}.{ext}" for f in all_figures() for ext in ("png", "pdf")]
    targets += router_targets()
    if checks_this_experiment():
        targets.append(PATHS.check)
    return targets


def checked_tables():
    """The core tables and every table the expected-values file names (the check reads them all)."""
    path = config["report"]["expected"]
    named = [e["table"] for e in load_expected(path)["entries"]] if path else []
    return [table(t) for t in dict.fromkeys(core_tables() + named)]


def checks_this_experiment():
    """The expected-values file applies only to the experiment it names."""
    path = config["report"]["expected"]
    return bool(path) and load_expected(path)["experiment"] == EXP


ROUTER_PARAMS = {  # what every export reads (typed in the script: toolgate.experiment.Experiment.from_snakemake)
    "rankers": config["rankers"],
    "run": RUN,
    "gate": config["gate"],
    "routing": config["routing"],
    "signals": SIGNALS,
    "router": config["router"],
    "provenance": provenance(config),
}


def probe_files():
    """The probe files router_eval and router_loco read (router.probes, then the blind sets of router.blind), so a
    changed probe reruns them; none where a folder is absent."""
    folders = [Path(config["router"][key]) for key in ("probes", "blind") if config["router"][key]]
    return [str(f) for folder in folders if folder.is_dir() for f in sorted(folder.glob("router-*.jsonl"))]


EMBED_SHARDS = 2  # embed_external's jobs side by side: the e5 embedding of every text is the longest path's head


def embedded():
    """embed_external's outputs: the held-out sets' texts and the experiment's own in the per-text cache
    (toolgate.router.embedded)."""
    return expand(PATHS.embedded, shard=range(EMBED_SHARDS))


def embedded_first():
    """embed_external's outputs where the external study runs (a stage that waits for them encodes nothing), else
    none (each stage encodes its own texts)."""
    return embedded() if config["external"]["enabled"] else []


def embedded_scores(wildcards):
    """embed_external's outputs for the scores of a ranker whose encoder is cached per text; none for the others."""
    return embedded_first() if per_text_rankers({wildcards.ranker: config["rankers"][wildcards.ranker]}) else []


def held_out_table():
    """router_loco.csv, the held-out catalogs router.select ranks by, where the external study runs (else none)."""
    return [PATHS.router_loco] if config["external"]["enabled"] else []


def router_inputs(wildcards):
    """The inputs of every export (the selection's latencies are declared, never the cost benchmark's timings)."""
    return {"catalog": config["catalog"], "utterances": utterances_path(), "signals": PATHS.signals,
            "gates": PATHS.gates, "scores": expand(PATHS.scores, ranker=list(config["rankers"]))}
