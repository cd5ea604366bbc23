"""Value comparison, as pure functions: the rule fact validation and the coherence checks share
(in this neutral module so neither check imports the other).

:func:`compare_values` decides whether a claimed value equals a reference value, trying in turn:

1. ``exact`` — equal ignoring case and surrounding whitespace / final punctuation;
2. ``normalised`` — equal after normalising by kind: emails (case, ``mailto:``), URLs (scheme,
   ``www.``, trailing ``/``), phone numbers (digits; a missing country code is tolerated),
   dates (a claim at year or month precision matches a fuller date with the same year / month),
   numbers (``85,000`` = ``85k`` = ``85 thousand``), quantities with units (``5 km`` =
   ``5000 m``) and text (articles, punctuation and generic heads like "department" dropped);
3. ``edit_distance`` — for free text only, normalised Levenshtein distance below the configured
   ratio (0.1). Structured values (emails, phones, URLs, numbers, dates) never match fuzzily: a
   one-character difference in an email is a different address.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class MatchRule(StrEnum):
    """Which rule decided a comparison."""

    EXACT = "exact"
    NORMALISED = "normalised"
    EDIT_DISTANCE = "edit_distance"
    DIFFERENT = "different"


class ValueKind(StrEnum):
    EMAIL = "email"
    URL = "url"
    PHONE = "phone"
    DATE = "date"
    NUMBER = "number"
    TEXT = "text"


@dataclass(frozen=True)
class Comparison:
    """The outcome of comparing a claimed value with a reference value."""

    matches: bool
    rule: MatchRule
    kind: ValueKind
    distance: float | None = None
    """Normalised edit distance, when that rule was tried."""


EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
URL_RE = re.compile(r"(?:https?://|www\.)\S+", re.I)
PHONE_RE = re.compile(r"^\+?[\d\s().\-/]{7,}$")
YEAR_PATTERN = r"(?:1[0-9]|20)\d{2}"
"""A four-digit year as a text states one: 1000–2099 (a four-digit number beyond is more often
a count, "2500 employees", than a year). The one year range of the value and mention rules."""

MONTHS: dict[str, int] = {
    m: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for m in names
}
"""Month names and their abbreviations → month number: the one month table."""
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "bn": 1e9,
          "b": 1e9, "billion": 1e9, "trillion": 1e12}  # fmt: skip
_WORD_NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}  # fmt: skip
#: unit → (dimension, factor to the base unit)
_UNITS: dict[str, tuple[str, float]] = {
    "mm": ("length", 0.001), "cm": ("length", 0.01), "m": ("length", 1.0),
    "meter": ("length", 1.0), "metre": ("length", 1.0), "km": ("length", 1000.0),
    "kilometer": ("length", 1000.0), "kilometre": ("length", 1000.0),
    "mi": ("length", 1609.344), "mile": ("length", 1609.344), "ft": ("length", 0.3048),
    "foot": ("length", 0.3048), "feet": ("length", 0.3048), "in": ("length", 0.0254),
    "inch": ("length", 0.0254), "g": ("mass", 0.001), "gram": ("mass", 0.001),
    "kg": ("mass", 1.0), "kilogram": ("mass", 1.0), "lb": ("mass", 0.45359237),
    "pound": ("mass", 0.45359237), "t": ("mass", 1000.0), "tonne": ("mass", 1000.0),
    "s": ("time", 1.0), "sec": ("time", 1.0), "second": ("time", 1.0),
    "min": ("time", 60.0), "minute": ("time", 60.0), "h": ("time", 3600.0),
    "hr": ("time", 3600.0), "hour": ("time", 3600.0), "day": ("time", 86400.0),
    "week": ("time", 604800.0), "%": ("percent", 1.0), "percent": ("percent", 1.0),
    "usd": ("usd", 1.0), "$": ("usd", 1.0), "dollar": ("usd", 1.0),
    "eur": ("eur", 1.0), "€": ("eur", 1.0), "euro": ("eur", 1.0),
    "gbp": ("gbp", 1.0), "£": ("gbp", 1.0),
}  # fmt: skip
_GENERIC_HEADS = {"department", "dept", "team", "division", "group", "office", "unit",
                  "inc", "ltd", "llc", "corp", "corporation", "company", "the", "a", "an"}  # fmt: skip


def clean(value: str) -> str:
    """Strip whitespace, surrounding quotes and final punctuation."""
    return value.strip().strip("\"'“”‘’").strip().rstrip(".,;:!?").strip()


def normalise_email(value: str) -> str | None:
    m = EMAIL_RE.search(value.removeprefix("mailto:"))
    return m.group(0).casefold() if m else None


def normalise_url(value: str) -> str | None:
    v = clean(value)
    if not URL_RE.match(v):
        return None
    v = re.sub(r"^https?://", "", v, flags=re.I)
    return re.sub(r"^www\.", "", v, flags=re.I).rstrip("/").casefold()


def _bare_url(value: str) -> str:
    """A URL or bare domain without scheme, ``www.`` and trailing ``/``, case-folded."""
    v = re.sub(r"^https?://", "", clean(value), flags=re.I)
    return re.sub(r"^www\.", "", v, flags=re.I).rstrip("/").casefold()


def normalise_phone(value: str) -> str | None:
    v = clean(value)
    if not PHONE_RE.match(v):
        return None
    digits = re.sub(r"\D", "", v)
    return digits if 7 <= len(digits) <= 15 else None


def parse_date(value: str) -> tuple[int, int | None, int | None] | None:
    """``(year, month, day)`` with ``None`` for parts not stated; ``None`` if not a date."""
    v = clean(value).casefold().replace(",", " ")
    v = re.sub(r"\b(?:in|on|of|since|the)\b", " ", v)
    v = re.sub(r"(\d)(?:st|nd|rd|th)\b", r"\1", v)
    v = re.sub(r"\s+", " ", v).strip()
    if m := re.fullmatch(r"(\d{4})-(\d{1,2})(?:-(\d{1,2}))?", v):
        return int(m[1]), int(m[2]), int(m[3]) if m[3] else None
    if m := re.fullmatch(r"(\d{4})", v):
        return (int(m[1]), None, None) if is_year(m[1]) else None
    if m := re.fullmatch(r"([a-z]+)\.? (\d{4})", v):  # March 2018
        month = MONTHS.get(m[1])
        return (int(m[2]), month, None) if month else None
    if m := re.fullmatch(r"([a-z]+)\.? (\d{1,2}) (\d{4})", v):  # March 1 2018
        month = MONTHS.get(m[1])
        return (int(m[3]), month, int(m[2])) if month else None
    if m := re.fullmatch(r"(\d{1,2}) ([a-z]+)\.? (\d{4})", v):  # 1 March 2018
        month = MONTHS.get(m[2])
        return (int(m[3]), month, int(m[1])) if month else None
    return None


def is_year(text: str) -> bool:
    """Whether ``text`` is a four-digit year in the one year range (:data:`YEAR_PATTERN`)."""
    return re.fullmatch(YEAR_PATTERN, text) is not None


def dates_match(
    a: tuple[int, int | None, int | None], b: tuple[int, int | None, int | None]
) -> bool:
    """Equal in every part both state (``2020`` matches ``2020-03-15``)."""
    return all(x == y for x, y in zip(a, b, strict=True) if x is not None and y is not None)


def parse_quantity(value: str) -> tuple[float, str | None] | None:
    """``(amount in base unit, dimension)``; dimension ``None`` for a bare number."""
    v = clean(value).casefold().replace(",", "")
    v = re.sub(r"\b(?:about|around|approximately|roughly|some|a year|per year|annually)\b", "", v)
    v = re.sub(r"\s+", " ", v).strip()
    prefix_unit = None
    if v and v[0] in "$€£":  # ("" is in every string: a blank value has no unit)
        prefix_unit, v = v[0], v[1:].strip()
    m = re.fullmatch(r"(-?\d+(?:\.\d+)?|[a-z]+)\s*([a-z%]+)?\s*([a-z%$€£]+)?", v)
    if not m:
        return None
    number_text, first, second = m[1], m[2], m[3]
    if number_text.isalpha():
        if number_text not in _WORD_NUMBERS:
            return None
        amount = float(_WORD_NUMBERS[number_text])
    else:
        amount = float(number_text)
    unit_words = [w for w in (first, second) if w]
    head = unit_words[0] if unit_words else None
    # "m" is million after a currency sign or before a unit ("$5m", "5 m usd"), else metres.
    if head in _SCALE and (head not in _UNITS or prefix_unit or len(unit_words) > 1):
        amount *= _SCALE[unit_words.pop(0)]
    unit = prefix_unit or (unit_words[0] if unit_words else None)
    if unit_words[1:]:
        return None
    if unit is None:
        return amount, None
    key = unit if unit in _UNITS else unit.rstrip("s")
    if key not in _UNITS:
        return None
    dimension, factor = _UNITS[key]
    return amount * factor, dimension


def normalise_text(value: str) -> str:
    """Case-folded words without punctuation, articles and generic heads."""
    words = re.findall(r"[\w@.+-]+", clean(value).casefold())
    kept = [w.strip(".") for w in words if w.strip(".") not in _GENERIC_HEADS]
    return " ".join(w for w in kept if w) or " ".join(words)


def value_kind(value: str) -> ValueKind:
    """The kind of a value (decides which normalisation applies)."""
    if normalise_email(value) and "@" in clean(value) and " " not in clean(value):
        return ValueKind.EMAIL
    if normalise_url(value):
        return ValueKind.URL
    if parse_date(value):
        return ValueKind.DATE
    if normalise_phone(value) and len(re.sub(r"\D", "", value)) >= 7:
        return ValueKind.PHONE
    if parse_quantity(value):
        return ValueKind.NUMBER
    return ValueKind.TEXT


def compare_values(claimed: str, reference: str, edit_distance_ratio: float = 0.1) -> Comparison:
    """Whether ``claimed`` states the same value as ``reference`` (see the module docstring)."""
    a, b = clean(claimed), clean(reference)
    kind = value_kind(b)
    if a.casefold() == b.casefold():
        return Comparison(True, MatchRule.EXACT, kind)
    if kind is ValueKind.EMAIL:
        same = normalise_email(a) == normalise_email(b) and normalise_email(a) is not None
        return Comparison(same, MatchRule.NORMALISED if same else MatchRule.DIFFERENT, kind)
    if kind is ValueKind.URL or (kind is ValueKind.TEXT and value_kind(a) is ValueKind.URL):
        kind = ValueKind.URL
        same = _bare_url(a) == _bare_url(b)
        return Comparison(same, MatchRule.NORMALISED if same else MatchRule.DIFFERENT, kind)
    if kind is ValueKind.DATE:
        da, db = parse_date(a), parse_date(b)
        same = da is not None and db is not None and dates_match(da, db)
        return Comparison(same, MatchRule.NORMALISED if same else MatchRule.DIFFERENT, kind)
    if kind is ValueKind.PHONE:
        pa, pb = normalise_phone(a), normalise_phone(b)
        same = bool(pa and pb and (pa == pb or (len(pa) >= 7 and len(pb) >= 7 and (
            pa.endswith(pb) or pb.endswith(pa)))))  # fmt: skip
        return Comparison(same, MatchRule.NORMALISED if same else MatchRule.DIFFERENT, kind)
    if kind is ValueKind.NUMBER:
        qa, qb = parse_quantity(a), parse_quantity(b)
        same = (
            qa is not None
            and qb is not None
            and (qa[1] == qb[1] or None in (qa[1], qb[1]))
            and abs(qa[0] - qb[0]) <= 1e-9 * max(1.0, abs(qa[0]), abs(qb[0]))
        )
        return Comparison(same, MatchRule.NORMALISED if same else MatchRule.DIFFERENT, kind)
    na, nb = normalise_text(a), normalise_text(b)
    if na == nb:
        return Comparison(True, MatchRule.NORMALISED, kind)
    from rapidfuzz.distance import Levenshtein

    distance = Levenshtein.normalized_distance(na, nb)
    if distance < edit_distance_ratio:
        return Comparison(True, MatchRule.EDIT_DISTANCE, kind, distance)
    return Comparison(False, MatchRule.DIFFERENT, kind, distance)


# --- values as mentioned in running text --------------------------------------------------------

_TENS = {w: 10 * i for i, w in enumerate(
    "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if w != "_"}  # fmt: skip
_APPROXIMATE = re.compile(
    r"(?:about|around|approximately|approx\.?|roughly|nearly|almost|some|circa|c\.|over|"
    r"more than|less than|fewer than|under|up to|at least|at most|estimated|an estimated|~)\s*$",
    re.IGNORECASE,
)
_UNIT_WORD = re.compile(r"\s*-?\s*([^\W\d_]+|%|°\s*[CF]?)", re.UNICODE)
_SCALE_AFTER = re.compile(r"\s*(thousand|million|billion|trillion|bn|mn|[kmb])\b", re.IGNORECASE)
CURRENCY_SIGNS = "$€£¥"
"""Currency signs a number is read with (``$5m``)."""
_PER_CENT = re.compile(r"\s*-?\s*per\s*cent\b", re.IGNORECASE)
"""A percentage written "98 per cent" (British)."""
_TEMPERATURE_SCALE = re.compile(r"\s*(celsius|centigrade|fahrenheit|[CF])\b", re.IGNORECASE)
"""The scale word after "degrees" ("100 degrees Celsius"): the unit is then "°c" or "°f"."""
_TEMPERATURES = frozenset({"°c", "°f"})
_UNIT_ALIASES = {"percent": "%", "°": "degree", "deg": "degree",
                 "yr": "year", "hr": "hour", "min": "minute", "sec": "second"}  # fmt: skip


@dataclass(frozen=True)
class StatedNumber:
    """A number as running text states it: its value (scale words applied), its unit key and
    whether the text marks it approximate."""

    value: float
    unit: str
    """``%``, a currency sign, or the next word lower-cased without a plural ``s``; ``""`` for
    a bare number."""
    approximate: bool
    precision: float
    """Half the value of the last digit written (``8.4 million``: 50,000): a rounding the
    number's own writing allows."""


def word_number(text: str) -> float | None:
    """``fifteen`` → 15, ``twenty-five`` → 25, ``a hundred`` → 100; ``None`` otherwise."""
    words = re.split(r"[\s-]+", text.casefold().strip())
    words = [w for w in words if w not in ("a", "and")]
    if not words:
        return None
    total, current = 0.0, 0.0
    for w in words:
        if w in _WORD_NUMBERS:
            current += _WORD_NUMBERS[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred":
            current = (current or 1) * 100
        elif w in _SCALE and w.isalpha() and len(w) > 2:
            total += (current or 1) * _SCALE[w]
            current = 0.0
        else:
            return None
    return total + current


_DIGITS = re.compile(r"\d+")
_A_YEAR = re.compile(rf"\b{YEAR_PATTERN}\b")
_NUMBER_WORD_OF = {i: w for w, i in _WORD_NUMBERS.items()}


def written_like(claimed: str, stated: str) -> str:
    """``stated`` (the evidence's value) written as ``claimed`` (the claim's) writes its value,
    so a repair keeps the claim's form: digits where the claim writes digits ("10" against
    "three" → "3"), a number word up to twenty where it writes a word ("ten" against "3" →
    "three"), the year alone where it states a year alone ("2013" against "October 2011" →
    "2011"), the claim's date with the evidence's year where the evidence states no month or
    day the claim does not ("March 6, 2020" against "March 2019" → "March 6, 2019"), a day
    of a month without a year where it states one ("5 July" against "12 July 2019" → "12
    July"). Anything else: ``stated`` as it is."""
    c, s = claimed.strip(), stated.strip()
    day_month = _day_month_like(c, s)
    if day_month is not None:
        return day_month
    if re.fullmatch(YEAR_PATTERN, c):
        found = _A_YEAR.findall(s)
        return found[0] if len(found) == 1 else stated
    claim_years, stated_years = _A_YEAR.findall(c), _A_YEAR.findall(s)
    if len(claim_years) == 1 and len(stated_years) == 1:
        ours, theirs = stated_date(c), stated_date(s)
        if ours and theirs and ours[0] == theirs[0] == "date":
            # the evidence states no month or day the claim does not: only the year differs
            if all(b is None or a == b for a, b in zip(ours[1][1:], theirs[1][1:], strict=True)):
                return _A_YEAR.sub(stated_years[0], claimed)
    if _DIGITS.fullmatch(c) and not any(ch.isdigit() for ch in s):
        value = word_number(s)
        return str(int(value)) if value is not None and value.is_integer() else stated
    spoken = word_number(c)
    if spoken is not None and _DIGITS.fullmatch(s) and len(s) <= 2 and int(s) in _NUMBER_WORD_OF:
        word = _NUMBER_WORD_OF[int(s)]
        return word.capitalize() if c[:1].isupper() else word
    return stated


def _day_month_like(claimed: str, stated: str) -> str | None:
    """A day of a month without a year ("5 July", "July 5th") with the evidence's day and
    month, in the claim's order and month word ("12 July" against "12 July 2019");
    ``None`` unless the claim is such a day and the evidence states a day and a month."""
    ours, theirs = stated_date(claimed), stated_date(stated)
    if not (ours and theirs and ours[0] == theirs[0] == "date" and ours[1][0] is None):
        return None
    month, day = theirs[1][1], theirs[1][2]
    if month is None or day is None:
        return None
    word = _MONTH_WORD.search(claimed)
    if word is None:
        return None
    if month != ours[1][1]:
        named = _MONTH_WORD.search(stated)
        if named is None or MONTHS.get(named.group(0).casefold().rstrip(".")) != month:
            return None
        new_word = named.group(0)
    else:
        new_word = word.group(0)
    digits = re.search(r"\d{1,2}(st|nd|rd|th)?", claimed)
    if digits is None:
        return None
    number = f"{day}{_ordinal(day) if digits.group(1) else ''}"
    out = claimed[: digits.start()] + number + claimed[digits.end() :]
    return out.replace(word.group(0), new_word, 1)


_MONTH_WORD = re.compile(
    r"\b(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b\.?", re.IGNORECASE
)


def _ordinal(day: int) -> str:
    if 10 <= day % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _signed(before: str) -> bool:
    """Whether ``before`` (the text before a number, right-stripped) ends in a currency sign
    (a number at the start of a text has none: ``"" in CURRENCY_SIGNS`` is true)."""
    return bool(before) and before[-1] in CURRENCY_SIGNS


def stated_number(text: str, number: str, start: int, end: int) -> StatedNumber | None:
    """The number ``number`` found at ``[start, end)`` of ``text`` (digits with separators and
    decimals, a percentage, or number words), read with its context: a currency sign before,
    a scale word and a unit word after, an approximation word before."""
    raw = number.strip()
    percent = raw.endswith("%") or raw.casefold().endswith("percent")
    digits = re.sub(r"(?:%|percent)$", "", raw, flags=re.IGNORECASE).strip()
    precision = 0.0
    if re.fullmatch(r"\d+,\d{1,2}", digits):
        digits = digits.replace(",", ".")  # a decimal comma ("99,9%"): no thousands group
    if re.fullmatch(r"[-+]?\d[\d,]*(?:\.\d+)?", digits):
        whole, _, fraction = digits.replace(",", "").partition(".")
        value = float(f"{whole}.{fraction}" if fraction else whole)
        precision = 0.5 * 10 ** -len(fraction) if fraction else 0.0
        # (a whole number is exact: "3 million" is not "3.4 million", unless marked approximate)
    else:
        spoken = word_number(digits)
        if spoken is None:
            return None
        value = spoken
    rest = text[end:]
    scale = _SCALE_AFTER.match(rest)
    if scale and not percent:
        factor = _SCALE[scale.group(1).casefold()]
        if scale.group(1).casefold() != "m" or _signed(text[:start].rstrip()):
            value *= factor
            precision *= factor
            rest = rest[scale.end() :]
    before = text[:start].rstrip()
    unit = ""
    if percent:
        unit = "%"
    elif _signed(before):
        unit = before[-1:]
        before = before[:-1]
    elif _PER_CENT.match(rest):
        unit = "%"
    else:
        m = _UNIT_WORD.match(rest)
        if m:
            word = m.group(1).casefold().replace(" ", "")
            word = word[:-1] if len(word) > 3 and word.endswith("s") else word
            unit = _UNIT_ALIASES.get(word, word)
            if unit == "degree":  # "100 degrees Celsius" is "100°C"
                scale_word = _TEMPERATURE_SCALE.match(rest[m.end() :])
                if scale_word:
                    unit = "°f" if scale_word.group(1).casefold().startswith("f") else "°c"
    return StatedNumber(value, unit, bool(_APPROXIMATE.search(before)), precision)


def same_number(claimed: StatedNumber, stated: StatedNumber, tolerance: float = 0.1) -> bool:
    """Whether a claim's number states the evidence's: equal, equal to the rounding the claim's
    own writing allows (``8.4 million`` for ``8,419,000``), or within ``tolerance`` (relative)
    when either is marked approximate (``about 84,000``); never in two temperature scales."""
    if {claimed.unit, stated.unit} == _TEMPERATURES:
        return False  # 45°F is not 45°C
    gap = abs(claimed.value - stated.value)
    if gap <= 1e-9 * max(1.0, abs(claimed.value), abs(stated.value)):
        return True
    if claimed.precision and gap <= claimed.precision + 1e-9:
        return True
    if claimed.approximate or stated.approximate:
        return gap <= tolerance * max(abs(claimed.value), abs(stated.value))
    return False


_DAY_OF_MONTH = re.compile(
    r"(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>[a-z]+)\.?"
    r"|(?P<month2>[a-z]+)\.?\s+(?P<day2>\d{1,2})(?:st|nd|rd|th)?"
)
_WEEKDAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def stated_date(text: str) -> tuple[str, tuple[int | None, ...]] | None:
    """A date mention as ``(granularity, parts)``: ``("date", (year, month, day))`` with
    ``None`` for parts not stated ("18 October": ``(None, 10, 18)``), ``("weekday", (n,))``,
    ``("month", (n,))``; ``None`` when the text is not one of these (``1990s``, ``2021年``)."""
    v = clean(text).casefold()
    if v in _WEEKDAY_NAMES:
        return "weekday", (_WEEKDAY_NAMES.index(v),)
    if v.rstrip(".") in MONTHS:
        return "month", (MONTHS[v.rstrip(".")],)
    parsed = parse_date(v)  # (3/4/2020 is not read: month and day order unknown)
    if parsed is not None:
        return "date", parsed
    day_month = _DAY_OF_MONTH.fullmatch(v)  # a day of a month without a year
    if day_month is None:
        return None
    day = int(day_month.group("day") or day_month.group("day2"))
    month = MONTHS.get(day_month.group("month") or day_month.group("month2"))
    return ("date", (None, month, day)) if month is not None and 1 <= day <= 31 else None


def same_date(
    claimed: tuple[str, tuple[int | None, ...]], stated: tuple[str, tuple[int | None, ...]]
) -> bool:
    """Equal in every part both state (a year matches a full date of that year)."""
    if claimed[0] != stated[0]:
        return False
    return all(
        a == b
        for a, b in zip(claimed[1], stated[1], strict=True)
        if a is not None and b is not None
    )


def stated_time(text: str) -> int | None:
    """A clock time in minutes after midnight (``2pm`` = ``14:00`` = 840); ``None`` otherwise."""
    v = clean(text).casefold().replace(".", "").replace(" ", "")
    m = re.fullmatch(r"(\d{1,2})(?::(\d{2}))?([ap]m)?", v)
    if not m or (m[2] is None and m[3] is None):
        return None
    hour, minute = int(m[1]), int(m[2] or 0)
    if m[3] == "pm" and hour < 12:
        hour += 12
    elif m[3] == "am" and hour == 12:
        hour = 0
    return hour * 60 + minute if hour < 24 and minute < 60 else None
