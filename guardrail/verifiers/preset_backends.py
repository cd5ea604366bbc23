"""Transformers backends of the fact-checker presets (MiniCheck, FactCG, HHEM).

Each backend formats a pair as its authors do (:mod:`guardrail.verifiers.formats`), splits a
long premise into the preset's sentence-aligned chunks, scores every chunk and keeps the
highest support probability per pair (the authors' max over chunks). The result is a 2-way
:class:`NLIPrediction`: ``entailment`` = p(supported), ``neutral`` = the rest,
``contradiction`` = 0.

Example::

    from guardrail.verifiers import load_verifier
    v = load_verifier({"preset": "minicheck-roberta-l", "path": "./models/minicheck-rb"})
    [p] = v.predict([("The meeting moved to 3pm.", "The meeting is at 3pm.")])
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.errors import MissingDependencyError, ModelLoadError, VerifierError
from guardrail.verifiers import formats
from guardrail.verifiers.base import NLIPrediction, Pair, Verifier
from guardrail.verifiers.encoding import check_pairs
from guardrail.verifiers.labels import softmax, to_predictions
from guardrail.verifiers.presets import VerifierPreset

logger = logging.getLogger(__name__)


def missing_model_message(preset: VerifierPreset, source: str) -> str:
    """One line: which hub id to fetch or which path to pass (no traceback, no HF text)."""
    if Path(source).expanduser().is_absolute() or source.startswith((".", "~")):
        return (
            f"verifier preset {preset.name!r}: no model at {source}; download {preset.hub_id} "
            f"there (huggingface-cli download {preset.hub_id} --local-dir {source})"
        )
    return (
        f"verifier preset {preset.name!r} needs the model {source}, which is not on this "
        f"machine and the hub cannot be reached; fetch it (huggingface-cli download {source}) "
        f'or pass a local copy: {{"preset": "{preset.name}", "path": "DIR"}} (command line: --verifier {preset.name}=DIR)'
    )


def supported_predictions(p_supported: np.ndarray) -> list[NLIPrediction]:
    """2-way support probabilities → predictions (entailment, neutral = rest, contradiction 0)."""
    p = np.clip(np.asarray(p_supported, dtype=np.float64), 0.0, 1.0)
    return to_predictions(np.stack([p, 1.0 - p, np.zeros_like(p)], axis=1))


class PresetVerifier(Verifier):
    """Base of the preset backends: chunking, batching and the max over chunks.

    Args:
        preset: the preset (format, labels, chunking).
        source: local directory or hub id (default: the preset's hub id).
        threads: torch intra-op threads (0 = leave torch's setting).
        batch_size: model inputs per forward pass.
        max_tokens: longest model input (default: the preset's).
    """

    def __init__(
        self,
        preset: VerifierPreset,
        source: str | Path | None = None,
        *,
        threads: int = 0,
        batch_size: int = 16,
        max_tokens: int | None = None,
    ) -> None:
        self.preset = preset
        self.source = str(source) if source is not None else preset.hub_id
        self.name = preset.name
        self.languages = preset.languages
        self.input_limit = int(max_tokens or preset.max_tokens)
        """The longest model input (the authors' ``max_length``); ``max_tokens``, which sizes
        the pipeline's evidence windows, is this less the prompt's own tokens."""
        self.max_tokens = self.input_limit
        self.batch_size = max(1, int(batch_size))
        self.threads = int(threads)
        self._prepare()
        local = Path(self.source).expanduser()
        if (self.source.startswith((".", "/", "~")) or local.is_absolute()) and not local.is_dir():
            raise ModelLoadError(missing_model_message(preset, self.source))
        try:
            self.tokenizer = self._load_tokenizer()
            self.model = self._load_model()
        except ModelLoadError:
            raise
        except OSError as exc:
            logger.debug("loading %s failed: %s", self.source, exc)
            raise ModelLoadError(missing_model_message(preset, self.source)) from exc
        except Exception as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ModelLoadError(
                f"could not load preset {preset.name} from {self.source}: {first}"
            ) from exc
        self.max_tokens = max(16, self.input_limit - self.template_tokens())
        logger.info("loaded verifier preset %s from %s", preset.name, self.source)

    # -- loading ---------------------------------------------------------------------------

    tensors = "pt"
    """``return_tensors`` of the tokenizer: torch tensors here, numpy for ONNX Runtime."""

    def _prepare(self) -> None:
        """Import the runtime (torch here) and set its threads; raise an install hint."""
        try:
            import torch
            import transformers  # noqa: F401
        except ImportError as exc:
            raise MissingDependencyError("transformers", "models") from exc
        if self.threads:
            torch.set_num_threads(self.threads)

    def _load_tokenizer(self) -> Any:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(self.source)

    def _load_model(self) -> Any:
        raise NotImplementedError

    # -- scoring ---------------------------------------------------------------------------

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def template_tokens(self) -> int:
        """Tokens the input format adds around a (premise, claim) pair, special tokens
        included (so windows plus claim plus prompt fit the model and the claim is never cut)."""
        bare = self.encode([self.format("", "")])["input_ids"]
        return len(bare[0])

    def chunks(self, premise: str) -> list[str]:
        """The premise's chunks (the whole premise when the preset does not chunk)."""
        size = self.preset.chunk_size
        if size <= 0:
            return [premise]
        count: Callable[[str], int] = (
            formats.word_count if self.preset.chunk_unit == "words" else self.count_tokens
        )
        return formats.sentence_chunks(premise, size, count, self.preset.chunk_joiner)

    def format(self, doc: str, claim: str) -> str:
        """The model input string for one (chunk, claim) pair."""
        template = self.preset.template
        eos = str(getattr(self.tokenizer, "eos_token", None) or "</s>")
        if template == "minicheck":
            return formats.minicheck_text(doc, claim, eos)
        if template == "minicheck_t5":
            return formats.minicheck_t5_text(doc, claim, eos)
        if template == "factcg":
            return formats.factcg_text(doc, claim)
        if template == "hhem":
            return formats.hhem_text(doc, claim)
        raise ModelLoadError(f"preset {self.preset.name}: no string format for {template}")

    def encode(self, texts: list[str]) -> dict[str, Any]:
        """Tokenise model input strings as the authors do (one sequence, truncated, padded)."""
        return dict(
            self.tokenizer(
                texts,
                max_length=self.input_limit,
                truncation=True,
                padding=True,
                return_tensors=self.tensors,
            )
        )

    def support(self, texts: list[str]) -> np.ndarray:
        """p(supported) of each formatted input."""
        raise NotImplementedError

    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        pairs = check_pairs(pairs)
        if not pairs:
            return []
        texts: list[str] = []
        owner: list[int] = []
        for i, (premise, claim) in enumerate(pairs):
            for chunk in self.chunks(premise):
                texts.append(self.format(chunk, claim))
                owner.append(i)
        scores = np.zeros(len(texts), dtype=np.float64)
        order = sorted(range(len(texts)), key=lambda k: len(texts[k]))  # similar lengths batch
        try:
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                scores[idx] = self.support([texts[k] for k in idx])
        except Exception as exc:
            raise VerifierError(f"verifier preset {self.name} failed: {exc}") from exc
        best = np.zeros(len(pairs), dtype=np.float64)
        np.maximum.at(best, np.asarray(owner), scores)
        return supported_predictions(best)


class ClassifierPresetVerifier(PresetVerifier):
    """MiniCheck RoBERTa / DeBERTa and FactCG: a 2-label classifier, label 1 = supported."""

    def _load_model(self) -> Any:
        from transformers import AutoModelForSequenceClassification

        model = AutoModelForSequenceClassification.from_pretrained(self.source).eval()
        if int(model.config.num_labels) != 2:
            raise ModelLoadError(
                f"preset {self.preset.name} expects a 2-label model, {self.source} has "
                f"{model.config.num_labels}"
            )
        return model

    def support(self, texts: list[str]) -> np.ndarray:
        import torch

        with torch.inference_mode():
            logits = self.model(**self.encode(texts)).logits.float().numpy()
        return softmax(logits)[:, 1]


class MiniCheckT5Verifier(PresetVerifier):
    """MiniCheck-Flan-T5: one decoder step from the start token; softmax over the logits of
    ids 3 ("no support") and 209 ("support")."""

    def _load_model(self) -> Any:
        from transformers import AutoModelForSeq2SeqLM

        model = AutoModelForSeq2SeqLM.from_pretrained(self.source).eval()
        if int(model.config.vocab_size) <= max(formats.MINICHECK_T5_LABEL_IDS):
            raise ModelLoadError(f"{self.source}: vocabulary too small for ids 3 / 209")
        return model

    def support(self, texts: list[str]) -> np.ndarray:
        import torch

        feed = self.encode(texts)
        start = torch.zeros((len(texts), 1), dtype=torch.long)
        with torch.inference_mode():
            logits = self.model(
                input_ids=feed["input_ids"],
                attention_mask=feed["attention_mask"],
                decoder_input_ids=start,
            ).logits[:, 0, :]
        pair = logits[:, list(formats.MINICHECK_T5_LABEL_IDS)].float().numpy()
        return softmax(pair)[:, 1]


class HHEMVerifier(PresetVerifier):
    """HHEM-2.1-open: a T5 encoder with a 2-way token head; softmax of the first position,
    index 1 = consistent. Loads a ``T5ForTokenClassification`` directory, or Vectara's own
    layout (``HHEMv2ForSequenceClassification``, weights under ``t5.``) without running its
    remote code; the tokenizer is flan-t5-base's unless the directory has one."""

    def _load_tokenizer(self) -> Any:
        from transformers import AutoTokenizer

        local = Path(self.source).expanduser()
        has_own = local.is_dir() and any(
            (local / f).exists() for f in ("tokenizer.json", "spiece.model")
        )
        fallback = self.preset.tokenizer_hub_id or self.source
        config_path = local / "config.json"
        if not has_own and config_path.is_file():  # Vectara's layout names its foundation
            fallback = json.loads(config_path.read_text(encoding="utf-8")).get("foundation") or (
                fallback
            )
        return AutoTokenizer.from_pretrained(self.source if has_own else fallback)

    def _load_model(self) -> Any:
        from transformers import T5ForTokenClassification

        config_path = Path(self.source).expanduser() / "config.json"
        if config_path.exists():
            config = json.loads(config_path.read_text(encoding="utf-8"))
            if "HHEMv2ForSequenceClassification" in (config.get("architectures") or []):
                foundation = config.get("foundation") or self.preset.tokenizer_hub_id
                return self._load_vectara_layout(config_path.parent, str(foundation))
        model: Any = T5ForTokenClassification.from_pretrained(self.source)
        return model.eval()

    def _load_vectara_layout(self, folder: Path, foundation: str) -> Any:
        """Vectara's folder: ``config.json`` names the T5 ``foundation`` (flan-t5-base) whose
        architecture the weights (``t5.`` + T5ForTokenClassification's names) fill."""
        from transformers import AutoConfig, T5ForTokenClassification

        config = AutoConfig.from_pretrained(foundation, num_labels=2)
        model: Any = T5ForTokenClassification(config)
        weights = folder / "model.safetensors"
        if not weights.exists():
            raise ModelLoadError(f"{folder} has no model.safetensors")
        from safetensors.torch import load_file

        state = {k.removeprefix("t5."): v for k, v in load_file(str(weights)).items()}
        missing, unexpected = model.load_state_dict(state, strict=False)
        if unexpected or [m for m in missing if not m.endswith("embed_tokens.weight")]:
            raise ModelLoadError(f"{folder}: weights do not fit T5ForTokenClassification")
        return model.eval()

    def support(self, texts: list[str]) -> np.ndarray:
        import torch

        with torch.inference_mode():
            logits = self.model(**self.encode(texts)).logits[:, 0, :].float().numpy()
        return softmax(logits)[:, 1]
