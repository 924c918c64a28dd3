# Stage 6: the report (paper vs reproduced, claims ledger, figures) and the headline regression check.

from toolgate.report.sets import compared_inputs

PAPER_CONFIG = "config/paper.yaml"  # the paper's models: the report names it as what removes each encoder stand-in


rule report:
    input:
        tables=[table(t) for t in core_tables() + optional_tables()],
        figures=[f"{FIG}/{f}.png" for f in all_figures()],
        reported=config["report"]["reported"],
        catalog=config["catalog"],
        utterances=utterances_path(),
        # each report.compare experiment's config and its tables that exist now (toolgate.report.sets.compared_inputs)
        compared=compared_inputs(config["report"]["compare"]),
        # the selected router's manifest (why, passed over) and its tables
        router=[PATHS.selected, PATHS.router_selection, PATHS.router_eval, PATHS.router_probes, PATHS.examples_ablation]
        if config["router"]["enabled"] else [],
        paper=[PAPER_CONFIG] if Path(PAPER_CONFIG).exists() else [],
    output:
        md=PATHS.report_md,
        html=report(PATHS.report_html, caption="../report/report.rst", category="Report"),
    params:
        experiment=EXP,
        tables=lambda w, input: Path(input.tables[0]).parent,
        figures=lambda w, input: Path(input.figures[0]).parent,
        config=config,
    benchmark:
        f"benchmarks/{EXP}/report.tsv"
    log:
        f"{LOGS}/report.log",
    conda:
        ENV
    script:
        "../scripts/report.py"


rule check:
    input:
        tables=checked_tables(),
        expected=config["report"]["expected"] or "tests/expected/default.yaml",
    output:
        report=PATHS.check,
    params:
        tables=lambda w, input: Path(input.tables[0]).parent,
        roles=config["roles"],
    benchmark:
        f"benchmarks/{EXP}/check.tsv"
    log:
        f"{LOGS}/check.log",
    conda:
        ENV
    script:
        "../scripts/check.py"
