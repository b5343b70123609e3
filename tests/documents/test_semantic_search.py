"""Ranked documents.search by words and meaning, through REST and GraphQL.

The store embeds documents as they are written (the real model); queries that share no word
with the documents must still find them, in English and German.
"""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta
from decimal import Decimal
from typing import Any, ClassVar

import httpx
import numpy as np
import pytest

from app.host.config import Settings
from app.host.services import build_services
from domain.where import WhereClause
from engines.ranking import embeddings
from persistence.documents import vector_index_definition, vector_search_pipeline
from persistence.documents.query import DocumentQuery
from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.services.documents.search_indexes import model_vectorizer, reindex
from resolvers.services.processing import pipeline
from resolvers.services.processing.pipeline import process_document
from resolvers.services.processing.pipeline_contract import Intake, StepContext
from resolvers.services.processing.pipeline_steps import Embed, SaveFields
from tests.conftest import Tenant, asgi_client, make_tenant
from tests.documents.conftest import call, doc, result
from tests.requires import requires
from tests.test_pipeline import received

pytestmark = requires("model")


def line(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "quantity": Decimal(1),
        "unitPrice": Decimal("1.00"),
        "amount": Decimal("1.00"),
        "taxAmount": None,
    }


CORPUS = [
    doc("doc_sbux", merchant="Starbucks", category="Meals", lineItems=[line("Caffe Latte")]),
    doc("doc_gh", merchant="GitHub", category="Software", lineItems=[line("Team plan")]),
    doc("doc_adobe", merchant="Adobe", category="Software", lineItems=[line("Creative Cloud")]),
    doc("doc_shell", merchant="Shell", category="Fuel", lineItems=[line("Unleaded 95")]),
    doc("doc_db", merchant="Deutsche Bahn", category="Travel", lineItems=[line("ICE Ticket")]),
    doc("doc_rewe", merchant="REWE", category="Groceries", lineItems=[line("Vollmilch")]),
    doc("doc_hotel", merchant="Marriott", category="Lodging", lineItems=[line("Room night")]),
    doc("doc_pharm", merchant="Walgreens", category="Healthcare", lineItems=[line("Ibuprofen")]),
]


@pytest.fixture
async def embedded(store: Store, alice: Tenant) -> Tenant:
    store.documents.collection.vectorize = model_vectorizer()
    await store.documents.writes.insert_many(alice.org_id, CORPUS)
    return alice


async def search(client: httpx.AsyncClient, tenant: Tenant, **body: Any) -> list[str]:
    body = {"searchType": "similarity", **body}
    page = result(await call(client, tenant, "documents.search", body))
    return [d["id"] for d in page["documents"]]


SEARCH = """query($input: SearchDocumentsInput!) {
  documentsSearch(input: $input) { documents { id merchant } nextCursor }
}"""


async def graphql_search(client: httpx.AsyncClient, tenant: Tenant, **body: Any) -> list[str]:
    response = await client.post(
        "/v1/graphql",
        json={"query": SEARCH, "variables": {"input": body}},
        headers=tenant.headers(),
    )
    payload = response.json()
    assert "errors" not in payload, payload
    return [d["id"] for d in payload["data"]["documentsSearch"]["documents"]]


async def test_documents_are_stored_with_a_compact_embedding(
    store: Store, embedded: Tenant
) -> None:
    raw = await store.db["documents"].find_one({"_id": "doc_sbux"})
    assert raw is not None
    vector = raw["embedding"]
    assert vector.subtype == 9 and len(vector) == 2 + embeddings.DIM  # int8, not doubles
    assert raw["embeddingModel"] == "use-multilingual-3-q8"
    listed = await store.documents.reads.get_many(embedded.org_id, ["doc_sbux"])
    assert "embedding" not in listed[0] and "indexedAt" not in listed[0]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("coffee", {"doc_sbux"}),
        ("software subscriptions", {"doc_gh", "doc_adobe"}),
        ("petrol station", {"doc_shell"}),
        ("train ride", {"doc_db"}),
        ("hotel stay", {"doc_hotel"}),
        ("Kaffee", {"doc_sbux"}),  # German
        ("Tankstelle", {"doc_shell"}),  # German: petrol station
        ("Apotheke", {"doc_pharm"}),  # German: pharmacy
    ],
)
async def test_meaning_finds_what_no_word_matches_rest(
    client: httpx.AsyncClient, embedded: Tenant, query: str, expected: set[str]
) -> None:
    found = await search(client, embedded, query=query, limit=len(expected))
    assert set(found) == expected


async def test_meaning_through_graphql(client: httpx.AsyncClient, embedded: Tenant) -> None:
    found = await graphql_search(
        client, embedded, query="software subscriptions", limit=2, searchType="similarity"
    )
    assert set(found) == {"doc_gh", "doc_adobe"}
    assert (await graphql_search(client, embedded, query="Kaffee", limit=1)) == ["doc_sbux"]


async def test_words_still_rank_first_and_typos_are_forgiven(
    client: httpx.AsyncClient, embedded: Tenant
) -> None:
    assert (await search(client, embedded, query="walgreens", limit=1)) == ["doc_pharm"]
    assert (await search(client, embedded, query="starbuks", limit=1)) == ["doc_sbux"]
    assert (await search(client, embedded, query="marriot", limit=1)) == ["doc_hotel"]


async def test_filters_come_first(
    client: httpx.AsyncClient, store: Store, embedded: Tenant
) -> None:
    await store.documents.writes.insert_many(
        embedded.org_id,
        [doc("doc_sbux_usd", merchant="Starbucks", category="Meals", currency="USD")],
    )
    where = {"conditions": [{"field": "currency", "op": "eq", "value": "USD"}]}
    assert (await search(client, embedded, query="coffee", where=where)) == ["doc_sbux_usd"]
    await store.documents.writes.set_archived(embedded.org_id, ["doc_sbux"], archived=True)
    found = await search(client, embedded, query="coffee", limit=5)
    assert "doc_sbux" not in found and found[0] == "doc_sbux_usd"
    archived = await search(client, embedded, query="coffee", archived="only", limit=5)
    assert archived[0] == "doc_sbux"
    exported = await search(client, embedded, query="coffee", exportStatus="exported")
    assert exported == []


async def test_another_workspace_sees_none_of_it(
    client: httpx.AsyncClient, embedded: Tenant, bob: Tenant
) -> None:
    assert await search(client, bob, query="coffee") == []
    assert await graphql_search(client, bob, query="coffee") == []


async def test_corrections_re_embed_and_the_index_follows(
    client: httpx.AsyncClient, store: Store, embedded: Tenant
) -> None:
    assert await search(client, embedded, query="airline", limit=1) != ["doc_rewe"]
    before = (await store.db["documents"].find_one({"_id": "doc_rewe"}))["embedding"]
    response = await call(
        client,
        embedded,
        "documents.update",
        {"id": "doc_rewe", "merchant": "Lufthansa", "category": "Travel", "summary": "Flight"},
    )
    assert response.status_code == 200, response.text
    after = (await store.db["documents"].find_one({"_id": "doc_rewe"}))["embedding"]
    assert bytes(after) != bytes(before)
    assert await search(client, embedded, query="airline", limit=1) == ["doc_rewe"]


async def test_new_documents_are_found_by_the_next_search(
    client: httpx.AsyncClient, store: Store, embedded: Tenant
) -> None:
    assert (await search(client, embedded, query="airline", limit=1)) != ["doc_air"]
    await store.documents.writes.insert_many(
        embedded.org_id,
        [doc("doc_air", merchant="Lufthansa", category="Travel", summary="Flight FRA to JFK")],
    )
    assert (await search(client, embedded, query="airline", limit=1)) == ["doc_air"]


async def test_mmr_diversifies_by_embeddings(
    client: httpx.AsyncClient, store: Store, embedded: Tenant
) -> None:
    copies = [
        doc(f"doc_copy{i}", merchant="Shell", category="Fuel", lineItems=[line("Unleaded 95")])
        for i in range(4)
    ]
    wash = doc(
        "doc_wash", merchant="Shell", category="Fuel", lineItems=[line("Car wash and vacuum")]
    )
    await store.documents.writes.insert_many(embedded.org_id, [*copies, wash])
    similar = await search(client, embedded, query="fuel", limit=3)
    diverse = await search(client, embedded, query="fuel", limit=3, searchType="mmr")
    alike = {"doc_shell", *(c["_id"] for c in copies)}
    assert set(similar) <= alike  # five identical receipts rank highest
    assert "doc_wash" in diverse  # MMR makes room for the different one


async def test_older_documents_are_not_dropped(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    """The ranked search used to see only the 2,000 newest candidates."""
    newer = [
        doc(f"doc_n{i:04}", merchant="Shell", docDate=date(2024, 6, 1) - timedelta(days=i % 300))
        for i in range(2_050)
    ]
    old = doc("doc_old", merchant="Shell", summary="Diesel and AdBlue", docDate=date(2019, 1, 1))
    await store.documents.writes.insert_many(alice.org_id, [*newer, old])
    assert (await search(client, alice, query="adblue", limit=1)) == ["doc_old"]


async def test_reindex_backfills_documents_written_without_vectors(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(alice.org_id, CORPUS)  # no vectorize: no embeddings
    assert await store.documents.search.count_needing_embeddings(alice.org_id) == len(CORPUS)
    # No word of a document, nor a category or kind the search vocabulary knows: meaning only.
    assert "doc_pharm" not in await search(client, alice, query="Schmerzmittel", limit=1)
    seen: list[tuple[int, int]] = []
    outcome = await reindex(
        store, [alice.org_id], batch=3, progress=lambda _, d, t: seen.append((d, t))
    )
    assert outcome["reindexed"] == {alice.org_id: len(CORPUS)}
    assert seen[0] == (0, 8) and seen[-1] == (8, 8)
    assert await store.documents.search.count_needing_embeddings(alice.org_id) == 0
    assert await search(client, alice, query="Schmerzmittel", limit=1) == ["doc_pharm"]
    again = await reindex(store, [alice.org_id])
    assert again["reindexed"] == {alice.org_id: 0}


def test_vector_search_pipeline_puts_vector_search_first_and_filters_after() -> None:
    where = {"conditions": [{"field": "currency", "op": "eq", "value": "EUR"}]}
    query = DocumentQuery(where=WhereClause.model_validate(where), export_status="not-exported")
    stages = vector_search_pipeline("org_1", query, [0.5, -0.5], 10, "documents_embedding", 200)
    first = stages[0]["$vectorSearch"]
    assert first["index"] == "documents_embedding" and first["path"] == "embedding"
    assert first["queryVector"] == [0.5, -0.5] and first["numCandidates"] == 200
    assert first["filter"] == {"workspaceId": "org_1", "archived": False}
    assert stages[1]["$match"]["currency"] == "EUR"
    assert stages[1]["$match"]["exportStatus"] == {"$ne": "exported"}
    assert stages[2] == {"$project": {"_id": 1, "score": {"$meta": "vectorSearchScore"}}}
    assert stages[-1] == {"$limit": 10}
    definition = vector_index_definition(512)
    assert definition["fields"][0]["numDimensions"] == 512


async def test_mongodb_vector_backend_is_used_behind_the_same_interface(
    client: httpx.AsyncClient, store: Store, embedded: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With FINCAP_VECTOR_SEARCH=mongodb the nearest documents come from $vectorSearch (faked
    here with the stored vectors, as the test stores lack the stage)."""
    from dataclasses import replace

    services = client._transport.app.state.services  # type: ignore[attr-defined]
    services.search.config = replace(services.search.config, vector_backend="mongodb")
    calls: list[tuple[str, int]] = []

    async def nearest(
        workspace_id: str,
        query: DocumentQuery,
        vector: list[float],
        limit: int,
        index_name: str,
        num_candidates: int,
    ) -> list[tuple[str, float]]:
        calls.append((index_name, limit))
        rows = await store.db["documents"].find({"workspaceId": workspace_id}).to_list(None)
        scored = []
        for row in rows:
            stored = np.frombuffer(bytes(row["embedding"])[2:], dtype=np.int8).astype(np.float32)
            cosine = float(stored @ np.asarray(vector) / np.linalg.norm(stored))
            scored.append((row["_id"], (1 + cosine) / 2))
        return sorted(scored, key=lambda s: -s[1])[:limit]

    monkeypatch.setattr(store.documents.search, "vector_search", nearest)
    assert await search(client, embedded, query="Tankstelle", limit=1) == ["doc_shell"]
    assert calls and calls[0][0] == "documents_embedding"


@pytest.mark.wire
async def test_meaning_over_the_wire(wire_store: Store, registry: Registry) -> None:
    """SecantusDB keeps the BSON int8 vectors byte for byte; the index refreshes by indexedAt."""
    wire_store.documents.collection.vectorize = model_vectorizer()
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    bob = await make_tenant(wire_store, "bob@example.com", "Bob Ltd")
    await wire_store.documents.writes.insert_many(alice.org_id, CORPUS)
    await wire_store.documents.writes.insert_many(
        bob.org_id, [doc("doc_bob", merchant="Starbucks")]
    )
    raw = await wire_store.db["documents"].find_one({"_id": "doc_sbux"})
    assert raw is not None and raw["embedding"].subtype == 9
    assert len(bytes(raw["embedding"])) == 2 + embeddings.DIM
    async with asgi_client(wire_store, registry) as http:
        assert await search(http, alice, query="Tankstelle", limit=1) == ["doc_shell"]
        assert "doc_bob" not in await search(http, alice, query="coffee", limit=8)
        response = await call(
            http, alice, "documents.update", {"id": "doc_rewe", "summary": "Espresso and cake"}
        )
        assert response.status_code == 200, response.text
        assert "doc_rewe" in await search(http, alice, query="Kaffee", limit=2)


class ReadStarbucks:
    """Stands in for reading a file: the fields an analysis would find."""

    name: ClassVar[str] = "read-starbucks"

    def applies(self, intake: Intake) -> bool:
        return True

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        fields = {"merchant": "Starbucks", "category": "Meals", "summary": "Caffe Latte"}
        return dataclasses.replace(intake, fields=fields)


async def test_the_pipeline_embeds_before_saving(
    store: Store, alice: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.documents.collection.vectorize = model_vectorizer()
    monkeypatch.setattr(pipeline, "STEPS", (ReadStarbucks(), Embed(), SaveFields()))
    activity = await received(store, alice, "doc_new", "queued")
    queued = await store.db["documents"].find_one({"_id": "doc_new"})
    assert queued is not None
    await process_document(build_services(Settings(), store), alice.org_id, "doc_new", activity)
    raw = await store.db["documents"].find_one({"_id": "doc_new"})
    assert raw is not None and raw["embeddingModel"] == "use-multilingual-3-q8"
    assert bytes(raw["embedding"]) != bytes(queued["embedding"])  # the Shell stand-in's
    stored = np.frombuffer(bytes(raw["embedding"])[2:], dtype=np.int8).astype(np.float32)
    coffee = embeddings.load_embedder().embed(["coffee"])[0]
    assert float(stored @ coffee / np.linalg.norm(stored)) > 0.3


async def test_bulk_edits_re_embed(
    client: httpx.AsyncClient, store: Store, embedded: Tenant
) -> None:
    before = (await store.db["documents"].find_one({"_id": "doc_gh"}))["embedding"]
    # Bulk edits wait for approval by default; this workspace runs them at once.
    gate = {"capabilitySlug": "documents.bulk-edit", "gated": False}
    result(await call(client, embedded, "approvals.configure", gate))
    body = {"merchant": "GitHub", "changes": {"category": "Developer tools"}, "dryRun": False}
    done = result(await call(client, embedded, "documents.bulk-edit", body))
    assert done["modified"] == 1
    after = (await store.db["documents"].find_one({"_id": "doc_gh"}))["embedding"]
    assert bytes(after) != bytes(before)
