"""documents.bulk-edit in three steps: select the documents, plan each one's changes, apply.

The preview (dryRun) stops after planning; executing applies the plan and remembers the new
category of each merchant, as documents.update does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from persistence.documents import DocumentQuery, FieldUpdate, Loaded
from persistence.ids import utcnow
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest
from resolvers.services.documents.document_edits import edit_entries, with_summary
from resolvers.services.rules.rule_runner import queue_update_rules
from schema.documents import BulkEditDocuments, BulkEditItem, BulkEditResult, FieldChange

BULK_EDIT_LIMIT = 1000
BULK_PREVIEW_ITEMS = 100
VIA = "documents.bulk-edit"


@dataclass(frozen=True)
class Selection:
    """The documents a bulk edit is about: how many match, and (at most the limit) which."""

    matched: int
    documents: list[Loaded]  # the values to plan with, each handed back to its write


@dataclass(frozen=True)
class Plan:
    """Per matched document what would change, and the updates that change it."""

    items: list[BulkEditItem]
    updates: list[FieldUpdate]


async def bulk_edit_documents(ctx: Context, args: BulkEditDocuments) -> BulkEditResult:
    changes = args.changes.model_dump(exclude_none=True)
    if not changes:
        raise BadRequest("Invalid request: changes: set merchant and/or category")
    selection = await select(ctx, args, changing=list(changes))
    plan = plan_changes(selection.documents, changes, by=ctx.user_id, at=utcnow())
    if args.dryRun:
        documents = ctx.store.documents
        workspace_id = ctx.require_workspace()
        return BulkEditResult(
            dryRun=True,
            matched=selection.matched,
            documents=plan.items[:BULK_PREVIEW_ITEMS],
            merchants=await documents.reads.distinct_values(workspace_id, "merchant"),
            categories=await documents.reads.distinct_values(workspace_id, "category"),
        )
    modified = await apply(ctx, plan, changes.get("category"))
    changed = [item for item in plan.items if item.proposedChanges]
    return BulkEditResult(
        dryRun=False,
        matched=selection.matched,
        modified=modified,
        documents=changed[:BULK_PREVIEW_ITEMS],
    )


def describe_bulk_edit(args: BulkEditDocuments) -> str:
    """What a reviewer reads about a bulk edit waiting for approval."""
    changes = args.changes.model_dump(exclude_none=True)
    filters = {"words": args.query, "merchant": args.merchant, "category": args.category}
    chosen = ", ".join(f"{name} '{value}'" for name, value in filters.items() if value)
    setting = " and ".join(f"{name} to '{value}'" for name, value in changes.items())
    return f"Set {setting or 'nothing'} on the active documents matching {chosen or 'nothing'}"


async def select(ctx: Context, args: BulkEditDocuments, changing: list[str]) -> Selection:
    """The active documents the filters match; 400 without a filter or above the limit."""
    if not (args.query or args.merchant or args.category):
        raise BadRequest(
            "Invalid request: bulk-edit needs at least one filter: query, merchant or category"
        )
    query = DocumentQuery(
        words=args.query, words_match="all", merchant=args.merchant, category=args.category
    )
    workspace_id = ctx.require_workspace()
    matched = await ctx.store.documents.reads.count(workspace_id, query)
    if matched > BULK_EDIT_LIMIT:
        raise BadRequest(
            f"Invalid request: this edit would change {matched} documents; at most "
            f"{BULK_EDIT_LIMIT:,} per call. Narrow it with query, merchant or category."
        )
    documents = await ctx.store.documents.reads.find_for_edit(
        workspace_id, query, changing, limit=BULK_EDIT_LIMIT
    )
    return Selection(matched=matched, documents=documents)


def plan_changes(
    documents: list[Loaded], changes: dict[str, str], *, by: str, at: datetime
) -> Plan:
    """What ``changes`` does to each document (nothing where it already has the values)."""
    items: list[BulkEditItem] = []
    updates: list[FieldUpdate] = []
    for loaded in documents:
        # The edits compare the API's values; ``FieldUpdate`` hands the whole ``Loaded`` back
        # to ``bulk.update``, which computes the change from the record as read.
        current = loaded.document
        changing = with_summary(current, changes)
        edits = edit_entries(current, changing, by=by, via=VIA, at=at)
        items.append(
            BulkEditItem(
                id=loaded.id,
                merchant=current.get("merchant"),
                category=current.get("category"),
                proposedChanges=[
                    FieldChange(field=e["field"], oldValue=e["oldValue"], newValue=e["newValue"])
                    for e in edits
                ],
            )
        )
        if edits:
            updates.append(
                FieldUpdate(loaded, {e["field"]: changing[e["field"]] for e in edits}, edits)
            )
    return Plan(items=items, updates=updates)


async def apply(ctx: Context, plan: Plan, category: str | None) -> int:
    """Write the plan; a new category also steers each merchant's future documents."""
    workspace_id = ctx.require_workspace()
    modified = await ctx.store.documents.bulk.update(workspace_id, plan.updates)
    await queue_update_rules(
        ctx.services, workspace_id, [u.loaded.id for u in plan.updates], ctx.request_id
    )
    if category is not None:
        merchants = {update.loaded.document.get("merchant") for update in plan.updates}
        for merchant in sorted(m for m in merchants if isinstance(m, str)):
            await ctx.store.category_overrides.remember(workspace_id, merchant, category)
    return modified
