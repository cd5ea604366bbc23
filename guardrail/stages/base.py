"""The stage contract and the state that flows through the pipeline.

A stage reads a :class:`PipelineState` and returns a :class:`StageUpdate` (or a dict of its
fields, validated into one): the fields it fills in. The pipeline merges them into a *new*
state; a misspelled field or a wrong type fails the stage with the reason, never silently.
Stages keep no per-call state on ``self``: what they hold is configuration and the shared,
lazily loaded :class:`Resources`, so one instance is safe under ``batch`` / ``abatch`` and
threads.

The response's language and its spaCy parse are computed once per call, in
``Guardrail.prepare``, and shared as ``state.language`` and ``state.doc``.

Each stage declares the state fields it reads and writes (``needs``, ``reads``, ``writes``);
:func:`check_order` checks a stage list when a ``Guardrail`` is built: a field a stage needs that
no earlier stage writes, or one it reads that a later stage writes, is a ``ConfigError`` naming
both stages. A stage's update may set only the fields it declares.

To add a stage: subclass :class:`Stage`, set ``name`` and its fields, implement :meth:`Stage.run`
and, if the stage does not always apply, :meth:`Stage.skip_reason`; pass it to
``Guardrail(stages=[*default_stages(), MyStage])``. It runs as its own child run
``guardrail.<name>``. Its own typed result goes in ``StageUpdate(extension=MyResult(...))`` and
appears in the report as ``report.extensions[<name>]`` (and, as JSON, in the stage run's outputs
as ``extension``). A traced run shows :meth:`Stage.trace_inputs` (what the stage reads) and
:meth:`Stage.trace_outputs` (what it wrote), as plain JSON of at most 4 KB each.

Example::

    class Politeness(Stage):
        name = "politeness"
        reads = ("flags",)  # after the hallucination stage when that is in the list

        def run(self, state):
            return StageUpdate(extension=PolitenessResult(rude="stupid" in state.input.response))
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, InstanceOf

from guardrail.config import GuardrailConfig
from guardrail.decision.plan import AnswerPlan
from guardrail.errors import ConfigError
from guardrail.inputs import GuardInput
from guardrail.report import (
    CalibrationUsed,
    Claim,
    CoherenceResult,
    Correction,
    ExtractedClaim,
    FactualValidationResult,
    HallucinationFlag,
    NewEntity,
    QUDRelevance,
    StageRecord,
    Verdict,
)
from guardrail.trace_views import input_view, json_view

T = TypeVar("T")


class StageFields(BaseModel):
    """The state fields stages fill in (shared by :class:`StageUpdate` and the state)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    language: str | None = None
    """The response's language (detected once in ``prepare``)."""
    coherence: CoherenceResult | None = None
    claims: list[Claim] | None = None
    extracted_claims: list[ExtractedClaim] | None = None
    factual: FactualValidationResult | None = None
    flags: list[HallucinationFlag] | None = None
    verdict: Verdict | None = None
    calibration: CalibrationUsed | None = None
    """The claim calibration the hallucination stage scored with (``None``: no claim was
    scored under a calibration); the decision reads its ``remove_below``."""
    repairs: list[Correction] | None = None
    """The repairs the text takes whatever the decision's plan (spelling, grammar,
    knowledge-base and evidence values, severe removals), each factual one re-checked
    (``verified``): set by the repair stage; the plan reads which problems they fix."""
    repair_edits: Any = None
    """The text edits behind ``repairs`` (a :class:`guardrail.correction.corrector.Repairs`),
    found once by the repair stage and applied by the correction stage."""
    plan: InstanceOf[AnswerPlan] | None = None
    """The decision's plan: the problems, found once and marked with ``repairs``, and what the
    delivered text removes and annotates. Made once per check by the pipeline's plan step
    (:func:`guardrail.decision.plan_answer`) whatever stages ran, before the first stage that
    reads it (the correction stage, which applies it); the recommendation reads it."""
    corrections: list[Correction] | None = None
    corrected: str | None = None
    annotated: str | None = None
    new_entities: list[NewEntity] | None = None
    delivered_qud: QUDRelevance | None = None
    """The QUD check on the text left after the decision's removals (set by the
    correction stage only when it removed something and the plan asks for the check)."""


class StageUpdate(StageFields):
    """The fields a stage fills in; unknown fields are errors, types are checked."""

    extension: InstanceOf[BaseModel] | dict[str, Any] | None = None
    """The stage's own result (a pydantic model or JSON data), kept in the report's
    ``extensions`` under the stage's name."""

    def fields(self) -> dict[str, Any]:
        """The fields the stage set (for ``model_copy(update=...)``), as objects."""
        return {k: getattr(self, k) for k in self.model_fields_set}


PREPARED = frozenset({"input", "doc", "language"})
"""State fields ``Guardrail.prepare`` fills before any stage runs (always readable)."""

STATE_FIELDS = frozenset(StageFields.model_fields) | PREPARED | {"extensions"}
"""The fields a stage may declare it reads."""


class PipelineState(StageFields):
    """The input and everything the stages have produced so far."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    input: GuardInput
    doc: Any = None
    """The spaCy ``Doc`` of the response, parsed once in ``prepare`` (``None`` when spaCy is
    not installed or the response is not English)."""
    corrections: list[Correction] = Field(default_factory=list)
    new_entities: list[NewEntity] = Field(default_factory=list)
    stages: list[StageRecord] = Field(default_factory=list)
    extensions: dict[str, Any] = Field(default_factory=dict)
    """The custom stages' own results, by stage name."""
    parses: Any = Field(default_factory=lambda: Parses())
    """The call's spaCy parses of texts other than the response (:class:`Parses`)."""


def _needs(obj: Any, what: str, *methods: str) -> None:
    if isinstance(obj, str | bytes | bytearray):
        raise ConfigError(
            f"backends.{what} must be a model object, not the name {obj!r}; "
            f"to load a model by name set it in the config (models.{what})"
        )
    missing = [m for m in methods if not callable(getattr(obj, m, None))]
    if missing:
        raise ConfigError(
            f"backends.{what} must be an object with {', '.join(m + '()' for m in methods)}; "
            f"got {type(obj).__name__} (missing {', '.join(missing)})"
        )


@dataclass(frozen=True)
class Backends:
    """Models passed in instead of loaded from the config; each is checked when given.

    Example::

        Guardrail(backends=Backends(verifier=my_verifier, embedder=my_sentence_transformer))
    """

    verifier: Any = None
    """An NLI verifier: ``predict(pairs) -> list[NLIPrediction]`` and ``covers(language)``
    (see :class:`guardrail.verifiers.base.Verifier`)."""
    embedder: Any = None
    """A sentence embedder with ``encode(texts, normalize_embeddings=..., ...)``."""
    nlp: Any = None
    """A spaCy ``Language`` (callable on a text, with ``pipe_names``)."""
    claim_llm: Any = None
    """A LangChain chat model (``invoke``) for ``hallucination.claim_source = "llm"``."""

    def __post_init__(self) -> None:
        if self.verifier is not None:
            _needs(self.verifier, "verifier", "predict", "covers")
        if self.embedder is not None:
            _needs(self.embedder, "embedder", "encode")
        if self.nlp is not None:
            if not callable(self.nlp) or not hasattr(self.nlp, "pipe_names"):
                raise ConfigError(
                    f"backends.nlp must be a spaCy Language (callable, with pipe_names); "
                    f"got {type(self.nlp).__name__}"
                )
        if self.claim_llm is not None:
            _needs(self.claim_llm, "claim_llm", "invoke")


class Resources:
    """Models and handles shared by the stages of one :class:`~guardrail.Guardrail`.

    Each resource is built at first use, once, under a lock; later calls return the same object.
    Resources given as :class:`Backends` are used as they are.
    """

    def __init__(self, config: GuardrailConfig, backends: Backends | None = None) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._cache: dict[str, Any] = {}
        if backends is not None:
            for key in ("verifier", "embedder", "nlp", "claim_llm"):
                value = getattr(backends, key)
                if value is not None:
                    self._cache[key] = value

    def get(self, key: str, factory: Callable[[], T]) -> T:
        """Return the resource ``key``, building it with ``factory`` the first time."""
        if key in self._cache:
            return self._cache[key]  # type: ignore[no-any-return]
        with self._lock:
            if key not in self._cache:
                self._cache[key] = factory()
            return self._cache[key]  # type: ignore[no-any-return]

    def set(self, key: str, value: Any) -> None:
        """Inject a resource (e.g. a verifier built elsewhere)."""
        with self._lock:
            self._cache[key] = value

    def embedder(self) -> Any:
        """The embedding model of the config, behind a per-guardrail cache of text vectors."""
        from guardrail.embedding_cache import CachingEmbedder
        from guardrail.models import load_embedder

        models = self.config.models
        size = models.embedding_cache_size
        return self.get(
            "embedder",
            lambda: (
                CachingEmbedder(load_embedder(models.embedding, models.embedding_backend), size)
                if size > 0
                else load_embedder(models.embedding, models.embedding_backend)
            ),
        )

    def verifier(self) -> Any:
        """The NLI verifier of the config (bundled offline model by default)."""
        from guardrail.verifiers.loader import load_routed, load_verifier

        models = self.config.models
        return self.get(
            "verifier",
            lambda: load_routed(load_verifier(models.verifier), models.verifier_languages),
        )

    def score_cache(self) -> Any:
        """The guardrail's shared (premise, hypothesis) verifier score cache (``None`` when
        ``hallucination.speed.score_cache_size`` is 0); the same object the hallucination
        stage scores through."""
        from guardrail.verifiers.cache import ScoreCache

        size = self.config.hallucination.speed.score_cache_size
        if size <= 0:
            return None
        return self.get("hallucination.score_cache", lambda: ScoreCache(size))

    def nlp(self) -> Any:
        """The spaCy pipeline of the config (raises a ``GuardrailError`` when unavailable)."""
        from guardrail.nlp import load_spacy

        return self.get("nlp", lambda: load_spacy(self.config.models.spacy_model))

    def claim_llm(self) -> Any:
        """The chat model for LLM claim decomposition (a ``ConfigError`` when none was given)."""

        def missing() -> Any:
            raise ConfigError(
                "hallucination.claim_source='llm' needs a chat model: "
                "Guardrail(backends=Backends(claim_llm=chat_model))"
            )

        return self.get("claim_llm", missing)


class Parses:
    """The spaCy parses of one call, by text: each text the stages parse is parsed once
    (the response's parse is ``state.doc``; dialogue turns, the query and the QUD are parsed
    by the first stage that reads them and shared with the others)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._docs: dict[str, Any] = {}

    def add(self, docs: dict[str, Any]) -> None:
        """Keep parses made elsewhere (``prepare`` parses texts ahead with the response)."""
        with self._lock:
            self._docs.update(docs)

    def known(self, text: str) -> Any:
        """The parse of ``text`` if a stage made it already, else ``None`` (nothing parsed)."""
        with self._lock:
            return self._docs.get(text)

    def get(self, nlp: Any, texts: Sequence[str]) -> list[Any]:
        """The parses of ``texts``, parsing those not seen yet in one ``nlp.pipe`` call."""
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._docs))
            if todo:
                self._docs.update(zip(todo, nlp.pipe(todo), strict=True))
            return [self._docs[t] for t in texts]


class SharedParse:
    """A spaCy pipeline that hands back the call's parses: the shared parse for the response
    text, and every other text parsed at most once per call (:class:`Parses`). A ``pipe`` with
    options (``disable=...``) parses as asked, uncached."""

    def __init__(self, nlp: Any, doc: Any, parses: Parses | None = None) -> None:
        self._nlp = nlp
        self._doc = doc
        self._parses = parses if parses is not None else Parses()

    def __call__(self, text: str) -> Any:
        if self._doc is not None and text == self._doc.text:
            return self._doc
        return self._parses.get(self._nlp, [text])[0]

    def pipe(self, texts: Iterable[str], **options: Any) -> Iterable[Any]:
        if options:
            parsed: Iterable[Any] = self._nlp.pipe(texts, **options)
            return parsed
        todo = list(texts)
        rest = [t for t in todo if self._doc is None or t != self._doc.text]
        parsed = iter(self._parses.get(self._nlp, rest))
        return [
            self._doc if self._doc is not None and t == self._doc.text else next(parsed)
            for t in todo
        ]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._nlp, name)


class Stage(ABC):
    """One step of the pipeline. Subclasses set ``name`` and implement ``run``."""

    name: ClassVar[str]
    needs: ClassVar[tuple[str, ...]] = ()
    """State fields the stage cannot run without: an earlier stage must write each."""
    reads: ClassVar[tuple[str, ...]] = ()
    """State fields the stage reads when present: a stage writing one must come earlier."""
    writes: ClassVar[tuple[str, ...]] = ()
    """State fields the stage's update may set (besides its own ``extension``)."""
    disabled_with: ClassVar[str | None] = None
    """The stage this one is a part of: its entry in ``disabled_stages`` disables this one too
    (the repair stage is disabled with ``correction``)."""
    uses: ClassVar[tuple[str, ...]] = ()
    """Models the stage loads from its resources (``"nlp"``, ``"embedder"``, ``"verifier"``):
    the packages the configured ones need are checked installed when the guardrail is built
    (:mod:`guardrail.dependencies`)."""

    @classmethod
    def when_disabled(cls, config: GuardrailConfig) -> GuardrailConfig:
        """The config the other stages run with when this stage is in ``disabled_stages``
        (unchanged by default)."""
        return config

    def __init__(self, config: GuardrailConfig, resources: Resources) -> None:
        self.config = config
        self.resources = resources

    def skip_reason(self, state: PipelineState) -> str | None:
        """Why this stage does not apply to ``state`` (``None`` = run it)."""
        return None

    def parses_ahead(self, data: GuardInput) -> Sequence[str]:
        """Texts besides the response this stage will parse with spaCy (through
        :meth:`nlp`): ``prepare`` parses them with the response in one ``nlp.pipe`` call (one
        call costs less than several; the parses are the same)."""
        return ()

    def embeds_ahead(self, data: GuardInput) -> Sequence[str]:
        """Texts this stage will embed (normalised, through the guardrail's vector cache) that
        the input alone tells: ``prepare`` embeds them on another core while spaCy parses the
        response (:func:`~guardrail.embedding_cache.embed_ahead`). A text the stage does not
        end up embedding only costs that core's time; the vectors are the same."""
        return ()

    def nlp(self, state: PipelineState) -> SharedParse:
        """The spaCy pipeline, returning ``state.doc`` for the response and the call's shared
        parse of every other text (each parsed once per call)."""
        return SharedParse(self.resources.nlp(), state.doc, state.parses)

    @abstractmethod
    def run(self, state: PipelineState) -> StageUpdate | dict[str, Any]:
        """Compute this stage's results; return the ``PipelineState`` fields to set."""

    def trace_inputs(self, state: PipelineState) -> dict[str, Any]:
        """What this stage's run shows as its inputs (plain JSON, called only when the run is
        traced): the checked input (:func:`~guardrail.trace_views.input_view`) and the state
        fields the stage declares in ``needs`` and ``reads`` (the response's parse ``doc`` is
        the response, shown as text). Override to show something else; the pipeline bounds
        the size."""
        view = input_view(state.input)
        for field in dict.fromkeys((*self.needs, *self.reads)):
            if field in ("doc", "input"):
                continue
            value = getattr(state, field)
            if value is not None:
                view[field] = json_view(value)
        return view

    def trace_outputs(self, written: Mapping[str, Any], extension: Any = None) -> dict[str, Any]:
        """What this stage's run shows of what it wrote (plain JSON, called only when the run
        is traced): each field of its update, and its own result as ``extension``."""
        view = {field: json_view(value) for field, value in written.items()}
        if extension is not None:
            view["extension"] = json_view(extension)
        return view


def check_order(stages: Sequence[Stage], disabled: Collection[str] = ()) -> None:
    """Raise a ``ConfigError`` naming both stages when a stage needs or reads a field out of
    order: a field in ``needs`` that no earlier, enabled stage writes, or a field in ``needs`` /
    ``reads`` that a later stage writes. Fields :data:`PREPARED` are always there."""
    for i, stage in enumerate(stages):
        for field in (*stage.needs, *stage.reads, *stage.writes):
            if field not in STATE_FIELDS:
                raise ConfigError(f"stage {stage.name!r} declares unknown state field {field!r}")
        for field in dict.fromkeys((*stage.needs, *stage.reads)):
            if field in PREPARED:
                continue
            later = [s.name for s in stages[i + 1 :] if field in s.writes]
            if later:
                raise ConfigError(
                    f"stage {stage.name!r} reads {field!r}, which stage {later[0]!r} writes "
                    f"after it: put {later[0]!r} before {stage.name!r}"
                )
        for field in stage.needs:
            if field in PREPARED:
                continue
            earlier = [s.name for s in stages[:i] if field in s.writes]
            if not any(name not in disabled for name in earlier):
                where = (
                    f"stage {earlier[0]!r} writes it but is disabled"
                    if earlier
                    else "no earlier stage writes it"
                )
                raise ConfigError(f"stage {stage.name!r} needs {field!r}: {where}")


def is_disabled(stage: Stage, disabled: Collection[str]) -> bool:
    """Whether ``disabled`` (``disabled_stages``) names ``stage`` or the stage it is part of."""
    return stage.name in disabled or (
        stage.disabled_with is not None and stage.disabled_with in disabled
    )


def writers(stages: Iterable[Stage], field: str) -> list[str]:
    """The names of the stages that write ``field``."""
    return [s.name for s in stages if field in s.writes]
