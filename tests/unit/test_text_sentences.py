"""Sentence splitting with spans, language detection and mentions (no models)."""

from __future__ import annotations

import pytest

from guardrail.text import detect_language, find_mentions, split_sentences
from guardrail.text.mentions import MentionKind, mention_in
from guardrail.text.sentences import display_length, split_at_terminators


def texts(text: str) -> list[str]:
    return [s.text for s in split_sentences(text)]


def test_spans_point_into_the_source() -> None:
    text = "  First one here.  Second one?\nThird!  "
    for s in split_sentences(text):
        assert text[s.start : s.end] == s.text
    assert texts(text) == ["First one here.", "Second one?", "Third!"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Dr. Smith paid $3.50. He left.", ["Dr. Smith paid $3.50.", "He left."]),
        ("Pi is 3.14159 roughly. Fine.", ["Pi is 3.14159 roughly.", "Fine."]),
        ("J. K. Rowling wrote it. Yes.", ["J. K. Rowling wrote it.", "Yes."]),
        ("The U.S. Army is big. It grew.", ["The U.S. Army is big.", "It grew."]),
        ("Bring food, e.g. bread. Go.", ["Bring food, e.g. bread.", "Go."]),
        ("It ends at 2 p.m. on Monday. Bye.", ["It ends at 2 p.m. on Monday.", "Bye."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ('"Is it?" she asked. Yes.', ['"Is it?" she asked.', "Yes."]),
        ("Wait... What happened? Nothing!", ["Wait...", "What happened?", "Nothing!"]),
        (
            'The court ruled in "Brown v. Board of Education". It held.',
            ['The court ruled in "Brown v. Board of Education".', "It held."],
        ),
        (
            "The panel dates from c. 1491. It is oak.",
            ["The panel dates from c. 1491.", "It is oak."],
        ),
    ],
)
def test_abbreviations_decimals_quotes(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


def test_lists_split_per_item_without_markers() -> None:
    text = "Steps:\n1. Open the box.\n2. Take the item\n- bullet one\n* bullet two\n\nNew paragraph"
    assert texts(text) == [
        "Steps:",
        "Open the box.",
        "Take the item",
        "bullet one",
        "bullet two",
        "New paragraph",
    ]
    for s in split_sentences(text):
        assert text[s.start : s.end] == s.text


def test_year_at_sentence_end_still_splits() -> None:
    assert texts("It was published in 2023. It won.") == ["It was published in 2023.", "It won."]


def test_a_decimal_a_tokeniser_spaced_out_stays_in_its_sentence() -> None:
    assert texts("Dog one was right in 98. 7 per cent of cases. It was.") == [
        "Dog one was right in 98. 7 per cent of cases.",
        "It was.",
    ]
    assert texts("Around 1. 3 billion people mark it. Next.") == [
        "Around 1. 3 billion people mark it.",
        "Next.",
    ]
    # a year, or a count before a sentence, still ends one
    assert texts("It was founded in 1998. 30 people joined.") == [
        "It was founded in 1998.",
        "30 people joined.",
    ]
    assert texts("He won 2. He lost.") == ["He won 2.", "He lost."]


def test_cjk_punctuation_splits_without_spaces() -> None:
    text = "AlphaCodium 是 Google 在 2024 年发布的代码生成工具。它使用强化学习来训练模型。真的吗？“是的。”好！"
    got = split_sentences(text)
    assert [s.text for s in got] == [
        "AlphaCodium 是 Google 在 2024 年发布的代码生成工具。",
        "它使用强化学习来训练模型。",
        "真的吗？",
        "“是的。”",
        "好！",
    ]
    for s in got:
        assert text[s.start : s.end] == s.text


def test_cjk_counts_double_for_claim_length() -> None:
    assert display_length("小明已经30岁了。") == 9 + 6


def test_language_detection() -> None:
    assert detect_language("The paper was published in 2021 by the team.") == "en"
    assert detect_language("这篇论文是 2021 年发表的。") == "zh"
    assert detect_language("Der Vertrag wurde gestern von beiden Parteien unterschrieben.") == "de"
    assert detect_language("LLM", fallback="en") == "en"  # too short: the fallback


def test_mentions_names_numbers_dates() -> None:
    found = [(m.kind, m.text) for m in find_mentions("AlphaCodium was released by Google in 2024.")]
    assert found == [
        (MentionKind.NAME, "AlphaCodium"),
        (MentionKind.NAME, "Google"),
        (MentionKind.DATE, "2024"),
    ]
    kinds = {m.text: m.kind for m in find_mentions("At 2pm on March 3, 2023, 3,000 came (4.5%).")}
    assert kinds["2pm"] is MentionKind.TIME
    assert kinds["March 3, 2023"] is MentionKind.DATE
    assert kinds["3,000"] is MentionKind.NUMBER
    assert kinds["4.5%"] is MentionKind.NUMBER


def test_mention_lookup_is_exact_for_numbers_fuzzy_for_names() -> None:
    [year] = find_mentions("in 2021")
    assert not mention_in(year, "It was published in 2023 and cited 12021 times.")
    assert mention_in(year, "Published 2021.")
    [name] = find_mentions("run by Google")
    assert not mention_in(name, "AlphaCodium is a code generation method.")
    assert mention_in(name, "google's team built it")


def test_short_claims_take_the_response_language_unless_their_script_differs() -> None:
    from guardrail.text.language import claim_language, response_language

    assert claim_language("Ferdinand Magellan did.", "en") == "en"
    assert claim_language("它使用强化学习来训练模型。", "en") == "zh"
    assert response_language("Arthur's Magazine", "Which magazine was started first?") == "en"


@pytest.mark.parametrize("reply", ["Yes, I do.", "Me too!", "No, it isn't.", "I do too, lol", "Ok"])
def test_short_english_replies_are_english(reply: str) -> None:
    from guardrail.text.language import english_by_words, response_language

    assert english_by_words(reply)
    assert response_language(reply, "Do you?") == "en"
    assert response_language(reply) == "en"


@pytest.mark.parametrize("reply", ["Ja, das ist gut.", "Oui, c'est vrai.", "Sí, es verdad.", "Ööö"])
def test_short_replies_in_other_languages_are_not_read_as_english(reply: str) -> None:
    from guardrail.text.language import english_by_words

    assert not english_by_words(reply)


def test_a_reply_too_short_to_tell_takes_the_evidence_language() -> None:
    from guardrail.text.language import response_language

    evidence = (
        "Batman is a superhero who appears in American comic books published by DC Comics. "
        "He fights crime in Gotham City."
    )
    assert response_language("yes, batman beats all evil", "Yes . I agree .") is None
    assert response_language("yes, batman beats all evil", "Yes . I agree .", "", evidence) == "en"


def test_a_short_english_looking_reply_keeps_a_long_dialogues_language() -> None:
    from guardrail.text.language import response_language

    query = "Kannst du mir sagen, wann der Vertrag unterschrieben wurde und von wem?"
    assert response_language("Ok, yes.", query) == "de"


TERMINATOR_TEXTS = [
    "Dr. Smith paid $3.50. He left!  Then?\nNo.\n\nNext line\nand more",
    "会议在周四。时间是下午两点！ 好吗？ Yes. 3.14 is pi.",
    "  leading space. trailing space.  ",
    "",
]


def test_split_at_terminators_is_the_benchmarks_plain_cut() -> None:
    import re

    for text in TERMINATOR_TEXTS:
        plain = [p for p in re.split(r"(?<=[.!?])\s+", text) if p.strip()]
        assert split_at_terminators(text) == plain
        wide = [s for s in re.split(r"(?<=[.!?。！？])\s+|\n+", text) if s.strip()]
        assert split_at_terminators(text, ".!?。！？", at_newlines=True) == wide
    assert split_at_terminators("Dr. Smith paid. He left.") == ["Dr.", "Smith paid.", "He left."]


def _hardgen_old_cut(text: str) -> list[str]:
    """``training/hardgen.py``'s own splitter before it used ``split_before_capitals``."""
    import re

    from guardrail.verifiers.training.hardgen import _ABBREV

    out: list[str] = []
    current = ""
    for piece in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"(])", text.strip()):
        current = f"{current} {piece}".strip() if current else piece
        if not _ABBREV.search(current):
            out.append(current)
            current = ""
    if current:
        out.append(current)
    return [s for s in out if len(s.split()) >= 3]


def _varied_texts(n: int = 400) -> list[str]:
    """Premises from nli-train when it is on this machine (longer ones first), else generated
    texts, plus hand-made edge cases (abbreviations, initials, quotes, digits, blanks)."""
    import gzip
    import json
    import random

    from guardrail.evaluation.sources import data_root

    nli_train = data_root(None) / "nli-train" / "pairs.jsonl.gz"
    rng = random.Random(29)
    texts: list[str] = []
    if nli_train.exists():
        seen: set[str] = set()
        with gzip.open(nli_train, "rt", encoding="utf-8") as fh:
            for k, line in enumerate(fh):
                if k >= 60_000:
                    break
                premise = json.loads(line).get("premise") or ""
                if premise not in seen and (len(premise) > 120 or k % 50 == 0):
                    seen.add(premise)
                    texts.append(premise)
        rng.shuffle(texts)
        texts = texts[:n]
    words = ["Dr.", "Mr.", "J.", "U.S.", "e.g.", "i.e.", "the", "cat", "sat.", "It", "was",
             "3.5", "10.", '"Yes."', "(see", "p.m.", "Inc.", "ran!", "why?", "no.", "St.",
             "Co.", "vs.", "Ltd.", "A.", "Then", "42", "ok", "  ", "\n", "é."]  # fmt: skip
    while len(texts) < n + 200:
        texts.append(" ".join(rng.choice(words) for _ in range(rng.randint(0, 30))))
    return [*texts, "", "   ", "Dr. Smith came. He left at 5 p.m. on Monday.", "A. B. C."]


def test_split_before_capitals_is_hardgens_old_cut() -> None:
    from guardrail.verifiers.training import hardgen

    texts = _varied_texts()
    assert len(texts) >= 400
    for text in texts:
        assert hardgen.split_sentences(text) == _hardgen_old_cut(text), text
    assert sum(len(_hardgen_old_cut(t)) > 1 for t in texts) > 50  # the cut is exercised


def test_split_before_capitals_rule() -> None:
    import re

    from guardrail.text.sentences import split_before_capitals

    assert split_before_capitals("Dr. Smith paid. he left. Then 3 more came.") == [
        "Dr.",
        "Smith paid. he left.",
        "Then 3 more came.",
    ]
    assert split_before_capitals("Dr. Smith paid.", re.compile(r"\bDr\.$")) == ["Dr. Smith paid."]
    assert split_before_capitals('It rained. "Yes," he said. (Really.) 5 left.') == [
        "It rained.",
        '"Yes," he said.',
        "(Really.) 5 left.",  # a bracket after the dot: no cut
    ]
    assert split_before_capitals("  ") == []
