"""Resource budgets per file: what one document may cost to read, checked before it is spent.

A 440-byte PDF with one 6000 pt page, rendered at 300 dpi whatever its size, asked for 3.4 GB;
a 21 KB PNG of 13000 × 13000 one-bit pixels decoded to 770 MB. So:

- a page is rendered at ``RENDER_DPI`` unless that exceeds ``MAX_RENDER_PIXELS``; larger pages
  get a lower resolution (an A3 page still gets ~290 dpi, a poster less);
- an image is decoded only if it has at most ``MAX_IMAGE_PIXELS`` (a 48 MP phone photo fits);
- at most ``MAX_PAGES`` pages of a PDF are read.

A file over a budget fails with ``OverBudget``, a permanent failure with a reason people can
read. What remains (a page that is cheap to describe but expensive to draw) is caught by the
memory limit the analysis processes run under (``app/host/analysis_child.py``).
"""

from __future__ import annotations

import math

from .errors import ExtractionError

RENDER_DPI = 300
MAX_RENDER_PIXELS = 16_000_000  # A4 at 300 dpi is 8.7 million; OCR scales pages to 3000 px
MAX_IMAGE_PIXELS = 50_000_000
MAX_PAGES = 10
POINTS_PER_INCH = 72


class OverBudget(ExtractionError):
    """The file would need more than a per-file budget allows; retrying cannot help."""


def render_scale(width_pt: float, height_pt: float) -> float:
    """The pdfium scale (pixels per point) for a page of ``width_pt`` × ``height_pt`` points:
    ``RENDER_DPI``, lowered so that the bitmap has at most ``MAX_RENDER_PIXELS``."""
    scale = RENDER_DPI / POINTS_PER_INCH
    area = max(width_pt, 1.0) * max(height_pt, 1.0)
    if area * scale * scale > MAX_RENDER_PIXELS:
        scale = math.sqrt(MAX_RENDER_PIXELS / area)
    return scale


def check_image_size(width: int, height: int) -> None:
    """Raise ``OverBudget`` for an image whose decoded pixels exceed ``MAX_IMAGE_PIXELS``."""
    if width * height > MAX_IMAGE_PIXELS:
        raise OverBudget(
            f"the image is {width} × {height} pixels ({width * height / 1e6:.0f} million); "
            f"at most {MAX_IMAGE_PIXELS / 1e6:.0f} million are read"
        )


def pages_to_read(count: int, requested: int | None) -> int:
    """How many of a PDF's ``count`` pages to read: ``requested`` (all when None), at most
    ``MAX_PAGES``."""
    wanted = count if requested is None else max(0, requested)
    return min(count, wanted, MAX_PAGES)
