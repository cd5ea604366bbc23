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

Example::

    from guardrail.verifiers import load_verifier
    v = load_verifier()                                           # offline default
    v = load_verifier("cross-encoder/nli-deberta-v3-xsmall")      # online
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

from guardrail.errors import ConfigError, ModelLoadError
from guardrail.verifiers.base import Verifier
from guardrail.verifiers.presets import get_preset, preset_names

logger = logging.getLogger(__name__)

BUNDLED_ALIASES = frozenset({"bundled", "offline", "offline:bundled", "default"})
LLM_PREFIX = "llm:"

_cache: dict[tuple[str, Any], Verifier] = {}
_key_locks: dict[tuple[str, Any], threading.Lock] = {}
_lock = threading.Lock()


def bundled_dir() -> Path:
    """The folder of the verifier shipped inside guardrail."""
    from guardrail.models import bundled_verifier_path

    return bundled_verifier_path()


def load_verifier(spec: Any = None, **options: Any) -> Verifier:
    """Return the verifier for ``spec``, cached per spec (and options) for the process.

    Args:
        spec: see the module docstring.
        options: passed to the backend (``threads``, ``batch_size``, ``max_tokens``; for the
            LLM judge ``max_concurrency``).

    Raises:
        ModelLoadError: the model is missing or cannot be loaded (e.g. no bundled model yet).
        ConfigError: the spec is not understood.
    """
    if isinstance(spec, Verifier):
        return spec
    key = _cache_key(spec, options)
    cached = _cache.get(key)
    if cached is not None:
        return cached
    with _lock:
        key_lock = _key_locks.setdefault(key, threading.Lock())
    with key_lock:  # one load per spec; different specs load in parallel
        cached = _cache.get(key)
        if cached is None:
            cached = _build(spec, options)
            _cache[key] = cached
        return cached


def clear_cache() -> None:
    """Forget every loaded verifier (tests, or to free memory)."""
    with _lock:
        _cache.clear()
        _key_locks.clear()


def _cache_key(spec: Any, options: dict[str, Any]) -> tuple[str, Any]:
    opts = tuple(sorted(options.items()))
    if isinstance(spec, (list, tuple)):
        return ("hybrid:" + "|".join(_cache_key(s, {})[0] for s in spec), opts)
    if isinstance(spec, dict):
        return ("preset:" + json.dumps(_preset_spec(spec), sort_keys=True), opts)
    if spec is None or (isinstance(spec, str) and spec.strip().lower() in BUNDLED_ALIASES):
        return ("bundled", opts)
    if isinstance(spec, (str, Path)):
        text = str(spec).strip()
        path = Path(text).expanduser()
        if path.exists():
            return (str(path.resolve()), opts)
        return (text, opts)
    # A chat model object: keyed by identity (the cached judge keeps the object alive).
    return (f"object:{id(spec)}", opts)


def _build(spec: Any, options: dict[str, Any]) -> Verifier:
    if isinstance(spec, (list, tuple)):
        from guardrail.verifiers.hybrid import HybridVerifier

        return HybridVerifier(list(spec), **options)
    if isinstance(spec, dict):
        preset_name, preset_path = _preset_spec(spec)
        return build_preset(preset_name, preset_path, options)
    if isinstance(spec, str) and get_preset(spec) is not None and not Path(spec).exists():
        return build_preset(spec, None, options)
    if spec is None or (isinstance(spec, str) and spec.strip().lower() in BUNDLED_ALIASES):
        return _load_bundled(options)
    if isinstance(spec, (str, Path)):
        text = str(spec).strip()
        if not text:
            raise ConfigError("empty verifier spec; use None for the bundled model")
        if text == "vectara:api":
            from guardrail.verifiers.vectara_api import VectaraAPIVerifier

            return VectaraAPIVerifier(**options)
        if text.startswith(LLM_PREFIX):
            from guardrail.verifiers.llm_judge import LLMJudgeVerifier, chat_model_from_spec

            return LLMJudgeVerifier(chat_model_from_spec(text[len(LLM_PREFIX) :]), **options)
        path = Path(text).expanduser()
        if path.is_dir():
            return _load_dir(path, options)
        if path.exists():
            raise ConfigError(f"verifier spec {text!r} is a file; give the model's directory")
        if text.startswith((".", "/", "~")):
            raise ModelLoadError(f"no verifier model at {text!r}")
        from guardrail.verifiers.hf_backend import HFVerifier

        return HFVerifier(text, **options)
    if _is_chat_model(spec):
        from guardrail.verifiers.llm_judge import LLMJudgeVerifier

        return LLMJudgeVerifier(spec, **options)
    raise ConfigError(
        f"cannot make a verifier from {type(spec).__name__}; pass None, a path, a Hugging Face "
        "id, 'llm:groq:<model>' or a LangChain chat model"
    )


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
    from guardrail.verifiers.preset_export import exported_preset

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


def _preset_spec(spec: dict[str, Any]) -> tuple[str, str | None]:
    unknown = set(spec) - {"preset", "path"}
    name = spec.get("preset")
    if unknown or not isinstance(name, str):
        raise ConfigError(
            f'a verifier given as a mapping is {{"preset": NAME, "path": DIR}}, got {spec!r}'
        )
    path = spec.get("path")
    return name, str(path) if path is not None else None


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
        from guardrail.verifiers.preset_export import OnnxPresetVerifier, OnnxSpanVerifier

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


def _is_chat_model(obj: Any) -> bool:
    try:
        from langchain_core.language_models import BaseChatModel
    except ImportError:  # pragma: no cover - langchain-core is a core dependency
        return False
    return isinstance(obj, BaseChatModel)
