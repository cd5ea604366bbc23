"""Text utilities: sentence splitting with spans, language detection, mentions (names,
numbers, dates) for evidence lookups."""

from guardrail.text.language import detect_language
from guardrail.text.mentions import Mention, MentionKind, find_mentions
from guardrail.text.sentences import Sentence, cjk_count, display_length, split_sentences

__all__ = [
    "Mention",
    "MentionKind",
    "Sentence",
    "cjk_count",
    "detect_language",
    "display_length",
    "find_mentions",
    "split_sentences",
]
