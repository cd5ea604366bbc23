"""Region grounding of a claim's values: a number, date or time must be stated where the
claim's fact is told, not merely somewhere in the documents (no model: alignment is lexical)."""

from __future__ import annotations

import pytest

from guardrail.hallucination.alignment import Alignment, AlignmentIndex, claim_alignment
from guardrail.hallucination.flags import misplaced_value_flag
from guardrail.hallucination.grounding import (
    RegionValues,
    ValueMismatch,
    clauses,
    value_mismatches,
    values_in,
)
from guardrail.report import Claim, Span
from guardrail.text.values import (
    same_number,
    stated_date,
    stated_number,
    stated_time,
    written_like,
)

PLANS = (
    "We offer two plans for small teams. The Basic plan costs $10 a month; the Pro plan costs "
    "$30 a month. Both plans include email support."
)
LOAN = (
    "The loan is offered by First Bank to new customers. The loan carries an interest rate of "
    "3.25% for the first five years. After that the rate follows the market."
)
MEETINGS = (
    "The weekly team stand-up is every Monday at 9:30 in the kitchen area. Sarah Lee runs it; "
    "it takes fifteen minutes.\n\nThe office move to the fourth floor is planned for the first "
    "week of October. Sarah Lee coordinates the move with facilities."
)


def _check(
    claim: str, *passages: str, query: str = "", names: tuple[str, ...] = ()
) -> list[ValueMismatch]:
    """``names``: the claim's names, masked as the pipeline masks the names spaCy finds."""
    index = AlignmentIndex.of(passages, query)
    spans = [(claim.index(n), claim.index(n) + len(n)) for n in names]
    alignment, _ = claim_alignment(claim, index, None)
    assert alignment is not None, "the claim should align with a sentence"
    return value_mismatches(claim, alignment, RegionValues(index), spans)


def _number(text: str, number: str) -> object:
    start = text.index(number)
    return stated_number(text, number, start, start + len(number))


# --- the normaliser ---------------------------------------------------------------------------


def test_numbers_are_read_with_their_units_scales_and_words() -> None:
    n = _number("It raised $5m last year.", "5")
    assert n is not None and n.value == 5_000_000 and n.unit == "$"
    n = _number("about 84,000 people live there", "84,000")
    assert n is not None and n.value == 84_000 and n.unit == "people" and n.approximate
    n = _number("it takes fifteen minutes", "fifteen")
    assert n is not None and n.value == 15 and n.unit == "minute"
    n = _number("water boils at 100°C", "100")
    assert n is not None and n.unit == "°c"
    m = _number("water boils at 100 degrees Celsius", "100")
    assert m is not None and m.unit == "°c" and same_number(n, m)
    f = _number("milk clumps at 45°F", "45")
    c = _number("milk clumps at 45 °C", "45")
    assert f is not None and c is not None and (f.unit, c.unit) == ("°f", "°c")
    assert not same_number(f, c)  # the same digits in two scales are two temperatures
    d = _number("it turned 10 degrees", "10")
    assert d is not None and d.unit == "degree"


def test_close_values_differ_unless_marked_approximate_or_rounded() -> None:
    def same(a: str, an: str, b: str, bn: str) -> bool:
        x, y = _number(a, an), _number(b, bn)
        assert x is not None and y is not None
        return same_number(x, y)  # type: ignore[arg-type]

    assert not same("a rate of 3.5%", "3.5%", "a rate of 3.25%", "3.25%")
    assert not same("460 employees", "460", "450 employees", "450")
    assert same("8.4 million people", "8.4", "8,419,000 people", "8,419,000")
    assert same("84,000 people", "84,000", "about 84,500 people", "84,500")
    assert not same("3 million people", "3", "3.4 million people", "3.4")
    assert same("1,200 staff", "1,200", "1200 staff", "1200")


def test_dates_and_times_compare_after_normalisation() -> None:
    assert stated_date("14 March 2027") == ("date", (2027, 3, 14))
    assert stated_date("March 14, 2027") == ("date", (2027, 3, 14))
    assert stated_date("Monday") == ("weekday", (0,))
    assert stated_time("2pm") == stated_time("14:00") == 840
    assert stated_time("9:30") == 570
    assert stated_time("12am") == 0


# --- grounding --------------------------------------------------------------------------------


def test_a_value_of_the_sibling_clause_is_misplaced_and_repaired_from_its_own_clause() -> None:
    found = _check("The Pro plan costs $10 a month.", PLANS)
    assert len(found) == 1
    m = found[0]
    assert (m.claim_value, m.evidence_value, m.plain) == ("10", "30", True)
    assert m.evidence_sentence[m.evidence_start : m.evidence_end] == "30"


def test_the_value_its_own_clause_states_is_grounded() -> None:
    assert _check("The Pro plan costs $30 a month.", PLANS) == []
    assert _check("The Basic plan costs $10 a month.", PLANS) == []


def test_a_close_value_is_a_different_value_with_the_region_value_as_repair() -> None:
    found = _check("The loan carries an interest rate of 3.5% for the first five years.", LOAN)
    assert [(m.claim_value, m.evidence_value, m.plain, m.in_best) for m in found] == [
        ("3.5%", "3.25%", True, True)
    ]
    assert (
        _check("The loan carries an interest rate of 3.25% for the first five years.", LOAN) == []
    )


def test_a_date_one_day_off_is_caught_with_the_stated_date() -> None:
    passage = (
        "Acme signed a supply contract in 2024. The contract with Acme ends on 13 March 2027. "
        "It can be renewed once."
    )
    found = _check("The contract with Acme ends on 14 March 2027.", passage)
    assert [(m.claim_value, m.evidence_value, m.plain) for m in found] == [
        ("14 March 2027", "13 March 2027", True)
    ]
    assert _check("The contract with Acme ends in March 2027.", passage) == []


def test_a_value_taken_from_another_fact_of_the_documents_is_flagged_without_a_repair() -> None:
    found = _check(
        "Sarah Lee coordinates the move with facilities, which will take fifteen minutes.",
        MEETINGS,
        names=("Sarah Lee",),
    )
    assert [(m.claim_value, m.evidence_value, m.plain) for m in found] == [("fifteen", None, False)]
    claim = "Sarah Lee runs the weekly stand-up, which takes fifteen minutes."
    assert _check(claim, MEETINGS, names=("Sarah Lee",)) == []


def test_a_clock_time_written_another_way_is_the_same_time() -> None:
    assert _check("The weekly team stand-up is every Monday at 9:30am.", MEETINGS) == []
    found = _check("The weekly team stand-up is every Monday at 10:00.", MEETINGS)
    assert [(m.claim_value, m.evidence_value) for m in found] == [("10:00", "9:30")]


def test_a_value_the_question_states_and_a_bare_number_are_not_checked() -> None:
    claim = "The loan carries an interest rate of 3.5% for the first five years."
    assert _check(claim, LOAN, query="Is the rate 3.5%?") == []
    assert _check("The loan is offered by First Bank to 3 new customers.", LOAN) == []


def test_several_values_in_the_slot_flag_without_a_single_repair() -> None:
    passage = (
        "The library opens at 9am on weekdays and the library opens at 10am on Saturdays. "
        "It closes at 6pm."
    )
    found = _check("The library opens at 8am.", passage)
    assert len(found) == 1 and found[0].evidence_value is not None and not found[0].plain


def test_a_value_in_a_clause_about_another_fact_is_no_rival() -> None:
    passage = "The library opens at 9am on weekdays, while the café serves breakfast from 10am."
    found = _check("The library opens at 8am on weekdays.", passage)
    assert [(m.claim_value, m.evidence_value, m.plain) for m in found] == [("8am", "9am", True)]
    passage = (
        "The library selected films for preservation because of their cultural, historic and "
        "artistic importance since the archive began in 1988."
    )
    claim = "In 2018, the film was selected for preservation by the library."
    assert _check(claim, passage) == []
    assert _check("In 2018, the archive began.", passage) != []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Basic plan costs $10; the Pro plan costs $30.", 2),
        ("It opened in 1990 and closed in 2001.", 2),
        ("One plain statement.", 1),
        ("It costs 150 euros in most cities and 220 euros in London, Paris and Zurich.", 2),
        ("It rose in Paris, New York City and Berlin, while sales fell in Tokyo.", 2),
        ("He sold between 10 and 20 cars and she bought none.", 2),
    ],
)
def test_clauses(text: str, expected: int) -> None:
    assert len(clauses(text)) == expected


def test_a_value_stated_beside_a_list_of_names_holding_the_claims_name_is_grounded() -> None:
    passage = (
        "Hotel stays are capped at 150 euros per night in most cities and 220 euros per night "
        "in London, Paris and Zurich. Bookings must be made through the Egencia travel portal."
    )
    claim = "In Paris the hotel cap is 220 euros per night."
    assert _check(claim, passage, names=("Paris",)) == []
    # a value of neither clause is still caught
    found = _check("In Paris the hotel cap is 260 euros per night.", passage, names=("Paris",))
    assert [m.claim_value for m in found] == ["260"]


def test_values_in_reads_number_words_beyond_ten() -> None:
    assert [
        v.mention.text for v in values_in("It takes twenty-five minutes and fifteen seconds.")
    ] == [
        "twenty-five",
        "fifteen",
    ]


# --- what the region states in another writing, or in another fact ------------------------------


def test_a_number_a_tokeniser_spaced_out_is_one_value() -> None:
    assert [(v.mention.text, v.number.value if v.number else None) for v in values_in(
        "about 3, 800 km away and a $ 1, 000 fine for 1. 3 billion people"
    )] == [("3,800", 3800.0), ("1,000", 1000.0), ("1.3", 1.3e9)]  # fmt: skip
    passage = "The fortress is located about 3, 800 km from moscow near the border."
    assert _check("The fortress is located about 3,800 km from moscow.", passage) == []
    found = _check("The fortress is located about 4,800 km from moscow.", passage)
    assert [(m.claim_value, m.evidence_value) for m in found] == [("4,800", "3,800")]
    # items of a list of numbers are no spaced-out thousands number
    listed = "noting the directions of every 100, 500, 1000 or more steps"
    assert [v.mention.text for v in values_in(listed)] == ["100", "500", "1000"]
    assert [v.mention.text for v in values_in("sizes 10, 200 and 300")] == ["10", "200", "300"]


def test_a_decimal_comma_is_a_decimal() -> None:
    n = _number("it stays at 99,9% for a long time", "99,9%")
    assert n is not None and n.value == pytest.approx(99.9) and n.unit == "%"
    n = _number("it cost 99,900 dollars", "99,900")
    assert n is not None and n.value == 99_900


def test_one_is_no_value_and_a_scale_word_belongs_to_its_number() -> None:
    assert values_in("It became one of his signature songs.") == []
    assert [v.mention.text for v in values_in("Around 1.3 billion people marked it.")] == ["1.3"]


def test_values_the_claim_states_together_are_no_rivals_of_each_other() -> None:
    passage = "Milat murdered seven backpackers between 1989 and 1992 in the state forest."
    assert _check("Milat murdered seven backpackers between 1989 and 1992.", passage) == []
    passage = "The executions have been scheduled for December 2019 and January 2020."
    assert _check("The executions are scheduled for December 2019 and January 2020.", passage) == []


def test_a_rounded_evidence_value_is_no_rival_of_the_exact_one() -> None:
    passage = "The couple won the $53million jackpot. They scooped $53,193,914 on the draw."
    assert _check("The couple won the jackpot of $53,193,914.", passage) == []


def test_a_rival_in_another_sentence_does_not_outweigh_the_value_stated_in_the_region() -> None:
    passage = (
        "Blair said he did not want to retire until he was 91 years old. The defiant 61-year-old "
        "former prime minister said he had decades still in him."
    )
    claim = "Former prime minister said he did not want to retire until he was 91 years old."
    assert _check(claim, passage) == []


def test_a_year_or_a_count_stated_only_elsewhere_is_left_to_the_verifier() -> None:
    passage = (
        "Researchers found a way to bypass Secure Boot. It affects every device.\n\n"
        "The 2016 report by two authors was published online."
    )
    claim = "In 2016, two researchers found a way to bypass Secure Boot."
    assert _check(claim, passage, names=("Secure Boot",)) == []


# --- the same value written another way, or told where the claim's fact is told too -----------


def test_a_lower_case_may_is_a_verb_and_a_day_of_a_month_is_a_date() -> None:
    assert values_in("the flag may go back") == []
    assert [(v.mention.text, v.date) for v in values_in("On August 10, and on 12th November")] == [
        ("August 10", ("date", (None, 8, 10))),
        ("12th November", ("date", (None, 11, 12))),
    ]
    passage = "The festival shows it on Thursday 18 October; it opens in cinemas November 9."
    claim = "The festival shows it on 18 October 2018; it opens in cinemas on 9 November 2018."
    assert _check(claim, passage) == []
    found = _check("The festival shows it on 19 October; it opens in cinemas November 9.", passage)
    assert [(m.claim_value, m.evidence_value) for m in found] == [("19 October", "18 October")]


def test_a_month_is_stated_by_a_date_of_that_month_but_not_the_day_by_the_month() -> None:
    passage = "The trial was moved. The trial opens on 18 October 2018 in the city court."
    assert _check("The trial opens in October in the city court.", passage) == []
    passage = (
        "A woman was charged after she hit a girl in february, police said. Miller struck "
        "and killed the girl on february 28 in apopka."
    )
    found = _check("Miller struck and killed the girl on february 14 in apopka.", passage)
    assert [(m.claim_value, m.evidence_value) for m in found] == [("february 14", "february 28")]


def test_a_range_holding_the_stated_value_is_grounded_and_its_ends_are_checked() -> None:
    passage = "The Bruges painting is the best of the copies and was probably painted around 1500."
    claim = "The Bruges painting is the best of the copies and dates from c. 1491–1510."
    assert _check(claim, passage) == []
    assert _check("The painting in Bruges was probably painted around 1520.", passage) != []
    passage = "Asparagus pee shows up between 15 and 30 minutes after eating the vegetable."
    assert _check("Asparagus pee shows up 20 minutes after eating the vegetable.", passage) == []
    found = _check("Asparagus pee shows up 15-50 minutes after eating the vegetable.", passage)
    assert [(m.claim_value, m.evidence_value) for m in found] == [("50", "30")]
    # the end of a range the claim states is no single value inside the region's range
    assert _check("Asparagus pee shows up 16-29 minutes after eating the vegetable.", passage)


def test_an_end_of_a_range_is_rivalled_by_the_end_of_the_regions_range_sharing_the_other() -> None:
    passage = (
        "Amman has many youth projects. The centre works with young people aged 10-24 from all "
        "backgrounds. It opened in 2009."
    )
    # the word after the region's range ("from") is no unit of it: the range's place decides
    found = _check(
        "The centre works with young 10-40 year old people from all backgrounds.", passage
    )
    assert [(m.claim_value, m.evidence_value, m.candidate) for m in found] == [("40", "24", "24")]
    # the start of the claim's range takes the range's unit: it has a slot too
    found = _check(
        "The centre works with young 12-24 year old people from all backgrounds.", passage
    )
    assert [(m.claim_value, m.candidate) for m in found] == [("12", "10")]
    assert (
        _check("The centre works with young 10-24 year old people from all backgrounds.", passage)
        == []
    )


def test_a_falling_range_is_a_range_its_start_in_its_ends_unit() -> None:
    passage = (
        "Milk forms a skin when heated. Casein and beta proteins tend to clump at around 113 to "
        "122°F (about 45 to 50°C). The layer then dries out."
    )
    # "181 to 122°F": the start takes the range's unit and is rivalled by the start of the
    # region's range sharing its end (122°F), not by the Celsius range's start
    found = _check("Casein and beta proteins tend to clump at around 181 to 122°F.", passage)
    assert [(m.claim_value, m.evidence_value, m.candidate) for m in found] == [
        ("181", "113", "113")
    ]
    assert _check("Casein and beta proteins tend to clump at around 113 to 122°F.", passage) == []


def test_the_questions_value_in_the_claims_place_is_the_candidate_among_several() -> None:
    passage = (
        "Copying to a slow drive often stalls near the end. The file is copied into a buffer "
        "first. The file shows 100% in the buffer; the file shows 99.9% while it is copied to "
        "the drive."
    )
    query = "Why will a file load to 99% with no problem then hang for what seems like forever?"
    claim = (
        "One reason files load to 69% and then hang is that the file is copied into a buffer first."
    )
    [m] = _check(claim, passage, query=query)
    assert (m.claim_value, m.plain, m.slotted, m.asked, m.candidate) == (
        "69%",
        False,
        False,
        "99%",
        "99%",
    )
    # the flag says where its repair comes from
    response = claim
    flag = misplaced_value_flag(
        response, Claim(text=claim, span=Span(start=0, end=len(claim))), 0, m
    )
    assert flag.replacement == "99%"
    assert flag.suggestion == "the evidence says 100%; the question says 99%"
    # without the question the region's two values leave no single candidate
    [m] = _check(claim, passage)
    assert (m.asked, m.candidate) == (None, None)
    # a value of the question in another place is no candidate
    [m] = _check(claim, passage, query="Why does my copy hang? It shows 99% for an hour.")
    assert m.candidate is None


def test_a_value_the_claim_states_in_another_unit_is_still_a_rival() -> None:
    passage = (
        "Brussels sprouts have also been linked to odd smelling pee. Asparagus pee usually shows "
        "up between 15 and 30 minutes after eating the vegetable and can last for several hours. "
        "One study found that the smell could last for up to 14 hours!"
    )
    claim = (
        "This usually occurs 15-30 minutes after eating asparagus and can last for several "
        "hours, even up to 1 hours."
    )
    # "up to 14 hours" is close to the claim's "15" (of "15-30 minutes"), but in another unit:
    # it is the rival of "1 hours", not a value the claim states too
    found = _check(claim, passage)
    assert [(m.claim_value, m.evidence_value, m.candidate) for m in found] == [("1", "14", "14")]
    assert _check(claim.replace(" 1 hours", " 14 hours"), passage) == []


def test_a_value_in_a_quoted_title_is_part_of_the_name() -> None:
    passage = "As with 2014's album, the song is a highlight of the record, a college rock dream."
    claim = 'The critic deemed the song a highlight of the record "1989", a college rock dream.'
    assert _check(claim, passage) == []


def test_an_ordinal_is_a_rank_in_a_slot_of_its_own() -> None:
    found = values_in("the 3rd largest city of the 21st century")
    assert [v.number.unit for v in found if v.number] == ["#largest", "#century"]


def test_a_value_told_with_its_own_fact_in_another_clause_is_not_from_elsewhere() -> None:
    passage = (
        "She spoke about pay in the industry for the film. There was an uproar that resulted "
        "in a $2 million donation to the legal defense fund."
    )
    claim = (
        "She spoke about pay in the industry for the film, which led to a donation of $2 "
        "million to the legal defense fund."
    )
    assert _check(claim, passage) == []


def test_a_number_a_tokeniser_spaced_out_stays_in_its_clause() -> None:
    passage = "She pleaded guilty. She faces six months in jail and a $ 1, 000 fine."
    found = _check("She faces six months in jail and a $ 500 fine.", passage)
    assert [(m.claim_value, m.evidence_value, m.plain) for m in found] == [("500", "1,000", True)]


def test_a_value_inside_a_name_of_the_claim_is_part_of_the_name() -> None:
    passage = "He won the chess tournament held in the city in 2016 with a score of 9/14."
    claim = "He won the Candidates Tournament 2018 held in the city."
    assert _check(claim, passage, names=("Candidates Tournament 2018",)) == []
    found = _check("He won the chess tournament held in the city in 2018.", passage)
    assert [(m.claim_value, m.evidence_value) for m in found] == [("2018", "2016")]


def test_a_month_the_claim_states_in_a_date_is_no_rival() -> None:
    passage = (
        "Velvet Revolver Team With Alice In Chains For Summer Tour. \"We'll be closing out the "
        'shows," the guitarist said, adding that the trek, which kicks off in August, will run '
        "through October."
    )
    claim = (
        "Alice in Chains joined Velvet Revolver for a run of gigs from August through October 2007."
    )
    assert _check(claim, passage, names=("Alice in Chains", "Velvet Revolver")) == []


def test_of_several_values_in_the_slot_the_one_in_the_claims_place_is_the_repair() -> None:
    passage = (
        "In fact the 27-year-old soldier received the medal, and his cousin received the medal "
        "70 years ago."
    )
    [found] = _check("The 14-year-old soldier received the medal.", passage)
    assert not found.plain and found.slotted and found.candidate == "27"


def test_a_value_told_twice_once_rounded_is_one_candidate() -> None:
    passage = (
        "One couple won the $ 53million jackpot. Richard and Angela Maxwell scooped "
        "$ 53, 193, 914 on the draw on Tuesday."
    )
    [found] = _check("The couple scooped $ 79,790,871 on the draw.", passage)
    assert found.plain and found.candidate == "53,193,914"


def test_digits_are_a_repair_only_between_numbers_of_the_same_scale() -> None:
    passage = "With 1 billion hours of video streamed every day, buffering everything is a waste."
    [found] = _check("With 4 billion hours of video streamed every day, it is a waste.", passage)
    assert found.candidate == "1"
    [found] = _check("With 4 million hours of video streamed every day, it is a waste.", passage)
    assert found.evidence_value == "1" and not found.same_scale and found.candidate is None


def test_a_decimal_with_a_scale_word_is_compared_at_the_scale_words_scale() -> None:
    # 9.3e9 / 9.3 is 999999999.9999999 in floating point: the same scale as 1.3 billion's
    passage = "Around 1. 3 billion chinese people marked the qingming festival, a holiday."
    [found] = _check("Around 9.3 billion chinese people marked the qingming festival.", passage)
    assert found.same_scale and found.candidate == "1.3"
    assert [v.scale for v in values_in("9.3 billion, 4.1 million, 0.7 million")] == [1e9, 1e6, 1e6]


def test_the_other_end_of_a_range_stating_the_claims_value_is_no_rival_of_it() -> None:
    passage = (
        "Milat is serving seven consecutive life sentences for the murders of seven backpackers "
        "in nsw between 1989 and 1992. Scroll down for video. Ivan milat butchered and buried "
        "the bodies of seven young people between 1989 and 1992 in the belanglo state forest in "
        "southern nsw. Ivan milat, 70, was convicted of butchering seven young people between "
        "1989 and 1992 and burying their bodies in the belanglo state forest in southern nsw. "
        "He has been locked up in goulburn's supermax jail for almost 20 years."
    )
    claim = (
        "Ivan milat was convicted of butchering seven young people between 1989 and 1993 and "
        "burying their bodies in the belanglo state forest in southern nsw."
    )
    [found] = _check(claim, passage)
    assert (found.claim_value, found.candidate) == ("1993", "1992")


def test_values_that_round_each_other_both_stay_rivals() -> None:
    passage = (
        "The couple won the $53million jackpot on the draw. The jackpot of $53 million was won "
        "on the draw."
    )
    [found] = _check("The couple won the jackpot of $79million on the draw.", passage)
    assert found.evidence_value is not None


def test_an_equal_number_in_another_slot_does_not_state_the_claims_quantity() -> None:
    passage = (
        "Twenty wells were studied. Injected fluids in high-volume wells triggered earthquakes "
        "over 30 km away. Science, this issue p. 448"
    )
    [found] = _check("Injected fluids can trigger earthquakes over 448 km away.", passage)
    assert (found.claim_value, found.candidate) == ("448", "30")
    # with nothing else in its slot, the equal number still states it
    assert _check("The study ran 448 km of wells.", "The study ran 448 of wells.") == []


def test_a_number_at_the_start_of_a_text_keeps_its_unit() -> None:
    for text, number, value, unit in [
        ("98 per cent of cases", "98", 98, "%"),
        ("in 98 per cent of cases", "98", 98, "%"),
        ("15 minutes later", "15", 15, "minute"),
        ("5m people", "5", 5, "m"),
        ("$5m raised", "5", 5_000_000, "$"),
    ]:
        start = text.index(number)
        n = stated_number(text, number, start, start + len(number))
        assert n is not None and (n.value, n.unit) == (value, unit), text


def test_of_two_values_in_the_slot_the_one_whose_surroundings_agree_more_is_the_repair() -> None:
    passage = (
        "Scientists found that dog one got it right in 98. 7 per cent of cases, while for dog "
        "two this was 97. 6 per cent."
    )
    [found] = _check("Dog one got it right in 69.7 per cent of cases.", passage)
    assert found.slotted and found.candidate == "98.7"


def test_a_repair_writes_the_evidence_value_as_the_claim_writes_its_own() -> None:
    assert written_like("10", "three") == "3"
    assert written_like("ten", "3") == "three" and written_like("Ten", "3") == "Three"
    assert written_like("2013", "october 2011") == "2011"  # a year alone stays a year alone
    assert written_like("March 6, 2020", "March 2019") == "March 6, 2019"
    assert written_like("March 6, 2020", "6 March 2019") == "March 6, 2019"
    # the evidence states a day or a month the claim does not: its date as it is
    assert written_like("March 2020", "March 6, 2019") == "March 6, 2019"
    assert written_like("March 6, 2020", "April 2019") == "April 2019"
    assert written_like("2013", "1990 to 1995") == "1990 to 1995"  # two years: no single one
    assert written_like("$10", "$30") == "$30" and written_like("3", "twenty-one") == "21"
    assert written_like("seven", "42") == "42"  # past twenty: digits as the evidence has them
    assert written_like("seven", "9" * 5000) == "9" * 5000  # no int() of a huge digit string


def test_a_number_word_in_the_region_repairs_digits_as_digits() -> None:
    passage = (
        "The rules changed this year. For the draw now only three players will be allowed into "
        "the midfield area until possession has been established."
    )
    [found] = _check("For the draw now only 10 players will be allowed into the midfield.", passage)
    assert found.evidence_value == "three" and found.candidate == "3"


def test_a_temperature_in_another_scale_does_not_state_the_claims() -> None:
    passage = (
        "Casein and beta proteins tend to clump when they reach an internal temperature of "
        "around 113 to 122°F (about 45 to 50°C). As the heating continues, the layer dries."
    )
    claim = "Casein and beta proteins tend to clump at an internal temperature of {}."
    [found] = _check(claim.format("45°F"), passage)  # 45 is the Celsius figure
    assert found.claim_value == "45" and found.evidence_value == "122"
    assert _check(claim.format("45 degrees Celsius"), passage) == []


def test_a_long_run_of_equal_words_beside_a_value_puts_it_in_the_claims_place() -> None:
    passage = (
        "He sourced stone for the house in Wales. But it emerged that he admitted lying on "
        "mortgage forms to secure more than $ 800, 000 for the property. In court he admitted "
        "two counts of fraud by lying about his business to secure the $ 847, 000 loan."
    )
    [found] = _check(
        "He admitted lying on mortgage forms to secure more than $ 1,200,000.", passage
    )
    # both amounts are rivals; only the first follows "to secure more than $" as the claim does
    assert not found.plain and found.slotted and found.candidate == "800,000"


def test_a_value_the_region_states_only_away_from_the_claims_words_is_misplaced() -> None:
    passage = (
        "The keeper claims he will fight for the jersey he made his own after breaking into "
        "the side as a 16-year-old in 1996 - before becoming the youngest champion in 2000."
    )
    claim = "He will fight for the jersey he made his own as a 16-year-old in 2000."
    [m] = _check(claim, passage)
    assert (m.claim_value, m.evidence_value, m.candidate) == ("2000", "1996", "1996")
    # the claim's value standing after the claim's words itself is grounded
    assert _check("He became the youngest champion in 2000.", passage) == []


def test_a_number_of_the_question_exempts_only_a_number_of_its_unit() -> None:
    passage = "Eminem and his partner Luis Resto produced 13 of the 17 songs on the album."
    claim = "Eminem and his partner Luis Resto produced 13 of the 2 songs on the album."
    [m] = _check(claim, passage, query="Why was the 2Pac album a disappointment?")
    assert (m.claim_value, m.candidate) == ("2", "17")
    # the question's own count of songs is what the answer is about
    assert _check(claim, passage, query="Which 2 songs did he produce?") == []


def test_a_year_told_alone_is_rivalled_by_the_year_of_a_fuller_date() -> None:
    passage = (
        "The charity raises money for refugees. Nujeen Mustafa was the first person with a "
        "disability to brief the Security Council, on April 25, 2019. The briefing was on "
        "April 24, 2019 in New York."
    )
    claim = "In 2021 Nujeen Mustafa was the first person with a disability to brief the Council."
    found = _check(claim, passage, names=("Nujeen Mustafa",))
    # two dates of one year are one candidate, repaired as a year told alone
    assert [(m.claim_value, m.plain, m.candidate) for m in found] == [("2021", True, "2019")]
    assert _check(claim.replace("2021", "2019"), passage, names=("Nujeen Mustafa",)) == []


def test_the_one_rival_of_the_best_aligned_sentence_is_the_candidate_among_several() -> None:
    passage = (
        "The Jackalopes hired Todd Watson as their new head coach on May 20, 2019, the team "
        "announced. He coached the Ambassadors from 2000 to 2003 and won the league title with "
        "the team in 2002."
    )
    claim = "Todd Watson has been the head coach of the Jackalopes since 2021."
    [m] = _check(claim, passage, names=("Todd Watson",))
    # the region states four years; the sentence telling the claim's fact states one of them
    assert (m.claim_value, m.plain, m.in_best, m.candidate) == ("2021", False, True, "2019")
    # where that sentence states two, there is no single candidate
    two = passage.replace("the team announced", "and its head coach since 2017 left")
    [m] = _check(claim, two, names=("Todd Watson",))
    assert m.candidate is None


def test_a_day_of_a_month_told_alone_is_rivalled_by_a_full_date() -> None:
    passage = (
        "Böðvarsson departs for Millwall. Icelander signs permanently for the Lions for an "
        "undisclosed fee, 12 July 2019. Reading Football Club can announce that striker Jón Daði "
        "Böðvarsson has completed a permanent transfer to Millwall."
    )
    claim = (
        "On 6 July, Reading announced that Böðvarsson had left the club to join Millwall on a "
        "permanent transfer."
    )
    found = _check(claim, passage)
    # repaired as the claim writes it: a day of a month, without the year
    assert [(m.claim_value, m.evidence_value, m.candidate) for m in found] == [
        ("6 July", "12 July 2019", "12 July")
    ]
    assert _check(claim.replace("6 July", "12 July"), passage) == []


def _aligned_by_names(claim: str, passage: str) -> tuple[Alignment, AlignmentIndex]:
    """The region where ``claim`` aligns with its names unmasked, and the passage's index."""
    from guardrail.hallucination.alignment import value_alignment

    index = AlignmentIndex.of([passage])
    region = value_alignment(claim, index)
    assert region is not None
    return region, index


def test_a_short_claims_values_are_grounded_where_its_names_align_it() -> None:
    passage = (
        "Upon retirement, the Walls returned to Canada and lived in Blackville, New Brunswick. "
        "Marion died four years later on 24 January 1957, aged 66."
    )
    claim = "Smith died in Blackville, New Brunswick, on 24 January 1902."
    region, index = _aligned_by_names(claim, passage)
    found = value_mismatches(claim, region, RegionValues(index))
    assert [(m.claim_value, m.candidate) for m in found] == [("24 January 1902", "24 January 1957")]
    told = claim.replace("1902", "1957")
    assert value_mismatches(told, region, RegionValues(index)) == []


def test_a_region_found_by_names_needs_a_rival_told_with_the_claims_other_words() -> None:
    passage = (
        "Ironworking came to North Africa with traders. "
        "North Africa fell to Rome in 30 BCE, after long wars."
    )
    claim = "Ironworking reached North Africa in 800 BCE."
    region, index = _aligned_by_names(claim, passage)
    # found by its names, the region's "30 BCE" tells another fact (no word of the claim
    # besides its names): no rival; read as an ordinary region, it is one
    assert value_mismatches(claim, region, RegionValues(index), by_names=True) == []
    found = value_mismatches(claim, region, RegionValues(index))
    assert [m.evidence_value for m in found] == ["30"]
