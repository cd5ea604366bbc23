"""The regenerate-on-fail loop driven by the real knowledge stage.

The chat model is langchain-core's ``FakeListChatModel`` (it stands in for Groq / SmolLM2, whose
answers we cannot script). Everything else is real: the FAISS index over the shipped corpus,
the shipped knowledge base (John Smith → department Engineering), and the guardrail's
coherence, fact-validation and correction stages, which decide.

The guardrail is configured for a regenerate loop: the regenerate band starts at 0.0, so a low
score asks for a new answer instead of escalating at once (escalation then comes from the
attempt limit). The NLI stages (claims / hallucination) are disabled so the knowledge stage
alone drives the decision — they need the bundled verifier, which lands separately.
Depends on: guardrail.stages.facts / correction / coherence (knowledge and coherence issues).
"""

from __future__ import annotations

import pytest
from langchain_core.language_models import FakeListChatModel

from chains.guarded_rag import GuardedRAG
from chains.results import DELIVERABLE
from chains.retrieval import PassageIndex, corpus_path, kb_path, open_kb
from guardrail.pipeline import Guardrail
from guardrail.report import Action
from guardrail.tracing import RunTreeCollector

pytestmark = pytest.mark.integration

QUESTION = "Which department does John Smith work in?"
WRONG = "John Smith works in the Marketing department."
RIGHT = "John Smith works in the Engineering department."
LOOP_CONFIG = {
    "disabled_stages": ["claims", "hallucination"],
    # Without automatic correction: the KB value would repair the answer (correct_and_deliver).
    "correction": {"auto_correct": False},
    "thresholds": {"accept": 0.9, "flag": 0.75, "correct": 0.5, "regenerate": 0.0},
}


@pytest.fixture(scope="module")
def index() -> PassageIndex:
    return PassageIndex.from_paths([corpus_path()])


@pytest.fixture(scope="module")
def guard() -> Guardrail:
    return Guardrail(LOOP_CONFIG)


def test_contradicted_answer_is_regenerated_and_the_second_is_accepted(
    index: PassageIndex, guard: Guardrail
) -> None:
    llm = FakeListChatModel(responses=[WRONG, RIGHT])
    rag = GuardedRAG(index, llm, guardrail=guard, max_attempts=3, knowledge_base=open_kb(kb_path()))
    collector = RunTreeCollector()
    result = rag.invoke(QUESTION, {"callbacks": [collector]})

    assert len(result.attempts) == 2
    first, second = result.attempts
    assert first.answer == WRONG and first.action is Action.REGENERATE
    assert first.report is not None and first.report.factual_validation is not None
    assert first.report.factual_validation.stats.contradicted >= 1
    assert second.guidance is not None
    assert "'Engineering'" in second.guidance
    assert "John Smith" in second.guidance
    assert second.answer == RIGHT and second.action in DELIVERABLE
    assert result.action in DELIVERABLE and result.answer == RIGHT
    assert result.escalation is None
    # The second prompt really carried the guidance; both attempts are child runs.
    root = collector.roots[-1]
    assert root.names()[1:] == ["guarded_rag.attempt.1", "guarded_rag.attempt.2"]
    prompts = [str(run.inputs) for run in collector.find("guarded_rag.generate")]
    assert "Engineering" in prompts[1] and "Marketing" in prompts[1]


def test_answer_that_never_recovers_ends_in_human_review(
    index: PassageIndex, guard: Guardrail
) -> None:
    llm = FakeListChatModel(responses=[WRONG])  # the same wrong answer every time
    rag = GuardedRAG(index, llm, guardrail=guard, max_attempts=2, knowledge_base=open_kb(kb_path()))
    result = rag.invoke(QUESTION)

    assert len(result.attempts) == 2
    assert all(a.action is Action.REGENERATE for a in result.attempts)
    assert result.action is Action.HUMAN_REVIEW and result.answer is None
    assert result.escalation is not None
    assert result.escalation.attempts == 2
    assert "after 2 attempt" in result.escalation.reason
    assert "'Engineering'" in result.escalation.reason
    assert result.escalation.last_answer == WRONG
