"""Which OCR engines this machine has, found without importing them (the API process must
not pay the OCR engines' import time just to report them, e.g. in ``/healthz``).

The one answer: ``/healthz`` and ``fincap doctor`` report it, the extraction's plans
(``engines.extraction.ocr_plan.available_engines``) and the tesseract engine ask it.
"""

from __future__ import annotations

import importlib.util
import shutil


def rapidocr_installed() -> bool:
    """True when the rapidocr package is installed (it is not imported)."""
    return importlib.util.find_spec("rapidocr") is not None


def tesseract_installed() -> bool:
    """True when the tesseract program is on the PATH."""
    return shutil.which("tesseract") is not None


def installed_ocr_engines() -> tuple[str, ...]:
    """``rapidocr`` when its package is installed, ``tesseract`` when its program is."""
    found = []
    if rapidocr_installed():
        found.append("rapidocr")
    if tesseract_installed():
        found.append("tesseract")
    return tuple(found)
