"""The hosted Vectara scoring backend, faked with an httpx mock transport (no network)."""

from __future__ import annotations

import json

import httpx
import pytest

from guardrail.errors import ConfigError, VerifierError
from guardrail.verifiers.hybrid import HybridVerifier, usage_of
from guardrail.verifiers.scripted import ScriptedVerifier
from guardrail.verifiers.vectara_api import ENDPOINT, VectaraAPIVerifier


def _client(score: object = 0.9, status: int = 200) -> tuple[httpx.Client, list[dict]]:
    seen: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(
            {
                "url": str(request.url),
                "key": request.headers["x-api-key"],
                "body": json.loads(request.content),
            }
        )
        return httpx.Response(status, json={"score": score})

    return httpx.Client(transport=httpx.MockTransport(handler)), seen


def test_request_format_and_score() -> None:
    client, seen = _client(0.9)
    v = VectaraAPIVerifier("k-123", client=client)
    [p] = v.predict([("It rained all day.", "The ground is wet.")])
    assert p.entailment == pytest.approx(0.9) and p.contradiction == 0.0
    assert seen == [
        {
            "url": ENDPOINT,
            "key": "k-123",
            "body": {
                "generated_text": "The ground is wet.",
                "source_texts": ["It rained all day."],
                "language": "eng",
            },
        }
    ]


def test_errors_are_typed_and_the_hybrid_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VECTARA_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="VECTARA_API_KEY"):
        VectaraAPIVerifier()
    client, _ = _client(status=503)
    down = VectaraAPIVerifier("k", client=client)
    with pytest.raises(VerifierError):
        down.predict([("a", "b")])
    hybrid = HybridVerifier([down, ScriptedVerifier(default="entailment", name="local")])
    [p] = hybrid.predict([("a", "b")])
    usage = usage_of([p])
    assert p.label == "entailment" and usage.decided == ["local"]
    assert "vectara-hhem-api dropped (failed: VerifierError)" in (usage.describe() or "")
