"""transactions.search/get/count/update, the saved CSV mapping, and whose data each one sees."""

from __future__ import annotations

import httpx

from persistence.store import Store
from tests.conftest import Tenant, member_of
from tests.statements.helpers import all_transactions, call, fixture, import_bytes, result


async def test_where_sort_and_pages(client: httpx.AsyncClient, alice: Tenant) -> None:
    result(await import_bytes(client, alice, fixture("camt053-batch.xml")))
    result(await import_bytes(client, alice, fixture("ofx1-sgml.ofx")))
    where = {
        "conditions": [
            {"field": "amount", "op": "lt", "value": 0},
            {"field": "currency", "op": "eq", "value": "eur"},
            {"field": "bookingDate", "op": "gte", "value": "2026-11-05"},
        ]
    }
    rows = await all_transactions(client, alice, where=where)
    assert sorted(row["amount"] for row in rows) == [-510.0, -420.0, -120.0]
    by_name = {
        "logic": "and",
        "conditions": [{"field": "counterparty", "op": "regex", "value": "coffee"}],
    }
    assert {row["currency"] for row in await all_transactions(client, alice, where=by_name)} == {
        "EUR",
        "USD",
    }
    unmatched = {"conditions": [{"field": "matched", "op": "eq", "value": False}]}
    assert len(await all_transactions(client, alice, where=unmatched)) == 8
    seen: list[str] = []
    body: dict[str, object] = {"limit": 3}
    while True:
        page = result(await call(client, alice, "transactions.search", body))
        seen += [row["id"] for row in page["transactions"]]
        if page["nextCursor"] is None:
            break
        body = {"limit": 3, "cursor": page["nextCursor"]}
    assert len(seen) == len(set(seen)) == 8
    newest = result(await call(client, alice, "transactions.search", {"limit": 1}))
    assert newest["transactions"][0]["bookingDate"] == "2026-11-20"
    bad = await call(
        client,
        alice,
        "transactions.search",
        {"where": {"conditions": [{"field": "merchant", "op": "eq", "value": "x"}]}},
    )
    assert bad.status_code == 400 and "where.conditions[0]" in bad.text


async def test_count_sums_money_out_and_in_per_currency(
    client: httpx.AsyncClient, alice: Tenant
) -> None:
    result(await import_bytes(client, alice, fixture("camt053-batch.xml")))
    result(await import_bytes(client, alice, fixture("ofx1-sgml.ofx")))
    counted = result(await call(client, alice, "transactions.count", {}))
    assert counted["count"] == 8
    eur = next(total for total in counted["totals"] if total["currency"] == "EUR")
    assert (eur["count"], eur["debits"], eur["credits"], eur["net"]) == (5, -1053.8, 500.0, -553.8)
    usd = next(total for total in counted["totals"] if total["currency"] == "USD")
    assert (usd["debits"], usd["credits"]) == (-254.75, 1200.0)


async def test_update_keeps_what_the_bank_wrote(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    result(await import_bytes(client, alice, fixture("ofx1-sgml.ofx")))
    rows = await all_transactions(client, alice)
    target = rows[0]["id"]
    member = await member_of(store, alice, "mia@example.com")
    changed = result(
        await call(
            client,
            member,
            "transactions.update",
            {"id": target, "counterparty": "Blue Bottle", "category": "Meals", "notes": "team"},
        )
    )["transaction"]
    assert changed["counterparty"] == "Blue Bottle" and changed["category"] == "Meals"
    assert changed["bankCounterparty"] == "BLUE BOTTLE COFFEE"
    assert {edit["field"] for edit in changed["editHistory"]} == {
        "counterparty",
        "category",
        "notes",
    }
    assert changed["editHistory"][0]["editedBy"] == member.user_id
    for field, value in (("amount", 1), ("bookingDate", "2026-01-01"), ("currency", "EUR")):
        refused = await call(client, alice, "transactions.update", {"id": target, field: value})
        assert refused.status_code == 400 and field in refused.text
    got = result(await call(client, alice, "transactions.get", {"id": target}))["transaction"]
    assert got["amount"] == -4.75 and got["bookingDate"] == "2026-11-03"
    # The correction does not change the key: importing the file again adds nothing.
    assert result(await import_bytes(client, alice, fixture("ofx1-sgml.ofx")))["added"] == 0


async def test_another_workspace_sees_nothing(
    client: httpx.AsyncClient, alice: Tenant, bob: Tenant
) -> None:
    result(await import_bytes(client, alice, fixture("ofx1-sgml.ofx")))
    target = (await all_transactions(client, alice))[0]["id"]
    assert await all_transactions(client, bob) == []
    assert result(await call(client, bob, "transactions.count", {}))["count"] == 0
    for slug, body in (
        ("transactions.get", {"id": target}),
        ("transactions.update", {"id": target, "notes": "mine"}),
    ):
        response = await call(client, bob, slug, body)
        assert response.status_code == 404 and f"Transaction '{target}' not found" in response.text
    got = result(await call(client, alice, "transactions.get", {"id": target}))["transaction"]
    assert got["notes"] is None


async def test_the_csv_mapping_is_saved_for_next_time(
    client: httpx.AsyncClient, alice: Tenant, bob: Tenant
) -> None:
    # A layout fincap does not know: the mapping is given once.
    october = (
        b"Datum|Wert|Summe|Gegenpartei|Text\n01.10.2026|01.10.2026|-9,99|Netflix|Abo Oktober\n"
    )
    mapping = {
        "bookingDate": "Datum",
        "valueDate": "Wert",
        "amount": "Summe",
        "counterparty": "Gegenpartei",
        "reference": "Text",
        "delimiter": "pipe",
        "decimalComma": True,
        "dateFormat": "DD.MM.YYYY",
        "defaultCurrency": "EUR",
    }
    assert (await import_bytes(client, alice, october)).status_code == 400
    given = result(await import_bytes(client, alice, october, mapping=mapping, account="Giro"))
    assert given["mappingSource"] == "given" and given["account"] == "Giro"
    november = october.replace(b"01.10.2026", b"01.11.2026").replace(b"Oktober", b"November")
    # Next month's file of the account, and a file with that header, read without being told.
    by_account = result(await import_bytes(client, alice, november, account="Giro"))
    assert by_account["mappingSource"] == "saved" and by_account["added"] == 1
    by_header = result(await import_bytes(client, alice, november.replace(b"-9,99", b"-4,99")))
    assert by_header["mappingSource"] == "saved" and by_header["mapping"]["delimiter"] == "pipe"
    # Saved for Alice's workspace only.
    assert (await import_bytes(client, bob, november, account="Giro")).status_code == 400
