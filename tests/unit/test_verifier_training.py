"""Training data utilities and the trainer's checkpoint / resume, on tiny generated data.

The resume tests run the real ``Trainer`` on a tiny random BERT (``base_model``) for a few
steps, interrupt it (``max_minutes``), rerun and check it continues at the saved step.
"""

from __future__ import annotations

import gzip
import json
import logging
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from guardrail.errors import InputError, VerifierError
from guardrail.verifiers.training.data import (
    LABEL_TO_ID,
    TrainPair,
    bucketed_batches,
    drop_excluded,
    iter_batches,
    read_pairs,
    sampling_order,
    split_dev,
)
from tests.verifier_conformance import build_tiny_model

SUBJECTS = ["The dog", "A woman", "The old man", "Two children", "The chef", "A pilot"]
ACTIONS = [("runs in the park", "is outside", "is asleep in bed")]


def write_pairs(path: Path, n: int = 240) -> Path:
    """A small JSONL.gz of NLI pairs from three datasets, one of them two-way."""
    rows = []
    for i in range(n):
        subject = SUBJECTS[i % len(SUBJECTS)]
        act, entailed, contradicted = ACTIONS[0]
        premise = f"{subject} {act} number {i}." + " It is sunny." * (i % 7)
        label = ("entailment", "neutral", "contradiction")[i % 3]
        hypothesis = {
            "entailment": f"{subject} {entailed}.",
            "neutral": f"{subject} is happy about item {i}.",
            "contradiction": f"{subject} {contradicted}.",
        }[label]
        dataset = ("snli_like", "fever_rte", "templated")[i % 4 % 3]
        if dataset == "fever_rte" and label == "contradiction":
            label = "neutral"
        rows.append(
            {"premise": premise, "hypothesis": hypothesis, "label": label, "dataset": dataset}
        )
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
        handle.write("not json\n")
        handle.write(json.dumps({"premise": "x", "hypothesis": "y", "label": "maybe"}) + "\n")
    return path


def make_pairs(counts: dict[str, int]) -> list[TrainPair]:
    return [
        TrainPair(f"{name} premise {i}", f"hyp {i}", i % 3, name, False)
        for name, n in counts.items()
        for i in range(n)
    ]


def test_read_pairs_skips_bad_lines_and_marks_two_way(tmp_path: Path) -> None:
    pairs = read_pairs(write_pairs(tmp_path / "p.jsonl.gz", 30))
    assert len(pairs) == 30
    two_way = [p for p in pairs if p.two_way]
    assert two_way and all(p.dataset == "fever_rte" for p in two_way)
    assert all(not p.two_way for p in pairs if p.dataset != "fever_rte")


def test_sampling_follows_size_times_weight() -> None:
    pairs = make_pairs({"big": 600, "small": 200, "off": 300, "zero": 100})
    weights = {"big": 1.0, "small": 1.5, "off": 0.1, "zero": 0.0}
    order = sampling_order(pairs, 20_000, weights, seed=3)
    share = Counter(pairs[i].dataset for i in order)
    mass = {"big": 600, "small": 300, "off": 30}
    for name, m in mass.items():
        assert share[name] / 20_000 == pytest.approx(m / 930, abs=0.015)
    assert share["zero"] == 0
    with pytest.raises(ValueError):
        sampling_order(pairs, 10, {n: 0.0 for n in weights}, seed=3)


def test_sampling_uses_each_pair_before_repeating() -> None:
    pairs = make_pairs({"a": 50, "b": 50})
    order = sampling_order(pairs, 60, {}, seed=1)
    by_set = {name: [int(i) for i in order if pairs[i].dataset == name] for name in ("a", "b")}
    for drawn in by_set.values():
        assert len(drawn) == len(set(drawn))  # fewer draws than pairs: no repeats


def test_order_is_deterministic_per_seed() -> None:
    pairs = make_pairs({"a": 300, "b": 100})
    one = sampling_order(pairs, 500, {"b": 2.0}, seed=7)
    assert np.array_equal(one, sampling_order(pairs, 500, {"b": 2.0}, seed=7))
    assert not np.array_equal(one, sampling_order(pairs, 500, {"b": 2.0}, seed=8))
    lengths = np.arange(len(pairs)) % 97
    b1 = bucketed_batches(one, lengths, 16, 4, seed=7)
    b2 = bucketed_batches(one, lengths, 16, 4, seed=7)
    assert all(np.array_equal(x, y) for x, y in zip(b1, b2, strict=True))


def test_bucketing_groups_similar_lengths_and_keeps_every_draw() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(10, 500, size=2000)
    order = rng.permutation(2000)[:1600]
    batches = bucketed_batches(order, lengths, 32, 10, seed=0)
    assert sorted(int(i) for b in batches for i in b) == sorted(int(i) for i in order)
    assert all(len(b) == 32 for b in batches)
    spread = np.mean([lengths[b].max() - lengths[b].min() for b in batches])
    random_spread = np.mean([np.ptp(lengths[order[i : i + 32]]) for i in range(0, len(order), 32)])
    assert spread < random_spread / 4
    assert [s for s, _ in iter_batches(batches, 45)] == list(range(45, len(batches)))


def test_split_dev_keeps_premises_together() -> None:
    pairs = [TrainPair(f"premise {i // 3}", f"h{i}", 0, "a", False) for i in range(3000)]
    train, dev = split_dev(pairs, 0.1, seed=13)
    assert 0.05 < len(dev) / len(pairs) < 0.15
    assert not {p.premise for p in train} & {p.premise for p in dev}
    assert split_dev(pairs, 0.1, seed=13)[1] == dev


def test_drop_excluded_matches_normalised_pairs(tmp_path: Path) -> None:
    pairs = make_pairs({"a": 5})
    evaluation = tmp_path / "eval.jsonl"
    evaluation.write_text(
        json.dumps({"premise": "A  PREMISE 1", "hypothesis": "hyp 1 ", "label": "neutral"})
        + "\n"
        + json.dumps({"premise": "a premise 3", "hypothesis": "other", "label": "neutral"})
        + "\n"
    )
    kept = drop_excluded(pairs, [str(evaluation)])
    assert [p.premise for p in kept] == ["a premise 0", "a premise 2", "a premise 3", "a premise 4"]
    assert drop_excluded(pairs, []) is pairs
    with pytest.raises(InputError, match="not found"):
        drop_excluded(pairs, [str(tmp_path / "missing.jsonl")])


def test_two_way_loss() -> None:
    torch = pytest.importorskip("torch")
    from guardrail.verifiers.training.trainer import nli_loss

    logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.3, 1.2], [0.0, 1.0, 2.0]])
    labels = torch.tensor([LABEL_TO_ID["entailment"], LABEL_TO_ID["neutral"], 1])
    p = torch.softmax(logits, -1)
    three = nli_loss(logits, labels, torch.tensor([False, False, False]))
    expected3 = -(torch.log(p[0, 0]) + torch.log(p[1, 1]) + torch.log(p[2, 1])) / 3
    assert float(three) == pytest.approx(float(expected3), rel=1e-5)
    two = nli_loss(logits, labels, torch.tensor([True, True, True]))
    not_e = torch.log(p[:, 1] + p[:, 2])
    expected2 = -(torch.log(p[0, 0]) + not_e[1] + not_e[2]) / 3
    assert float(two) == pytest.approx(float(expected2), rel=1e-5)
    assert float(two) < float(three)  # a contradiction-leaning "not entailed" is not punished


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("base"))


def _config(data: Path, out: Path, base: Path, **extra: object):  # type: ignore[no-untyped-def]
    from guardrail.verifiers.training.trainer import TrainConfig

    values: dict[str, object] = dict(
        data=str(data),
        out=str(out),
        base_model=str(base),
        num_samples=64,
        batch_size=8,
        max_length=48,
        checkpoint_every=3,
        dev_fraction=0.1,
        threads=1,
        freeze_word_embeddings=True,
    )
    values.update(extra)
    return TrainConfig(**values)  # type: ignore[arg-type]


def test_trainer_interrupt_and_resume(
    tmp_path: Path, tiny_base: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("transformers")
    from guardrail.verifiers.training.trainer import Trainer

    data = write_pairs(tmp_path / "pairs.jsonl.gz")
    out = tmp_path / "run"
    stopped = Trainer(_config(data, out, tiny_base, max_minutes=1e-6)).run()
    assert stopped == out / "checkpoint"
    first = json.loads((stopped / "state.json").read_text())["step"]
    assert 1 <= first < 8

    with pytest.raises(VerifierError, match="batch_size"):
        Trainer(_config(data, out, tiny_base, batch_size=4)).run()

    caplog.set_level(logging.INFO, logger="guardrail.verifiers.training.trainer")
    final = Trainer(_config(data, out, tiny_base)).run()
    assert f"resuming at step {first} of 8" in caplog.text
    assert final == out / "model"
    summary = json.loads((final / "training_summary.json").read_text())
    assert summary["steps"] == 8 and summary["max_length"] == 48
    assert json.loads((out / "checkpoint" / "state.json").read_text())["step"] == 8


def test_trainer_bf16_with_exclusions_and_resume_guard(tmp_path: Path, tiny_base: Path) -> None:
    pytest.importorskip("transformers")
    from guardrail.verifiers.training.trainer import Trainer, load_split

    data = write_pairs(tmp_path / "pairs.jsonl.gz")
    evaluation = tmp_path / "eval.jsonl"
    rows = [p for p in read_pairs(data)][:30]
    evaluation.write_text(
        "".join(
            json.dumps({"premise": p.premise, "hypothesis": p.hypothesis, "label": "neutral"})
            + "\n"
            for p in rows
        )
    )
    out = tmp_path / "run"
    config = _config(data, out, tiny_base, bf16=True, exclude=[str(evaluation)])
    train, dev, excluded = load_split(config)
    assert len(train) + len(dev) == 240 - 30 and excluded == 30
    banned = {(p.premise, p.hypothesis) for p in rows}
    assert not banned & {(p.premise, p.hypothesis) for p in train + dev}

    stopped = Trainer(
        _config(data, out, tiny_base, bf16=True, exclude=[str(evaluation)], max_minutes=1e-6)
    ).run()
    assert stopped == out / "checkpoint"
    with pytest.raises(VerifierError, match="exclude"):
        Trainer(_config(data, out, tiny_base, bf16=True)).run()
    final = Trainer(config).run()
    summary = json.loads((final / "training_summary.json").read_text())
    assert summary["steps"] == 8 and summary["excluded_pairs"] == 30
    saved = json.loads((out / "train_config.json").read_text())
    assert saved["bf16"] is True and saved["exclude"] == [str(evaluation)]

    from guardrail.verifiers.card import build_card, render_card

    card = render_card(build_card(out))
    assert "precision: bfloat16 autocast" in card
    assert "removed from training and dev: 30 pairs" in card


def test_continue_from_an_exported_model_records_lineage(tmp_path: Path, tiny_base: Path) -> None:
    """A tiny model is exported to int8 ONNX (a "shipped" folder with a lineage file), rebuilt
    into trainable weights, trained a few steps, and the run records its parent."""
    pytest.importorskip("transformers")
    pytest.importorskip("onnx")
    from guardrail.verifiers.export import export_onnx
    from guardrail.verifiers.training.rebuild import onnx_state_dict, sha256_file
    from guardrail.verifiers.training.trainer import Trainer

    shipped = tmp_path / "shipped"
    export_onnx(tiny_base, shipped, max_length=48)
    history = [{"version": "v1", "steps": 8, "parent": "tiny"}]
    (shipped / "lineage.json").write_text(json.dumps(history))
    recovered = onnx_state_dict(shipped / "model.onnx")
    assert "bert.encoder.layer.1.output.dense.weight" in recovered
    assert recovered["classifier.weight"].shape == (3, 32)

    data = write_pairs(tmp_path / "pairs.jsonl.gz")
    out = tmp_path / "run"
    config = _config(data, out, tiny_base, init_from=str(shipped), max_steps=4)
    final = Trainer(config).run()
    assert final == out / "model"
    saved = json.loads((out / "train_config.json").read_text())
    parent = saved["parent"]
    assert parent["path"] == str(shipped) and parent["history"] == history
    assert parent["sha256"] == sha256_file(shipped / "model.onnx")
    from transformers import AutoTokenizer

    rebuilt_tokenizer = AutoTokenizer.from_pretrained(str(out / "init"))
    assert "token_type_ids" in rebuilt_tokenizer("A premise.", "A hypothesis.")  # pairs: segments
    agreement = parent["rebuild_agreement"]
    assert agreement["pairs"] > 0 and agreement["label_agreement"] >= 0.9
    summary = json.loads((final / "training_summary.json").read_text())
    assert summary["steps"] == 4 and summary["parent_sha256"] == parent["sha256"]

    from guardrail.verifiers.card import build_card, render_card

    card = render_card(build_card(out))
    assert f"sha256 {parent['sha256'][:12]}" in card and "v1 (8 steps)" in card

    with pytest.raises(VerifierError, match="init_from"):  # resume must keep the same parent
        Trainer(_config(data, out, tiny_base, max_steps=4)).run()


def _evidence_rows() -> list[dict[str, str]]:
    pages = [
        "Ada Lovelace (born 10 December 1815) was an English mathematician. She is known for work "
        "on the Analytical Engine of Charles Babbage. In 1843, she published the first algorithm. "
        "Lovelace died in London in 1852 at the age of 36.",
        "Mount Rainier is a large volcano in Washington. It is the highest mountain in the state "
        "at 4,392 metres. The mountain was not named by local tribes. It last erupted in 1894.",
        "The Hollies are an English rock group formed in Manchester in 1962. Graham Nash was "
        "formerly a member of the band. Their single reached number one in March 1965. The group "
        "was nominated for a Grammy award and later toured in Europe.",
    ]
    rows = [
        {"premise": page, "hypothesis": "x", "label": "neutral", "dataset": "fever_docnli"}
        for page in pages
    ]
    rows.append(
        {
            "premise": "Ada Lovelace was an English mathematician.",
            "hypothesis": "Lovelace was a mathematician.",
            "label": "entailment",
            "dataset": "fever_rte",
        }
    )
    rows.append(  # not a source set: never used
        {
            "premise": "Secret evaluation text, 1999.",
            "hypothesis": "y",
            "label": "neutral",
            "dataset": "snli_dev_test_esnli",
        }
    )
    return rows


def test_hard_example_generator_is_seeded_and_labelled(tmp_path: Path) -> None:
    from guardrail.verifiers.training import hardgen

    data = tmp_path / "pairs.jsonl.gz"
    with gzip.open(data, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in _evidence_rows())
    first = hardgen.generate(data, n=200, seed=3)
    assert first == hardgen.generate(data, n=200, seed=3)
    assert first != hardgen.generate(data, n=200, seed=4)
    kinds = {p.kind for p in first}
    assert len(kinds) >= 4 and "hard_supported" in kinds
    for pair in first:
        assert "Secret evaluation" not in pair.premise + pair.hypothesis
        assert hardgen.fits(pair.premise, pair.hypothesis)
        if pair.kind in ("hard_number", "hard_date", "hard_negation", "hard_antonym"):
            assert pair.label == "contradiction" and pair.hypothesis != pair.premise
        if pair.kind in (
            "hard_detail",
            "hard_elsewhere",
            "hard_partial",
            "hard_entity",
            "hard_qualifier",
            "hard_swapword",
        ):
            assert pair.label == "neutral" and pair.two_way and pair.hypothesis not in pair.premise
    out = tmp_path / "hard.jsonl.gz"
    counts = hardgen.write(first, out)
    assert sum(counts.values()) == len(first)
    loaded = read_pairs(out)
    detail = [p for p in loaded if p.dataset == "hard_detail"]
    assert detail and all(p.two_way for p in detail)  # the row's own two_way flag is honoured
    assert hardgen.negate("The river is long.") == "The river is not long."
    assert hardgen.split_sentences("Dr. Smith came. He left at 5 p.m. on Monday.")[0] == (
        "Dr. Smith came."
    )


def test_qualifier_drops_and_word_swaps_say_more_than_the_sentence() -> None:
    import random

    from guardrail.verifiers.training import hardgen

    rng = random.Random(0)
    assert hardgen.drop_qualifier("She was formerly a member of the band.", rng) == (
        "She was a member of the band."
    )
    assert hardgen.drop_qualifier("It is one of the largest lakes.", rng) == (
        "It is the largest lakes."
    )
    assert hardgen.drop_qualifier("The film was nominated for an Oscar.", rng) == (
        "The film won an Oscar."
    )
    assert hardgen.drop_qualifier("He co-founded the label.", rng) == "He founded the label."
    assert hardgen.drop_qualifier("The river is long.", rng) is None
    window = "A fan called for the removal of a banner from the bridge."
    outside = ["The manager criticised the supporters after the match."]
    swapped = hardgen.swap_word(window, window, outside, rng)
    assert swapped is not None and swapped != window
    new_words = set(swapped.lower().rstrip(".").split()) - set(window.lower().rstrip(".").split())
    assert len(new_words) == 1 and new_words <= {"manager", "criticised", "supporters", "match"}
    # the replacement keeps the ending class (-ed for -ed, plural for plural, never -ly here)
    sentence = "The horses galloped."
    for seed in range(8):
        out = hardgen.swap_word(
            sentence, sentence, ["The dancers jumped quickly."], random.Random(seed)
        )
        assert out in ("The dancers galloped.", "The horses jumped.")
    assert hardgen.swap_word(window, window, [], rng) is None
