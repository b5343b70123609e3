"""The packed month records on SecantusDB over the wire: nested ``$inc``/``$set`` upserts,
cell removal at zero and the removal of an emptied record behave as in memory, so what the
writes keep equals a recount and the month × category answer read from the packed records
equals the documents' aggregation."""

from __future__ import annotations

import dataclasses
from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from domain.where import WhereClause
from persistence.documents.query import DocumentQuery
from persistence.documents.rollups import PACKED
from persistence.store import Store

pytestmark = pytest.mark.wire

WS = "org_packed_wire"


async def packed_records(store: Store) -> list[dict[str, Any]]:
    found = (
        await store.db["document_rollups"].find({"workspaceId": WS, "shape": PACKED}).to_list(None)
    )
    return sorted(found, key=lambda record: record["_id"])


async def test_packed_records_follow_writes_over_the_wire(wire_store: Store) -> None:
    documents = wire_store.documents
    await documents.writes.insert_many(
        WS,
        [
            {"_id": f"d{i}", "category": ["Fuel", "Meals"][i % 2], "currency": "EUR",
             "docDate": date(2024, 1 + i % 3, 1 + i), "amount": Decimal(f"{i}.25"),
             "taxAmount": Decimal("0.10") if i % 3 else None}
            for i in range(9)
        ],
    )  # fmt: skip
    # A correction moves a document to a new cell; archiving both March documents empties
    # March's active record (removed); the rest stays.
    record = await documents.reads.loaded(WS, "d1")
    assert record is not None
    await documents.writes.update_fields(WS, record, {"category": "Travel"})
    march = [f"d{i}" for i in range(9) if i % 3 == 2]
    await documents.writes.set_archived(WS, march, archived=True)

    kept = await packed_records(wire_store)
    by_month = {(r["docDate"].month, r["archived"]): r for r in kept}
    assert set(by_month) == {(1, False), (2, False), (3, True)}
    february = sorted((c["category"], c["count"]) for c in by_month[2, False]["cells"].values())
    assert february == [("Fuel", 1), ("Meals", 1), ("Travel", 1)]
    await documents.totals.rebuild_rollups(WS)
    assert await packed_records(wire_store) == kept

    # A range that cuts January (day rows) and whole months after it (packed records).
    where = {"conditions": [{"field": "docDate", "op": "gte", "value": "2024-01-03"}]}
    query = DocumentQuery(where=WhereClause.model_validate(where), archived="include")
    fast, slow = [
        await documents.aggregates.of(
            WS, query, ["month", "category"], max_groups=500, extremes=False, use_rollups=use
        )
        for use in (True, False)
    ]
    assert fast.source == "rollups:month-category+day"
    assert dataclasses.replace(fast, source="") == dataclasses.replace(slow, source="")
