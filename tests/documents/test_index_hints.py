"""Issue 39: each hot read names the index it is built for where the store honours a hint.

On a MongoDB (here mongomock, answering ``buildInfo`` as one: ``tests/mongomock_compat.py``)
every read of the documents and their rollups that a dashboard makes carries ``hint``, so no
cached plan won on another tenant can serve it. On the embedded store (``buildInfo`` with
``secantusVersion``) none does: its hint walks the whole index (``persistence.plans``), and its
plans are checked through ``explain`` in ``test_load_order_wire``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from mongomock_motor import AsyncMongoMockCollection
from pymongo.errors import AutoReconnect

from domain.where import WhereClause
from engines.demo import demo_documents
from persistence.documents.collection import CHANGES_INDEX, NEWEST_INDEX
from persistence.documents.query import DocumentQuery
from persistence.documents.totals import ROWS_INDEX
from persistence.plans import honours_hints
from persistence.store import Store

INDEX_OF = {"documents": NEWEST_INDEX, "document_rollups": ROWS_INDEX}


def where(field: str, op: str, value: Any) -> WhereClause:
    return WhereClause.model_validate({"conditions": [{"field": field, "op": op, "value": value}]})


def hot_reads(store: Store, workspace: str) -> dict[str, Callable[[], Awaitable[Any]]]:
    documents = store.documents

    def newest(query: DocumentQuery) -> Callable[[], Awaitable[Any]]:
        return lambda: documents.reads.find(workspace, query, limit=20)

    return {
        "20 newest": newest(DocumentQuery()),
        "20 newest, amount gt 5": newest(DocumentQuery(where=where("amount", "gt", 5))),
        "20 newest, category eq Meals": newest(
            DocumentQuery(where=where("category", "eq", "Meals"))
        ),
        "20 newest, archived only": newest(DocumentQuery(archived="only")),
        "count": lambda: documents.reads.count(workspace, DocumentQuery()),
        "totals by month (rollups)": lambda: documents.totals.of(
            workspace, DocumentQuery(), group_by="month"
        ),
        "totals by category (documents)": lambda: documents.totals.of(
            workspace, DocumentQuery(), group_by="category", use_rollups=False
        ),
        "ranked search's candidates": lambda: documents.reads.candidate_ids(
            workspace, DocumentQuery(where=where("amount", "gt", 5))
        ),
    }


@pytest.fixture
def aggregates(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Every ``aggregate`` sent to mongomock: the collection's name and the options."""
    seen: list[tuple[str, dict[str, Any]]] = []
    original = AsyncMongoMockCollection.aggregate

    def recorded(self: Any, pipeline: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append((self.name, dict(kwargs)))
        return original(self, pipeline, *args, **kwargs)

    monkeypatch.setattr(AsyncMongoMockCollection, "aggregate", recorded)
    return seen


@pytest.fixture
def finds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Every ``find`` sent to mongomock: the collection's name and the options."""
    seen: list[tuple[str, dict[str, Any]]] = []
    original = AsyncMongoMockCollection.find

    def recorded(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append((self.name, dict(kwargs)))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(AsyncMongoMockCollection, "find", recorded)
    return seen


async def test_every_hot_read_names_its_index(
    store: Store, aggregates: list[tuple[str, dict[str, Any]]]
) -> None:
    await store.documents.writes.insert_many("org_a", demo_documents(60, seed=3))
    for label, read in hot_reads(store, "org_a").items():
        aggregates.clear()
        await read()
        reads = [(name, options) for name, options in aggregates if name in INDEX_OF]
        assert reads, label
        for name, options in reads:
            assert options.get("hint") == INDEX_OF[name], (label, name, options)


class Server:
    """A database whose ``buildInfo`` answers ``info`` (or raises ``error``), counting asks."""

    def __init__(self, info: dict[str, Any] | None = None, error: Exception | None = None):
        self.info, self.error, self.asked = info or {}, error, 0

    async def command(self, name: str) -> dict[str, Any]:
        assert name == "buildInfo"
        self.asked += 1
        if self.error is not None:
            raise self.error
        return self.info


async def test_which_store_honours_a_hint() -> None:
    assert await honours_hints(Server({"version": "8.0.4", "ok": 1.0})) is True  # type: ignore[arg-type]
    embedded = {"version": "8.2.11", "secantusVersion": "0.7.0b3", "ok": 1.0}
    assert await honours_hints(Server(embedded)) is False  # type: ignore[arg-type]
    assert await honours_hints(Server(error=AutoReconnect("down"))) is None  # type: ignore[arg-type]


async def test_the_answer_is_kept_once_the_store_gave_it(store: Store) -> None:
    documents = store.documents
    down = Server(error=AutoReconnect("down"))
    documents.collection.db = down  # type: ignore[assignment]
    assert await documents.collection.hint(NEWEST_INDEX) == {}
    assert await documents.collection.hint(NEWEST_INDEX) == {}
    assert down.asked == 2  # not kept: asked again
    embedded = Server({"secantusVersion": "0.7.0b3"})
    documents.collection.db = embedded  # type: ignore[assignment]
    assert await documents.collection.hint(NEWEST_INDEX) == {}
    assert await documents.collection.hint(NEWEST_INDEX) == {}
    assert embedded.asked == 1


async def test_a_count_by_words_leaves_the_choice_to_the_words_index(
    store: Store, aggregates: list[tuple[str, dict[str, Any]]]
) -> None:
    await store.documents.writes.insert_many("org_a", demo_documents(20, seed=3))
    await store.documents.reads.count("org_a", DocumentQuery(words="coffee"))
    await store.documents.reads.candidate_ids("org_a", DocumentQuery(words="coffee"))
    reads = [options for name, options in aggregates if name == "documents"]
    assert len(reads) == 2 and not any("hint" in options for options in reads), reads


async def test_a_search_index_reads_what_changed_through_its_index(
    store: Store, finds: list[tuple[str, dict[str, Any]]]
) -> None:
    await store.documents.writes.insert_many("org_a", demo_documents(20, seed=3))
    everything = await store.documents.search.index_rows("org_a")
    since = await store.documents.search.index_rows("org_a", datetime(2020, 1, 1, tzinfo=UTC))
    assert len(everything) == len(since) == 20
    reads = [options for name, options in finds if name == "documents"]
    assert [options.get("hint") for options in reads] == [CHANGES_INDEX, CHANGES_INDEX], reads


async def test_the_shim_refuses_a_hint_naming_no_index(store: Store) -> None:
    with pytest.raises(NotImplementedError, match="no index"):
        await store.db["documents"].find({}, hint="no_such_index").to_list(None)
