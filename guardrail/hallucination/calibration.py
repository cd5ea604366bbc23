"""Calibrated per-claim support probabilities: verifier scores plus cheap lexical features.

The verifier's entailment is a poor probability on its own: small NLI models are over-sure on
short premises and miss invented specifics on long ones. A small logistic model over

- ``logit_entail`` — logit of the best window's entailment (max over windows),
- ``contradiction`` — the highest contradiction over the claim's windows,
- ``neutral`` — the best window's neutral probability,
- ``missing_content`` — share of the claim's content words found in no evidence text,
- ``missing_specific`` — names, numbers and dates of the claim found in no evidence text
  (capped at 3),
- ``log_tokens`` — log of the claim's word count,
- ``verbatim`` — 1 when the claim stands word for word in the evidence (case, spacing,
  punctuation and tokenisation aside: "Non-binary" = "Non - binary", "2-0" = "2 - 0"): such a
  claim is supported (``p_supported`` ≥ ``VERBATIM_P``)
  whatever the verifier says — quoting the source is the plainest support there is,
- ``novel_best`` — share of the claim's content words absent from the window the verifier
  judged best: a near-copy of an evidence sentence with one word swapped ("Wenger called for
  the removal…" against "fan called for the removal…") looks entailed to a small NLI model, but
  the swapped word is new to that window even when it occurs elsewhere in the evidence,
- ``log_windows`` — log of one plus the number of evidence windows of the check: the max over
  more windows is higher by chance alone, so long evidence needs a higher entailment,
- ``logit_selected`` — logit of the entailment of the claim's selected evidence sentences
  (:mod:`guardrail.hallucination.selection`; ``logit_entail`` when it has none),
- ``log_evidence_words`` — log of one plus the evidence's word count, and ``log_passages`` —
  log of one plus the number of evidence texts (passages, facts, turns): the shape of the
  evidence, known at run time without labels (one short paragraph, several snippets, one long
  article), so that a fit can give each shape its own intercept,
- ``shape_paragraph``, ``shape_long``, ``shape_snippets``, ``shape_several`` — 1 for the
  evidence's shape (:func:`evidence_shape`; ``few`` has none): a shape's own intercept, i.e. its
  own threshold on the other features' score,
- ``unplaced_share`` — 1 when the claim aligns with no evidence sentence, else the share of its
  names, numbers and dates its evidence region does not state
  (:func:`~guardrail.hallucination.alignment.unplaced_share`; set by the detector, 0 where no
  alignment ran): a claim told nowhere in particular, or whose specifics sit elsewhere in the
  documents, is less often supported than its entailment says,

gives ``p_supported``, fitted on held-out dev data (the decisions benchmark's claims, see the
Benchmarks page of the documentation; the file records which data and which verifier). The claim
threshold shipped with it was chosen on the same dev data for response-level balanced accuracy.

Example::

    calibrator = ClaimCalibrator.load()
    p = calibrator.probability(claim_features(claim, best, contra, evidence_texts))
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from guardrail.errors import ConfigError
from guardrail.text.mentions import find_mentions, mention_in
from guardrail.verifiers.base import NLIPrediction

FEATURES: tuple[str, ...] = (
    "logit_entail",
    "contradiction",
    "neutral",
    "missing_content",
    "missing_specific",
    "log_tokens",
    "verbatim",
    "novel_best",
    "log_windows",
    "logit_selected",
    "log_evidence_words",
    "log_passages",
    "shape_paragraph",
    "shape_long",
    "shape_snippets",
    "shape_several",
    "unplaced_share",
)

EVIDENCE_SHAPES: tuple[str, ...] = ("few", "paragraph", "long", "snippets", "several")
"""The shapes of :func:`evidence_shape`; ``few`` is the reference (no ``shape_`` feature)."""

SHAPE_PARAGRAPH_WORDS = 150
SHAPE_LONG_WORDS = 800
SHAPE_SNIPPETS = 10
SHAPE_FEW = 3
"""Boundaries of :func:`evidence_shape`, set from the evidence sizes of the decisions
benchmark's dev sets (no labels): HaluEval's knowledge paragraphs have 50–120 words; QAGS's
articles (cut into 2–3 passages) and LFQA's documents (mostly 4–5 passages) 280–520 words;
Factcheck-GPT's retrieved snippets come 6–61 to an answer; WiCE's cited pages 440–2,600 words
in 2–75 texts."""


def evidence_shape(words: int, passages: int) -> str:
    """The evidence's shape, known at run time without labels: ``snippets`` (more than
    ``SHAPE_SNIPPETS`` texts), else ``paragraph`` (at most ``SHAPE_PARAGRAPH_WORDS`` words),
    ``long`` (more than ``SHAPE_LONG_WORDS``), else ``few`` (at most ``SHAPE_FEW`` texts) or
    ``several`` texts."""
    if passages > SHAPE_SNIPPETS:
        return "snippets"
    if words <= SHAPE_PARAGRAPH_WORDS:
        return "paragraph"
    if words > SHAPE_LONG_WORDS:
        return "long"
    return "few" if passages <= SHAPE_FEW else "several"


VERBATIM_P = 0.99
"""``p_supported`` of a claim found word for word in the evidence."""

BUNDLED = Path(__file__).with_name("data") / "calibration.json"

_WORD_RE = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_STOP = frozenset(
    """the and for are was were has have had not but with from that this these those their there
    they them then than its his her him she who whom which what when where why how all any can
    could would should will shall may might must also into onto over under more most such very
    been being does did doing done about above after again against because before below between
    both during each few further here just only other same some our ours out own too until upon
    while your yours you one two per via""".split()
)


def content_words(text: str) -> list[str]:
    """Lower-cased words of three letters or more that are not function words."""
    return list(_content_words(text))


@lru_cache(maxsize=4096)
def _content_words(text: str) -> tuple[str, ...]:
    """:func:`content_words`, read once per text (the alignment, the window choice and the
    polarity check read the same evidence sentences for every claim)."""
    return tuple(w for w in (m.group(0).lower() for m in _WORD_RE.finditer(text)) if w not in _STOP)


@lru_cache(maxsize=8192)
def _stem(word: str) -> str:
    """A crude stem: a plural ``s`` dropped, then the first five letters (``LLMs`` = ``LLM``,
    ``improves`` = ``improving``)."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:5]


def content_stems(text: str) -> set[str]:
    """The crude stems of ``text``'s content words."""
    return {_stem(w) for w in content_words(text)}


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1.0 - 1e-4)
    return math.log(p / (1.0 - p))


_ALNUM_RE = re.compile(r"[^\W_]+", re.UNICODE)


def _word_string(text: str) -> str:
    """Lower-cased letter/digit runs joined by single spaces, with a space at each end (so a
    substring test matches whole words only); punctuation and tokenisation spaces vanish."""
    return " " + " ".join(m.group(0).lower() for m in _ALNUM_RE.finditer(text)) + " "


@dataclass(frozen=True)
class EvidenceIndex:
    """The evidence texts joined, with the word stems they contain (built once per check)."""

    text: str
    stems: frozenset[str]
    word_string: str
    """Its words only (``_word_string``: for the verbatim test, punctuation aside)."""
    passages: int = 0
    """How many evidence texts were joined."""
    words: int = 0
    """The evidence's whitespace-separated word count."""

    @classmethod
    def of(cls, texts: Iterable[str]) -> EvidenceIndex:
        texts = list(texts)
        joined = "\n".join(texts)
        stems = frozenset(_stem(w) for w in content_words(joined))
        return cls(joined, stems, _word_string(joined), len(texts), len(joined.split()))


def claim_features(
    claim_text: str,
    best: NLIPrediction,
    contradiction: float,
    evidence: EvidenceIndex,
    nlp: Any = None,
    best_window: str | None = None,
    evidence_windows: int = 0,
    selected: NLIPrediction | None = None,
    unplaced_share: float = 0.0,
) -> dict[str, float]:
    """The calibration features of one claim (see the module docstring); ``best_window`` is
    the text of the window behind ``best`` (without it ``novel_best`` is 0),
    ``evidence_windows`` the number of windows of the check's evidence, ``selected`` the
    prediction on the claim's selected sentences, ``unplaced_share`` the claim's
    (:func:`~guardrail.hallucination.alignment.unplaced_share`: the evidence's sentences are
    the detector's to align)."""
    words = content_words(claim_text)
    missing = sum(_stem(w) not in evidence.stems for w in words) / len(words) if words else 0.0
    novel = 0.0
    if best_window is not None and words:
        local = content_stems(best_window)
        novel = sum(_stem(w) not in local for w in words) / len(words)
    specifics = [
        m
        for m in find_mentions(claim_text, nlp)
        if not mention_in(m, evidence.text, text=claim_text)
    ]
    return {
        "logit_entail": round(_logit(best.entailment), 4),
        "contradiction": round(contradiction, 4),
        "neutral": round(best.neutral, 4),
        "missing_content": round(missing, 4),
        "missing_specific": float(min(len(specifics), 3)),
        "log_tokens": round(math.log(1 + len(claim_text.split())), 4),
        "verbatim": float(len(words) >= 3 and _verbatim(claim_text, evidence)),
        "novel_best": round(novel, 4),
        "log_windows": round(math.log(1 + max(0, evidence_windows)), 4),
        "logit_selected": round(_logit((selected or best).entailment), 4),
        "log_evidence_words": round(math.log(1 + evidence.words), 4),
        "log_passages": round(math.log(1 + evidence.passages), 4),
        **shape_features(evidence.words, evidence.passages),
        "unplaced_share": round(unplaced_share, 4),
    }


def shape_features(words: int, passages: int) -> dict[str, float]:
    """The ``shape_`` indicator features of evidence of ``words`` words in ``passages`` texts."""
    shape = evidence_shape(words, passages)
    return {f"shape_{s}": float(shape == s) for s in EVIDENCE_SHAPES[1:]}


def _verbatim(claim_text: str, evidence: EvidenceIndex) -> bool:
    """The claim stands in the evidence word for word (see ``verbatim`` above): its words, in
    order, are whole words of the evidence ("art is great" is not in "heart is great")."""
    words = _word_string(claim_text)
    return len(words) > 2 and words in evidence.word_string


@dataclass(frozen=True)
class ClaimCalibrator:
    """``p_supported = sigmoid(bias + Σ weight·feature)`` and the claim threshold."""

    weights: dict[str, float]
    bias: float
    threshold: float
    """Claims with ``p_supported`` below this are not supported (chosen on dev data)."""
    meta: dict[str, Any] = field(default_factory=dict)
    remove_below: float | None = None
    """Claim-level delivery: unsupported claims with ``p_supported`` below this are removed or
    repaired, the others between it and ``threshold`` annotated (chosen on dev data; ``None`` =
    every unsupported claim is a confident problem)."""

    def probability(self, features: dict[str, float]) -> float:
        z = self.bias + sum(w * features.get(k, 0.0) for k, w in self.weights.items())
        p = 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))
        return max(p, VERBATIM_P) if features.get("verbatim") else p

    def to_json(self) -> dict[str, Any]:
        return {
            "weights": self.weights,
            "bias": self.bias,
            "threshold": self.threshold,
            **({"remove_below": self.remove_below} if self.remove_below is not None else {}),
            "meta": self.meta,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClaimCalibrator:
        try:
            weights = {str(k): float(v) for k, v in data["weights"].items()}
            unknown = set(weights) - set(FEATURES)
            if unknown:
                raise ValueError(f"unknown features {sorted(unknown)}")
            remove = data.get("remove_below")
            calibrator = cls(
                weights,
                float(data["bias"]),
                float(data["threshold"]),
                dict(data.get("meta", {})),
                float(remove) if remove is not None else None,
            )
            if calibrator.remove_below is not None and not (
                0.0 <= calibrator.remove_below <= calibrator.threshold
            ):
                raise ValueError(
                    f"remove_below {calibrator.remove_below} must lie in [0, threshold "
                    f"{calibrator.threshold}]"
                )
            return calibrator
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"invalid claim calibration: {exc}") from exc

    @classmethod
    def load(cls, path: str | Path | None = None) -> ClaimCalibrator:
        """The calibration at ``path``, or the one shipped with the package."""
        return _load(str(path) if path is not None else str(BUNDLED))


@lru_cache(maxsize=8)
def _load(path: str) -> ClaimCalibrator:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"claim calibration file not found: {p}")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"could not read claim calibration {p}: {exc}") from exc
    return ClaimCalibrator.from_json(data)


def fit_logistic(
    rows: Sequence[dict[str, float]],
    labels: Sequence[int],
    l2: float = 1.0,
    iterations: int = 50,
    sample_weights: Sequence[float] | None = None,
) -> tuple[dict[str, float], float]:
    """Weights and bias of an L2-regularised, optionally weighted logistic regression
    (Newton's method, numpy)."""
    import numpy as np

    if not rows or len(set(labels)) < 2:
        raise ValueError("fitting needs rows of both labels")
    x = np.array([[r.get(k, 0.0) for k in FEATURES] for r in rows], dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    sw = np.ones(len(rows)) if sample_weights is None else np.asarray(sample_weights, float)
    w = fit_logistic_matrix(x, y, sw, l2, iterations)
    return {k: round(float(v), 6) for k, v in zip(FEATURES, w[1:], strict=True)}, round(
        float(w[0]), 6
    )


def fit_logistic_matrix(x: Any, y: Any, sw: Any, l2: float, iterations: int = 50) -> Any:
    """The weights of a ridge logistic regression on the feature matrix ``x`` (labels ``y``,
    sample weights ``sw``), intercept first and unpenalised, by Newton steps (numpy)."""
    import numpy as np

    x1 = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(x1.shape[1])
    reg = np.eye(x1.shape[1]) * l2
    reg[0, 0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(x1 @ w, -60, 60)))
        grad = x1.T @ (sw * (p - y)) + reg @ w
        hess = (x1.T * (sw * p * (1 - p))) @ x1 + reg + np.eye(x1.shape[1]) * 1e-9
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return w
