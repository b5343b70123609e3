"""The Documents page's status filter and sort: processingStatus and duplicateOf in the where
clause of documents.search and documents.count alike (the page's count is the list's), and
processingStatus as a sort key whose order holds across pages (the cursor)."""

from __future__ import annotations

import httpx

from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result

STATUSES = ["processed", "warning", "failed", "processed", "warning", "processed", "queued"]


async def seed(store: Store, tenant: Tenant) -> None:
    await store.documents.writes.insert_many(
        tenant.org_id,
        [
            doc(
                f"doc_{i}",
                processingStatus=status,
                **({"duplicateOf": "doc_0"} if i in (3, 5) else {}),
            )
            for i, status in enumerate(STATUSES)
        ],
    )


def where(*conditions: dict[str, object]) -> dict[str, object]:
    return {"where": {"conditions": list(conditions)}}


async def test_search_and_count_filter_on_status_and_duplicates(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await seed(store, alice)
    warning = {"field": "processingStatus", "op": "eq", "value": "warning"}
    found = result(
        await call(
            client, alice, "documents.search", {"useSearch": False, "limit": 100, **where(warning)}
        )
    )
    assert sorted(d["id"] for d in found["documents"]) == ["doc_1", "doc_4"]
    counted = result(await call(client, alice, "documents.count", where(warning)))
    assert counted["count"] == 2
    duplicates = {"field": "duplicateOf", "op": "exists", "value": True}
    counted = result(await call(client, alice, "documents.count", where(duplicates)))
    assert counted["count"] == 2
    # Not a status: a 400 naming the field, never a 500.
    bad = await call(client, alice, "documents.count", where({**warning, "value": "finished"}))
    assert bad.status_code == 400 and "where.conditions[0].value" in bad.text


async def test_sort_by_status_across_pages(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await seed(store, alice)
    seen: list[str] = []
    cursor = None
    while True:
        body = {
            "useSearch": False,
            "limit": 3,
            "sortBy": "processingStatus",
            "sortOrder": 1,
            "outputMode": "complete",
        }
        page = result(await call(client, alice, "documents.search", {**body, "cursor": cursor}))
        seen += [d["processingStatus"] for d in page["documents"]]
        cursor = page["nextCursor"]
        if not cursor:
            break
    assert seen == sorted(STATUSES)
