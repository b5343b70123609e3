"""Which OCR engines to run on a page image, in what order, and when to stop.

The measured trade-off (see ``bench/extraction.py``): tesseract is fast but misses fields on
photographed receipts; rapidocr finds them but costs several seconds. The ``auto`` plan
reads with tesseract first and only pays for rapidocr when the fields a receipt must have
(total and date) were not found in tesseract's text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from PIL.Image import Image

from engines.ocr_availability import installed_ocr_engines

from .image_prep import (
    clean_noisy,
    is_blank,
    normalize_size,
    paper_box,
    rotate_upright,
    size_factor,
    text_quality,
    unrotate,
)
from .layout import Affine, PageLayout, compose, layout_text, page_fraction, scale, shift
from .ocr_engine import OcrEngine
from .ocr_rapid import RapidOcrEngine
from .ocr_tesseract import TesseractEngine, tesseract_available

ENGINE_NAMES = ("auto", "tesseract", "rapidocr")
# Chosen on the dev-set bench (one core): rapidocr reads amount/date on 98 %/98 % of SROIE
# photos and 100 % of German scans at p95 ≈ 2 s, against 78 %/88 % and 75 %/81 % for
# tesseract (p95 1.8 / 2.9 s). "auto" (tesseract, rapidocr when fields are missing) is no
# faster at p95 (a fallback pays for both engines) and keeps tesseract's wrong totals.
DEFAULT_ENGINE = "rapidocr"
# Below this share of word-like tokens the page is probably rotated or noisy.
POOR_QUALITY = 0.55


def always(_: str) -> bool:
    return True


@dataclass(frozen=True)
class OcrPlan:
    """A primary engine, an optional fallback, and the test that makes the fallback run."""

    primary: OcrEngine
    fallback: OcrEngine | None = None
    good_enough: Callable[[str], bool] = always
    # Tesseract also answers "which way is up" (OSD); None when it is not installed.
    orientation: TesseractEngine | None = None


@dataclass(frozen=True)
class PageReading:
    """One OCR reading of a page: its boxes mapped onto the original page, and its text."""

    layout: PageLayout
    engine: str

    @property
    def text(self) -> str:
        return layout_text([self.layout])


def available_engines() -> tuple[str, ...]:
    """The plans this install can run (advertise only what is installed): each engine
    installed (``engines.ocr_availability``), and ``auto`` when both are (it runs both)."""
    installed = set(installed_ocr_engines())
    if installed == {"tesseract", "rapidocr"}:
        return ENGINE_NAMES
    return tuple(name for name in ENGINE_NAMES if name in installed)


@lru_cache(maxsize=4)
def build_plan(name: str = DEFAULT_ENGINE) -> OcrPlan:
    """Build (once per process: loading models is the slow part) the plan called ``name``."""
    if name not in ENGINE_NAMES:
        raise ValueError(f"unknown OCR engine {name!r}; choose one of {ENGINE_NAMES}")
    tesseract = TesseractEngine() if tesseract_available() else None
    if name == "tesseract":
        if tesseract is None:
            TesseractEngine()  # raises MissingDependency with the install line
        assert tesseract is not None
        return OcrPlan(primary=tesseract, orientation=tesseract)
    if name == "rapidocr":
        return OcrPlan(primary=RapidOcrEngine(), orientation=tesseract)
    if tesseract is None:
        return OcrPlan(primary=RapidOcrEngine())
    # Imported here: fields parsing does not depend on OCR, only this policy does.
    from .fields import has_core_fields

    return OcrPlan(
        primary=tesseract,
        fallback=RapidOcrEngine(),
        good_enough=has_core_fields,
        orientation=tesseract,
    )


def ocr_page(image: Image, plan: OcrPlan, number: int = 1, turn: int = 0) -> PageReading:
    """OCR one page image, fixing rotation and noise only when the first reading is poor.

    The page is turned clockwise by ``turn`` degrees (a second reading of a page where
    nothing was found), cropped to the paper and resized first; the boxes are mapped back
    through those steps, so the layout's ``to_page`` points into the image as uploaded. A blank
    page is not read: no engine finds anything on it.
    """
    back = page_fraction(image.width, image.height)
    if is_blank(image):
        nothing = PageLayout(number, float(image.width), float(image.height), (), back)
        return PageReading(nothing, plan.primary.name)
    if turn % 360:
        back = compose(back, unrotate(image.width, image.height, turn))
        image = rotate_upright(image, turn)
    box = paper_box(image)
    if box is not None:
        image = image.crop(box)
        back = compose(back, shift(box[0], box[1]))
    factor = size_factor(image)
    if factor != 1.0:
        image = normalize_size(image)
        back = compose(back, scale(1 / factor))
    reading = _read(plan.primary, image, back, number)
    if text_quality(reading.text) < POOR_QUALITY and plan.orientation is not None:
        degrees = plan.orientation.detect_rotation(image)
        if degrees:
            back = compose(back, unrotate(image.width, image.height, degrees))
            image = rotate_upright(image, degrees)
            reading = _better(reading, _read(plan.primary, image, back, number))
    if text_quality(reading.text) < POOR_QUALITY and plan.primary.name == "tesseract":
        reading = _better(reading, _read(plan.primary, clean_noisy(image), back, number))
    if plan.fallback is not None and not plan.good_enough(reading.text):
        second = _read(plan.fallback, image, back, number)
        # The fallback is the more accurate engine: prefer it unless it found nothing.
        if second.layout.boxes:
            reading = second
    return reading


def _read(engine: OcrEngine, image: Image, back: Affine, number: int) -> PageReading:
    found = engine.read(image)
    layout = PageLayout(
        number,
        float(image.width),
        float(image.height),
        found.boxes,
        compose(back, found.to_image),
    )
    return PageReading(layout, engine.name)


def _better(first: PageReading, second: PageReading) -> PageReading:
    """The reading with more word-like text (quality weighted by amount of text)."""

    def score(reading: PageReading) -> float:
        return text_quality(reading.text) * len(reading.text.split())

    return second if score(second) > score(first) else first
