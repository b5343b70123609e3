"""The kinds of document, on their own: extraction (which must stay free of the contract's
pydantic, see ``tests/rules/test_reader_imports.py``) and the contract both name them."""

from __future__ import annotations

from typing import Literal

from domain.vocabulary import vocabulary

# A refund receipt and an invoice's credit note carry a negative amount: money back.
DocType = Literal["receipt", "invoice", "refund", "credit-note", "other"]

# What each value means (the GraphQL enum values' descriptions read it).
DOC_TYPES = vocabulary(
    DocType,
    {
        "receipt": "A receipt: proof of a payment made",
        "invoice": "An invoice: a bill to pay or paid",
        "refund": "A refund receipt: money paid back (a negative amount)",
        "credit-note": "A credit note against an invoice (a negative amount)",
        "other": "Another financial document",
    },
)
