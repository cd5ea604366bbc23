"""The regenerate-on-fail loop: a wrong answer is sent back with the guardrail's guidance.

A scripted ``FakeListChatModel`` (from langchain-core) plays an LLM that first gets John Smith's
department wrong and then, given the guidance, answers correctly — real LLMs cannot be
scripted. Retrieval, the knowledge base and the guardrail are real.

The guardrail is configured for a regenerate loop: the regenerate band starts at 0.0, so a low
score asks for another answer (escalation comes from the attempt limit); the NLI stages are left
out so that the knowledge base alone decides in this demo, and automatic correction is off (with
it on, the knowledge-base value would repair the answer and it would be delivered corrected).

Run: python examples/regenerate_loop.py
"""

from __future__ import annotations

import sys

from langchain_core.language_models import FakeListChatModel

from chains import GuardedRAG, PassageIndex, corpus_path, kb_path, open_kb
from guardrail import Guardrail

LOOP_CONFIG = {
    "disabled_stages": ["claims", "hallucination"],
    "correction": {"auto_correct": False},
    "thresholds": {"accept": 0.9, "flag": 0.75, "correct": 0.5, "regenerate": 0.0},
}


def main() -> int:
    llm = FakeListChatModel(
        responses=[
            "John Smith works in the Marketing department.",
            "John Smith works in the Engineering department.",
        ]
    )
    rag = GuardedRAG(
        PassageIndex.from_paths([corpus_path()]),
        llm,
        guardrail=Guardrail(LOOP_CONFIG),
        max_attempts=3,
        knowledge_base=open_kb(kb_path()),
    )
    result = rag.invoke("Which department does John Smith work in?")
    for attempt in result.attempts:
        print(f"attempt {attempt.number}: {attempt.answer!r} -> {attempt.action.value}")
        if attempt.guidance:
            print(f"  prompted with guidance: {attempt.guidance}")
    if result.answer is not None:
        print(f"delivered ({result.action.value}): {result.answer}")
    else:
        print(f"escalated: {result.escalation.reason if result.escalation else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
