"""Which OCR engines this machine has, found without importing them (the API process must
not pay the OCR engines' import time just to report them, e.g. in ``/healthz``)."""

from __future__ import annotations

import importlib.util
import shutil


def installed_ocr_engines() -> tuple[str, ...]:
    """``rapidocr`` when its package is installed, ``tesseract`` when its program is."""
    found = []
    if importlib.util.find_spec("rapidocr") is not None:
        found.append("rapidocr")
    if shutil.which("tesseract") is not None:
        found.append("tesseract")
    return tuple(found)
