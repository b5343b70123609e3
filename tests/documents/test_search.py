"""documents.search through REST: filter mode, sorting, projections, cursors, search mode."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result


async def ids(client: httpx.AsyncClient, tenant: Tenant, **body: Any) -> list[str]:
    page = result(await call(client, tenant, "documents.search", {"useSearch": False, **body}))
    return [d["id"] for d in page["documents"]]


async def test_defaults_are_five_newest_by_doc_date(
    client: httpx.AsyncClient, seeded: Tenant
) -> None:
    page = result(await call(client, seeded, "documents.search", {}))
    # Without a query, search mode behaves as filter mode; docDate desc, nulls last, ties by id.
    assert [d["id"] for d in page["documents"]] == ["doc_d", "doc_c", "doc_b", "doc_a", "doc_e"]
    assert page["nextCursor"] is not None


async def test_compact_output_is_a_short_projection(
    client: httpx.AsyncClient, seeded: Tenant
) -> None:
    page = result(
        await call(
            client,
            seeded,
            "documents.search",
            {"limit": 1, "requiredFields": ["summary", "link", "date"]},
        )
    )
    document = page["documents"][0]
    assert set(document) == {
        "id",
        "merchant",
        "amount",
        "currency",
        "docDate",
        "category",
        "docType",
        "summary",
        "link",
        "date",
    }
    assert document["amount"] == 59.99 and document["docDate"] == "2024-02-03"
    assert document["link"].endswith("/v1/documents/doc_d")


async def test_complete_output_has_every_field(client: httpx.AsyncClient, seeded: Tenant) -> None:
    page = result(
        await call(
            client,
            seeded,
            "documents.search",
            {
                "outputMode": "complete",
                "where": {"conditions": [{"field": "id", "op": "eq", "value": "doc_a"}]},
            },
        )
    )
    document = page["documents"][0]
    assert document["lineItems"] == [
        {
            "description": "Caffe Latte",
            "quantity": 1.0,
            "unitPrice": 4.1,
            "amount": 4.1,
            "taxAmount": None,
        }
    ]
    assert document["expenseLocation"]["primary"]["city"] == "New York"
    assert "workspaceId" not in document and "searchTerms" not in document
    assert document["preferredCurrency"] is None  # unknown fields are present as null


@pytest.mark.parametrize(
    ("sort_by", "order", "expected"),
    [
        ("amount", -1, ["doc_b", "doc_d", "doc_a", "doc_e", "doc_c", "doc_f"]),
        ("amount", 1, ["doc_f", "doc_c", "doc_e", "doc_a", "doc_d", "doc_b"]),
        ("merchant", 1, ["doc_d", "doc_f", "doc_b", "doc_c", "doc_a", "doc_e"]),
        ("docDate", 1, ["doc_f", "doc_e", "doc_a", "doc_b", "doc_c", "doc_d"]),
    ],
)
async def test_sorting_with_ties_broken_by_id(
    client: httpx.AsyncClient, seeded: Tenant, sort_by: str, order: int, expected: list[str]
) -> None:
    assert await ids(client, seeded, sortBy=sort_by, sortOrder=order, limit=10) == expected


@pytest.mark.parametrize(
    ("sort_by", "order"),
    [("docDate", -1), ("docDate", 1), ("amount", -1), ("amount", 1), ("merchant", 1), ("id", -1)],
)
async def test_cursor_pages_cover_everything_once(
    client: httpx.AsyncClient, seeded: Tenant, sort_by: str, order: int
) -> None:
    everything = await ids(client, seeded, sortBy=sort_by, sortOrder=order, limit=100)
    seen: list[str] = []
    cursor = None
    for _ in range(10):
        body: dict[str, Any] = {
            "useSearch": False,
            "sortBy": sort_by,
            "sortOrder": order,
            "limit": 2,
        }
        if cursor:
            body["cursor"] = cursor
        page = result(await call(client, seeded, "documents.search", body))
        seen += [d["id"] for d in page["documents"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == everything and len(seen) == 6


async def test_cursor_of_another_query_or_garbage_is_400(
    client: httpx.AsyncClient, seeded: Tenant
) -> None:
    page = result(await call(client, seeded, "documents.search", {"limit": 1, "useSearch": False}))
    other = await call(
        client,
        seeded,
        "documents.search",
        {"limit": 1, "useSearch": False, "sortBy": "amount", "cursor": page["nextCursor"]},
    )
    assert other.status_code == 400 and "different query" in other.json()["error"]["errorMessage"]
    garbage = await call(client, seeded, "documents.search", {"cursor": "%%%not-base64"})
    assert garbage.status_code == 400 and garbage.json()["error"]["errorMessage"].startswith(
        "cursor:"
    )


async def test_where_filters(client: httpx.AsyncClient, seeded: Tenant) -> None:
    where = {
        "logic": "or",
        "conditions": [
            {"field": "amount", "op": "gte", "value": 59.99},
            {"field": "expenseLocation.primary.city", "op": "regex", "value": "new y"},
        ],
    }
    assert sorted(await ids(client, seeded, where=where, limit=10)) == ["doc_a", "doc_b", "doc_d"]
    missing = {"conditions": [{"field": "amount", "op": "exists", "value": False}]}
    assert await ids(client, seeded, where=missing) == ["doc_f"]
    not_shell = {"conditions": [{"field": "isRecurring", "op": "ne", "value": True}]}
    assert "doc_f" in await ids(
        client, seeded, where=not_shell, limit=10
    )  # ne keeps missing fields


async def test_export_and_archive_filters(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    assert await ids(client, seeded, exportStatus="exported") == ["doc_d"]
    assert "doc_d" not in await ids(client, seeded, exportStatus="not-exported", limit=10)
    await store.documents.writes.set_archived(seeded.org_id, ["doc_b"], archived=True)
    assert "doc_b" not in await ids(client, seeded, limit=10)
    assert await ids(client, seeded, archived="only") == ["doc_b"]
    assert "doc_b" in await ids(client, seeded, archived="include", limit=10)


async def test_bad_where_is_400_naming_the_condition(
    client: httpx.AsyncClient, seeded: Tenant
) -> None:
    response = await call(
        client,
        seeded,
        "documents.search",
        {
            "where": {
                "conditions": [
                    {"field": "merchant", "op": "eq", "value": "A"},
                    {"field": "amount", "op": "regex", "value": "1"},
                ]
            }
        },
    )
    assert response.status_code == 400
    assert response.json()["error"]["errorMessage"] == (
        "Invalid request: where.conditions[1]: op 'regex' does not apply to money field 'amount' "
        "(money fields take eq, ne, gt, gte, lt, lte, in, nin, exists)"
    )
    response = await call(client, seeded, "documents.search", {"limit": 101})
    assert (
        response.json()["error"]["errorMessage"]
        == "Invalid request: limit: Input should be less than or equal to 100"
    )
    response = await call(client, seeded, "documents.search", {"where": {"conditions": []}})
    assert (
        "where.conditions: List should have at least 1 item"
        in response.json()["error"]["errorMessage"]
    )


async def test_search_mode_ranks_lexical_matches(client: httpx.AsyncClient, seeded: Tenant) -> None:
    page = result(await call(client, seeded, "documents.search", {"query": "latte", "limit": 5}))
    assert [d["id"] for d in page["documents"]] == ["doc_a"]  # only the line item says latte
    page = result(
        await call(
            client, seeded, "documents.search", {"query": "starb", "searchType": "similarity"}
        )
    )
    assert {d["id"] for d in page["documents"]} == {"doc_a", "doc_e"}  # prefix match
    page = result(await call(client, seeded, "documents.search", {"query": "INV-77"}))
    assert page["documents"][0]["id"] == "doc_b"
    page = result(
        await call(
            client,
            seeded,
            "documents.search",
            {"query": "starbucks cold brew", "searchType": "similarity"},
        )
    )
    assert [d["id"] for d in page["documents"]] == [
        "doc_e",
        "doc_a",
    ]  # more words matched ranks first
    filtered = result(
        await call(
            client,
            seeded,
            "documents.search",
            {
                "query": "starbucks",
                "where": {"conditions": [{"field": "docDate", "op": "gte", "value": "2024-01-01"}]},
            },
        )
    )
    assert [d["id"] for d in filtered["documents"]] == ["doc_a"]


async def test_search_mode_pages_and_mmr_diversifies(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    similar = [doc(f"doc_s{i}", merchant="Shell", summary="fuel station diesel") for i in range(4)]
    other = [doc("doc_x", merchant="Shell", summary="fuel station car wash and vacuum")]
    await store.documents.writes.insert_many(alice.org_id, similar + other)
    sim = result(
        await call(
            client,
            alice,
            "documents.search",
            {"query": "shell fuel station", "searchType": "similarity", "limit": 2},
        )
    )
    assert [d["id"][:5] for d in sim["documents"]] == ["doc_s", "doc_s"]
    mmr = result(
        await call(
            client,
            alice,
            "documents.search",
            {"query": "shell fuel station", "searchType": "mmr", "limit": 2},
        )
    )
    assert "doc_x" in [d["id"] for d in mmr["documents"]]
    seen = []
    cursor = None
    while True:
        body: dict[str, Any] = {"query": "fuel", "limit": 2}
        if cursor:
            body["cursor"] = cursor
        page = result(await call(client, alice, "documents.search", body))
        seen += [d["id"] for d in page["documents"]]
        cursor = page["nextCursor"]
        if not cursor:
            break
    assert sorted(seen) == sorted(d["_id"] for d in similar + other)


async def test_other_workspace_sees_nothing(
    client: httpx.AsyncClient, seeded: Tenant, bob: Tenant
) -> None:
    page = result(await call(client, bob, "documents.search", {"limit": 100}))
    assert page["documents"] == []
    page = result(await call(client, bob, "documents.search", {"query": "starbucks"}))
    assert page["documents"] == []
    forbidden = await call(client, bob, "documents.search", {}, org=seeded.org_id)
    assert forbidden.status_code == 403


async def test_query_timeout_is_a_clear_400(
    client: httpx.AsyncClient, store: Store, seeded: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from persistence.errors import QueryTimeout

    async def too_slow(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        raise QueryTimeout("query exceeded its time limit")

    monkeypatch.setattr(store.documents.reads, "find", too_slow)
    response = await call(
        client,
        seeded,
        "documents.search",
        {"where": {"conditions": [{"field": "merchant", "op": "regex", "value": "^sh"}]}},
    )
    assert response.status_code == 400
    assert "exceeded its time limit" in response.json()["error"]["errorMessage"]
