"""Fact-checker presets on tiny random models of each architecture (no hub).

Each preset must give its model the exact input its authors' code builds (compared with an
independent construction from the raw tokenizer), read the labels the right way round, chunk
long documents on sentence boundaries and keep the maximum over chunks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from guardrail.errors import ConfigError, ModelLoadError
from guardrail.verifiers import clear_cache, load_verifier
from guardrail.verifiers.formats import sentence_chunks
from guardrail.verifiers.presets import PRESETS, get_preset, preset_names
from tests import tiny_presets as tiny

pytest.importorskip("transformers")

DOC = "Paris is the capital of France. The river flooded the valley."
CLAIM = "Paris is the capital."


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny-presets")
    return {
        "minicheck-roberta-l": tiny.build_classifier(root / "rb", "roberta"),
        "minicheck-deberta-l": tiny.build_classifier(root / "db", "deberta"),
        "minicheck-flan-t5-l": tiny.build_t5_seq2seq(root / "t5"),
        "hhem-2.1-open": tiny.build_hhem(root / "hhem"),
        "tinylettuce-17m": tiny.build_token_classifier(root / "lt"),
    }


def _load(models: dict[str, Path], name: str, model: str | None = None, **opts: Any) -> Any:
    return load_verifier({"preset": name, "path": str(models[model or name])}, **opts)


def _raw(tok: Any, text: str) -> list[int]:
    """Token ids of ``text`` with no special tokens, from the raw ``tokenizers`` object."""
    return list(tok.backend_tokenizer.encode(text, add_special_tokens=False).ids)


def _ids(verifier: Any, doc: str, claim: str) -> list[int]:
    return list(verifier.encode([verifier.format(doc, claim)])["input_ids"][0].tolist())


def test_registry_lists_every_documented_preset() -> None:
    wanted = {
        "bundled",
        "nli-deberta-v3-xsmall",
        "roberta-large-mnli",
        "minicheck-roberta-l",
        "minicheck-deberta-l",
        "minicheck-flan-t5-l",
        "factcg-deberta-l",
        "hhem-2.1-open",
        "lettucedetect-base",
        "tinylettuce-17m",
        "multilingual-minilmv2-l6-xnli",
        "mdeberta-v3-base-xnli-2mil7",
    }
    assert set(preset_names()) == wanted
    assert get_preset("MiniCheck-DeBERTa-L") is PRESETS["minicheck-deberta-l"]
    assert all(p.hub_id and p.labels and p.input_format for p in PRESETS.values())


def test_minicheck_roberta_input_is_doc_eos_claim(models: dict[str, Path]) -> None:
    v = _load(models, "minicheck-roberta-l")
    tok = v.tokenizer
    bos, eos = tok.convert_tokens_to_ids("<s>"), tok.convert_tokens_to_ids("</s>")
    expected = [bos, *_raw(tok, DOC), eos, *_raw(tok, CLAIM), eos]
    assert _ids(v, DOC, CLAIM) == expected


def test_minicheck_deberta_input_is_doc_sep_claim(models: dict[str, Path]) -> None:
    v = _load(models, "minicheck-deberta-l")
    tok = v.tokenizer
    cls, sep = tok.convert_tokens_to_ids("[CLS]"), tok.convert_tokens_to_ids("[SEP]")
    assert _ids(v, DOC, CLAIM) == [cls, *_raw(tok, DOC), sep, *_raw(tok, CLAIM), sep]


def test_factcg_input_is_the_instruction_string(models: dict[str, Path]) -> None:
    v = _load(models, "factcg-deberta-l", "minicheck-deberta-l")
    tok = v.tokenizer
    text = (
        DOC + "\n\nChoose your answer: based on the paragraph above can we conclude that "
        '"' + CLAIM + '"?\n\nOPTIONS:\n- Yes\n- No\nI think the answer is '
    )
    cls, sep = tok.convert_tokens_to_ids("[CLS]"), tok.convert_tokens_to_ids("[SEP]")
    assert _ids(v, DOC, CLAIM) == [cls, *_raw(tok, text), sep]


def test_minicheck_t5_input_and_label_ids(models: dict[str, Path]) -> None:
    import torch

    v = _load(models, "minicheck-flan-t5-l")
    tok = v.tokenizer
    eos = tok.convert_tokens_to_ids("</s>")
    assert eos == 1
    assert _ids(v, DOC, CLAIM) == [*_raw(tok, "predict: " + DOC), eos, *_raw(tok, CLAIM), eos]
    # one decoder step from id 0, softmax over the logits of ids 3 (no support) and 209 (support)
    enc = tok(["predict: " + DOC + "</s>" + CLAIM], return_tensors="pt")
    with torch.inference_mode():
        logits = v.model(**enc, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits
    l3, l209 = float(logits[0, 0, 3]), float(logits[0, 0, 209])
    expected = 1.0 / (1.0 + np.exp(l3 - l209))
    [p] = v.predict([(DOC, CLAIM)])
    assert p.entailment == pytest.approx(expected, abs=1e-5)
    assert p.contradiction == 0.0


def test_hhem_input_is_the_pad_prefixed_prompt(models: dict[str, Path]) -> None:
    v = _load(models, "hhem-2.1-open")
    tok = v.tokenizer
    rest = (
        " Determine if the hypothesis is true given the premise?\n\nPremise: "
        + DOC
        + "\n\nHypothesis: "
        + CLAIM
    )
    assert _ids(v, DOC, CLAIM) == [tok.pad_token_id, *_raw(tok, rest), tok.eos_token_id]


@pytest.mark.parametrize(
    ("name", "model", "head"),
    [
        ("minicheck-roberta-l", "minicheck-roberta-l", "classifier.out_proj"),
        ("minicheck-deberta-l", "minicheck-deberta-l", "classifier"),
        ("hhem-2.1-open", "hhem-2.1-open", "classifier"),
    ],
)
def test_label_one_means_supported(
    models: dict[str, Path], tmp_path: Path, name: str, model: str, head: str
) -> None:
    import shutil

    for bias, supported in (((-6.0, 6.0), True), ((6.0, -6.0), False)):
        path = tmp_path / f"{name}-{supported}"
        shutil.copytree(models[model], path)
        tiny.set_head_bias(path, bias, head)
        [p] = load_verifier({"preset": name, "path": str(path)}).predict([(DOC, CLAIM)])
        assert (p.entailment > 0.99) is supported
        assert p.contradiction == 0.0


def test_lettuce_label_one_means_hallucinated(models: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    answer = "Paris is the capital. It has 90 million people."
    for bias, hallucinated in (((-6.0, 6.0), True), ((6.0, -6.0), False)):
        path = tmp_path / f"lt-{hallucinated}"
        shutil.copytree(models["tinylettuce-17m"], path)
        tiny.set_head_bias(path, bias, "classifier")
        v = load_verifier({"preset": "tinylettuce-17m", "path": str(path)})
        [p] = v.predict([(DOC, CLAIM)])
        assert (p.entailment < 0.01) is hallucinated
        spans = v.spans([DOC], answer, "What is the capital?")
        if hallucinated:  # every answer token flagged: one span over the whole answer
            assert [(s.start, s.end) for s in spans] == [(0, len(answer))]
            assert spans[0].text == answer
        else:
            assert spans == []


def test_chunks_are_sentence_aligned_and_bounded() -> None:
    doc = " ".join(f"Sentence number {i} has five words." for i in range(20))
    chunks = sentence_chunks(doc, 12, lambda s: len(s.split()))
    assert all(len(c.split()) <= 12 for c in chunks)
    assert all(c.endswith("words.") for c in chunks)
    assert " ".join(chunks) == doc
    assert sentence_chunks("", 10, len) == [""]


def test_long_document_scores_the_max_over_chunks(models: dict[str, Path]) -> None:
    v = _load(models, "minicheck-deberta-l", batch_size=4)
    doc = " ".join(
        [
            "Paris is the capital of France and its largest city.",
            "The river flooded the valley after a week of rain.",
            "Marie Curie won the Nobel Prize in physics and in chemistry.",
        ]
        * 25
    )
    chunks = v.chunks(doc)
    assert len(chunks) > 1
    assert all(v.count_tokens(c) <= 400 for c in chunks)
    per_chunk = [p.entailment for p in v.predict([(c, CLAIM) for c in chunks])]
    [whole] = v.predict([(doc, CLAIM)])
    assert whole.entailment == pytest.approx(max(per_chunk), abs=1e-6)


def test_missing_model_is_one_line_naming_hub_id_or_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub.constants as hub_constants

    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    clear_cache()
    with pytest.raises(ModelLoadError) as err:
        load_verifier({"preset": "minicheck-roberta-l", "path": str(tmp_path / "nope")})
    assert "\n" not in str(err.value) and "lytang/MiniCheck-RoBERTa-Large" in str(err.value)
    with pytest.raises(ModelLoadError) as err:
        load_verifier("factcg-deberta-l")
    message = str(err.value)
    assert "\n" not in message and "yaxili96/FactCG-DeBERTa-v3-Large" in message
    assert '"path"' in message
    with pytest.raises(ConfigError):
        load_verifier({"preset": "no-such-model"})


def test_check_works_for_every_preset_against_a_local_model(models: dict[str, Path]) -> None:
    import contextlib
    import io
    import json

    from guardrail.cli import main

    specs = {**{name: str(path) for name, path in models.items()}}
    specs["factcg-deberta-l"] = str(models["minicheck-deberta-l"])
    specs["lettucedetect-base"] = str(models["tinylettuce-17m"])
    for name, path in specs.items():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(
                [
                    "check",
                    "-r",
                    CLAIM,
                    "-p",
                    DOC,
                    "--verifier",
                    f"{name}={path}",
                    "--format",
                    "json",
                ]
            )
        report = json.loads(out.getvalue())
        assert rc == 0, name
        assert report["verdict"]["method"].startswith(f"{name}; uncalibrated (threshold 0.5)")
        assert report["claims"][0]["p_supported"] is not None, name


def test_lettuce_batched_support_equals_its_token_probabilities(models: dict[str, Path]) -> None:
    from guardrail.verifiers.formats import lettuce_prompt

    v = _load(models, "tinylettuce-17m", batch_size=2)
    pairs = [(DOC, CLAIM), ("Short.", "A much longer claim about the valley."), (DOC, "Lyon.")]
    got = [p.entailment for p in v.predict(pairs)]
    for (premise, claim), p in zip(pairs, got, strict=True):
        probs, _ = v.token_probabilities(lettuce_prompt([premise]), claim)
        assert p == pytest.approx(1.0 - float(probs.max()), abs=1e-5)


def test_chunks_keep_newline_blocks_as_the_authors_join_them() -> None:
    doc = "First line one. First line two.\nSecond block here."
    words = lambda s: len(s.split())  # noqa: E731
    assert sentence_chunks(doc, 100, words) == [doc]  # MiniCheck: space in a block, \n across
    assert sentence_chunks(doc, 100, words, "\n") == [
        "First line one.\nFirst line two.\nSecond block here."
    ]  # FactCG: every sentence on its own line
    assert sentence_chunks(doc, 6, words) == [
        "First line one. First line two.",
        "Second block here.",
    ]


def test_hhem_loads_vectaras_folder_layout_without_remote_code(
    models: dict[str, Path], tmp_path: Path
) -> None:
    """Vectara's repository: HHEMv2ForSequenceClassification, weights under ``t5.``, no
    tokenizer; config.json names the T5 foundation (here the tiny one, locally)."""
    import json

    from safetensors.torch import load_file, save_file

    src = models["hhem-2.1-open"]
    folder = tmp_path / "vectara-layout"
    folder.mkdir()
    state = {
        f"t5.{k}": v.contiguous() for k, v in load_file(str(src / "model.safetensors")).items()
    }
    save_file(state, str(folder / "model.safetensors"))
    config = {"architectures": ["HHEMv2ForSequenceClassification"], "foundation": str(src)}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    ref = _load(models, "hhem-2.1-open").predict([(DOC, CLAIM)])
    got = load_verifier({"preset": "hhem-2.1-open", "path": str(folder)}).predict([(DOC, CLAIM)])
    assert got[0].entailment == pytest.approx(ref[0].entailment, abs=1e-6)


def test_windows_leave_room_for_the_prompt(models: dict[str, Path]) -> None:
    """``max_tokens`` (which sizes the evidence windows) is the model limit less the prompt."""
    v = _load(models, "hhem-2.1-open")
    assert v.input_limit == 512
    assert v.max_tokens == 512 - v.template_tokens() and v.template_tokens() > 10
