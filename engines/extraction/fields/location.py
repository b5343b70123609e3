"""Which country, state and city a document comes from, by tell-tale words."""

from __future__ import annotations

import re
from functools import lru_cache

from .countries import BY_CODE, COUNTRIES, Country
from .field_types import ExpenseLocation, ParseHints
from .places import Place, place_index


def detect_country(upper_text: str, hints: ParseHints) -> Country | None:
    """The country the text points to most, else the hinted one, else None.

    Country names weigh most, then states and legal forms or tax names, then cities (each
    city once); the first 40 % of the document (the merchant's header) counts double,
    because the buyer's address on an invoice sits lower down.
    """
    head_end = max(200, len(upper_text) * 2 // 5)
    head = upper_text[:head_end]
    city_scores: dict[str, float] = {}
    for place in _distinct(place_index().find(upper_text)):
        weight = 2.0 if place.start < head_end else 1.0
        city_scores[place.country] = city_scores.get(place.country, 0.0) + weight
    best: tuple[float, Country] | None = None
    for country in COUNTRIES:
        score = city_scores.get(country.code, 0.0)
        for words, weight in (
            (country.names, 3.0),
            (country.states, 2.0),
            (country.telltales, 2.0),
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
    city = next((p.name for p in place_index().find(upper_text) if p.country == country.code), None)
    return ExpenseLocation(
        country_code=country.code,
        country=country.name,
        city=city.title() if city else None,
        state_or_province=_first_found(upper_text, country.states),
    )


def _distinct(places: list[Place]) -> list[Place]:
    """Each city name once, at its first mention."""
    seen: dict[str, Place] = {}
    for place in places:
        seen.setdefault(place.name, place)
    return list(seen.values())


def _first_found(upper_text: str, names: tuple[str, ...]) -> str | None:
    found = [(match.start(), name) for name in names if (match := _word(name).search(upper_text))]
    return min(found)[1].title() if found else None


@lru_cache(maxsize=1024)
def _word(word: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-ZÀ-Ý0-9])" + re.escape(word) + r"(?![A-ZÀ-Ý0-9])")
