from toolgate.retrieval.quant import write_retention
from toolgate.smk import logged, typed

with logged(snakemake):
    p, i, o = typed(snakemake.params), snakemake.input, snakemake.output
    write_retention(i.catalog, i.utterances, p.rankers, o[0], p.onnx_model, p.run)
