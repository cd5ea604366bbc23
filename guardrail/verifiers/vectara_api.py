"""Vectara's hosted HHEM scoring (``evaluate_factual_consistency``) as a verifier backend.

``verifier: "vectara:api"`` sends each (premise, claim) pair to
``POST https://api.vectara.io/v2/evaluate_factual_consistency`` with ``{"generated_text":
claim, "source_texts": [premise]}`` and the API key from ``VECTARA_API_KEY`` (header
``x-api-key``); the response's ``score`` (0–1, higher = consistent) is the support probability
of a 2-way :class:`NLIPrediction`. Needs the network and ``httpx`` (the ``service`` extra);
tests inject an ``httpx.Client`` with a mock transport, as the Groq judge is faked.

Example::

    v = load_verifier("vectara:api")            # VECTARA_API_KEY in the environment
    [p] = v.predict([("It rained all day.", "The ground stayed dry.")])
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from guardrail.errors import ConfigError, MissingDependencyError, VerifierError
from guardrail.verifiers.base import NLIPrediction, Pair, Verifier
from guardrail.verifiers.encoding import check_pairs
from guardrail.verifiers.preset_backends import supported_predictions

ENDPOINT = "https://api.vectara.io/v2/evaluate_factual_consistency"
SPEC = "vectara:api"
SCORE_KEYS = ("score", "factual_consistency_score")


class VectaraAPIVerifier(Verifier):
    """Scores pairs with Vectara's hosted HHEM (one request per pair).

    Args:
        api_key: default ``$VECTARA_API_KEY``.
        client: an ``httpx.Client`` (tests pass one with a mock transport).
        endpoint: the scoring URL.
        timeout: seconds per request.
        language: the ``language`` field of the request (ISO 639-3, default ``eng``).
    """

    name = "vectara-hhem-api"
    max_tokens = 8192

    def __init__(
        self,
        api_key: str | None = None,
        *,
        client: Any = None,
        endpoint: str = ENDPOINT,
        timeout: float = 20.0,
        language: str = "eng",
    ) -> None:
        key = api_key or os.environ.get("VECTARA_API_KEY", "")
        if not key:
            raise ConfigError("the Vectara scoring API needs an API key: set VECTARA_API_KEY")
        if client is None:
            try:
                import httpx
            except ImportError as exc:
                raise MissingDependencyError("httpx", "service") from exc
            client = httpx.Client(timeout=timeout)
        self._client = client
        self._headers = {"x-api-key": key, "Content-Type": "application/json"}
        self.endpoint = endpoint
        self.language = language

    def _score(self, premise: str, claim: str) -> float:
        payload = {"generated_text": claim, "source_texts": [premise], "language": self.language}
        try:
            response = self._client.post(self.endpoint, json=payload, headers=self._headers)
            response.raise_for_status()
            data = response.json()
        except Exception as exc:
            raise VerifierError(f"Vectara scoring API failed: {exc}") from exc
        for key in SCORE_KEYS:
            value = data.get(key) if isinstance(data, dict) else None
            if isinstance(value, (int, float)):
                return float(value)
        raise VerifierError(f"Vectara scoring API answered without a score: {data!r}"[:300])

    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        pairs = check_pairs(pairs)
        scores = np.array([self._score(p, h) for p, h in pairs], dtype=np.float64)
        return supported_predictions(scores) if len(scores) else []
