"""The fast CPU backend: an exported cross-encoder on ONNX Runtime (no torch needed).

A model directory holds ``model.onnx`` (int8 or fp32), ``tokenizer.json`` and ``config.json``
(``id2label`` and ``max_length``, the pair length the model was trained at), as written by
:func:`guardrail.verifiers.export.export_onnx`. The bundled offline verifier is such a folder.

Each pair runs in a forward pass of its own. The int8 models quantize their activations with
one scale over the whole input tensor (``DynamicQuantizeLinear``), so in a batch a pair's scores
would depend on the pairs beside it (and their padding): a score cached from one request would
then differ from the score the same pair gets in another, and a report would depend on what the
process checked before. Pairs are spread over ``threads`` worker threads instead, each pass
single-threaded, which on 2 cores is also faster than padded batches of 32.

Example::

    verifier = OnnxVerifier("guardrail/verifiers/bundled", threads=2)
    verifier.predict([("A man is sleeping.", "A man is awake.")])
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.errors import ModelLoadError, VerifierError
from guardrail.verifiers.base import NLIPrediction, Pair, Verifier
from guardrail.verifiers.encoding import PairEncoder, check_pairs, read_json
from guardrail.verifiers.labels import LabelMap

logger = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 512


class OnnxVerifier(Verifier):
    """Scores pairs with ONNX Runtime.

    Args:
        model_dir: folder with ``model.onnx``, ``tokenizer.json`` and ``config.json``.
        threads: pairs scored at once, each on one core (0 = the cores this process may use).
        batch_size: no effect, kept for configurations that set it: every pair runs alone, so
            that its scores never depend on the other pairs of the call (module docstring).
        max_tokens: longest pair fed to the model; default ``config.json``'s ``max_length``
            (capped by ``max_position_embeddings``).
        spin: let idle worker threads busy-wait for the next operator (ONNX Runtime's
            default). Off by default: on a CPU shared with other work (a web server, other
            models) spinning threads burn the cores the computation needs (the Benchmarks page of
            the documentation has the measured throughput). Outputs are the same.
    """

    def __init__(
        self,
        model_dir: str | Path,
        *,
        threads: int = 0,
        batch_size: int = 32,
        max_tokens: int | None = None,
        spin: bool = False,
    ) -> None:
        try:
            import onnxruntime as ort
        except ImportError as exc:  # pragma: no cover - a core dependency
            from guardrail.errors import MissingDependencyError

            raise MissingDependencyError("onnxruntime") from exc
        path = Path(model_dir)
        model_file = path / "model.onnx"
        if not model_file.exists():
            raise ModelLoadError(f"no model.onnx in {path}")
        config = read_json(path / "config.json")
        self.labels = LabelMap.from_id2label(config.get("id2label", {}), str(path))
        self.max_tokens = _max_tokens(config, max_tokens)
        # a stable name (the exported model's own, else its folder): never the install path,
        # so verdict.method and claim reasons do not change with where the package lives
        self.name = str(config.get("name_or_path") or path.resolve().name)
        self.batch_size = 1
        self.workers = max(1, int(threads)) if threads else _usable_cores()
        self._encoder = PairEncoder.from_dir(path, self.max_tokens)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        spinning = "1" if spin else "0"
        options.add_session_config_entry("session.intra_op.allow_spinning", spinning)
        options.add_session_config_entry("session.inter_op.allow_spinning", spinning)
        try:
            self._session = ort.InferenceSession(
                str(model_file), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise ModelLoadError(f"ONNX Runtime could not load {model_file}: {exc}") from exc
        self._inputs = {i.name for i in self._session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self._inputs
        if missing:
            raise ModelLoadError(f"{model_file} lacks inputs {sorted(missing)}")
        outputs = self._session.get_outputs()
        self._output = outputs[0].name
        logger.info(
            "loaded ONNX verifier %s (%d labels, max_tokens %d, %d workers)",
            path,
            self.labels.num_labels,
            self.max_tokens,
            self.workers,
        )

    def count_tokens(self, text: str) -> int:
        return self._encoder.count_tokens(text)

    def predict(self, pairs: Sequence[Pair]) -> list[NLIPrediction]:
        pairs = check_pairs(pairs)
        if not pairs:
            return []
        try:
            if len(pairs) == 1 or self.workers == 1:
                rows = [self._logits(p) for p in pairs]
            else:
                with ThreadPoolExecutor(min(self.workers, len(pairs))) as pool:
                    rows = list(pool.map(self._logits, pairs))
        except Exception as exc:
            raise VerifierError(f"ONNX verifier {self.name} failed: {exc}") from exc
        return self.labels.predictions(np.asarray(rows, dtype=np.float64))

    def _logits(self, pair: Pair) -> np.ndarray:
        """The logits of one pair, from a forward pass that holds it alone (no padding)."""
        ids, type_ids = self._encoder.encode(pair)
        feed: dict[str, Any] = {
            "input_ids": np.asarray([ids], dtype=np.int64),
            "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
        }
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.asarray([type_ids], dtype=np.int64)
        (out,) = self._session.run([self._output], feed)
        return np.asarray(out[0], dtype=np.float64)


def _usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _max_tokens(config: dict[str, Any], override: int | None) -> int:
    limit = int(config.get("max_position_embeddings") or DEFAULT_MAX_TOKENS)
    wanted = override or int(config.get("max_length") or DEFAULT_MAX_TOKENS)
    return max(8, min(limit, wanted))
