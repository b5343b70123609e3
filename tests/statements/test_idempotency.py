"""Importing a statement twice adds nothing; identical lines of one statement stay distinct."""

from __future__ import annotations

import asyncio
import random
import uuid

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mongomock_motor import AsyncMongoMockClient

from persistence.store import Store
from resolvers import build_registry
from tests.conftest import Tenant, asgi_client, make_tenant
from tests.hypothesis_profiles import examples
from tests.statements.helpers import all_transactions, fixture, import_bytes, result

FILES = [
    "camt053-batch.xml",
    "mt940-multiline-86.sta",
    "ofx1-sgml.ofx",
    "ofx2-xml.qfx",
    "csv-sparkasse.csv",
]


@pytest.mark.parametrize("name", FILES)
async def test_the_same_file_twice_adds_nothing(
    client: httpx.AsyncClient, alice: Tenant, name: str
) -> None:
    first = result(await import_bytes(client, alice, fixture(name)))
    again = result(await import_bytes(client, alice, fixture(name)))
    assert first["added"] > 0 and first["alreadyThere"] == 0
    assert (again["added"], again["alreadyThere"]) == (0, first["added"])
    assert len(await all_transactions(client, alice)) == first["added"]


async def test_another_workspace_imports_its_own_copy(
    client: httpx.AsyncClient, alice: Tenant, bob: Tenant
) -> None:
    result(await import_bytes(client, alice, fixture("ofx1-sgml.ofx")))
    assert result(await import_bytes(client, bob, fixture("ofx1-sgml.ofx")))["added"] == 3
    assert len(await all_transactions(client, bob)) == 3


HEADER = '"Buchungstag";"Betrag";"Waehrung";"Beguenstigter/Zahlungspflichtiger";"Verwendungszweck"'
# A small pool, so that identical lines (two coffees of one day) are drawn often.
ROWS = st.tuples(
    st.sampled_from(["03.11.2026", "04.11.2026"]),
    st.sampled_from(["-3,80", "-12,50", "1.500,00"]),
    st.sampled_from(["Café Anna", "CAFE ANNA", "Shell"]),
    st.sampled_from(["Karte 7", "karte  7", ""]),
)


def csv_of(rows: list[tuple[str, str, str, str]]) -> bytes:
    lines = [HEADER] + [
        ";".join(f'"{cell}"' for cell in (d, a, "EUR", c, r)) for d, a, c, r in rows
    ]
    return ("\n".join(lines) + "\n").encode()


async def _scenario(rows: list[tuple[str, str, str, str]], seed: int) -> None:
    client_db = AsyncMongoMockClient(tz_aware=True)
    store = Store(client_db[f"prop_{uuid.uuid4().hex[:8]}"])
    await store.ensure_indexes()
    tenant = await make_tenant(store, "p@example.com", "P")
    async with asgi_client(store, REGISTRY) as client:
        first = result(await import_bytes(client, tenant, csv_of(rows), account="DE01"))
        # Every line is a transaction, identical ones included.
        assert first["added"] == len(rows)
        shuffled = rows[:]
        random.Random(seed).shuffle(shuffled)
        again = result(await import_bytes(client, tenant, csv_of(shuffled), account="DE01"))
        assert (again["added"], again["alreadyThere"]) == (0, len(rows))
        # One more copy of a line the statement has: one more transaction, no more.
        extra = [*shuffled, shuffled[seed % len(shuffled)]]
        more = result(await import_bytes(client, tenant, csv_of(extra), account="DE01"))
        assert (more["added"], more["alreadyThere"]) == (1, len(rows))
        assert await store.db["transactions"].count_documents({}) == len(rows) + 1


REGISTRY = build_registry()


@settings(
    max_examples=examples(40),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(rows=st.lists(ROWS, min_size=1, max_size=12), seed=st.integers(0, 10_000))
def test_shuffled_and_duplicated_statements(
    rows: list[tuple[str, str, str, str]], seed: int
) -> None:
    asyncio.run(_scenario(rows, seed))
