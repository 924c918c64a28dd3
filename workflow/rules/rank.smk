# Stage 2: rankers over the catalog, selection (paper Table 3), reranking, cost, quantization.


rule scores:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        data_check=PATHS.data_check,
        members=member_scores,
        embedded=embedded_scores,
    output:
        PATHS.scores,
    params:
        spec=lambda w: config["rankers"][w.ranker],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/scores_{{ranker}}.tsv"
    log:
        f"{LOGS}/scores_{{ranker}}.log",
    conda:
        ENV
    script:
        "../scripts/scores.py"


rule selection:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        scores=expand(PATHS.scores, ranker=list(config["rankers"])),
    output:
        f"{RES}/tables/selection.csv",
        f"{RES}/tables/selection.md",
    params:
        rankers=list(config["rankers"]),
        top_k=config["selection"]["top_k"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/selection.tsv"
    log:
        f"{LOGS}/selection.log",
    conda:
        ENV
    script:
        "../scripts/selection.py"


rule rerank:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        lexical=PATHS.lexical_scores,
        rerankers=expand(PATHS.scores, ranker=rerankers()),
    output:
        f"{RES}/tables/rerank.csv",
        f"{RES}/tables/rerank.md",
    params:
        rerankers=rerankers(),
        top_k=config["selection"]["top_k"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/rerank.tsv"
    log:
        f"{LOGS}/rerank.log",
    conda:
        ENV
    script:
        "../scripts/rerank.py"


rule cost:
    # Timings need the machine to themselves: hold every core so no other job runs beside.
    threads: 256  # capped by snakemake at --cores
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        scores=expand(PATHS.scores, ranker=list(config["rankers"])),  # their embedding cache
    output:
        table=f"{RES}/tables/cost.csv",
        md=f"{RES}/tables/cost.md",
        index=f"{RES}/index/{config['roles']['lexical']}.bm25",
    params:
        rankers=config["rankers"],
        lexical=config["roles"]["lexical"],
        cost=config["cost"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/cost.tsv"
    log:
        f"{LOGS}/cost.log",
    conda:
        ENV
    script:
        "../scripts/cost.py"


rule scaling:
    # Timings need the machine to themselves: hold every core so no other job runs beside.
    threads: 256  # capped by snakemake at --cores
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
    output:
        table=PATHS.scaling,
        md=f"{RES}/tables/scaling.md",
    params:
        rankers=config["rankers"],
        lexical=config["roles"]["lexical"],
        scaling=config["scaling"],
        external=config["external"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/scaling.tsv"
    log:
        f"{LOGS}/scaling.log",
    conda:
        ENV
    script:
        "../scripts/scaling.py"


rule fig_scaling:
    input:
        table=PATHS.scaling,
    output:
        png=report(f"{FIG}/fig_scaling.png", caption="../report/fig_scaling.rst", category="Figures"),
        pdf=f"{FIG}/fig_scaling.pdf",
    benchmark:
        f"benchmarks/{EXP}/fig_scaling.tsv"
    log:
        f"{LOGS}/fig_scaling.log",
    conda:
        ENV
    script:
        "../scripts/fig_scaling.py"


rule tokenizer_ablation:
    # Latency is timed here: hold every core so no other job runs beside.
    threads: 256  # capped by snakemake at --cores
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        data_check=PATHS.data_check,
    output:
        table=PATHS.tokenizer_ablation,
        md=f"{RES}/tables/tokenizer_ablation.md",
    params:
        spec=config["rankers"][config["roles"]["lexical"]],
        tokenizer_ablation=config["tokenizer_ablation"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/tokenizer_ablation.tsv"
    log:
        f"{LOGS}/tokenizer_ablation.log",
    conda:
        ENV
    script:
        "../scripts/tokenizer_ablation.py"


rule fig_tokenizer_ablation:
    input:
        table=PATHS.tokenizer_ablation,
    output:
        png=report(f"{FIG}/fig_tokenizer_ablation.png", caption="../report/fig_tokenizer_ablation.rst",
                   category="Figures"),
        pdf=f"{FIG}/fig_tokenizer_ablation.pdf",
    benchmark:
        f"benchmarks/{EXP}/fig_tokenizer_ablation.tsv"
    log:
        f"{LOGS}/fig_tokenizer_ablation.log",
    conda:
        ENV
    script:
        "../scripts/fig_tokenizer_ablation.py"


rule quant_retention:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        scores=expand(PATHS.scores, ranker=list(config["rankers"])),
    output:
        f"{RES}/tables/quant_retention.csv",
        f"{RES}/tables/quant_retention.md",
    params:
        rankers=config["rankers"],
        onnx_model=config["quantization"]["onnx_model"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/quant_retention.tsv"
    log:
        f"{LOGS}/quant_retention.log",
    conda:
        ENV
    script:
        "../scripts/quant_retention.py"
