"""The LangChain v1 agent middleware in a real ``create_agent`` graph.

The agent's model is langchain-core's ``GenericFakeChatModel`` (it stands in for Groq); the
guardrail is real, its decision set by configuration (see ``test_chains_guarded_rag``).
"""

from __future__ import annotations

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from chains.agent_middleware import guardrail_middleware
from guardrail.errors import GuardrailRejected
from guardrail.pipeline import Guardrail
from tests.stage_names import STAGES

pytest.importorskip(
    "langchain.agents", reason="needs langchain v1: pip install 'guardrail[chains]'"
)

ACCEPT_ALL = {
    "disabled_stages": list(STAGES),
    "failure_policy": "fail_open",
    "thresholds": {"accept": 0.0, "flag": 0.0, "correct": 0.0, "regenerate": 0.0},
}


def agent(guard: Guardrail, on_fail: str) -> object:
    from langchain.agents import create_agent

    model = GenericFakeChatModel(messages=iter([AIMessage(content="It is on Thursday at 10:00.")]))
    return create_agent(model, tools=[], middleware=[guardrail_middleware(guard, on_fail=on_fail)])


def test_accepted_answer_carries_the_report() -> None:
    out = agent(Guardrail(ACCEPT_ALL), "raise").invoke(  # type: ignore[attr-defined]
        {"messages": [{"role": "user", "content": "When is the meeting with John?"}]}
    )
    last = out["messages"][-1]
    assert last.content == "It is on Thursday at 10:00."
    assert last.additional_kwargs["guardrail_report"]["recommendation"]["action"] == "accept"
    assert len(out["messages"]) == 2  # replaced in place (same id), not appended


def test_rejected_answer_raises() -> None:
    blocked = Guardrail({"disabled_stages": list(STAGES)})
    with pytest.raises(GuardrailRejected):
        agent(blocked, "raise").invoke(  # type: ignore[attr-defined]
            {"messages": [{"role": "user", "content": "When is the meeting?"}]}
        )
    out = agent(blocked, "annotated").invoke(  # type: ignore[attr-defined]
        {"messages": [{"role": "user", "content": "When is the meeting?"}]}
    )
    report = out["messages"][-1].additional_kwargs["guardrail_report"]
    assert report["recommendation"]["action"] == "human_review"
