# Stage 5: candidate-count ablation and crossover (paper Table 8, Section 8).


rule candidate_ablation:
    input:
        catalog=config["catalog"],
        utterances=utterances_path(),
        scores=expand(PATHS.scores, ranker=list(config["rankers"])),
    output:
        table=PATHS.candidate_ablation,
        md=f"{RES}/tables/candidate_ablation.md",
        crossover=f"{RES}/tables/crossover.csv",
        crossover_md=f"{RES}/tables/crossover.md",
    params:
        rankers=config["rankers"],
        roles=config["roles"],
        ablation=config["ablation"],
        run=RUN,
    benchmark:
        f"benchmarks/{EXP}/candidate_ablation.tsv"
    log:
        f"{LOGS}/candidate_ablation.log",
    conda:
        ENV
    script:
        "../scripts/candidate_ablation.py"


rule fig_candidate_ablation:
    input:
        table=PATHS.candidate_ablation,
    output:
        png=report(f"{FIG}/fig_candidate_ablation.png", caption="../report/ablation.rst", category="Figures"),
        pdf=f"{FIG}/fig_candidate_ablation.pdf",
    benchmark:
        f"benchmarks/{EXP}/fig_candidate_ablation.tsv"
    log:
        f"{LOGS}/fig_candidate_ablation.log",
    conda:
        ENV
    script:
        "../scripts/fig_candidate_ablation.py"
