"""Every GraphQL block of the dashboards guide runs: queries against a seeded workspace through
the ASGI app, with no error and something found; subscriptions validated against the service's
schema (tests/events runs filtered subscriptions over a socket). A renamed field or filter
fails here, not in a reader's explorer."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from graphql import build_schema, parse, validate

from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import doc
from tests.graphql.helpers import gql

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide" / "dashboards.md"
SERVICE_SDL = Path(__file__).with_name("service.graphql")
BLOCKS = re.findall(r"```graphql\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
# Values for the variables the guide's queries declare.
VARIABLES = {"since": "2024-01-01", "after": None}


def test_the_guide_has_queries_and_a_subscription() -> None:
    kinds = [block.split(None, 1)[0] for block in BLOCKS]
    assert kinds.count("query") >= 2 and "subscription" in kinds, kinds


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.startswith("query")])
async def test_each_query_runs(
    block: str, client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id,
        [
            doc("doc_a", docDate=date(2024, 3, 2), amount=Decimal("12.00"), conversionRate=1.0),
            doc("doc_b", docDate=date(2024, 4, 9), category="Travel", currency="USD"),
        ],
    )
    declared = set(re.findall(r"\$(\w+):", block.split("{", 1)[0]))
    answer = await gql(client, block, {k: VARIABLES[k] for k in declared}, alice.headers())
    assert "errors" not in answer, answer
    assert "doc_a" in str(answer["data"]) or "'count': 2" in str(answer["data"]), answer


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.startswith("subscription")])
def test_each_subscription_is_valid(block: str) -> None:
    schema = build_schema(SERVICE_SDL.read_text(encoding="utf-8"))
    assert validate(schema, parse(block)) == []
