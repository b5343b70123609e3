"""The kinds of document, on their own: extraction (which must stay free of the contract's
pydantic, see ``tests/rules/test_reader_imports.py``) and the contract both name them."""

from __future__ import annotations

from typing import Literal

# A refund receipt and an invoice's credit note carry a negative amount: money back.
DocType = Literal["receipt", "invoice", "refund", "credit-note", "other"]
