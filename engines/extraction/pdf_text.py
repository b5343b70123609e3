"""Text boxes of PDF pages: the embedded text layer where there is one, OCR of a render
otherwise.

pypdfium2 reads a page's text segments with their positions in about a millisecond and
renders at 300 dpi in ~50 ms without poppler (large pages at less: see ``budget``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pypdfium2

from .budget import pages_to_read, render_scale
from .errors import UnreadableDocument
from .layout import Affine, PageLayout, TextBox, apply, compose, page_fraction
from .ocr_plan import OcrPlan, ocr_page
from .text_types import PageText

# A page with fewer visible characters than this in its text layer is treated as scanned
# (scanners often add a page number or a stray space as text).
MIN_TEXT_LAYER_CHARS = 16


def read_pdf(
    data: bytes,
    max_pages: int | None,
    plan: Callable[[], OcrPlan],
    turn: int = 0,
    text_layers: bool = True,
) -> tuple[list[PageText], int, list[str]]:
    """Return (pages, page count, warnings); ``plan`` is only built if a page needs OCR;
    scanned pages are turned by ``turn`` degrees before it. Without ``text_layers`` every
    page is rendered and OCR'd (a scan whose text layer holds only a scanner's stamp)."""
    try:
        document = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as exc:
        raise UnreadableDocument(f"not a readable PDF: {exc}") from exc
    try:
        count = len(document)
        pages: list[PageText] = []
        for index in range(_limit(count, max_pages)):
            page = document[index]
            layout = text_layer(page, index + 1)
            if text_layers and _has_text_layer(layout):
                pages.append(PageText(index + 1, layout, "pdf-text", ocr=False))
                continue
            image = page.render(scale=render_scale(*page.get_size())).to_pil()
            reading = ocr_page(image, plan(), index + 1, turn)
            pages.append(PageText(index + 1, reading.layout, reading.engine, ocr=True))
        return pages, count, []
    finally:
        document.close()


def text_layer(page: pypdfium2.PdfPage, number: int) -> PageLayout:
    """The page's text as runs of words with their boxes, in points from the top left.

    Built from pdfium's characters: its text stream spaces words and breaks lines the way
    a reader sees them (letter-spaced headings come out as words), and each character has
    its box. Words of one stream line become one run unless a column gap separates them.
    """
    width, height = page.get_size()  # as displayed, after the page's /Rotate
    to_display = _display_transform(page)
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
        if len(text) != textpage.count_chars():
            return PageLayout(number, width, height, (), page_fraction(width, height))
        words: list[_Word] = []
        line = 0
        chars: list[tuple[str, tuple[float, float, float, float]]] = []
        for index, char in enumerate(text):
            if char.isspace() or char == "\x00":
                if chars:
                    words.append(_Word.of(chars, line, to_display))
                    chars = []
                if char == "\n":
                    line += 1
                continue
            chars.append((char, textpage.get_charbox(index)))
        if chars:
            words.append(_Word.of(chars, line, to_display))
    finally:
        textpage.close()
    return PageLayout(number, width, height, tuple(_runs(words)), page_fraction(width, height))


def _display_transform(page: pypdfium2.PdfPage) -> Affine:
    """PDF user space (y up, the media box's corner, unrotated) → the page as displayed
    (y down, top-left origin, after the page's /Rotate). A landscape invoice stored as a
    portrait page turned by /Rotate 90 must read in rows, as its reader sees it."""
    left, bottom, right, top = page.get_mediabox()
    width, height = right - left, top - bottom
    # Flip to y down from the media box's top-left corner.
    flipped: Affine = (1.0, 0.0, -left, 0.0, -1.0, top)
    turn = page.get_rotation() % 360
    if turn == 90:  # clockwise: (u, v) → (height - v, u)
        return compose((0.0, -1.0, height, 1.0, 0.0, 0.0), flipped)
    if turn == 180:
        return compose((-1.0, 0.0, width, 0.0, -1.0, height), flipped)
    if turn == 270:  # (u, v) → (v, width - u)
        return compose((0.0, 1.0, 0.0, -1.0, 0.0, width), flipped)
    return flipped


@dataclass(frozen=True)
class _Word:
    text: str
    box: TextBox
    line: int

    @classmethod
    def of(
        cls,
        chars: list[tuple[str, tuple[float, float, float, float]]],
        line: int,
        to_display: Affine,
    ) -> _Word:
        text = "".join(char for char, _ in chars)
        corners = [
            apply(to_display, x, y)
            for _, (x0, y0, x1, y1) in chars
            for x, y in ((x0, y0), (x1, y1))
        ]
        xs = [x for x, _ in corners]
        ys = [y for _, y in corners]
        return cls(text, TextBox(text, min(xs), min(ys), max(xs), max(ys)), line)


# Words further apart than this many text heights are in different columns.
COLUMN_GAP_HEIGHTS = 1.5


def _runs(words: list[_Word]) -> list[TextBox]:
    runs: list[TextBox] = []
    group: list[_Word] = []

    def flush() -> None:
        if group:
            boxes = [word.box for word in group]
            runs.append(
                TextBox(
                    " ".join(word.text for word in group),
                    min(b.x0 for b in boxes),
                    min(b.y0 for b in boxes),
                    max(b.x1 for b in boxes),
                    max(b.y1 for b in boxes),
                )
            )
            group.clear()

    for word in words:
        if group:
            last = group[-1].box
            size = max(last.height, word.box.height, 1.0)
            same_row = abs(last.centre_y - word.box.centre_y) < size / 2
            gap = word.box.x0 - last.x1
            if (
                word.line != group[-1].line
                or not same_row
                or not -size < gap < COLUMN_GAP_HEIGHTS * size
            ):
                flush()
        group.append(word)
    flush()
    return runs


def _limit(count: int, max_pages: int | None) -> int:
    return pages_to_read(count, max_pages)


def _has_text_layer(layout: PageLayout) -> bool:
    return sum(len("".join(box.text.split())) for box in layout.boxes) >= MIN_TEXT_LAYER_CHARS


def _clean(text: str) -> str:
    # pdfium may emit line breaks, NULs or form feeds inside a segment.
    return " ".join(text.replace("\x00", "").split())
