"""The pipeline as a product: export a router as a small artifact, load it, decide (`toolgate export` / `decide`).

``select`` chooses ranker and gate by nested out-of-fold evaluation; ``export`` fits the calibrator and thresholds
on every utterance of an experiment and writes ``router.json`` (a manifest in plain fields), the BM25 index, the
catalog and its embeddings; ``runtime`` loads that folder, validates inputs and returns decisions in the pipeline's
vocabulary (act / ask / delegate / chat).
"""
from importlib.resources import files

SELECTED = "selected"  # the folder and name of the router router.select chooses
LATENCY_TABLE = files(__package__) / "latency.yaml"  # the declared latencies router.select reads by default
