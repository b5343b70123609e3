"""One call from document bytes to extracted fields and category: the CPU-heavy part of
processing, run in a worker process or thread so it never blocks the event loop.

A page OCR read nothing usable from (no amount and date, and no text that reads as words:
a photo upside down or sideways reads as fragments) is read again before giving up: turned
the other ways and with the other OCR engine, keeping the reading that finds most; the
fields say so (``ParsedFields.reading_note``), and so does the reason a person is shown. A
PDF whose text layer holds as little and gave neither amount nor date (a scanner's stamp
over a scanned receipt) is read again once, its pages OCR'd as images.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date

from engines.extraction import (
    ExtractedText,
    ParsedFields,
    ParseHints,
    available_engines,
    categorize,
    extract_text,
    parse_fields,
)
from engines.extraction.image_prep import text_quality
from engines.extraction.ocr_plan import DEFAULT_ENGINE, POOR_QUALITY
from engines.extraction.review import WARNING_CONFIDENCE

MAX_PAGES = 10
# Second readings of a page where nothing was found: clockwise turns first (the page as
# photographed upside down, then sideways), then the other engine upright.
TURNS = (180, 90, 270)
READS_WELL_WORDS = 40


@dataclass(frozen=True)
class Analysis:
    """What the engines read from one document."""

    fields: ParsedFields
    category: str | None
    category_confidence: float
    engine: str
    ocr_used: bool
    page_count: int
    pages_read: int
    text: str


def analyze(
    data: bytes,
    mime: str,
    *,
    country_code: str | None = None,
    currency: str | None = None,
    today: date | None = None,
    overrides: Mapping[str, str] | None = None,
    max_pages: int = MAX_PAGES,
) -> Analysis:
    """Text (text layer or OCR), fields and category of one document. Picklable arguments and
    result, so it can run in a process pool."""
    text = extract_text(data, mime, max_pages=max_pages)
    hints = ParseHints(country_code=country_code, currency=currency, today=today)
    fields = parse_fields(text.layouts, hints)
    if text.ocr_used and not core_read(fields) and not reads_well(text):
        text, fields = read_again(data, mime, max_pages, hints, text, fields)
    elif not text.ocr_used and nothing_read(fields) and not reads_well(text):
        # A PDF whose text layer gave neither amount nor date and holds little (a scanner
        # app's stamp over the scanned receipt): its pages by OCR, once. A text PDF that gave
        # one of them is what it says (an invoice without a date), and is not OCR'd.
        text, fields = read_by_ocr(data, mime, max_pages, hints, text, fields)
    category: str | None = None
    confidence = 0.0
    if fields.financial:
        category, confidence = categorize(
            fields.merchant, fields.line_items, text.text, overrides, fields.brand_category
        )
    return Analysis(
        fields=fields,
        category=category,
        category_confidence=confidence,
        engine=text.engine,
        ocr_used=text.ocr_used,
        page_count=text.page_count,
        pages_read=len(text.pages),
        text=text.text,
    )


def core_read(fields: ParsedFields) -> bool:
    """Both the amount and the date were found."""
    return fields.amount is not None and fields.doc_date is not None


def nothing_read(fields: ParsedFields) -> bool:
    """Neither the amount nor the date was found."""
    return fields.amount is None and fields.doc_date is None


def read_by_ocr(
    data: bytes,
    mime: str,
    max_pages: int,
    hints: ParseHints,
    text: ExtractedText,
    fields: ParsedFields,
) -> tuple[ExtractedText, ParsedFields]:
    """A PDF's pages read by OCR, kept (with a note saying so) when that finds more than its
    text layer did; otherwise the text layer's reading, unchanged."""
    again = extract_text(data, mime, max_pages=max_pages, text_layers=False)
    found = parse_fields(again.layouts, hints)
    if found_count(found) <= found_count(fields):
        return text, fields
    note = "Little was read from the PDF's text layer; its pages were read by OCR."
    return again, dataclasses.replace(found, reading_note=note)


def found_count(fields: ParsedFields) -> tuple[int, float]:
    """How much a reading found: amount, date and merchant, then their confidences."""
    names = ("amount", "doc_date", "merchant")
    confidences = [fields.confidence(name) for name in names]
    found = [c for c in confidences if c is not None]
    return len(found), round(sum(found), 3)


def trustworthy(fields: ParsedFields) -> bool:
    """Amount and date found with confidences no person needs to check."""
    return all(
        (fields.confidence(name) or 0.0) >= WARNING_CONFIDENCE for name in ("amount", "doc_date")
    )


def reads_well(text: ExtractedText) -> bool:
    """A page's worth of real words (a till slip prints well over forty): the page was
    read, the field just is not on it, and turning it would not help. A page read upside
    down or sideways gives a few fragments."""
    words = text.text.split()
    return len(words) >= READS_WELL_WORDS and text_quality(text.text) >= POOR_QUALITY


def read_again(
    data: bytes,
    mime: str,
    max_pages: int,
    hints: ParseHints,
    text: ExtractedText,
    fields: ParsedFields,
) -> tuple[ExtractedText, ParsedFields]:
    """The best of the second readings (most of amount, date and merchant found, then the
    most confident, stopping at one no person needs to check), with a note saying how it
    was read; the first reading, with a note saying what was tried, when none finds more."""
    tried = []
    best: tuple[tuple[int, float], str, ExtractedText, ParsedFields] | None = None
    first = found_count(fields)
    for how, turn, engine in _second_readings():
        tried.append(how)
        again = extract_text(data, mime, max_pages=max_pages, engine=engine, turn=turn)
        found = parse_fields(again.layouts, hints)
        rank = found_count(found)
        if rank > first and (best is None or rank > best[0]):
            best = (rank, how, again, found)
        if trustworthy(found):
            break
    if best is not None:
        _, how, again, found = best
        note = f"Little was read from the page as uploaded; it was read again {how}."
        return again, dataclasses.replace(found, reading_note=note)
    note = "Little was read from the page, as uploaded nor read again " + ", ".join(tried) + "."
    return text, dataclasses.replace(fields, reading_note=note)


def _second_readings() -> Iterator[tuple[str, int, str]]:
    for turn in TURNS:
        yield f"turned {turn}°", turn, DEFAULT_ENGINE
    others = [name for name in available_engines() if name not in (DEFAULT_ENGINE, "auto")]
    for engine in others:
        yield f"with {engine}", 0, engine
