"""Fact-checker presets by name: hub id, input format, labels, chunking and aggregation.

``verifier: "minicheck-deberta-l"`` (or ``{"preset": "minicheck-deberta-l", "path":
"./models/x"}`` offline) gives a verifier that calls the model exactly as its authors do (see
:mod:`guardrail.verifiers.formats`) and returns the same :class:`NLIPrediction` as every
backend. A 2-way fact-checker (supported / not supported) fills ``entailment`` with its
support probability and ``neutral`` with the rest; ``contradiction`` stays 0 (it cannot tell
"contradicted" from "not supported", and says so in :attr:`VerifierPreset.labels`).

Kinds:

- ``nli`` — a 3-way NLI cross-encoder (``nli-deberta-v3-xsmall``, ``roberta-large-mnli``, the
  XNLI models below), :class:`HFVerifier`;
- ``classifier`` — a 2-label sequence classifier over one formatted string (MiniCheck
  RoBERTa / DeBERTa, FactCG), label 1 = supported;
- ``seq2seq`` — MiniCheck-Flan-T5: one decoder step, softmax over the logits of ids 3 / 209;
- ``hhem`` — HHEM-2.1-open: T5 encoder with a 2-way head, softmax of the first position,
  index 1 = consistent;
- ``span`` — LettuceDetect token classifier (1 = hallucinated), answer spans mapped onto
  claims;
- ``bundled`` — the ONNX model shipped in the package.

Multilingual NLI (``multilingual-minilmv2-l6-xnli``, small and suited to CPU, and
``mdeberta-v3-base-xnli-2mil7``): both model cards call the model as ``tokenizer(premise,
hypothesis, truncation=True)`` and read ``softmax(logits)`` with ``label_names = ["entailment",
"neutral", "contradiction"]``; both ``config.json`` files give ``id2label = {0: entailment, 1:
neutral, 2: contradiction}``, which :class:`~guardrail.verifiers.labels.LabelMap` reads at load
time (never assumed). The XLM-R tokenizer of MiniLMv2 builds ``<s> premise </s></s> hypothesis
</s>``, the mDeBERTa-v3 one ``[CLS] premise [SEP] hypothesis [SEP]``. ``languages`` is each
card's ``language`` list. Claims in those languages reach them through per-language routing
(``guardrail check --route zh=multilingual-minilmv2-l6-xnli``, ``models.verifier_languages``;
:mod:`guardrail.verifiers.routing`).

Published accuracy: LLM-AggreFact balanced accuracy (average over its sets) as published by
the leaderboard / the authors; ``None`` where no figure is published. ``cpu_pairs_per_s`` is
measured on tiny randomly initialised models of the same architecture (2 cores, torch and ONNX
Runtime; how it was run: the verifier guide of the documentation, "Fact-checker presets"): it
compares the cost of the calling formats, not of the full-size models. At this size the
per-sentence token counting of MiniCheck's chunking, not the model, dominates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["nli", "classifier", "seq2seq", "hhem", "span", "bundled"]


@dataclass(frozen=True)
class VerifierPreset:
    """How one named fact-checker is loaded and called."""

    name: str
    hub_id: str
    """Hugging Face model id (the documented path for users online)."""
    kind: Kind
    labels: str
    """What the model's outputs mean, and how they map onto :class:`NLIPrediction`."""
    input_format: str
    chunking: str
    aggregation: str
    chunk_size: int = 0
    """Largest document chunk, in ``chunk_unit``; 0 = no chunking (the pipeline's windows)."""
    chunk_unit: Literal["tokens", "words"] = "tokens"
    chunk_joiner: str | None = None
    """How a chunk's sentences are joined: ``None`` = MiniCheck's (a space, a newline across
    newline blocks); FactCG joins them with ``"\\n"``."""
    max_tokens: int = 512
    """Longest model input (the authors' ``max_length``)."""
    threshold: float = 0.5
    """The authors' decision threshold on the support probability (uncalibrated use)."""
    template: Literal["minicheck", "minicheck_t5", "factcg", "hhem", "lettuce", "pair"] = "pair"
    tokenizer_hub_id: str | None = None
    """Where the tokenizer comes from when the model repository has none (HHEM)."""
    languages: tuple[str, ...] = ("en",)
    published_bacc: float | None = None
    """LLM-AggreFact average balanced accuracy (%), as published."""
    cpu_pairs_per_s: float | None = None
    """Measured here on a tiny model of this architecture, torch (see the module docstring)."""
    onnx_pairs_per_s: float | None = None
    """The same on ONNX Runtime, after ``guardrail export-verifier --preset``."""
    reference: str = ""
    extra: dict[str, str] = field(default_factory=dict)


XNLI_LANGUAGES: tuple[str, ...] = (
    "en", "ar", "bg", "de", "el", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur", "vi", "zh",
)  # fmt: skip
"""The 15 languages of XNLI: the ``language`` list of the MiniLMv2-L6 model card (fine-tuned
on XNLI and the English MNLI)."""

MDEBERTA_2MIL7_LANGUAGES: tuple[str, ...] = (
    *XNLI_LANGUAGES,
    "ja", "ko", "pt", "id", "it", "bn", "mr", "ta", "fa", "pl", "uk", "nl", "sv", "he", "ps",
)  # fmt: skip
"""XNLI's 15 and the 26 of multilingual-NLI-26lang-2mil7: the ``language`` list of the
mDeBERTa-v3-base-xnli-multilingual-nli-2mil7 model card (fine-tuned on XNLI, that set and
English MNLI / ANLI / FEVER / LingNLI / WANLI)."""

_PRESETS: tuple[VerifierPreset, ...] = (
    VerifierPreset(
        "bundled",
        "(shipped in guardrail/verifiers/bundled)",
        "bundled",
        "3-way NLI: entailment / neutral / contradiction",
        "premise, hypothesis as a pair",
        "the pipeline's evidence windows",
        "max entailment over windows",
        max_tokens=160,
        reference="guardrail train-verifier",
    ),
    VerifierPreset(
        "nli-deberta-v3-xsmall",
        "cross-encoder/nli-deberta-v3-xsmall",
        "nli",
        "3-way NLI from config.id2label",
        "premise, hypothesis as a pair",
        "the pipeline's evidence windows",
        "max entailment over windows",
        reference="model card cross-encoder/nli-deberta-v3-xsmall",
    ),
    VerifierPreset(
        "roberta-large-mnli",
        "roberta-large-mnli",
        "nli",
        "3-way NLI from config.id2label",
        "premise, hypothesis as a pair",
        "the pipeline's evidence windows",
        "max entailment over windows",
        reference="model card roberta-large-mnli",
    ),
    VerifierPreset(
        "multilingual-minilmv2-l6-xnli",
        "MoritzLaurer/multilingual-MiniLMv2-L6-mnli-xnli",
        "nli",
        "3-way NLI from config.id2label (0 entailment, 1 neutral, 2 contradiction)",
        "premise, hypothesis as a pair, truncated to 512 tokens",
        "the pipeline's evidence windows",
        "max entailment over windows",
        languages=XNLI_LANGUAGES,
        reference="model card MoritzLaurer/multilingual-MiniLMv2-L6-mnli-xnli",
    ),
    VerifierPreset(
        "mdeberta-v3-base-xnli-2mil7",
        "MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7",
        "nli",
        "3-way NLI from config.id2label (0 entailment, 1 neutral, 2 contradiction)",
        "premise, hypothesis as a pair, truncated to 512 tokens",
        "the pipeline's evidence windows",
        "max entailment over windows",
        languages=MDEBERTA_2MIL7_LANGUAGES,
        reference="model card MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7",
    ),
    VerifierPreset(
        "minicheck-roberta-l",
        "lytang/MiniCheck-RoBERTa-Large",
        "classifier",
        "2 labels, 1 = supported; entailment = p(1), neutral = p(0), contradiction 0",
        "doc + eos_token + claim as one sequence",
        "sentence-aligned chunks of <= 400 tokens",
        "max support probability over chunks",
        chunk_size=400,
        max_tokens=512,
        template="minicheck",
        published_bacc=73.5,
        cpu_pairs_per_s=140.0,
        onnx_pairs_per_s=669.9,
        reference="Liyan06/MiniCheck minicheck/inference.py",
    ),
    VerifierPreset(
        "minicheck-deberta-l",
        "lytang/MiniCheck-DeBERTa-v3-Large",
        "classifier",
        "2 labels, 1 = supported; entailment = p(1), neutral = p(0), contradiction 0",
        "doc + eos_token + claim as one sequence",
        "sentence-aligned chunks of <= 400 tokens",
        "max support probability over chunks",
        chunk_size=400,
        max_tokens=2048,
        template="minicheck",
        published_bacc=73.1,
        cpu_pairs_per_s=139.8,
        onnx_pairs_per_s=633.7,
        reference="Liyan06/MiniCheck minicheck/inference.py",
    ),
    VerifierPreset(
        "minicheck-flan-t5-l",
        "lytang/MiniCheck-Flan-T5-Large",
        "seq2seq",
        "one decoder step; softmax over logits of ids 3 (no support) and 209 (support)",
        '"predict: " + doc + eos_token + claim',
        "sentence-aligned chunks of <= 500 whitespace words",
        "max support probability over chunks",
        chunk_size=500,
        chunk_unit="words",
        max_tokens=2048,
        template="minicheck_t5",
        published_bacc=75.0,
        cpu_pairs_per_s=38.1,
        onnx_pairs_per_s=486.4,
        reference="Liyan06/MiniCheck minicheck/inference.py",
    ),
    VerifierPreset(
        "factcg-deberta-l",
        "yaxili96/FactCG-DeBERTa-v3-Large",
        "classifier",
        "2 labels, 1 = supported; entailment = p(1), neutral = p(0), contradiction 0",
        "one string: doc, then 'Choose your answer: ... can we conclude that \"claim\"?'",
        "sentence-aligned chunks of <= 550 words",
        "max support probability over chunks",
        chunk_size=550,
        chunk_unit="words",
        chunk_joiner="\n",
        max_tokens=2048,
        template="factcg",
        published_bacc=75.6,
        cpu_pairs_per_s=139.6,
        onnx_pairs_per_s=1982.0,
        reference="derenlei/FactCG factcg/inference.py, factcg/utils.py",
    ),
    VerifierPreset(
        "hhem-2.1-open",
        "vectara/hallucination_evaluation_model",
        "hhem",
        "T5 encoder + 2-way head; softmax of position 0, index 1 = consistent",
        "'<pad> Determine if the hypothesis is true given the premise?...' prompt",
        "the pipeline's evidence windows (the model reads up to 512 tokens well)",
        "max consistency over windows",
        max_tokens=512,
        template="hhem",
        tokenizer_hub_id="google/flan-t5-base",
        cpu_pairs_per_s=49.1,
        onnx_pairs_per_s=314.9,
        reference="vectara/hallucination_evaluation_model modeling_hhem_v2.py",
    ),
    VerifierPreset(
        "lettucedetect-base",
        "KRLabsOrg/lettucedect-base-modernbert-en-v1",
        "span",
        "token classifier, 1 = hallucinated; a claim's support = 1 - max p(1) over its tokens",
        "(QA prompt with numbered passages, answer) as a pair",
        "passages grouped to fit 4,096 tokens with the answer",
        "max hallucination probability per token over chunks",
        max_tokens=4096,
        template="lettuce",
        cpu_pairs_per_s=164.2,
        reference="KRLabsOrg/LettuceDetect lettucedetect/detectors/transformer.py",
    ),
    VerifierPreset(
        "tinylettuce-17m",
        "KRLabsOrg/tinylettuce-ettin-17m-en",
        "span",
        "token classifier, 1 = hallucinated; a claim's support = 1 - max p(1) over its tokens",
        "(QA prompt with numbered passages, answer) as a pair",
        "passages grouped to fit the model length with the answer",
        "max hallucination probability per token over chunks",
        max_tokens=4096,
        template="lettuce",
        cpu_pairs_per_s=164.2,
        reference="KRLabsOrg/LettuceDetect lettucedetect/detectors/transformer.py",
    ),
)

PRESETS: dict[str, VerifierPreset] = {p.name: p for p in _PRESETS}
"""Every preset by name."""


def get_preset(name: str) -> VerifierPreset | None:
    """The preset called ``name`` (case-insensitive), or ``None``."""
    return PRESETS.get(name.strip().lower())


def multilingual_presets(language: str) -> list[VerifierPreset]:
    """The presets that read ``language`` besides English, smallest first (listing order)."""
    lang = language.strip().lower()
    return [p for p in _PRESETS if lang in p.languages and len(p.languages) > 1]


def preset_names() -> list[str]:
    """Names of all presets, in listing order."""
    return [p.name for p in _PRESETS]
