# toolgate: Selection Is Retrieval, Abstention Is Not - the experiment pipeline.
# This file is the table of contents; every stage lives in workflow/rules/.
import os

from snakemake.utils import min_version

min_version("9.0")


# onnxruntime (the onnx extra) sends telemetry about 10 s after it loads unless this is set first: every job of the
# workflow inherits it (toolgate's encoders set it too), and envvars passes it on to jobs run elsewhere. Set but
# empty counts as unset.
if not os.environ.get("ORT_DISABLE_TELEMETRY"):
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"


envvars:
    "ORT_DISABLE_TELEMETRY",


# config.yaml is the default experiment; `--configfile config/X.yaml` replaces it
# (rather than being merged into it), so every experiment file stands alone and
# takes the schema's defaults for what it leaves out. `--config key=value` still
# overrides either.
if not workflow.overwrite_configfiles:

    configfile: "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/rank.smk"
include: "workflow/rules/gate.smk"
include: "workflow/rules/routing.smk"
include: "workflow/rules/ablation.smk"
include: "workflow/rules/external.smk"
include: "workflow/rules/native.smk"
include: "workflow/rules/router.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        all_targets(),
    default_target: True
