"""Issue 39: the hot reads' plans do not depend on which workspace was loaded first.

A big workspace and a small one share the embedded store (SecantusDB, motor over TCP: the
MongoDB driver's own code path), loaded big first or small first. Every command each hot read
sends (newest-first pages with a one-field filter, counts, the dashboard's totals, a ranked
search's candidates) is captured and explained: its plan is the index the read is built for,
never a collection scan nor a cached plan, and it examines no more documents than its own
workspace holds, whatever was loaded first. No read sends a ``hint`` here: the embedded store
walks a hinted index from end to end, every workspace's entries (``persistence.plans``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from datetime import UTC, date, datetime
from typing import Any

import pytest
from pymongo import monitoring

from domain.where import WhereClause
from engines.demo import demo_documents
from persistence.client import connect
from persistence.documents.collection import CHANGES_INDEX, NEWEST_INDEX
from persistence.documents.query import DocumentQuery
from persistence.documents.totals import ROWS_INDEX
from persistence.embedded import EmbeddedServer
from persistence.store import Store

pytestmark = pytest.mark.wire

TODAY = date(2026, 6, 30)
BIG, SMALL = "org_big", "org_small"
SIZES = {BIG: 400, SMALL: 40}
ORDERS = {"big first": (BIG, SMALL), "small first": (SMALL, BIG)}
# Each collection a hot read touches, and the index its reads are built for.
INDEX_OF = {"documents": NEWEST_INDEX, "document_rollups": ROWS_INDEX}
# What the driver adds to a command that ``explain`` does not take.
DRIVER_FIELDS = {"lsid", "$db", "$clusterTime", "$readPreference", "txnNumber", "signature"}


class Commands(monitoring.CommandListener):
    """The reads sent to the collections of ``INDEX_OF`` while ``recording``."""

    def __init__(self) -> None:
        self.recording = False
        self.seen: list[dict[str, Any]] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if not self.recording or event.command_name not in ("aggregate", "find"):
            return
        command = dict(event.command)
        if command[event.command_name] in INDEX_OF:
            self.seen.append({k: v for k, v in command.items() if k not in DRIVER_FIELDS})

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


def where(field: str, op: str, value: Any) -> WhereClause:
    return WhereClause.model_validate({"conditions": [{"field": field, "op": op, "value": value}]})


def hot_reads(store: Store, workspace: str) -> dict[str, Callable[[], Awaitable[Any]]]:
    """The reads of a dashboard, through the documents repository."""
    documents = store.documents

    def newest(query: DocumentQuery) -> Callable[[], Awaitable[Any]]:
        return lambda: documents.reads.find(workspace, query, limit=20)

    return {
        "20 newest": newest(DocumentQuery()),
        "20 newest, amount gt 5": newest(DocumentQuery(where=where("amount", "gt", 5))),
        "20 newest, category eq Meals": newest(
            DocumentQuery(where=where("category", "eq", "Meals"))
        ),
        "count": lambda: documents.reads.count(workspace, DocumentQuery()),
        "totals (rollups)": lambda: documents.totals.of(workspace, DocumentQuery()),
        "totals by month (rollups)": lambda: documents.totals.of(
            workspace, DocumentQuery(), group_by="month"
        ),
        "totals by month (documents)": lambda: documents.totals.of(
            workspace, DocumentQuery(), group_by="month", use_rollups=False
        ),
        "ranked search's candidates": lambda: documents.reads.candidate_ids(
            workspace, DocumentQuery(where=where("amount", "gt", 5))
        ),
        # Before every ranked search: what changed since the index last looked.
        "search index's changes": lambda: documents.search.index_rows(
            workspace, datetime(2020, 1, 1, tzinfo=UTC)
        ),
    }


def index_names(plan: Any) -> Iterator[str]:
    """Every index a plan tree names; ``"COLLSCAN"`` for a collection scan."""
    if isinstance(plan, Mapping):
        if plan.get("stage") == "COLLSCAN":
            yield "COLLSCAN"
        if isinstance(plan.get("indexName"), str):
            yield plan["indexName"]
        for value in plan.values():
            yield from index_names(value)
    elif isinstance(plan, list):
        for value in plan:
            yield from index_names(value)


def planned(explained: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The winning plan and execution statistics of a find's or an aggregate's explain."""
    if "stages" in explained:
        cursor = explained["stages"][0]["$cursor"]
        return cursor["queryPlanner"]["winningPlan"], cursor["executionStats"]
    return explained["queryPlanner"]["winningPlan"], explained["executionStats"]


@pytest.fixture
async def recorded(embedded_server: EmbeddedServer) -> AsyncIterator[tuple[Store, Commands]]:
    """A fresh database whose client records the hot reads' commands."""
    commands = Commands()
    client, db = connect(embedded_server.uri, "load_order", event_listeners=[commands])
    await client.drop_database("load_order")
    store = Store(db)
    await store.ensure_indexes()
    yield store, commands
    await client.drop_database("load_order")
    client.close()


@pytest.mark.parametrize("order", list(ORDERS))
async def test_each_hot_read_plans_on_its_index_whatever_was_loaded_first(
    recorded: tuple[Store, Commands], order: str
) -> None:
    store, commands = recorded
    for seed, workspace in enumerate(ORDERS[order], start=1):
        documents = demo_documents(SIZES[workspace], seed=seed, today=TODAY)
        for position, document in enumerate(documents):
            document["_id"] = f"{workspace}_{position:04d}"
        await store.documents.writes.insert_many(workspace, documents)
    for workspace in (SMALL, BIG):
        own = {
            "documents": await store.db["documents"].count_documents({"workspaceId": workspace}),
            "document_rollups": await store.db["document_rollups"].count_documents(
                {"workspaceId": workspace}
            ),
        }
        for label, read in hot_reads(store, workspace).items():
            commands.seen, commands.recording = [], True
            await read()
            commands.recording = False
            assert commands.seen, f"{label}: no read of the documents or their rollups"
            for command in commands.seen:
                name = "aggregate" if "aggregate" in command else "find"
                collection = command[name]
                assert "hint" not in command, f"{label}: a hint walks every workspace here"
                explained = await store.db.command(
                    {"explain": command, "verbosity": "executionStats"}
                )
                plan, stats = planned(explained)
                where = f"{order}, {workspace}, {label}: {plan}"
                index = CHANGES_INDEX if label == "search index's changes" else INDEX_OF[collection]
                assert set(index_names(plan)) == {index}, where
                assert plan.get("isCached") is False, where
                assert stats["totalDocsExamined"] <= own[collection], (where, stats)
