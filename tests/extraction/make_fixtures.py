"""Regenerate the tiny documents in tests/fixtures/extraction/.

    .venv/bin/python tests/extraction/make_fixtures.py

receipt.png: a clean till slip drawn with Pillow's bundled font; text-layer.pdf: an
invoice with a real text layer (reportlab); scanned.pdf: the receipt image as the only
content of a PDF page, so the page has no text layer and must be rendered and OCR'd.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "extraction"
RECEIPT_LINES = (
    "CORNER CAFE LTD",
    "12 High Street, London",
    "Date: 14/03/2024",
    "Latte 2 x 3.50 7.00",
    "Bagel 4.25",
    "Subtotal 11.25",
    "VAT 2.25",
    "TOTAL GBP 13.50",
    "VISA XXXX XXXX XXXX 4821",
)
INVOICE_LINES = (
    "Northwind Consulting GmbH",
    "Invoice Number: INV-2024-0042",
    "Invoice Date: 2024-02-29",
    "Consulting services 1 1,000.00",
    "Subtotal 1,000.00",
    "VAT 19% 190.00",
    "Total EUR 1,190.00",
)


def receipt_image(lines: Sequence[str] = RECEIPT_LINES) -> Image.Image:
    """A till slip of ``lines`` (the fixture's by default): a photo that needs OCR."""
    font = ImageFont.load_default(size=22)
    image = Image.new("L", (420, 40 + 32 * len(lines)), 255)
    draw = ImageDraw.Draw(image)
    for index, line in enumerate(lines):
        draw.text((20, 20 + 32 * index), line, fill=0, font=font)
    return image


def main() -> None:
    from reportlab.lib.pagesizes import A6
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    FIXTURES.mkdir(parents=True, exist_ok=True)
    image = receipt_image()
    image.save(FIXTURES / "receipt.png", optimize=True)

    pdf = canvas.Canvas(str(FIXTURES / "text-layer.pdf"), pagesize=A6)
    for index, line in enumerate(INVOICE_LINES):
        pdf.drawString(20, 380 - 18 * index, line)
    pdf.save()

    scanned = canvas.Canvas(str(FIXTURES / "scanned.pdf"), pagesize=A6)
    # Drawn 200 pt wide, the page renders at 300 dpi to an ~830 px wide receipt.
    scanned.drawImage(
        ImageReader(image), 20, 150, width=200, height=200 * image.height / image.width
    )
    scanned.save()


if __name__ == "__main__":
    main()
