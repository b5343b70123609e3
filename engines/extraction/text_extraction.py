"""``extract_text``: bytes of a PDF or an image in, the text of its pages out."""

from __future__ import annotations

from .errors import UnsupportedDocument
from .image_prep import load_image
from .layout import text_layout
from .ocr_plan import DEFAULT_ENGINE, OcrPlan, build_plan, ocr_page
from .pdf_text import read_pdf
from .text_types import ExtractedText, PageText

PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
IMAGE_TYPES = frozenset(
    {
        "image/jpeg",
        "image/jpg",
        "image/png",
        "image/webp",
        "image/tiff",
        "image/bmp",
        "image/gif",
    }
)
TEXT_TYPES = frozenset({"text/plain"})


def extract_text(
    data: bytes,
    mime: str,
    max_pages: int | None = None,
    engine: str | OcrPlan = DEFAULT_ENGINE,
    turn: int = 0,
    text_layers: bool = True,
) -> ExtractedText:
    """Extract the text of a document.

    PDF pages with a text layer are read directly (text and positions); pages without
    one, and images, are OCR'd with ``engine`` (a plan name from ``available_engines()``
    or a ready ``OcrPlan``).
    ``max_pages`` bounds the pages read (the page count still reports the whole document).
    ``turn`` (degrees clockwise) turns images and scanned pages before OCR. Without
    ``text_layers`` PDF pages are OCR'd even where they have a text layer.
    """
    kind = mime.split(";", 1)[0].strip().lower()

    def plan() -> OcrPlan:
        return engine if isinstance(engine, OcrPlan) else build_plan(engine)

    if kind in PDF_TYPES:
        pages, count, warnings = read_pdf(data, max_pages, plan, turn, text_layers)
        return ExtractedText(tuple(pages), count, tuple(warnings))
    if kind in IMAGE_TYPES:
        if max_pages == 0:
            return ExtractedText((), 1)
        reading = ocr_page(load_image(data), plan(), turn=turn)
        return ExtractedText((PageText(1, reading.layout, reading.engine, ocr=True),), 1)
    if kind in TEXT_TYPES:
        text = data.decode("utf-8", errors="replace")
        return ExtractedText((PageText(1, text_layout(text), "plain-text", ocr=False),), 1)
    raise UnsupportedDocument(f"cannot extract text from {mime!r}")
