"""Conformance tests every verifier backend passes, plus a tiny real model to run them on.

Subclass :class:`VerifierConformance` and implement the ``verifier`` fixture (and, for model
backends, ``permuted_pair``). Mechanics tests run on anything; the quality tests run only when
``real_model = True`` (a trained NLI model, not a random one).

``build_tiny_model`` saves a randomly initialised, tiny ``BertForSequenceClassification`` with
the all-MiniLM-L6-v2 tokenizer: real transformers code and a real tokenizer, just untrained.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from guardrail.errors import InputError
from guardrail.verifiers import NLIPrediction, Verifier

LABELS = ("entailment", "neutral", "contradiction")

PAIRS = [
    ("A man is playing a guitar on stage.", "A man is playing an instrument."),
    ("The cat is asleep on the sofa.", "The cat is running in the garden."),
    ("Paris is the capital of France.", "The Eiffel Tower is 330 metres tall."),
    ("She bought three apples and two pears at the market.", "She bought fruit."),
    ("The meeting was moved from Monday to Friday.", "The meeting is on Monday."),
    ("短句。", "Another sentence in another script."),
    ("", "An empty premise still gets a prediction."),
]

OBVIOUS = [
    ("A man is playing a guitar on stage.", "A man is playing an instrument.", "entailment"),
    ("A woman is riding a bicycle down the street.", "A woman is on a bike.", "entailment"),
    ("Two dogs are running through the snow.", "Animals are outside.", "entailment"),
    ("The cat is asleep on the sofa.", "The cat is running in the garden.", "contradiction"),
    ("A boy is swimming in the pool.", "The boy is sitting in a classroom.", "contradiction"),
    ("The restaurant is closed on Sundays.", "The restaurant is open every day.", "contradiction"),
]


def build_tiny_model(path: Path, id2label: dict[int, str] | None = None, seed: int = 0) -> Path:
    """Save a tiny random BERT cross-encoder with the MiniLM tokenizer into ``path``."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from guardrail.models import minilm_path

    id2label = id2label or dict(enumerate(LABELS))
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        initializer_range=0.3,
        num_labels=len(id2label),
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config).eval()
    with torch.no_grad():  # wide init (initializer_range) → outputs vary and differ by label
        model.classifier.bias.copy_(torch.tensor([0.3, -0.2, 0.1][: len(id2label)]))
    model.save_pretrained(str(path))
    AutoTokenizer.from_pretrained(str(minilm_path())).save_pretrained(str(path))
    return path


def permute_tiny_model(src: Path, dst: Path, perm: list[int]) -> Path:
    """Copy of ``src`` whose classifier rows and ``id2label`` are permuted together.

    New output ``j`` is old output ``perm[j]``; a backend that reads the label order from the
    config must give the same probabilities for both models.
    """
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    model = BertForSequenceClassification.from_pretrained(str(src)).eval()
    old = dict(model.config.id2label)
    with torch.no_grad():
        model.classifier.weight.copy_(model.classifier.weight[perm].clone())
        model.classifier.bias.copy_(model.classifier.bias[perm].clone())
    model.config.id2label = {j: old[p] for j, p in enumerate(perm)}
    model.config.label2id = {v: k for k, v in model.config.id2label.items()}
    model.save_pretrained(str(dst))
    AutoTokenizer.from_pretrained(str(src)).save_pretrained(str(dst))
    return dst


def as_rows(preds: list[NLIPrediction]) -> list[tuple[float, float, float]]:
    return [(p.entailment, p.neutral, p.contradiction) for p in preds]


def assert_close(a: list[NLIPrediction], b: list[NLIPrediction], tol: float) -> None:
    """Two prediction lists are equal within ``tol`` per probability."""
    np.testing.assert_allclose(np.array(as_rows(a)), np.array(as_rows(b)), rtol=0, atol=tol)


class VerifierConformance:
    """The contract of :class:`~guardrail.verifiers.Verifier`, as tests."""

    real_model = False
    """True for trained NLI models: enables the quality tests."""
    batch_tolerance = 1e-4
    """Allowed difference between batched and one-by-one scores (int8 quantises per batch)."""

    @pytest.fixture
    def verifier(self) -> Verifier:  # pragma: no cover - overridden
        raise NotImplementedError

    @pytest.fixture
    def permuted_pair(self) -> tuple[Verifier, Verifier] | None:
        """(reference, same model with permuted label order); None when not applicable."""
        return None

    def test_is_a_verifier(self, verifier: Verifier) -> None:
        assert isinstance(verifier, Verifier)
        assert verifier.max_tokens > 0
        assert verifier.name

    def test_probabilities_sum_to_one(self, verifier: Verifier) -> None:
        preds = verifier.predict(PAIRS)
        assert len(preds) == len(PAIRS)
        for p in preds:
            assert isinstance(p, NLIPrediction)
            values = (p.entailment, p.neutral, p.contradiction)
            assert all(0.0 <= v <= 1.0 and math.isfinite(v) for v in values)
            assert sum(values) == pytest.approx(1.0, abs=1e-6)
            assert p.label in LABELS

    def test_empty_list(self, verifier: Verifier) -> None:
        assert verifier.predict([]) == []

    def test_batch_order_preserved(self, verifier: Verifier) -> None:
        forward = verifier.predict(PAIRS)
        backward = verifier.predict(list(reversed(PAIRS)))
        assert_close(forward, backward[::-1], self.batch_tolerance)

    def test_batch_equals_one_by_one(self, verifier: Verifier) -> None:
        batched = verifier.predict(PAIRS)
        single = [verifier.predict([pair])[0] for pair in PAIRS]
        assert_close(batched, single, self.batch_tolerance)

    def test_long_inputs_truncated(self, verifier: Verifier) -> None:
        long_premise = "The committee met again to discuss the budget. " * 600
        long_hypothesis = "The budget was discussed at length by everyone present. " * 200
        pairs = [(long_premise, "The committee met."), (long_premise, long_hypothesis)]
        preds = verifier.predict(pairs)
        assert len(preds) == 2
        assert all(sum(as_rows([p])[0]) == pytest.approx(1.0) for p in preds)

    def test_count_tokens(self, verifier: Verifier) -> None:
        short, longer = verifier.count_tokens("one two"), verifier.count_tokens("one two " * 50)
        assert 0 < short < longer

    def test_bad_input_is_a_typed_error(self, verifier: Verifier) -> None:
        with pytest.raises(InputError):
            verifier.predict("not a list of pairs")  # type: ignore[arg-type]
        with pytest.raises(InputError):
            verifier.predict([("only a premise",)])  # type: ignore[list-item]

    def test_label_order_read_from_config(
        self, permuted_pair: tuple[Verifier, Verifier] | None
    ) -> None:
        if permuted_pair is None:
            pytest.skip("backend has no model config with id2label")
        reference, permuted = permuted_pair
        assert_close(reference.predict(PAIRS), permuted.predict(PAIRS), 1e-4)

    def test_obvious_pairs_ranked_right(self, verifier: Verifier) -> None:
        if not self.real_model:
            pytest.skip("quality asserts need a trained NLI model (see the integration tests)")
        preds = verifier.predict([(p, h) for p, h, _ in OBVIOUS])
        for (premise, hypothesis, gold), pred in zip(OBVIOUS, preds, strict=True):
            assert pred.label == gold, (premise, hypothesis, pred)
        entail = [
            p.entailment for p, (_, _, g) in zip(preds, OBVIOUS, strict=True) if g == "entailment"
        ]
        contra = [
            p.entailment for p, (_, _, g) in zip(preds, OBVIOUS, strict=True) if g != "entailment"
        ]
        assert min(entail) > max(contra)
