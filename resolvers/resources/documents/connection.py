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
from typing import Any

from domain.where import WhereClause
from persistence.documents.fields import SEARCH_FIELDS
from persistence.documents.query import DocumentQuery, Keyset
from persistence.documents.records import StoredDocument, stored_path
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


def _sort_value(record: StoredDocument, path: str) -> Any:
    value: Any = record
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


async def _count(ctx: Context, workspace_id: str, query: DocumentQuery) -> int:
    """How many documents ``query`` matches, as documents.count counts them: from the rollups
    when they cover the filter, else one aggregation with the aggregates' time limit."""
    totals = await ctx.store.documents.totals(workspace_id, query)
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
    path = stored_path(request.sort_by)
    order = request.order if forward else -request.order
    base = DocumentQuery(where=request.where)
    query = base
    cursor = request.after if forward else request.before
    if cursor is not None:
        state = cursors.decode(cursor, query_print, keyring)
        if "id" not in state:
            raise BadRequest(cursors.NOT_A_CURSOR)
        query = dataclasses.replace(base, after=Keyset(path, order, state.get("v"), state["id"]))
    ctx.services.api_calls.count(workspace_id)  # metered like one documents.search call
    with store_errors():
        page = ctx.store.documents.find(
            workspace_id,
            query,
            sort_by=request.sort_by,
            order=order,
            limit=size + 1,
            fields=request.fields,
        )
        if request.with_total:
            records, total = await asyncio.gather(page, _count(ctx, workspace_id, base))
        else:
            records, total = await page, None
        more = len(records) > size
        records = records[:size]
        if not forward:
            records.reverse()
        shown = dataclasses.replace(
            ctx, selected_fields=frozenset(request.fields) if request.fields else None
        )
        documents = await render_documents(shown, records, request.fields)
    edges = [
        DocumentEdge(
            cursor=cursors.encode(
                {"v": _sort_value(record, path), "id": record["_id"]}, query_print, keyring
            ),
            node=document,
        )
        for record, document in zip(records, documents, strict=True)
    ]
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
        offset = cursors.decode(request.after, query_print, keyring).get("o", -1)
        if not isinstance(offset, int) or offset < 0:
            raise BadRequest(cursors.NOT_A_CURSOR)
    ctx.services.api_calls.count(workspace_id)  # metered like one documents.search call
    with store_errors():
        ranked = await rank_documents(
            ctx, workspace_id, DocumentQuery(where=request.where), text, offset + size
        )
        page_ids = ranked.ids[offset : offset + size]
        found = {
            r["_id"]: r
            for r in await ctx.store.documents.get_many(workspace_id, page_ids, request.fields)
        }
        records = [found[i] for i in page_ids if i in found]
        shown = dataclasses.replace(
            ctx, selected_fields=frozenset(request.fields) if request.fields else None
        )
        documents = await render_documents(shown, records, request.fields)
    edges = [
        DocumentEdge(cursor=cursors.encode({"o": offset + n + 1}, query_print, keyring), node=doc)
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
