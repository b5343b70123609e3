"""The documents as a Relay connection (the GraphQL face's ``documentsConnection``).

Keyset pages over the same query, compiler and store reads as documents.search's filter mode,
in both directions: ``first``/``after`` read forward in the requested order, ``last``/``before``
read the reverse order from the cursor and turn the page around. Every edge carries a cursor
(the signed sort value and id, ``resolvers.framework.cursors``) bound to the query and the
workspace, so a cursor of another filter, order or workspace is refused, never reinterpreted.
``totalCount`` is read only when asked for, in parallel with the page, by documents.count's
path (the rollups when they cover the filter).

With ``search`` the page is documents.search's search mode instead: the documents matching the
filter ranked by their words and meaning (``rank_documents``), paged forward only; each edge's
cursor holds its rank, and ``totalCount`` is how many candidates matched (known from ranking).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from domain.where import WhereClause
from persistence.documents import SEARCH_FIELDS, DocumentQuery, NotAPageKey
from persistence.where import WhereError, compile_where
from resolvers.framework import cursors
from resolvers.framework.connections import Relay, page_size
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest, store_errors
from resolvers.resources.documents.search import rank_documents, render_documents
from schema.connections import DocumentConnection, DocumentEdge, PageInfo
from schema.documents import SortField


@dataclass(frozen=True)
class ConnectionRequest:
    """One connection page: the filter as a where-clause, one ordering key, the Relay
    arguments, and what to read."""

    where: WhereClause | None = None
    sort_by: SortField = "docDate"
    order: int = -1
    first: int | None = None
    after: str | None = None
    last: int | None = None
    before: str | None = None
    with_total: bool = False
    fields: list[str] | None = None  # API fields of each node (None: all)
    # Names a where-clause location as the caller wrote it (the typed filter's path).
    locate: Callable[[str], str] = str
    search: str | None = None  # ranked search's words (None or blank: ordered by sort_by)


async def _count(ctx: Context, workspace_id: str, query: DocumentQuery) -> int:
    """How many documents ``query`` matches, as documents.count counts them: from the rollups
    when they cover the filter, else one aggregation with the aggregates' time limit."""
    totals = await ctx.store.documents.totals.of(workspace_id, query)
    return sum(total.count for total in totals.overall)


async def document_connection(ctx: Context, request: ConnectionRequest) -> DocumentConnection:
    """One page of the workspace's documents matching ``request.where``."""
    workspace_id = ctx.require_workspace()
    size, forward = page_size(Relay(request.first, request.after, request.last, request.before))
    try:
        compile_where(request.where, SEARCH_FIELDS)
    except WhereError as error:
        raise BadRequest(
            f"Invalid request: {request.locate(error.location)}: {error.reason}"
        ) from None
    text = (request.search or "").strip()
    query_print = cursors.fingerprint(
        {
            "list": "documents",
            "workspace": workspace_id,
            "where": request.where.model_dump() if request.where else None,
            "sortBy": None if text else request.sort_by,
            "order": None if text else request.order,
            "search": text or None,
        }
    )
    if text:
        if not forward:
            raise BadRequest(
                "Invalid request: last/before: a search is paged forward only (first/after)"
            )
        return await _ranked(ctx, request, text, size, query_print)
    keyring = ctx.services.keyring
    order = request.order if forward else -request.order
    query = DocumentQuery(where=request.where)
    cursor = request.after if forward else request.before
    key = cursors.decode(cursor, query_print, keyring) if cursor is not None else None
    try:
        read = ctx.store.documents.pages.page(
            workspace_id,
            query,
            sort_by=request.sort_by,
            order=order,
            limit=size,
            after=key,
            fields=request.fields,
        )
    except NotAPageKey:
        raise cursors.not_a_cursor() from None
    ctx.services.api_calls.count(workspace_id)  # metered like one documents.search call
    with store_errors():
        if request.with_total:
            page, total = await asyncio.gather(read, _count(ctx, workspace_id, query))
        else:
            page, total = await read, None
        if not forward:
            page = page.reversed()
        shown = dataclasses.replace(
            ctx, selected_fields=frozenset(request.fields) if request.fields else None
        )
        documents = await render_documents(shown, page.documents, request.fields)
    edges = [
        DocumentEdge(cursor=cursors.encode(dict(row_key), query_print, keyring), node=document)
        for row_key, document in zip(page.keys, documents, strict=True)
    ]
    more = page.more
    return DocumentConnection(
        totalCount=total,
        pageInfo=PageInfo(
            hasNextPage=more if forward else request.before is not None,
            hasPreviousPage=request.after is not None if forward else more,
            startCursor=edges[0].cursor if edges else None,
            endCursor=edges[-1].cursor if edges else None,
        ),
        edges=edges,
        nodes=documents,
    )


async def _ranked(
    ctx: Context, request: ConnectionRequest, text: str, size: int, query_print: str
) -> DocumentConnection:
    """A page of the documents matching the filter, best first for ``text``."""
    workspace_id = ctx.require_workspace()
    keyring = ctx.services.keyring
    offset = 0
    if request.after is not None:
        state = cursors.decode(request.after, query_print, keyring)
        offset = cursors.offset_of(state, default=None)
    ctx.services.api_calls.count(workspace_id)  # metered like one documents.search call
    with store_errors():
        ranked = await rank_documents(
            ctx, workspace_id, DocumentQuery(where=request.where), text, offset + size
        )
        page_ids = ranked.ids[offset : offset + size]
        found = {
            d["id"]: d
            for d in await ctx.store.documents.reads.documents(
                workspace_id, page_ids, request.fields
            )
        }
        ordered = [found[i] for i in page_ids if i in found]
        shown = dataclasses.replace(
            ctx, selected_fields=frozenset(request.fields) if request.fields else None
        )
        documents = await render_documents(shown, ordered, request.fields)
    edges = [
        DocumentEdge(cursor=cursors.encode_offset(offset + n + 1, query_print, keyring), node=doc)
        for n, doc in enumerate(documents)
    ]
    return DocumentConnection(
        totalCount=ranked.matched if request.with_total else None,
        pageInfo=PageInfo(
            hasNextPage=offset + size < ranked.matched,
            hasPreviousPage=offset > 0,
            startCursor=edges[0].cursor if edges else None,
            endCursor=edges[-1].cursor if edges else None,
        ),
        edges=edges,
        nodes=documents,
    )
