"""The Hugging Face backend: any sequence-classification NLI model, by hub id or local path.

Works with cross-encoders such as ``cross-encoder/nli-deberta-v3-xsmall`` and
``roberta-large-mnli`` when the machine can reach the hub, and with any local
directory holding a transformers model (e.g. a ``guardrail train-verifier`` checkpoint).
Label order comes from the model's ``config.id2label`` (see :mod:`guardrail.verifiers.labels`).

Example::

    verifier = HFVerifier("cross-encoder/nli-deberta-v3-xsmall", threads=2)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from guardrail.errors import MissingDependencyError, ModelLoadError, VerifierError
from guardrail.verifiers.base import NLIPrediction, Pair, Verifier
from guardrail.verifiers.encoding import PairEncoder, check_pairs
from guardrail.verifiers.labels import LabelMap

if TYPE_CHECKING:
    from guardrail.verifiers.presets import VerifierPreset

logger = logging.getLogger(__name__)


class HFVerifier(Verifier):
    """Scores pairs with a transformers ``AutoModelForSequenceClassification`` in torch.

    Args:
        model: Hugging Face id or local directory.
        threads: torch intra-op threads (process-wide in torch; 0 = leave torch's setting).
        batch_size: pairs per forward pass.
        max_tokens: longest pair; default the length the model was trained at when known
            (``max_length`` in config.json or the training run's files), else the model limit.
    """

    preset: VerifierPreset | None = None
    """The preset it was loaded as (its languages and threshold), if any."""

    def __init__(
        self,
        model: str | Path,
        *,
        threads: int = 0,
        batch_size: int = 32,
        max_tokens: int | None = None,
    ) -> None:
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as exc:
            raise MissingDependencyError("transformers", "models") from exc
        self.name = str(model)
        self.batch_size = max(1, int(batch_size))
        if threads:
            torch.set_num_threads(int(threads))
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(model))
            network = AutoModelForSequenceClassification.from_pretrained(str(model))
        except Exception as exc:
            raise ModelLoadError(
                f"could not load NLI model {model!r}: {exc}. Offline, pass a local directory "
                "or use the bundled verifier (load_verifier())"
            ) from exc
        network.eval()
        self._model = network
        config = network.config
        self.labels = LabelMap.from_id2label(config.id2label, self.name)
        if self.labels.num_labels != int(config.num_labels):
            raise ModelLoadError(f"{model}: id2label does not match num_labels")
        self.max_tokens = _max_tokens(model, config, tokenizer, max_tokens)
        self._encoder: PairEncoder | None = None
        self._slow_tokenizer: Any = None
        if getattr(tokenizer, "is_fast", False):
            from tokenizers import Tokenizer

            backend = Tokenizer.from_str(tokenizer.backend_tokenizer.to_str())
            self._encoder = PairEncoder(backend, self.max_tokens)
        else:
            self._slow_tokenizer = tokenizer
        self._input_names = set(_forward_args(network))
        logger.info("loaded HF verifier %s (max_tokens %d)", self.name, self.max_tokens)

    def count_tokens(self, text: str) -> int:
        if self._encoder is not None:
            return self._encoder.count_tokens(text)
        return len(self._slow_tokenizer.tokenize(text))

    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        import torch

        pairs = check_pairs(pairs)
        if not pairs:
            return []
        logits = np.zeros((len(pairs), self.labels.num_labels), dtype=np.float64)
        try:
            with torch.inference_mode():
                for idx, feed in self._batches(pairs):
                    out = self._model(**feed).logits
                    logits[idx] = out.float().numpy()
        except Exception as exc:
            raise VerifierError(f"HF verifier {self.name} failed: {exc}") from exc
        return self.labels.predictions(logits)

    def _batches(self, pairs: list[Pair]) -> Any:
        import torch

        if self._encoder is not None:
            for batch in self._encoder.batches(pairs, self.batch_size):
                feed = {
                    "input_ids": torch.from_numpy(batch.input_ids),
                    "attention_mask": torch.from_numpy(batch.attention_mask),
                }
                if "token_type_ids" in self._input_names:
                    feed["token_type_ids"] = torch.from_numpy(batch.token_type_ids)
                yield batch.indices, feed
            return
        for start in range(0, len(pairs), self.batch_size):
            chunk = pairs[start : start + self.batch_size]
            enc = self._slow_tokenizer(
                [p for p, _ in chunk],
                [h for _, h in chunk],
                truncation="longest_first",
                max_length=self.max_tokens,
                padding=True,
                return_tensors="pt",
            )
            yield np.arange(start, start + len(chunk)), dict(enc)


def _forward_args(model: Any) -> list[str]:
    import inspect

    return list(inspect.signature(model.forward).parameters)


def _max_tokens(model: str | Path, config: Any, tokenizer: Any, override: int | None) -> int:
    limit = int(getattr(config, "max_position_embeddings", 512) or 512)
    tok_limit = int(getattr(tokenizer, "model_max_length", limit) or limit)
    limit = min(limit, tok_limit) if tok_limit < 100_000 else limit
    if override:
        return max(8, min(limit, int(override)))
    trained = getattr(config, "max_length", None)
    trained = trained if isinstance(trained, int) and trained != 20 else None  # 20 = HF default
    if trained is None:
        trained = _trained_length(Path(model))
    return max(8, min(limit, trained or 512))


def _trained_length(path: Path) -> int | None:
    """The pair length a ``guardrail train-verifier`` run used, from its files, if any."""
    for candidate in (path / "training_summary.json", path.parent / "train_config.json"):
        try:
            value = json.loads(candidate.read_text(encoding="utf-8")).get("max_length")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, int) and value > 0:
            return value
    return None
