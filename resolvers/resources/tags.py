"""Tags: names a workspace files its documents under (Paperless-ngx's tags), with a colour.

A document carries its tags by name (``documents.update``'s ``tags``, ``documents.tag`` for many
at once), and the where clause tests them (``tags``: eq, in, all, nin, exists). A name is unique
in the workspace whatever its case; a document is given the tag's own spelling, so "travel" and
"Travel" are one tag. Renaming a tag renames it on every document, deleting it takes it off them.
"""

from __future__ import annotations

import hashlib
from typing import Any

from persistence.tags import TagTaken, name_key
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest, Conflict, NotFound
from resolvers.framework.registry import MEMBERS, capability
from schema.tags import (
    CreateTag,
    DeletedTag,
    ListTags,
    Tag,
    TagList,
    TagRef,
    TagResult,
    UpdateTag,
)

# A workspace's tags are read whole by tags.list and by every check of names: bounded.
MAX_TAGS = 500
# Colours a new tag gets when none is given, chosen by its name: distinct at a glance, and
# each readable with white or black text at WCAG AA.
PALETTE = (
    "#1f6feb", "#2da44e", "#bf3989", "#9a6700", "#cf222e", "#8250df", "#0a7a7a", "#57606a",
)  # fmt: skip


def default_colour(name: str) -> str:
    digest = hashlib.sha256(name_key(name).encode()).digest()
    return PALETTE[digest[0] % len(PALETTE)]


def tag_of(record: dict[str, Any], count: int = 0) -> Tag:
    return Tag(id=record["_id"], name=record["name"], colour=record["colour"], documentCount=count)


async def _load(ctx: Context, tag_id: str) -> dict[str, Any]:
    found = await ctx.store.tags.get(ctx.require_workspace(), tag_id)
    if found is None:
        raise NotFound(f"Tag '{tag_id}' not found")
    return found


@capability("tags.list", input=ListTags, output=TagList, permissions=["read_documents"],
            effect="read")  # fmt: skip
async def list_tags(ctx: Context, args: ListTags) -> TagList:
    """The workspace's tags by name, each with its colour and how many active documents carry
    it."""
    workspace_id = ctx.require_workspace()
    records = await ctx.store.tags.list(workspace_id)
    counts = await ctx.store.documents.aggregates.tag_counts(workspace_id) if records else {}
    return TagList(tags=[tag_of(record, counts.get(record["name"], 0)) for record in records])


@capability("tags.create", input=CreateTag, output=TagResult, permissions=["write_documents"],
            effect="write", roles=MEMBERS)  # fmt: skip
async def create_tag(ctx: Context, args: CreateTag) -> TagResult:
    """Creates a tag (a name unique in the workspace whatever its case, and a #RRGGBB colour;
    one is chosen from the name when none is given). At most 500 tags per workspace."""
    workspace_id = ctx.require_workspace()
    if await ctx.store.tags.count(workspace_id) >= MAX_TAGS:
        raise BadRequest(f"Invalid request: a workspace has at most {MAX_TAGS} tags")
    colour = (args.colour or default_colour(args.name)).lower()
    try:
        record = await ctx.store.tags.create(workspace_id, args.name, colour)
    except TagTaken:
        raise Conflict(f"A tag named '{args.name}' already exists in this workspace") from None
    return TagResult(tag=tag_of(record))


@capability("tags.update", input=UpdateTag, output=TagResult, permissions=["write_documents"],
            effect="write", roles=MEMBERS)  # fmt: skip
async def update_tag(ctx: Context, args: UpdateTag) -> TagResult:
    """Renames a tag and/or changes its colour; a new name is written on every document that
    carries the tag (archived ones too)."""
    changes = args.model_dump(exclude_unset=True, exclude={"id"})
    if not changes or any(value is None for value in changes.values()):
        raise BadRequest("Invalid request: send name and/or colour (neither can be null)")
    workspace_id = ctx.require_workspace()
    before = await _load(ctx, args.id)
    if "colour" in changes:
        changes["colour"] = changes["colour"].lower()
    try:
        after = await ctx.store.tags.update(workspace_id, args.id, changes)
    except TagTaken:
        raise Conflict(f"A tag named '{args.name}' already exists in this workspace") from None
    if after is None:
        raise NotFound(f"Tag '{args.id}' not found")
    renamed = 0
    if after["name"] != before["name"]:
        renamed = await ctx.store.documents.bulk.rename_tag(
            workspace_id, before["name"], after["name"]
        )
    counts = await ctx.store.documents.aggregates.tag_counts(workspace_id)
    return TagResult(tag=tag_of(after, counts.get(after["name"], 0)), documentsChanged=renamed)


@capability("tags.delete", input=TagRef, output=DeletedTag, permissions=["write_documents"],
            effect="destructive", roles=MEMBERS)  # fmt: skip
async def delete_tag(ctx: Context, args: TagRef) -> DeletedTag:
    """Deletes a tag and takes it off every document that carries it (the documents stay)."""
    workspace_id = ctx.require_workspace()
    record = await _load(ctx, args.id)
    # The documents first: a failure leaves the tag listed, so deleting it again finishes.
    changed = await ctx.store.documents.bulk.rename_tag(workspace_id, record["name"], None)
    await ctx.store.tags.delete(workspace_id, args.id)
    return DeletedTag(id=args.id, deleted=True, documentsChanged=changed)
