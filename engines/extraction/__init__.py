"""Extraction engine: document bytes → text boxes → receipt/invoice fields → category.

No database, no HTTP. ``engines.analysis.analyze`` calls, in order::

    text = extract_text(data, mime, max_pages=10)          # PDF text layer or OCR, with boxes
    fields = parse_fields(text.layouts, {"country_code": "DE"})
    category, confidence = categorize(
        fields.merchant, fields.line_items, text.text, overrides, fields.brand_category
    )

``fields.evidence`` holds each field's confidence and where it was read;
``review.review_reason(fields)`` says what a person should check. The document is
``skipped`` with ``fields.skip_reason`` when ``fields.financial`` is False. Tesseract is a
system package; ``available_engines()`` lists the OCR plans this install can run.
"""

from .budget import OverBudget
from .categorization import TAXONOMY, categorize
from .errors import ExtractionError, MissingDependency, UnreadableDocument, UnsupportedDocument
from .fields import ExpenseLocation, LineItem, ParsedFields, ParseHints, parse_fields
from .image_prep import check_image_bytes
from .ocr_engine import OcrEngine
from .ocr_plan import OcrPlan, available_engines, build_plan
from .text_extraction import extract_text
from .text_types import ExtractedText, PageText

__all__ = [
    "TAXONOMY",
    "ExpenseLocation",
    "ExtractedText",
    "ExtractionError",
    "LineItem",
    "MissingDependency",
    "OcrEngine",
    "OcrPlan",
    "OverBudget",
    "PageText",
    "ParseHints",
    "ParsedFields",
    "UnreadableDocument",
    "UnsupportedDocument",
    "available_engines",
    "build_plan",
    "categorize",
    "check_image_bytes",
    "extract_text",
    "parse_fields",
]
