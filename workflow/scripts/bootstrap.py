from toolgate.bootstrap import write_bootstrap
from toolgate.smk import logged

with logged(snakemake):
    p = snakemake.params
    write_bootstrap(snakemake.input[0], snakemake.output[0], p.encoder, p.second, p.gate["cluster_units"],
                    p.gate["resamples"], p.seed)
