"""Reading documents: by id, by query (sorted pages), counts, duplicates, what a rule matches."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from pymongo import DESCENDING

from domain.documents import NOTHING_SAVED, UNFINISHED
from persistence.documents.collection import DocumentCollection
from persistence.documents.edits import EditEntry
from persistence.documents.loaded import Loaded
from persistence.documents.query import (
    ARRIVAL_ORDER,
    DocumentQuery,
    DuplicateRule,
    arrival,
    match_stages,
)
from persistence.documents.records import (
    LINE_DESCRIPTIONS,
    NOTE_TEXTS,
    SEARCHABLE_FIELDS,
    StoredDocument,
    changes_search_terms,
    from_record,
    projection,
    stored_path,
)
from persistence.documents.vectors import EMBEDDED_PATHS, changes_embedding
from persistence.documents.windows import NewestFirst
from persistence.where import QUERY_TIME_LIMIT_MS

# What the duplicate check reads of a matching document: its arrival and its standing.
DUPLICATE_FIELDS = {
    "createdAt": 1,
    "intakeOrder": 1,
    "duplicateOf": 1,
    "processingStatus": 1,
}


class DocumentReads:
    """Reads of the documents collection (none writes)."""

    def __init__(self, collection: DocumentCollection) -> None:
        self._coll = collection
        # Newest-first pages in date windows, and every sorted page (``windows``).
        self.windows = NewestFirst(collection)

    async def get(self, workspace_id: str, document_id: str) -> StoredDocument | None:
        """The whole stored record (its storage-only fields too), for a writer."""
        found = await self._coll.docs.find_one({"_id": document_id, "workspaceId": workspace_id})
        return cast(StoredDocument | None, found)

    async def shown(
        self, workspace_id: str, document_id: str, fields: Iterable[str] | None = None
    ) -> StoredDocument | None:
        """One document as a reader sees it, with the API ``fields`` (None: all): what
        documents.get, node(id:) and a document's page read. A point read by ``_id``, so no
        time limit: the id's index finds it or nothing."""
        found = await self._coll.docs.find_one(
            {"_id": document_id, "workspaceId": workspace_id}, projection(fields)
        )
        return cast(StoredDocument | None, found)

    async def document(
        self, workspace_id: str, document_id: str, fields: Iterable[str] | None = None
    ) -> dict[str, Any] | None:
        """One document as the API's values (``from_record`` of what ``shown`` reads), for a
        caller that reads a document and writes nothing back to it."""
        found = await self.shown(workspace_id, document_id, fields)
        return None if found is None else from_record(found)

    async def loaded(self, workspace_id: str, document_id: str) -> Loaded | None:
        """The whole document, for a change: its API values and the stored record a write
        compares and derives from (``Loaded``)."""
        found = await self.get(workspace_id, document_id)
        return None if found is None else Loaded(found)

    async def loaded_many(
        self, workspace_id: str, ids: Sequence[str], fields: Iterable[str] | None = None
    ) -> list[Loaded]:
        """Documents by id (in no particular order) for a change of theirs, with the API
        ``fields`` (None: all a reader sees)."""
        return [Loaded(found) for found in await self.get_many(workspace_id, ids, fields)]

    async def documents(
        self, workspace_id: str, ids: Sequence[str], fields: Iterable[str] | None = None
    ) -> list[dict[str, Any]]:
        """Documents by id (in no particular order) as the API's values, with the API
        ``fields`` (None: all), for a caller that shows them and writes nothing back."""
        return [from_record(found) for found in await self.get_many(workspace_id, ids, fields)]

    async def get_many(
        self, workspace_id: str, ids: Sequence[str], fields: Iterable[str] | None = None
    ) -> list[StoredDocument]:
        """Documents by id (in no particular order) with the API ``fields`` (None: all)."""
        if not ids:
            return []
        if len(ids) == 1:  # node(id:), a document's page: one point read, no cursor to drain
            found = await self.shown(workspace_id, ids[0], fields)
            return [found] if found is not None else []
        cursor = self._coll.docs.find(
            {"_id": {"$in": list(ids)}, "workspaceId": workspace_id},
            projection(fields),
            max_time_ms=QUERY_TIME_LIMIT_MS,
        )
        return cast(list[StoredDocument], await self._coll.run(cursor.to_list(None)))

    async def find(
        self,
        workspace_id: str,
        query: DocumentQuery,
        *,
        sort_by: str = "docDate",
        order: int = -1,
        limit: int = 0,
        fields: Iterable[str] | None = None,
    ) -> list[StoredDocument]:
        """Documents of ``query`` sorted by the API field ``sort_by`` (ties by id).

        With ``fields`` (API names) only those are read, plus the sort key (for cursors).
        """
        path = stored_path(sort_by)
        sort = [(path, order)] if path == "_id" else [(path, order), ("_id", order)]
        wanted = projection(fields)
        if fields is not None:
            wanted[path] = 1
        return await self._find(workspace_id, query, wanted, sort, limit)

    async def find_for_edit(
        self, workspace_id: str, query: DocumentQuery, changing: Iterable[str], limit: int
    ) -> list[Loaded]:
        """Documents of ``query`` with the fields a change of ``changing`` reads and rewrites,
        newest first, each as ``Loaded`` (the values to decide with, the record to write)."""
        names = list(changing)
        wanted = {name: 1 for name in names}
        if changes_search_terms(names):
            wanted |= {name: 1 for name in (*SEARCHABLE_FIELDS, LINE_DESCRIPTIONS, NOTE_TEXTS)}
        if changes_embedding(names):
            wanted |= {name: 1 for name in EMBEDDED_PATHS}
        sort = [("docDate", DESCENDING), ("_id", DESCENDING)]
        return [Loaded(row) for row in await self._find(workspace_id, query, wanted, sort, limit)]

    async def _find(
        self,
        workspace_id: str,
        query: DocumentQuery,
        wanted: Mapping[str, int],
        sort: list[tuple[str, int]],
        limit: int,
    ) -> list[StoredDocument]:
        async with self._coll.regex_turn(workspace_id, query):
            query = (await self._coll.regex_matched(workspace_id, query)).query
            if limit and sort[0] == ("docDate", DESCENDING) and query.archived != "include":
                return await self.windows.newest(workspace_id, query, wanted, sort, limit)
            return await self.windows.sorted_page(query.stages(workspace_id), wanted, sort, limit)

    async def count(self, workspace_id: str, query: DocumentQuery) -> int:
        async with self._coll.regex_turn(workspace_id, query):
            read = await self._coll.regex_matched(workspace_id, query)
            if read.ids is not None:  # matched here, by every other condition too
                return len(read.ids)
            pipeline = [*read.query.stages(workspace_id), {"$count": "n"}]
            options = await self._coll.scope_hint(query.words)
            rows = await self._coll.run(
                self._coll.docs.aggregate(
                    pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS, **options
                ).to_list(None)
            )
            return int(rows[0]["n"]) if rows else 0

    async def distinct_values(self, workspace_id: str, field: str, limit: int = 200) -> list[str]:
        """Values of ``field`` in use among active documents, most used first."""
        pipeline: list[dict[str, Any]] = [
            *match_stages(workspace_id, "exclude", {field: {"$ne": None}}),
            {"$group": {"_id": f"${field}", "n": {"$sum": 1}}},
            {"$sort": {"n": -1, "_id": 1}},
            {"$limit": limit},
        ]
        rows = await self._coll.run(
            self._coll.docs.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        )
        return [row["_id"] for row in rows]

    async def history(
        self, workspace_id: str, documents: Sequence[Mapping[str, Any]]
    ) -> dict[str, list[EditEntry]]:
        """The edit history of each of ``documents`` (the API's values of documents of this
        workspace, as this repository's reads return them), oldest first; a document without
        edits maps to an empty list. Documents written before the history had its own
        collection carry their older entries in ``editHistory``: those come first."""
        ids = [document["id"] for document in documents]
        kept = await self._coll.edits.of_documents(workspace_id, ids)
        return {
            document["id"]: [
                *cast(list[EditEntry], document.get("editHistory") or []),
                *kept.get(document["id"], []),
            ]
            for document in documents
        }

    async def find_duplicates(
        self,
        workspace_id: str,
        document_id: str,
        rules: Sequence[DuplicateRule],
        *,
        only: Mapping[str, Any] | None = None,
        limit: int = 1,
    ) -> list[tuple[StoredDocument, str]]:
        """The earliest arrivals (``limit`` per rule) among the active documents one of
        ``rules`` matches (and ``only``, a further filter), earliest first, each with the reason
        of the strongest rule it matches; only what arrival order needs is read. Documents
        still queued or processing count (their file's SHA-256 is known from the start, their
        other fields once saved), failed and skipped ones do not: which of two documents is the
        original then depends on when they arrived, not on which was processed first."""
        found: dict[str, tuple[StoredDocument, str]] = {}
        for rule in rules:
            # The rule's indexed pair first (a few documents), then everything else on those.
            pipeline: list[dict[str, Any]] = [
                {"$match": {"workspaceId": workspace_id, **rule.indexed}},
                {
                    "$match": {
                        "archived": False,
                        "_id": {"$ne": document_id},
                        "processingStatus": {"$nin": list(NOTHING_SAVED)},
                        **rule.rest,
                        **(only or {}),
                    }
                },
                {"$sort": dict(ARRIVAL_ORDER)},
                {"$limit": limit},
                {"$project": DUPLICATE_FIELDS},
            ]
            rows = await self._coll.run(
                self._coll.docs.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
            )
            for row in rows:
                found.setdefault(row["_id"], (cast(StoredDocument, row), rule.reason))
        return sorted(found.values(), key=lambda match: arrival(match[0]))

    async def unfinished(self) -> list[StoredDocument]:
        """Every workspace's documents still queued or processing (a start-up check)."""
        rows: list[StoredDocument] = []
        for status in UNFINISHED:
            rows += await self._coll.docs.find(
                {"processingStatus": status},
                {"workspaceId": 1, "activityId": 1, "processingStatus": 1, "createdAt": 1},
            ).to_list(None)
        return rows

    async def matching(
        self, workspace_id: str, document_id: str, filters: Mapping[str, Mapping[str, Any]]
    ) -> set[str]:
        """Which of ``filters`` (compiled where clauses, by name) the active document matches,
        in one read: the document by id, then one ``$facet`` branch per filter."""
        if not filters:
            return set()
        names = list(filters)
        facets = {
            f"f{index}": [{"$match": dict(filters[name])}, {"$project": {"_id": 1}}]
            for index, name in enumerate(names)
        }
        pipeline: list[dict[str, Any]] = [
            {"$match": {"_id": document_id, "workspaceId": workspace_id, "archived": False}},
            {"$facet": facets},
        ]
        rows = await self._coll.run(
            self._coll.docs.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS).to_list(None)
        )
        if not rows:
            return set()
        return {name for index, name in enumerate(names) if rows[0].get(f"f{index}")}

    async def active_duplicates_of(self, workspace_id: str, document_id: str) -> list[str]:
        rows = await self._coll.docs.find(
            {"workspaceId": workspace_id, "duplicateOf": document_id, "archived": False},
            {"_id": 1},
        ).to_list(None)
        return [row["_id"] for row in rows]

    async def candidate_ids(self, workspace_id: str, query: DocumentQuery) -> list[str]:
        """Ids of every document of ``query`` (where-clause, archive and export filters): the
        population a ranked search orders."""
        async with self._coll.regex_turn(workspace_id, query):
            read = await self._coll.regex_matched(workspace_id, query)
            if read.ids is not None:  # matched here, by every other condition too
                return read.ids
            pipeline = [*read.query.stages(workspace_id), {"$project": {"_id": 1}}]
            options = await self._coll.scope_hint(query.words)
            cursor = self._coll.docs.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS, **options)
            found = cursor.to_list(None)
            return [row["_id"] for row in await self._coll.run(found)]

    async def existing_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` that are still stored (by primary key: no scan)."""
        if not ids:
            return set()
        cursor = self._coll.docs.find(
            {"_id": {"$in": list(ids)}, "workspaceId": workspace_id},
            {"_id": 1},
            max_time_ms=QUERY_TIME_LIMIT_MS,
        )
        return {row["_id"] for row in await self._coll.run(cursor.to_list(None))}
