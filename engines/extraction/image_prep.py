"""Turn uploaded image bytes into a clean, upright page image for OCR.

Photos of receipts arrive rotated, small or noisy. Each helper here is one cheap step; the
OCR step decides which of them to try (see ``ocr_page``) so that clean scans pay nothing.
"""

from __future__ import annotations

import io
import re
import warnings
from typing import cast

from PIL import Image, ImageFilter, ImageOps, UnidentifiedImageError

from .budget import OverBudget, check_image_size
from .errors import UnreadableDocument
from .layout import Affine

# Only very small images are upscaled: upscaling SROIE's ~460 px wide scans to 1000 px
# gave tesseract the same text for 10 % more time.
MIN_OCR_WIDTH = 400
# Beyond this, photos only cost time: a 12 MP phone picture is scaled down.
MAX_OCR_SIDE = 3000


def check_image_bytes(data: bytes) -> None:
    """Raise ``OverBudget`` for image bytes whose pixels exceed the decoding budget, read from
    the header alone (nothing is decoded: a 13000 × 13000 bomb costs microseconds here).
    Bytes Pillow cannot identify pass: what they are is for the caller's sniffing to say."""
    try:
        with warnings.catch_warnings():  # our budget decides, below Pillow's warning
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
        with image:
            check_image_size(*image.size)
    except Image.DecompressionBombError as exc:
        raise OverBudget(f"the image is too large to read: {exc}") from exc
    except (UnidentifiedImageError, OSError, ValueError):
        return


def load_image(data: bytes) -> Image.Image:
    """Decode image bytes, apply the EXIF orientation and return an RGB image."""
    try:
        image = Image.open(io.BytesIO(data))
        check_image_size(*image.size)  # from the header, before any pixel is decoded
        image.load()
    except UnidentifiedImageError as exc:
        # Pillow's message names the buffer object ("<_io.BytesIO object at 0x…>").
        raise UnreadableDocument("not a readable image: unknown or damaged format") from exc
    except Image.DecompressionBombError as exc:
        raise OverBudget(f"the image is too large to read: {exc}") from exc
    except OSError as exc:
        raise UnreadableDocument(f"not a readable image: {exc}") from exc
    return ImageOps.exif_transpose(image).convert("RGB")


def size_factor(image: Image.Image) -> float:
    """The scale that brings a page to a size OCR handles well (1.0: leave it)."""
    width, height = image.size
    if width < MIN_OCR_WIDTH:
        return MIN_OCR_WIDTH / width
    if max(width, height) > MAX_OCR_SIDE:
        return MAX_OCR_SIDE / max(width, height)
    return 1.0


def normalize_size(image: Image.Image) -> Image.Image:
    """Upscale small scans and downscale huge photos to a size OCR handles well."""
    factor = size_factor(image)
    if factor == 1.0:
        return image
    size = (max(1, round(image.width * factor)), max(1, round(image.height * factor)))
    return image.resize(size, Image.Resampling.LANCZOS)


# A page whose darkest and lightest pixels are this close has nothing on it to read: a blank
# page of a PDF (a separator, the back of a sheet) renders as one flat colour. Printed text is
# far darker than its paper (over 100 grey levels); JPEG noise on a flat page stays within a
# few.
BLANK_CONTRAST = 8


def is_blank(image: Image.Image) -> bool:
    """True when the page is one flat colour (within ``BLANK_CONTRAST`` grey levels): OCR would
    find nothing on it after seconds of work (a 16-megapixel blank page: about 10 s)."""
    # One band ("L"): the extrema are one (darkest, lightest) pair of grey levels.
    darkest, lightest = cast("tuple[int, int]", image.convert("L").getextrema())
    return lightest - darkest <= BLANK_CONTRAST


# Receipt paper is brighter than a scanner lid, a table or cardboard behind it.
PAPER_BRIGHTNESS = 200
# Crop only when the paper covers less than this share of the picture: cropping a page
# that is all paper saves nothing and risks cutting text.
CROP_WHEN_PAPER_BELOW = 0.7


def crop_to_paper(image: Image.Image) -> Image.Image:
    """Cut a receipt out of a larger scan or photo (a receipt on an A4 scanner bed)."""
    box = paper_box(image)
    return image if box is None else image.crop(box)


def paper_box(image: Image.Image) -> tuple[int, int, int, int] | None:
    """The (left, top, right, bottom) of the receipt's paper, or None to keep the page.

    Works on a small thumbnail: columns and rows where most pixels are paper-bright form
    the receipt's box. OCR time grows with the pixels, so this halves the cost of A4 scans.
    """
    small = image.convert("L")
    small.thumbnail((256, 256))
    width, height = small.size
    bright = [value >= PAPER_BRIGHTNESS for value in small.tobytes()]

    def share(x0: int, x1: int, y0: int, y1: int, by_column: bool) -> list[int]:
        # Indexes (columns or rows) where at least half the pixels in the band are paper.
        outer = range(x0, x1) if by_column else range(y0, y1)
        inner = range(y0, y1) if by_column else range(x0, x1)
        hits = []
        for i in outer:
            count = sum(bright[(j * width + i) if by_column else (i * width + j)] for j in inner)
            if count >= len(inner) / 2:
                hits.append(i)
        return hits

    # A short receipt covers under half the page height, so columns are first judged
    # loosely (a fifth of the height), then rows within them, then columns again.
    loose = [
        x for x in range(width) if sum(bright[y * width + x] for y in range(height)) > height / 5
    ]
    if not loose:
        return None
    rows = share(loose[0], loose[-1] + 1, 0, height, by_column=False)
    if not rows:
        return None
    top, bottom = rows[0], rows[-1] + 1
    columns = share(0, width, top, bottom, by_column=True)
    if not columns:
        return None
    left, right = columns[0], columns[-1] + 1
    span = right - left
    if (span * (bottom - top)) / (width * height) >= CROP_WHEN_PAPER_BELOW:
        return None
    scale_x, scale_y = image.width / width, image.height / height
    margin = 2  # thumbnail pixels, so that characters at the paper's edge survive
    box = (
        max(0, round((left - margin) * scale_x)),
        max(0, round((top - margin) * scale_y)),
        min(image.width, round((right + margin) * scale_x)),
        min(image.height, round((bottom + margin) * scale_y)),
    )
    return _keep_inked_bands(image, box)


# Share of edge pixels above which a band holds print. Scanner beds and tables measured
# up to 2.4 % on the dev set, receipt paper in shadow (darker than the brightness cut)
# from 4.4 % up.
INK_EDGES = 0.035


def _keep_inked_bands(
    image: Image.Image, box: tuple[int, int, int, int]
) -> tuple[int, int, int, int] | None:
    """Undo the cut of any side whose removed band has print on it.

    A receipt photographed with a shadow is darker at one end than the brightness cut, so
    its lower half would be "background"; print is what tells paper from a scanner bed.
    """
    small = image.convert("L")
    small.thumbnail((512, 512))
    factor = small.width / image.width
    edges = small.filter(ImageFilter.FIND_EDGES).point(lambda value: 255 if value > 48 else 0)
    left, top, right, bottom = box
    width, height = image.size
    bands = {
        "left": (0, 0, left, height),
        "top": (0, 0, width, top),
        "right": (right, 0, width, height),
        "bottom": (0, bottom, width, height),
    }
    for side, band in bands.items():
        x0, y0, x1, y1 = (round(value * factor) for value in band)
        scaled = (x0, y0, x1, y1)
        if scaled[2] - scaled[0] < 2 or scaled[3] - scaled[1] < 2:
            continue
        histogram = edges.crop(scaled).histogram()
        if histogram[255] / max(1, sum(histogram)) >= INK_EDGES:
            if side == "left":
                left = 0
            elif side == "top":
                top = 0
            elif side == "right":
                right = width
            else:
                bottom = height
    if (left, top, right, bottom) == (0, 0, width, height):
        return None
    return left, top, right, bottom


def clean_noisy(image: Image.Image) -> Image.Image:
    """Grayscale, median filter and a global threshold: rescues grainy phone photos.

    The threshold sits between the darkest and lightest tenth of the pixels, which follows
    the paper's own brightness instead of a fixed value that fails on dim photos.
    """
    gray = ImageOps.autocontrast(image.convert("L"), cutoff=1)
    smooth = gray.filter(ImageFilter.MedianFilter(3))
    histogram = smooth.histogram()
    total = sum(histogram)
    dark = _percentile(histogram, total, 0.10)
    light = _percentile(histogram, total, 0.90)
    cut = (dark + light) // 2
    return smooth.point(lambda value: 255 if value > cut else 0).convert("L")


def rotate_upright(image: Image.Image, degrees: int) -> Image.Image:
    """Rotate by the clockwise angle tesseract's OSD reports (0, 90, 180, 270)."""
    if degrees % 360 == 0:
        return image
    # OSD's "Rotate" is the clockwise rotation that makes the page upright; PIL turns
    # counter-clockwise for positive angles.
    return image.rotate(-degrees, expand=True)


def unrotate(width: float, height: float, degrees: int) -> Affine:
    """Maps pixels of ``rotate_upright(image, degrees)`` back to ``image`` (width × height)."""
    turn = degrees % 360
    if turn == 90:
        return (0.0, 1.0, 0.0, -1.0, 0.0, height)
    if turn == 180:
        return (-1.0, 0.0, width, 0.0, -1.0, height)
    if turn == 270:
        return (0.0, -1.0, width, 1.0, 0.0, 0.0)
    return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0)


def text_quality(text: str) -> float:
    """Share of tokens that look like real words or numbers (0..1).

    Garbage OCR of a rotated or noisy page is mostly one- and two-character fragments and
    punctuation; a readable page is mostly words. Cheap enough to run after every pass.
    """
    tokens = text.split()
    if not tokens:
        return 0.0
    good = sum(1 for token in tokens if _WORDLIKE.fullmatch(token.strip(".,:;()[]")))
    return good / len(tokens)


_WORDLIKE = re.compile(r"[A-Za-zÀ-ÿ]{3,}|[A-Za-zÀ-ÿ]*\d+(?:[.,:/-]\d+)*[A-Za-z%]*")


def _percentile(histogram: list[int], total: int, share: float) -> int:
    running = 0
    for value, count in enumerate(histogram):
        running += count
        if running >= total * share:
            return value
    return 255
