"""Native tool calling through an OpenAI-compatible server (paper Section 7, Table 7), and the tournament ranker.

A checkpoint that does not come up is a deployment outcome, not an accuracy result: its stage and error are
recorded and the workflow goes on, so it completes on a machine without vLLM or a GPU. Import from the modules.
"""
