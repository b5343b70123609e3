"""Tesseract through pytesseract: fast (~0.4 s per receipt on one core), weaker on photos.

Needs the Debian packages ``tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu`` (``make
install`` installs them); the program may still be missing on a hand-made install, which
``tesseract_available`` reports.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

import pytesseract

from engines.ocr_availability import tesseract_installed

from .errors import MissingDependency
from .layout import TextBox
from .ocr_engine import OcrBoxes

if TYPE_CHECKING:
    from PIL.Image import Image

INSTALL_HINT = (
    "tesseract OCR needs: apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu"
)


def tesseract_available() -> bool:
    """True when the tesseract program is installed (``engines.ocr_availability`` says)."""
    return tesseract_installed()


class TesseractEngine:
    """OCR with tesseract's LSTM model, one uniform block of text per page (``--psm 6``)."""

    name = "tesseract"

    def __init__(self, languages: str = "eng", page_mode: int = 6) -> None:
        if not tesseract_available():
            raise MissingDependency(INSTALL_HINT)
        # OpenMP threads make tesseract more than twice as slow on a shared 2-core machine
        # (0.9 s vs 0.4 s per receipt); workers parallelize across documents instead. The
        # variable must be in the environment pytesseract's subprocess inherits.
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")
        # English only by default: adding "deu" doubled the time per receipt and read German
        # receipts (digits, capitals) no better; pass "eng+deu" for German prose.
        self.languages = _installed_subset(languages)
        self.config = f"--psm {page_mode}"

    def read(self, image: Image) -> OcrBoxes:
        data: dict[str, list[Any]] = pytesseract.image_to_data(
            image, lang=self.languages, config=self.config, output_type=pytesseract.Output.DICT
        )
        boxes = []
        for index, text in enumerate(data["text"]):
            if not str(text).strip():
                continue
            left, top = float(data["left"][index]), float(data["top"][index])
            width, height = float(data["width"][index]), float(data["height"][index])
            confidence = max(0.0, min(1.0, float(data["conf"][index]) / 100))
            boxes.append(TextBox(str(text), left, top, left + width, top + height, confidence))
        return OcrBoxes(tuple(boxes))

    def detect_rotation(self, image: Image) -> int:
        """Clockwise degrees that make the page upright per tesseract's OSD; 0 if unsure."""
        try:
            report: str = pytesseract.image_to_osd(image, config="--psm 0")
        except pytesseract.TesseractError:
            return 0  # too little text to decide: leave the page as it is
        match = re.search(r"Rotate:\s*(\d+)", report)
        confidence = re.search(r"Orientation confidence:\s*([\d.]+)", report)
        if not match or (confidence and float(confidence.group(1)) < 1.0):
            return 0
        return int(match.group(1))


def _installed_subset(languages: str) -> str:
    """Keep only the language packs that are installed, so a missing 'deu' is no error."""
    try:
        installed = set(pytesseract.get_languages(config=""))
    except pytesseract.TesseractError:
        return languages
    wanted = [lang for lang in languages.split("+") if lang in installed]
    return "+".join(wanted) or "eng"
