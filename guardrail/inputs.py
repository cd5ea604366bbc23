"""What the guardrail checks: the query, the answer, the evidence and the dialogue.

A plain ``dict`` with the same keys is accepted wherever a :class:`GuardInput` is; LangChain
``Document`` objects are accepted as passages (``page_content`` → ``text``, the retrieval score
read from ``metadata["score"]`` when present).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from guardrail.errors import InputError


class Passage(BaseModel):
    """One piece of evidence, usually a retrieved chunk."""

    model_config = ConfigDict(extra="forbid")

    text: str
    """The passage text."""
    score: float | None = None
    """Retrieval score (cosine similarity in [-1, 1]); ``None`` when unknown."""
    source: str | None = None
    """Where the passage came from (file, URL, id)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else the retriever attached."""

    @classmethod
    def coerce(cls, value: Any) -> Passage:
        """Build a passage from a ``Passage``, dict, string or LangChain ``Document``."""
        if isinstance(value, Passage):
            return value
        if isinstance(value, str):
            return cls(text=value)
        if isinstance(value, dict):
            return cls.model_validate(value)
        content = getattr(value, "page_content", None)
        if isinstance(content, str):
            meta = dict(getattr(value, "metadata", {}) or {})
            score = meta.pop("score", None)
            source = meta.get("source")
            return cls(
                text=content,
                score=float(score) if isinstance(score, int | float) else None,
                source=str(source) if source is not None else None,
                metadata=meta,
            )
        raise InputError(
            f"a passage must be a string, dict, Passage or LangChain Document, "
            f"not {type(value).__name__}"
        )


class DialogueTurn(BaseModel):
    """One earlier turn of the conversation."""

    speaker: Literal["user", "assistant", "system"]
    """Who said it."""
    text: str
    """What was said."""
    turn_id: int | None = None
    """Position in the conversation (0-based); filled in from the order when absent."""


class EntityInfo(BaseModel):
    """An entity the dialogue already knows about (the entity registry)."""

    name: str
    """Canonical name, e.g. ``"Sarah Lee"``."""
    type: str | None = None
    """``person``, ``organisation``, ``place`` …"""
    gender: Literal["male", "female", "neuter", "unknown"] | None = None
    """Used to resolve pronouns."""
    number: Literal["singular", "plural"] = "singular"
    """Grammatical number, used to resolve pronouns."""
    aliases: list[str] = Field(default_factory=list)
    """Other names the entity goes by."""
    attributes: dict[str, Any] = Field(default_factory=dict)
    """Known attribute values, e.g. ``{"department": "Finance"}``."""


class DialogueState(BaseModel):
    """The conversation so far: turns, topics, entities and open questions."""

    turns: list[DialogueTurn] = Field(default_factory=list)
    """Earlier turns, oldest first."""
    topics: list[str] = Field(default_factory=list)
    """Topics discussed so far (the topic graph is built from these and the turns)."""
    entities: list[EntityInfo] = Field(default_factory=list)
    """The entity registry."""
    qud_stack: list[str] = Field(default_factory=list)
    """Questions under discussion, most recent last."""

    @field_validator("turns", mode="before")
    @classmethod
    def _number_turns(cls, value: Any) -> Any:
        if isinstance(value, list):
            out = []
            for i, turn in enumerate(value):
                if isinstance(turn, dict) and turn.get("turn_id") is None:
                    turn = {**turn, "turn_id": i}
                out.append(turn)
            return out
        return value


class GuardInput(BaseModel):
    """Everything one check needs. Only ``response`` is required."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    query: str = ""
    """The user's question or request."""
    response: str
    """The LLM answer to check."""
    passages: list[Passage] = Field(default_factory=list)
    """Evidence (retrieved passages); strings, dicts and LangChain Documents are accepted."""
    dialogue: DialogueState = Field(default_factory=DialogueState)
    """Dialogue history, topics, entity registry and QUD stack."""
    knowledge_base: Any = None
    """A knowledge-base handle (see ``guardrail.knowledge``), a path to one, or ``None``."""
    session_id: str | None = None
    """Conversation id, recorded in traces and stored results."""
    turn_id: int | None = None
    """Index of this turn in the conversation."""

    @field_validator("passages", mode="before")
    @classmethod
    def _coerce_passages(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str | dict) or hasattr(value, "page_content"):
            value = [value]
        if not isinstance(value, list | tuple):
            raise InputError(
                f"passages must be a list of strings, dicts or Documents, not {type(value).__name__}"
            )
        return [Passage.coerce(v) for v in value]

    @field_validator("response", mode="before")
    @classmethod
    def _response_is_text(cls, value: Any) -> Any:
        if not isinstance(value, str):
            raise InputError(f"response must be a string, not {type(value).__name__}")
        return value

    @field_validator("dialogue", mode="before")
    @classmethod
    def _coerce_dialogue(cls, value: Any) -> Any:
        if value is None:
            return DialogueState()
        if isinstance(value, list):
            return {"turns": value}
        return value

    @property
    def retrieval_score(self) -> float | None:
        """The best finite retrieval score among the passages, or ``None`` when none has one
        (NaN and infinite scores say nothing about the retrieval and are left out)."""
        scores = [p.score for p in self.passages if p.score is not None and math.isfinite(p.score)]
        return max(scores) if scores else None


def coerce_input(value: Any) -> GuardInput:
    """Turn a ``GuardInput`` or a dict with its keys into a ``GuardInput`` (typed errors)."""
    if isinstance(value, GuardInput):
        return value
    if isinstance(value, dict):
        from pydantic import ValidationError

        try:
            return GuardInput.model_validate(value)
        except InputError:
            raise
        except ValidationError as exc:
            raise InputError(f"invalid guardrail input: {exc}") from exc
    raise InputError(
        f"guardrail input must be a GuardInput or a dict with a 'response' key, "
        f"not {type(value).__name__}"
    )


def read_passage_rows(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """Read a passages JSONL file (``{"text": ..., "score": ..., "source": ...}`` a line).

    Returns ``(line number, row)`` pairs; blank lines are skipped. A missing file, a line that
    is not JSON, or one without a string ``text`` raises ``InputError`` naming the line.
    """
    from guardrail.jsonl import iter_jsonl

    file = Path(path)
    if not file.exists():
        raise InputError(f"passages file not found: {file}")
    rows: list[tuple[int, dict[str, Any]]] = []
    for n, row in iter_jsonl(file):
        if not isinstance(row.get("text"), str):
            raise InputError(f"{file}:{n}: each line needs a string 'text' field")
        rows.append((n, row))
    return rows
