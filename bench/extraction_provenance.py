"""Where a fitted ``model.json`` comes from: enough to fit the same file again.

Recorded beside the weights: the commit the code was at (and whether the extraction code
or the bench differed from it), the OCR engine and its version, the versions of every
library the figures depend on, the held-out split, and a SHA-256 of the training data
(``extraction_data.data_fingerprint``: each tuning document's content and labels, and the
generated invoices' truth). ``tests/extraction/test_model_provenance.py`` checks the keys
and recomputes the data hash from the dev set.
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from extraction_data import HOLDOUT_FILE, Sample, data_fingerprint

ROOT = Path(__file__).resolve().parent.parent
# What the figures depend on: the fit (scikit-learn and its numerics), OCR (rapidocr, its
# runtime and image libraries), PDF text, date and amount parsing, the generated invoices.
LIBRARIES = (
    "scikit-learn",
    "scipy",
    "numpy",
    "joblib",
    "threadpoolctl",
    "rapidocr",
    "onnxruntime",
    "opencv-python-headless",
    "pillow",
    "pypdfium2",
    "dateparser",
    "price-parser",
    "reportlab",
)
# Changes here make a fit on the same commit differ; model.json itself does not.
CODE_PATHS = ("engines/extraction", "bench", "tests/extraction/synthetic")
MODEL_PATH = "engines/extraction/fields/model.json"


def provenance(
    training: list[Sample], args: argparse.Namespace, counts: dict[str, int]
) -> dict[str, Any]:
    """The provenance block of ``model.json`` for a fit on ``training``."""
    # Imported here: the provenance test reads LIBRARIES where scikit-learn is not installed.
    from extraction_fit import INNER_FOLDS, C

    return {
        "commit": _git("rev-parse", "HEAD"),
        "uncommitted_changes": bool(
            _git("status", "--porcelain", "--", *CODE_PATHS, f":!{MODEL_PATH}")
        ),
        "command": (
            f"python bench/extraction.py --fit --synthetic {args.synthetic} "
            f"--engine {args.engine} --today {args.today.isoformat()}"
        ),
        "today": args.today.isoformat(),
        "ocr_engine": ocr_versions(args.engine),
        "libraries": {"python": platform.python_version()}
        | {name: _version(name) for name in LIBRARIES},
        "training_data": {
            "sha256": data_fingerprint(training),
            "documents": counts,
            "held_out_split_sha256": hashlib.sha256(HOLDOUT_FILE.read_bytes()).hexdigest(),
        },
        "fit": {"C": C, "inner_folds": INNER_FOLDS, "ranker": "pairwise logistic regression"},
    }


def ocr_versions(plan: str) -> dict[str, str | None]:
    """The OCR plan and the engines' versions (tesseract also turns pages upright)."""
    return {"plan": plan, "rapidocr": _version("rapidocr"), "tesseract": tesseract_version()}


def tesseract_version() -> str | None:
    from engines.extraction.ocr_tesseract import tesseract_available

    if not tesseract_available():
        return None
    import pytesseract

    return str(pytesseract.get_tesseract_version())


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _git(*arguments: str) -> str:
    done = subprocess.run(["git", *arguments], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout.strip()
