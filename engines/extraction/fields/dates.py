"""The document date: every date printed is a candidate, scored by its label and context.

Numeric dates ("05/03/18") are read here, both ways when day and month could swap; which
reading wins depends on the other dates in the document (a "25/12" elsewhere makes it
day-first), the locale, and plausibility. Dates with month names ("05 MAR 2018",
"18 april 2014", "3. Januar 2024") use month names from dateparser's language data for
the languages fincap reads. A date in the future or before 2000 is never the document's.

Features say which label governs the date (an issue-date label, a plain "Date", or a due,
order, delivery or period label), on its row or in the same column on the row above, and
where it sits; ``scoring`` weighs them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from dateparser.languages.loader import default_loader

from ..layout import TextLine
from .labels import DATE_LABEL, ISSUE_DATE_LABEL, OTHER_DATE_LABEL
from .scoring import Candidate
from .view import DocView

NUMERIC = re.compile(
    # OCR spaces dashes and slashes out ("12 - 03 - 19"); the same separator both times.
    r"(?<![\d.,])(?P<a>\d{1,4})(?P<sep>[./-]|\s[-/]\s)(?P<b>\d{1,2})(?P=sep)(?P<c>\d{4}|\d{2})"
    # OCR glues the time to the year when the space between is narrow: "03/02/201815:28".
    r"(?:(?!\d)|(?<=\d{4})(?=\d{1,2}:\d{2}))"
)
_MONTH_WORD = r"[A-Za-zÀ-ÿ]{3,10}\.?"
TEXTUAL = re.compile(
    rf"(?<![\w])(?:(?P<d1>\d{{1,2}})(?:st|nd|rd|th|er|º|\.)?(?:\s*de)?[\s./-]*(?P<m1>{_MONTH_WORD})"
    rf"(?:\s*de)?[\s./,-]*(?P<y1>\d{{4}}|\d{{2}})|(?P<m2>{_MONTH_WORD})\s+(?P<d2>\d{{1,2}})"
    rf"(?:st|nd|rd|th)?\s*,?\s*(?P<y2>\d{{4}}))(?![\d])"
)
TIME = re.compile(r"(?<!\d)(?:[01]?\d|2[0-3])[:.h][0-5]\d(?:[:.][0-5]\d)?(?!\d)")
EARLIEST_YEAR = 2000
LANGUAGES = ("en", "de", "fr", "es", "nl", "it", "ms", "pt")


@lru_cache(maxsize=1)
def month_names() -> dict[str, int]:
    """Month names and abbreviations (lower case, no dot) → month number."""
    keys = (
        "january", "february", "march", "april", "may", "june", "july", "august",
        "september", "october", "november", "december",
    )  # fmt: skip
    names: dict[str, int] = {}
    for language in LANGUAGES:
        info = default_loader.get_locale(language).info
        for number, key in enumerate(keys, start=1):
            for name in info.get(key, ()):
                names.setdefault(str(name).lower().rstrip("."), number)
    return names


@dataclass(frozen=True)
class Reading:
    value: date
    swapped: bool  # day and month read against the preferred order
    ambiguous: bool  # the other order gives another valid date
    textual: bool
    short_year: bool


def numeric_readings(a: str, b: str, c: str, order: str, today: date) -> list[Reading]:
    """The plausible dates three numbers can be: the preferred order first."""
    if len(a) == 4:  # 2018-03-05: ISO order is never ambiguous
        value = _plausible(int(a), int(b), int(c), today)
        return [Reading(value, False, False, False, False)] if value else []
    year = _full_year(c)
    first, second = int(a), int(b)
    preferred = (first, second) if order != "MDY" else (second, first)  # (day, month)
    readings: list[Reading] = []
    for swapped, (day, month) in ((False, preferred), (True, preferred[::-1])):
        value = _plausible(year, month, day, today)
        if value is not None and all(r.value != value for r in readings):
            readings.append(
                Reading(
                    value,
                    swapped,
                    first != second and first <= 12 and second <= 12,
                    False,
                    len(c) == 2,
                )
            )
    return readings


def numeric_date(a: str, b: str, c: str, order: str, today: date) -> date | None:
    """Parse three numbers as a date, trying ``order`` first and the other order second."""
    readings = numeric_readings(a, b, c, order, today)
    return readings[0].value if readings else None


def textual_date(text: str, order: str, today: date) -> date | None:
    """Parse a date with a month name, e.g. '05 MAR 2018', '02/JAN/2017', 'April 18, 2014'."""
    match = TEXTUAL.search(text)
    return _textual(match, today) if match else None


def _textual(match: re.Match[str], today: date) -> date | None:
    word = (match.group("m1") or match.group("m2") or "").lower().rstrip(".")
    month = month_names().get(word)
    if month is None:
        return None
    day = int(match.group("d1") or match.group("d2"))
    year_text = match.group("y1") or match.group("y2")
    return _plausible(_full_year(year_text), month, day, today)


def _order_from_unambiguous(lines: list[TextLine]) -> str | None:
    """DMY or MDY when some numeric date in the document can only be read one way."""
    for line in lines:
        for match in NUMERIC.finditer(line.text):
            if len(match.group("a")) == 4:
                continue
            first, second = int(match.group("a")), int(match.group("b"))
            if 12 < first <= 31 and 1 <= second <= 12:
                return "DMY"
            if 12 < second <= 31 and 1 <= first <= 12:
                return "MDY"
    return None


@dataclass(frozen=True)
class _Found:
    reading: Reading
    line: TextLine
    start: int
    end: int


def date_candidates(view: DocView, locale_order: str, today: date) -> list[Candidate]:
    """Every plausible date in the document, with the features of its context."""
    evident = _order_from_unambiguous(view.lines)
    order = evident or locale_order
    found: list[_Found] = []
    for line in view.lines:
        for match in NUMERIC.finditer(line.text):
            for reading in numeric_readings(
                match.group("a"), match.group("b"), match.group("c"), order, today
            ):
                found.append(_Found(reading, line, match.start(), match.end()))
        for match in TEXTUAL.finditer(line.text):
            value = _textual(match, today)
            if value is not None:
                short = len(match.group("y1") or match.group("y2")) == 2
                found.append(
                    _Found(
                        Reading(value, False, False, True, short), line, match.start(), match.end()
                    )
                )
    if not found:
        return []
    counts = Counter(item.reading.value for item in found)
    earliest = min(counts)
    latest = max(counts)
    first_index = min(item.line.index for item in found)
    candidates = []
    for item in found:
        reading = item.reading
        features = _label_features(view, item)
        features.update(
            position=view.document_position(item.line),
            first_row=float(item.line.index == first_index),
            time_near=float(bool(TIME.search(_without(item.line.text, item.start, item.end)))),
            textual=float(reading.textual),
            swapped=float(reading.swapped),
            ambiguous=float(reading.ambiguous),
            order_evident=float(evident is not None and not reading.textual),
            short_year=float(reading.short_year),
            repeats=min(3, counts[reading.value] - 1) / 3,
            earliest=float(reading.value == earliest and len(counts) > 1),
            latest=float(reading.value == latest and len(counts) > 1),
            age_years=min(10.0, (today - reading.value).days / 365.25) / 10,
            ocr=item.line.confidence_at(item.start, item.end),
        )
        candidates.append(
            Candidate(reading.value, item.line, item.start, item.end, features, "date")
        )
    return candidates


def _label_features(view: DocView, item: _Found) -> dict[str, float]:
    """Labels before the date on its row, or above it in the same column."""
    before = view.text_before(item.line, item.start)
    # Only the label closest to the date counts on a row with several dates.
    before = re.split(r"\d{1,4}[./-]\d{1,2}[./-]\d{2,4}", before)[-1]
    features: dict[str, float] = {}
    kind = _label_kind(before)
    if kind:
        features[f"label_{kind}"] = 1.0
        return features
    above = view.previous(item.line)
    if above is not None:
        left, _, right, _ = item.line.box_at(item.start, item.end)
        column = [
            above.text[s:e]
            for box, (s, e) in zip(above.boxes, above.spans, strict=True)
            if box.x0 < right + view.text_height and left - view.text_height < box.x1
        ]
        kind = _label_kind(" ".join(column))
        if kind:
            features[f"above_{kind}"] = 1.0
            return features
        # A form whose cells are not level: the label in the cell to the left, on the row
        # above ("Invoice date" | "12/06/2025" set lower in its cell).
        left = item.line.box_at(item.start, item.end)[0]
        beside = [
            above.text[s:e]
            for box, (s, e) in zip(above.boxes, above.spans, strict=True)
            if box.x1 <= left + view.text_height and item.line.y0 - above.y1 < view.text_height
        ]
        kind = _label_kind(beside[-1]) if beside else None
        if kind:
            features[f"beside_{kind}"] = 1.0
            return features
    features["label_none"] = 1.0
    return features


def _label_kind(text: str) -> str | None:
    """ "issue", "other" or "date" for the label nearest the end of ``text``.

    "Due Date" and "Invoice Date" hold the generic word too: a specific label wins over
    it, and of two specific ones the later ("Invoice date 1.2., due" → due).
    """
    specific = [
        (match.start(), kind)
        for pattern, kind in ((ISSUE_DATE_LABEL, "issue"), (OTHER_DATE_LABEL, "other"))
        for match in pattern.finditer(text)
    ]
    if specific:
        return max(specific)[1]
    return "date" if DATE_LABEL.search(text) else None


def _without(text: str, start: int, end: int) -> str:
    return text[:start] + " " + text[end:]


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
