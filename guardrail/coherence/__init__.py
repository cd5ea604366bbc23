"""Coherence checking (post-processing stage 1): QUD relevance, topic, entity, discourse, reference.

One module per dimension (``qud``, ``topic``, ``entity``, ``discourse``, ``reference``), the
dialogue-act classifier (``acts``), question classification (``questions``) and the checker that
parses once, embeds once and weighs the five scores (``checker``).
"""

from guardrail.coherence.acts import DialogueAct, classify_act
from guardrail.coherence.checker import build_context, check_coherence, embed_prototypes
from guardrail.coherence.questions import AnswerKind, QuestionType, classify_question

__all__ = [
    "AnswerKind",
    "DialogueAct",
    "QuestionType",
    "build_context",
    "check_coherence",
    "classify_act",
    "classify_question",
    "embed_prototypes",
]
