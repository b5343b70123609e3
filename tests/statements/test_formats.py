"""Each format read from files written by hand from its specification (not from the parsers'
code), imported through REST: the fields, the signs, the account, period and balances."""

from __future__ import annotations

import httpx

from persistence.store import Store
from tests.conftest import Tenant
from tests.statements.helpers import all_transactions, fixture, import_bytes, result


async def test_camt053_batch_booking_becomes_one_transaction_per_part(
    client: httpx.AsyncClient, alice: Tenant
) -> None:
    answer = result(await import_bytes(client, alice, fixture("camt053-batch.xml"), "nov.xml"))
    assert answer["format"] == "camt053"
    assert (answer["added"], answer["alreadyThere"], answer["notBooked"]) == (5, 0, 1)
    assert answer["account"] == "DE44500105175407324931"
    assert (answer["periodStart"], answer["periodEnd"]) == ("2026-11-01", "2026-11-30")
    assert answer["openingBalance"] == {"amount": 5000.0, "currency": "EUR", "date": "2026-10-31"}
    assert answer["closingBalance"]["amount"] == 4446.2
    rows = await all_transactions(client, alice)
    batch = [row for row in rows if row["batch"]]
    # Ntry 2: one booking of 1,050.00 on the bank's statement, three payments inside it.
    assert sorted(row["amount"] for row in batch) == [-510.0, -420.0, -120.0]
    assert {row["batch"]["amount"] for row in batch} == {-1050.0}
    assert {row["batch"]["reference"] for row in batch} == {"2026111000077"}
    cloud = next(row for row in batch if row["counterparty"] == "Cloud Hosting AG")
    assert cloud["reference"] == "RF18539007547034"  # the structured creditor reference
    assert cloud["source"]["place"].startswith("Stmt/Ntry[2]/NtryDtls/TxDtls[2]")
    credit = next(row for row in rows if row["amount"] > 0)
    assert credit["counterparty"] == "Müller & Söhne GmbH"  # the debtor of a credit
    assert credit["bankTransactionId"] == "2026112000031"
    coffee = rows[0]
    assert (coffee["bookingDate"], coffee["amount"], coffee["currency"]) == (
        "2026-11-03",
        -3.8,
        "EUR",
    )
    assert coffee["counterparty"] == "COFFEE ROASTERS BERLIN" and coffee["matched"] is False
    assert coffee["matches"] == []


async def test_mt940_multi_line_86_fields(client: httpx.AsyncClient, alice: Tenant) -> None:
    answer = result(await import_bytes(client, alice, fixture("mt940-multiline-86.sta")))
    assert answer["format"] == "mt940" and answer["added"] == 4
    assert answer["account"] == "10020030/1234567890" and answer["statementId"] == "STARTUMSE"
    assert answer["openingBalance"] == {"amount": 1234.56, "currency": "EUR", "date": "2026-10-31"}
    assert answer["closingBalance"] == {"amount": 2714.46, "currency": "EUR", "date": "2026-11-30"}
    rows = await all_transactions(client, alice)
    first = next(row for row in rows if row["bankTransactionId"] == "B2611030001")
    # ?20…?22 on two physical lines: one purpose; ?32 the name.
    assert first["reference"] == "COFFEE ROASTERS BERLIN KARTE 1234 Flat white 2 Stueck"
    assert first["counterparty"] == "COFFEE ROASTERS BERLIN GMBH"
    assert first["bankTransactionId"] == "B2611030001" and first["amount"] == -12.5
    # Two identical coffees without a bank reference are two transactions.
    twins = [row for row in rows if row["bankTransactionId"] is None]
    assert len(twins) == 2 and {row["amount"] for row in twins} == {-3.8}
    assert {row["counterparty"] for row in twins} == {"BAECKEREI KAMPS"}
    credit = next(row for row in rows if row["amount"] > 0)
    assert credit["counterparty"] == "KUNDE GMBH"
    assert "RE 2026-114" in credit["reference"] and "Danke" in credit["reference"]
    assert (credit["bookingDate"], credit["valueDate"]) == ("2026-11-05", "2026-11-04")


async def test_ofx1_sgml_without_end_tags(client: httpx.AsyncClient, alice: Tenant) -> None:
    answer = result(await import_bytes(client, alice, fixture("ofx1-sgml.ofx")))
    assert answer["format"] == "ofx" and answer["added"] == 3 and answer["currency"] == "USD"
    assert answer["account"] == "4417-0012" and answer["periodEnd"] == "2026-11-30"
    assert answer["closingBalance"] == {"amount": 2945.25, "currency": "USD", "date": "2026-11-30"}
    rows = await all_transactions(client, alice)
    assert [row["amount"] for row in rows] == [-4.75, -250.0, 1200.0]
    assert rows[0]["counterparty"] == "BLUE BOTTLE COFFEE"
    assert rows[0]["bookingDate"] == "2026-11-03"  # DTPOSTED with a time and a zone
    assert rows[1]["reference"] == "1042"  # CHECKNUM
    assert rows[2]["valueDate"] == "2026-11-16"  # DTAVAIL
    assert {row["bankTransactionId"] for row in rows} == {"2026110301", "2026110502", "2026111503"}


async def test_ofx2_xml_credit_card_qfx(client: httpx.AsyncClient, alice: Tenant) -> None:
    answer = result(await import_bytes(client, alice, fixture("ofx2-xml.qfx")))
    assert answer["format"] == "ofx" and answer["added"] == 3
    assert answer["account"] == "XXXXXXXXXXXX4417"
    rows = await all_transactions(client, alice)
    assert [(row["bookingDate"], row["amount"]) for row in rows] == [
        ("2026-11-04", -38.2),
        ("2026-11-06", -112.0),
        ("2026-11-20", 150.2),
    ]
    # The amount is in the statement's currency; ORIGCURRENCY only says what it came from.
    assert {row["currency"] for row in rows} == {"USD"}


async def test_csv_german_layout_detected(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    answer = result(await import_bytes(client, alice, fixture("csv-sparkasse.csv"), "umsatz.csv"))
    assert answer["mappingSource"] == "detected" and answer["added"] == 5
    mapping = answer["mapping"]
    assert (mapping["delimiter"], mapping["decimalComma"], mapping["dateFormat"]) == (
        "semicolon",
        True,
        "DD.MM.YY",
    )
    assert mapping["amount"] == "Betrag" and mapping["counterparty"].startswith("Beguenstigter")
    assert answer["account"] == "DE44500105175407324931"
    rows = await all_transactions(client, alice)
    amounts = sorted(row["amount"] for row in rows)
    # Two identical coffees on one day are two transactions.
    assert amounts == [-1250.0, -68.43, -3.8, -3.8, 1500.0]
    rent = next(row for row in rows if row["amount"] == -1250.0)
    assert (rent["bookingDate"], rent["valueDate"]) == ("2026-11-05", "2026-11-06")
    # Windows-1252 bytes read as such.
    assert any(row["counterparty"] == "Müller & Söhne GmbH" for row in rows)


async def test_csv_english_layout_with_debit_and_credit_columns(
    client: httpx.AsyncClient, alice: Tenant
) -> None:
    refused = await import_bytes(client, alice, fixture("csv-lloyds.csv"))
    assert refused.status_code == 400
    assert "currency" in refused.json()["error"]["errorMessage"]
    answer = result(await import_bytes(client, alice, fixture("csv-lloyds.csv"), currency="GBP"))
    assert answer["mapping"]["debit"] == "Debit Amount"
    assert answer["mapping"]["dateFormat"] == "DD/MM/YYYY" and answer["added"] == 5
    rows = await all_transactions(client, alice)
    assert [row["amount"] for row in rows] == [-2.8, -2.8, -84.2, 1250.0, -6.45]
    assert rows[3]["reference"] == "ACME LTD INVOICE 1042, THANK YOU"
    assert {row["account"] for row in rows} == {"12345678"}
