"""Tagging documents: the names people give checked against the workspace's tags (tags.*),
and documents.tag, which puts tags on many documents or takes them off, by id."""

from __future__ import annotations

from collections.abc import Iterable

from persistence.documents import FieldUpdate
from persistence.ids import utcnow
from persistence.tags import name_key
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest
from resolvers.services.documents.document_edits import edit_entries
from resolvers.services.rules.rule_runner import queue_update_rules
from schema.tags import MAX_TAGS_PER_DOCUMENT, TagDocuments, TaggedDocuments


async def known_tags(ctx: Context, names: Iterable[str], field: str) -> list[str]:
    """``names`` as the workspace spells its tags, in order and without repeats; a 400 naming
    ``field`` and the first name that is no tag of the workspace."""
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return []
    keys = [name_key(name) for name in wanted]
    found = await ctx.store.tags.by_keys(ctx.require_workspace(), keys)
    for name, key in zip(wanted, keys, strict=True):
        if key not in found:
            raise BadRequest(
                f"Invalid request: {field}: '{name}' is not a tag of this workspace; "
                "create it with tags.create (tags.list lists them)"
            )
    return list(dict.fromkeys(found[key]["name"] for key in keys))


VIA = "documents.tag"


async def tag_documents(ctx: Context, args: TagDocuments) -> TaggedDocuments:
    if not args.add and not args.remove:
        raise BadRequest("Invalid request: add: name at least one tag to add or remove")
    add = await known_tags(ctx, args.add, "add")
    # A tag to take off need not exist any more: a name left on documents is removable.
    remove = list(dict.fromkeys(args.remove))
    both = {name.casefold() for name in add} & {name.casefold() for name in remove}
    if both:
        raise BadRequest(f"Invalid request: remove: '{sorted(both)[0]}' is also in add")
    workspace_id = ctx.require_workspace()
    ids = list(dict.fromkeys(args.ids))
    loaded = await ctx.store.documents.reads.loaded_many(workspace_id, ids, ["tags", "archived"])
    found = {one.id for one in loaded}
    taken_off = {name.casefold() for name in remove}
    now, updates = utcnow(), []
    for one in loaded:
        document = one.document
        before = list(document.get("tags") or [])
        after = [name for name in before if name.casefold() not in taken_off]
        after += [name for name in add if name not in after]
        if len(after) > MAX_TAGS_PER_DOCUMENT:
            raise BadRequest(
                f"Invalid request: add: document '{one.id}' would carry {len(after)} "
                f"tags; at most {MAX_TAGS_PER_DOCUMENT}"
            )
        edits = edit_entries({"tags": before}, {"tags": after}, by=ctx.user_id, via=VIA, at=now)
        if edits and not document.get("archived"):
            updates.append(FieldUpdate(one, {"tags": after}, edits))
    modified = await ctx.store.documents.bulk.update(workspace_id, updates) if updates else 0
    if updates:
        changed = [update.loaded.id for update in updates]
        await queue_update_rules(ctx.services, workspace_id, changed, ctx.request_id)
    return TaggedDocuments(
        matched=len(found), modified=modified, missing=[i for i in ids if i not in found]
    )
