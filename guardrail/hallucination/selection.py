"""Evidence selection per claim: the evidence sentences a claim most likely rests on, as a premise.

Sliding windows cut a long document at fixed token offsets, so the sentence that supports a
claim shares its window with text about other things, and a small verifier reading 160 tokens
is easily distracted by them; the single best-matching sentence of the whole evidence, read
alone, ranks supported above unsupported claims better than the best window does (the
figures are on the Benchmarks page of the documentation, "Evidence selection"). Published
checkers get much of their edge the same way (SummaC: sentence-level premises; MiniCheck:
sentence-aligned chunks).

Every evidence text is split into sentences once per check (:func:`split_evidence`); a
:class:`SentencePool` ranks them for each claim — BM25 over content-word stems, a claim's names
and numbers counting double (:class:`~guardrail.hallucination.pruning.LexicalIndex`) — and
:meth:`SentencePool.premise` joins the top ``k`` in document order, within a token budget,
behind the passage's title when it has one (``metadata["title"]``). With
``hallucination.selection.enabled`` (off by default: the bundled verifier's first premise is
already a short one, ``speed.sentence_first``, and a second short premise in the max lets a
small model over-entail; see the Benchmarks page) the premise is scored beside the
claim's windows (first, so a claim it settles costs one pair) and takes part in the max over
premises like any window.

Example::

    >>> pool = SentencePool(split_evidence([("Lyon is big. Bob was born in 1990.", 0, None, None)]))
    >>> pool.premise("Bob was born in 1990.", k=1, budget=50).text
    'Bob was born in 1990.'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from guardrail.hallucination.pruning import LexicalIndex
from guardrail.hallucination.windows import TokenCounter, Window
from guardrail.text.sentences import split_sentences

SELECTED_WINDOW = -1
"""``window_index`` of a selected-sentences premise (it is no window of its passage)."""


@dataclass(frozen=True)
class EvidenceSentence:
    """One sentence of one evidence text, with its span in that text."""

    passage_index: int
    text: str
    start: int
    end: int
    source: str | None = None
    title: str | None = None


def split_evidence(
    texts: Iterable[tuple[str, int, str | None, str | None]],
) -> list[EvidenceSentence]:
    """The sentences of ``(text, passage_index, source, title)`` evidence texts, in order."""
    out: list[EvidenceSentence] = []
    for text, index, source, title in texts:
        for s in split_sentences(text):
            if s.text.strip():
                out.append(EvidenceSentence(index, s.text, s.start, s.end, source, title))
    return out


@dataclass(frozen=True)
class Premise:
    """Selected sentences joined into one premise, and where they come from."""

    text: str
    sentences: tuple[int, ...]
    """Indices into the pool, in document order."""
    window: Window
    """The premise as a window (for evidence pointers): the first sentence's passage; the span
    covers the selected sentences when they are all in that passage."""


class SentencePool:
    """The evidence sentences of one check, ranked per claim (the index is built once)."""

    def __init__(
        self, sentences: list[EvidenceSentence], count_tokens: TokenCounter | None = None
    ) -> None:
        self.sentences = sentences
        self._count_tokens = count_tokens

    @cached_property
    def _index(self) -> LexicalIndex:
        return LexicalIndex([s.text for s in self.sentences])

    @cached_property
    def _tokens(self) -> list[int]:
        """Tokens per sentence (the verifier's tokenizer, else words)."""
        if self._count_tokens is None:
            return [len(s.text.split()) for s in self.sentences]
        baseline = self._count_tokens("")
        return [max(1, self._count_tokens(s.text) - baseline) for s in self.sentences]

    def rank(self, claim: str) -> list[int]:
        """Sentence indices, best match first; sentences sharing no term with the claim are
        left out."""
        scores = self._index.scores(claim)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [i for i in order if scores[i] > 0]

    def premise(self, claim: str, k: int, budget: int, titles: bool = True) -> Premise | None:
        """The claim's top ``k`` sentences in document order, as many as fit ``budget`` tokens
        (the best one always), behind its passage's title (``titles``); ``None`` when no
        sentence shares a term with the claim."""
        ranked = self.rank(claim)
        if not ranked or k < 1:
            return None
        chosen: list[int] = []
        used = 0
        for i in ranked[:k]:
            n = self._tokens[i]
            if chosen and used + n > budget:
                continue
            chosen.append(i)
            used += n
        chosen.sort(key=lambda i: (self.sentences[i].passage_index, self.sentences[i].start))
        parts: list[str] = []
        last_passage: int | None = None
        for i in chosen:
            s = self.sentences[i]
            if titles and s.passage_index != last_passage and s.title:
                parts.append(f"{s.title.strip()}.")
            parts.append(s.text)
            last_passage = s.passage_index
        first = self.sentences[chosen[0]]
        same = [
            self.sentences[i]
            for i in chosen
            if self.sentences[i].passage_index == first.passage_index
        ]
        end = same[-1].end if len(same) == len(chosen) else first.end
        text = " ".join(parts)
        window = Window(first.passage_index, SELECTED_WINDOW, text, first.start, end, first.source)
        return Premise(text, tuple(chosen), window)
