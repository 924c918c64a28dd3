# Stage 5b: cross-checks on real external data (FunctionChat-Bench, BFCL) and figure 4.


rule embed_external:
    # the held-out sets' texts and the experiment's own through each per-text cached encoder, once
    # (toolgate.router.embedded), in EMBED_SHARDS shares side by side: the scores, the external study, router_loco
    # and the leakage table then read them from the cache
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
    output:
        json=PATHS.embedded,
    params:
        rankers=config["rankers"],
        run=RUN,
        external=config["external"],
        shard=lambda wildcards: int(wildcards.shard),
        shards=EMBED_SHARDS,
    wildcard_constraints:
        shard="|".join(map(str, range(EMBED_SHARDS))),
    priority: 10
    benchmark:
        f"benchmarks/{EXP}/embed_external_{{shard}}.tsv"
    log:
        f"{LOGS}/embed_external_{{shard}}.log",
    conda:
        ENV
    script:
        "../scripts/embed_external.py"


rule external:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        gates=PATHS.gates,
        embedded=embedded(),
    output:
        selection=f"{RES}/tables/external_selection.csv",
        selection_md=f"{RES}/tables/external_selection.md",
        gate=PATHS.external_gate,
        gate_md=f"{RES}/tables/external_gate.md",
        bootstrap=f"{RES}/tables/external_bootstrap.csv",
        bootstrap_md=f"{RES}/tables/external_bootstrap.md",
        jaccard=f"{RES}/tables/jaccard_external.csv",
        jaccard_md=f"{RES}/tables/jaccard_external.md",
        jaccard_items=PATHS.jaccard_items,
        signals=PATHS.external_signals,
    params:
        rankers=config["rankers"],
        run=RUN,
        gate=config["gate"],
        external=config["external"],
        roles=config["roles"],
        own_label="synthetic" if config["utterances"]["source"] == "generate" else EXP,  # fig4's name of the own set
    priority: 10  # on the longest path: gate study, external study, router_loco, the selected router
    benchmark:
        f"benchmarks/{EXP}/external.tsv"
    log:
        f"{LOGS}/external.log",
    conda:
        ENV
    script:
        "../scripts/external.py"


rule fig_jaccard:
    input:
        table=PATHS.jaccard_items,
    output:
        png=report(f"{FIG}/fig4_jaccard.png", caption="../report/fig4.rst", category="Figures"),
        pdf=f"{FIG}/fig4_jaccard.pdf",
    benchmark:
        f"benchmarks/{EXP}/fig_jaccard.tsv"
    log:
        f"{LOGS}/fig_jaccard.log",
    conda:
        ENV
    script:
        "../scripts/fig_jaccard.py"
