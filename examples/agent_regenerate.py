"""Regenerate inside a LangChain v1 agent: a wrong final answer goes back to the model with the
guardrail's guidance, within one ``agent.invoke``.

The agent is the usual ``create_agent`` recipe: a chat model and a retrieval tool over the
office documents. ``guardrail_middleware(on_fail="regenerate")`` checks the final answer (the
model turn without tool calls) against the tool's results; a rejected answer is removed from
the messages and the model is called again with the guidance in its system message. The turn's
tool results stay its evidence, so the second answer is checked against the same documents.

Chat model: Groq's llama-3.1-8b-instant when GROQ_API_KEY is set; otherwise a scripted
tool-calling stand-in (no network here) that looks the question up, answers with the wrong
room, day and time, then — given the guidance — with the right ones. Retrieval, the tool and the
guardrail are real.

Run: python examples/agent_regenerate.py
"""

from __future__ import annotations

import os
import sys
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from chains import PassageIndex, corpus_path, groq_chat_model, guardrail_middleware
from guardrail import Guardrail, GuardReport
from guardrail.tracing import RunTreeCollector

QUESTION = "When and where is the project review meeting with John Smith?"


class ScriptedToolModel(GenericFakeChatModel):
    """A scripted chat model that can call tools (it stands in for a real one offline)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def chat_model() -> Any:
    if os.environ.get("GROQ_API_KEY"):
        return groq_chat_model()
    search = {"name": "search_office_docs", "args": {"query": QUESTION}, "id": "call-1"}
    return ScriptedToolModel(
        messages=iter(
            [
                AIMessage(content="", tool_calls=[search]),
                AIMessage(content="The project review meeting with John Smith is in room 9C on Friday at 15:00."),
                AIMessage(content="The project review meeting with John Smith is on Thursday at 10:00 in room 4B."),
            ]
        )
    )  # fmt: skip


def main() -> int:
    retriever = PassageIndex.from_paths([corpus_path()]).as_retriever(k=2)

    @tool
    def search_office_docs(query: str) -> str:
        """Search the office documents (meetings, people, projects, policies)."""
        return "\n\n".join(doc.page_content for doc in retriever.invoke(query))

    agent = create_agent(
        chat_model(),
        tools=[search_office_docs],
        system_prompt="Answer from the office documents; look things up first.",
        middleware=[guardrail_middleware(Guardrail(), on_fail="regenerate", max_attempts=3)],
    )
    trace = RunTreeCollector()  # a local copy of the trace (no network)
    out = agent.invoke(
        {"messages": [{"role": "user", "content": QUESTION}]}, {"callbacks": [trace]}
    )

    for check in trace.find("guardrail"):
        report = check.output
        assert isinstance(report, GuardReport)
        attempt = next(t for t in check.tags if t.startswith("attempt:"))
        print(f"{attempt} {report.original!r} -> {report.action.value}")
    for regen in trace.find("guardrail.regenerate"):
        print(
            f"regenerated (attempt {regen.inputs['attempt']}) with guidance: {regen.inputs['guidance']}"
        )
    outcome = out["guardrail"]
    print(
        f"outcome: {outcome['action']} (verdict {outcome['verdict']}, "
        f"confidence {outcome['confidence']:.2f}) after {outcome['attempts']} attempt(s)"
    )
    print("messages: " + ", ".join(type(m).__name__ for m in out["messages"]))
    print(f"answer: {out['messages'][-1].content}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
