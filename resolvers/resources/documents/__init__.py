"""Capabilities of the documents resource, and the batched reads the GraphQL graph uses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from persistence.documents import (
    COUNT_FIELDS,
    MAX_BUCKETS,
    DocumentQuery,
    Loaded,
    TooManyBuckets,
    fillable,
)
from persistence.documents import CurrencyTotal as StoredTotal
from persistence.documents import PreferredTotal as StoredPreferredTotal
from persistence.ids import utcnow
from persistence.money import from_cents
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest, Conflict, NotFound, store_errors
from resolvers.framework.registry import MEMBERS, ApprovalGate, capability
from resolvers.resources.documents.bulk_edit import bulk_edit_documents, describe_bulk_edit
from resolvers.resources.documents.inspect import inspect_document
from resolvers.resources.documents.search import search_documents
from resolvers.services.documents.document_edits import (
    AMOUNT_FIELDS,
    checked_evidence,
    edit_entries,
    with_summary,
)
from resolvers.services.documents.document_views import (
    complete_document,
    complete_documents,
    full_view,
)
from resolvers.services.documents.preferences import preferred_currency
from resolvers.services.processing.reprocessing import FINISHED, queue_reprocessing
from resolvers.services.rules.rule_runner import queue_update_rules
from resolvers.services.rules.tagging import known_tags, tag_documents
from schema.documents import (
    BulkEditDocuments,
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
    GetDocument,
    InspectDocument,
    InspectionReport,
    PreferredTotal,
    ReviewDocument,
    SearchDocuments,
    UnarchiveDocument,
    UpdateDocument,
)
from schema.reprocess import ReprocessDocuments, ReprocessQueued
from schema.tags import TagDocuments, TaggedDocuments

# The registry collects the capabilities from the module; the GraphQL graph reads
# documents_by_id and document_tallies.
__all__ = [
    "bulk_edit",
    "count",
    "delete",
    "document_tallies",
    "documents_by_id",
    "get",
    "inspect",
    "reprocess",
    "review",
    "search",
    "tag",
    "unarchive",
    "update",
]

MAX_GROUPS = 500


@capability(
    "documents.search",
    input=SearchDocuments,
    output=DocumentPage,
    permissions=["read_documents"],
    effect="read",
)
async def search(ctx: Context, args: SearchDocuments) -> DocumentPage:
    """Search, filter and retrieve documents. Filter mode (useSearch false, or no query): the
    documents matching where, sorted by sortBy, in pages of limit with nextCursor. Search mode
    (useSearch true with a query): the documents matching where, ranked by their words (prefixes
    and one-letter typos count) and their meaning in any language ("coffee" finds a Starbucks
    receipt); searchType mmr also favours variety.
    """
    return await search_documents(ctx, args)


async def _load(ctx: Context, document_id: str) -> Loaded:
    """The document to change (its values, and the record its write compares); 404 if none."""
    loaded = await ctx.store.documents.reads.loaded(ctx.require_workspace(), document_id)
    if loaded is None:
        raise NotFound(f"Document '{document_id}' not found")
    return loaded


async def _shown(ctx: Context, document_id: str) -> dict[str, Any]:
    """The document as the API's values (what a capability shows, and what it decides a
    write by id on); 404 if none."""
    document = await ctx.store.documents.reads.document(ctx.require_workspace(), document_id)
    if document is None:
        raise NotFound(f"Document '{document_id}' not found")
    return document


@capability(
    "documents.get",
    input=GetDocument,
    output=DocumentResult,
    permissions=["read_documents"],
    effect="read",
)
async def get(ctx: Context, args: GetDocument) -> DocumentResult:
    """One document with every extracted field, line items, amounts, the original file's reference
    and URL, the source, duplicates and the edit history.
    """
    return DocumentResult(document=await complete_document(ctx, await _shown(ctx, args.id)))


@capability(
    "documents.update",
    input=UpdateDocument,
    output=DocumentResult,
    permissions=["write_documents"],
    effect="write",
    roles=MEMBERS,
)
async def update(ctx: Context, args: UpdateDocument) -> DocumentResult:
    """Corrects extracted fields of one document by id. Send only the fields to change (null clears
    a field); id, workspace, file and processing fields cannot change. Each change is recorded
    in the document's editHistory. Amounts that do not add up (lines, tax lines, total) are kept
    as sent and warned about in evidence.
    """
    changes = args.model_dump(exclude_unset=True, exclude={"id"})
    if not changes:
        raise BadRequest("Invalid request: no fields to update; send at least one field besides id")
    workspace_id = ctx.require_workspace()
    if "tags" in changes:  # the workspace's spelling; null takes every tag off
        changes["tags"] = await known_tags(ctx, changes["tags"] or [], "tags")
    loaded = await _load(ctx, args.id)
    document = loaded.document
    current = full_view(document, ctx.services.base_url)
    changes = with_summary(current, changes)
    edits = edit_entries(current, changes, by=ctx.user_id, via="documents.update", at=utcnow())
    if not edits:
        return DocumentResult(document=await complete_document(ctx, document))
    changed = {entry["field"]: changes[entry["field"]] for entry in edits}
    if document.get("evidence") and any(e.get("field") in changed for e in document["evidence"]):
        # A person's correction replaces what extraction read: certain, nothing to point at
        # (a cleared field has no evidence left).
        changed["evidence"] = [
            {"field": e["field"], "confidence": 1.0, "source": "edited"}
            if e.get("field") in changed
            else e
            for e in document["evidence"]
            if e.get("field") not in changed or changed[e["field"]] is not None
        ]
    if set(changed) & set(AMOUNT_FIELDS):
        before = changed.get("evidence", document.get("evidence") or [])
        after = checked_evidence(before, {**current, **changed}, set(changed))
        if after != before:
            changed["evidence"] = after
    merchant = changed.get("merchant", current.get("merchant"))
    if "category" in changed and changed["category"] and merchant:
        await ctx.store.category_overrides.remember(workspace_id, merchant, changed["category"])
    updated = await ctx.store.documents.writes.update_fields(workspace_id, loaded, changed, edits)
    if updated is None:
        raise NotFound(f"Document '{args.id}' not found")
    await queue_update_rules(ctx.services, workspace_id, [args.id], ctx.request_id)
    return DocumentResult(document=await complete_document(ctx, updated.document))


@capability(
    "documents.reprocess",
    input=ReprocessDocuments,
    output=ReprocessQueued,
    permissions=["write_documents"],
    effect="write",
    roles=MEMBERS,
    cost=1,  # each document is read again (OCR: seconds): one call at a time per key
)
async def reprocess(ctx: Context, args: ReprocessDocuments) -> ReprocessQueued:
    """Reads documents again (at most 50) with the current extraction, in the background. What
    the new reading changes is recorded per field in each document's editHistory (via
    reprocess, with the value before and after). Fields a person corrected keep their value
    unless keepCorrections is false; a field the new reading does not find keeps its value."""
    workspace_id = ctx.require_workspace()
    ids = list(dict.fromkeys(args.ids))
    fields = ("id", "file", "processingStatus")
    found = {
        d["id"]: d for d in await ctx.store.documents.reads.documents(workspace_id, ids, fields)
    }
    ready = [
        i
        for i in ids
        if i in found
        and isinstance(found[i].get("file"), dict)
        and found[i].get("processingStatus") in FINISHED
    ]
    queued = await queue_reprocessing(
        ctx.services, workspace_id, ready, args.keepCorrections, ctx.user_id
    )
    return ReprocessQueued(
        queued=queued,
        missing=[i for i in ids if i not in found],
        notReady=[i for i in ids if i in found and i not in queued],
    )


@capability(
    "documents.tag",
    input=TagDocuments,
    output=TaggedDocuments,
    permissions=["write_documents"],
    effect="write",
    roles=MEMBERS,
)
async def tag(ctx: Context, args: TagDocuments) -> TaggedDocuments:
    """Puts tags on documents and/or takes them off, by id (at most 1,000). Tags to add must
    exist (tags.create); archived documents are left as they are. Each change is recorded in
    the document's editHistory.
    """
    return await tag_documents(ctx, args)


@capability(
    "documents.review",
    input=ReviewDocument,
    output=DocumentResult,
    permissions=["write_documents"],
    effect="write",
    roles=MEMBERS,
)
async def review(ctx: Context, args: ReviewDocument) -> DocumentResult:
    """Accepts a document of the review queue (needsReview true), as it is or with corrections
    (applied by documents.update first). Records reviewedBy and reviewedAt; it needs review
    again only for a new reason. 409 if it needs none.
    """
    workspace_id = ctx.require_workspace()
    loaded = await _load(ctx, args.id)
    if not loaded.document.get("needsReview"):
        raise Conflict(_reviewed_already(loaded.document))
    if args.corrections is not None and args.corrections.model_fields_set:
        fields = args.corrections.model_dump(exclude_unset=True)
        await update(ctx, UpdateDocument.model_validate({"id": args.id, **fields}))
        loaded = await _load(ctx, args.id)
    # Set only while the review fields are still the ones loaded (another review, a new
    # outcome in between: None).
    reviewed = await ctx.store.documents.writes.mark_reviewed(workspace_id, loaded, ctx.user_id)
    if reviewed is None:
        raise Conflict(_reviewed_already((await _load(ctx, args.id)).document))
    return DocumentResult(document=await complete_document(ctx, reviewed.document))


def _reviewed_already(document: Mapping[str, Any]) -> str:
    if document.get("needsReview"):
        return f"Document '{document['id']}' changed while it was reviewed; review it again"
    if document.get("reviewedAt"):
        return (
            f"Document '{document['id']}' needs no review: accepted by "
            f"{document.get('reviewedBy')} at {document.get('reviewedAt')}"
        )
    return f"Document '{document['id']}' needs no review (nothing to check)"


@capability(
    "documents.delete",
    input=DeleteDocument,
    output=DeletedDocument,
    permissions=["write_documents"],
    effect="destructive",
    roles=MEMBERS,
)
async def delete(ctx: Context, args: DeleteDocument) -> DeletedDocument:
    """Archives a document with its duplicates (soft delete; documents.unarchive restores it).
    Deleting an archived document changes nothing.
    """
    workspace_id = ctx.require_workspace()
    document = await _shown(ctx, args.id)
    archived_duplicates: list[str] = []
    if not document.get("archived"):
        archived_duplicates = await ctx.store.documents.reads.active_duplicates_of(
            workspace_id, args.id
        )
        gone = [args.id, *archived_duplicates]
        await ctx.store.documents.writes.set_archived(workspace_id, gone, archived=True)
        await ctx.store.documents.writes.remove_references(workspace_id, gone)
        document = await _shown(ctx, args.id)
    return DeletedDocument(
        document=await complete_document(ctx, document), archivedDuplicates=archived_duplicates
    )


@capability(
    "documents.unarchive",
    input=UnarchiveDocument,
    output=DocumentResult,
    permissions=["write_documents"],
    effect="write",
    roles=MEMBERS,
)
async def unarchive(ctx: Context, args: UnarchiveDocument) -> DocumentResult:
    """Restores an archived document to active. Restoring an active document changes nothing."""
    workspace_id = ctx.require_workspace()
    document = await _shown(ctx, args.id)
    if document.get("archived"):
        await ctx.store.documents.writes.set_archived(workspace_id, [args.id], archived=False)
        original_id = document.get("duplicateOf")
        if original_id:
            original = await ctx.store.documents.reads.document(
                workspace_id, original_id, ["archived"]
            )
            if original is not None and not original.get("archived"):
                await ctx.store.documents.writes.link_duplicate(workspace_id, original_id, args.id)
        document = await _shown(ctx, args.id)
    return DocumentResult(document=await complete_document(ctx, document))


def _totals(totals: list[StoredTotal]) -> list[CurrencyTotal]:
    return [CurrencyTotal(currency=t.currency, amount=from_cents(t.cents)) for t in totals]


def _preferred(total: StoredPreferredTotal | None, currency: str) -> PreferredTotal:
    if total is None:
        return PreferredTotal(currency=currency, amount=from_cents(0), converted=0)
    return PreferredTotal(
        currency=total.currency, amount=from_cents(total.cents), converted=total.converted
    )


@capability(
    "documents.count",
    input=CountDocuments,
    output=DocumentCount,
    permissions=["read_documents"],
    effect="read",
)
async def count(ctx: Context, args: CountDocuments) -> DocumentCount:
    """Counts documents and totals their amounts per currency over ALL matching documents. groupBy
    adds per-group counts and totals. preferredTotal is the total converted to the workspace's
    preferred currency at each document's date. fillGaps: a time series without holes.
    groupsTruncated: only the largest groups are listed.
    """
    workspace_id = ctx.require_workspace()
    if args.fillGaps and not fillable(args.groupBy):
        raise BadRequest(
            "Invalid request: fillGaps: needs groupBy day, week, month or year "
            f"(got {args.groupBy or 'none'})"
        )
    currency = await preferred_currency(ctx.store, workspace_id, ctx.user_id)
    query = DocumentQuery(where=args.where, where_fields=COUNT_FIELDS, archived=args.archived)
    try:
        totals = await ctx.store.documents.totals.of(
            workspace_id,
            query,
            group_by=args.groupBy,
            max_groups=MAX_GROUPS,
            preferred_currency=currency,
            fill_gaps=args.fillGaps,
            max_buckets=MAX_BUCKETS,
        )
    except TooManyBuckets as error:
        raise BadRequest(
            f"Invalid request: fillGaps: {error}; narrow the where clause's docDate range "
            "or group by a longer period"
        ) from error
    return DocumentCount(
        count=sum(total.count for total in totals.overall),
        totals=_totals(totals.overall),
        preferredTotal=_preferred(totals.preferred, currency),
        groups=[
            CountGroup(
                key=group.key,
                count=group.count,
                totals=_totals(group.by_currency),
                preferredTotal=_preferred(group.preferred, currency),
            )
            for group in totals.groups
        ],
        groupsTruncated=totals.truncated,
    )


@capability(
    "documents.bulk-edit",
    input=BulkEditDocuments,
    output=BulkEditResult,
    permissions=["write_documents"],
    effect="write",
    roles=MEMBERS,
    approval=ApprovalGate("Bulk-edit documents", describe=describe_bulk_edit),
)
async def bulk_edit(ctx: Context, args: BulkEditDocuments) -> BulkEditResult:
    """Changes merchant and/or category of many active documents at once, chosen by query (all its
    words), merchant and/or category (case-insensitive, exact). dryRun true (default) previews
    the matches and their changes; dryRun false applies them, recorded in each editHistory. At
    most 1,000 documents per call.
    """
    return await bulk_edit_documents(ctx, args)


@capability(
    "documents.inspect",
    input=InspectDocument,
    output=InspectionReport,
    permissions=["read_documents"],
    effect="read",
    cost=1,  # OCR of the original: one at a time per key, one per GraphQL request
)
async def inspect(ctx: Context, args: InspectDocument) -> InspectionReport:
    """Reads the original again (text layer or OCR; the first maxPages pages of a PDF) and compares
    it with the stored fields: per field the stored and visible values and whether they match.
    Use it to check an extraction before documents.update.
    """
    return await inspect_document(ctx, args)


# -- reads for faces outside invoke() (the GraphQL graph): scoped by ``ctx``, errors mapped ------


async def documents_by_id(ctx: Context, ids: Sequence[str]) -> list[Document]:
    """Complete documents of the caller's workspace with these ids, in no particular order;
    ids of other workspaces or of no document are left out."""
    with store_errors():
        documents = await ctx.store.documents.reads.documents(ctx.require_workspace(), ids)
    return await complete_documents(ctx, documents)


async def document_tallies(contexts: Sequence[Context]) -> list[dict[str, int]]:
    """Active and archived document counts of each context's workspace (one aggregation for
    all of them); every context was authorized for its workspace by the caller."""
    workspace_ids = [ctx.require_workspace() for ctx in contexts]
    if not contexts:
        return []
    with store_errors():
        counts = await contexts[0].store.documents.totals.counts_by_workspace(workspace_ids)
    empty = {"active": 0, "archived": 0}
    return [counts.get(workspace_id, empty) for workspace_id in workspace_ids]
