"""Where text sits on a page: boxes from OCR or a PDF text layer, grouped into visual rows.

Field parsing pairs labels and values by geometry ("TOTAL" and the amount at the right of
the same row), prefers large text for a merchant's name and quotes the page and box each
value was read from. Every text source produces the same ``PageLayout``:

- OCR engines return one box per text run, in the pixels of the image they read;
- the PDF text layer returns one box per text segment, in points;
- plain text becomes one box per line (a character is one unit wide, a line one unit high),
  so hand-written texts in tests take the same path as scans.

Coordinates are in a *reading frame*: origin top left, y growing downwards, rows level
(a photographed receipt's tilt is removed before grouping). ``PageLayout.to_page`` maps
that frame back onto the page as the user sees it, as fractions of its width and height.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

# (a, b, c, d, e, f): x' = a·x + b·y + c, y' = d·x + e·y + f
Affine = tuple[float, float, float, float, float, float]
IDENTITY: Affine = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0)


def compose(outer: Affine, inner: Affine) -> Affine:
    """The affine map ``outer(inner(p))``."""
    a1, b1, c1, d1, e1, f1 = outer
    a2, b2, c2, d2, e2, f2 = inner
    return (
        a1 * a2 + b1 * d2,
        a1 * b2 + b1 * e2,
        a1 * c2 + b1 * f2 + c1,
        d1 * a2 + e1 * d2,
        d1 * b2 + e1 * e2,
        d1 * c2 + e1 * f2 + f1,
    )


def apply(transform: Affine, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = transform
    return a * x + b * y + c, d * x + e * y + f


def rotation(radians: float, cx: float, cy: float) -> Affine:
    """Rotation about (cx, cy) that adds ``radians`` to every direction's ``atan2(dy, dx)``."""
    cos, sin = math.cos(radians), math.sin(radians)
    return (cos, -sin, cx - cos * cx + sin * cy, sin, cos, cy - sin * cx - cos * cy)


def scale(factor_x: float, factor_y: float | None = None) -> Affine:
    return (factor_x, 0.0, 0.0, 0.0, factor_x if factor_y is None else factor_y, 0.0)


def shift(dx: float, dy: float) -> Affine:
    return (1.0, 0.0, dx, 0.0, 1.0, dy)


@dataclass(frozen=True)
class TextBox:
    """One run of text and its box in the reading frame; ``confidence`` is the OCR
    recognizer's (1.0 for a text layer)."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    confidence: float = 1.0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def centre_y(self) -> float:
        return (self.y0 + self.y1) / 2


@dataclass(frozen=True)
class TextLine:
    """Boxes that share a visual row, left to right, and their text joined by spaces.

    ``spans[i]`` is the (start, end) of box ``i`` in ``text``, so a match in the text can
    be traced back to the box it came from.
    """

    page: int
    index: int  # reading order within the document (0-based, across pages)
    boxes: tuple[TextBox, ...]
    text: str
    spans: tuple[tuple[int, int], ...]

    @property
    def x0(self) -> float:
        return min(box.x0 for box in self.boxes)

    @property
    def x1(self) -> float:
        return max(box.x1 for box in self.boxes)

    @property
    def y0(self) -> float:
        return min(box.y0 for box in self.boxes)

    @property
    def y1(self) -> float:
        return max(box.y1 for box in self.boxes)

    @property
    def height(self) -> float:
        """Text height of the row: its tallest box (a logo line is tall, a footer small)."""
        return max(box.height for box in self.boxes)

    @property
    def confidence(self) -> float:
        return min(box.confidence for box in self.boxes)

    def box_at(self, start: int, end: int) -> tuple[float, float, float, float]:
        """The box around the characters ``text[start:end]``.

        Within one run the characters are assumed evenly wide, so "TOTAL 9.00" read as one
        run still gives the amount's own horizontal position.
        """
        hit = [
            (box, span)
            for box, span in zip(self.boxes, self.spans, strict=True)
            if span[0] < end and start < span[1]
        ]
        if not hit:
            return (self.x0, self.y0, self.x1, self.y1)
        if len(hit) == 1:
            box, (s, e) = hit[0]
            per_char = (box.x1 - box.x0) / max(1, e - s)
            left = box.x0 + per_char * max(0, start - s)
            right = box.x0 + per_char * (min(end, e) - s)
            return (left, box.y0, right, box.y1)
        return (
            min(b.x0 for b, _ in hit),
            min(b.y0 for b, _ in hit),
            max(b.x1 for b, _ in hit),
            max(b.y1 for b, _ in hit),
        )

    def confidence_at(self, start: int, end: int) -> float:
        hit = [
            box.confidence
            for box, (s, e) in zip(self.boxes, self.spans, strict=True)
            if s < end and start < e
        ]
        return min(hit) if hit else self.confidence


@dataclass(frozen=True)
class PageLayout:
    """The boxes of one page in the reading frame, and how to map them onto the page."""

    number: int  # 1-based
    width: float
    height: float
    boxes: tuple[TextBox, ...]
    # Reading frame → fractions (0..1) of the page as stored (the original image or PDF page).
    to_page: Affine = field(default=IDENTITY)

    def page_box(self, box: tuple[float, float, float, float]) -> tuple[float, ...]:
        """A reading-frame box as [x0, y0, x1, y1] fractions of the original page."""
        corners = [apply(self.to_page, x, y) for x in (box[0], box[2]) for y in (box[1], box[3])]
        xs = [min(1.0, max(0.0, x)) for x, _ in corners]
        ys = [min(1.0, max(0.0, y)) for _, y in corners]
        return (round(min(xs), 4), round(min(ys), 4), round(max(xs), 4), round(max(ys), 4))


def page_fraction(width: float, height: float) -> Affine:
    """Scale page units to fractions of the page."""
    return (1 / max(width, 1e-9), 0.0, 0.0, 0.0, 1 / max(height, 1e-9), 0.0)


def group_rows(boxes: Iterable[TextBox]) -> list[list[TextBox]]:
    """Group boxes into visual rows, top to bottom, each row left to right.

    A box joins the row whose vertical extent holds its centre and overlaps it by at
    least half the smaller height. Receipts are printed in straight rows, so once the
    page's tilt is removed this is all the grouping needs; the overlap test keeps a small
    footnote from merging into a tall logo row.
    """
    rows: list[list[TextBox]] = []
    extents: list[tuple[float, float]] = []
    for box in sorted(boxes, key=lambda b: (b.centre_y, b.x0)):
        for index, (top, bottom) in enumerate(extents):
            overlap = min(bottom, box.y1) - max(top, box.y0)
            smaller = min(bottom - top, box.height)
            if top <= box.centre_y <= bottom and overlap >= 0.5 * smaller:
                rows[index].append(box)
                # The row's extent stays that of its first boxes: a tall neighbour must
                # not let the row swallow the next one.
                break
        else:
            rows.append([box])
            extents.append((box.y0, box.y1))
    order = sorted(range(len(rows)), key=lambda i: statistics.median(b.centre_y for b in rows[i]))
    return [sorted(rows[i], key=lambda b: b.x0) for i in order]


def document_lines(pages: Sequence[PageLayout]) -> list[TextLine]:
    """Every visual row of every page, in reading order."""
    lines: list[TextLine] = []
    for page in pages:
        for row in group_rows(page.boxes):
            row = [box for box in row if box.text.strip()]
            if not row:
                continue
            parts: list[str] = []
            spans: list[tuple[int, int]] = []
            cursor = 0
            for box in row:
                text = " ".join(box.text.split())
                if parts:
                    cursor += 1
                spans.append((cursor, cursor + len(text)))
                parts.append(text)
                cursor += len(text)
            lines.append(
                TextLine(page.number, len(lines), tuple(row), " ".join(parts), tuple(spans))
            )
    return lines


def layout_text(pages: Sequence[PageLayout]) -> str:
    """Plain text of the pages: rows joined by newlines, pages by form feeds."""
    by_page: dict[int, list[str]] = {page.number: [] for page in pages}
    for line in document_lines(pages):
        by_page[line.page].append(line.text)
    return "\f".join("\n".join(by_page[page.number]) for page in pages)


# Runs of this many spaces or more inside a text line are column gaps (a table row or a
# label and its value set apart), kept as separate boxes.
COLUMN_GAP = 3


def text_layout(text: str, number: int = 1) -> PageLayout:
    """A page layout for plain text: one box per run of text, a character one unit wide."""
    boxes: list[TextBox] = []
    rows = text.replace("\r\n", "\n").split("\n")
    for row_index, row in enumerate(rows):
        column = 0
        for chunk in _runs(row.expandtabs(4)):
            start = row.expandtabs(4).index(chunk, column)
            column = start + len(chunk)
            boxes.append(
                TextBox(chunk, float(start), float(row_index), float(column), row_index + 0.8)
            )
    width = float(max((len(row) for row in rows), default=1) or 1)
    height = float(max(1, len(rows)))
    return PageLayout(number, width, height, tuple(boxes), page_fraction(width, height))


def _runs(row: str) -> list[str]:
    runs: list[str] = []
    for part in row.split(" " * COLUMN_GAP):
        if part.strip():
            runs.append(part.strip())
    return runs


def deskew_angle(quads: Sequence[Sequence[Sequence[float]]]) -> float:
    """The page's tilt in radians, from the top edges of OCR text quads (widest first).

    Uses the median angle of boxes clearly wider than tall, weighted towards long lines;
    a page with fewer than three such boxes is taken as level.
    """
    angles: list[float] = []
    for quad in quads:
        (x0, y0), (x1, y1) = quad[0][:2], quad[1][:2]
        width = math.hypot(x1 - x0, y1 - y0)
        height = math.hypot(quad[3][0] - x0, quad[3][1] - y0)
        if width < 3 * max(height, 1.0):
            continue
        angle = math.atan2(y1 - y0, x1 - x0)
        angles.extend([angle] * max(1, round(width / max(height, 1.0) / 3)))
    if len(angles) < 3:
        return 0.0
    return statistics.median(angles)
