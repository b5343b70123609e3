"""Small previews of originals for lists: the first page of a PDF or the image, as a JPEG.

No transport, no database: bytes in, bytes out. Pillow and pypdfium2 are already what the
extraction engines use.
"""

from __future__ import annotations

import io

import pypdfium2 as pdfium
from PIL import Image, ImageOps

THUMBNAIL_EDGE = 320  # px, the longest side: sharp at 2x in a 160 px list cell
# A page is rendered at a scale that makes its longest side about THUMBNAIL_EDGE already, so a
# poster-sized PDF page costs no more than a receipt.
PDF_POINTS_PER_INCH = 72


class NotPreviewable(Exception):
    """The original cannot be drawn (damaged file, or a format Pillow cannot read)."""


def thumbnail(data: bytes, mime_type: str, edge: int = THUMBNAIL_EDGE) -> bytes:
    """A JPEG no larger than ``edge`` × ``edge`` showing the original (a PDF's first page)."""
    try:
        image = _first_page(data, edge) if mime_type == "application/pdf" else _image(data)
    except (OSError, ValueError, pdfium.PdfiumError) as exc:
        raise NotPreviewable(str(exc)) from exc
    image = ImageOps.exif_transpose(image)  # phone photos are stored sideways with a tag
    image.thumbnail((edge, edge))
    if image.mode not in ("RGB", "L"):
        # Transparent PNGs and palettes: flatten on white, as the paper would be.
        background = Image.new("RGB", image.size, "white")
        rgba = image.convert("RGBA")
        background.paste(rgba, mask=rgba.getchannel("A"))
        image = background
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=80, optimize=True)
    return out.getvalue()


def _image(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
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
