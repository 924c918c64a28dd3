# Stage 4: native tool calling through an OpenAI-compatible server (paper Section 7, Table 7):
# native.server vllm or llama-cpp, launched on 127.0.0.1, or a running native.endpoint.
# Each roster checkpoint is served, routes every utterance with the full catalog
# and with the lexical top-5 shortlist, and is stopped; a checkpoint that does
# not deploy is recorded as a deployment outcome and the workflow goes on.


rule native_calls:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        lexical=PATHS.lexical_scores,
    output:
        records=PATHS.native_records,
        deployment=PATHS.native_deployment,
    params:
        entry=lambda w: config["native"]["roster"][w.checkpoint],
        run=RUN,
        native=config["native"],
    benchmark:
        f"benchmarks/{EXP}/native_calls_{{checkpoint}}.tsv"
    log:
        f"{LOGS}/native_{{checkpoint}}.log",
        server=f"{LOGS}/native_{{checkpoint}}.server.log",
    conda:
        ENV
    script:
        "../scripts/native_calls.py"


rule native_tables:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        lexical=PATHS.lexical_scores,
        deployments=expand(PATHS.native_deployment, checkpoint=list(config["native"]["roster"])),
        records=expand(PATHS.native_records, checkpoint=list(config["native"]["roster"])),
    output:
        deployment=f"{RES}/tables/native_deployment.csv",
        deployment_md=f"{RES}/tables/native_deployment.md",
        calls=f"{RES}/tables/native_calls.csv",
        calls_md=f"{RES}/tables/native_calls.md",
    params:
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/native_tables.tsv"
    log:
        f"{LOGS}/native_tables.log",
    conda:
        ENV
    script:
        "../scripts/native_tables.py"


# The multiple-choice tournament ranker (the second seed's Laya backend) on one
# roster checkpoint, served as above; recorded as not run when no model comes up.
rule tournament:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
    output:
        records=f"{RES}/tournament/records.jsonl",
        deployment=f"{RES}/tournament/deployment.json",
        table=f"{RES}/tables/tournament.csv",
        table_md=f"{RES}/tables/tournament.md",
    params:
        run=RUN,
        native=config["native"],
        tournament=config["tournament"],
    benchmark:
        f"benchmarks/{EXP}/tournament.tsv"
    log:
        f"{LOGS}/tournament.log",
        server=f"{LOGS}/tournament.server.log",
    conda:
        ENV
    script:
        "../scripts/tournament.py"
