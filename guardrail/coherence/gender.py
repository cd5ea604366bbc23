"""Grammatical gender of person names, for pronoun resolution.

The registry's ``EntityInfo.gender`` wins; otherwise the first name is looked up in a small list
shipped as package data (``data/first_names.tsv``). Unknown names give ``None``.
"""

from __future__ import annotations

import functools
from importlib import resources

from guardrail.errors import ModelLoadError

MALE_PRONOUNS = frozenset({"he", "him", "his", "himself"})
FEMALE_PRONOUNS = frozenset({"she", "her", "hers", "herself"})
PLURAL_PRONOUNS = frozenset({"they", "them", "their", "theirs", "themselves"})


@functools.lru_cache(maxsize=1)
def first_names() -> dict[str, str]:
    """``{"sarah": "female", "john": "male", …}`` from the packaged list (read once)."""
    try:
        text = (
            resources.files("guardrail.coherence")
            .joinpath("data/first_names.tsv")
            .read_text(encoding="utf-8")
        )
    except (FileNotFoundError, OSError) as exc:
        raise ModelLoadError(
            "guardrail/coherence/data/first_names.tsv is missing; reinstall guardrail"
        ) from exc
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, _, gender = line.partition("\t")
        out[name.strip().lower()] = gender.strip()
    return out


def name_gender(name: str) -> str | None:
    """``male`` / ``female`` for a known first name (``"Sarah Lee"`` → ``female``), else None."""
    parts = name.split()
    if not parts:
        return None
    return first_names().get(parts[0].lower())


def pronoun_gender(word: str) -> str | None:
    """``male``, ``female`` or ``plural`` for a third-person pronoun; ``None`` for others."""
    lower = word.lower()
    if lower in MALE_PRONOUNS:
        return "male"
    if lower in FEMALE_PRONOUNS:
        return "female"
    if lower in PLURAL_PRONOUNS:
        return "plural"
    return None
