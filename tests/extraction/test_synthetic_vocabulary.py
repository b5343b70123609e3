"""The generated invoices must not mirror the parser: for each role (invoice number, date,
amount to pay, rounding, cash tendered, change, buyer and delivery blocks) the generator
words some labels the parser's own patterns do not know, so the bench's figures on
generated invoices measure how the parser copes with wording it was not written for."""

from __future__ import annotations

import re

from engines.extraction.fields.labels import (
    AMOUNT_LABELS,
    BUYER_LABEL,
    DATE_LABEL,
    INVOICE_NUMBER_LABEL,
    ISSUE_DATE_LABEL,
)
from tests.extraction.synthetic.conventions import CONVENTIONS
from tests.extraction.synthetic.vocabulary import LANGUAGES


def _pattern(*sources: str | re.Pattern[str]) -> re.Pattern[str]:
    parts = [s.pattern if isinstance(s, re.Pattern) else s for s in sources]
    return re.compile("|".join(f"(?:{part})" for part in parts), re.I)


# What the parser would recognise each role by.
PARSER = {
    "number": _pattern(INVOICE_NUMBER_LABEL),
    "date": _pattern(ISSUE_DATE_LABEL, DATE_LABEL),
    "payable": _pattern(AMOUNT_LABELS["total_strong"], AMOUNT_LABELS["total"]),
    "rounding": _pattern(AMOUNT_LABELS["rounding"]),
    "tendered": _pattern(AMOUNT_LABELS["paid"]),
    "change": _pattern(AMOUNT_LABELS["change"]),
    "ship_to": _pattern(BUYER_LABEL),
}


def _generator_labels(role: str) -> set[str]:
    words: set[str] = set()
    for language in LANGUAGES:
        ways = CONVENTIONS[language.code]
        words.update(getattr(ways, role))
        if role == "number":
            words.update(language.number_label)
        if role == "date":
            words.update(language.date_label)
        if role == "payable":
            words.update(language.total_label)
        if role == "ship_to":
            words.update(language.buyer_label)
    return words


def test_every_role_has_wording_the_parser_does_not_know() -> None:
    for role, pattern in PARSER.items():
        labels = _generator_labels(role)
        unknown = {label for label in labels if not pattern.search(label)}
        assert unknown, f"every generated {role} label matches the parser's patterns: {labels}"


def test_conventions_cover_every_language() -> None:
    assert {language.code for language in LANGUAGES} == set(CONVENTIONS)
    for ways in CONVENTIONS.values():
        assert all(getattr(ways, role) for role in PARSER)
