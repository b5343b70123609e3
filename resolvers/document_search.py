"""documents.search: filter mode (keyset pages) and search mode (ranked, offset pages)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engines.ranking.diversity import jaccard, mmr
from engines.ranking.lexical import rank
from engines.text import tokenize
from persistence.document_fields import SEARCH_FIELDS
from persistence.documents import terms_filter
from persistence.pagination import after
from persistence.where import WhereError, compile_where
from resolvers import cursors
from resolvers.context import Context
from resolvers.document_views import full_view, projected_fields, projected_view, projection_for
from resolvers.errors import BadRequest
from schema.documents import Document, DocumentPage, SearchDocuments

# Stored path of each sortable field (money sorts by its integer cents).
SORT_PATHS = {"id": "_id"}
# Search mode ranks at most this many of the newest matching candidates.
MAX_CANDIDATES = 2000
RANK_FIELDS = ("merchant", "summary", "category", "invoiceId", "receiptId")
EXPORT_FILTERS: dict[str, dict[str, Any]] = {
    "all": {},
    "exported": {"exportStatus": "exported"},
    "not-exported": {"exportStatus": {"$ne": "exported"}},
}


def compiled_where(args_where: Any, fields: dict[str, Any]) -> dict[str, Any]:
    try:
        return compile_where(args_where, fields)
    except WhereError as exc:
        raise BadRequest(f"Invalid request: {exc}") from None


def _query_print(args: SearchDocuments, ranked: bool) -> str:
    return cursors.fingerprint(
        {
            "where": args.where.model_dump() if args.where else None,
            "archived": args.archived,
            "exportStatus": args.exportStatus,
            "sortBy": None if ranked else args.sortBy,
            "sortOrder": None if ranked else args.sortOrder,
            "query": args.query if ranked else None,
            "searchType": args.searchType if ranked else None,
        }
    )


@dataclass(frozen=True)
class PreparedSearch:
    """A validated documents.search call: compiled filters, projection and cursor state."""

    ctx: Context
    workspace_id: str
    args: SearchDocuments
    filters: list[dict[str, Any]]
    fields: list[str] | None  # None: complete output
    state: dict[str, Any]  # decoded cursor, empty on the first page
    query_print: str


async def search_documents(ctx: Context, args: SearchDocuments) -> DocumentPage:
    workspace_id = ctx.require_workspace()
    filters = [compiled_where(args.where, SEARCH_FIELDS), EXPORT_FILTERS[args.exportStatus]]
    fields = None if args.outputMode == "complete" else projected_fields(args.requiredFields)
    ranked = args.useSearch and bool(args.query and args.query.strip())
    query_print = _query_print(args, ranked)
    keyring = ctx.services.keyring
    state = cursors.decode(args.cursor, query_print, keyring) if args.cursor else {}
    search = PreparedSearch(ctx, workspace_id, args, filters, fields, state, query_print)
    return await (_ranked_page(search) if ranked else _filtered_page(search))


def _render(
    ctx: Context, records: list[dict[str, Any]], fields: list[str] | None
) -> list[Document]:
    base = ctx.services.base_url
    if fields is None:
        return [Document.model_validate(full_view(r, base)) for r in records]
    return [Document.model_validate(projected_view(r, fields, base)) for r in records]


def _projection(fields: list[str] | None, sort_path: str) -> dict[str, int] | None:
    if fields is None:
        return {"searchTerms": 0, "workspaceId": 0}
    projection = projection_for(fields)
    projection[sort_path] = 1
    return projection


async def _filtered_page(search: PreparedSearch) -> DocumentPage:
    filters = search.filters
    path = SORT_PATHS.get(search.args.sortBy, search.args.sortBy)
    order = search.args.sortOrder
    if search.state:
        if "id" not in search.state:
            raise BadRequest("cursor: not a cursor returned by this capability")
        filters = [*filters, after(path, order, search.state.get("v"), search.state["id"])]
    sort = [(path, order)] if path == "_id" else [(path, order), ("_id", order)]
    records = await search.ctx.store.documents.find(
        search.workspace_id,
        filters=filters,
        archived=search.args.archived,
        sort=sort,
        limit=search.args.limit + 1,
        projection=_projection(search.fields, path),
    )
    next_cursor = None
    if len(records) > search.args.limit:
        records = records[: search.args.limit]
        last = records[-1]
        next_cursor = cursors.encode(
            {"v": _sort_value(last, path), "id": last["_id"]},
            search.query_print,
            search.ctx.services.keyring,
        )
    return DocumentPage(
        documents=_render(search.ctx, records, search.fields), nextCursor=next_cursor
    )


def _sort_value(record: dict[str, Any], path: str) -> Any:
    value: Any = record
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


async def _ranked_page(search: PreparedSearch) -> DocumentPage:
    tokens = tokenize(search.args.query)
    offset = search.state.get("o", 0)
    if not isinstance(offset, int) or offset < 0:
        raise BadRequest("cursor: not a cursor returned by this capability")
    candidates = await search.ctx.store.documents.find(
        search.workspace_id,
        filters=[*search.filters, terms_filter(tokens, require_all=False)],
        archived=search.args.archived,
        limit=MAX_CANDIDATES,
        projection={
            **{name: 1 for name in RANK_FIELDS},
            "lineItems.description": 1,
            "searchTerms": 1,
        },
    )
    texts = [
        {
            **{name: c.get(name) for name in RANK_FIELDS},
            "lineItems": " ".join(
                item.get("description") or "" for item in c.get("lineItems") or []
            ),
        }
        for c in candidates
    ]
    scored = rank(search.args.query or "", texts)
    order = [item.index for item in scored]
    if search.args.searchType == "mmr":
        term_sets = [set(candidates[i].get("searchTerms") or []) for i in order]
        picked = mmr(
            [item.score for item in scored],
            lambda a, b: jaccard(term_sets[a], term_sets[b]),
            k=min(len(order), offset + search.args.limit),
        )
        first = [order[i] for i in picked]
        chosen = set(first)  # once: the rest keeps its rank order after the diverse head
        order = first + [i for i in order if i not in chosen]
    page_ids = [candidates[i]["_id"] for i in order[offset : offset + search.args.limit]]
    projection = _projection(search.fields, "_id")
    records = {
        r["_id"]: r
        for r in await search.ctx.store.documents.get_many(
            search.workspace_id, page_ids, projection
        )
    }
    ordered = [records[i] for i in page_ids if i in records]
    more = offset + search.args.limit < len(order)
    next_cursor = (
        cursors.encode(
            {"o": offset + search.args.limit}, search.query_print, search.ctx.services.keyring
        )
        if more
        else None
    )
    return DocumentPage(
        documents=_render(search.ctx, ordered, search.fields), nextCursor=next_cursor
    )
