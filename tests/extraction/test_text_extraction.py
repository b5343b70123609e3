"""Text extraction on the tiny documents in tests/fixtures/extraction (see make_fixtures.py).

OCR tests run tesseract on two small images (about a second each) and are skipped where
tesseract is not installed; the text-layer test needs only pypdfium2.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from engines.extraction import UnsupportedDocument, extract_text, parse_fields
from engines.extraction.image_prep import crop_to_paper, load_image
from engines.extraction.ocr_plan import available_engines
from engines.extraction.ocr_rapid import assemble_lines

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "extraction"
needs_tesseract = pytest.mark.skipif(
    "tesseract" not in available_engines(), reason="tesseract OCR is not installed"
)


def test_pdf_text_layer_is_read_without_ocr() -> None:
    extracted = extract_text((FIXTURES / "text-layer.pdf").read_bytes(), "application/pdf")
    assert extracted.ocr_used is False
    assert extracted.engine == "pdf-text"
    assert extracted.page_count == 1
    fields = parse_fields(extracted.text)
    assert fields.invoice_id == "INV-2024-0042"
    assert fields.amount == Decimal("1190.00")


@needs_tesseract
def test_image_ocr_round_trip_finds_the_fields() -> None:
    extracted = extract_text(
        (FIXTURES / "receipt.png").read_bytes(), "image/png", engine="tesseract"
    )
    assert extracted.ocr_used is True
    fields = parse_fields(extracted.text)
    assert fields.amount == Decimal("13.50")
    assert fields.subtotal == Decimal("11.25")
    assert fields.currency == "GBP"
    assert fields.payment_method_ending == "4821"
    assert str(fields.doc_date) == "2024-03-14"


@needs_tesseract
def test_scanned_pdf_page_is_rendered_and_ocrd() -> None:
    extracted = extract_text(
        (FIXTURES / "scanned.pdf").read_bytes(), "application/pdf", engine="tesseract"
    )
    assert extracted.pages[0].ocr is True
    assert extracted.engine == "tesseract"
    assert parse_fields(extracted.text).amount == Decimal("13.50")


def test_max_pages_and_unsupported_types() -> None:
    extracted = extract_text((FIXTURES / "text-layer.pdf").read_bytes(), "application/pdf", 0)
    assert extracted.pages == () and extracted.page_count == 1
    with pytest.raises(UnsupportedDocument):
        extract_text(b"PK\x03\x04", "application/zip")


def test_rapidocr_boxes_on_one_row_become_one_line() -> None:
    boxes = [
        (300.0, 100.0, 120.0, "9.00"),
        (10.0, 102.0, 122.0, "TOTAL"),
        (10.0, 140.0, 160.0, "CASH"),
    ]
    assert assemble_lines(boxes) == ["TOTAL 9.00", "CASH"]


def test_receipt_is_cropped_out_of_a_dark_scanner_bed() -> None:
    from PIL import Image

    bed = Image.new("RGB", (1000, 1400), (40, 40, 40))
    bed.paste(load_image((FIXTURES / "receipt.png").read_bytes()), (500, 100))
    cropped = crop_to_paper(bed)
    assert cropped.width < 600 and cropped.height < 600
