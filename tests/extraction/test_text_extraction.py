"""Text extraction on the tiny documents in tests/fixtures/extraction (see make_fixtures.py).

OCR tests run tesseract on two small images (about a second each) and are skipped where
tesseract is not installed; the text-layer tests need only pypdfium2.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from engines.extraction import UnsupportedDocument, extract_text, parse_fields
from engines.extraction.image_prep import crop_to_paper, load_image, paper_box
from engines.extraction.layout import document_lines
from engines.extraction.ocr_rapid import level_boxes
from tests.requires import requires

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "extraction"
needs_tesseract = requires("tesseract")


def test_pdf_text_layer_is_read_without_ocr() -> None:
    extracted = extract_text((FIXTURES / "text-layer.pdf").read_bytes(), "application/pdf")
    assert extracted.ocr_used is False
    assert extracted.engine == "pdf-text"
    assert extracted.page_count == 1
    fields = parse_fields(extracted.layouts)
    assert fields.invoice_id == "INV-2024-0042"
    assert fields.amount == Decimal("1190.00")
    # Evidence points at the page: the total is the last row drawn, in the upper half of
    # the A6 page (reportlab draws from the top down).
    evidence = fields.evidence["amount"]
    assert evidence.page == 1 and evidence.text == "Total EUR 1,190.00"
    assert evidence.box is not None and 0.1 < evidence.box[1] < evidence.box[3] < 0.5


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


def _quad(x0: float, y0: float, x1: float, y1: float, tilt: float) -> list[tuple[float, float]]:
    """A text box rotated by ``tilt`` (pixels of drop per pixel of width) about the origin."""
    return [(x, y + tilt * x) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]


def test_ocr_boxes_of_a_tilted_photo_pair_up_on_level_rows() -> None:
    # At a 4 % tilt the amount 500 px to the right sits 20 px (a text height) lower than
    # its label: without levelling, "TOTAL" and "9.00" would land on different rows.
    tilt = 0.04
    quads = [
        _quad(20, 100, 400, 120, tilt),
        _quad(20, 140, 120, 160, tilt),
        _quad(520, 140, 600, 160, tilt),
        _quad(20, 180, 120, 200, tilt),
        _quad(520, 180, 600, 200, tilt),
    ]
    texts = ["CORNER CAFE LTD SDN BHD", "TOTAL", "9.00", "CASH", "10.00"]
    read = level_boxes(quads, texts, [0.99] * 5, 640, 480)
    from engines.extraction.layout import PageLayout

    page = PageLayout(1, 640, 480, read.boxes)
    assert [line.text for line in document_lines([page])] == [
        "CORNER CAFE LTD SDN BHD",
        "TOTAL 9.00",
        "CASH 10.00",
    ]


def test_pdf_text_layer_keeps_positions_and_splits_columns() -> None:
    from tests.extraction.synthetic import generate

    made = generate(1)[0]
    extracted = extract_text(made.pdf, "application/pdf")
    page = extracted.pages[0].layout
    assert page.width == pytest.approx(595.3, abs=1) and page.boxes
    names = [box for box in page.boxes if box.text == made.invoice.issuer.name]
    assert names, "the issuer's name is one run of its own"
    assert all(0 <= box.x0 < box.x1 <= page.width for box in page.boxes)


def test_a_receipt_in_shadow_is_not_cut_where_it_has_print() -> None:
    from PIL import Image, ImageDraw

    # White paper at the top, the same paper in shadow (grey) below, print on both.
    receipt = Image.new("L", (400, 1200), 255)
    draw = ImageDraw.Draw(receipt)
    draw.rectangle((0, 600, 400, 1200), fill=170)
    for y in range(40, 1160, 40):
        draw.text((30, y), "ITEM 1.00   TOTAL 9.00", fill=0)
    assert paper_box(receipt.convert("RGB")) is None


def test_receipt_is_cropped_out_of_a_dark_scanner_bed() -> None:
    from PIL import Image

    bed = Image.new("RGB", (1000, 1400), (40, 40, 40))
    bed.paste(load_image((FIXTURES / "receipt.png").read_bytes()), (500, 100))
    cropped = crop_to_paper(bed)
    assert cropped.width < 600 and cropped.height < 600


def test_a_pdf_page_turned_by_rotate_reads_in_rows() -> None:
    """A landscape page stored as a turned portrait page: its text runs up the stored page
    and across the displayed one, and must be read in rows as displayed."""
    import io

    from reportlab.pdfgen import canvas

    lines = ["Harbour Print Ltd", "Invoice No: INV-77", "Invoice Date: 03/04/2024", "Total 120.00"]
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=(595, 842))
    pdf.setPageRotation(90)
    pdf.rotate(90)  # text drawn upwards, so that it reads across once the page is turned
    for index, line in enumerate(lines):
        pdf.drawString(60, -60 - 20 * index, line)
    pdf.save()
    extracted = extract_text(buffer.getvalue(), "application/pdf")
    assert extracted.text.splitlines() == lines
    fields = parse_fields(extracted.layouts)
    assert (fields.invoice_id, fields.amount) == ("INV-77", Decimal("120.00"))
