"""A person's review as a pause: an agent answer the guardrail cannot let through waits for a
reviewer, then resumes with their decision.

``guardrail_middleware(human_review="interrupt")`` pauses the agent with a LangGraph
``interrupt`` when the guardrail sends an answer to a person (here: the model answered without
looking anything up, so nothing supports the answer). The paused result holds
``__interrupt__``; its value has the action, the question, the answer, the reasons and the
report. ``agent.invoke(Command(resume=decision), config)`` continues the same thread with
``{"type": "approve"}``, ``{"type": "edit", "text": ...}`` or ``{"type": "reject",
"message": ...}``. A pause is saved by the checkpointer (``InMemorySaver`` here; a persistent
one in production).

Chat model: a scripted tool-calling stand-in (no network here) that answers at once, without
its retrieval tool. The tool, the checkpointer and the guardrail are real.

Run: python examples/agent_human_review.py [approve|edit|reject]
"""

from __future__ import annotations

import sys
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from chains import PassageIndex, corpus_path, guardrail_middleware
from guardrail import Guardrail, GuardReport

QUESTION = "Can I expense a taxi to the airport?"
ANSWER = "Yes, taxis to the airport are always reimbursed in full."
DECISIONS: dict[str, dict[str, str]] = {
    "approve": {"type": "approve"},
    "edit": {"type": "edit", "text": "Taxis are reimbursed with a receipt; see the travel policy."},
    "reject": {"type": "reject", "message": "I can't confirm that; Finance will get back to you."},
}


class ScriptedToolModel(GenericFakeChatModel):
    """A scripted chat model that can call tools (it stands in for a real one offline)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def main() -> int:
    chosen = sys.argv[1:] or list(DECISIONS)
    retriever = PassageIndex.from_paths([corpus_path()]).as_retriever(k=2)

    @tool
    def search_office_docs(query: str) -> str:
        """Search the office documents (meetings, people, projects, policies)."""
        return "\n\n".join(doc.page_content for doc in retriever.invoke(query))

    guard = Guardrail()
    for name in chosen:
        agent = create_agent(
            ScriptedToolModel(messages=iter([AIMessage(content=ANSWER)])),
            tools=[search_office_docs],
            middleware=[guardrail_middleware(guard, human_review="interrupt")],
            checkpointer=InMemorySaver(),
        )
        config: Any = {"configurable": {"thread_id": f"review-{name}"}}
        paused = agent.invoke({"messages": [{"role": "user", "content": QUESTION}]}, config)
        request = paused["__interrupt__"][0].value
        report = GuardReport.model_validate(request["report"])
        print(f"paused: {request['action']} for {request['question']!r}")
        print(f"  answer: {request['answer']!r}")
        print(f"  reasons: {'; '.join(request['reasons'])}")
        print(f"  report: verdict {report.verdict.label.value}, confidence {report.confidence:.2f}")
        out = agent.invoke(Command(resume=DECISIONS[name]), config)
        print(f"{name} -> {out['messages'][-1].content}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
