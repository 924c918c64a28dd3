# Stage 7: the retained pipeline as a product: exported routers and their cost.


rule router_loco:
    # every candidate fitted on the experiment, run by the shipped runtime on each external set it was not fitted on
    # (router_loco.csv) and on each probe file over the experiment's own catalog (router_probes.csv)
    input:
        unpack(router_inputs),
        latency=str(latency_table(config["router"]["latency_table"])),
        # the sets' embeddings in the cache (rule embed_external): neither this rule nor the external study encodes them
        embedded=embedded_first(),
        probes=probe_files(),
    output:
        table=PATHS.router_loco,
        md=f"{RES}/tables/router_loco.md",
        probes=PATHS.router_probes,
        probes_md=f"{RES}/tables/router_probes.md",
    params:
        settings=ROUTER_PARAMS,
        external=config["external"] if config["external"]["enabled"] else None,
    priority: 10
    benchmark:
        f"benchmarks/{EXP}/router_loco.tsv"
    log:
        f"{LOGS}/router_loco.log",
    conda:
        ENV
    script:
        "../scripts/router_loco.py"


rule export_selected:
    # router.select's choice and its table, from one selection (toolgate.router.product.export_selected)
    input:
        unpack(router_inputs),
        loco=held_out_table(),
        latency=str(latency_table(config["router"]["latency_table"])),  # an edited table selects again
    output:
        router_files(SELECTED),
        table=PATHS.router_selection,
        md=f"{RES}/tables/router_selection.md",
    params:
        out_dir=lambda w, output: Path(output[0]).parent,
        settings=ROUTER_PARAMS,
    benchmark:
        f"benchmarks/{EXP}/export_selected.tsv"
    log:
        f"{LOGS}/export_selected.log",
    conda:
        ENV
    script:
        "../scripts/export_selected.py"


rule export_router:
    input:
        unpack(router_inputs),
    output:
        # every file of the artifact, so snakemake clears them all before a rerun
        router_files("{pipeline}"),
    wildcard_constraints:
        pipeline="|".join(config["router"]["pipelines"]),
    params:
        out_dir=lambda w, output: Path(output[0]).parent,
        settings=ROUTER_PARAMS,
    benchmark:
        f"benchmarks/{EXP}/export_router_{{pipeline}}.tsv"
    log:
        f"{LOGS}/export_router_{{pipeline}}.log",
    conda:
        ENV
    script:
        "../scripts/export_router.py"


rule mood_table:
    # the mood model (toolgate.core.mood) on the bank's held-out verb phrases: per-frame precision and recall
    input:
        bank="data/lang/mood_bank.jsonl",
    output:
        table=PATHS.mood,
        md=f"{RES}/tables/mood.md",
    benchmark:
        f"benchmarks/{EXP}/mood_table.tsv"
    log:
        f"{LOGS}/mood_table.log",
    conda:
        ENV
    script:
        "../scripts/mood_table.py"


rule kiwi_agreement:
    # the hand reader's Korean conditions against Kiwi's morphemes (the ko extra), on the bank and the requests
    input:
        bank="data/lang/mood_bank.jsonl",
        utterances=utterances_path(),
    output:
        table=PATHS.kiwi_agreement,
        md=f"{RES}/tables/kiwi_agreement.md",
    benchmark:
        f"benchmarks/{EXP}/kiwi_agreement.tsv"
    log:
        f"{LOGS}/kiwi_agreement.log",
    conda:
        ENV
    script:
        "../scripts/kiwi_agreement.py"


rule example_leakage:
    # each main-set request's nearest catalog example, beside the selection (its examples embedded at the head, or
    # here where no external study runs), not after it on the workflow's longest path
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        scores=expand(PATHS.scores, ranker=list(config["rankers"])),
        embedded=embedded_first(),
    output:
        table=PATHS.example_leakage,
        md=f"{RES}/tables/example_leakage.md",
    params:
        settings=ROUTER_PARAMS,
    benchmark:
        f"benchmarks/{EXP}/example_leakage.tsv"
    log:
        f"{LOGS}/example_leakage.log",
    conda:
        ENV
    script:
        "../scripts/example_leakage.py"


rule router_eval:
    # the selected router's evaluation card: within (out of fold) and unchanged on every external set
    input:
        router=PATHS.selected,
        catalog=config["catalog"],
        utterances=utterances_path(),
        signals=PATHS.signals,
        scores=expand(PATHS.scores, ranker=list(config["rankers"])),
        leakage=PATHS.example_leakage,
        probes=probe_files(),
        loco=held_out_table(),
    output:
        table=PATHS.router_eval,
        md=f"{RES}/tables/router_eval.md",
    params:
        settings=ROUTER_PARAMS,
        external=config["external"] if config["external"]["enabled"] else None,
    benchmark:
        f"benchmarks/{EXP}/router_eval.tsv"
    log:
        f"{LOGS}/router_eval.log",
    conda:
        ENV
    script:
        "../scripts/router_eval.py"


rule examples_ablation:
    # the examples model with and without the request's character n-grams, whichever the config ships
    input:
        unpack(router_inputs),
        latency=str(latency_table(config["router"]["latency_table"])),
        leakage=PATHS.example_leakage,
        probes=probe_files(),
    output:
        table=PATHS.examples_ablation,
        md=f"{RES}/tables/examples_ablation.md",
    params:
        settings=ROUTER_PARAMS,
    benchmark:
        f"benchmarks/{EXP}/examples_ablation.tsv"
    log:
        f"{LOGS}/examples_ablation.log",
    conda:
        ENV
    script:
        "../scripts/examples_ablation.py"


rule router_cost:
    # Timings need the machine to themselves: hold every core so no other job runs beside.
    threads: 256  # capped by snakemake at --cores
    input:
        routers=expand(PATHS.router, pipeline=[*config["router"]["pipelines"], SELECTED]),
        catalog=config["catalog"],
        utterances=utterances_path(),
    output:
        table=PATHS.router_cost,
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
