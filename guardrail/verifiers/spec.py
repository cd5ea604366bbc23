"""Verifier specs, parsed once: what a user configures, as a typed value the loader builds.

:func:`parse_spec` reads every form ``models.verifier`` (and ``--verifier``) takes:

==================================================  =============================
written                                             parsed as
==================================================  =============================
``None``, ``"bundled"`` (``offline``, ``default``)   :class:`BundledSpec`
a preset name (``"minicheck-deberta-l"``)           :class:`PresetSpec`
``{"preset": NAME, "path": DIR}``, ``NAME=DIR``     :class:`PresetSpec` with a path
a local directory (or a path-like ``./x``)           :class:`DirSpec`
a Hugging Face id                                   :class:`HubSpec`
``"llm:groq:<model>"``                              :class:`LLMSpec`
``"vectara:api"``                                   :class:`VectaraSpec`
a LangChain chat model object                       :class:`ChatModelSpec`
a list (``["hhem-2.1-open", "bundled"]``), ``A,B``  :class:`HybridSpec`
a :class:`Verifier`                                 :class:`GivenSpec`
==================================================  =============================

The command-line forms (``A,B``, ``NAME=DIR``) are the same specs written as one string, so
``--verifier`` and ``--route`` values go into the config as they are written. And
:func:`parse_languages` reads ``models.verifier_languages`` (a list of covered languages, or
a mapping from language to a spec) as :class:`CoveredLanguages` or :class:`LanguageRoutes`.
A spec is hashable: equal specs name the same model (a directory by its resolved path), which
is what the loader caches by. A member of a hybrid that cannot be parsed is kept as an
:class:`InvalidSpec` so the hybrid drops it when it loads, as it drops a member that fails to
load.

Example::

    parse_spec(["hhem-2.1-open", "bundled"])
    # HybridSpec(members=(PresetSpec(name='hhem-2.1-open', path=None), BundledSpec()))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guardrail.errors import ConfigError
from guardrail.verifiers.base import Verifier
from guardrail.verifiers.presets import get_preset, preset_names

BUNDLED_ALIASES = frozenset({"bundled", "offline", "offline:bundled", "default"})
"""Names of the verifier shipped in the package."""
LLM_PREFIX = "llm:"
VECTARA_API = "vectara:api"


@dataclass(frozen=True)
class BundledSpec:
    """The model shipped in ``guardrail/verifiers/bundled/`` (ONNX)."""

    label: str = field(default="bundled", compare=False)


@dataclass(frozen=True)
class PresetSpec:
    """A named fact-checker preset, from ``path`` (a local directory) or its hub id."""

    name: str
    path: str | None = None
    label: str = field(default="", compare=False)


@dataclass(frozen=True)
class DirSpec:
    """A local model directory (ONNX, transformers, or an exported preset)."""

    resolved: str
    """The directory's resolved path: two spellings of one folder are one spec."""
    path: Path = field(compare=False)
    """The path as written (user ``~`` expanded): backends name the model by it."""
    label: str = field(default="", compare=False)


@dataclass(frozen=True)
class HubSpec:
    """A Hugging Face model id (the transformers backend)."""

    model_id: str
    label: str = field(default="", compare=False)


@dataclass(frozen=True)
class LLMSpec:
    """An LLM judge: ``llm:<provider>:<model>`` (``model`` is ``<provider>:<model>``)."""

    model: str
    label: str = field(default="", compare=False)


@dataclass(frozen=True)
class VectaraSpec:
    """Vectara's hosted HHEM scoring (``VECTARA_API_KEY``)."""

    label: str = field(default=VECTARA_API, compare=False)


@dataclass(frozen=True, eq=False)
class ChatModelSpec:
    """A LangChain chat model object, as an LLM judge (one spec per object)."""

    model: Any
    label: str = field(default="", compare=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChatModelSpec) and other.model is self.model

    def __hash__(self) -> int:
        return id(self.model)


@dataclass(frozen=True, eq=False)
class GivenSpec:
    """A verifier already built: used as it is."""

    verifier: Verifier

    @property
    def label(self) -> str:
        return self.verifier.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GivenSpec) and other.verifier is self.verifier

    def __hash__(self) -> int:
        return id(self.verifier)


@dataclass(frozen=True)
class InvalidSpec:
    """A hybrid member that could not be parsed: the hybrid drops it when it loads."""

    label: str
    error: ConfigError = field(compare=False)


@dataclass(frozen=True)
class HybridSpec:
    """Several verifiers combined, with fallback (:mod:`guardrail.verifiers.hybrid`)."""

    members: tuple[VerifierSpec, ...]

    @property
    def label(self) -> str:
        return "hybrid(" + ", ".join(m.label for m in self.members) + ")"


VerifierSpec = (
    BundledSpec
    | PresetSpec
    | DirSpec
    | HubSpec
    | LLMSpec
    | VectaraSpec
    | ChatModelSpec
    | GivenSpec
    | InvalidSpec
    | HybridSpec
)
"""Every parsed verifier spec."""


@dataclass(frozen=True)
class CoveredLanguages:
    """``verifier_languages`` as a list: the languages the one verifier covers."""

    languages: tuple[str, ...]


@dataclass(frozen=True)
class LanguageRoutes:
    """``verifier_languages`` as a mapping: a verifier spec per language (lower case)."""

    routes: tuple[tuple[str, VerifierSpec], ...]


LanguagesSpec = CoveredLanguages | LanguageRoutes


def parse_spec(spec: Any) -> VerifierSpec:
    """The typed value of a verifier spec (see the module docstring).

    Raises:
        ConfigError: the spec is not understood (the message says what is).
    """
    if isinstance(spec, Verifier):
        return GivenSpec(spec)
    if isinstance(spec, (list, tuple)):
        return HybridSpec(tuple(_member(s) for s in spec))
    if isinstance(spec, Mapping):
        return _preset_mapping(spec)
    if spec is None:
        return BundledSpec()
    if isinstance(spec, (str, Path)):
        return _parse_text(str(spec), str(spec))
    if _is_chat_model(spec):
        return ChatModelSpec(spec, label=type(spec).__name__)
    raise ConfigError(
        f"cannot make a verifier from {type(spec).__name__}; pass None, a path, a Hugging Face "
        "id, 'llm:groq:<model>' or a LangChain chat model"
    )


def parse_languages(verifier_languages: Any) -> LanguagesSpec:
    """``models.verifier_languages`` as a typed value (a mapping's specs parsed)."""
    if isinstance(verifier_languages, Mapping):
        return LanguageRoutes(
            tuple((str(k).lower(), parse_spec(v)) for k, v in verifier_languages.items())
        )
    return CoveredLanguages(tuple(verifier_languages or ()))


def _member(spec: Any) -> VerifierSpec:
    try:
        return parse_spec(spec)
    except ConfigError as exc:
        return InvalidSpec(_raw_label(spec), exc)


def _raw_label(spec: Any) -> str:
    if isinstance(spec, Mapping) and isinstance(spec.get("preset"), str):
        return str(spec["preset"])
    return str(spec)


def _preset_mapping(spec: Mapping[str, Any]) -> PresetSpec:
    unknown = set(spec) - {"preset", "path"}
    name = spec.get("preset")
    if unknown or not isinstance(name, str):
        raise ConfigError(
            f'a verifier given as a mapping is {{"preset": NAME, "path": DIR}}, got {dict(spec)!r}'
        )
    path = spec.get("path")
    return _preset(name, str(path) if path is not None else None, label=name)


def _preset(name: str, path: str | None, label: str) -> PresetSpec:
    preset = get_preset(name)
    if preset is None:
        raise ConfigError(f"unknown verifier preset {name!r}; known: {', '.join(preset_names())}")
    return PresetSpec(preset.name, path, label=label)


def _parse_text(raw: str, label: str) -> VerifierSpec:
    text = raw.strip()
    if not text:
        raise ConfigError("empty verifier spec; use None for the bundled model")
    if text.lower() in BUNDLED_ALIASES:
        return BundledSpec(label=label)
    path = Path(text).expanduser()
    if get_preset(text) is not None and not Path(raw).exists():
        return _preset(text, None, label=label)
    if text == VECTARA_API:
        return VectaraSpec(label=label)
    if text.startswith(LLM_PREFIX):
        return LLMSpec(text[len(LLM_PREFIX) :], label=label)
    if path.is_dir():
        return DirSpec(str(path.resolve()), path, label=label)
    if path.exists():
        raise ConfigError(f"verifier spec {text!r} is a file; give the model's directory")
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if len(parts) > 1:  # a hybrid, as written on the command line: A,B
        return HybridSpec(tuple(_member(p) for p in parts))
    if parts[0] != text:
        return _parse_text(parts[0], parts[0])
    if text.startswith((".", "/", "~")):
        return DirSpec(str(path.resolve()), path, label=label)
    name, sep, folder = text.partition("=")
    if sep:  # a preset from a local directory, as written on the command line: NAME=DIR
        return _preset(name.strip(), folder.strip(), label=name.strip())
    return HubSpec(text, label=label)


def _is_chat_model(obj: Any) -> bool:
    try:
        from langchain_core.language_models import BaseChatModel
    except ImportError:  # pragma: no cover - langchain-core is a core dependency
        return False
    return isinstance(obj, BaseChatModel)
