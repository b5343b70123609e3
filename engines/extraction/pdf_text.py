"""Text of PDF pages: the embedded text layer where there is one, OCR of a render otherwise.

pypdfium2 reads text in ~1 ms per page and renders at 300 dpi in ~50 ms without poppler (large
pages at less: see ``budget``);
pypdf is the pure-Python fallback for the text layer (it cannot render, so scanned pages
are reported as warnings when pypdfium2 is missing).
"""

from __future__ import annotations

import io
from collections.abc import Callable

from .budget import pages_to_read, render_scale
from .errors import MissingDependency, UnreadableDocument
from .ocr_plan import OcrPlan, ocr_page
from .text_types import PageText

try:
    import pypdfium2
except ImportError:  # optional: pip install pypdfium2
    pypdfium2 = None
try:
    import pypdf
except ImportError:  # optional: pip install pypdf
    pypdf = None  # type: ignore[assignment]

# A page with fewer visible characters than this in its text layer is treated as scanned
# (scanners often add a page number or a stray space as text).
MIN_TEXT_LAYER_CHARS = 16


def read_pdf(
    data: bytes, max_pages: int | None, plan: Callable[[], OcrPlan]
) -> tuple[list[PageText], int, list[str]]:
    """Return (pages, page count, warnings); ``plan`` is only built if a page needs OCR."""
    if pypdfium2 is not None:
        return _read_with_pdfium(data, max_pages, plan)
    if pypdf is not None:
        return _read_with_pypdf(data, max_pages)
    raise MissingDependency("PDF text needs: pip install pypdfium2 (or pypdf)")


def _read_with_pdfium(
    data: bytes, max_pages: int | None, plan: Callable[[], OcrPlan]
) -> tuple[list[PageText], int, list[str]]:
    assert pypdfium2 is not None
    try:
        document = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as exc:
        raise UnreadableDocument(f"not a readable PDF: {exc}") from exc
    try:
        count = len(document)
        pages: list[PageText] = []
        for index in range(_limit(count, max_pages)):
            page = document[index]
            text = _clean(page.get_textpage().get_text_range())
            if _has_text_layer(text):
                pages.append(PageText(index + 1, text, "pdf-text", ocr=False))
                continue
            image = page.render(scale=render_scale(*page.get_size())).to_pil()
            reading = ocr_page(image, plan())
            pages.append(PageText(index + 1, reading.text, reading.engine, ocr=True))
        return pages, count, []
    finally:
        document.close()


def _read_with_pypdf(data: bytes, max_pages: int | None) -> tuple[list[PageText], int, list[str]]:
    assert pypdf is not None
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        count = len(reader.pages)
    except pypdf.errors.PyPdfError as exc:
        raise UnreadableDocument(f"not a readable PDF: {exc}") from exc
    pages: list[PageText] = []
    warnings: list[str] = []
    for index in range(_limit(count, max_pages)):
        text = _clean(reader.pages[index].extract_text() or "")
        if not _has_text_layer(text):
            warnings.append(f"page {index + 1} has no text layer; OCR of PDF pages needs pypdfium2")
        pages.append(PageText(index + 1, text, "pdf-text", ocr=False))
    return pages, count, warnings


def _limit(count: int, max_pages: int | None) -> int:
    return pages_to_read(count, max_pages)


def _has_text_layer(text: str) -> bool:
    return len("".join(text.split())) >= MIN_TEXT_LAYER_CHARS


def _clean(text: str) -> str:
    # pdfium ends lines with \r\n and may emit NULs or form feeds inside a page.
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    return text.replace("\f", "\n").strip()
