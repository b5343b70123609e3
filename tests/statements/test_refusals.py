"""A malformed statement of each kind is a 400 naming its line or element, and nothing of it is
stored, though the lines before the fault were readable."""

from __future__ import annotations

import httpx
import pytest

from persistence.store import Store
from tests.conftest import Tenant
from tests.statements.helpers import fixture, import_bytes, result

MALFORMED = [
    ("malformed-csv-amount.csv", "csv file, line 5: '-1.250,0O' is not an amount"),
    ("malformed-mt940.sta", "mt940 file, line 10: tag :61: is malformed"),
    ("malformed-ofx1.ofx", "ofx file, line 50: </BANKACCTFROM> closes no open element"),
    (
        "malformed-ofx2.qfx",
        "ofx file, CREDITCARDMSGSRSV1/CCSTMTTRNRS/CCSTMTRS/BANKTRANLIST/STMTTRN[2]/TRNAMT "
        "(line 34): '-112,00,0' is not an amount",
    ),
    (
        "malformed-camt053.xml",
        "camt053 file, Stmt/Ntry[2]/NtryDtls/TxDtls[2]/Amt (line 68): '51O.00' is not an amount",
    ),
    (
        "malformed-camt053-batch-sum.xml",
        "camt053 file, Stmt/Ntry[2] (line 48): the batch's TxDtls add up to -1055.00, "
        "the entry says -1050.00",
    ),
]


async def stored(store: Store) -> int:
    return int(await store.db["transactions"].count_documents({}))


@pytest.mark.parametrize(("name", "message"), MALFORMED)
async def test_malformed_file_is_refused_with_its_place_and_nothing_stored(
    client: httpx.AsyncClient, alice: Tenant, store: Store, name: str, message: str
) -> None:
    response = await import_bytes(client, alice, fixture(name), name)
    assert response.status_code == 400, response.text
    assert message in response.json()["error"]["errorMessage"]
    assert await stored(store) == 0
    assert await store.db["statement_mappings"].count_documents({}) == 0


async def test_xml_with_entities_is_refused_unexpanded(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    laughs = (
        b'<?xml version="1.0"?><!DOCTYPE Document [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>'
        b"<Stmt><Id>&b;</Id></Stmt></BkToCstmrStmt></Document>"
    )
    response = await import_bytes(client, alice, laughs, format="camt053")
    assert response.status_code == 400
    assert "must not declare a DOCTYPE" in response.json()["error"]["errorMessage"]
    external = laughs.replace(b'"aaaaaaaaaa"', b'SYSTEM "file:///etc/passwd"')
    assert (await import_bytes(client, alice, external, format="camt053")).status_code == 400
    assert await stored(store) == 0


async def test_broken_xml_names_its_line(client: httpx.AsyncClient, alice: Tenant) -> None:
    broken = fixture("camt053-batch.xml").replace(b"</Ntry>", b"</Ntri>", 1)
    response = await import_bytes(client, alice, broken)
    assert response.status_code == 400
    assert "camt053 file, line 47: not well-formed XML" in response.json()["error"]["errorMessage"]


async def test_limits_and_garbage(client: httpx.AsyncClient, alice: Tenant, store: Store) -> None:
    body = {"fileName": "x.csv", "base64Data": "not base64!"}
    response = await client.post(
        "/v1/capabilities/statements.import", json=body, headers=alice.headers()
    )
    assert response.status_code == 400 and "not valid base64" in response.text
    huge = b"Buchungstag;Betrag;Waehrung\n" + b"01.11.2026;-1,00;EUR\n" * 500_000
    response = await import_bytes(client, alice, huge)
    assert response.status_code == 400 and "larger than 10 MB" in response.text
    many = b"Buchungstag;Betrag;Waehrung\n" + b"01.11.2026;-1,00;EUR\n" * 20_001
    response = await import_bytes(client, alice, many)
    assert response.status_code == 400
    assert "line 20002: more than 20,000 transactions" in response.text
    unknown = await import_bytes(client, alice, b"hello,world\n1,2\n")
    assert unknown.status_code == 400 and "no header row" in unknown.text
    ambiguous = b"Date,Amount,Currency\n03/04/2026,-1.00,EUR\n05/06/2026,-2.00,EUR\n"
    response = await import_bytes(client, alice, ambiguous)
    assert response.status_code == 400 and "give mapping.dateFormat" in response.text
    mapping = {"bookingDate": "Date", "amount": "Amount", "currency": "Currency"}
    mapping |= {"dateFormat": "MM/DD/YYYY"}
    answer = result(await import_bytes(client, alice, ambiguous, mapping=mapping))
    assert answer["periodStart"] == "2026-03-04" and answer["mappingSource"] == "given"
    assert await stored(store) == 2
