"""Old configuration keys, read for one release with a warning naming the new key.

``RENAMED`` maps an old dotted key to its new dotted key. :func:`renamed` applies the map to a
user's config mapping before it is validated (``GuardrailConfig.load``, ``from_profile`` and
``model_validate`` all go through it): the value moves to the new key and a
``DeprecationWarning`` names both. An old key and its new key given together with different
values, or two old keys of one new key that disagree, are a ``ConfigError`` naming them.

``MOVED`` lists sections that left the core configuration: they are still accepted where they
were, with a warning saying where they live now.

Example::

    >>> import warnings
    >>> with warnings.catch_warnings(record=True):
    ...     renamed({"a": {"old": 1}}, {"a.old": "a.new"})
    {'a': {'new': 1}}
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from guardrail.errors import ConfigError

#: Old dotted key → new dotted key (removed one release after the rename).
RENAMED: dict[str, str] = {
    # the eleven confidence cut-offs became the five rungs of the confidence ladder
    "hallucination.contradiction_flag": "confidence.noted",
    "correction.annotation_min_confidence": "confidence.noted",
    "scoring.uncertain_flag_low": "confidence.noted",
    "scoring.guidance_flag_confidence": "confidence.named",
    "decision.strong_flag": "confidence.blocking",
    "scoring.review_flag_confidence": "confidence.blocking",
    "scoring.uncertain_flag_high": "confidence.blocking",
    "facts.history_contradiction": "confidence.blocking",
    "scoring.flag_confidence": "confidence.penalised",
    "scoring.kb_contradiction_confidence": "confidence.certain",
    "correction.removal_min_confidence": "confidence.certain",
}

#: Section → where it lives now (accepted in the core config for one release, with a warning).
MOVED: dict[str, str] = {
    "streaming": "the settings of a guarded stream are chains.stream_checks.StreamingConfig, "
    "given to the chain that streams (with_guardrail(..., streaming=...), GuardedRAG, "
    "guard_agent)",
}

_MISSING = object()


def _get(data: Mapping[str, Any], path: list[str]) -> Any:
    node: Any = data
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def _pop(data: dict[str, Any], path: list[str]) -> None:
    """Remove ``path`` (copying the dicts on the way, so the caller's mapping is untouched)."""
    node = data
    for part in path[:-1]:
        node[part] = dict(node[part])
        node = node[part]
    del node[path[-1]]


def _set(data: dict[str, Any], path: list[str], value: Any) -> None:
    node = data
    for part in path[:-1]:
        child = node.get(part)
        node[part] = dict(child) if isinstance(child, Mapping) else {}
        node = node[part]
    node[path[-1]] = value


def renamed(data: Mapping[str, Any], renames: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``data`` with every old key of ``renames`` (default ``RENAMED``) moved to its new key,
    one ``DeprecationWarning`` per old key found."""
    renames = RENAMED if renames is None else renames
    out = dict(data)
    given: dict[str, str] = {}  # new key → the old key that gave its value
    for old, new in renames.items():
        value = _get(out, old.split("."))
        if value is _MISSING:
            continue
        _pop(out, old.split("."))
        current = _get(out, new.split("."))
        if current is not _MISSING and current != value:
            source = given.get(new, new)
            raise ConfigError(
                f"config keys {old!r} (deprecated, now {new!r}) and {source!r} disagree "
                f"({value!r} and {current!r}): keep only {new!r}"
            )
        _set(out, new.split("."), value)
        given.setdefault(new, old)
        warnings.warn(
            f"config key {old!r} is deprecated and will be removed in the next release: "
            f"use {new!r}",
            DeprecationWarning,
            stacklevel=3,
        )
    return out


def moved(data: Mapping[str, Any]) -> None:
    """Warn for every section of ``MOVED`` that ``data`` still holds."""
    for section, home in MOVED.items():
        if section in data:
            warnings.warn(
                f"config section {section!r} is deprecated in the guardrail config and will be "
                f"removed in the next release: {home}",
                DeprecationWarning,
                stacklevel=3,
            )
