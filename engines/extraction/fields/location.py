"""Which country, state and city a document comes from, by tell-tale words."""

from __future__ import annotations

import re
from functools import lru_cache

from .countries import BY_CODE, COUNTRIES, Country
from .field_types import ExpenseLocation, ParseHints


def detect_country(upper_text: str, hints: ParseHints) -> Country | None:
    """The country the text points to most, else the hinted one, else None.

    Country names weigh most, then states and legal forms or tax names, then cities; the
    first 40 % of the document (the merchant's header) counts double, because the buyer's
    address on an invoice sits lower down.
    """
    head = upper_text[: max(200, len(upper_text) * 2 // 5)]
    best: tuple[float, Country] | None = None
    for country in COUNTRIES:
        score = 0.0
        for words, weight in (
            (country.names, 3.0),
            (country.states, 2.0),
            (country.telltales, 2.0),
            (country.cities, 1.0),
        ):
            for word in words:
                if _word(word).search(upper_text):
                    score += weight * (2 if _word(word).search(head) else 1)
        if score and (best is None or score > best[0]):
            best = (score, country)
    if best is not None:
        return best[1]
    if hints.country_code:
        return BY_CODE.get(hints.country_code.upper())
    return None


def detect_location(upper_text: str, country: Country | None) -> ExpenseLocation:
    """Country, first state and first city mentioned (the merchant's address comes first)."""
    if country is None:
        return ExpenseLocation()
    return ExpenseLocation(
        country_code=country.code,
        country=country.name,
        city=_first_found(upper_text, country.cities),
        state_or_province=_first_found(upper_text, country.states),
    )


def _first_found(upper_text: str, names: tuple[str, ...]) -> str | None:
    found = [(match.start(), name) for name in names if (match := _word(name).search(upper_text))]
    return min(found)[1].title() if found else None


@lru_cache(maxsize=1024)
def _word(word: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-ZÀ-Ý0-9])" + re.escape(word) + r"(?![A-ZÀ-Ý0-9])")
