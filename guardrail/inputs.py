"""What the guardrail checks: the query, the answer, the evidence and the dialogue.

A plain ``dict`` with the same keys is accepted wherever a :class:`GuardInput` is; LangChain
``Document`` objects are accepted as passages (``page_content`` → ``text``, the retrieval score
read from ``metadata["score"]`` when present).

Every model here is strict: a key it does not know (``"pasages"``, a passage's ``"txt"``) is an
error naming the key and the nearest valid one, never silently dropped — a dropped key is
evidence the check never sees. :func:`coerce_input` turns the error into an ``InputError``::

    coerce_input({"response": "…", "pasages": ["…"]})
    # InputError: invalid guardrail input: unknown input key 'pasages' (did you mean 'passages'?)
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from guardrail.errors import InputError

#: The pydantic error type of an unknown key (the same as pydantic's own ``extra="forbid"``).
UNKNOWN_KEY = "extra_forbidden"

#: Session ids become store keys, path segments of the stored-results key layout and of report URLs:
#: 1-128 letters, digits and ``. _ : -`` (no ``/``, spaces, quotes or markup).
SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9._:-]{1,128}")
#: The largest turn id a store can hold (a signed 64-bit integer).
MAX_TURN_ID = 2**63 - 1


def _shown(value: str, limit: int = 40) -> str:
    """``value`` quoted for an error message, cut to ``limit`` characters."""
    return repr(value if len(value) <= limit else value[:limit] + "…")


def check_session_id(session_id: str) -> str:
    """``session_id`` if it is a usable id, else ``InputError`` naming the field and the rule."""
    if not isinstance(session_id, str) or not SESSION_ID_PATTERN.fullmatch(session_id):
        shown = _shown(session_id) if isinstance(session_id, str) else type(session_id).__name__
        raise InputError(
            f"session_id {shown} must be 1-128 characters of letters, digits and . _ : -"
        )
    return session_id


def check_turn_id(turn_id: int) -> int:
    """``turn_id`` if it is between 0 and :data:`MAX_TURN_ID`, else ``InputError``."""
    if turn_id < 0:
        raise InputError(f"turn_id must be >= 0, not {turn_id}")
    if turn_id > MAX_TURN_ID:
        raise InputError(f"turn_id must be <= {MAX_TURN_ID}, not {turn_id}")
    return turn_id


def nearest_key(key: object, valid: Iterable[str]) -> str | None:
    """The valid key closest to ``key`` (``difflib.get_close_matches``), or ``None``."""
    found = difflib.get_close_matches(str(key), list(valid), n=1, cutoff=0.6)
    return found[0] if found else None


def unknown_key_message(
    key: object, valid: Iterable[str], what: str = "input key", where: str = ""
) -> str:
    """``unknown input key 'pasages' (did you mean 'passages'?)``, or the valid keys when none
    is close; ``where`` (``passages[0]``) says in which object the key was found."""
    names = sorted(valid)
    near = nearest_key(key, names)
    place = f" in {where}" if where else ""
    hint = f" (did you mean {near!r}?)" if near else f"; valid keys: {', '.join(names)}"
    return f"unknown {what} {str(key)!r}{place}{hint}"


def check_keys(
    data: Mapping[Any, Any], valid: Iterable[str], where: str = "", what: str = "input key"
) -> None:
    """``InputError`` naming the first key of ``data`` not in ``valid`` (and the nearest one)."""
    names = set(valid)
    for key in data:
        if key not in names:
            raise InputError(unknown_key_message(key, names, what, where))


class StrictModel(BaseModel):
    """A model that rejects unknown keys with a message naming the nearest valid key.

    The error is a pydantic ``extra_forbidden`` error at the key's location (so the HTTP
    service answers 422 with ``loc`` ending in the key), with the friendlier message.
    """

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        fields = set(cls.model_fields)
        unknown = [k for k in data if k not in fields]
        if not unknown:
            return data
        valid = ", ".join(sorted(fields))
        errors: list[InitErrorDetails] = [
            {
                # The message is formatted here; ``ctx`` lets describe_errors() add the place.
                "type": PydanticCustomError(
                    UNKNOWN_KEY, unknown_key_message(key, fields), {"valid": valid}
                ),
                "loc": (key if isinstance(key, str | int) else str(key),),
                "input": data[key],
            }
            for key in unknown
        ]
        raise ValidationError.from_exception_data(cls.__name__, errors)


def _where(loc: Iterable[int | str]) -> str:
    """``("passages", 0)`` → ``passages[0]``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def describe_errors(exc: ValidationError) -> str:
    """A pydantic validation error as one line: where, what, and what to do."""
    parts: list[str] = []
    for err in exc.errors(include_url=False):
        loc = tuple(err.get("loc", ()))
        ctx = err.get("ctx") or {}
        cause = ctx.get("error")
        if err["type"] == UNKNOWN_KEY and loc:
            where = _where(loc[:-1])
            if isinstance(ctx.get("valid"), str):  # a StrictModel's error
                parts.append(unknown_key_message(loc[-1], ctx["valid"].split(", "), where=where))
            else:  # pydantic's own extra="forbid" (a model that is not a StrictModel)
                parts.append(
                    f"unknown input key {str(loc[-1])!r}" + (f" in {where}" if where else "")
                )
        elif isinstance(cause, InputError):
            parts.append(str(cause))
        else:
            place = _where(loc)
            parts.append(f"{place}: {err['msg']}" if place else str(err["msg"]))
    return "; ".join(parts)


class Passage(StrictModel):
    """One piece of evidence, usually a retrieved chunk."""

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
            try:
                return cls.model_validate(value)
            except ValidationError as exc:
                raise InputError(f"invalid passage: {describe_errors(exc)}") from exc
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


class DialogueTurn(StrictModel):
    """One earlier turn of the conversation."""

    speaker: Literal["user", "assistant", "system"]
    """Who said it."""
    text: str
    """What was said."""
    turn_id: int | None = None
    """Position in the conversation (0-based); filled in from the order when absent."""


class EntityInfo(StrictModel):
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


class DialogueState(StrictModel):
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


class GuardInput(StrictModel):
    """Everything one check needs. Only ``response`` is required; an unknown key is an error."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

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
    """Conversation id, recorded in traces and stored results: 1-128 letters, digits and
    ``. _ : -`` (:func:`check_session_id`)."""
    turn_id: int | None = None
    """Index of this turn in the conversation (0 or more)."""

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
        # Dicts are left to pydantic, so an error says which passage (``passages[2].txt``).
        return [v if isinstance(v, dict) else Passage.coerce(v) for v in value]

    @field_validator("session_id")
    @classmethod
    def _session_id_is_usable(cls, value: str | None) -> str | None:
        return value if value is None else check_session_id(value)

    @field_validator("turn_id")
    @classmethod
    def _turn_id_is_usable(cls, value: int | None) -> int | None:
        return value if value is None else check_turn_id(value)

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
    """Turn a ``GuardInput`` or a dict with its keys into a ``GuardInput``.

    Raises:
        InputError: a wrong type, a missing ``response``, or an unknown key anywhere (the
            message names it and the nearest valid key: ``unknown input key 'pasages' (did you
            mean 'passages'?)``).
    """
    if isinstance(value, GuardInput):
        return value
    if isinstance(value, dict):
        try:
            return GuardInput.model_validate(value)
        except InputError:
            raise
        except ValidationError as exc:
            raise InputError(f"invalid guardrail input: {describe_errors(exc)}") from exc
    raise InputError(
        f"guardrail input must be a GuardInput or a dict with a 'response' key, "
        f"not {type(value).__name__}"
    )


def read_passage_rows(path: str | Path, strict: bool = False) -> list[tuple[int, dict[str, Any]]]:
    """Read a passages JSONL file (``{"text": ..., "score": ..., "source": ...}`` a line).

    Returns ``(line number, row)`` pairs; blank lines are skipped. A missing file, a line that
    is not JSON, or one without a string ``text`` raises ``InputError`` naming the line; with
    ``strict``, so does a key a :class:`Passage` does not have (``"scroe"``: did you mean
    ``score``?). Without it, other keys are the caller's (a corpus keeps them as metadata).
    """
    from guardrail.jsonl import iter_jsonl

    file = Path(path)
    if not file.exists():
        raise InputError(f"passages file not found: {file}")
    rows: list[tuple[int, dict[str, Any]]] = []
    for n, row in iter_jsonl(file):
        if strict:
            try:
                check_keys(row, Passage.model_fields)
            except InputError as exc:
                raise InputError(f"{file}:{n}: {exc}") from exc
        if not isinstance(row.get("text"), str):
            raise InputError(f"{file}:{n}: each line needs a string 'text' field")
        rows.append((n, row))
    return rows
