"""Automatic matching at statement import (issue 42 item 2): only the transactions the import
added, only where the matcher is sure with the workspace's settings; a rival within the margin,
a document matched elsewhere, a pair rejected or an automatic match undone leave it to a
person. Through the REST face, on the in-memory store."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import httpx

from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import doc
from tests.statements.helpers import all_transactions, call, import_bytes, result
from tests.statements.test_candidates import text_of

HEADER = (
    "Transaction Date,Transaction Type,Sort Code,Account Number,Transaction Description,"
    "Debit Amount,Credit Amount,Balance\n"
)


def statement(*lines: tuple[str, str, str]) -> bytes:
    """A Lloyds-layout CSV of (day, description, debit) lines."""
    rows = [f"{day},DEB,'30-99-50,12345678,{text},{debit},,100.00\n" for day, text, debit in lines]
    return (HEADER + "".join(rows)).encode()


RECEIPTS = [
    doc("doc_pret", merchant="Pret A Manger", amount=Decimal("6.45"), currency="GBP",
        docDate=date(2026, 11, 27)),
    # Two identical British Gas bills: each is the other's rival within the margin.
    doc("doc_gas1", merchant="British Gas", amount=Decimal("84.20"), currency="GBP",
        docDate=date(2026, 11, 10)),
    doc("doc_gas2", merchant="British Gas", amount=Decimal("84.20"), currency="GBP",
        docDate=date(2026, 11, 10)),
    doc("doc_shell", merchant="Shell", amount=Decimal("61.20"), currency="GBP",
        docDate=date(2026, 11, 20)),
]  # fmt: skip
FIRST = statement(
    ("28/11/2026", "PRET A MANGER LONDON", "6.45"),
    ("14/11/2026", "BRITISH GAS", "84.20"),
    ("20/11/2026", "SHELL", "61.20"),
)


async def by_text(client: httpx.AsyncClient, tenant: Tenant) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for txn in await all_transactions(client, tenant):
        found.setdefault(f"{text_of(txn)} {txn['bookingDate']}", txn)
    return found


async def imported(client: httpx.AsyncClient, tenant: Tenant, data: bytes) -> dict[str, Any]:
    return dict(result(await import_bytes(client, tenant, data, "s.csv", currency="GBP")))


async def candidates(client: httpx.AsyncClient, tenant: Tenant, txn: str) -> dict[str, Any]:
    return dict(result(await call(client, tenant, "transactions.candidates", {"id": txn})))


async def test_import_matches_the_sure_ones_only(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(alice.org_id, RECEIPTS)
    answer = await imported(client, alice, FIRST)
    assert answer["added"] == 3 and answer["autoMatched"] == 2
    txns = await by_text(client, alice)
    pret = txns["PRET A MANGER LONDON 2026-11-28"]
    assert pret["matched"] is True
    [match] = pret["matches"]
    assert match["documentIds"] == ["doc_pret"] and match["kind"] == "single"
    assert match["via"] == "auto" and match["by"] is None and match["score"] >= 70
    assert any("6.45" in reason for reason in match["reasons"])
    [event] = pret["matchHistory"]
    assert event["action"] == "auto_match" and event["via"] == "auto" and event["by"] is None
    assert event["importId"].startswith("imp_")
    # The rival within the margin: left to a person, both bills still candidates.
    gas = txns["BRITISH GAS 2026-11-14"]
    assert gas["matched"] is False and gas["matchHistory"] == []
    shown = await candidates(client, alice, gas["id"])
    assert shown["outcome"] == "needs_review" and "within" in shown["why"]
    assert {tuple(c["documentIds"]) for c in shown["candidates"][:2]} == {
        ("doc_gas1",),
        ("doc_gas2",),
    }
    assert txns["SHELL 2026-11-20"]["matches"][0]["documentIds"] == ["doc_shell"]


async def test_an_undone_auto_match_is_never_made_again(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(alice.org_id, RECEIPTS)
    await imported(client, alice, FIRST)
    shell = (await by_text(client, alice))["SHELL 2026-11-20"]
    undone = result(await call(client, alice, "matches.undo", {"transactionId": shell["id"]}))
    history = undone["transaction"]["matchHistory"]
    assert [(e["action"], e["via"]) for e in history] == [("auto_match", "auto"), ("undo", "auto")]
    assert undone["transaction"]["rejectedDocumentIds"] == ["doc_shell"]
    # Not proposed again for that transaction.
    assert all(c["documentIds"] != ["doc_shell"] for c in
               (await candidates(client, alice, shell["id"]))["candidates"])  # fmt: skip
    # A new statement books the same payment again (another day: another transaction), and
    # pays Pret again: doc_shell is for a person now, doc_pret accounts for the first Pret.
    second = statement(
        ("28/11/2026", "PRET A MANGER LONDON", "6.45"),  # the same line: already there
        ("21/11/2026", "SHELL", "61.20"),
        ("29/11/2026", "PRET A MANGER LONDON", "6.45"),
    )
    answer = await imported(client, alice, second)
    assert (answer["added"], answer["alreadyThere"], answer["autoMatched"]) == (2, 1, 0)
    txns = await by_text(client, alice)
    again = txns["SHELL 2026-11-21"]
    assert again["matched"] is False
    shown = await candidates(client, alice, again["id"])
    assert shown["candidates"][0]["documentIds"] == ["doc_shell"]
    assert shown["outcome"] == "needs_review" and "taken back" in shown["why"]
    later_pret = txns["PRET A MANGER LONDON 2026-11-29"]
    assert later_pret["matched"] is False
    assert all(c["documentIds"] != ["doc_pret"] for c in
               (await candidates(client, alice, later_pret["id"]))["candidates"])  # fmt: skip
    assert txns["PRET A MANGER LONDON 2026-11-28"]["matches"][0]["documentIds"] == ["doc_pret"]


async def test_a_person_undoing_their_own_match_does_not_bar_automatic_matching(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    """Only an automatic match taken back makes a document a person's from then on."""
    await imported(client, alice, statement(("20/11/2026", "SHELL", "61.20")))
    await store.documents.writes.insert_many(alice.org_id, [RECEIPTS[3]])
    [shell] = await all_transactions(client, alice)
    body = {"transactionId": shell["id"], "documentIds": ["doc_shell"]}
    result(await call(client, alice, "matches.confirm", body))
    result(await call(client, alice, "matches.undo", {"transactionId": shell["id"]}))
    answer = await imported(client, alice, statement(("21/11/2026", "SHELL", "61.20")))
    assert answer["autoMatched"] == 1


async def test_the_workspace_settings_decide(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(alice.org_id, RECEIPTS)
    result(await call(client, alice, "matches.configure", {"autoMatch": False}))
    off = await imported(client, alice, statement(("28/11/2026", "PRET A MANGER LONDON", "6.45")))
    assert (off["added"], off["autoMatched"]) == (1, 0)
    result(await call(client, alice, "matches.configure", {"autoMatch": True, "threshold": 125}))
    high = await imported(client, alice, statement(("20/11/2026", "SHELL", "61.20")))
    assert (high["added"], high["autoMatched"]) == (1, 0)
    assert not any(t["matched"] for t in await all_transactions(client, alice))


async def test_only_the_imports_own_transactions_and_workspace(
    client: httpx.AsyncClient, alice: Tenant, bob: Tenant, store: Store
) -> None:
    """Bob's receipt is never Alice's match; and only the import's own transactions are
    matched: an older one a receipt arrived for since stays for a person."""
    await store.documents.writes.insert_many(bob.org_id, [{**RECEIPTS[3], "_id": "doc_bob_shell"}])
    lines = (("20/11/2026", "SHELL", "61.20"), ("28/11/2026", "PRET A MANGER LONDON", "6.45"))
    first = await imported(client, alice, statement(*lines))
    assert (first["added"], first["autoMatched"]) == (2, 0)
    await store.documents.writes.insert_many(alice.org_id, [RECEIPTS[0]])
    answer = await imported(client, alice, statement(("14/11/2026", "BRITISH GAS", "84.20")))
    assert (answer["added"], answer["autoMatched"]) == (1, 0)
    assert not any(t["matched"] for t in await all_transactions(client, alice))
    # The Pret line is the matcher's sure pick, when a person asks.
    pret = (await by_text(client, alice))["PRET A MANGER LONDON 2026-11-28"]
    assert (await candidates(client, alice, pret["id"]))["outcome"] == "auto_match"
