"""matches.confirm / reject / undo (issue 42 item 3): who and when, a match made once, an undone
or rejected pair never proposed again, a document accounting for one transaction at a time."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import httpx
import pytest

from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import doc
from tests.graphql.helpers import gql
from tests.statements.helpers import all_transactions, call, fixture, import_bytes, result
from tests.statements.test_candidates import text_of


async def book(client: httpx.AsyncClient, alice: Tenant, store: Store) -> dict[str, str]:
    """The Lloyds-style statement and two receipts: text → transaction id. The receipts
    arrive after the import, so nothing is matched automatically (a person decides here)."""
    data = fixture("csv-lloyds.csv")
    assert (await import_bytes(client, alice, data, "l.csv", currency="GBP")).status_code == 200
    await store.documents.writes.insert_many(
        alice.org_id,
        [
            doc("doc_pret", merchant="Pret A Manger", amount=Decimal("6.45"), currency="GBP",
                docDate=date(2026, 11, 27)),
            doc("doc_gas", merchant="British Gas", amount=Decimal("84.20"), currency="GBP",
                docDate=date(2026, 11, 10)),
        ],
    )  # fmt: skip
    return {text_of(t): t["id"] for t in await all_transactions(client, alice)}


@pytest.fixture
async def booked(client: httpx.AsyncClient, alice: Tenant, store: Store) -> dict[str, str]:
    return await book(client, alice, store)


def pick(booked: dict[str, str], word: str) -> str:
    return next(i for text, i in booked.items() if word in text)


async def candidates(client: httpx.AsyncClient, tenant: Tenant, txn: str) -> list[list[str]]:
    found = result(await call(client, tenant, "transactions.candidates", {"id": txn}))
    return [c["documentIds"] for c in found["candidates"]]


async def test_confirm_records_who_when_and_why(
    client: httpx.AsyncClient, alice: Tenant, booked: dict[str, str]
) -> None:
    pret = pick(booked, "PRET")
    confirmed = result(await call(client, alice, "matches.confirm", {
        "transactionId": pret, "documentIds": ["doc_pret"]}))["transaction"]  # fmt: skip
    assert confirmed["matched"] is True
    match = confirmed["matches"][0]
    assert match["documentIds"] == ["doc_pret"] and match["kind"] == "single"
    assert match["by"] == alice.user_id and match["at"] and match["via"] == "person"
    assert match["score"] > 0 and any("6.45" in reason for reason in match["reasons"])
    assert [e["action"] for e in confirmed["matchHistory"]] == ["confirm"]
    # The where-clause sees it.
    unmatched = await all_transactions(client, alice, where={"conditions": [
        {"field": "matched", "op": "eq", "value": False}]})  # fmt: skip
    assert pret not in {t["id"] for t in unmatched}
    again = await call(client, alice, "matches.confirm", {
        "transactionId": pret, "documentIds": ["doc_pret"]})  # fmt: skip
    assert again.status_code == 409 and "already matched" in again.text
    # The receipt accounts for one transaction: not proposed for another, nor confirmable there.
    gas = pick(booked, "BRITISH GAS")
    assert ["doc_pret"] not in await candidates(client, alice, gas)
    elsewhere = await call(client, alice, "matches.confirm", {
        "transactionId": gas, "documentIds": ["doc_pret"]})  # fmt: skip
    assert elsewhere.status_code == 409 and "matched to another transaction" in elsewhere.text


async def test_undo_and_reject_are_never_proposed_again(
    client: httpx.AsyncClient, alice: Tenant, booked: dict[str, str]
) -> None:
    pret, gas = pick(booked, "PRET"), pick(booked, "BRITISH GAS")
    assert ["doc_pret"] in await candidates(client, alice, pret)
    await call(
        client, alice, "matches.confirm", {"transactionId": pret, "documentIds": ["doc_pret"]}
    )
    undone = result(await call(client, alice, "matches.undo", {"transactionId": pret}))
    transaction = undone["transaction"]
    assert transaction["matched"] is False and transaction["matches"] == []
    assert transaction["rejectedDocumentIds"] == ["doc_pret"]
    assert [e["action"] for e in transaction["matchHistory"]] == ["confirm", "undo"]
    assert ["doc_pret"] not in await candidates(client, alice, pret)
    nothing = await call(client, alice, "matches.undo", {"transactionId": pret})
    assert nothing.status_code == 409
    # A rejected candidate likewise.
    assert ["doc_gas"] in await candidates(client, alice, gas)
    await call(client, alice, "matches.reject", {"transactionId": gas, "documentId": "doc_gas"})
    assert ["doc_gas"] not in await candidates(client, alice, gas)
    # A person may still confirm what the matcher no longer proposes (their decision).
    confirmed = await call(client, alice, "matches.confirm", {
        "transactionId": gas, "documentIds": ["doc_gas"]})  # fmt: skip
    assert result(confirmed)["transaction"]["matches"][0]["score"] is None


async def test_bad_documents_and_other_workspaces(
    client: httpx.AsyncClient, alice: Tenant, bob: Tenant, store: Store, booked: dict[str, str]
) -> None:
    pret = pick(booked, "PRET")
    await store.documents.writes.insert_many(bob.org_id, [doc("doc_bob")])
    for document_id in ("doc_bob", "doc_none"):
        refused = await call(client, alice, "matches.confirm", {
            "transactionId": pret, "documentIds": [document_id]})  # fmt: skip
        assert refused.status_code == 400
        assert f"'{document_id}' is not an active document" in refused.text
    for slug, body in (
        ("matches.confirm", {"transactionId": pret, "documentIds": ["doc_bob"]}),
        ("matches.undo", {"transactionId": pret}),
        ("matches.reject", {"transactionId": pret, "documentId": "doc_bob"}),
    ):
        assert (await call(client, bob, slug, body)).status_code == 404


async def test_matches_over_graphql(
    client: httpx.AsyncClient, alice: Tenant, booked: dict[str, str]
) -> None:
    """matchesConfirm, transactionsGet and matchesUndo answer a matched transaction over GraphQL
    too: its matches and history (who, when) are JSON, their times ISO 8601 text as on REST."""
    pret = pick(booked, "PRET")
    fields = "transaction { matched matches matchHistory }"
    confirm = f"""mutation ($input: ConfirmMatchInput!) {{ matchesConfirm(input: $input) {{
      {fields} }} }}"""
    body = await gql(client, confirm, {"input": {"transactionId": pret, "documentIds": [
        "doc_pret"]}}, headers=alice.headers())  # fmt: skip
    assert body.get("errors") is None, body
    confirmed = body["data"]["matchesConfirm"]["transaction"]
    rest = result(await call(client, alice, "transactions.get", {"id": pret}))["transaction"]
    assert confirmed["matched"] is True and confirmed["matches"] == rest["matches"]
    assert confirmed["matchHistory"] == rest["matchHistory"]
    assert datetime.fromisoformat(confirmed["matches"][0]["at"].replace("Z", "+00:00"))
    get = f"""query ($input: GetTransactionInput!) {{ transactionsGet(input: $input) {{
      {fields} }} }}"""
    body = await gql(client, get, {"input": {"id": pret}}, headers=alice.headers())
    assert body.get("errors") is None, body
    undo = f"""mutation ($input: UndoMatchInput!) {{ matchesUndo(input: $input) {{
      {fields} }} }}"""
    body = await gql(client, undo, {"input": {"transactionId": pret}}, headers=alice.headers())
    assert body.get("errors") is None, body
    undone = body["data"]["matchesUndo"]["transaction"]
    assert undone["matched"] is False
    assert [e["action"] for e in undone["matchHistory"]] == ["confirm", "undo"]
