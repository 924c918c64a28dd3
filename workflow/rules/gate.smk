# Stage 3: the abstention gate study (paper Sections 4-5, Table 4, Figures 2-3).


rule gate_auc:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        scores=expand(PATHS.scores, ranker=[config["roles"]["lexical"]] + encoder_rankers(config["rankers"])),
    output:
        table=f"{RES}/tables/gate_auc.csv",
        md=f"{RES}/tables/gate_auc.md",
        signals=PATHS.signals,
        payload=f"{RES}/gate/g3.json",
        gates=PATHS.gates,
    params:
        rankers=[config["roles"]["lexical"]] + encoder_rankers(config["rankers"]),
        specs={r: config["rankers"][r] for r in encoder_rankers(config["rankers"])},
        roles=config["roles"],
        gate=config["gate"],
        run=RUN,
    priority: 10  # its gates.json starts the longest path (external study, router_loco, the selected router)
    benchmark:
        f"benchmarks/{EXP}/gate_auc.tsv"
    log:
        f"{LOGS}/gate_auc.log",
    conda:
        ENV
    script:
        "../scripts/gate_auc.py"


rule bootstrap:
    input:
        signals=PATHS.signals,
    output:
        table=f"{RES}/tables/bootstrap.csv",
        md=f"{RES}/tables/bootstrap.md",
    params:
        roles=config["roles"],
        gate=config["gate"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/bootstrap.tsv"
    log:
        f"{LOGS}/bootstrap.log",
    conda:
        ENV
    script:
        "../scripts/bootstrap.py"


rule calibration:
    input:
        signals=PATHS.signals,
    output:
        table=f"{RES}/tables/calibration.csv",
        md=f"{RES}/tables/calibration.md",
        curves=PATHS.reliability,
    params:
        signals=SIGNALS,
        gate=config["gate"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/calibration.tsv"
    log:
        f"{LOGS}/calibration.log",
    conda:
        ENV
    script:
        "../scripts/calibration.py"


rule operating_points:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        lexical=PATHS.lexical_scores,
        signals=PATHS.signals,
    output:
        table=PATHS.operating_points,
        md=f"{RES}/tables/operating_points.md",
        curves=PATHS.operating_sweep,
    params:
        signals=SIGNALS,
        gate=config["gate"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/operating_points.tsv"
    log:
        f"{LOGS}/operating_points.log",
    conda:
        ENV
    script:
        "../scripts/operating_points.py"


rule fig_operating_points:
    input:
        curves=PATHS.operating_sweep,
        points=PATHS.operating_points,
    output:
        png=report(f"{FIG}/fig2_operating_points.png", caption="../report/fig2.rst", category="Figures"),
        pdf=f"{FIG}/fig2_operating_points.pdf",
    params:
        signals=SIGNALS,
    benchmark:
        f"benchmarks/{EXP}/fig_operating_points.tsv"
    log:
        f"{LOGS}/fig_operating_points.log",
    conda:
        ENV
    script:
        "../scripts/fig_operating_points.py"


rule fig_reliability:
    input:
        table=PATHS.reliability,
    output:
        png=report(f"{FIG}/fig3_reliability.png", caption="../report/fig3.rst", category="Figures"),
        pdf=f"{FIG}/fig3_reliability.pdf",
    params:
        signals=SIGNALS,
    benchmark:
        f"benchmarks/{EXP}/fig_reliability.tsv"
    log:
        f"{LOGS}/fig_reliability.log",
    conda:
        ENV
    script:
        "../scripts/fig_reliability.py"


rule gate_by_overlap:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        signals=PATHS.signals,
        scores=expand(PATHS.scores, ranker=list(config["rankers"])),
    output:
        table=PATHS.gate_by_overlap,
        md=f"{RES}/tables/gate_by_overlap.md",
    params:
        rankers=list(config["rankers"]),
        signals=SIGNALS,
        gate=config["gate"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/gate_by_overlap.tsv"
    log:
        f"{LOGS}/gate_by_overlap.log",
    conda:
        ENV
    script:
        "../scripts/gate_by_overlap.py"


rule fig_gate_by_overlap:
    input:
        table=PATHS.gate_by_overlap,
    output:
        png=report(f"{FIG}/fig_gate_by_overlap.png", caption="../report/fig_overlap.rst", category="Figures"),
        pdf=f"{FIG}/fig_gate_by_overlap.pdf",
    params:
        signals=SIGNALS,
    benchmark:
        f"benchmarks/{EXP}/fig_gate_by_overlap.tsv"
    log:
        f"{LOGS}/fig_gate_by_overlap.log",
    conda:
        ENV
    script:
        "../scripts/fig_gate_by_overlap.py"


rule gate_overlap_map:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        signals=PATHS.signals,
    output:
        table=PATHS.gate_overlap_map,
        md=f"{RES}/tables/gate_overlap_map.md",
    params:
        signals=SIGNALS,
        gate=config["gate"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/gate_overlap_map.tsv"
    log:
        f"{LOGS}/gate_overlap_map.log",
    conda:
        ENV
    script:
        "../scripts/gate_overlap_map.py"


rule fig_gate_overlap_map:
    input:
        table=PATHS.gate_overlap_map,
    output:
        png=report(f"{FIG}/fig_gate_overlap_map.png", caption="../report/fig_overlap_map.rst", category="Figures"),
        pdf=f"{FIG}/fig_gate_overlap_map.pdf",
    params:
        signals=SIGNALS,
    benchmark:
        f"benchmarks/{EXP}/fig_gate_overlap_map.tsv"
    log:
        f"{LOGS}/fig_gate_overlap_map.log",
    conda:
        ENV
    script:
        "../scripts/fig_gate_overlap_map.py"


rule gate_by_subtype:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        signals=PATHS.signals,
    output:
        table=f"{RES}/tables/gate_by_subtype.csv",
        md=f"{RES}/tables/gate_by_subtype.md",
    params:
        signals=SIGNALS,
        gate=config["gate"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/gate_by_subtype.tsv"
    log:
        f"{LOGS}/gate_by_subtype.log",
    conda:
        ENV
    script:
        "../scripts/gate_by_subtype.py"


rule gate_comparison:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        lexical=PATHS.lexical_scores,
        signals=PATHS.signals,
    output:
        table=f"{RES}/tables/gate_comparison.csv",
        md=f"{RES}/tables/gate_comparison.md",
    params:
        signals=SIGNALS,
        gate=config["gate"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/gate_comparison.tsv"
    log:
        f"{LOGS}/gate_comparison.log",
    conda:
        ENV
    script:
        "../scripts/gate_comparison.py"


rule gate_transfer:
    input:
        signals=PATHS.signals,
        external=[PATHS.external_gate] if config["external"]["enabled"] else [],
    output:
        table=PATHS.gate_transfer,
        md=f"{RES}/tables/gate_transfer.md",
    params:
        signals=SIGNALS,
        experiment=EXP,
        gate=config["gate"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/gate_transfer.tsv"
    log:
        f"{LOGS}/gate_transfer.log",
    conda:
        ENV
    script:
        "../scripts/gate_transfer.py"


rule gate_loco:
    # leave one catalog out: every gate fitted on one set, applied unchanged to each other (toolgate.gate.loco)
    input:
        signals=PATHS.signals,
        catalog=config["catalog"],
        external=[PATHS.external_signals] if config["external"]["enabled"] else [],
    output:
        table=PATHS.gate_loco,
        md=f"{RES}/tables/gate_loco.md",
    params:
        signals=SIGNALS,
        own={"name": EXP, "lexical": config["rankers"][config["roles"]["lexical"]]},
        gate=config["gate"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/gate_loco.tsv"
    log:
        f"{LOGS}/gate_loco.log",
    conda:
        ENV
    script:
        "../scripts/gate_loco.py"


rule fig_gate_loco:
    input:
        table=PATHS.gate_loco,
    output:
        png=report(f"{FIG}/fig_gate_loco.png", caption="../report/fig_gate_loco.rst", category="Figures"),
        pdf=f"{FIG}/fig_gate_loco.pdf",
    params:
        signals=SIGNALS,
        own=EXP,
    benchmark:
        f"benchmarks/{EXP}/fig_gate_loco.tsv"
    log:
        f"{LOGS}/fig_gate_loco.log",
    conda:
        ENV
    script:
        "../scripts/fig_gate_loco.py"


rule fig_gate_transfer:
    input:
        table=PATHS.gate_transfer,
    output:
        png=report(f"{FIG}/fig_gate_transfer.png", caption="../report/fig_transfer.rst", category="Figures"),
        pdf=f"{FIG}/fig_gate_transfer.pdf",
    params:
        signals=SIGNALS,
        own=EXP,
    benchmark:
        f"benchmarks/{EXP}/fig_gate_transfer.tsv"
    log:
        f"{LOGS}/fig_gate_transfer.log",
    conda:
        ENV
    script:
        "../scripts/fig_gate_transfer.py"
