"""``guardrail demo``: a short offline run on built-in examples, printing each decision."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from guardrail.cli.check import render_text

EXAMPLES: list[dict[str, Any]] = [
    {
        "query": "When is the meeting?",
        "response": "The meeting is at 2pm on Monday.",
        "passages": [
            {"text": "The meeting with John is at 2pm on Monday in room 4B.", "score": 0.82}
        ],
    },
    {
        "query": "What is AlphaCodium?",
        "response": "AlphaCodium was released by Google in 2024. It uses reinforcement learning to train the model.",
        "passages": [
            {
                "text": "AlphaCodium is a code generation method that improves LLM coding ability "
                "through iterative refinement; it reached state-of-the-art results on the "
                "CodeContests dataset.",
                "score": 0.71,
            }
        ],
    },
]


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="run the guardrail offline on two built-in examples")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from guardrail.pipeline import Guardrail

    guard = Guardrail()
    for example in EXAMPLES:
        sys.stdout.write(f"\n== query: {example['query']}\n   answer: {example['response']}\n")
        report = guard.invoke(example)
        sys.stdout.write(render_text(report) + "\n")
    return 0
