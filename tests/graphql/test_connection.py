"""documentsConnection: typed filters, orderBy, Relay paging and totalCount, through the app."""

from __future__ import annotations

import base64
from datetime import date
from decimal import Decimal
from typing import Any

import httpx
import pytest

from domain.documents import SEARCH_FILTERS
from domain.typed_filters import translate
from persistence.documents.totals import DocumentTotals
from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result
from tests.graphql.helpers import gql

MERCHANTS = ["Shell", "Starbucks", "Uber", "Bolt", "Lidl", "Aldi"]
DOCS = [
    doc(
        f"doc_{i:02d}",
        merchant=MERCHANTS[i % len(MERCHANTS)],
        amount=Decimal(f"{5 + i * 3}.25"),
        docDate=date(2024, 1 + i % 12, 1 + i % 27),
        category=["Fuel", "Meals", "Travel"][i % 3],
        paymentStatus=["paid", "unpaid", "partially-paid"][i % 3],
    )
    for i in range(30)
]

PAGE = """
query($filter: DocumentFilter, $orderBy: [DocumentOrderBy!], $first: Int, $after: String,
      $last: Int, $before: String) {
  documentsConnection(filter: $filter, orderBy: $orderBy, first: $first, after: $after,
                      last: $last, before: $before) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id amount merchant } }
    nodes { id }
  }
}
"""


@pytest.fixture
async def stocked(store: Store, alice: Tenant) -> Tenant:
    await store.documents.writes.insert_many(alice.org_id, DOCS)
    return alice


async def page(
    client: httpx.AsyncClient, tenant: Tenant, query: str = PAGE, **variables: Any
) -> dict[str, Any]:
    body = await gql(client, query, variables, tenant.headers())
    assert "errors" not in body, body
    connection: dict[str, Any] = body["data"]["documentsConnection"]
    return connection


async def rest_pages(
    client: httpx.AsyncClient, tenant: Tenant, body: dict[str, Any]
) -> tuple[list[str], int | None]:
    """Every id REST's documents.search lists for ``body``, page by page, and its ``found``."""
    ids: list[str] = []
    cursor = None
    while True:
        found = result(
            await call(
                client,
                tenant,
                "documents.search",
                {**body, **({"cursor": cursor} if cursor else {})},
            )
        )
        ids += [d["id"] for d in found["documents"]]
        cursor = found["nextCursor"]
        if not cursor:
            return ids, found.get("found")


async def rest_ids(
    client: httpx.AsyncClient, tenant: Tenant, where: Any, sort_by: str, order: int
) -> list[str]:
    """Every id REST's documents.search lists for ``where`` in this order."""
    body: dict[str, Any] = {"useSearch": False, "limit": 100, "sortBy": sort_by, "sortOrder": order}
    if where is not None:
        body["where"] = where
    return (await rest_pages(client, tenant, body))[0]


FILTER = {
    "amount": {"gte": "10"},
    "or": [{"category": {"eq": "Meals"}}, {"merchant": {"startsWith": "sh"}}],
    "not": {"paymentStatus": {"eq": "PARTIALLY_PAID"}},
}


async def test_pages_forward_and_back_like_rest(client: httpx.AsyncClient, stocked: Tenant) -> None:
    where = translate(
        {
            "amount": {"gte": Decimal("10")},
            "or": [{"category": {"eq": "Meals"}}, {"merchant": {"startsWith": "sh"}}],
            "not": {"paymentStatus": {"eq": "partially-paid"}},
        },
        SEARCH_FILTERS,
    ).where
    assert where is not None
    expected = await rest_ids(client, stocked, where.model_dump(exclude_none=True), "amount", 1)
    assert 4 < len(expected) < 30
    order = [{"field": "AMOUNT", "direction": "ASC"}]
    seen: list[str] = []
    after = None
    while True:
        got = await page(client, stocked, filter=FILTER, orderBy=order, first=3, after=after)
        assert got["totalCount"] == len(expected)
        assert [e["node"]["id"] for e in got["edges"]] == [n["id"] for n in got["nodes"]]
        assert got["pageInfo"]["hasPreviousPage"] is (after is not None)
        seen += [n["id"] for n in got["nodes"]]
        if not got["pageInfo"]["hasNextPage"]:
            break
        assert got["pageInfo"]["endCursor"] == got["edges"][-1]["cursor"]
        after = got["pageInfo"]["endCursor"]
    assert seen == expected
    # Back from the end: the same documents, the same pages' order.
    back: list[str] = []
    before = None
    while True:
        got = await page(client, stocked, filter=FILTER, orderBy=order, last=4, before=before)
        back = [n["id"] for n in got["nodes"]] + back
        assert got["pageInfo"]["hasNextPage"] is (before is not None)
        if not got["pageInfo"]["hasPreviousPage"]:
            break
        before = got["pageInfo"]["startCursor"]
    assert back == expected
    # An edge's cursor resumes right after it.
    first = await page(client, stocked, filter=FILTER, orderBy=order, first=5)
    resumed = await page(
        client, stocked, filter=FILTER, orderBy=order, first=2, after=first["edges"][1]["cursor"]
    )
    assert [n["id"] for n in resumed["nodes"]] == expected[2:4]


async def test_default_order_is_newest_first_and_page_of_20(
    client: httpx.AsyncClient, stocked: Tenant
) -> None:
    got = await page(client, stocked)
    expected = await rest_ids(client, stocked, None, "docDate", -1)
    assert [n["id"] for n in got["nodes"]] == expected[:20]
    assert got["totalCount"] == 30 and got["pageInfo"]["hasNextPage"] is True


async def test_total_count_is_read_only_when_selected(
    client: httpx.AsyncClient, stocked: Tenant, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted: list[int] = []
    original = store.documents.totals.of

    async def totals(*args: Any, **kwargs: Any) -> Any:
        counted.append(1)
        return await original(*args, **kwargs)

    monkeypatch.setattr(store.documents.totals, "of", totals)
    query = "{ documentsConnection(first: 2) { nodes { id } pageInfo { hasNextPage } } }"
    body = await gql(client, query, None, stocked.headers())
    assert len(body["data"]["documentsConnection"]["nodes"]) == 2 and counted == []
    query = "{ documentsConnection(first: 2) { ... on DocumentConnection { totalCount } } }"
    body = await gql(client, query, None, stocked.headers())
    assert body["data"]["documentsConnection"]["totalCount"] == 30 and counted == [1]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ('{ documentsConnection(filter: {amout: {gt: "1"}}) { totalCount } }', "amout"),
        ("{ documentsConnection(filter: {amount: {gt: true}}) { totalCount } }", "Decimal"),
        ('{ documentsConnection(filter: {docType: {eq: "receipt"}}) { totalCount } }', "DocType"),
        ("{ documentsConnection(filter: {docType: {eq: RECEIPTS}}) { totalCount } }", "RECEIPTS"),
        ('{ documentsConnection(filter: {merchant: {gt: "a"}}) { totalCount } }', "gt"),
        ("{ documentsConnection(orderBy: [{field: WHATEVER}]) { totalCount } }", "WHATEVER"),
    ],
)
async def test_wrong_fields_and_types_are_refused_before_execution(
    client: httpx.AsyncClient, stocked: Tenant, query: str, message: str
) -> None:
    body = await gql(client, query, None, stocked.headers())
    assert "data" not in body or body["data"] is None, body
    assert message in body["errors"][0]["message"]


async def error_of(client: httpx.AsyncClient, tenant: Tenant, **variables: Any) -> str:
    body = await gql(client, PAGE, variables, tenant.headers())
    assert body["data"]["documentsConnection"] is None, body
    message: str = body["errors"][0]["message"]
    assert body["errors"][0]["extensions"]["code"] == "BAD_REQUEST", body
    return message


async def test_bad_pages_are_clear_errors(
    client: httpx.AsyncClient, stocked: Tenant, bob: Tenant, store: Store
) -> None:
    assert "first: between 1 and 100" in await error_of(client, stocked, first=101)
    assert "last: between 1 and 100" in await error_of(client, stocked, last=0)
    assert "first and last" in await error_of(client, stocked, first=2, last=2)
    assert "use it with last" in await error_of(client, stocked, first=2, before="x")
    assert "orderBy: one key" in await error_of(
        client, stocked, orderBy=[{"field": "AMOUNT"}, {"field": "ID"}]
    )
    assert "filter.amount.gt: money values have at most 2 decimal places" in await error_of(
        client, stocked, filter={"amount": {"gt": "1.234"}}
    )
    assert "filter.merchant.regex: regex not accepted" in await error_of(
        client, stocked, filter={"merchant": {"regex": "(a+)+$"}}
    )
    deep: dict[str, Any] = {"merchant": {"eq": "x"}}
    for _ in range(5):
        deep = {"or": [deep, {"amount": {"gt": "1"}}]}
    assert "nest at most 4 levels" in await error_of(client, stocked, filter=deep)
    many = {"or": [{"merchant": {"eq": f"m{i}"}} for i in range(60)]}
    assert "filter" in await error_of(client, stocked, filter=many)
    # Cursors: forged, of another filter, of another workspace.
    first = await page(client, stocked, first=2)
    cursor = first["pageInfo"]["endCursor"]
    assert "not a cursor" in await error_of(client, stocked, first=2, after="forged")
    forged = base64.urlsafe_b64encode(b'{"v":null,"id":"doc_00"}').decode()
    assert "not a cursor" in await error_of(client, stocked, first=2, after=forged)
    assert "different query" in await error_of(
        client, stocked, first=2, after=cursor, filter={"amount": {"gt": "1"}}
    )
    await store.documents.writes.insert_many(bob.org_id, [doc("doc_bob")])
    assert "different query" in await error_of(client, bob, first=2, after=cursor)


async def test_workspace_connection_is_scoped_to_the_workspace(
    client: httpx.AsyncClient, stocked: Tenant, bob: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(bob.org_id, [doc("doc_bob", merchant="Shell")])
    query = """{ workspace { id documentsConnection(filter: {merchant: {eq: "Shell"}}) {
        totalCount nodes { id merchant duplicates { id } } } } }"""
    mine = (await gql(client, query, None, stocked.headers()))["data"]["workspace"]
    assert mine["documentsConnection"]["totalCount"] == 5
    assert {n["id"] for n in mine["documentsConnection"]["nodes"]} == {
        d["_id"] for d in DOCS if d["merchant"] == "Shell"
    }
    theirs = (await gql(client, query, None, bob.headers()))["data"]["workspace"]
    assert [n["id"] for n in theirs["documentsConnection"]["nodes"]] == ["doc_bob"]


async def test_old_listing_fields_are_deprecated(client: httpx.AsyncClient) -> None:
    from app.graphql.face import service_schema
    from resolvers import build_registry

    schema = service_schema(build_registry())._schema
    assert "documentsConnection" in schema.query_type.fields["documentsSearch"].deprecation_reason
    assert schema.type_map["Workspace"].fields["documents"].deprecation_reason
    assert not schema.type_map["Workspace"].fields["documentsConnection"].deprecation_reason


async def test_total_count_comes_from_the_rollups_where_they_cover_the_filter(
    client: httpx.AsyncClient, stocked: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filter on rollup dimensions (category, whole months) is counted from the rows; one on
    a field no row keeps (amount) from the documents; both counts right."""
    sources: list[str] = []
    original = DocumentTotals.of

    async def spied(self: Any, *args: Any, **kwargs: Any) -> Any:
        found = await original(self, *args, **kwargs)
        sources.append(found.source)
        return found

    monkeypatch.setattr(DocumentTotals, "of", spied)
    covered = {"category": {"in": ["Fuel", "Meals"]}, "docDate": {"gte": "2024-03-01"}}
    answer = await page(client, stocked, filter=covered, first=2)
    expected = [d for d in DOCS if d["category"] in ("Fuel", "Meals")
                and d["docDate"] >= date(2024, 3, 1)]  # fmt: skip
    assert answer["totalCount"] == len(expected) and sources == ["rollups:month-category"]
    answer = await page(client, stocked, filter={"amount": {"gt": "50"}}, first=2)
    assert answer["totalCount"] == sum(1 for d in DOCS if d["amount"] > 50)
    assert sources[1:] == ["documents"]
    body = await gql(
        client, "{ documentsConnection(first: 2) { nodes { id } } }", {}, stocked.headers()
    )
    assert len(body["data"]["documentsConnection"]["nodes"]) == 2
    assert len(sources) == 2  # not selected: not counted


SEARCH_PAGE = """
query($search: String, $filter: DocumentFilter, $orderBy: [DocumentOrderBy!], $first: Int,
      $after: String, $last: Int) {
  documentsConnection(search: $search, filter: $filter, orderBy: $orderBy, first: $first,
                      after: $after, last: $last) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id merchant } }
    nodes { id }
  }
}
"""


async def rest_ranked(
    client: httpx.AsyncClient, tenant: Tenant, text: str, where: Any
) -> tuple[list[str], int | None]:
    """Every id REST's documents.search ranks for ``text`` (search mode), and its ``found``."""
    body = {"useSearch": True, "query": text, "limit": 4, "where": where}
    return await rest_pages(client, tenant, body)


async def searched(client: httpx.AsyncClient, tenant: Tenant, **variables: Any) -> dict[str, Any]:
    return await page(client, tenant, SEARCH_PAGE, **variables)


async def test_search_ranks_like_rest_and_pages_forward(
    client: httpx.AsyncClient, stocked: Tenant
) -> None:
    """documentsConnection(search:) is documents.search's search mode as a connection, so the
    deprecated documentsSearch has a replacement for ranked search too."""
    where = {"conditions": [{"field": "amount", "op": "gte", "value": "10"}]}
    expected, found = await rest_ranked(client, stocked, "shell", where)
    assert expected and expected[0] in {d["_id"] for d in DOCS if d["merchant"] == "Shell"}
    typed = {"amount": {"gte": "10"}}
    seen: list[str] = []
    after = None
    while True:
        got = await searched(client, stocked, search="shell", filter=typed, first=2, after=after)
        assert got["totalCount"] == found
        assert [e["node"]["id"] for e in got["edges"]] == [n["id"] for n in got["nodes"]]
        assert got["pageInfo"]["hasPreviousPage"] is (after is not None)
        seen += [n["id"] for n in got["nodes"]]
        if not got["pageInfo"]["hasNextPage"]:
            break
        after = got["pageInfo"]["endCursor"]
    assert seen == expected
    # An edge's cursor resumes right after it.
    first = await searched(client, stocked, search="shell", filter=typed, first=3)
    resumed = await searched(
        client, stocked, search="shell", filter=typed, first=2, after=first["edges"][0]["cursor"]
    )
    assert [n["id"] for n in resumed["nodes"]] == expected[1:3]


async def test_search_refuses_what_a_ranking_cannot_do(
    client: httpx.AsyncClient, stocked: Tenant
) -> None:
    async def error(**variables: Any) -> str:
        body = await gql(client, SEARCH_PAGE, variables, stocked.headers())
        assert body.get("errors"), body
        return str(body["errors"][0]["message"])

    assert "paged forward only" in await error(search="shell", last=2)
    assert "ordered by relevance" in await error(search="shell", orderBy=[{"field": "AMOUNT"}])
    ranked = await searched(client, stocked, search="shell", first=1)
    ordered = await page(client, stocked, first=1)
    # A cursor of another search, or of the ordered list, is not this search's.
    assert "different query" in await error(
        search="uber", first=1, after=ranked["pageInfo"]["endCursor"]
    )
    assert "different query" in await error(
        search="shell", first=1, after=ordered["pageInfo"]["endCursor"]
    )
    # A blank search is the ordered list.
    blank = await searched(client, stocked, search="  ", first=30)
    assert [n["id"] for n in blank["nodes"]] == [
        n["id"] for n in (await page(client, stocked, first=30))["nodes"]
    ]
