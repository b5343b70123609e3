"""One call from document bytes to extracted fields and category: the CPU-heavy part of
processing, run in a worker process or thread so it never blocks the event loop."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from engines.extraction import ParsedFields, ParseHints, categorize, extract_text, parse_fields

MAX_PAGES = 10


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
