"""Analysis of an original off the event loop, and its result as document fields.

``Analyzer`` runs the extraction engine in an executor (a process pool in production);
``document_fields`` is the one mapping of parsed fields to the document's (API) fields, used by
the pipeline (``resolvers/pipeline.py``) and by documents.inspect.
"""

from __future__ import annotations

import asyncio
import functools
from concurrent.futures import Executor
from typing import Any

from engines.analysis import Analysis, analyze
from engines.extraction import ParsedFields, UnreadableDocument, UnsupportedDocument


class PermanentFailure(Exception):
    """Retrying cannot help (the file is unreadable); the document is marked failed at once."""


class Analyzer:
    """Runs ``analyze`` in an executor (a process pool in production) off the event loop."""

    def __init__(self, executor: Executor | None = None) -> None:
        self._executor = executor

    async def __call__(self, data: bytes, mime: str, **hints: Any) -> Analysis:
        loop = asyncio.get_running_loop()
        call = functools.partial(analyze, data, mime, **hints)
        try:
            return await loop.run_in_executor(self._executor, call)
        except (UnreadableDocument, UnsupportedDocument) as exc:
            raise PermanentFailure(str(exc)) from exc


# Engine field names → the document's (API) field names.
API_FIELD = {"doc_date": "docDate", "invoice_id": "invoiceId", "tax_amount": "taxAmount"}


def evidence_entries(parsed: ParsedFields) -> list[dict[str, Any]]:
    """Per extracted field: its confidence and where it was read (``Document.evidence``)."""
    return [
        {
            "field": API_FIELD.get(name, name),
            "confidence": found.confidence,
            "page": found.page,
            "box": list(found.box) if found.box is not None else None,
            "text": found.text[:300] if found.text else None,
            "source": found.source,
        }
        for name, found in parsed.evidence.items()
    ]


def document_fields(analysis: Analysis) -> dict[str, Any]:
    """Parsed fields → document fields (API-level values)."""
    parsed = analysis.fields
    location = parsed.expense_location
    primary = {
        "countryCode": location.country_code,
        "country": location.country,
        "city": location.city,
        "stateOrProvince": location.state_or_province,
    }
    return {
        "merchant": parsed.merchant,
        "docDate": parsed.doc_date,
        "amount": parsed.amount,
        "subtotal": parsed.subtotal,
        "taxAmount": parsed.tax_amount,
        "currency": parsed.currency,
        "invoiceId": parsed.invoice_id,
        "receiptId": parsed.receipt_id,
        "paymentMethod": parsed.payment_method,
        "paymentMethodEnding": parsed.payment_method_ending,
        "docType": parsed.doc_type,
        "summary": parsed.summary or None,
        "category": analysis.category,
        "lineItems": [
            {
                "description": item.description[:500],
                "quantity": item.quantity,
                "unitPrice": item.unit_price,
                "amount": item.amount,
                "taxAmount": item.tax_amount,
            }
            for item in parsed.line_items
        ],
        "expenseLocation": {"primary": primary} if any(primary.values()) else None,
        "evidence": evidence_entries(parsed),
    }


__all__ = ["Analyzer", "PermanentFailure", "document_fields", "evidence_entries"]
