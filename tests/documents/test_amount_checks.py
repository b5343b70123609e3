"""Line items and tax lines a person corrects (issue 41 item 2): documents.update replaces the
lines (so one call adds, changes and removes them), and every correction of an amount checks
the amounts against each other, as extraction does: what does not add up is kept as sent and
warned about in the field's evidence (never a silent change of the total), which puts the
document in the review queue; a correction that makes them agree takes the warning away."""

from __future__ import annotations

from typing import Any

import httpx

from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result

LINES = [
    {"description": "Cable", "quantity": 1, "unitPrice": "4.00", "amount": "4.00"},
    {"description": "Plug", "quantity": 2, "unitPrice": "3.00", "amount": "6.00"},
]
# The MR.D.I.Y. receipt of the issue: tax read as 35.00 where 6% GST of 35.00 is 2.10.
MR_DIY = doc(
    "doc_diy",
    amount="37.10",
    subtotal="35.00",
    taxAmount="35.00",
    taxLines=[{"rate": "6", "net": "35.00", "tax": "35.00"}],
    evidence=[{"field": "taxAmount", "confidence": 0.97, "source": "label"}],
)


async def update(client: httpx.AsyncClient, tenant: Tenant, body: dict[str, Any]) -> Any:
    return result(await call(client, tenant, "documents.update", body))["document"]


def warnings(document: dict[str, Any]) -> dict[str, str]:
    return {e["field"]: e["warning"] for e in document["evidence"] or [] if e.get("warning")}


async def test_lines_are_added_changed_and_removed_by_sending_the_new_list(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_1", lineItems=LINES)])
    # The opening hours read as a line (the Aldi receipt of the issue) removed, one changed.
    changed = [{**LINES[0], "amount": "4.00"}, {**LINES[1], "quantity": 1, "amount": "6.00"}]
    document = await update(client, alice, {"id": "doc_1", "lineItems": changed[:1]})
    assert [item["description"] for item in document["lineItems"]] == ["Cable"]
    document = await update(client, alice, {"id": "doc_1", "lineItems": changed})
    assert [(i["description"], i["quantity"]) for i in document["lineItems"]] == [
        ("Cable", 1),
        ("Plug", 1),
    ]
    # Two lines of 4.00 and 6.00 make the total of 10.00: nothing to warn about.
    assert warnings(document) == {} and document["needsReview"] is False
    history = [e["field"] for e in document["editHistory"]]
    assert history == ["lineItems", "lineItems"]


async def test_lines_that_do_not_add_up_are_kept_and_warned_about(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_2")])
    lines = [{**LINES[0]}, {**LINES[1], "amount": "9.00"}]
    document = await update(client, alice, {"id": "doc_2", "lineItems": lines})
    assert document["amount"] == 10.0  # the total is never changed to agree
    assert warnings(document) == {"lineItems": "the 2 lines add up to 13.00, not the total 10.00"}
    assert document["needsReview"] is True and document["reviewReasons"] == ["flaggedField"]
    # Correcting the total to the lines' sum takes the warning away (and the summary follows).
    document = await update(client, alice, {"id": "doc_2", "amount": "13.00"})
    assert warnings(document) == {}
    assert document["needsReview"] is False


async def test_tax_lines_are_checked_against_their_rate_and_the_tax(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(alice.org_id, [MR_DIY])
    # A correction of one amount checks the others too: the tax line is wrong.
    document = await update(client, alice, {"id": "doc_diy", "tipAmount": "0"})
    found = warnings(document)
    assert found["taxLines"] == "6% of 35.00 is 2.10, not 35.00"
    assert found["taxAmount"].startswith("subtotal 35.00 + tax 35.00")
    assert document["taxAmount"] == 35.0  # kept as read until a person corrects it
    fixed = {
        "id": "doc_diy",
        "taxAmount": "2.10",
        "taxLines": [{"rate": "6", "net": "35.00", "tax": "2.10"}],
    }
    document = await update(client, alice, fixed)
    assert warnings(document) == {}
    sources = {e["field"]: e["source"] for e in document["evidence"]}
    assert sources["taxAmount"] == "edited" and sources["taxLines"] == "edited"
    # Tax lines that add up to another tax than the one stated.
    other = {"id": "doc_diy", "taxLines": [{"rate": "6", "net": "30.00", "tax": "1.80"}]}
    document = await update(client, alice, other)
    assert warnings(document) == {"taxAmount": "the tax lines add up to 1.80, not the tax 2.10"}
