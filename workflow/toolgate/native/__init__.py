"""Native tool calling through an OpenAI-compatible server (paper Section 7, Table 7).

A roster of tool-calling checkpoints is served by vLLM (``--enable-auto-tool-choice
--tool-call-parser <parser>``) and asked to route every utterance with
``tool_choice="required"``, once with the whole catalog of actions as ``tools``
(condition ``full``) and once with the lexical top-5 shortlist (``top5``).

A checkpoint that does not come up is a *deployment outcome*, not an accuracy
result: the failure stage and the captured error text are recorded and the
workflow goes on, so it also completes on a machine without vLLM or a GPU.
``endpoint`` mode talks to a server the user already runs instead.

Modules: :mod:`.protocol` (tools, requests, responses, failure stages),
:mod:`.server` (pre-flight and server lifecycle), :mod:`.client` (HTTP, bounded
concurrency), :mod:`.run` (one checkpoint, the ``native_calls`` rule) and
:mod:`.tables` (the ``native_tables`` rule). The multiple-choice tournament
ranker reuses the same serving and client: :mod:`.tournament` (the bracket) and
:mod:`.tournament_run` (the ``tournament`` rule). Import from them directly.
"""
