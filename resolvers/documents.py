"""Capabilities of the documents resource."""

from __future__ import annotations

import re
from typing import Any

from engines.text import tokenize
from persistence.document_fields import COUNT_FIELDS
from persistence.documents import terms_filter
from persistence.ids import utcnow
from persistence.money import from_cents
from resolvers.context import Context
from resolvers.document_inspect import inspect_document
from resolvers.document_search import compiled_where, search_documents
from resolvers.document_views import full_view, jsonable
from resolvers.errors import BadRequest, NotFound
from resolvers.registry import capability
from schema.documents import (
    BulkEditDocuments,
    BulkEditItem,
    BulkEditResult,
    CountDocuments,
    CountGroup,
    CurrencyTotal,
    DeletedDocument,
    DeleteDocument,
    Document,
    DocumentCount,
    DocumentPage,
    DocumentResult,
    FieldChange,
    GetDocument,
    InspectDocument,
    InspectionReport,
    SearchDocuments,
    UnarchiveDocument,
    UpdateDocument,
)

BULK_EDIT_LIMIT = 1000
BULK_PREVIEW_ITEMS = 100
MAX_GROUPS = 500
TIME_FORMATS = {"day": "%Y-%m-%d", "date": "%Y-%m-%d", "month": "%Y-%m", "year": "%Y"}


@capability(
    "documents.search",
    input=SearchDocuments,
    output=DocumentPage,
    permissions=["read_documents"],
    effect="read",
)
async def search(ctx: Context, args: SearchDocuments) -> DocumentPage:
    """Search, filter and retrieve documents.

    Filter mode (useSearch false, or no query): the where clause, sorted by sortBy (ties by id),
    in pages of `limit` with `nextCursor`. Search mode (useSearch true with a query): documents
    matching the filters ranked by how well merchant, summary, category, invoice and receipt ids
    and line item descriptions match the query; searchType mmr also favours variety.
    outputMode compact returns id, merchant, amount, currency, docDate, category, docType plus
    requiredFields; complete returns every field.
    """
    return await search_documents(ctx, args)


async def _load(ctx: Context, document_id: str) -> dict[str, Any]:
    record = await ctx.store.documents.get(ctx.require_workspace(), document_id)
    if record is None:
        raise NotFound(f"Document '{document_id}' not found")
    return record


def _document(ctx: Context, record: dict[str, Any]) -> Document:
    return Document.model_validate(full_view(record, ctx.services.base_url))


@capability(
    "documents.get",
    input=GetDocument,
    output=DocumentResult,
    permissions=["read_documents"],
    effect="read",
)
async def get(ctx: Context, args: GetDocument) -> DocumentResult:
    """One document with full details: every extracted field, line items, amounts, the original
    file's reference and URL, the source, duplicates and the edit history."""
    return DocumentResult(document=_document(ctx, await _load(ctx, args.id)))


@capability(
    "documents.update",
    input=UpdateDocument,
    output=DocumentResult,
    permissions=["write_documents"],
    effect="write",
)
async def update(ctx: Context, args: UpdateDocument) -> DocumentResult:
    """Corrects extracted fields of one document by id.

    Send only the fields to change (null clears a field). The id, workspace, file and processing
    fields cannot be changed. Each change is recorded in the document's editHistory.
    """
    changes = args.model_dump(exclude_unset=True, exclude={"id"})
    if not changes:
        raise BadRequest("Invalid request: no fields to update; send at least one field besides id")
    record = await _load(ctx, args.id)
    current = full_view(record, ctx.services.base_url)
    now = utcnow()
    history = [
        {
            "field": name,
            "oldValue": jsonable(current.get(name)),
            "newValue": jsonable(value),
            "editedBy": ctx.user_id,
            "editedAt": now,
            "via": "documents.update",
        }
        for name, value in changes.items()
        if jsonable(current.get(name)) != jsonable(value)
    ]
    if not history:
        return DocumentResult(document=_document(ctx, record))
    changed = {entry["field"]: changes[entry["field"]] for entry in history}
    merchant = changed.get("merchant", current.get("merchant"))
    if "category" in changed and changed["category"] and merchant:
        await ctx.store.category_overrides.remember(
            ctx.require_workspace(), merchant, changed["category"]
        )
    updated = await ctx.store.documents.update_fields(
        ctx.require_workspace(), record, changed, history
    )
    if updated is None:
        raise NotFound(f"Document '{args.id}' not found")
    return DocumentResult(document=_document(ctx, updated))


@capability(
    "documents.delete",
    input=DeleteDocument,
    output=DeletedDocument,
    permissions=["write_documents"],
    effect="destructive",
)
async def delete(ctx: Context, args: DeleteDocument) -> DeletedDocument:
    """Archives a document (soft delete; documents.unarchive restores it).

    Its duplicates are archived with it, and other documents stop listing them as duplicates.
    Deleting an archived document changes nothing.
    """
    workspace_id = ctx.require_workspace()
    record = await _load(ctx, args.id)
    archived_duplicates: list[str] = []
    if not record.get("archived"):
        archived_duplicates = await ctx.store.documents.active_duplicates_of(workspace_id, args.id)
        gone = [args.id, *archived_duplicates]
        await ctx.store.documents.set_archived(workspace_id, gone, archived=True)
        await ctx.store.documents.remove_references(workspace_id, gone)
        record = await _load(ctx, args.id)
    return DeletedDocument(document=_document(ctx, record), archivedDuplicates=archived_duplicates)


@capability(
    "documents.unarchive",
    input=UnarchiveDocument,
    output=DocumentResult,
    permissions=["write_documents"],
    effect="write",
)
async def unarchive(ctx: Context, args: UnarchiveDocument) -> DocumentResult:
    """Restores an archived document to active. Restoring an active document changes nothing."""
    workspace_id = ctx.require_workspace()
    record = await _load(ctx, args.id)
    if record.get("archived"):
        await ctx.store.documents.set_archived(workspace_id, [args.id], archived=False)
        original_id = record.get("duplicateOf")
        if original_id:
            original = await ctx.store.documents.get(workspace_id, original_id)
            if original is not None and not original.get("archived"):
                await ctx.store.documents.link_duplicate(workspace_id, original_id, args.id)
        record = await _load(ctx, args.id)
    return DocumentResult(document=_document(ctx, record))


def _group_key(group_by: str | None) -> Any:
    if group_by is None:
        return None
    if group_by in TIME_FORMATS:
        # Documents without a date form their own null group.
        formatted = {"$dateToString": {"format": TIME_FORMATS[group_by], "date": "$docDate"}}
        return {"$cond": [{"$eq": [{"$ifNull": ["$docDate", None]}, None]}, None, formatted]}
    return f"${group_by}"


def _totals(rows: list[dict[str, Any]]) -> list[CurrencyTotal]:
    rows = sorted(rows, key=lambda row: (row.get("currency") is None, row.get("currency") or ""))
    return [
        CurrencyTotal(currency=row.get("currency"), amount=from_cents(int(row.get("cents") or 0)))
        for row in rows
    ]


@capability(
    "documents.count",
    input=CountDocuments,
    output=DocumentCount,
    permissions=["read_documents"],
    effect="read",
)
async def count(ctx: Context, args: CountDocuments) -> DocumentCount:
    """Counts documents and totals their amounts per currency over ALL matching documents.

    groupBy (merchant, category, docType, currency, paymentMethod, entityId, day, month, year;
    date = day) adds per-group counts and totals. Archived documents are excluded unless
    archived is only or include. Computed inside MongoDB.
    """
    workspace_id = ctx.require_workspace()
    result = await ctx.store.documents.totals(
        workspace_id,
        filters=[compiled_where(args.where, COUNT_FIELDS)],
        archived=args.archived,
        group_key=_group_key(args.groupBy),
        max_groups=MAX_GROUPS,
    )
    overall = [
        {"currency": r["_id"], "count": r["count"], "cents": r["cents"]} for r in result["overall"]
    ]
    rows = result.get("groups") or []
    truncated = len(rows) > MAX_GROUPS
    groups = [
        CountGroup(key=row["_id"], count=row["count"], totals=_totals(row["byCurrency"]))
        for row in rows[:MAX_GROUPS]
    ]
    if args.groupBy in TIME_FORMATS:
        groups.sort(key=lambda group: (group.key is None, group.key or ""))
    return DocumentCount(
        count=sum(row["count"] for row in overall),
        totals=_totals(overall),
        groups=groups,
        groupsTruncated=truncated,
    )


def _exact_insensitive(value: str) -> dict[str, Any]:
    return {"$regex": f"^{re.escape(value)}$", "$options": "i"}


@capability(
    "documents.bulk-edit",
    input=BulkEditDocuments,
    output=BulkEditResult,
    permissions=["write_documents"],
    effect="write",
)
async def bulk_edit(ctx: Context, args: BulkEditDocuments) -> BulkEditResult:
    """Changes merchant and/or category of many active documents at once.

    Documents are chosen by query (all its words must appear), merchant and/or category (both
    case-insensitive, exact). By default (dryRun true) nothing changes: the preview lists the
    matches with their proposed changes and the merchants and categories in use. dryRun false
    applies the changes and records them in each document's editHistory. At most 1,000
    documents change per call.
    """
    workspace_id = ctx.require_workspace()
    changes = args.changes.model_dump(exclude_none=True)
    if not changes:
        raise BadRequest("Invalid request: changes: set merchant and/or category")
    filters: list[dict[str, Any]] = []
    if args.query:
        filters.append(terms_filter(tokenize(args.query), require_all=True))
    if args.merchant:
        filters.append({"merchant": _exact_insensitive(args.merchant)})
    if args.category:
        filters.append({"category": _exact_insensitive(args.category)})
    if not filters:
        raise BadRequest(
            "Invalid request: bulk-edit needs at least one filter: query, merchant or category"
        )
    documents = ctx.store.documents
    matched = await documents.count(workspace_id, filters=filters)
    if matched > BULK_EDIT_LIMIT:
        raise BadRequest(
            f"Invalid request: this edit would change {matched} documents; at most "
            f"{BULK_EDIT_LIMIT:,} per call. Narrow it with query, merchant or category."
        )
    records = await documents.find(
        workspace_id,
        filters=filters,
        limit=BULK_EDIT_LIMIT,
        projection={
            "merchant": 1,
            "category": 1,
            "summary": 1,
            "invoiceId": 1,
            "receiptId": 1,
            "lineItems.description": 1,
        },
    )
    items = []
    updates = []
    now = utcnow()
    for record in records:
        proposed = [
            FieldChange(field=name, oldValue=record.get(name), newValue=value)
            for name, value in changes.items()
            if record.get(name) != value
        ]
        items.append(
            BulkEditItem(
                id=record["_id"],
                merchant=record.get("merchant"),
                category=record.get("category"),
                proposedChanges=proposed,
            )
        )
        if proposed:
            history = [
                {
                    "field": c.field,
                    "oldValue": c.oldValue,
                    "newValue": c.newValue,
                    "editedBy": ctx.user_id,
                    "editedAt": now,
                    "via": "documents.bulk-edit",
                }
                for c in proposed
            ]
            updates.append((record, {c.field: c.newValue for c in proposed}, history))
    if args.dryRun:
        return BulkEditResult(
            dryRun=True,
            matched=matched,
            documents=items[:BULK_PREVIEW_ITEMS],
            merchants=await documents.distinct_values(workspace_id, "merchant"),
            categories=await documents.distinct_values(workspace_id, "category"),
        )
    modified = await documents.bulk_update(workspace_id, updates)
    if "category" in changes:
        # A category given to a merchant's documents steers that merchant's future documents.
        merchants = {record.get("merchant") for record, _, _ in updates}
        for merchant in sorted(m for m in merchants if isinstance(m, str)):
            await ctx.store.category_overrides.remember(workspace_id, merchant, changes["category"])
    changed = [item for item in items if item.proposedChanges]
    return BulkEditResult(
        dryRun=False, matched=matched, modified=modified, documents=changed[:BULK_PREVIEW_ITEMS]
    )


@capability(
    "documents.inspect",
    input=InspectDocument,
    output=InspectionReport,
    permissions=["read_documents"],
    effect="read",
    cost=1,  # OCR of the original: one at a time per key, one per GraphQL request
)
async def inspect(ctx: Context, args: InspectDocument) -> InspectionReport:
    """Reads the original image or PDF again (text layer or OCR; PDFs: the first maxPages pages)
    and compares what is visible with the stored fields: per field the stored value, the visible
    value, whether they match, and a note. Use it to check an extraction before correcting it
    with documents.update."""
    return await inspect_document(ctx, args)
