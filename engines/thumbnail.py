"""Small previews of originals for lists: the first page of a PDF or the image, as a JPEG.

No transport, no database: bytes in, bytes out. Pillow and pypdfium2 are already what the
extraction engines use. Decoding is bounded like extraction's: an image is decoded only if its
header says it fits the pixel budget (``engines/extraction/budget.py``; a 13000 × 13000 PNG of
21 KB would decode to 1.3 GB), and a JPEG is decoded reduced (``draft``, 1/2 to 1/8). A PDF page
is rendered at the scale that makes it ``THUMBNAIL_EDGE`` pixels, whatever its size. Previews
are made once, in an analysis process (``make_preview`` is picklable), and stored; what cannot be
previewed gets a ``placeholder`` saying why.
"""

from __future__ import annotations

import io
import textwrap
import warnings
from dataclasses import dataclass
from functools import lru_cache

import pypdfium2 as pdfium
from PIL import Image, ImageDraw, ImageFont, ImageOps

from engines.extraction.budget import OverBudget, check_image_size

THUMBNAIL_EDGE = 320  # px, the longest side: sharp at 2x in a 160 px list cell
# A page is rendered at a scale that makes its longest side about THUMBNAIL_EDGE already, so a
# poster-sized PDF page costs no more than a receipt.
PDF_POINTS_PER_INCH = 72


class NotPreviewable(Exception):
    """The original cannot be drawn (damaged file, a format Pillow cannot read, or over the
    pixel budget); the message says why."""


@dataclass(frozen=True)
class Preview:
    """What to show for an original: its preview, or (with ``reason``) a placeholder saying
    why there is none."""

    jpeg: bytes
    reason: str | None = None


def make_preview(data: bytes, mime_type: str) -> Preview:
    """The preview of an original, or a placeholder with the reason it has none (runs in an
    analysis process)."""
    try:
        return Preview(thumbnail(data, mime_type))
    except NotPreviewable as exc:
        return Preview(placeholder("No preview", str(exc)), str(exc))


def thumbnail(data: bytes, mime_type: str, edge: int = THUMBNAIL_EDGE) -> bytes:
    """A JPEG no larger than ``edge`` × ``edge`` showing the original (a PDF's first page)."""
    if not (mime_type == "application/pdf" or mime_type.startswith("image/")):
        raise NotPreviewable(f"a {mime_type} original has no picture to show")
    try:
        image = _first_page(data, edge) if mime_type == "application/pdf" else _image(data)
    except OverBudget as exc:
        raise NotPreviewable(str(exc)) from exc
    except Image.DecompressionBombError as exc:
        raise NotPreviewable(f"the image is too large to draw: {exc}") from exc
    except (OSError, ValueError, pdfium.PdfiumError) as exc:
        raise NotPreviewable(f"the file cannot be drawn: {exc}") from exc
    image = ImageOps.exif_transpose(image)  # phone photos are stored sideways with a tag
    image.thumbnail((edge, edge))
    return _jpeg(_flattened(image))


def _image(data: bytes) -> Image.Image:
    with warnings.catch_warnings():  # our budget decides, below Pillow's warning
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        image = Image.open(io.BytesIO(data))
    check_image_size(*image.size)  # from the header, before any pixel is decoded
    image.seek(0)  # the first frame of a GIF or a multi-page TIFF
    image.draft("RGB", (THUMBNAIL_EDGE * 2, THUMBNAIL_EDGE * 2))  # JPEG: decode at 1/2..1/8
    image.load()
    return image


def _first_page(data: bytes, edge: int) -> Image.Image:
    pdf = pdfium.PdfDocument(data)
    try:
        page = pdf[0]
        width, height = page.get_size()
        scale = edge / max(width, height, 1.0)
        return page.render(scale=max(scale, 0.05)).to_pil()
    finally:
        pdf.close()


def _flattened(image: Image.Image) -> Image.Image:
    if image.mode in ("RGB", "L"):
        return image
    # Transparent PNGs and palettes: flatten on white, as the paper would be.
    background = Image.new("RGB", image.size, "white")
    rgba = image.convert("RGBA")
    background.paste(rgba, mask=rgba.getchannel("A"))
    return background


def _jpeg(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=80, optimize=True)
    return out.getvalue()


@lru_cache(maxsize=16)
def placeholder(title: str, detail: str = "") -> bytes:
    """A grey ``THUMBNAIL_EDGE``-pixel square JPEG with ``title`` and ``detail`` written on it:
    what is shown where there is no preview (yet)."""
    image = Image.new("RGB", (THUMBNAIL_EDGE, THUMBNAIL_EDGE), (238, 238, 236))
    draw = ImageDraw.Draw(image)
    draw.rectangle((8, 8, THUMBNAIL_EDGE - 9, THUMBNAIL_EDGE - 9), outline=(190, 190, 186), width=2)
    heading, body = ImageFont.load_default(size=22), ImageFont.load_default(size=15)
    draw.text((24, 28), title, fill=(60, 60, 58), font=heading)
    # The built-in font has no "×".
    for row, line in enumerate(textwrap.wrap(detail.replace("×", "x"), width=34)[:12]):
        draw.text((24, 72 + row * 20), line, fill=(90, 90, 88), font=body)
    return _jpeg(image)


__all__ = ["NotPreviewable", "Preview", "make_preview", "placeholder", "thumbnail"]
