"""Which currency a document is in: ISO codes, symbols, then the country, then hints."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from .countries import Country
from .field_types import ParseHints

# Not "TRY": it is also an English word.
ISO_CODES = frozenset(
    {
        "EUR",
        "USD",
        "GBP",
        "MYR",
        "INR",
        "SGD",
        "AUD",
        "CAD",
        "CHF",
        "JPY",
        "CNY",
        "SEK",
        "NOK",
        "DKK",
        "PLN",
        "CZK",
        "HUF",
        "NZD",
        "HKD",
        "ZAR",
        "BRL",
        "MXN",
        "AED",
        "THB",
        "IDR",
        "PHP",
        "KRW",
    }
)
DOLLAR_CURRENCIES = frozenset({"USD", "CAD", "AUD", "SGD", "NZD", "HKD"})
# Symbols that name one currency wherever they appear. "RM" and "Rs" must stand alone
# (not inside "FORM" or "Hrs").
SYMBOLS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile("€"), "EUR"),
    (re.compile("£"), "GBP"),
    (re.compile("₹"), "INR"),
    (re.compile(r"(?<![A-Za-z])Rs\.?(?=\s?-?\d)"), "INR"),
    (re.compile(r"(?<![A-Za-z])RM(?=\s?\d|\b)"), "MYR"),
    (re.compile(r"S\$"), "SGD"),
    (re.compile(r"A\$"), "AUD"),
    (re.compile(r"C\$"), "CAD"),
    (re.compile(r"US\$"), "USD"),
    (re.compile("¥"), "JPY"),
    (re.compile(r"(?<![A-Za-z])zł"), "PLN"),
)
ISO_PATTERN = re.compile(r"(?<![A-Z])(" + "|".join(sorted(ISO_CODES)) + r")(?![A-Z])")
BARE_DOLLAR = re.compile(r"(?<![A-Z])\$")


@dataclass(frozen=True)
class CurrencyReading:
    """The currency, how sure the reading is, and what it was read from."""

    code: str
    confidence: float
    source: str  # "printed", "country" or "hint"
    evidence: str | None = None  # the first printed mark of the winning currency


def detect_currency(
    text: str, country: Country | None, hints: ParseHints
) -> CurrencyReading | None:
    """Most-cited currency; a bare "$" means the country's dollar (USD when unknown).

    ISO codes count double: "EUR" printed next to the total is more deliberate than a
    symbol the OCR may have invented from a smudge. The confidence is the winner's share
    of the marks, lower when only the country or the caller's hint decided.
    """
    votes: Counter[str] = Counter()
    first_mark: dict[str, str] = {}
    upper = text.upper()
    for match in ISO_PATTERN.finditer(upper):
        votes[match.group(1)] += 2
        first_mark.setdefault(match.group(1), _around(text, match.start(), match.end()))
    for pattern, code in SYMBOLS:
        for match in pattern.finditer(text):
            votes[code] += 1
            first_mark.setdefault(code, _around(text, match.start(), match.end()))
    dollars = list(BARE_DOLLAR.finditer(text))
    if dollars:
        code = _dollar_for(country, hints)
        votes[code] += len(dollars)
        first_mark.setdefault(code, _around(text, dollars[0].start(), dollars[0].end()))
    if votes:
        code, count = votes.most_common(1)[0]
        share = count / sum(votes.values())
        return CurrencyReading(
            code, round(min(0.99, 0.5 + 0.5 * share), 3), "printed", first_mark.get(code)
        )
    if hints.currency:
        return CurrencyReading(hints.currency.upper(), 0.5, "hint")
    if country is not None:
        return CurrencyReading(country.currency, 0.6, "country")
    return None


def _around(text: str, start: int, end: int) -> str:
    """The line of text around a match."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    return text[line_start : line_end if line_end >= 0 else len(text)].strip()[:200]


def _dollar_for(country: Country | None, hints: ParseHints) -> str:
    if hints.currency and hints.currency.upper() in DOLLAR_CURRENCIES:
        return hints.currency.upper()
    if country is not None and country.currency in DOLLAR_CURRENCIES:
        return country.currency
    # Malaysian shops print "$" for ringgit on their tills.
    if country is not None and country.code == "MY":
        return "MYR"
    return "USD"
