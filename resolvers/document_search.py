"""documents.search: filter mode (keyset pages) and search mode (ranked, offset pages)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from engines.ranking.diversity import jaccard, mmr
from engines.ranking.lexical import top_ranked
from persistence.document_query import DocumentQuery, Keyset
from persistence.document_records import StoredDocument, searchable_texts, stored_path
from resolvers import cursors
from resolvers.context import Context
from resolvers.document_views import complete_documents, projected_documents, projected_fields
from resolvers.errors import BadRequest
from schema.documents import Document, DocumentPage, SearchDocuments

# Search mode ranks at most this many of the newest matching candidates.
MAX_CANDIDATES = 2000
# Search mode with mmr diversifies among this many times the documents up to the page's end.
MMR_POOL = 4


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
    """A validated documents.search call: its selection, projection and cursor state."""

    ctx: Context
    workspace_id: str
    args: SearchDocuments
    query: DocumentQuery
    fields: list[str] | None  # None: complete output
    state: dict[str, Any]  # decoded cursor, empty on the first page
    query_print: str


async def search_documents(ctx: Context, args: SearchDocuments) -> DocumentPage:
    workspace_id = ctx.require_workspace()
    query = DocumentQuery(where=args.where, archived=args.archived, export_status=args.exportStatus)
    fields = None if args.outputMode == "complete" else projected_fields(args.requiredFields)
    ranked = args.useSearch and bool(args.query and args.query.strip())
    query_print = _query_print(args, ranked)
    keyring = ctx.services.keyring
    state = cursors.decode(args.cursor, query_print, keyring) if args.cursor else {}
    search = PreparedSearch(ctx, workspace_id, args, query, fields, state, query_print)
    return await (_ranked_page(search) if ranked else _filtered_page(search))


async def _render(
    ctx: Context, records: list[StoredDocument], fields: list[str] | None
) -> list[Document]:
    if fields is None:
        return await complete_documents(ctx, records)
    return projected_documents(ctx, records, fields)


async def _filtered_page(search: PreparedSearch) -> DocumentPage:
    query = search.query
    path = stored_path(search.args.sortBy)
    order = search.args.sortOrder
    if search.state:
        if "id" not in search.state:
            raise BadRequest("cursor: not a cursor returned by this capability")
        keyset = Keyset(path, order, search.state.get("v"), search.state["id"])
        query = dataclasses.replace(query, after=keyset)
    records = await search.ctx.store.documents.find(
        search.workspace_id,
        query,
        sort_by=search.args.sortBy,
        order=order,
        limit=search.args.limit + 1,
        fields=search.fields,
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
        documents=await _render(search.ctx, records, search.fields), nextCursor=next_cursor
    )


def _sort_value(record: StoredDocument, path: str) -> Any:
    value: Any = record
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


async def _ranked_page(search: PreparedSearch) -> DocumentPage:
    offset = search.state.get("o", 0)
    if not isinstance(offset, int) or offset < 0:
        raise BadRequest("cursor: not a cursor returned by this capability")
    candidates = await search.ctx.store.documents.find_searchable(
        search.workspace_id,
        dataclasses.replace(search.query, words=search.args.query, words_match="any"),
        limit=MAX_CANDIDATES,
    )
    wanted = offset + search.args.limit
    # MMR picks the page's diverse head from a pool of the best, not from every candidate.
    pool = wanted * MMR_POOL if search.args.searchType == "mmr" else wanted
    scored, matched = top_ranked(
        search.args.query or "", [searchable_texts(c) for c in candidates], pool
    )
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
    records = {
        r["_id"]: r
        for r in await search.ctx.store.documents.get_many(
            search.workspace_id, page_ids, search.fields
        )
    }
    ordered = [records[i] for i in page_ids if i in records]
    more = wanted < matched
    next_cursor = (
        cursors.encode(
            {"o": offset + search.args.limit}, search.query_print, search.ctx.services.keyring
        )
        if more
        else None
    )
    return DocumentPage(
        documents=await _render(search.ctx, ordered, search.fields), nextCursor=next_cursor
    )
