"""Evidence as sliding windows sized in verifier tokens (default 400 tokens, stride 200).

Each passage (and the knowledge-base facts, rendered as text) is cut into overlapping windows
on word boundaries. Token counts come from the verifier's tokenizer when it has
``count_tokens``, else one token per word. A passage that fits is one window.

Example::

    >>> ws = make_windows("a b c d e f", passage_index=0, window_tokens=4, stride=2)
    >>> [w.text for w in ws]
    ['a b c d', 'c d e f']
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from guardrail.errors import ConfigError

KB_PASSAGE = -1
"""``passage_index`` of the knowledge-base facts."""
DIALOGUE_PASSAGE = -2
"""``passage_index`` of the dialogue turns."""

TokenCounter = Callable[[str], int]


@dataclass(frozen=True)
class Window:
    """A slice ``[start, end)`` of one evidence text."""

    passage_index: int
    window_index: int
    text: str
    start: int
    end: int
    source: str | None = None


def word_token_counts(words: list[str], count_tokens: TokenCounter | None) -> list[int]:
    """Tokens per word: the tokenizer's count of the word alone minus its special tokens."""
    if count_tokens is None:
        return [1] * len(words)
    baseline = count_tokens("")
    cache: dict[str, int] = {}
    out = []
    for word in words:
        if word not in cache:
            cache[word] = max(1, count_tokens(word) - baseline)
        out.append(cache[word])
    return out


def make_windows(
    text: str,
    passage_index: int,
    window_tokens: int,
    stride: int,
    count_tokens: TokenCounter | None = None,
    source: str | None = None,
) -> list[Window]:
    """Overlapping windows of at most ``window_tokens`` tokens, starting every ``stride`` tokens.

    Args:
        text: the evidence text.
        passage_index: recorded in each window (see ``KB_PASSAGE``).
        window_tokens: window size in tokens; a single longer word still makes one window.
        stride: tokens between window starts (``stride >= window_tokens`` = no overlap).
        count_tokens: the verifier's token counter, or ``None`` for one token per word.
        source: recorded in each window.
    """
    if window_tokens < 1 or stride < 1:
        raise ConfigError("window_tokens and window_stride must be at least 1")
    matches = list(re.finditer(r"\S+", text))
    if not matches:
        return []
    counts = word_token_counts([m.group(0) for m in matches], count_tokens)
    offsets = [0]
    for c in counts:
        offsets.append(offsets[-1] + c)
    n = len(matches)
    windows: list[Window] = []
    first = 0
    while True:
        last = first
        while last < n and offsets[last + 1] - offsets[first] <= window_tokens:
            last += 1
        last = max(last, first + 1)  # at least one word
        start, end = matches[first].start(), matches[last - 1].end()
        windows.append(Window(passage_index, len(windows), text[start:end], start, end, source))
        if last >= n:
            return windows
        target = offsets[first] + stride
        nxt = first + 1
        while nxt < n and offsets[nxt] < target:
            nxt += 1
        first = min(nxt, last)  # never skip words between windows


def best_snippet(window_text: str, claim: str, max_chars: int = 300) -> str:
    """The sentence of the window sharing most words with the claim, shortened."""
    from guardrail.text.sentences import split_sentences

    claim_words = {w.lower() for w in re.findall(r"\w+", claim)}
    sentences = split_sentences(window_text) or []
    if not sentences:
        return window_text[:max_chars]
    best = max(
        sentences,
        key=lambda s: len(claim_words & {w.lower() for w in re.findall(r"\w+", s.text)}),
    )
    text = best.text
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
