"""LettuceDetect / TinyLettuce: a token classifier that flags hallucinated answer tokens.

Read in ``KRLabsOrg/LettuceDetect`` (``lettucedetect/detectors/transformer.py`` and
``datasets/hallucination_dataset.py`` ``prepare_tokenized_input``): the context prompt and the
answer are tokenised as a pair (``truncation="only_first"``, so the answer is never cut), the
answer tokens get ``softmax(logits)[:, 1]`` = p(hallucinated), a token is flagged when its
argmax is 1, and a span is a run of flagged tokens whose confidence is the highest p in it.

As a :class:`Verifier`, each (premise, claim) pair is one (context, answer) input: the claim
is the answer, and its support probability is ``1 - max p(hallucinated)`` over its tokens (a
claim is as doubtful as its worst token). :meth:`SpanPresetVerifier.spans` gives the span flags
of a whole answer, with character offsets into the answer.

Example::

    v = load_verifier({"preset": "tinylettuce-17m", "path": "./models/tinylettuce"})
    v.spans(["France's capital is Paris."], "The capital is Lyon.", "What is the capital?")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from guardrail.errors import VerifierError
from guardrail.verifiers import formats
from guardrail.verifiers.base import HallucinatedSpan, NLIPrediction, Pair
from guardrail.verifiers.encoding import check_pairs
from guardrail.verifiers.labels import softmax
from guardrail.verifiers.preset_backends import PresetVerifier, supported_predictions

__all__ = ["HallucinatedSpan", "SpanPresetVerifier", "spans_from_tokens"]


class SpanPresetVerifier(PresetVerifier):
    """A LettuceDetect-style token classifier (label 1 = hallucinated)."""

    def _load_model(self) -> Any:
        from transformers import AutoModelForTokenClassification

        return AutoModelForTokenClassification.from_pretrained(self.source).eval()

    def template_tokens(self) -> int:
        enc = self.tokenizer(formats.lettuce_prompt([""]), "", return_tensors=self.tensors)
        return len(enc["input_ids"][0])

    def token_logits(self, enc: Any) -> np.ndarray:
        """Token logits ``(batch, sequence, 2)`` of an encoded batch (torch here)."""
        import torch

        feed = {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        with torch.inference_mode():
            result: np.ndarray = self.model(**feed).logits.float().numpy()
        return result

    def encode_pair(self, context: str, answer: str) -> Any:
        """The authors' encoding of one (context prompt, answer) pair, with offsets."""
        return self.tokenizer(
            context,
            answer,
            truncation="only_first",
            max_length=self.input_limit,
            return_offsets_mapping=True,
            return_tensors=self.tensors,
        )

    def token_probabilities(self, context: str, answer: str) -> tuple[np.ndarray, list[Any]]:
        """p(hallucinated) of each answer token and its (start, end) offsets in the answer."""
        enc = self.encode_pair(context, answer)
        offsets = enc.pop("offset_mapping")[0].tolist()
        sequence = enc.sequence_ids(0)
        probs = softmax(self.token_logits(enc)[0])[:, 1]
        keep = [i for i, s in enumerate(sequence) if s == 1 and offsets[i][0] != offsets[i][1]]
        return probs[keep], [offsets[i] for i in keep]

    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        pairs = check_pairs(pairs)
        out = np.zeros(len(pairs), dtype=np.float64)
        try:
            for start in range(0, len(pairs), self.batch_size):
                chunk = pairs[start : start + self.batch_size]
                out[start : start + len(chunk)] = self._claim_support(chunk)
        except Exception as exc:
            raise VerifierError(f"verifier preset {self.name} failed: {exc}") from exc
        return supported_predictions(out)

    def _claim_support(self, pairs: Sequence[Pair]) -> np.ndarray:
        """1 - the highest p(hallucinated) over each claim's tokens, one padded batch."""
        enc = self.tokenizer(
            [formats.lettuce_prompt([p]) for p, _ in pairs],
            [h for _, h in pairs],
            truncation="only_first",
            max_length=self.input_limit,
            padding=True,
            return_tensors=self.tensors,
        )
        probs = softmax(self.token_logits(enc))[..., 1]
        support = np.full(len(pairs), 0.5)
        for row in range(len(pairs)):
            answer = [i for i, s in enumerate(enc.sequence_ids(row)) if s == 1]
            if answer:
                support[row] = 1.0 - float(probs[row, answer].max())
        return support

    def spans(
        self, passages: Sequence[str], answer: str, question: str | None = None
    ) -> list[HallucinatedSpan]:
        """The hallucinated spans of ``answer`` against ``passages`` (runs of tokens whose
        argmax is "hallucinated", as LettuceDetect's ``_predict_single``). Raises
        ``VerifierError`` on failure."""
        try:
            probs, offsets = self.token_probabilities(
                formats.lettuce_prompt(list(passages), question), answer
            )
        except Exception as exc:
            raise VerifierError(f"verifier preset {self.name} failed on spans: {exc}") from exc
        return spans_from_tokens(probs, offsets, answer)


def spans_from_tokens(
    probs: np.ndarray, offsets: Sequence[Sequence[int]], answer: str, threshold: float = 0.5
) -> list[HallucinatedSpan]:
    """Runs of tokens with p(hallucinated) above ``threshold`` (= argmax of 2 labels) →
    spans; a span's confidence is the highest p of its tokens."""
    spans: list[HallucinatedSpan] = []
    start = end = -1
    best = 0.0
    for p, (s, e) in zip(probs.tolist(), offsets, strict=True):
        if p > threshold:
            if start < 0:
                start, best = int(s), p
            end, best = int(e), max(best, p)
        elif start >= 0:
            spans.append(HallucinatedSpan(start, end, round(best, 4), answer[start:end]))
            start = -1
    if start >= 0:
        spans.append(HallucinatedSpan(start, end, round(best, 4), answer[start:end]))
    return spans
