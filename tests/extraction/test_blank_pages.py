"""A blank page is not handed to OCR: it is one flat colour, and an engine would spend seconds
finding nothing on it (a 16-megapixel blank page took about 10 s)."""

from __future__ import annotations

import random

from PIL import Image, ImageDraw

from engines.extraction.image_prep import is_blank
from engines.extraction.ocr_engine import OcrBoxes
from engines.extraction.ocr_plan import OcrPlan, ocr_page
from tests.extraction.test_reading_again import FIXTURES


class CountingEngine:
    """An engine that records each page it is asked to read and finds nothing."""

    name = "counting"

    def __init__(self) -> None:
        self.pages: list[tuple[int, int]] = []

    def read(self, image: Image.Image) -> OcrBoxes:
        self.pages.append(image.size)
        return OcrBoxes(())


def noisy_white(size: tuple[int, int], spread: int) -> Image.Image:
    """A white page with scanner-like noise of ``spread`` grey levels."""
    page = Image.new("L", size, 255)
    pixels = random.Random(7).choices(range(255 - spread, 256), k=size[0] * size[1])
    page.putdata(pixels)
    return page


def test_flat_pages_are_blank_and_pages_with_anything_on_them_are_not() -> None:
    assert is_blank(Image.new("RGB", (600, 800), "white"))
    assert is_blank(Image.new("RGB", (600, 800), (200, 200, 190)))  # grey recycled paper
    assert is_blank(noisy_white((300, 400), spread=6))
    assert not is_blank(noisy_white((300, 400), spread=40))
    one_word = Image.new("RGB", (600, 800), "white")
    ImageDraw.Draw(one_word).text((280, 390), "Total", fill=(120, 120, 120))
    assert not is_blank(one_word)  # a single light-grey word
    assert not is_blank(Image.open(FIXTURES / "receipt.png"))


def test_a_blank_page_is_not_read_and_a_page_with_text_is() -> None:
    engine = CountingEngine()
    plan = OcrPlan(primary=engine)
    reading = ocr_page(Image.new("RGB", (2480, 3508), "white"), plan, number=2)
    assert engine.pages == []
    assert reading.layout.boxes == () and reading.layout.number == 2
    assert reading.engine == "counting"
    ocr_page(Image.open(FIXTURES / "receipt.png").convert("RGB"), plan)
    assert len(engine.pages) == 1
