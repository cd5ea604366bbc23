"""What a configured guardrail needs installed, checked when it is built.

A stage lists the models it loads (``Stage.uses``: ``"nlp"``, ``"embedder"``, ``"verifier"``);
:func:`check_installed` maps each to the packages the configured model needs and raises a
:class:`~guardrail.errors.MissingDependencyError` naming the first one that is not installed,
with the line that installs it. Nothing is imported: the check looks packages up with
:func:`importlib.util.find_spec`, so it costs milliseconds. A model injected through
:class:`~guardrail.stages.base.Backends` is the caller's and is not checked.

Models named by a spec the check cannot decide on (a verifier preset that may have been exported
to ONNX, a hybrid that drops a failing member) are checked when they load, on the first call.

Example::

    from guardrail import Guardrail, MissingDependencyError
    try:
        Guardrail({"models": {"embedding_backend": "torch"}})
    except MissingDependencyError as exc:
        print(exc)  # the optional package 'sentence-transformers' is required for ...
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from guardrail.errors import MissingDependencyError

if TYPE_CHECKING:
    from guardrail.config import GuardrailConfig

__all__ = ["Requirement", "check_installed", "requirements"]


@dataclass(frozen=True)
class Requirement:
    """One importable package a configured model needs."""

    module: str
    """The import name looked up (``spacy``)."""
    package: str
    """The distribution to install (``spacy``)."""
    extra: str | None
    """The extra of answer-guardrail that installs it (``None``: the base install)."""
    used_for: str
    """What needs it, in words (``the spaCy parse of the coherence stage``)."""

    def installed(self) -> bool:
        """Whether the package can be imported (looked up, not imported)."""
        try:
            return importlib.util.find_spec(self.module) is not None
        except (ImportError, ValueError):
            return False


_RUNTIME = ("onnxruntime", "tokenizers")
_TORCH = (("torch", "torch"), ("transformers", "transformers"))


def _nlp(config: GuardrailConfig) -> list[Requirement]:
    name = config.models.spacy_model
    found = [Requirement("spacy", "spacy", None, "the spaCy parse")]
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):  # a pipeline package, not a folder
        package = name.replace("_", "-")
        found.append(Requirement(name, package, None, f"the spaCy pipeline {name!r}"))
    return found


def _embedder(config: GuardrailConfig) -> list[Requirement]:
    from guardrail.models import MINILM_NAMES

    models = config.models
    what = f"the embedding model {models.embedding!r}"
    if models.embedding_backend == "torch":
        return [
            Requirement("sentence_transformers", "sentence-transformers", "models", what),
            Requirement("torch", "torch", "models", what),
        ]
    found = [Requirement(m, m, None, what) for m in _RUNTIME]
    if models.embedding in MINILM_NAMES or (Path(models.embedding) / "model.onnx").is_file():
        return found
    # Another sentence-transformers model: exported to ONNX once, which needs torch.
    return [*found, *(Requirement(m, p, "models", f"{what} (its ONNX export)") for m, p in _TORCH)]


def _verifier(config: GuardrailConfig) -> list[Requirement]:
    from guardrail.verifiers.presets import preset_names
    from guardrail.verifiers.spec import BUNDLED_ALIASES, LLM_PREFIX

    spec: Any = config.models.verifier
    what = f"the verifier {spec or 'bundled'!r}"
    if spec is None or (isinstance(spec, str) and spec in BUNDLED_ALIASES):
        return [Requirement(m, m, None, what) for m in _RUNTIME]
    if not isinstance(spec, str):
        return []  # a hybrid list or a {"preset": ...} mapping: checked when it loads
    if spec.startswith(f"{LLM_PREFIX}groq:"):
        return [Requirement("langchain_groq", "langchain-groq", "groq", what)]
    if (
        spec.startswith(LLM_PREFIX)
        or spec.startswith("vectara:")
        or spec.split("=", 1)[0] in preset_names()  # a preset, maybe exported to ONNX
        or "," in spec  # a hybrid: a failing member is dropped when it loads
    ):
        return []
    path = Path(spec)
    if path.is_dir() and (path / "model.onnx").is_file():
        return [Requirement(m, m, None, what) for m in _RUNTIME]
    if path.is_dir() or ("/" in spec and not path.exists()):  # transformers folder or hub id
        return [Requirement(m, p, "models", what) for m, p in _TORCH]
    return []


_BY_RESOURCE = {"nlp": _nlp, "embedder": _embedder, "verifier": _verifier}
RESOURCES = frozenset(_BY_RESOURCE)
"""The resource names a stage may list in ``uses``."""


def requirements(config: GuardrailConfig, resources: Iterable[str]) -> list[Requirement]:
    """The packages the configured ``resources`` need, in order, without repeats."""
    found: dict[str, Requirement] = {}
    for name in dict.fromkeys(resources):
        for req in _BY_RESOURCE[name](config):
            found.setdefault(req.module, req)
    return list(found.values())


def check_installed(
    config: GuardrailConfig,
    uses: Mapping[str, Collection[str]],
    injected: Collection[str] = (),
) -> None:
    """Raise :class:`MissingDependencyError` for the first package a stage needs that is absent.

    Args:
        config: the guardrail's configuration (which models are configured).
        uses: stage name → the resources it loads (``Stage.uses``) for the enabled stages.
        injected: resources given ready-made through ``Backends`` (not checked).
    """
    users: dict[str, list[str]] = {}
    for stage, names in uses.items():
        for name in names:
            if name not in injected:
                users.setdefault(name, []).append(stage)
    for name, stages in users.items():
        for req in requirements(config, [name]):
            if not req.installed():
                raise MissingDependencyError(
                    req.package,
                    req.extra,
                    needed_for=f"{req.used_for} (stages: {', '.join(stages)})",
                )
