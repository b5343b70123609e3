"""Processing of an uploaded document: the step a worker runs for a ``process-upload`` job.

original (GridFS) → analysis in an executor (text, fields, category) → conversion to the
workspace's currency at the document date → duplicate check → document saved → activity item.
Every write is keyed by the document id, so a job taken over after a crash finishes the same
document instead of creating another.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Mapping
from concurrent.futures import Executor
from datetime import UTC, date, datetime, time
from typing import Any

from engines.analysis import Analysis, analyze
from engines.currency import NoRate, RateBook, UnknownCurrency
from engines.extraction import (
    ExtractionError,
    ParsedFields,
    UnreadableDocument,
    UnsupportedDocument,
)
from engines.extraction.review import review_reason
from persistence.money import to_cents
from persistence.store import Store

log = logging.getLogger("fincap.processing")
TERMINAL = frozenset({"processed", "skipped", "failed", "warning"})
DEFAULT_CURRENCY = "USD"


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


def conversion(
    rates: RateBook, currency: str | None, preferred: str, on: date | None
) -> float | None:
    if not currency:
        return None
    try:
        return float(rates.quote(currency, preferred, on).rate)
    except (UnknownCurrency, NoRate):
        return None  # a currency the ECB does not publish: leave the rate unknown


async def preferred_currency(store: Store, workspace_id: str, user_id: str | None) -> str:
    """The workspace's preferred currency, else the uploader's, else USD."""
    workspace = await store.workspaces.get_unscoped(workspace_id)
    if workspace and workspace.get("preferredCurrency"):
        return str(workspace["preferredCurrency"])
    user = await store.users.get(user_id) if user_id else None
    if user and user.get("preferredCurrency"):
        return str(user["preferredCurrency"])
    return DEFAULT_CURRENCY


async def process_upload(
    store: Store, analyzer: Analyzer, rates: RateBook, job: Mapping[str, Any]
) -> None:
    """Process one uploaded document; raises to have the job retried."""
    workspace_id: str = job["workspaceId"]
    document_id: str = job["payload"]["documentId"]
    activity_id: str = job["payload"]["activityId"]
    record = await store.documents.get(workspace_id, document_id)
    if record is None or record.get("processingStatus") in TERMINAL:
        return  # deleted meanwhile, or finished by a worker that died before completing the job
    await store.documents.set_processing(workspace_id, document_id, "processing")
    await store.activity.set_status(workspace_id, activity_id, "processing", "Reading the document")
    activity = await store.activity.get(workspace_id, activity_id) or {}
    uploader = (activity.get("details") or {}).get("uploadedBy")

    data = await store.files.read(workspace_id, record["file"])
    preferred = await preferred_currency(store, workspace_id, uploader)
    overrides = await store.category_overrides.all(workspace_id)
    try:
        analysis = await analyzer(
            data,
            record["file"]["mimeType"],
            currency=None,
            today=datetime.now(UTC).date(),
            overrides=overrides,
        )
    except PermanentFailure as exc:
        await finish(
            store,
            workspace_id,
            document_id,
            activity_id,
            "failed",
            f"The file could not be read: {exc}",
        )
        return

    if not analysis.fields.financial:
        reason = analysis.fields.skip_reason or "No receipt or invoice found in this file"
        await finish(store, workspace_id, document_id, activity_id, "skipped", reason)
        return

    fields = document_fields(analysis)
    fields["preferredCurrency"] = preferred
    fields["conversionRate"] = conversion(rates, fields["currency"], preferred, fields["docDate"])
    doc_date = fields["docDate"]
    duplicate = await store.documents.find_duplicate(
        workspace_id,
        document_id,
        sha256=record["file"]["sha256"],
        invoice_id=fields["invoiceId"],
        merchant=fields["merchant"],
        amount_cents=to_cents(fields["amount"]) if fields["amount"] is not None else None,
        doc_date=datetime.combine(doc_date, time(), tzinfo=UTC) if doc_date else None,
    )
    await store.documents.update_fields(workspace_id, record, fields, history=[])
    how = f"read with {analysis.engine}" + (" (OCR)" if analysis.ocr_used else " (text layer)")
    summary = (
        f"Extracted {fields['merchant'] or 'unknown merchant'}, "
        f"{fields['amount'] if fields['amount'] is not None else 'no total'} "
        f"{fields['currency'] or ''}, {fields['docDate'] or 'no date'}; "
        f"category {fields['category']}; {how}"
    )
    # Weak or missing amount or date: people should know what to check.
    review = review_reason(analysis.fields)
    if duplicate is not None:
        original, why = duplicate
        original_id = original.get("duplicateOf") or original["_id"]
        await store.documents.link_duplicate(workspace_id, original_id, document_id)
        reason = f"Possible duplicate of {original_id}: {why}. {review or ''} {summary}"
        await finish(
            store, workspace_id, document_id, activity_id, "warning", " ".join(reason.split())
        )
        return
    if review is not None:
        await finish(
            store, workspace_id, document_id, activity_id, "warning", f"{review} {summary}"
        )
        return
    await finish(store, workspace_id, document_id, activity_id, "processed", summary)


async def finish(
    store: Store, workspace_id: str, document_id: str, activity_id: str, status: str, reason: str
) -> None:
    await store.documents.set_processing(workspace_id, document_id, status, reason)
    await store.activity.set_status(workspace_id, activity_id, status, reason)
    log.info("document processed", extra={"documentId": document_id, "status": status})


async def give_up(store: Store, job: Mapping[str, Any], error: str) -> None:
    """After the last attempt: the document and its activity item are marked failed."""
    payload = job["payload"]
    await finish(
        store,
        job["workspaceId"],
        payload["documentId"],
        payload["activityId"],
        "failed",
        f"Processing failed after {job['attempts']} attempts: {error}",
    )


__all__ = ["Analyzer", "ExtractionError", "PermanentFailure", "give_up", "process_upload"]
