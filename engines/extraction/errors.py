"""Errors raised by the extraction engine.

ExtractionError
├── MissingDependency   an optional package or program is not installed
├── UnsupportedDocument the MIME type is not one the engine reads
├── UnreadableDocument  the bytes could not be decoded as the declared type
└── OverBudget          reading the file would exceed a per-file budget (``budget.py``)
"""

from __future__ import annotations


class ExtractionError(Exception):
    """Base class for every error of the extraction engine."""


class MissingDependency(ExtractionError):
    """An optional dependency is missing; the message carries the install line."""


class UnsupportedDocument(ExtractionError):
    """The MIME type is not one the extraction engine can read."""


class UnreadableDocument(ExtractionError):
    """The bytes could not be decoded (corrupt PDF, truncated image, ...)."""
