"""Integrations with other frameworks and observability stacks (each behind an optional extra).

- :mod:`guardrail.integrations.llama_index` — a LlamaIndex evaluator and query-engine wrapper
  (``pip install 'answer-guardrail[llama-index]'``);
- :mod:`guardrail.integrations.otel` — OpenTelemetry spans per check and per stage
  (``pip install 'answer-guardrail[otel]'``).

Nothing is imported here: import the submodule you need.
"""
