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

from .image_prep import clean_noisy, crop_to_paper, normalize_size, rotate_upright, text_quality
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
    text: str
    engine: str


def available_engines() -> tuple[str, ...]:
    """The engine names this install can run (advertise only what is installed)."""
    # rapidocr is a Python dependency; tesseract is a system program that may be missing.
    return ("auto", "tesseract", "rapidocr") if tesseract_available() else ("rapidocr",)


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
    if tesseract is not None:
        # Imported here: fields parsing does not depend on OCR, only this policy does.
        from .fields import has_core_fields

        return OcrPlan(
            primary=tesseract,
            fallback=RapidOcrEngine(),
            good_enough=has_core_fields,
            orientation=tesseract,
        )
    return OcrPlan(primary=RapidOcrEngine())


def ocr_page(image: Image, plan: OcrPlan) -> PageReading:
    """OCR one page image, fixing rotation and noise only when the first reading is poor."""
    image = normalize_size(crop_to_paper(image))
    reading = PageReading(plan.primary.read(image), plan.primary.name)
    if text_quality(reading.text) < POOR_QUALITY and plan.orientation is not None:
        degrees = plan.orientation.detect_rotation(image)
        if degrees:
            image = rotate_upright(image, degrees)
            reading = _better(reading, PageReading(plan.primary.read(image), plan.primary.name))
    if text_quality(reading.text) < POOR_QUALITY and plan.primary.name == "tesseract":
        cleaned = PageReading(plan.primary.read(clean_noisy(image)), plan.primary.name)
        reading = _better(reading, cleaned)
    if plan.fallback is not None and not plan.good_enough(reading.text):
        second = PageReading(plan.fallback.read(image), plan.fallback.name)
        # The fallback is the more accurate engine: prefer it unless it found nothing.
        if second.text.strip():
            reading = second
    return reading


def _better(first: PageReading, second: PageReading) -> PageReading:
    """The reading with more word-like text (quality weighted by amount of text)."""

    def score(reading: PageReading) -> float:
        return text_quality(reading.text) * len(reading.text.split())

    return second if score(second) > score(first) else first
