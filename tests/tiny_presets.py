"""Tiny randomly initialised models of each fact-checker preset's architecture, built locally.

No hub here: tokenizers are the MiniLM WordPiece shipped in a package (BERT / DeBERTa /
ModernBERT-style), or trained in milliseconds with ``tokenizers`` on a few sentences (byte-level
BPE for RoBERTa, Unigram with T5's special ids pad 0 / eos 1 / unk 2 for T5). Each builder saves
model and tokenizer into a directory that ``{"preset": NAME, "path": DIR}`` loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SENTENCES = [
    "The meeting moved to three in the afternoon.",
    "Paris is the capital of France and its largest city.",
    "The river flooded the valley after a week of rain.",
    "Marie Curie won the Nobel Prize in physics and in chemistry.",
    "The company reported revenue of 12 million dollars in 2023.",
    "Determine if the hypothesis is true given the premise?",
    "Premise: Hypothesis: predict: Choose your answer: based on the paragraph above",
    "can we conclude that OPTIONS: Yes No I think the answer is",
    "Briefly answer the following question: Bear in mind that your response should be",
    "strictly based on the following passages: passage output:",
]


def _wordpiece_tokenizer(eos: str = "[SEP]") -> Any:
    from transformers import AutoTokenizer

    from guardrail.models import minilm_path

    tok = AutoTokenizer.from_pretrained(str(minilm_path()))
    tok.eos_token = eos
    return tok


def roberta_tokenizer() -> Any:
    """A byte-level BPE tokenizer with RoBERTa's special tokens and post-processing."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    special = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(SENTENCES, trainer)
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=False)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        pad_token="<pad>",
        unk_token="<unk>",
        mask_token="<mask>",
        model_max_length=512,
    )


def t5_tokenizer() -> Any:
    """A Unigram tokenizer with T5's layout: ``<pad>`` 0, ``</s>`` 1, ``<unk>`` 2, ``$A </s>``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always")
    tok.decoder = decoders.Metaspace(prepend_scheme="always")
    trainer = trainers.UnigramTrainer(
        vocab_size=200, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>"
    )
    tok.train_from_iterator(SENTENCES, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", 1)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        model_max_length=512,
    )


def _save(model: Any, tokenizer: Any, path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path


def _t5_config(**extra: Any) -> Any:
    from transformers import T5Config

    return T5Config(
        vocab_size=256,  # holds MiniCheck-T5's label ids 3 and 209
        d_model=16,
        d_kv=8,
        d_ff=32,
        num_layers=1,
        num_decoder_layers=1,
        num_heads=2,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
        initializer_factor=1.0,
        **extra,
    )


def build_classifier(path: Path, arch: str, seed: int = 0) -> Path:
    """A 2-label ``DebertaV2`` or ``Roberta`` sequence classifier (MiniCheck / FactCG)."""
    import torch
    from transformers import (
        DebertaV2Config,
        DebertaV2ForSequenceClassification,
        RobertaConfig,
        RobertaForSequenceClassification,
    )

    torch.manual_seed(seed)
    small = dict(
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=2,
    )
    if arch == "roberta":
        tok = roberta_tokenizer()
        config = RobertaConfig(
            vocab_size=len(tok), max_position_embeddings=514, pad_token_id=1, **small
        )
        return _save(RobertaForSequenceClassification(config).eval(), tok, path)
    tok = _wordpiece_tokenizer()
    config = DebertaV2Config(
        vocab_size=len(tok), max_position_embeddings=512, pad_token_id=0, **small
    )
    return _save(DebertaV2ForSequenceClassification(config).eval(), tok, path)


def build_t5_seq2seq(path: Path, seed: int = 0) -> Path:
    """A ``T5ForConditionalGeneration`` whose vocabulary holds ids 3 and 209 (MiniCheck-T5)."""
    import torch
    from transformers import T5ForConditionalGeneration

    torch.manual_seed(seed)
    return _save(T5ForConditionalGeneration(_t5_config()).eval(), t5_tokenizer(), path)


def build_hhem(path: Path, seed: int = 0) -> Path:
    """A T5 encoder with a 2-way token head (``T5ForTokenClassification``), as HHEM-2.1."""
    import torch
    from transformers import T5ForTokenClassification

    torch.manual_seed(seed)
    model = T5ForTokenClassification(_t5_config(num_labels=2)).eval()
    return _save(model, t5_tokenizer(), path)


def build_token_classifier(path: Path, seed: int = 0) -> Path:
    """A ModernBERT token classifier (2 labels, 1 = hallucinated), as LettuceDetect."""
    import torch
    from transformers import ModernBertConfig, ModernBertForTokenClassification

    torch.manual_seed(seed)
    tok = _wordpiece_tokenizer()
    config = ModernBertConfig(
        vocab_size=len(tok),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        max_position_embeddings=1024,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.cls_token_id,
        eos_token_id=tok.sep_token_id,
        cls_token_id=tok.cls_token_id,
        sep_token_id=tok.sep_token_id,
        num_labels=2,
        attn_implementation="eager",
    )
    return _save(ModernBertForTokenClassification(config).eval(), tok, path)


def set_head_bias(path: Path, bias: tuple[float, float], attr: str) -> None:
    """Zero the named head's weight and set its bias, so label ``argmax(bias)`` always wins."""
    import torch
    from transformers import AutoConfig

    from_pretrained = _loader(AutoConfig.from_pretrained(str(path)).architectures[0])
    model = from_pretrained(str(path))
    head = model
    for part in attr.split("."):
        head = getattr(head, part)
    with torch.no_grad():
        head.weight.zero_()
        head.bias.copy_(torch.tensor(bias))
    model.save_pretrained(str(path))


def _loader(arch: str) -> Any:
    import transformers

    return getattr(transformers, arch).from_pretrained


ZH_SENTENCES = [
    "小明今年 18 岁，正在清华大学读计算机专业。",
    "小明是一名大学生。",
    "这篇论文发表于 2023 年。",
    "这篇论文是 2021 年发表的。",
    "AlphaCodium 是一种基于代码生成的新方法，通过迭代改进提升 LLM 的代码能力。",
    "该方法在 CodeContests 数据集上达到了 state-of-the-art 的性能。",
    "AlphaCodium 是 Google 在 2024 年发布的代码生成工具。它使用强化学习来训练模型。",
    "東京は日本の首都です。서울은 한국의 수도이다.",
]
"""Text the multilingual tokenizers are trained on: the original detector's Chinese examples,
a Japanese and a Korean sentence, and the English sentences above."""

ID2LABEL = {0: "entailment", 1: "neutral", 2: "contradiction"}
"""The ``id2label`` of both multilingual model cards' ``config.json``."""


def _unigram(special: list[str], template: tuple[str, str], specials: list[tuple[str, int]]) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always")
    tok.decoder = decoders.Metaspace(prepend_scheme="always")
    trainer = trainers.UnigramTrainer(vocab_size=400, special_tokens=special, unk_token=special[3])
    tok.train_from_iterator(SENTENCES + ZH_SENTENCES, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single=template[0], pair=template[1], special_tokens=specials
    )
    return tok


def xlmr_tokenizer() -> Any:
    """A SentencePiece-style Unigram tokenizer with XLM-R's layout (multilingual MiniLMv2):
    ``<s>`` 0, ``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3; a pair is ``<s> A </s></s> B </s>``, all
    token types 0."""
    from transformers import PreTrainedTokenizerFast

    tok = _unigram(
        ["<s>", "<pad>", "</s>", "<unk>"],
        ("<s> $A </s>", "<s> $A </s> </s> $B </s>"),
        [("<s>", 0), ("</s>", 2)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        pad_token="<pad>",
        unk_token="<unk>",
        model_max_length=512,
    )


def mdeberta_tokenizer() -> Any:
    """A Unigram tokenizer with mDeBERTa-v3's layout: ``[PAD]`` 0, ``[CLS]`` 1, ``[SEP]`` 2,
    ``[UNK]`` 3; a pair is ``[CLS] A [SEP] B [SEP]`` (B's token type 1)."""
    from transformers import PreTrainedTokenizerFast

    tok = _unigram(
        ["[PAD]", "[CLS]", "[SEP]", "[UNK]"],
        ("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"),
        [("[CLS]", 1), ("[SEP]", 2)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        cls_token="[CLS]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        unk_token="[UNK]",
        model_max_length=512,
    )


def build_multilingual_nli(
    path: Path, arch: str, seed: int = 0, id2label: dict[int, str] | None = None
) -> Path:
    """A 3-label NLI cross-encoder of a multilingual preset's architecture: ``xlmr``
    (``XLMRobertaForSequenceClassification``, multilingual-MiniLMv2-L6) or ``mdeberta``
    (``DebertaV2ForSequenceClassification`` with mDeBERTa-v3's relative attention, no token
    types). ``id2label`` defaults to the model cards' (0 entailment, 1 neutral, 2 contradiction).
    """
    import torch
    from transformers import (
        DebertaV2Config,
        DebertaV2ForSequenceClassification,
        XLMRobertaConfig,
        XLMRobertaForSequenceClassification,
    )

    torch.manual_seed(seed)
    labels = dict(id2label or ID2LABEL)
    small = dict(
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=3,
        id2label=labels,
        label2id={v: k for k, v in labels.items()},
    )
    if arch == "xlmr":
        tok = xlmr_tokenizer()
        config = XLMRobertaConfig(
            vocab_size=len(tok),
            max_position_embeddings=514,
            pad_token_id=1,
            bos_token_id=0,
            eos_token_id=2,
            type_vocab_size=1,
            **small,
        )
        return _save(XLMRobertaForSequenceClassification(config).eval(), tok, path)
    tok = mdeberta_tokenizer()
    config = DebertaV2Config(
        vocab_size=len(tok),
        max_position_embeddings=512,
        pad_token_id=0,
        type_vocab_size=0,
        relative_attention=True,
        position_biased_input=False,
        pos_att_type=["p2c", "c2p"],
        position_buckets=256,
        max_relative_positions=-1,
        **small,
    )
    return _save(DebertaV2ForSequenceClassification(config).eval(), tok, path)


NLI_HEADS = {"xlmr": "classifier.out_proj", "mdeberta": "classifier"}
"""The classification head of each multilingual architecture (for :func:`set_head_bias`)."""
