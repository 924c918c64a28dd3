"""The retained pipeline as a product: export it as a small artifact, load it, decide (`toolgate export` / `decide`).

``export`` fits the pipeline's calibrator and band thresholds on every utterance
of an experiment and writes ``router.json`` (a manifest in plain fields), the
BM25 index and the catalog; ``runtime`` loads that folder, validates inputs and
returns decisions in the pipeline's vocabulary (act / ask / delegate / chat).
"""
