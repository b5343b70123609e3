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


def _stamped_scan() -> bytes:
    """The receipt scanned into a PDF whose only text layer is the scanner app's stamp (more
    characters than a page number, so the text layer counts as the page's text)."""
    from reportlab.lib.pagesizes import A6
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A6)
    width, height = A6
    pdf.drawImage(ImageReader(str(FIXTURES / "receipt.png")), 10, 40, width - 20, height - 60)
    pdf.setFont("Helvetica", 6)
    pdf.drawString(10, 15, "Scanned with PocketScan Pro")
    pdf.save()
    return buffer.getvalue()


def test_a_scan_whose_text_layer_is_only_a_stamp_is_read_by_ocr() -> None:
    # Before: the stamp was taken as the page's text and every field came back empty.
    analysis = analyze(_stamped_scan(), "application/pdf", today=TODAY)
    fields = analysis.fields
    assert fields.amount == Decimal("13.50")
    assert fields.doc_date == date(2024, 3, 14)
    assert analysis.ocr_used
    assert fields.reading_note is not None and "read by OCR" in fields.reading_note


def test_a_text_pdf_that_reads_well_is_not_read_again() -> None:
    fields = analyze((FIXTURES / "text-layer.pdf").read_bytes(), "application/pdf").fields
    assert fields.amount is not None and fields.reading_note is None
