"""Heavy GraphQL reads count against a per-key budget (issue 35, item 8): each answer costs a
point per 100 objects it holds, a key's budget refills by the minute, a spent key gets 429 with
Retry-After before its request runs, other keys are not affected, and every answer says its
cost in the X-RateLimit-* headers."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from app.graphql.read_budget import ReadBudget, objects_in
from app.host.config import Settings
from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, app_on
from tests.documents.conftest import doc

PAGE = "{ documentsConnection(first: 100) { nodes { id merchant } } }"
SMALL = "{ documentsConnection(first: 1) { totalCount } }"


@pytest.fixture
async def tight(store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    """The service with a budget of 5 points at once, 1 point a minute."""
    settings = Settings(graphql_read_points=5, graphql_read_points_per_minute=1)
    app = app_on(store, registry, settings)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://fincap.test") as http:
        yield http


async def post(http: httpx.AsyncClient, tenant: Tenant | None, query: str) -> httpx.Response:
    headers = tenant.headers() if tenant is not None else {}
    return await http.post("/v1/graphql", json={"query": query}, headers=headers)


async def test_an_answer_costs_a_point_per_hundred_objects(
    tight: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id, [doc(f"doc_{n:03d}") for n in range(250)]
    )
    small = await post(tight, alice, SMALL)
    assert small.status_code == 200, small.text
    assert small.headers["x-ratelimit-used"] == "1"  # 2 objects: at least one point
    assert small.headers["x-ratelimit-remaining"] == "4"
    assert small.headers["x-ratelimit-limit"] == "5"
    assert small.headers["x-ratelimit-resource"] == "graphql"
    page = await post(tight, alice, PAGE)
    # 100 documents + the connection + the data: 102 objects, 2 points.
    assert page.status_code == 200 and page.headers["x-ratelimit-used"] == "2"
    assert page.headers["x-ratelimit-remaining"] == "2"


async def test_a_spent_key_waits_and_others_do_not(
    tight: httpx.AsyncClient, store: Store, alice: Tenant, bob: Tenant
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id, [doc(f"doc_{n:03d}") for n in range(500)]
    )
    big = "{ documentsConnection(first: 100) { nodes { id merchant amount currency } } }"
    # A request's cost is known when it has run: the one that empties the budget is answered.
    for _ in range(3):
        answered = await post(tight, alice, big)
        assert answered.status_code == 200 and "errors" not in answered.json()
    refused = await post(tight, alice, SMALL)
    assert refused.status_code == 429, refused.text
    assert int(refused.headers["retry-after"]) >= 60  # a point a minute, and a debt to pay
    error = refused.json()["errors"][0]
    assert error["extensions"]["code"] == "TOO_MANY_REQUESTS"
    assert "GraphQL read budget" in error["message"] and "retry in" in error["message"]
    assert "data" not in refused.json()  # nothing ran
    # Another key (Bob's) has its own budget.
    assert (await post(tight, bob, SMALL)).status_code == 200
    # REST is not GraphQL's budget: the same key still reads there.
    rest = await tight.post("/v1/capabilities/documents.count", json={}, headers=alice.headers())
    assert rest.status_code == 200


async def test_a_request_without_a_credential_is_not_counted(tight: httpx.AsyncClient) -> None:
    answer = await post(tight, None, SMALL)
    assert "x-ratelimit-used" not in answer.headers
    assert answer.json()["errors"][0]["extensions"]["status"] == 401


def test_the_budget_refills_by_the_minute() -> None:
    now = [0.0]
    budget = ReadBudget(burst=2, per_minute=60, clock=lambda: now[0])
    data = {"documents": [{"id": n} for n in range(150)]}  # 151 objects: 2 points
    assert objects_in(data) == 151
    cost = budget.charge("key", data)
    assert (cost.points, cost.remaining) == (2, 0)
    assert budget.wait_for("key") == 1  # a point a second at 60 a minute
    now[0] = 1.0
    assert budget.wait_for("key") is None
    budget.charge("key", {"a": [{"b": {}} for _ in range(250)]})  # 501 objects, 6 points
    assert budget.wait_for("key") == 6  # 1 there, 6 spent: 5 owed, and 1 to spend
    assert budget.wait_for("another") is None
