"""The input formats and document chunking of the fact-checker presets, as pure functions.

Each function reproduces how the model's authors call their model (read in their code, cited
per function), so a preset gives the model the very string it was trained on:

- MiniCheck RoBERTa / DeBERTa (``Liyan06/MiniCheck`` ``minicheck/inference.py``,
  ``Inferencer.batch_tokenize``): ``tokenizer.eos_token.join([doc, claim])`` as one sequence;
- MiniCheck Flan-T5 (same function): ``"predict: " + doc + eos + claim``;
- FactCG (``derenlei/FactCG`` ``factcg/utils.py`` ``INSTRUCTION_TEMPLATE``, used by
  ``factcg/inference.py`` ``Inferencer.tokenize``): the document, then an instruction asking
  whether the claim can be concluded;
- HHEM-2.1-open (Vectara's ``modeling_hhem_v2.py``): a ``<pad>``-prefixed premise/hypothesis
  prompt;
- LettuceDetect (``KRLabsOrg/LettuceDetect`` README and ``detectors/transformer.py``): a QA
  prompt with numbered passages, paired with the answer as the second segment.

Chunking follows the same code: sentence-aligned chunks that never split a sentence, counted
in model tokens (MiniCheck RoBERTa / DeBERTa, 400), whitespace words (MiniCheck-T5, 500) or
words (FactCG, 550); the support probability of a pair is the maximum over its chunks.

Example::

    minicheck_text("It rained.", "The ground is wet.", "</s>")
    # 'It rained.</s>The ground is wet.'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise

FACTCG_TEMPLATE = (
    "{text_a}\n\nChoose your answer: based on the paragraph above can we conclude that "
    '"{text_b}"?\n\nOPTIONS:\n- Yes\n- No\nI think the answer is '
)
"""FactCG's instruction (``factcg/utils.py``); ``text_a`` = document, ``text_b`` = claim."""

HHEM_TEMPLATE = (
    "<pad> Determine if the hypothesis is true given the premise?\n\n"
    "Premise: {text1}\n\nHypothesis: {text2}"
)
"""HHEM-2.1-open's prompt (``modeling_hhem_v2.py``): ``text1`` = premise, ``text2`` = claim."""

MINICHECK_T5_PREFIX = "predict: "
MINICHECK_T5_LABEL_IDS = (3, 209)
"""Decoder logits read by MiniCheck-Flan-T5: id 3 = "no support", id 209 = "support"."""

_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def minicheck_text(doc: str, claim: str, eos: str) -> str:
    """MiniCheck RoBERTa / DeBERTa: document and claim joined by the tokenizer's eos token."""
    return eos.join([doc, claim])


def minicheck_t5_text(doc: str, claim: str, eos: str) -> str:
    """MiniCheck-Flan-T5: ``"predict: "`` + document + eos + claim."""
    return MINICHECK_T5_PREFIX + eos.join([doc, claim])


def factcg_text(doc: str, claim: str) -> str:
    """FactCG: the document, then the instruction naming the claim."""
    return FACTCG_TEMPLATE.format(text_a=doc, text_b=claim)


def hhem_text(premise: str, hypothesis: str) -> str:
    """HHEM-2.1-open's prompt for one pair."""
    return HHEM_TEMPLATE.format(text1=premise, text2=hypothesis)


def lettuce_prompt(passages: Sequence[str], question: str | None = None) -> str:
    """LettuceDetect's QA context (RAGTruth format, the ``lettucedetect`` README example):
    the question, then the passages numbered ``passage 1: ...``, then ``output:``. Without a
    question, the passages alone (the summary form)."""
    count = len(passages)
    word = _NUMBER_WORDS[count] if count < len(_NUMBER_WORDS) else str(count)
    body = "\n".join(f"passage {i + 1}: {p}" for i, p in enumerate(passages))
    if not question:
        return body
    noun = "passage" if count == 1 else "passages"
    return (
        f"Briefly answer the following question:\n{question}\n\nBear in mind that your "
        f"response should be strictly based on the following {word} {noun}:\n{body}\n\noutput:\n"
    )


def document_sentences(doc: str) -> list[tuple[int, str]]:
    """The document's sentences with the index of their newline block (MiniCheck's
    ``sent_tokenize_with_newlines`` splits blocks first), by guardrail's sentence splitter."""
    from guardrail.text.sentences import split_sentences

    return [(b, s.text) for b, block in enumerate(doc.split("\n")) for s in split_sentences(block)]


def _join(items: list[tuple[int, str]], joiner: str | None) -> str:
    if joiner is not None:
        return joiner.join(text for _, text in items)
    out = items[0][1]
    for (prev, _), (block, text) in pairwise(items):
        out += (" " if block == prev else "\n") + text
    return out


def sentence_chunks(
    doc: str, size: int, count: Callable[[str], int], joiner: str | None = None
) -> list[str]:
    """Sentence-aligned chunks of ``doc`` of at most ``size`` units (``count`` measures a
    sentence); a sentence longer than ``size`` is a chunk of its own. A document with no
    sentence is one (possibly empty) chunk, so every pair is scored once at least.

    The greedy rule is MiniCheck's ``Inferencer.inference_per_example`` ``chunks`` and
    FactCG's ``chunking_src``: add sentences while the running count stays within ``size``.
    Sentences of a chunk are joined as MiniCheck does (a space within a newline block, a
    newline across blocks; ``joiner=None``) or with ``joiner`` (FactCG: ``"\n"``).
    """
    sentences = document_sentences(doc)
    if not sentences:
        return [doc.strip()]
    chunks: list[str] = []
    current: list[tuple[int, str]] = []
    used = 0
    for block, sentence in sentences:
        n = count(sentence)
        if current and used + n > size:
            chunks.append(_join(current, joiner))
            current, used = [], 0
        current.append((block, sentence))
        used += n
    if current:
        chunks.append(_join(current, joiner))
    return chunks


def word_count(text: str) -> int:
    """Whitespace words (MiniCheck-T5's and, approximately, FactCG's chunk unit)."""
    return len(text.split())
