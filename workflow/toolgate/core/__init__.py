"""The library the router ships on: text, BM25, encoders, rankers, gate signals and models, calibration,
decisions, the runtime and artifact, evidence rules, the examples model. It imports nothing of toolgate outside
this folder (tests/unit/test_imports.py)."""
