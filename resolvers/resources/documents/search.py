"""documents.search: filter mode (keyset pages) and search mode (ranked, offset pages)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from engines.ranking.search_index import SearchIndex, diversify, fused_top
from persistence.documents import DocumentQuery, NotAPageKey, UnsupportedFilter
from resolvers.framework import cursors
from resolvers.framework.context import Context
from resolvers.services.documents import search_indexes
from resolvers.services.documents.document_views import (
    ALL_FIELDS,
    complete_documents,
    projected_documents,
    projected_fields,
    selected_documents,
)
from schema.documents import Document, DocumentPage, SearchDocuments

RankMode = Literal["hybrid", "lexical", "vector"]
# With $vectorSearch: the nearest this many count as near in meaning (at least a page's worth),
# found among this many times as many index candidates.
VECTOR_SEARCH_LIMIT = 200
VECTOR_SEARCH_OVERSAMPLING = 10
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
    fields = _fields_of(ctx, args)
    ranked = args.useSearch and bool(args.query and args.query.strip())
    query_print = _query_print(args, ranked)
    keyring = ctx.services.keyring
    state = cursors.decode(args.cursor, query_print, keyring) if args.cursor else {}
    search = PreparedSearch(ctx, workspace_id, args, query, fields, state, query_print)
    return await (_ranked_page(search) if ranked else _filtered_page(search))


def _fields_of(ctx: Context, args: SearchDocuments) -> list[str] | None:
    """The fields read and returned of each document (None: all). A face that shows only some
    (GraphQL: the selection) names them, whatever outputMode says; else outputMode decides."""
    if ctx.selected_fields is not None:
        return ["id", *sorted(ctx.selected_fields.intersection(ALL_FIELDS) - {"id"})]
    return None if args.outputMode == "complete" else projected_fields(args.requiredFields)


async def render_documents(
    ctx: Context, documents: Sequence[Mapping[str, Any]], fields: list[str] | None
) -> list[Document]:
    """``documents`` (the repository's values) as the face shows them: complete, as the
    GraphQL selection asks, or projected."""
    if fields is None:
        return await complete_documents(ctx, documents)
    if ctx.selected_fields is not None:
        return await selected_documents(ctx, documents, fields)
    return projected_documents(ctx, documents, fields)


async def _filtered_page(search: PreparedSearch) -> DocumentPage:
    try:
        read = search.ctx.store.documents.pages.page(
            search.workspace_id,
            search.query,
            sort_by=search.args.sortBy,
            order=search.args.sortOrder,
            limit=search.args.limit,
            after=search.state or None,
            fields=search.fields,
        )
    except NotAPageKey:
        raise cursors.not_a_cursor() from None
    page = await read
    next_key = page.next_key
    next_cursor = (
        cursors.encode(dict(next_key), search.query_print, search.ctx.services.keyring)
        if next_key is not None
        else None
    )
    return DocumentPage(
        documents=await render_documents(search.ctx, page.documents, search.fields),
        nextCursor=next_cursor,
    )


async def _ranked_page(search: PreparedSearch) -> DocumentPage:
    offset = cursors.offset_of(search.state)
    text = search.args.query or ""
    wanted = offset + search.args.limit
    diverse = search.args.searchType == "mmr"
    # MMR picks the page's diverse head from a pool of the best, not from every candidate.
    ranked = await rank_documents(
        search.ctx,
        search.workspace_id,
        search.query,
        text,
        wanted * MMR_POOL if diverse else wanted,
        diverse_head=wanted if diverse else 0,
    )
    page_ids = ranked.ids[offset : offset + search.args.limit]
    found = {
        d["id"]: d
        for d in await search.ctx.store.documents.reads.documents(
            search.workspace_id, page_ids, search.fields
        )
    }
    ordered = [found[i] for i in page_ids if i in found]
    more = wanted < ranked.matched
    next_cursor = (
        cursors.encode_offset(
            offset + search.args.limit, search.query_print, search.ctx.services.keyring
        )
        if more
        else None
    )
    return DocumentPage(
        documents=await render_documents(search.ctx, ordered, search.fields),
        nextCursor=next_cursor,
        found=ranked.matched,
    )


@dataclass(frozen=True)
class RankedIds:
    """Document ids best first (as many as asked for) and how many candidates matched."""

    ids: list[str]
    matched: int


async def rank_documents(
    ctx: Context,
    workspace_id: str,
    query: DocumentQuery,
    text: str,
    k: int,
    *,
    diverse_head: int = 0,
    mode: RankMode = "hybrid",
) -> RankedIds:
    """The ``k`` best documents of ``query`` for ``text``.

    The candidates are every document the filters select, not the newest few: the
    workspace's in-memory index lists them (it knows each document's state and the fields
    filters read, fresh as its text; ``search_indexes.candidates``), which spares reading every
    id (seconds at 10k documents on the embedded store); a filter it cannot evaluate is left to
    the database. Either way they are ranked in the index's row order, so ties rank alike on
    both paths. The index scores
    them by words (BM25) and by meaning (cosine of embeddings, in memory or by
    ``$vectorSearch``), and the two rankings are fused (``engines.ranking.search_index.fuse``,
    computed for the ``k`` best only by ``fused_top``, which reads the head of each ranking);
    documents matching every distinctive word of the query come first.
    With ``diverse_head`` the first that many are re-picked by MMR from the ``k`` best, the
    rest keep their order.
    ``mode`` ranks by one signal only (``bench/search.py`` compares them).
    """
    indexes = search_indexes.indexes_of(ctx.services)
    index = await indexes.fresh(ctx.store, workspace_id)
    try:
        rows = await search_indexes.candidates(ctx.store, workspace_id, index, query, indexes)
    except UnsupportedFilter:
        # Candidates first, then the index: a document the filter returns was written before
        # the index looks for changes, so the index has it.
        ids = await ctx.store.documents.reads.candidate_ids(workspace_id, query)
        index = await indexes.fresh(ctx.store, workspace_id)
        # The database's order is its own (an index's, or insertion): rank in row order.
        rows = np.sort(index.rows_of(ids))
    if not len(rows):
        return RankedIds([], 0)
    complete = None
    if mode == "vector":
        lexical, distinctive = np.zeros(len(rows), np.float32), np.zeros(len(rows), bool)
    else:
        words = index.lexical_match(text, rows)
        lexical, distinctive, complete = words.scores, words.distinctive, words.complete
    similarity = None
    if mode != "lexical":
        vector = await indexes.query_vector(text)
        if vector is not None:
            similarity = await _similarities(ctx, workspace_id, query, index, rows, vector, k)
    best = fused_top(lexical, similarity, k, distinctive=distinctive, first=complete)
    order = best.ranked.rows
    if diverse_head and order:
        picked = diversify(
            best.scores,
            index.vectors(rows[order]),
            diverse_head,
            [index.words(int(rows[i])) for i in order],
        )
        head = [order[i] for i in picked]
        chosen = set(head)  # once: the rest keeps its rank order after the diverse head
        order = head + [i for i in order if i not in chosen]
    return RankedIds([index.ids[int(rows[i])] for i in order], best.ranked.matched)


async def _similarities(
    ctx: Context,
    workspace_id: str,
    query: DocumentQuery,
    index: SearchIndex,
    rows: npt.NDArray[np.int64],
    vector: npt.NDArray[np.float32],
    k: int,
) -> npt.NDArray[np.float32]:
    """Cosine of each candidate to the query: from the in-memory vectors, or from MongoDB's
    ``$vectorSearch`` for its nearest candidates (the others count as not near)."""
    config = search_indexes.indexes_of(ctx.services).config
    if config.vector_backend == "memory":
        return index.vector_scores(vector, rows)
    nearest = await ctx.store.documents.search.vector_search(
        workspace_id,
        query,
        vector.tolist(),
        limit=max(k, VECTOR_SEARCH_LIMIT),
        index_name=config.vector_index,
        num_candidates=max(k, VECTOR_SEARCH_LIMIT) * VECTOR_SEARCH_OVERSAMPLING,
    )
    similarity = np.zeros(len(rows), dtype=np.float32)
    position = {int(row): i for i, row in enumerate(rows)}
    for document_id, score in nearest:
        row = index.positions.get(document_id)
        if row is not None and row in position:
            # $vectorSearch reports cosine as (1 + cos) / 2.
            similarity[position[row]] = 2 * score - 1
    return similarity
