"""A page where OCR read nothing usable is read again (turned, then with the other engine)
before giving up, and the reason shown to a person says so."""

from __future__ import annotations

import io
from datetime import date
from decimal import Decimal
from pathlib import Path

from PIL import Image

from engines.analysis import analyze
from engines.extraction.review import review_reason

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "extraction"
TODAY = date(2025, 6, 1)


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def test_an_upside_down_photo_is_read_again_turned_and_says_so() -> None:
    upside_down = Image.open(FIXTURES / "receipt.png").rotate(180, expand=True)
    analysis = analyze(_png(upside_down), "image/png", today=TODAY)
    fields = analysis.fields
    assert fields.amount == Decimal("13.50")
    assert fields.doc_date == date(2024, 3, 14)
    assert fields.reading_note is not None and "turned 180°" in fields.reading_note
    reason = review_reason(fields)
    assert reason is not None and reason.startswith(fields.reading_note)


def test_a_page_nothing_can_be_read_from_names_what_was_tried() -> None:
    blank = Image.new("L", (400, 600), 255)
    fields = analyze(_png(blank), "image/png", today=TODAY).fields
    assert fields.amount is None and fields.doc_date is None
    assert fields.reading_note is not None
    assert "turned 180°" in fields.reading_note and "turned 270°" in fields.reading_note
    reason = review_reason(fields)
    assert reason is not None and "no amount found" in reason


def test_an_upright_receipt_is_read_once() -> None:
    upright = (FIXTURES / "receipt.png").read_bytes()
    fields = analyze(upright, "image/png", today=TODAY).fields
    assert fields.amount == Decimal("13.50") and fields.reading_note is None
