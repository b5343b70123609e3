"""documents.inspect: read the original again and compare it with the stored fields."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from engines.extraction.review import WARNING_CONFIDENCE
from engines.text import fold
from resolvers.framework.context import Context
from resolvers.framework.errors import NotFound, Unprocessable
from resolvers.services.documents.document_views import full_view, jsonable
from resolvers.services.processing.analyzer import (
    PermanentFailure,
    document_fields,
    evidence_entries,
)
from schema.documents import FieldEvidence, InspectDocument, InspectedField, InspectionReport

DERIVED = {"category", "summary", "docType"}  # read from the content, not printed on it


def _text_forms(value: Any) -> list[str]:
    """How a stored value may be printed: 1234.5 → '1234.50', '1,234.50', '1234,50', …"""
    if isinstance(value, Decimal):
        plain = f"{value:.2f}"
        grouped = f"{value:,.2f}"
        return [
            plain,
            plain.replace(".", ","),
            grouped,
            grouped.replace(",", " ").replace(".", ","),
            grouped.replace(",", "X").replace(".", ",").replace("X", "."),
        ]
    if isinstance(value, date):
        return [
            value.isoformat(),
            value.strftime("%d/%m/%Y"),
            value.strftime("%m/%d/%Y"),
            value.strftime("%d.%m.%Y"),
            value.strftime("%d-%m-%Y"),
        ]
    return [str(value)]


def compare(name: str, stored: Any, visible: Any, text: str) -> InspectedField:
    folded_text = fold(text)
    if stored is None and visible is None:
        return InspectedField(
            field=name, match=None, note="neither stored nor found in the document"
        )
    if stored is None:
        return InspectedField(
            field=name,
            visible=jsonable(visible),
            match=False,
            note="not stored, but the document shows a value",
        )
    if visible is None:
        in_text = name not in DERIVED and any(
            fold(form) in folded_text for form in _text_forms(stored)
        )
        note = (
            "the stored value appears in the document text"
            if in_text
            else "not found in the document"
        )
        return InspectedField(
            field=name, stored=jsonable(stored), match=True if in_text else None, note=note
        )
    same = (
        (fold(str(stored)).strip() == fold(str(visible)).strip())
        if isinstance(stored, str)
        else stored == visible
    )
    if same:
        return InspectedField(
            field=name,
            stored=jsonable(stored),
            visible=jsonable(visible),
            match=True,
            note="matches",
        )
    if (
        isinstance(stored, str)
        and isinstance(visible, str)
        and (fold(stored) in fold(visible) or fold(visible) in fold(stored))
    ):
        return InspectedField(
            field=name,
            stored=jsonable(stored),
            visible=jsonable(visible),
            match=True,
            note="matches (one is a longer form of the other)",
        )
    note = "derived value differs" if name in DERIVED else "differs from the document"
    return InspectedField(
        field=name, stored=jsonable(stored), visible=jsonable(visible), match=False, note=note
    )


async def inspect_document(ctx: Context, args: InspectDocument) -> InspectionReport:
    workspace_id = ctx.require_workspace()
    loaded = await ctx.store.documents.reads.loaded(workspace_id, args.id)
    if loaded is None:
        raise NotFound(f"Document '{args.id}' not found")
    # The document exists: a missing or unreadable original is not a 404.
    document = loaded.document
    if not isinstance(document.get("file"), dict):
        raise Unprocessable(f"Document '{args.id}' has no original file to inspect")
    try:
        # The stored reference: the original's GridFS id is not among the API's values.
        data = await ctx.store.files.read(workspace_id, loaded.stored["file"])
    except FileNotFoundError:
        raise Unprocessable(f"The original file of '{args.id}' is missing from storage") from None
    try:
        analysis = await ctx.services.get_analyzer()(
            data,
            document["file"]["mimeType"],
            max_pages=args.maxPages,
            overrides=await ctx.store.category_overrides.all(workspace_id),
        )
    except PermanentFailure as exc:
        raise Unprocessable(f"The original of '{args.id}' cannot be read: {exc}") from None
    stored = full_view(document, ctx.services.base_url)
    visible = document_fields(analysis)
    stored_evidence = {e["field"]: e for e in document.get("evidence") or []}
    fresh_evidence = {e["field"]: e for e in evidence_entries(analysis.fields)}
    return InspectionReport(
        documentId=args.id,
        pagesRead=analysis.pages_read,
        pageCount=analysis.page_count,
        engine=analysis.engine,
        fields=[
            with_evidence(
                compare(name, stored.get(name), visible.get(name), analysis.text),
                stored_evidence.get(name),
                fresh_evidence.get(name),
            )
            for name in dict.fromkeys(args.fields)
        ],
    )


def with_evidence(
    field: InspectedField, stored: dict[str, Any] | None, fresh: dict[str, Any] | None
) -> InspectedField:
    """Add how sure extraction was of the stored value and where the original shows the
    visible one, and say so in the note where it helps a person check."""
    note = field.note
    if fresh is not None and field.match is False and fresh.get("text"):
        note += f"; the original shows it on page {fresh.get('page')}: '{fresh['text']}'"
    confidence = stored.get("confidence") if stored else None
    if confidence is not None and confidence < WARNING_CONFIDENCE and field.match:
        note += f"; it had been read with low confidence ({confidence:.2f})"
    return field.model_copy(
        update={
            "note": note,
            "confidence": confidence,
            "evidence": FieldEvidence.model_validate(fresh) if fresh else None,
        }
    )
