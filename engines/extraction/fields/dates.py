"""Find the document date: many printed formats, day/month order decided with care.

Numeric dates ("05/03/18") are parsed here, because their order is the hard part:
an unambiguous date elsewhere in the document wins, then the locale (country, currency,
hints), then plausibility (no future dates). Dates with month names ("05 MAR 2018",
"18 april 2014") are handed to dateparser, which knows the month names of many languages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

import dateparser

NUMERIC = re.compile(
    r"(?<![\d.])(?P<a>\d{1,4})(?P<sep>[./-])(?P<b>\d{1,2})(?P=sep)(?P<c>\d{4}|\d{2})"
    # OCR glues the time to the year when the space between is narrow: "03/02/201815:28".
    r"(?:(?!\d)|(?<=\d{4})(?=\d{1,2}:\d{2}))"
)
MONTHS = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "may": 5,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
    "mär": 3,
    "mrz": 3,
    "mai": 5,
    "okt": 10,
    "dez": 12,
    "mei": 5,
    "mrt": 3,
    "okt.": 10,
    "janv": 1,
    "févr": 2,
    "fév": 2,
    "mars": 3,
    "avr": 4,
    "juin": 6,
    "juil": 7,
    "août": 8,
    "déc": 12,
    "ene": 1,
    "abr": 4,
    "ago": 8,
    "dic": 12,
    "gen": 1,
    "giu": 6,
    "lug": 7,
    "set": 9,
    "ott": 10,
}
_MONTH_WORD = r"[A-Za-zÀ-ÿ]{3,9}\.?"
TEXTUAL = re.compile(
    rf"(?<![\w])(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?[\s./-]*(?P<m1>{_MONTH_WORD})[\s./,-]*"
    rf"(?P<y1>\d{{4}}|\d{{2}})|(?P<m2>{_MONTH_WORD})\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s*,?\s*"
    rf"(?P<y2>\d{{4}}))(?![\d])"
)
# Labels of the issue date itself outrank a generic "date" (e.g. beside "Order Date").
ISSUE_DATE_LABEL = re.compile(
    r"invoice\s*date|date\s*of\s*issue|issue\s*date|rechnungsdatum|factuurdatum|"
    r"date\s*de\s*facture|billing\s*date|receipt\s*date",
    re.I,
)
DATE_LABEL = re.compile(
    r"date|datum|dated|tarikh|fecha|data|dat\b|issued|rechnungsdatum|factuurdatum", re.I
)
NOT_DOC_DATE = re.compile(
    r"due|fällig|faellig|expir|valid|gültig|exp\b|until|bis\b|delivery|liefer|period|"
    r"birth|geburt|vervaldatum|échéance|order\s*date|bestelldatum",
    re.I,
)
EARLIEST_YEAR = 1990
DATEPARSER_LANGUAGES = ("en", "de", "fr", "nl", "es", "it", "pt", "ms")


@dataclass(frozen=True)
class DateCandidate:
    value: date
    line_index: int
    label: int  # 2 issue-date label, 1 any date label, 0 none
    excluded: bool


def find_doc_date(lines: list[str], locale_order: str, today: date) -> date | None:
    """The most likely document date, or None when nothing plausible is printed."""
    order = _order_from_unambiguous(lines) or locale_order
    candidates = [
        candidate
        for index, line in enumerate(lines)
        for candidate in _dates_in_line(line, index, order, today)
    ]
    if not candidates:
        return None

    def rank(candidate: DateCandidate) -> tuple[int, int, int]:
        # A labelled date beats an unlabelled one; due/expiry dates lose; earlier wins.
        return (int(candidate.excluded), -candidate.label, candidate.line_index)

    return min(candidates, key=rank).value


def _dates_in_line(line: str, index: int, order: str, today: date) -> list[DateCandidate]:
    labelled = 2 if ISSUE_DATE_LABEL.search(line) else int(bool(DATE_LABEL.search(line)))
    excluded = bool(NOT_DOC_DATE.search(line)) and labelled < 2
    found: list[DateCandidate] = []
    for match in NUMERIC.finditer(line):
        value = numeric_date(match.group("a"), match.group("b"), match.group("c"), order, today)
        if value is not None:
            found.append(DateCandidate(value, index, labelled, excluded))
    for match in TEXTUAL.finditer(line):
        value = textual_date(match.group(0), order, today)
        if value is not None:
            found.append(DateCandidate(value, index, labelled, excluded))
    return found


def numeric_date(a: str, b: str, c: str, order: str, today: date) -> date | None:
    """Parse three numbers as a date, trying ``order`` first and the other order second."""
    if len(a) == 4:  # 2018-03-05: ISO order is never ambiguous
        return _plausible(int(a), int(b), int(c), today)
    year = _full_year(c)
    first, second = int(a), int(b)
    preferred = (first, second) if order != "MDY" else (second, first)  # (day, month)
    for day, month in (preferred, preferred[::-1]):
        value = _plausible(year, month, day, today)
        if value is not None:
            return value
    return None


def textual_date(text: str, order: str, today: date) -> date | None:
    """Parse a date with a month name, e.g. '05 MAR 2018', '02/JAN/2017', 'April 18, 2014'."""
    match = TEXTUAL.search(text)
    if match is None:
        return None
    word = (match.group("m1") or match.group("m2") or "").lower().rstrip(".")
    month = MONTHS.get(word[:4]) or MONTHS.get(word[:3])
    if month is None:
        parsed = dateparser.parse(text, settings={"DATE_ORDER": order, "STRICT_PARSING": True})
        return _plausible(parsed.year, parsed.month, parsed.day, today) if parsed else None
    day = int(match.group("d1") or match.group("d2"))
    year = _full_year(match.group("y1") or match.group("y2"))
    return _plausible(year, month, day, today)


def _order_from_unambiguous(lines: list[str]) -> str | None:
    """DMY or MDY when some numeric date in the document can only be read one way."""
    for line in lines:
        for match in NUMERIC.finditer(line):
            if len(match.group("a")) == 4:
                continue
            first, second = int(match.group("a")), int(match.group("b"))
            if first > 12 >= second >= 1:
                return "DMY"
            if second > 12 >= first >= 1:
                return "MDY"
    return None


def _full_year(text: str) -> int:
    year = int(text)
    if len(text) == 2:
        year += 2000 if year < 70 else 1900
    return year


def _plausible(year: int, month: int, day: int, today: date) -> date | None:
    if year < EARLIEST_YEAR:
        return None
    try:
        value = date(year, month, day)
    except ValueError:
        return None
    # A day of slack: the document may come from a time zone ahead of the server.
    return value if value <= today + timedelta(days=1) else None
