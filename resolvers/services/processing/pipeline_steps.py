"""The steps of the processing pipeline (their order is
``resolvers.services.processing.pipeline.STEPS``).

Each is small and does one thing; what it learns goes into the ``Intake`` it returns.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import date
from typing import ClassVar

from domain.documents import SAVED
from engines.currency import NoRate, RateBook, UnknownCurrency
from engines.extraction.review import review_reason
from persistence.documents import (
    arrived_before,
    duplicate_rules_of,
    embedding_text,
    values_after,
)
from resolvers.services.documents.preferences import DEFAULT_CURRENCY, preferred_currency
from resolvers.services.processing.analyzer import PermanentFailure, document_fields
from resolvers.services.processing.pipeline_contract import Intake, StepContext, StopPipeline
from resolvers.services.processing.thumbnails import store_preview
from resolvers.services.rules.rule_runner import EVENT_PROCESSED, RuleEvent, run_document_rules

log = logging.getLogger("fincap.processing")
# Later arrivals an earlier document may still claim as its duplicates: finished as originals,
# or being processed (they may have looked for their original before this one was saved).
ADOPTABLE = (*SAVED, "processing")
LATER_COPIES = 20  # per rule: more copies of one receipt processed before it are not expected


class ReadOriginal:
    """The original's bytes, from GridFS (a source that holds them already skips this)."""

    name: ClassVar[str] = "read-original"

    def applies(self, intake: Intake) -> bool:
        return intake.original is None

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        data = await ctx.services.store.files.read(intake.workspace_id, intake.file)
        return dataclasses.replace(intake, original=data)


class MakePreview:
    """The original's preview (a small JPEG, or a placeholder saying why there is none), drawn
    in the analysis process and stored, before anything can end the pipeline: the thumbnail
    route only ever reads it."""

    name: ClassVar[str] = "make-preview"

    def applies(self, intake: Intake) -> bool:
        return intake.original is not None

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        assert intake.original is not None
        store = ctx.services.store
        stored = await store.thumbnails.get(intake.workspace_id, intake.document_id)
        if stored is None or stored["sha256"] != intake.file.get("sha256"):
            await store_preview(
                ctx.services, intake.workspace_id, intake.document_id, intake.file, intake.original
            )
        return intake


class LoadPreferences:
    """The workspace's preferred currency (else the receiver's, else USD) and its learned
    merchant → category corrections."""

    name: ClassVar[str] = "load-preferences"

    def applies(self, intake: Intake) -> bool:
        return intake.preferred_currency is None

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        store = ctx.services.store
        return dataclasses.replace(
            intake,
            preferred_currency=await preferred_currency(
                store, intake.workspace_id, intake.received_by
            ),
            category_overrides=await store.category_overrides.all(intake.workspace_id),
        )


class Analyze:
    """Text (PDF text layer or OCR), fields and category, in the analyzer's executor."""

    name: ClassVar[str] = "analyze"

    def applies(self, intake: Intake) -> bool:
        return intake.original is not None

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        assert intake.original is not None
        try:
            analysis = await ctx.services.get_analyzer()(
                intake.original,
                intake.file["mimeType"],
                currency=None,
                today=ctx.today,
                overrides=dict(intake.category_overrides),
            )
        except PermanentFailure as exc:
            raise StopPipeline("failed", f"The file could not be read: {exc}") from exc
        return dataclasses.replace(intake, analysis=analysis)


class RequireFinancialDocument:
    """A file that is no receipt or invoice ends ``skipped``, with the reason."""

    name: ClassVar[str] = "require-financial-document"

    def applies(self, intake: Intake) -> bool:
        return intake.analysis is not None

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        assert intake.analysis is not None
        parsed = intake.analysis.fields
        if not parsed.financial:
            raise StopPipeline(
                "skipped", parsed.skip_reason or "No receipt or invoice found in this file"
            )
        return intake


class TakeFields:
    """The analysis as document fields
    (``resolvers.services.processing.analyzer.document_fields``)."""

    name: ClassVar[str] = "take-fields"

    def applies(self, intake: Intake) -> bool:
        return intake.analysis is not None

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        assert intake.analysis is not None
        return dataclasses.replace(intake, fields=document_fields(intake.analysis))


class ConvertCurrency:
    """``preferredCurrency`` and the ECB ``conversionRate`` to it at the document date."""

    name: ClassVar[str] = "convert-currency"

    def applies(self, intake: Intake) -> bool:
        return intake.preferred_currency is not None

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        preferred = intake.preferred_currency or DEFAULT_CURRENCY
        rate = conversion(
            ctx.services.rate_book(),
            intake.fields.get("currency"),
            preferred,
            intake.fields.get("docDate"),
        )
        fields = {**intake.fields, "preferredCurrency": preferred, "conversionRate": rate}
        return dataclasses.replace(intake, fields=fields)


class CheckDuplicate:
    """Which document this one repeats (the same file, the same invoice number, or the same
    merchant with amount within 0.05 and date within a day). The one that arrived first is the
    original, whichever was processed first: an earlier arrival makes this one its duplicate;
    later arrivals that were finished (or are being processed) as originals become this one's
    duplicates (``LinkDuplicate``)."""

    name: ClassVar[str] = "check-duplicate"

    def applies(self, intake: Intake) -> bool:
        return bool(intake.fields)

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        rules = duplicate_rules_of(intake.fields, intake.file["sha256"])
        documents = ctx.services.store.documents
        first = await documents.reads.find_duplicates(
            intake.workspace_id, intake.document_id, rules
        )
        if not first:
            return intake
        original, why = first[0]
        if arrived_before(original, intake.record):
            original_id = original.get("duplicateOf") or original["_id"]
            return dataclasses.replace(intake, duplicate=(original_id, why))
        # Everything it repeats arrived later: those taken for originals so far become its.
        later = await documents.reads.find_duplicates(
            intake.workspace_id,
            intake.document_id,
            rules,
            only={"duplicateOf": None, "processingStatus": {"$in": list(ADOPTABLE)}},
            limit=LATER_COPIES,
        )
        copies = tuple((doc["_id"], why) for doc, why in later)
        return dataclasses.replace(intake, later_copies=copies) if copies else intake


class Embed:
    """The embedding of the fields' text (merchant, category, summary, line items, place),
    for ranking by meaning; skipped where the store embeds nothing."""

    name: ClassVar[str] = "embed"

    def applies(self, intake: Intake) -> bool:
        return bool(intake.fields)

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        vectorize = ctx.services.store.documents.collection.vectorize
        if vectorize is None:
            return intake
        merged = values_after(intake.record, intake.fields)
        try:
            vector = (await vectorize([embedding_text(merged)]))[0]
        except Exception:
            # The document is worth more than its vector: reindex adds it later.
            log.exception("embedding failed", extra={"documentId": intake.document_id})
            return intake
        return dataclasses.replace(intake, vector=vector)


class SaveFields:
    """The fields found onto the stored document (no edit history: nobody corrected them)."""

    name: ClassVar[str] = "save-fields"

    def applies(self, intake: Intake) -> bool:
        return bool(intake.fields)

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        await ctx.services.store.documents.writes.update_fields(
            intake.workspace_id, intake.loaded, intake.fields, vector=intake.vector
        )
        return intake


class LinkDuplicate:
    """A duplicate is linked to its original both ways and ends ``warning`` with the reason
    (documents that took it for their original follow it to the real one); later arrivals found
    to repeat this document become its duplicates."""

    name: ClassVar[str] = "link-duplicate"

    def applies(self, intake: Intake) -> bool:
        return intake.duplicate is not None or bool(intake.later_copies)

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        documents = ctx.services.store.documents
        if intake.duplicate is not None:
            original_id, why = intake.duplicate
            await documents.writes.link_duplicate(
                intake.workspace_id, original_id, intake.document_id
            )
            await documents.writes.move_duplicates(
                intake.workspace_id, intake.document_id, original_id
            )
            note = f"Possible duplicate of {original_id}: {why}."
            return dataclasses.replace(intake, notes=(*intake.notes, note))
        events = list(intake.events)
        for copy_id, why in intake.later_copies:
            if await adopt_later_copy(ctx, intake, copy_id, why):
                events.append(f"{copy_id}, which arrived later, is marked its duplicate.")
        return dataclasses.replace(intake, events=tuple(events))


async def adopt_later_copy(ctx: StepContext, intake: Intake, copy_id: str, why: str) -> bool:
    """Make ``copy_id`` (arrived after this document, taken for an original so far) a duplicate
    of it; a finished one is marked ``warning`` with the reason, on its activity item too (one
    still being processed says so itself when it finishes:
    ``resolvers.services.processing.pipeline``)."""
    store = ctx.services.store
    workspace_id = intake.workspace_id
    record = await store.documents.reads.get(workspace_id, copy_id)
    if (
        record is None
        or record.get("duplicateOf")
        or record.get("processingStatus") not in ADOPTABLE
    ):
        return False
    await store.documents.writes.link_duplicate(workspace_id, intake.document_id, copy_id)
    await store.documents.writes.move_duplicates(workspace_id, copy_id, intake.document_id)
    if record.get("processingStatus") == "processing":
        return True
    reason = " ".join(
        part
        for part in (
            f"Possible duplicate of {intake.document_id}: {why} (it arrived earlier).",
            record.get("processingReason") or "",
        )
        if part
    )
    await store.documents.writes.set_processing(workspace_id, copy_id, "warning", reason)
    if record.get("activityId"):
        await store.activity.record_outcome(
            workspace_id, record["activityId"], copy_id, "warning", reason
        )
    return True


class FlagWeakFields:
    """A missing or low-confidence amount or date ends ``warning`` with what to check."""

    name: ClassVar[str] = "flag-weak-fields"

    def applies(self, intake: Intake) -> bool:
        return intake.analysis is not None

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        assert intake.analysis is not None
        reason = review_reason(intake.analysis.fields)
        if reason is None:
            return intake
        return dataclasses.replace(intake, notes=(*intake.notes, reason))


class ApplyRules:
    """The workspace's enabled document-processed rules on the saved document; what each did
    joins the reasoning (a likely duplicate is not sent to an integration)."""

    name: ClassVar[str] = "apply-rules"

    def applies(self, intake: Intake) -> bool:
        return bool(intake.fields)

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        event = RuleEvent(
            trigger="document-processed",
            key=EVENT_PROCESSED,
            duplicate_of=intake.duplicate[0] if intake.duplicate else None,
        )
        lines = await run_document_rules(
            ctx.services, intake.workspace_id, intake.document_id, event
        )
        return dataclasses.replace(intake, events=(*intake.events, *lines)) if lines else intake


def conversion(
    rates: RateBook, currency: str | None, preferred: str, on: date | None
) -> float | None:
    if not currency:
        return None
    try:
        return float(rates.quote(currency, preferred, on).rate)
    except (UnknownCurrency, NoRate):
        return None  # a currency the ECB does not publish: leave the rate unknown
