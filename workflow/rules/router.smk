# Stage 7: the retained pipeline as a product: exported routers and their cost.


rule export_router:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        signals=f"{RES}/gate/signals.csv",
        scores=expand(f"{RES}/scores/{{ranker}}.npz", ranker=list(config["rankers"])),
    output:
        # every file of the artifact, so snakemake clears them all before a rerun
        f"{RES}/router/{{pipeline}}/router.json",
        f"{RES}/router/{{pipeline}}/bm25.index",
        f"{RES}/router/{{pipeline}}/catalog.jsonl",
    params:
        out_dir=lambda w, output: Path(output[0]).parent,
        rankers=config["rankers"],
        run=RUN,
        gate=config["gate"],
        routing=config["routing"],
        signals=SIGNALS,
        provenance={"experiment": EXP, "config_hash": CONFIG_HASH, "lexical": config["roles"]["lexical"],
                    "limits": {k: config["router"][k] for k in ("max_chars", "top_k")}},
    benchmark:
        f"benchmarks/{EXP}/export_router_{{pipeline}}.tsv"
    log:
        f"{LOGS}/export_router_{{pipeline}}.log",
    conda:
        ENV
    script:
        "../scripts/export_router.py"


rule router_cost:
    # Timings need the machine to themselves: hold every core so no other job runs beside.
    threads: 256  # capped by snakemake at --cores
    input:
        routers=expand(f"{RES}/router/{{pipeline}}/router.json", pipeline=config["router"]["pipelines"]),
        catalog=config["catalog"],
        utterances=utterances_path(),
    output:
        table=f"{RES}/tables/router_cost.csv",
        md=f"{RES}/tables/router_cost.md",
    params:
        router=config["router"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/router_cost.tsv"
    log:
        f"{LOGS}/router_cost.log",
    conda:
        ENV
    script:
        "../scripts/router_cost.py"
