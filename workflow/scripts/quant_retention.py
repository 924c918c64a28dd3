from toolgate.quant import write_retention
from toolgate.smk import logged

with logged(snakemake):
    p = snakemake.params
    write_retention(snakemake.input.catalog, snakemake.input.utterances, p.rankers, snakemake.output[0], p.cache,
                    p.onnx_model, tuple(p.langs), p.seed)
