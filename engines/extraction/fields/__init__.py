"""Field parsing: the text of a receipt or invoice in, its fields out (no OCR here)."""

from .field_types import DocType, ExpenseLocation, LineItem, ParsedFields, ParseHints, TaxLine
from .parser import describe, has_core_fields, parse_fields

__all__ = [
    "DocType",
    "ExpenseLocation",
    "LineItem",
    "ParseHints",
    "ParsedFields",
    "TaxLine",
    "describe",
    "has_core_fields",
    "parse_fields",
]
