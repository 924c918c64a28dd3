# Stage 1: the utterance set and its data card.


if config["utterances"]["source"] == "generate":

    rule generate_utterances:
        input:
            catalog=config["catalog"],
            templates=template_files(),
        output:
            utterances=utterances_path(),
            meta=PATHS.utterances_meta,
        params:
            templates=lambda w, input: Path(input.templates[0]).parent,
            composition=config["utterances"]["composition"],
            run=RUN,
        benchmark:
            f"benchmarks/{EXP}/generate_utterances.tsv"
        log:
            f"{LOGS}/generate_utterances.log",
        conda:
            ENV
        script:
            "../scripts/generate_utterances.py"


if config["utterances"]["source"] == "functionchat":

    rule import_functionchat:
        output:
            catalog=PATHS.imported_catalog,
            utterances=utterances_path(),
            meta=PATHS.utterances_meta,
        params:
            seed=config["seed"],
            external={"mirror": config["external"]["mirror"]},  # where the data lies: the held-out sets rerun nothing here
        benchmark:
            f"benchmarks/{EXP}/import_functionchat.tsv"
        log:
            f"{LOGS}/import_functionchat.log",
        conda:
            ENV
        script:
            "../scripts/import_functionchat.py"


if config["utterances"]["source"] == "clinc150":

    rule import_clinc150:
        output:
            catalog=PATHS.imported_catalog,
            utterances=utterances_path(),
            meta=PATHS.utterances_meta,
        params:
            seed=config["seed"],
            external={"mirror": config["external"]["mirror"]},
        benchmark:
            f"benchmarks/{EXP}/import_clinc150.tsv"
        log:
            f"{LOGS}/import_clinc150.log",
        conda:
            ENV
        script:
            "../scripts/import_clinc150.py"


rule validate_inputs:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
    output:
        marker=PATHS.inputs_ok,
    params:
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/validate_inputs.tsv"
    log:
        f"{LOGS}/validate_inputs.log",
    conda:
        ENV
    script:
        "../scripts/validate_inputs.py"


rule data_card:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        annotations=annotation_files(),
    output:
        card=PATHS.data_card,
        composition=f"{RES}/tables/composition.csv",
        jaccard=f"{RES}/tables/jaccard.csv",
        agreement=f"{RES}/tables/annotation_agreement.csv",
    params:
        examples=config["data_card"]["examples"],
        utterances=config["utterances"],
        external=config["external"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/data_card.tsv"
    log:
        f"{LOGS}/data_card.log",
    conda:
        ENV
    script:
        "../scripts/data_card.py"


rule data_check:
    # The design targets (config data_check) hold before any ranker runs; every score matrix depends on this.
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        annotations=annotation_files(),
    output:
        report=PATHS.data_check,
    params:
        annotations=lambda w, input: Path(input.annotations[0]).parent if input.annotations else "",
        data_check=config["data_check"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/data_check.tsv"
    log:
        f"{LOGS}/data_check.log",
    conda:
        ENV
    script:
        "../scripts/data_check.py"
