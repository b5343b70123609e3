"""Every GraphQL operation the dashboard sends is valid against the service's schema, and the
overview's one request answers with what the charts draw (demo data, preferred currency)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
from graphql import parse, validate

from app.graphql.face import service_schema
from persistence.store import Store
from resolvers import build_registry
from resolvers.services.auth import accounts
from tests.conftest import Tenant, second_workspace

DASHBOARD = Path(__file__).parents[2] / "app" / "web" / "dashboard"
# A template literal that starts a GraphQL operation.
OPERATION = re.compile(r"`\s*((?:query|mutation)\b[^`]*)`", re.DOTALL)
# Named fragments of text the modules splice into their operations.
CONSTANT = re.compile(r"const (\w+) = (?:`([^`]*)`|\"([^\"]*)\")", re.DOTALL)


def operations() -> list[tuple[str, str]]:
    """(module, operation text) for every operation in the dashboard's modules."""
    sources = {path.name: path.read_text(encoding="utf-8") for path in DASHBOARD.glob("*.js")}
    constants = {
        name: template or quoted
        for source in sources.values()
        for name, template, quoted in CONSTANT.findall(source)
        if not (template or quoted).lstrip().startswith(("query", "mutation"))
    }

    def spliced(text: str) -> str:
        # A fragment may splice others in (rules.js: the where clause in the rule's definition).
        for _ in range(5):
            text = re.sub(r"\$\{(\w+)\}", lambda m: constants[m.group(1)], text)
        return text

    return [
        (module, spliced(text))
        for module, source in sources.items()
        for text in OPERATION.findall(source)
    ]


def test_every_operation_is_valid_against_the_schema() -> None:
    schema = service_schema(build_registry())._schema
    found = operations()
    assert len(found) >= 12, found  # overview, list, more, document, correct, archive, …
    for module, text in found:
        errors = validate(schema, parse(text))
        assert not errors, (module, text, errors)


async def test_the_overview_in_one_request(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await accounts.load_demo(store, alice.org_id, 40, seed=3)
    query = next(text for module, text in operations() if "query Overview" in text)
    variables: dict[str, Any] = {
        "byMonth": {"groupBy": "month"},
        "byCategory": {"groupBy": "category"},
        "latest": {"limit": 10, "sortBy": "docDate", "sortOrder": -1, "useSearch": False},
    }
    response = await client.post(
        "/v1/graphql", json={"query": query, "variables": variables}, headers=alice.headers(None)
    )
    body = response.json()
    # One workspace: the overview answers there without naming it.
    assert body["data"]["workspace"]["id"] == alice.org_id
    await second_workspace(store, alice)
    response = await client.post(
        "/v1/graphql", json={"query": query, "variables": variables}, headers=alice.headers(None)
    )
    body = response.json()
    # Two and none named: the list answers and the workspace asks for one (the app then picks).
    assert body["data"]["workspacesList"]["workspaces"][0]["id"] == alice.org_id
    assert body["data"]["workspace"] is None
    assert body["errors"][0]["extensions"]["status"] == 400

    response = await client.post(
        "/v1/graphql", json={"query": query, "variables": variables}, headers=alice.headers()
    )
    workspace = response.json()["data"]["workspace"]
    assert workspace["preferredCurrency"] == "USD"
    months = workspace["byMonth"]
    # Demo documents carry their rate, so the month totals add up to the whole.
    assert months["preferredTotal"]["converted"] == months["count"] > 30
    by_month = sum(float(g["preferredTotal"]["amount"]) for g in months["groups"])
    assert abs(by_month - float(months["preferredTotal"]["amount"])) < 0.01
    assert {g["key"] for g in workspace["byCategory"]["groups"]}
    assert len(workspace["latest"]["documents"]) == 10


async def test_preferred_currency_follows_the_workspace(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.workspaces._workspaces.update_one(  # no capability sets it yet
        {"_id": alice.org_id}, {"$set": {"preferredCurrency": "EUR"}}
    )
    response = await client.post(
        "/v1/graphql",
        json={"query": "{ workspace { preferredCurrency } }"},
        headers=alice.headers(),
    )
    assert response.json()["data"]["workspace"]["preferredCurrency"] == "EUR"
