"""Attack M1 (issue 35): 600 unique 64 KB GraphQL documents sent with no credential are each
parsed and validated on the event loop, for nothing they may read; a victim's searches waited
~400 ms longer at p95 (bench/attacks.py). What a client address may send with no credential is
now a budget in KB of document text, refused with 429 and Retry-After before parsing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from app.graphql.read_budget import AnonymousBudget
from app.host.config import Settings
from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, app_on


def wide_document(n: int) -> str:
    """A valid document of about 10 KB, unique by ``n``."""
    return f"query Q{n} {{ " + " ".join(f"a{i}: __typename" for i in range(600)) + " }"


def client(app: object, host: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(host, 40000))  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=transport, base_url="http://fincap.test")


@pytest.fixture
async def app(store: Store, registry: Registry) -> AsyncIterator[object]:
    """The service with 64 KB at once and 1 KB a minute for GraphQL sent with no credential."""
    yield app_on(
        store, registry, Settings(graphql_anonymous_kb=64, graphql_anonymous_kb_per_minute=1)
    )


async def test_an_address_without_a_credential_waits_after_its_budget(
    app: object, alice: Tenant
) -> None:
    async with client(app, "203.0.113.7") as http:
        sizes = []
        answers = []
        for n in range(8):
            query = wide_document(n)
            sizes.append(len(query.encode()))
            answers.append(await http.post("/v1/graphql", json={"query": query}))
        # Each document is ~10 KB (10 KB charged): six fit in 64 KB, the seventh does not.
        assert all(size > 10_000 for size in sizes)
        assert [a.status_code for a in answers[:6]] == [200] * 6
        refused = answers[6]
        assert refused.status_code == 429, refused.text
        assert int(refused.headers["retry-after"]) >= 60  # 1 KB a minute
        error = refused.json()["errors"][0]
        assert error["extensions"]["code"] == "TOO_MANY_REQUESTS"
        assert "no credential" in error["message"] and "retry in" in error["message"]
        assert "data" not in refused.json()
        # The same address with a key is not this budget's business.
        signed = await http.post(
            "/v1/graphql", json={"query": wide_document(99)}, headers=alice.headers()
        )
        assert signed.status_code == 200
        # A wrong key is no credential: still refused.
        wrong = {"Authorization": "Bearer sk_not-a-key"}
        again = await http.post("/v1/graphql", json={"query": wide_document(7)}, headers=wrong)
        assert again.status_code == 429
        # What is left (4 KB) still pays for a small document: the explorer's first query.
        small = await http.post("/v1/graphql", json={"query": "{ __typename }"})
        assert small.status_code == 200 and small.json()["data"] == {"__typename": "Query"}
    # Another address has a budget of its own.
    async with client(app, "198.51.100.9") as other:
        assert (
            await other.post("/v1/graphql", json={"query": wide_document(1)})
        ).status_code == 200


def test_the_budget_is_in_kilobytes_and_refills() -> None:
    now = [0.0]
    budget = AnonymousBudget(burst_kb=64, kb_per_minute=60, clock=lambda: now[0])
    assert budget.take("a", "x" * 40 * 1024) is None
    wait = budget.take("a", "x" * 40 * 1024)  # 24 KB left: 16 KB short, at 1 KB a second
    assert wait == 16
    now[0] += 16
    assert budget.take("a", "x" * 40 * 1024) is None
    # A document over the whole budget costs the budget, never more (it is refused for its
    # size after this anyway): it can be paid.
    now[0] += 64
    assert budget.take("b", "x" * 500 * 1024) is None
