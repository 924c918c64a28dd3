# Stage 4: routing baselines, the split gate and pipelines with a confirmation band (paper Table 1, Table A3).


rule routing_baselines:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        lexical=PATHS.lexical_scores,
        signals=PATHS.signals,
    output:
        f"{RES}/tables/routing_baselines.csv",
        f"{RES}/tables/routing_baselines.md",
    params:
        run=RUN,
        gate=config["gate"],
        routing=config["routing"],
        signals=SIGNALS,
    benchmark:
        f"benchmarks/{EXP}/routing_baselines.tsv"
    log:
        f"{LOGS}/routing_baselines.log",
    conda:
        ENV
    script:
        "../scripts/routing_baselines.py"


rule pipelines:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        scores=expand(PATHS.scores, ranker=list(config["rankers"])),
        signals=PATHS.signals,
    output:
        table=f"{RES}/tables/pipelines.csv",
        md=f"{RES}/tables/pipelines.md",
        diversity=f"{RES}/tables/signal_diversity.csv",
        diversity_md=f"{RES}/tables/signal_diversity.md",
    params:
        rankers=config["rankers"],
        lexical=config["roles"]["lexical"],
        run=RUN,
        gate=config["gate"],
        routing=config["routing"],
        signals=SIGNALS,
    benchmark:
        f"benchmarks/{EXP}/pipelines.tsv"
    log:
        f"{LOGS}/pipelines.log",
    conda:
        ENV
    script:
        "../scripts/pipelines.py"


rule pipeline_cost:
    # Timings need the machine to themselves: hold every core so no other job runs beside (only the timing: the
    # pipelines' accuracy, guard and diversity are rule pipelines', which runs beside other jobs).
    threads: 256  # capped by snakemake at --cores
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        scores=expand(PATHS.scores, ranker=list(config["rankers"])),  # their embedding cache
    output:
        table=f"{RES}/tables/pipeline_cost.csv",
        md=f"{RES}/tables/pipeline_cost.md",
    params:
        rankers=config["rankers"],
        run=RUN,
        routing=config["routing"],
        cost=config["cost"],
    benchmark:
        f"benchmarks/{EXP}/pipeline_cost.tsv"
    log:
        f"{LOGS}/pipeline_cost.log",
    conda:
        ENV
    script:
        "../scripts/pipeline_cost.py"
