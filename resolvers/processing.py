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
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import UTC, date, datetime, time
from typing import Any

from engines.analysis import Analysis, analyze
from engines.currency import NoRate, RateBook, UnknownCurrency
from engines.extraction import (
    ExtractionError,
    OverBudget,
    UnreadableDocument,
    UnsupportedDocument,
)
from persistence.money import to_cents
from persistence.store import Store

log = logging.getLogger("fincap.processing")
TERMINAL = frozenset({"processed", "skipped", "failed", "warning"})
DEFAULT_CURRENCY = "USD"


class PermanentFailure(Exception):
    """Retrying cannot help (the file is unreadable or over a budget); the document is marked
    failed at once, with this message as the reason."""


class _BrokenBeforeSubmit(BrokenProcessPool):
    """The pool refused a call at submission: it was broken before the call began."""


ExecutorFactory = Callable[[int], Executor]
"""Builds an executor of the given size (the app's process pool, set up for analysis)."""


class Analyzer:
    """Runs ``analyze`` in an executor (a process pool in production) off the event loop.

    A process pool whose child died (the OOM killer, a crash in native code) is broken for good:
    every later call would fail. The analyzer replaces it, and runs each call the death
    interrupted once more, alone, in a fresh process of its own: which call killed the pool is
    unknown, and in isolation only the file that kills its process fails (permanently).
    """

    def __init__(
        self,
        executor: Executor | None = None,
        *,
        new_executor: ExecutorFactory | None = None,
        size: int = 1,
        function: Callable[..., Analysis] = analyze,
    ) -> None:
        self._function = function  # a picklable top-level function (tests pass their own)
        self._new_executor = new_executor
        self._size = size
        self._executor = executor
        if executor is None and new_executor is not None:
            self._executor = new_executor(size)
        self._isolated = asyncio.Lock()
        self._replacement_error: Exception | None = None

    async def __call__(self, data: bytes, mime: str, **hints: Any) -> Analysis:
        call = functools.partial(self._function, data, mime, **hints)
        executor = self._executor
        try:
            return await self._run(executor, call)
        except _BrokenBeforeSubmit:
            if self._new_executor is None:
                raise
            # The pool was dead before this call: it cannot be the culprit.
            self._replace(executor)
            return await self._run(self._executor, call)
        except BrokenProcessPool:
            if self._new_executor is None:
                raise
            self._replace(executor)
            log.warning("the analysis process died; running the call again in isolation")
        # One at a time: several calls interrupted together must not kill each other again.
        async with self._isolated:
            alone = self._new_executor(1)
            try:
                return await self._run(alone, call)
            except BrokenProcessPool:
                raise PermanentFailure(
                    "the analysis process died while reading this file (it may need more "
                    "memory than FINCAP_ANALYSIS_MEMORY_MB allows)"
                ) from None
            finally:
                alone.shutdown(wait=False, cancel_futures=True)

    async def _run(self, executor: Executor | None, call: Callable[[], Analysis]) -> Analysis:
        loop = asyncio.get_running_loop()
        try:
            # A broken pool refuses the submission itself, before anything runs.
            future = loop.run_in_executor(executor, call)
        except BrokenProcessPool as exc:
            raise _BrokenBeforeSubmit(str(exc)) from exc
        try:
            return await future
        except (UnreadableDocument, UnsupportedDocument, OverBudget) as exc:
            raise PermanentFailure(str(exc)) from exc
        except MemoryError as exc:
            raise PermanentFailure(
                "reading this file needs more memory than FINCAP_ANALYSIS_MEMORY_MB allows"
            ) from exc

    def _replace(self, broken: Executor | None) -> None:
        """A new pool instead of ``broken`` (unless another call replaced it already)."""
        if self._new_executor is None:
            return
        if broken is not self._executor and self._usable():
            return
        previous = self._executor
        try:
            self._executor = self._new_executor(self._size)
        except Exception as exc:  # e.g. no process can be started: readiness says so
            log.exception("cannot start a new analysis pool")
            self._replacement_error = exc
            return
        self._replacement_error = None
        for dead in {id(pool): pool for pool in (broken, previous) if pool is not None}.values():
            dead.shutdown(wait=False, cancel_futures=True)

    def _usable(self) -> bool:
        if self._replacement_error is not None:
            return False
        if not isinstance(self._executor, ProcessPoolExecutor):
            return True
        try:
            # A broken pool refuses work at once (the public way to ask); a sound one runs a
            # no-op.
            self._executor.submit(int)
        except BrokenProcessPool:
            return False
        return True

    def ready(self) -> bool:
        """Whether analysis can run: a pool found broken is replaced here, so readiness turns
        false only when no working pool can be made."""
        if not self._usable():
            self._replace(self._executor)
        return self._usable()

    def shutdown(self) -> None:
        """Stop the pool (at exit); work in progress is cancelled."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)


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
    if duplicate is not None:
        original, why = duplicate
        original_id = original.get("duplicateOf") or original["_id"]
        await store.documents.link_duplicate(workspace_id, original_id, document_id)
        await finish(
            store,
            workspace_id,
            document_id,
            activity_id,
            "warning",
            f"Possible duplicate of {original_id}: {why}. {summary}",
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
