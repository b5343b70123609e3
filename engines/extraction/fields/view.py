"""A read-only view of a document's layout that the field finders share.

Rows (``TextLine``) in reading order, and the measures the finders compare a row with:
the usual text height, how far down its page a row sits, how far right a value ends, and
the row's *segments* (runs of boxes separated by a column gap: on a two-column invoice,
the issuer's address and the buyer's share visual rows but not segments).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from ..layout import PageLayout, TextLine, document_lines

# Boxes of one row further apart than this many text heights belong to different columns.
SEGMENT_GAP_HEIGHTS = 2.0


@dataclass(frozen=True)
class Segment:
    """Consecutive boxes of one row with no column gap between them."""

    line: TextLine
    start: int  # character span in line.text
    end: int
    x0: float
    x1: float

    @property
    def text(self) -> str:
        return self.line.text[self.start : self.end]

    @property
    def y0(self) -> float:
        return self.line.y0

    @property
    def y1(self) -> float:
        return self.line.y1


class DocView:
    """Rows and geometry of one document (all pages read)."""

    def __init__(self, pages: Sequence[PageLayout]) -> None:
        self.pages = tuple(pages)
        self.lines: list[TextLine] = document_lines(self.pages)
        self.page_count = max(1, len(self.pages))
        heights = [line.height for line in self.lines if line.height > 0]
        self.text_height = statistics.median(heights) if heights else 1.0
        self._extent: dict[int, tuple[float, float, float, float]] = {}
        for page in self.pages:
            rows = [line for line in self.lines if line.page == page.number]
            if rows:
                self._extent[page.number] = (
                    min(line.x0 for line in rows),
                    min(line.y0 for line in rows),
                    max(line.x1 for line in rows),
                    max(line.y1 for line in rows),
                )

    @cached_property
    def texts(self) -> list[str]:
        return [line.text for line in self.lines]

    def first_page_lines(self) -> list[TextLine]:
        first = self.pages[0].number if self.pages else 1
        return [line for line in self.lines if line.page == first]

    def relative_y(self, line: TextLine) -> float:
        """0 at the top of the page's text, 1 at its bottom."""
        _, top, _, bottom = self._extent.get(line.page, (0.0, 0.0, 1.0, 1.0))
        return _clip((line.y0 - top) / max(bottom - top, 1e-9))

    def document_position(self, line: TextLine) -> float:
        """0 at the top of the first page, 1 at the bottom of the last page read."""
        pages = [page.number for page in self.pages] or [1]
        order = pages.index(line.page) if line.page in pages else 0
        return (order + self.relative_y(line)) / len(pages)

    def relative_x(self, line: TextLine, x: float) -> float:
        """0 at the left edge of the page's text, 1 at its right edge."""
        left, _, right, _ = self._extent.get(line.page, (0.0, 0.0, 1.0, 1.0))
        return _clip((x - left) / max(right - left, 1e-9))

    def relative_height(self, height: float) -> float:
        """A text height relative to the document's usual one (1.0 = usual)."""
        return height / max(self.text_height, 1e-9)

    def segments(self, line: TextLine) -> list[Segment]:
        """The row's runs of boxes separated by column gaps, left to right."""
        found: list[Segment] = []
        gap = SEGMENT_GAP_HEIGHTS * max(line.height, self.text_height * 0.5)
        start_index = 0
        for index in range(1, len(line.boxes) + 1):
            if index == len(line.boxes) or line.boxes[index].x0 - line.boxes[index - 1].x1 > gap:
                boxes = line.boxes[start_index:index]
                found.append(
                    Segment(
                        line,
                        line.spans[start_index][0],
                        line.spans[index - 1][1],
                        min(b.x0 for b in boxes),
                        max(b.x1 for b in boxes),
                    )
                )
                start_index = index
        return found

    def text_before(self, line: TextLine, start: int) -> str:
        """The label text governing a value at ``start``: the text before it in its
        segment, or the segment to its left when the value opens its own segment (a
        "label:    value" row with the two set apart in columns)."""
        segments = self.segments(line)
        for index, segment in enumerate(segments):
            if segment.start <= start < segment.end:
                before = line.text[segment.start : start]
                if not before.strip(" :.#-–|") and index > 0:
                    return segments[index - 1].text
                return before
        return line.text[:start]

    def next_segment(self, line: TextLine, end: int) -> Segment | None:
        """The segment to the right of the one that ends at or after ``end``."""
        segments = self.segments(line)
        for index, segment in enumerate(segments):
            if segment.start <= end <= segment.end:
                return segments[index + 1] if index + 1 < len(segments) else None
        return None

    def previous(self, line: TextLine) -> TextLine | None:
        """The row above on the same page, when it is close (no blank band between)."""
        if line.index == 0:
            return None
        above = self.lines[line.index - 1]
        if above.page != line.page:
            return None
        if line.y0 - above.y1 > 2.5 * max(line.height, above.height, self.text_height):
            return None
        return above

    def following(self, line: TextLine) -> TextLine | None:
        """The row below on the same page, when it is close."""
        if line.index + 1 >= len(self.lines):
            return None
        below = self.lines[line.index + 1]
        if below.page != line.page:
            return None
        if below.y0 - line.y1 > 2.5 * max(line.height, below.height, self.text_height):
            return None
        return below


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))
