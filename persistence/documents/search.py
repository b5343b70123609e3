"""What search reads and writes of documents: the rows search indexes hold, embeddings, and
MongoDB's own ``$vectorSearch`` where a deployment has it."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from pymongo import ASCENDING

from persistence.documents.collection import CHANGES_INDEX, DocumentCollection
from persistence.documents.query import DocumentQuery, combined, match_stages
from persistence.documents.records import StoredDocument, from_record
from persistence.documents.stamp import INDEXED_PATHS, STAMP
from persistence.documents.vectors import EMBEDDED_PATHS, MODEL_ID, embedding_text
from persistence.where import QUERY_TIME_LIMIT_MS


class DocumentSearchData:
    """Index rows, embeddings and vector search over the documents collection."""

    def __init__(self, collection: DocumentCollection) -> None:
        self._coll = collection

    async def index_rows(
        self, workspace_id: str, since: datetime | None = None
    ) -> list[StoredDocument]:
        """What a search index holds of the workspace's documents (searchable text, search
        terms, embedding, ``INDEX_STATE``, ``indexedAt``): all of them, or those re-indexed at
        ``since`` or later."""
        match: dict[str, Any] = {"workspaceId": workspace_id}
        if since is not None:
            match[STAMP] = {"$gte": since}
        wanted = {name: 1 for name in (*INDEXED_PATHS, STAMP)}
        options = await self._coll.hint(CHANGES_INDEX)
        cursor = self._coll.docs.find(match, wanted, batch_size=5000, **options)
        return cast(list[StoredDocument], await cursor.to_list(None))

    async def needing_embeddings(
        self, workspace_id: str, after_id: str | None, limit: int, redo_all: bool = False
    ) -> list[tuple[str, str]]:
        """The next ``limit`` documents (by id, after ``after_id``) without an embedding of
        the current model (every document with ``redo_all``): each one's id and the text its
        embedding is made of (``embedding_text`` of its API values; the record stays here)."""
        match: dict[str, Any] = {"workspaceId": workspace_id}
        if not redo_all:
            match["embeddingModel"] = {"$ne": MODEL_ID}
        if after_id is not None:
            match["_id"] = {"$gt": after_id}
        wanted = {name: 1 for name in EMBEDDED_PATHS}
        cursor = self._coll.docs.find(match, wanted).sort("_id", ASCENDING).limit(limit)
        return [
            (row["_id"], embedding_text(from_record(row))) for row in await cursor.to_list(None)
        ]

    async def workspaces_with_documents(self) -> list[str]:
        return sorted(await self._coll.docs.distinct("workspaceId"))

    async def count_needing_embeddings(self, workspace_id: str, redo_all: bool = False) -> int:
        match: dict[str, Any] = {"workspaceId": workspace_id}
        if not redo_all:
            match["embeddingModel"] = {"$ne": MODEL_ID}
        return int(await self._coll.docs.count_documents(match))

    async def set_embeddings(
        self, workspace_id: str, vectors: Mapping[str, Mapping[str, Any]]
    ) -> None:
        """Store embeddings (storage fields by document id); ``updatedAt`` stays, since the
        document's content did not change, while ``indexedAt`` tells search indexes to re-read."""
        now = self._coll.now()
        await asyncio.gather(
            *(
                self._coll.update_one(
                    {"_id": document_id, "workspaceId": workspace_id}, {"$set": dict(fields)}, now
                )
                for document_id, fields in vectors.items()
            )
        )

    async def vector_search(
        self,
        workspace_id: str,
        query: DocumentQuery,
        vector: Sequence[float],
        limit: int,
        index_name: str,
        num_candidates: int,
    ) -> list[tuple[str, float]]:
        """(id, score) of the ``limit`` documents of ``query`` nearest to ``vector``, by
        MongoDB's ``$vectorSearch`` (a deployment with vector search indexes only)."""
        pipeline = vector_search_pipeline(
            workspace_id, query, vector, limit, index_name, num_candidates
        )
        found = self._coll.docs.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        return [(row["_id"], float(row["score"])) for row in await self._coll.run(found)]


def vector_search_pipeline(
    workspace_id: str,
    query: DocumentQuery,
    vector: Sequence[float],
    limit: int,
    index_name: str,
    num_candidates: int,
) -> list[dict[str, Any]]:
    """The aggregation that asks ``$vectorSearch`` for the nearest documents of ``query``.

    ``$vectorSearch`` must be the first stage and its ``filter`` takes only the fields the
    vector index declares as filters: the workspace and the archive state go there (they are
    equalities, see ``match_stages``), the caller's where-clause and export filter follow as a
    ``$match`` over the nearest ``num_candidates``. The index is ``vector_index_definition``.
    """
    scope = match_stages(workspace_id, query.archived)[0]["$match"]
    stages: list[dict[str, Any]] = [
        {
            "$vectorSearch": {
                "index": index_name,
                "path": "embedding",
                "queryVector": [float(x) for x in vector],
                "numCandidates": max(num_candidates, limit),
                "limit": max(num_candidates, limit),
                "filter": scope,
            }
        },
        {"$project": {"_id": 1, "score": {"$meta": "vectorSearchScore"}}},
    ]
    caller = combined(query.parts())
    if caller:
        # The projection above dropped the fields the where-clause reads: match before it.
        stages.insert(1, {"$match": caller})
    stages.append({"$limit": limit})
    return stages


def vector_index_definition(dim: int) -> dict[str, Any]:
    """The Atlas Vector Search index ``vector_search_pipeline`` expects (create it once with
    ``db.documents.createSearchIndex(name, "vectorSearch", definition)``)."""
    return {
        "fields": [
            {"type": "vector", "path": "embedding", "numDimensions": dim, "similarity": "cosine"},
            {"type": "filter", "path": "workspaceId"},
            {"type": "filter", "path": "archived"},
        ]
    }
