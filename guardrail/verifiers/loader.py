"""``load_verifier``: turn a spec into a :class:`Verifier`, loading each model once per process.

Specs:

- ``None`` / ``"bundled"`` — the model shipped in ``guardrail/verifiers/bundled/`` (ONNX);
- a local directory with ``model.onnx`` — :class:`~guardrail.verifiers.onnx_backend.OnnxVerifier`;
- a local directory with a transformers model, or a Hugging Face id —
  :class:`~guardrail.verifiers.hf_backend.HFVerifier`;
- ``"llm:groq:<model>"`` (e.g. ``llm:groq:llama-3.1-8b-instant``, needs ``GROQ_API_KEY``) or a
  LangChain chat model object — :class:`~guardrail.verifiers.llm_judge.LLMJudgeVerifier`;
- a preset name (``"minicheck-deberta-l"``, see :mod:`guardrail.verifiers.presets`) — the
  model by its hub id, called in its authors' format; ``{"preset": NAME, "path": DIR}`` — the
  same from a local directory (offline);
- ``"vectara:api"`` — Vectara's hosted HHEM scoring (``VECTARA_API_KEY``),
  :class:`~guardrail.verifiers.vectara_api.VectaraAPIVerifier`;
- a list of specs (``["hhem-2.1-open", "bundled"]``) —
  :class:`~guardrail.verifiers.hybrid.HybridVerifier`, which drops a member that fails;
- a :class:`Verifier` — returned as is.

A spec is parsed once (:func:`~guardrail.verifiers.spec.parse_spec`) and built from its typed
value. This module is the registry: it builds a composite's members first (each cached), then
composes them; the composites (:mod:`~guardrail.verifiers.hybrid`,
:mod:`~guardrail.verifiers.routing`) take verifiers already built and never load one.

Example::

    from guardrail.verifiers import load_verifier
    v = load_verifier()                                           # offline default
    v = load_verifier("cross-encoder/nli-deberta-v3-xsmall")      # online
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Hashable
from pathlib import Path
from typing import Any, get_args

from guardrail.errors import ConfigError, GuardrailError, ModelLoadError
from guardrail.verifiers.base import Verifier
from guardrail.verifiers.hybrid import HybridVerifier
from guardrail.verifiers.presets import get_preset, preset_names
from guardrail.verifiers.routing import PendingRoute, RoutedVerifier, routed
from guardrail.verifiers.spec import (
    BUNDLED_ALIASES,
    LLM_PREFIX,
    BundledSpec,
    ChatModelSpec,
    DirSpec,
    GivenSpec,
    HubSpec,
    HybridSpec,
    InvalidSpec,
    LanguageRoutes,
    LanguagesSpec,
    LLMSpec,
    PresetSpec,
    VectaraSpec,
    VerifierSpec,
    parse_languages,
    parse_spec,
)

__all__ = [
    "BUNDLED_ALIASES",
    "LLM_PREFIX",
    "build_preset",
    "bundled_dir",
    "clear_cache",
    "load_routed",
    "load_verifier",
]

logger = logging.getLogger(__name__)

_SPEC_TYPES = get_args(VerifierSpec)
_cache: dict[Hashable, Verifier] = {}
_key_locks: dict[Hashable, threading.Lock] = {}
_lock = threading.Lock()


def bundled_dir() -> Path:
    """The folder of the verifier shipped inside guardrail."""
    from guardrail.models import bundled_verifier_path

    return bundled_verifier_path()


def load_verifier(spec: Any = None, **options: Any) -> Verifier:
    """Return the verifier for ``spec``, cached per spec (and options) for the process.

    Args:
        spec: see the module docstring; or a spec already parsed
            (:func:`~guardrail.verifiers.spec.parse_spec`).
        options: passed to the backend (``threads``, ``batch_size``, ``max_tokens``; for the
            LLM judge ``max_concurrency``).

    Raises:
        ModelLoadError: the model is missing or cannot be loaded (e.g. no bundled model yet).
        ConfigError: the spec is not understood.
    """
    parsed = spec if isinstance(spec, _SPEC_TYPES) else parse_spec(spec)
    if isinstance(parsed, GivenSpec):
        return parsed.verifier
    key = (parsed, tuple(sorted(options.items())))
    cached = _cache.get(key)
    if cached is not None:
        return cached
    with _lock:
        key_lock = _key_locks.setdefault(key, threading.Lock())
    with key_lock:  # one load per spec; different specs load in parallel
        cached = _cache.get(key)
        if cached is None:
            cached = _build(parsed, options)
            _cache[key] = cached
        return cached


def load_routed(default: Verifier, verifier_languages: Any, **options: Any) -> Verifier:
    """``default`` as ``models.verifier_languages`` configures it: unchanged for its own
    languages, a :class:`RoutedVerifier` for other languages or a mapping of routes (each
    route loaded through :func:`load_verifier` on its first claim, so a route naming the
    default's spec is the same object).

    Args:
        verifier_languages: the config value, or one parsed by
            :func:`~guardrail.verifiers.spec.parse_languages`.
        options: passed to each route's loader.
    """
    languages: LanguagesSpec = (
        verifier_languages
        if isinstance(verifier_languages, get_args(LanguagesSpec))
        else parse_languages(verifier_languages)
    )
    if not isinstance(languages, LanguageRoutes):
        return routed(default, languages.languages)
    routes: dict[str, Verifier | PendingRoute] = {}
    for language, spec in languages.routes:
        if isinstance(spec, GivenSpec):
            routes[language] = spec.verifier
        else:
            routes[language] = PendingRoute(
                spec.label, functools.partial(load_verifier, spec, **options)
            )
    return RoutedVerifier(default, routes)


def clear_cache() -> None:
    """Forget every loaded verifier (tests, or to free memory)."""
    with _lock:
        _cache.clear()
        _key_locks.clear()


def _build(spec: VerifierSpec, options: dict[str, Any]) -> Verifier:
    """A new verifier for ``spec`` (members of a hybrid through the cache)."""
    if isinstance(spec, GivenSpec):
        return spec.verifier
    if isinstance(spec, InvalidSpec):
        raise spec.error
    if isinstance(spec, HybridSpec):
        return _build_hybrid(spec, options)
    if isinstance(spec, BundledSpec):
        return _load_bundled(options)
    if isinstance(spec, PresetSpec):
        return build_preset(spec.name, spec.path, options)
    if isinstance(spec, VectaraSpec):
        from guardrail.verifiers.vectara_api import VectaraAPIVerifier

        return VectaraAPIVerifier(**options)
    if isinstance(spec, LLMSpec):
        from guardrail.verifiers.llm_judge import LLMJudgeVerifier, chat_model_from_spec

        return LLMJudgeVerifier(chat_model_from_spec(spec.model), **options)
    if isinstance(spec, ChatModelSpec):
        from guardrail.verifiers.llm_judge import LLMJudgeVerifier

        return LLMJudgeVerifier(spec.model, **options)
    if isinstance(spec, DirSpec):
        if not spec.path.is_dir():
            raise ModelLoadError(f"no verifier model at {spec.label.strip()!r}")
        return _load_dir(spec.path, options)
    if isinstance(spec, HubSpec):
        from guardrail.verifiers.hf_backend import HFVerifier

        return HFVerifier(spec.model_id, **options)
    raise ConfigError(f"cannot make a verifier from {spec!r}")  # pragma: no cover


def _build_hybrid(spec: HybridSpec, options: dict[str, Any]) -> Verifier:
    """The members first (each cached; one that fails to load is dropped with a warning),
    then their combination."""
    if not spec.members:
        raise ModelLoadError("a hybrid verifier needs at least one member")
    members: list[Verifier] = []
    failures: dict[str, str] = {}
    messages: list[str] = []
    for member in spec.members:
        try:
            members.append(load_verifier(member, **options))
        except GuardrailError as exc:
            logger.warning("hybrid verifier: %s not loaded, dropped: %s", member.label, exc)
            failures[member.label] = f"not loaded: {type(exc).__name__}"
            messages.append(str(exc).strip().replace("\n", " "))
    if not members:
        raise ModelLoadError("no member of the hybrid verifier loaded: " + " | ".join(messages))
    return HybridVerifier(members, load_failures=failures, name=spec.label)


def _load_bundled(options: dict[str, Any]) -> Verifier:
    path = bundled_dir()
    if not (path / "model.onnx").exists():
        raise ModelLoadError(
            f"the bundled verifier is not in this build yet ({path} has no model.onnx). "
            "Train and export one with `guardrail train-verifier --data PAIRS --out DIR` and "
            "copy DIR/export/* there, or pass a model path / Hugging Face id as the verifier"
        )
    from guardrail.verifiers.onnx_backend import OnnxVerifier

    return OnnxVerifier(path, **options)


def _load_dir(path: Path, options: dict[str, Any]) -> Verifier:
    from guardrail.verifiers.preset_onnx import exported_preset

    exported = exported_preset(path)
    if exported is not None:
        return build_preset(exported, str(path), options)
    if (path / "model.onnx").exists():
        from guardrail.verifiers.onnx_backend import OnnxVerifier

        return OnnxVerifier(path, **options)
    if (path / "config.json").exists():
        from guardrail.verifiers.hf_backend import HFVerifier

        return HFVerifier(path, **options)
    raise ModelLoadError(f"{path} holds neither model.onnx nor a transformers config.json")


def build_preset(name: str, path: str | None, options: dict[str, Any]) -> Verifier:
    """The verifier of preset ``name``, from ``path`` (a local directory) or its hub id."""
    preset = get_preset(name)
    if preset is None:
        raise ConfigError(f"unknown verifier preset {name!r}; known: {', '.join(preset_names())}")
    if preset.kind == "bundled":
        return _load_dir(Path(path), options) if path else _load_bundled(options)
    if preset.kind == "nli":
        from guardrail.verifiers.hf_backend import HFVerifier
        from guardrail.verifiers.preset_backends import missing_model_message

        source = path or preset.hub_id
        if path and not Path(path).expanduser().is_dir():
            raise ModelLoadError(missing_model_message(preset, path))
        try:
            verifier = HFVerifier(source, **options)
        except ModelLoadError as exc:
            raise ModelLoadError(missing_model_message(preset, source)) from exc
        # Named by the preset (a stable key for its calibration, never an install path), and
        # covering the languages of its model card.
        verifier.name = preset.name
        verifier.languages = preset.languages
        verifier.preset = preset
        return verifier
    from guardrail.verifiers import preset_backends as backends

    if path and (Path(path) / "model.onnx").exists():
        from guardrail.verifiers.preset_onnx import OnnxPresetVerifier, OnnxSpanVerifier

        onnx_cls = OnnxSpanVerifier if preset.kind == "span" else OnnxPresetVerifier
        return onnx_cls(preset, path, **options)
    cls: type[backends.PresetVerifier]
    if preset.kind == "classifier":
        cls = backends.ClassifierPresetVerifier
    elif preset.kind == "seq2seq":
        cls = backends.MiniCheckT5Verifier
    elif preset.kind == "hhem":
        cls = backends.HHEMVerifier
    else:
        from guardrail.verifiers.span_backend import SpanPresetVerifier

        cls = SpanPresetVerifier
    return cls(preset, path, **options)
