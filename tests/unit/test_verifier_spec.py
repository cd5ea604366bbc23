"""A verifier spec is parsed once into a typed value; the loader builds from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from guardrail.errors import ConfigError
from guardrail.verifiers import NLIPrediction, Verifier, loader
from guardrail.verifiers.routing import PendingRoute, RoutedVerifier
from guardrail.verifiers.scripted import ScriptedVerifier
from guardrail.verifiers.spec import (
    BundledSpec,
    CoveredLanguages,
    DirSpec,
    GivenSpec,
    HubSpec,
    HybridSpec,
    InvalidSpec,
    LanguageRoutes,
    LLMSpec,
    PresetSpec,
    VectaraSpec,
    parse_languages,
    parse_spec,
)


@pytest.mark.parametrize(
    ("written", "parsed"),
    [
        (None, BundledSpec()),
        ("bundled", BundledSpec()),
        (" Offline ", BundledSpec()),
        ("minicheck-deberta-l", PresetSpec("minicheck-deberta-l")),
        ("HHEM-2.1-open", PresetSpec("hhem-2.1-open")),
        ({"preset": "hhem-2.1-open", "path": "./m"}, PresetSpec("hhem-2.1-open", "./m")),
        ("hhem-2.1-open=./m", PresetSpec("hhem-2.1-open", "./m")),
        ("cross-encoder/nli-deberta-v3-xsmall", HubSpec("cross-encoder/nli-deberta-v3-xsmall")),
        ("llm:groq:llama-3.1-8b-instant", LLMSpec("groq:llama-3.1-8b-instant")),
        ("vectara:api", VectaraSpec()),
        (
            ["hhem-2.1-open", "bundled"],
            HybridSpec((PresetSpec("hhem-2.1-open"), BundledSpec())),
        ),
        ("hhem-2.1-open,bundled", HybridSpec((PresetSpec("hhem-2.1-open"), BundledSpec()))),
    ],
)
def test_each_written_form_parses_to_its_value(written: Any, parsed: Any) -> None:
    assert parse_spec(written) == parsed


def test_a_directory_is_one_spec_however_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "m").mkdir()
    monkeypatch.chdir(tmp_path)
    relative, absolute = parse_spec("./m"), parse_spec(tmp_path / "m")
    assert isinstance(relative, DirSpec) and relative == absolute
    assert relative.path == Path("./m") and relative.label == "./m"  # named as written
    assert isinstance(parse_spec("./absent"), DirSpec)  # fails when it loads, not here


def test_bad_specs_are_config_errors_that_say_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="empty verifier spec"):
        parse_spec("  ")
    with pytest.raises(ConfigError, match="cannot make a verifier from int"):
        parse_spec(42)
    with pytest.raises(ConfigError, match=r'\{"preset": NAME, "path": DIR\}'):
        parse_spec({"preset": "x", "other": 1})
    with pytest.raises(ConfigError, match="unknown verifier preset 'nope'; known: bundled"):
        parse_spec({"preset": "nope"})
    (tmp_path / "f.onnx").write_text("x")
    with pytest.raises(ConfigError, match="give the model's directory"):
        parse_spec(tmp_path / "f.onnx")


def test_a_hybrid_keeps_a_member_it_cannot_parse_to_drop_when_it_loads() -> None:
    parsed = parse_spec([{"preset": "nope"}, "bundled"])
    assert isinstance(parsed, HybridSpec)
    bad, good = parsed.members
    assert isinstance(bad, InvalidSpec) and bad.label == "nope" and good == BundledSpec()
    assert parsed.label == "hybrid(nope, bundled)"


def test_a_verifier_is_given_as_it_is() -> None:
    v = ScriptedVerifier(name="x")
    assert parse_spec(v) == GivenSpec(v) and parse_spec(v).label == "x"
    assert hash(parse_spec(v)) == hash(GivenSpec(v))


def test_languages_parse_as_a_list_or_routes() -> None:
    assert parse_languages(["en", "de"]) == CoveredLanguages(("en", "de"))
    assert parse_languages({"ZH": "multilingual-minilmv2-l6-xnli"}) == LanguageRoutes(
        (("zh", PresetSpec("multilingual-minilmv2-l6-xnli")),)
    )


class _Named(Verifier):
    def __init__(self, name: str) -> None:
        self.name = name

    def predict(self, pairs: Any) -> list[NLIPrediction]:
        return [NLIPrediction(entailment=1, neutral=0, contradiction=0) for _ in pairs]


def test_the_loader_builds_members_then_composes(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Any] = []

    def build(spec: Any, options: dict[str, Any]) -> Verifier:
        if isinstance(spec, HybridSpec):
            return real(spec, options)
        built.append(spec)
        return _Named(spec.label)

    real = loader._build
    monkeypatch.setattr(loader, "_build", build)
    loader.clear_cache()
    try:
        hybrid = loader.load_verifier(["a/b", "c/d"])
        assert built == [HubSpec("a/b"), HubSpec("c/d")]
        assert hybrid.name == "hybrid(a/b, c/d)"
        assert loader.load_verifier("a/b") is loader.load_verifier(HubSpec("a/b"))  # cached
    finally:
        loader.clear_cache()


def test_routes_load_on_their_first_claim(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[str] = []

    def load(spec: Any = None, **options: Any) -> Verifier:
        loads.append(spec.label)  # a parsed spec
        return _Named("zh-model")

    monkeypatch.setattr(loader, "load_verifier", load)
    default = ScriptedVerifier(name="en-model")
    router = loader.load_routed(default, {"zh": "multilingual-minilmv2-l6-xnli"})
    assert isinstance(router, RoutedVerifier) and loads == []
    assert isinstance(router.routes["zh"], PendingRoute)
    assert router.name == "routed(zh: multilingual-minilmv2-l6-xnli)"
    assert router.route("zh").name == "zh-model" and router.route("zh") is router.route("zh")
    assert loads == ["multilingual-minilmv2-l6-xnli"]
    assert loader.load_routed(default, ["en"]) is default
