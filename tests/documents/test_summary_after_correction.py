"""The summary extraction wrote says what the document is ("Receipt from Shell dated
2024-01-01 for 10.00 EUR."): a correction of one of those fields makes it again, recorded in
the edit history like the correction; a summary a person wrote stays theirs (issue 40: tried
as a new user would, the summary kept the old amount after a correction)."""

from __future__ import annotations

from decimal import Decimal

import httpx

from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result

EXTRACTED = "Receipt from Shell dated 2024-01-01 for 10.00 EUR."


async def get(client: httpx.AsyncClient, tenant: Tenant, doc_id: str) -> dict:  # type: ignore[type-arg]
    return result(await call(client, tenant, "documents.get", {"id": doc_id}))["document"]  # type: ignore[no-any-return]


async def test_a_corrected_amount_and_merchant_are_said_again_in_the_summary(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_1", summary=EXTRACTED)])
    updated = await call(client, alice, "documents.update", {"id": "doc_1", "amount": "12.5"})
    assert result(updated)["document"]["summary"] == (
        "Receipt from Shell dated 2024-01-01 for 12.50 EUR."
    )
    result(await call(client, alice, "documents.update", {"id": "doc_1", "merchant": "Aral"}))
    document = await get(client, alice, "doc_1")
    assert document["summary"] == "Receipt from Aral dated 2024-01-01 for 12.50 EUR."
    summaries = [e for e in document["editHistory"] if e["field"] == "summary"]
    assert [(e["oldValue"], e["newValue"]) for e in summaries] == [
        (EXTRACTED, "Receipt from Shell dated 2024-01-01 for 12.50 EUR."),
        (
            "Receipt from Shell dated 2024-01-01 for 12.50 EUR.",
            "Receipt from Aral dated 2024-01-01 for 12.50 EUR.",
        ),
    ]


async def test_a_summary_a_person_wrote_is_left_alone(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    mine = "Fuel for the Hamburg trip"
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_2", summary=mine)])
    result(await call(client, alice, "documents.update", {"id": "doc_2", "amount": "11.00"}))
    assert (await get(client, alice, "doc_2"))["summary"] == mine
    # Sent with the correction, the person's summary wins.
    both = {"id": "doc_2", "amount": "13.00", "summary": "Mine again"}
    assert result(await call(client, alice, "documents.update", both))["document"]["summary"] == (
        "Mine again"
    )


async def test_a_change_the_summary_does_not_mention_leaves_it(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_3", summary=EXTRACTED)])
    result(await call(client, alice, "documents.update", {"id": "doc_3", "category": "Travel"}))
    document = await get(client, alice, "doc_3")
    assert document["summary"] == EXTRACTED
    assert all(e["field"] != "summary" for e in document["editHistory"])
    assert Decimal(str(document["amount"])) == Decimal("10.00")
