"""Read shapes on the embedded store (SecantusDB over the wire): the workspace-and-archive stage
uses an index and examines only that workspace's documents, and results stay right where the
store's index bounds are wrong (inclusive bounds on ``docDate``)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import pytest

from engines.demo import demo_documents
from persistence.document_query import DocumentQuery
from persistence.store import Store
from schema.where import WhereClause

pytestmark = pytest.mark.wire

TODAY = date(2026, 6, 30)


async def fill(store: Store, workspace: str, count: int, seed: int) -> list[dict[str, Any]]:
    documents = demo_documents(count, seed=seed, today=TODAY)
    for position, document in enumerate(documents):
        document["_id"] = f"{workspace}_{position:04d}"
    await store.documents.insert_many(workspace, documents)
    return documents


def where(*conditions: dict[str, Any]) -> WhereClause:
    return WhereClause.model_validate({"conditions": list(conditions)})


async def explain(store: Store, pipeline: list[dict[str, Any]]) -> dict[str, Any]:
    command = {"aggregate": "documents", "pipeline": pipeline, "cursor": {}}
    result: dict[str, Any] = await store.db.command(
        {"explain": command, "verbosity": "executionStats"}
    )
    return result


def plan_text(explained: dict[str, Any]) -> str:
    return str(explained)


async def test_reads_examine_only_their_workspace(wire_store: Store) -> None:
    await fill(wire_store, "org_big", 400, seed=1)
    small = await fill(wire_store, "org_small", 40, seed=2)
    active_small = [d for d in small if not d.get("archived")]

    month = where({"field": "docDate", "op": "gte", "value": "2026-01-01"})
    query = DocumentQuery(where=month)
    stages = query.stages("org_small")
    explained = await explain(wire_store, [*stages, {"$count": "n"}])
    text = plan_text(explained)
    assert "IXSCAN" in text and "COLLSCAN" not in text, text[:600]
    assert "'totalDocsExamined': " + str(len(active_small)) in text, text[:1200]

    # The answer is the same as a plain filter over the small workspace.
    counted = await wire_store.documents.count("org_small", query)
    since = datetime(2026, 1, 1).date()
    expected = [d for d in active_small if d.get("docDate") and d["docDate"] >= since]
    assert counted == len(expected)


@pytest.mark.parametrize("op", ["gte", "lte", "eq", "gt", "lt"])
async def test_inclusive_date_bounds_keep_equal_documents(wire_store: Store, op: str) -> None:
    """The store drops documents equal to an inclusive ``docDate`` bound when the bound is in
    an index range; reads keep dates out of index bounds, so every such document is found."""
    documents = await fill(wire_store, "org_dates", 120, seed=3)
    active = [d for d in documents if not d.get("archived") and d.get("docDate")]
    pivot = sorted(d["docDate"] for d in active)[len(active) // 2]
    compare = {
        "gte": lambda v: v >= pivot,
        "lte": lambda v: v <= pivot,
        "eq": lambda v: v == pivot,
        "gt": lambda v: v > pivot,
        "lt": lambda v: v < pivot,
    }[op]
    expected = {d["_id"] for d in active if compare(d["docDate"])}
    assert any(d["docDate"] == pivot for d in active)  # the bound itself is stored
    query = DocumentQuery(where=where({"field": "docDate", "op": op, "value": pivot.isoformat()}))
    found = await wire_store.documents.find("org_dates", query)
    assert {d["_id"] for d in found} == expected
    assert await wire_store.documents.count("org_dates", query) == len(expected)
    totals = await wire_store.documents.totals("org_dates", query, group_by="month")
    assert sum(group.count for group in totals.groups) == len(expected)
