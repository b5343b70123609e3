"""transactions.candidates: the matcher over stored transactions and documents, each candidate
with its signals and what they contributed, and the decision it would take (issue 42 item 2,
read-only: nothing is matched)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import httpx

from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import doc
from tests.statements.helpers import all_transactions, call, fixture, import_bytes, result


async def imported(client: httpx.AsyncClient, tenant: Tenant) -> dict[str, str]:
    """The Lloyds-style statement imported: reference text → transaction id."""
    data = fixture("csv-lloyds.csv")
    answer = await import_bytes(client, tenant, data, "lloyds.csv", currency="GBP")
    assert answer.status_code == 200, answer.text
    return {text_of(t): t["id"] for t in await all_transactions(client, tenant)}


def text_of(transaction: dict[str, str | None]) -> str:
    return (transaction["reference"] or transaction["counterparty"] or "").upper()


async def test_a_receipt_is_a_candidate_with_its_reasons(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    # The receipts arrive after the import: nothing is matched automatically.
    ids = await imported(client, alice)
    await store.documents.writes.insert_many(
        alice.org_id,
        [
            doc("doc_pret", merchant="Pret A Manger", amount=Decimal("6.45"), currency="GBP",
                docDate=date(2026, 11, 27)),
            doc("doc_other", merchant="Shell", amount=Decimal("61.20"), currency="GBP",
                docDate=date(2026, 11, 27)),
        ],
    )  # fmt: skip
    pret = next(i for text, i in ids.items() if "PRET" in text.upper())
    found = result(await call(client, alice, "transactions.candidates", {"id": pret}))
    assert found["transactionId"] == pret
    best = found["candidates"][0]
    assert best["documentIds"] == ["doc_pret"] and best["kind"] == "single"
    names = {signal["name"] for signal in best["signals"]}
    assert {"amount", "date", "merchant"} <= names
    assert round(sum(s["contribution"] for s in best["signals"]), 0) == round(best["score"], 0)
    assert any("6.45" in s["reason"] for s in best["signals"] if s["name"] == "amount")
    assert all(c["documentIds"] != ["doc_other"] for c in found["candidates"])
    assert found["outcome"] in ("auto_match", "needs_review") and found["why"]
    assert found["threshold"] > 0 and found["margin"] > 0
    # Nothing was matched: the transaction is as it was.
    got = result(await call(client, alice, "transactions.get", {"id": pret}))["transaction"]
    assert got["matched"] is False and got["matches"] == []


async def test_two_bookings_wanting_one_receipt_are_left_to_a_person(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    """The statement books TFL TRAVEL CH 2.80 twice on the same day; one receipt of 2.80: each
    booking is the other's rival, so neither is matched automatically."""
    await store.documents.writes.insert_many(
        alice.org_id,
        [doc("doc_tfl", merchant="TfL Travel Charges", amount=Decimal("2.80"), currency="GBP",
             docDate=date(2026, 11, 13))],
    )  # fmt: skip
    await imported(client, alice)
    tfl = [
        t["id"]
        for t in await all_transactions(client, alice)
        if "TFL" in (t["reference"] or t["counterparty"] or "").upper()
    ]
    assert len(tfl) == 2
    found = result(await call(client, alice, "transactions.candidates", {"id": tfl[0]}))
    assert found["candidates"][0]["documentIds"] == ["doc_tfl"]
    assert found["outcome"] == "needs_review"
    assert tfl[1] in found["why"]


async def test_another_workspaces_transaction_is_not_found(
    client: httpx.AsyncClient, alice: Tenant, bob: Tenant
) -> None:
    ids = await imported(client, alice)
    answer = await call(client, bob, "transactions.candidates", {"id": next(iter(ids.values()))})
    assert answer.status_code == 404
