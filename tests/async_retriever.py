"""A retriever with an async form only: its sync form fails the test, so a test can pin that
the async paths await ``ainvoke`` (and never block the event loop on ``invoke``)."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableLambda


def async_only_retriever(docs: list[Any]) -> tuple[RunnableLambda[str, list[Any]], list[str]]:
    """A retriever returning ``docs`` from ``ainvoke`` and raising from ``invoke``, and the
    list of the queries it was awaited with."""
    asked: list[str] = []

    def sync(query: str) -> list[Any]:
        raise AssertionError("an async path called the retriever synchronously")

    async def asynch(query: str) -> list[Any]:
        asked.append(query)
        return docs

    return RunnableLambda(sync, afunc=asynch), asked
