# Stage 3: the abstention gate study (paper Sections 4-5, Table 4, Figures 2-3).


rule gate_auc:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        scores=expand(f"{RES}/scores/{{ranker}}.npz", ranker=[config["roles"]["lexical"]] + encoder_rankers(config["rankers"])),
    output:
        table=f"{RES}/tables/gate_auc.csv",
        md=f"{RES}/tables/gate_auc.md",
        signals=f"{RES}/gate/signals.csv",
        payload=f"{RES}/gate/g3.json",
        gates=f"{RES}/gate/gates.json",
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
        signals=f"{RES}/gate/signals.csv",
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
        signals=f"{RES}/gate/signals.csv",
    output:
        table=f"{RES}/tables/calibration.csv",
        md=f"{RES}/tables/calibration.md",
        curves=f"{RES}/tables/reliability.csv",
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
        lexical=f"{RES}/scores/{config['roles']['lexical']}.npz",
        signals=f"{RES}/gate/signals.csv",
    output:
        table=f"{RES}/tables/operating_points.csv",
        md=f"{RES}/tables/operating_points.md",
        curves=f"{RES}/tables/operating_sweep.csv",
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
        curves=f"{RES}/tables/operating_sweep.csv",
        points=f"{RES}/tables/operating_points.csv",
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
        table=f"{RES}/tables/reliability.csv",
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
        signals=f"{RES}/gate/signals.csv",
        scores=expand(f"{RES}/scores/{{ranker}}.npz", ranker=list(config["rankers"])),
    output:
        table=f"{RES}/tables/gate_by_overlap.csv",
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
        table=f"{RES}/tables/gate_by_overlap.csv",
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
        signals=f"{RES}/gate/signals.csv",
    output:
        table=f"{RES}/tables/gate_overlap_map.csv",
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
        table=f"{RES}/tables/gate_overlap_map.csv",
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
        signals=f"{RES}/gate/signals.csv",
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
        lexical=f"{RES}/scores/{config['roles']['lexical']}.npz",
        signals=f"{RES}/gate/signals.csv",
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
        signals=f"{RES}/gate/signals.csv",
        external=[f"{RES}/tables/external_gate.csv"] if config["external"]["enabled"] else [],
    output:
        table=f"{RES}/tables/gate_transfer.csv",
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
        signals=f"{RES}/gate/signals.csv",
        catalog=config["catalog"],
        external=[f"{RES}/external/gate_signals.csv"] if config["external"]["enabled"] else [],
    output:
        table=f"{RES}/tables/gate_loco.csv",
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
        table=f"{RES}/tables/gate_loco.csv",
    output:
        png=report(f"{FIG}/fig_gate_loco.png", caption="../report/fig_gate_loco.rst", category="Figures"),
        pdf=f"{FIG}/fig_gate_loco.pdf",
    params:
        signals=SIGNALS,
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
        table=f"{RES}/tables/gate_transfer.csv",
    output:
        png=report(f"{FIG}/fig_gate_transfer.png", caption="../report/fig_transfer.rst", category="Figures"),
        pdf=f"{FIG}/fig_gate_transfer.pdf",
    params:
        signals=SIGNALS,
    benchmark:
        f"benchmarks/{EXP}/fig_gate_transfer.tsv"
    log:
        f"{LOGS}/fig_gate_transfer.log",
    conda:
        ENV
    script:
        "../scripts/fig_gate_transfer.py"
