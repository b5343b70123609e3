"""One document, one match, even when two calls race (issue 42): two people confirming two
transactions with the same receipt at once, or a person and an import's automatic matching.
The claims in ``document_claims`` are what holds; a claim left by a call that stopped halfway
does not block the document for long; matches from before the claims get theirs at start-up.

The races are between two people (one key runs one costly call at a time) and forced, not
hoped for: a hook holds the first call between its check and its write until the second one
has finished.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import httpx
import pytest

from persistence.ids import utcnow
from persistence.store import Store
from persistence.transactions import DocumentTaken, claim_id
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, asgi_client, make_tenant, member_of
from tests.statements.helpers import call, import_bytes, result
from tests.statements.test_auto_match import statement
from tests.statements.test_matches import book, booked, pick

__all__ = ["booked"]  # the fixture, shared with test_matches


@pytest.fixture
async def carol(store: Store, alice: Tenant) -> Tenant:
    """A second person of Alice's workspace (one key runs one costly call at a time: a race
    is two people)."""
    return await member_of(store, alice, "carol@example.com")


async def confirm(
    client: httpx.AsyncClient, tenant: Tenant, transaction_id: str, *document_ids: str
) -> httpx.Response:
    body = {"transactionId": transaction_id, "documentIds": list(document_ids)}
    return await call(client, tenant, "matches.confirm", body)


async def holders(store: Store, document_id: str) -> list[str]:
    """The transactions matched to ``document_id``."""
    rows = store.db["transactions"].find({"matched": True, "matches.documentIds": document_id})
    return [row["_id"] for row in await rows.to_list(None)]


async def forced_race(
    store: Store, monkeypatch: pytest.MonkeyPatch, first: Any, second: Any
) -> tuple[httpx.Response, httpx.Response]:
    """Run ``first`` until it has passed confirm's check that the documents are free (the
    store's ``matched_documents``), hold it there while ``second`` runs to its end, then let
    it finish: the interleaving that let both through before the claims."""
    real = store.transactions.matched_documents
    checked, go_on = asyncio.Event(), asyncio.Event()
    calls = 0

    async def held(workspace_id: str, document_ids: Any) -> set[str]:
        nonlocal calls
        calls += 1
        found = await real(workspace_id, document_ids)
        if calls == 1:
            checked.set()
            await go_on.wait()
        return found

    monkeypatch.setattr(store.transactions, "matched_documents", held)
    pending = asyncio.create_task(first())
    await asyncio.wait_for(checked.wait(), 10)
    answer = await second()
    go_on.set()
    return await pending, answer


async def test_two_confirms_forced_to_interleave_match_once(
    client: httpx.AsyncClient,
    alice: Tenant,
    carol: Tenant,
    store: Store,
    booked: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pret, gas = pick(booked, "PRET"), pick(booked, "BRITISH GAS")
    late, early = await forced_race(
        store,
        monkeypatch,
        lambda: confirm(client, alice, pret, "doc_pret"),
        lambda: confirm(client, carol, gas, "doc_pret"),
    )
    assert early.status_code == 200, early.text
    assert late.status_code == 409 and "'doc_pret' is matched to another transaction" in late.text
    assert await holders(store, "doc_pret") == [gas]
    # The loser wrote nothing: its transaction is unmatched, with no claim left behind.
    assert (await store.transactions.get(alice.org_id, pret) or {})["matched"] is False
    assert await store.db["document_claims"].count_documents({"transactionId": pret}) == 0


async def test_two_confirms_at_once_match_once(
    client: httpx.AsyncClient, alice: Tenant, carol: Tenant, store: Store, booked: dict[str, str]
) -> None:
    pret, gas = pick(booked, "PRET"), pick(booked, "BRITISH GAS")
    answers = await asyncio.gather(
        confirm(client, alice, pret, "doc_pret"), confirm(client, carol, gas, "doc_pret")
    )
    assert sorted(a.status_code for a in answers) == [200, 409]
    assert len(await holders(store, "doc_pret")) == 1


async def test_a_split_refused_for_one_receipt_releases_the_others(
    client: httpx.AsyncClient,
    alice: Tenant,
    carol: Tenant,
    store: Store,
    booked: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A split payment whose second receipt lost the race claims neither: its first receipt
    is free for another transaction right after."""
    pret, gas = pick(booked, "PRET"), pick(booked, "BRITISH GAS")
    late, early = await forced_race(
        store,
        monkeypatch,
        lambda: confirm(client, alice, pret, "doc_gas", "doc_pret"),
        lambda: confirm(client, carol, gas, "doc_pret"),
    )
    assert (late.status_code, early.status_code) == (409, 200)
    tfl = pick(booked, "TFL")
    assert (await confirm(client, alice, tfl, "doc_gas")).status_code == 200
    assert await holders(store, "doc_gas") == [tfl]


async def test_auto_match_at_import_racing_a_confirm_matches_once(
    client: httpx.AsyncClient,
    alice: Tenant,
    carol: Tenant,
    store: Store,
    booked: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The import has read doc_pret as free; before its matches are written a person confirms
    doc_pret for another transaction. The import leaves that match out (and counts it out)."""
    other = pick(booked, "TFL")
    real = store.transactions.set_matches

    async def person_first(workspace_id: str, matches: Any) -> int:
        assert [m["documentIds"] for _, m, _ in matches] == [["doc_pret"]]
        assert (await confirm(client, carol, other, "doc_pret")).status_code == 200
        return await real(workspace_id, matches)

    monkeypatch.setattr(store.transactions, "set_matches", person_first)
    data = statement(("28/11/2026", "PRET A MANGER LONDON", "6.45"))
    # The Pret line comes again in a statement of its own (the first one's is taken away).
    await store.db["transactions"].delete_one({"_id": pick(booked, "PRET")})
    answer = result(await import_bytes(client, alice, data, "s.csv", currency="GBP"))
    assert (answer["added"], answer["autoMatched"]) == (1, 0)
    assert await holders(store, "doc_pret") == [other]
    assert await store.db["document_claims"].count_documents({"workspaceId": alice.org_id}) == 1


async def test_a_confirm_after_the_import_claimed_is_refused(
    client: httpx.AsyncClient,
    alice: Tenant,
    carol: Tenant,
    store: Store,
    booked: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The other way round: a person passes the check, the import matches the receipt, the
    person's write is refused."""
    other = pick(booked, "TFL")
    await store.db["transactions"].delete_one({"_id": pick(booked, "PRET")})
    data = statement(("28/11/2026", "PRET A MANGER LONDON", "6.45"))

    async def auto() -> httpx.Response:
        return await import_bytes(client, alice, data, "s.csv", currency="GBP")

    person, imported = await forced_race(
        store, monkeypatch, lambda: confirm(client, carol, other, "doc_pret"), auto
    )
    assert result(imported)["autoMatched"] == 1
    assert person.status_code == 409
    assert await holders(store, "doc_pret") != [other]
    assert len(await holders(store, "doc_pret")) == 1


async def test_undo_releases_the_receipt(
    client: httpx.AsyncClient, alice: Tenant, store: Store, booked: dict[str, str]
) -> None:
    pret, gas = pick(booked, "PRET"), pick(booked, "BRITISH GAS")
    assert (await confirm(client, alice, pret, "doc_pret")).status_code == 200
    assert (await confirm(client, alice, gas, "doc_pret")).status_code == 409
    await call(client, alice, "matches.undo", {"transactionId": pret})
    assert await store.db["document_claims"].count_documents({"workspaceId": alice.org_id}) == 0
    assert (await confirm(client, alice, gas, "doc_pret")).status_code == 200
    assert await holders(store, "doc_pret") == [gas]


async def test_a_claim_left_by_a_stopped_call_blocks_only_for_a_while(
    client: httpx.AsyncClient, alice: Tenant, store: Store, booked: dict[str, str]
) -> None:
    """A call stopped between the claim and the match (a crash) leaves a claim whose
    transaction does not hold the receipt: while young it may be a match still being written
    (refused), once old it is free and a confirm takes it over."""
    pret, gas = pick(booked, "PRET"), pick(booked, "BRITISH GAS")
    claims = store.db["document_claims"]
    row = {
        "_id": claim_id(alice.org_id, "doc_pret"),
        "workspaceId": alice.org_id,
        "documentId": "doc_pret",
        "transactionId": pret,
        "claimedAt": utcnow(),
    }
    await claims.insert_one(row)
    assert (await confirm(client, alice, gas, "doc_pret")).status_code == 409
    await claims.update_one(
        {"_id": row["_id"]}, {"$set": {"claimedAt": utcnow() - timedelta(minutes=2)}}
    )
    assert (await confirm(client, alice, gas, "doc_pret")).status_code == 200
    assert await holders(store, "doc_pret") == [gas]
    assert (await claims.find_one({"_id": row["_id"]}) or {})["transactionId"] == gas
    # A claim whose transaction does hold the receipt blocks however old it is.
    await claims.update_one(
        {"_id": row["_id"]}, {"$set": {"claimedAt": utcnow() - timedelta(days=2)}}
    )
    assert (await confirm(client, alice, pret, "doc_pret")).status_code == 409


async def test_matches_from_before_the_claims_get_theirs_at_start(
    client: httpx.AsyncClient, alice: Tenant, store: Store, booked: dict[str, str]
) -> None:
    pret, gas = pick(booked, "PRET"), pick(booked, "BRITISH GAS")
    assert (await confirm(client, alice, pret, "doc_pret")).status_code == 200
    assert (await confirm(client, alice, gas, "doc_gas")).status_code == 200
    claims = store.db["document_claims"]
    await claims.delete_many({})  # as the data was before claims existed
    await store.ensure_indexes()
    await store.ensure_indexes()  # idempotent
    mine = claims.find({"workspaceId": alice.org_id})
    found = {row["documentId"]: row["transactionId"] async for row in mine}
    assert found == {"doc_pret": pret, "doc_gas": gas}
    # Once: a later start does not read every matched transaction again.
    await claims.delete_many({"workspaceId": alice.org_id})
    await store.ensure_indexes()
    assert await claims.count_documents({"workspaceId": alice.org_id}) == 0
    await claims.insert_many([{"_id": claim_id(alice.org_id, d), "workspaceId": alice.org_id,
        "documentId": d, "transactionId": t, "claimedAt": utcnow()}
        for d, t in found.items()])  # fmt: skip
    # And the backfilled claim is what a racing confirm meets past its first check.
    with pytest.raises(DocumentTaken):
        await store.transactions.claim(alice.org_id, pick(booked, "TFL"), ["doc_pret"])


@pytest.mark.wire
async def test_two_confirms_forced_to_interleave_on_the_wire(
    wire_store: Store, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claim's duplicate key and the compare-and-sets on the real protocol."""
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    async with asgi_client(wire_store, registry) as http:
        carol = await member_of(wire_store, alice, "carol@example.com")
        booked_here = await book(http, alice, wire_store)
        pret, gas = pick(booked_here, "PRET"), pick(booked_here, "BRITISH GAS")
        late, early = await forced_race(
            wire_store,
            monkeypatch,
            lambda: confirm(http, alice, pret, "doc_pret"),
            lambda: confirm(http, carol, gas, "doc_pret"),
        )
        assert (late.status_code, early.status_code) == (409, 200)
        assert await holders(wire_store, "doc_pret") == [gas]
        await call(http, alice, "matches.undo", {"transactionId": gas})
        assert (await confirm(http, alice, pret, "doc_pret")).status_code == 200
        assert await holders(wire_store, "doc_pret") == [pret]
