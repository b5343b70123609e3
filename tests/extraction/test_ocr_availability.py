"""One answer to "which OCR engines does this machine have": what ``/healthz`` and
``fincap doctor`` report (``installed_ocr_engines``), the plans extraction offers
(``available_engines``) and the tesseract engine's own check agree, whatever is installed."""

from __future__ import annotations

import importlib.util
import shutil

import pytest

from engines import ocr_availability
from engines.extraction.ocr_plan import available_engines
from engines.extraction.ocr_tesseract import tesseract_available
from engines.ocr_availability import installed_ocr_engines


def _install(monkeypatch: pytest.MonkeyPatch, *, rapidocr: bool, tesseract: bool) -> None:
    """Pretend the machine has what is named, and nothing else."""
    find_spec, which = importlib.util.find_spec, shutil.which
    monkeypatch.setattr(
        ocr_availability.importlib.util,
        "find_spec",
        lambda name, *a: find_spec(name, *a) if rapidocr or name != "rapidocr" else None,
    )
    monkeypatch.setattr(
        ocr_availability.shutil,
        "which",
        lambda name, *a, **k: which(name, *a, **k) if tesseract or name != "tesseract" else None,
    )
    if rapidocr:
        assert find_spec("rapidocr") is not None, "the test extras install rapidocr"
    if tesseract and which("tesseract") is None:
        monkeypatch.setattr(ocr_availability.shutil, "which", lambda name, *a, **k: "/bin/true")


@pytest.mark.parametrize(
    ("rapidocr", "tesseract", "plans"),
    [
        (True, True, ("auto", "tesseract", "rapidocr")),
        (True, False, ("rapidocr",)),
        # rapidocr missing: neither it nor auto (which falls back to it) is offered.
        (False, True, ("tesseract",)),
        (False, False, ()),
    ],
)
def test_the_plans_offered_are_the_engines_installed(
    monkeypatch: pytest.MonkeyPatch, rapidocr: bool, tesseract: bool, plans: tuple[str, ...]
) -> None:
    _install(monkeypatch, rapidocr=rapidocr, tesseract=tesseract)
    installed = installed_ocr_engines()
    assert set(installed) == {
        name for name, has in (("rapidocr", rapidocr), ("tesseract", tesseract)) if has
    }
    assert available_engines() == plans
    assert set(available_engines()) - {"auto"} == set(installed)
    assert tesseract_available() is tesseract
