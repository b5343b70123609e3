"""documents.search finds what people type: a kind of document and a kind of business, in the
languages fincap reads, through the ASGI app.

"hotel invoice" and "Hotel Rechnung" name no word a hotel's invoice prints (its merchant is
Marriott, its category Lodging, its kind invoice); before the search vocabulary they ranked a
railway's receipts first, or found nothing. Both are checked by words alone (documents without
embeddings: the model not installed, or not yet reindexed) and with the model.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from engines.extraction.fields.parser import describe
from persistence.store import Store
from resolvers.services.documents.search_indexes import model_vectorizer
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result
from tests.requires import requires


def document(doc_id: str, merchant: str, category: str, doc_type: str, item: str) -> dict:
    """A document as extraction writes it: its summary names its kind and merchant."""
    return doc(
        doc_id,
        merchant=merchant,
        category=category,
        docType=doc_type,
        summary=describe(doc_type, merchant, None, None, None),
        lineItems=[{"description": item, "quantity": None, "unitPrice": None, "amount": None}],
    )


HOTELS = {"doc_marriott", "doc_hilton"}
CORPUS = [
    document("doc_marriott", "Marriott", "Lodging", "invoice", "Room night"),
    document("doc_hilton", "Hilton", "Lodging", "invoice", "Room night, parking"),
    *(
        document(f"doc_db{i}", "Deutsche Bahn", "Travel", "receipt", "ICE Ticket Berlin-München")
        for i in range(5)
    ),
    document("doc_netpresse", "Netpresse", "Other", "invoice", "Zeitschrift Abo"),
    document("doc_vodafone", "Vodafone", "Telecom", "invoice", "Mobile plan"),
    document("doc_shell", "Shell", "Fuel", "receipt", "Super E10"),
    document("doc_uber", "Uber", "Transport", "receipt", "Trip"),
    document("doc_sbux", "Starbucks", "Meals", "receipt", "Caffe Latte"),
]


async def search(client: httpx.AsyncClient, tenant: Tenant, query: str, limit: int) -> Any:
    body = {"query": query, "limit": limit, "searchType": "similarity"}
    return result(await call(client, tenant, "documents.search", body))


async def first(client: httpx.AsyncClient, tenant: Tenant, query: str, limit: int) -> list[str]:
    return [d["id"] for d in (await search(client, tenant, query, limit))["documents"]]


QUERIES = [
    ("hotel invoice", HOTELS),
    ("Hotel Rechnung", HOTELS),  # German
    ("Hotelrechnung", HOTELS),  # German, one word
    ("facture hôtel", HOTELS),  # French
    ("taxi receipt", {"doc_uber"}),
    ("Tankstelle", {"doc_shell"}),  # German: petrol station
    ("gas station", {"doc_shell"}),
    ("coffee", {"doc_sbux"}),
]


@pytest.fixture
async def words_only(store: Store, alice: Tenant) -> Tenant:
    await store.documents.writes.insert_many(alice.org_id, CORPUS)
    return alice


@pytest.mark.parametrize(("query", "expected"), QUERIES)
async def test_words_name_the_kind_and_the_trade(
    client: httpx.AsyncClient, words_only: Tenant, query: str, expected: set[str]
) -> None:
    assert set(await first(client, words_only, query, len(expected))) == expected


async def test_a_kind_of_document_alone_finds_that_kind(
    client: httpx.AsyncClient, words_only: Tenant
) -> None:
    invoices = {d["_id"] for d in CORPUS if d["docType"] == "invoice"}
    for query in ("invoices", "Rechnungen", "factura"):
        assert set(await first(client, words_only, query, 10)) == invoices, query


@pytest.fixture
async def embedded(store: Store, alice: Tenant) -> Tenant:
    store.documents.collection.vectorize = model_vectorizer()
    await store.documents.writes.insert_many(alice.org_id, CORPUS)
    return alice


@requires("model")
@pytest.mark.parametrize(("query", "expected"), QUERIES)
async def test_with_meaning_the_hotels_still_come_first(
    client: httpx.AsyncClient, embedded: Tenant, query: str, expected: set[str]
) -> None:
    assert set(await first(client, embedded, query, len(expected))) == expected


async def every_page(client: httpx.AsyncClient, tenant: Tenant, query: str) -> tuple[int, list]:
    """``found`` of the first page, and the documents of every page."""
    body: dict[str, Any] = {"query": query, "limit": 2, "searchType": "similarity"}
    page = result(await call(client, tenant, "documents.search", body))
    found, documents = page["found"], list(page["documents"])
    while page["nextCursor"]:
        body["cursor"] = page["nextCursor"]
        page = result(await call(client, tenant, "documents.search", body))
        assert page["found"] == found
        documents += page["documents"]
    return found, documents


async def test_the_count_is_what_the_pages_list(
    client: httpx.AsyncClient, words_only: Tenant
) -> None:
    found, documents = await every_page(client, words_only, "Hotel Rechnung")
    # The hotels' invoices first, then the other invoices: the kind matched, not the trade.
    assert found == len(documents) == 4
    assert {d["id"] for d in documents[:2]} == HOTELS
    assert {d["id"] for d in documents[2:]} == {"doc_netpresse", "doc_vodafone"}
    found, documents = await every_page(client, words_only, "Mondlandung")
    assert (found, documents) == (0, [])
    filtered = result(await call(client, words_only, "documents.search", {"useSearch": False}))
    assert filtered.get("found") is None  # filter mode: a page, not a search


@requires("model")
async def test_with_meaning_the_count_is_what_the_pages_list(
    client: httpx.AsyncClient, embedded: Tenant
) -> None:
    found, documents = await every_page(client, embedded, "Hotel Rechnung")
    assert found == len(documents) and {d["id"] for d in documents[:2]} == HOTELS


@requires("model")
@pytest.mark.parametrize("query", ["hotel invoice", "Hotel Rechnung"])
async def test_diverse_pages_keep_the_hotels_first(
    client: httpx.AsyncClient, embedded: Tenant, query: str
) -> None:
    """mmr (the API's default) re-picks the page from the best; the hotels stay its head."""
    body = {"query": query, "limit": 2}  # searchType: mmr
    page = result(await call(client, embedded, "documents.search", body))
    assert {d["id"] for d in page["documents"]} == HOTELS
