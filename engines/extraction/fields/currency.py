"""Which currency a document is in: ISO codes, symbols, then the country, then hints."""

from __future__ import annotations

import re
from collections import Counter

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


def detect_currency(text: str, country: Country | None, hints: ParseHints) -> str | None:
    """Most-cited currency; a bare "$" means the country's dollar (USD when unknown).

    ISO codes count double: "EUR" printed next to the total is more deliberate than a
    symbol the OCR may have invented from a smudge.
    """
    votes: Counter[str] = Counter()
    for match in ISO_PATTERN.finditer(text.upper()):
        votes[match.group(1)] += 2
    for pattern, code in SYMBOLS:
        if count := len(pattern.findall(text)):
            votes[code] += count
    dollars = len(BARE_DOLLAR.findall(text))
    if dollars:
        votes[_dollar_for(country, hints)] += dollars
    if votes:
        return votes.most_common(1)[0][0]
    if hints.currency:
        return hints.currency.upper()
    return country.currency if country else None


def _dollar_for(country: Country | None, hints: ParseHints) -> str:
    if hints.currency and hints.currency.upper() in DOLLAR_CURRENCIES:
        return hints.currency.upper()
    if country is not None and country.currency in DOLLAR_CURRENCIES:
        return country.currency
    # Malaysian shops print "$" for ringgit on their tills.
    if country is not None and country.code == "MY":
        return "MYR"
    return "USD"
