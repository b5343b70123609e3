"""Saved views (Paperless-ngx's saved views): a named list of documents — documents.search's
where clause, words, archive filter, sort and the columns shown — kept by a person for
themselves or shared with the workspace.

A view is validated as documents.search would run it when it is saved (a clause that does not
compile is a 400 naming its condition), so a saved view always runs. ``views.list`` with
``counts`` says how many documents each lists now (the dashboard's sidebar). Its owner changes
and deletes a view; an owner or admin may also change or delete a shared one.
"""

from __future__ import annotations

import asyncio
from typing import Any

from domain.where import WhereClause
from engines.text import fold
from persistence.documents import DocumentQuery
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest, Forbidden, NotFound
from resolvers.framework.registry import MANAGERS, MEMBERS, capability
from schema.views import (
    MAX_VIEWS_PER_PERSON,
    CreateView,
    DeletedView,
    ListViews,
    UpdateView,
    View,
    ViewList,
    ViewRef,
    ViewResult,
)

Stored = dict[str, Any]
# A workspace's shared views have no cap of their own (50 a person): one call counts at most
# MAX_COUNTED of the views it lists (the rest answer null), COUNTS_AT_ONCE at a time, so its
# cost is bounded whatever the workspace's size.
MAX_COUNTED = 50
COUNTS_AT_ONCE = 4
# Fields of a view that a change may set to null (the others are required).
NULLABLE = ("where", "query")


def _query(view: Stored) -> DocumentQuery:
    """The view's documents as a count reads them: its clause and archive filter, and (a view
    with words) the documents that carry any of its words."""
    return DocumentQuery(
        where=_where(view),
        archived=view.get("archived", "exclude"),
        words=view.get("query"),
        words_match="any",
    )


def _where(view: Stored) -> WhereClause | None:
    stored = view.get("where")
    return None if stored is None else WhereClause.model_validate(stored)


def _may_edit(ctx: Context, view: Stored) -> bool:
    return bool(view["ownerId"] == ctx.user_id or (view.get("shared") and ctx.role in MANAGERS))


def view_of(ctx: Context, view: Stored, count: int | None = None) -> View:
    return View(
        id=view["_id"],
        name=view["name"],
        owner=view["ownerId"],
        shared=bool(view.get("shared")),
        where=_where(view),
        query=view.get("query"),
        archived=view.get("archived", "exclude"),
        sortBy=view.get("sortBy", "docDate"),
        sortOrder=view.get("sortOrder", -1),
        columns=view["columns"],
        count=count,
        viewerCanEdit=_may_edit(ctx, view),
        createdAt=view["createdAt"],
        updatedAt=view["updatedAt"],
    )


def _stored(fields: dict[str, Any]) -> dict[str, Any]:
    """A view's fields (JSON values: the where clause is read back through its model) with
    the name's sort key."""
    out = dict(fields)
    if "name" in out:
        out["nameKey"] = fold(out["name"])
    return out


async def _editable(ctx: Context, view_id: str) -> Stored:
    view = await ctx.store.views.get(ctx.require_workspace(), ctx.user_id, view_id)
    if view is None:
        raise NotFound(f"View '{view_id}' not found")
    if not _may_edit(ctx, view):
        raise Forbidden(
            "Only the owner of a view (or an owner or admin, for a shared view) may change it"
        )
    return view


@capability("views.list", input=ListViews, output=ViewList, permissions=["read_documents"],
            effect="read")  # fmt: skip
async def list_views(ctx: Context, args: ListViews) -> ViewList:
    """The caller's saved views and the workspace's shared ones, by name; with counts, how many
    documents each lists now (the first 50 listed; null beyond)."""
    workspace_id = ctx.require_workspace()
    views = await ctx.store.views.visible(workspace_id, ctx.user_id)
    counts: list[int | None] = [None] * len(views)
    if args.counts and views:
        at_once = asyncio.Semaphore(COUNTS_AT_ONCE)

        async def count(view: Stored) -> int:
            async with at_once:
                return await ctx.store.documents.reads.count(workspace_id, _query(view))

        counted = await asyncio.gather(*(count(view) for view in views[:MAX_COUNTED]))
        counts[: len(counted)] = counted
    return ViewList(views=[view_of(ctx, v, n) for v, n in zip(views, counts, strict=True)])


@capability("views.get", input=ViewRef, output=ViewResult, permissions=["read_documents"],
            effect="read")  # fmt: skip
async def get(ctx: Context, args: ViewRef) -> ViewResult:
    """One saved view the caller can see (theirs, or shared), with how many documents it lists
    now."""
    workspace_id = ctx.require_workspace()
    view = await ctx.store.views.get(workspace_id, ctx.user_id, args.id)
    if view is None:
        raise NotFound(f"View '{args.id}' not found")
    count = await ctx.store.documents.reads.count(workspace_id, _query(view))
    return ViewResult(view=view_of(ctx, view, count))


@capability("views.create", input=CreateView, output=ViewResult,
            permissions=["write_documents"], effect="write", roles=MEMBERS)  # fmt: skip
async def create(ctx: Context, args: CreateView) -> ViewResult:
    """Saves a view: documents.search's where clause, words, archive filter, sort and the
    columns shown, for the caller or shared with the workspace (at most 50 a person)."""
    workspace_id = ctx.require_workspace()
    fields = _stored(args.model_dump(mode="json"))
    _query(fields).parts()  # a clause that does not compile is refused now, naming it
    if await ctx.store.views.owned_count(workspace_id, ctx.user_id) >= MAX_VIEWS_PER_PERSON:
        raise BadRequest(f"Invalid request: a person has at most {MAX_VIEWS_PER_PERSON} views")
    view = await ctx.store.views.create(workspace_id, ctx.user_id, fields)
    return ViewResult(view=view_of(ctx, view))


@capability("views.update", input=UpdateView, output=ViewResult,
            permissions=["write_documents"], effect="write", roles=MEMBERS)  # fmt: skip
async def update(ctx: Context, args: UpdateView) -> ViewResult:
    """Changes a view (only the fields sent; where and query may be null). Its owner may, and
    an owner or admin for a shared view."""
    changes = args.model_dump(mode="json", exclude_unset=True, exclude={"id"})
    if not changes:
        raise BadRequest("Invalid request: send at least one field to change besides id")
    refused = [name for name, value in changes.items() if value is None and name not in NULLABLE]
    if refused:
        raise BadRequest(f"Invalid request: {refused[0]}: cannot be null")
    view = await _editable(ctx, args.id)
    changes = _stored(changes)
    _query({**view, **changes}).parts()
    updated = await ctx.store.views.update(ctx.require_workspace(), args.id, changes)
    if updated is None:
        raise NotFound(f"View '{args.id}' not found")
    return ViewResult(view=view_of(ctx, updated))


@capability("views.delete", input=ViewRef, output=DeletedView, permissions=["write_documents"],
            effect="destructive", roles=MEMBERS)  # fmt: skip
async def delete(ctx: Context, args: ViewRef) -> DeletedView:
    """Deletes a view (the documents stay). Its owner may, and an owner or admin for a shared
    view."""
    await _editable(ctx, args.id)
    await ctx.store.views.delete(ctx.require_workspace(), args.id)
    return DeletedView(id=args.id, deleted=True)
