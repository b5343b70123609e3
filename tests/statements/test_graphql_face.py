"""The same capabilities on GraphQL: a statement imported with statementsImport, its
transactions read with transactionsSearch and its plain where clause, a refusal's place."""

from __future__ import annotations

import base64

import httpx

from tests.conftest import Tenant
from tests.graphql.helpers import gql
from tests.statements.helpers import fixture

IMPORT = """
mutation ($input: ImportStatementInput!) {
  statementsImport(input: $input) { format added alreadyThere account periodEnd
    closingBalance { amount currency date } }
}"""
SEARCH = """
query ($input: SearchTransactionsInput!) {
  transactionsSearch(input: $input) {
    transactions { bookingDate amount currency counterparty matched batch { amount } }
  }
}"""


async def test_import_and_search_over_graphql(client: httpx.AsyncClient, alice: Tenant) -> None:
    data = base64.b64encode(fixture("camt053-batch.xml")).decode()
    body = await gql(
        client,
        IMPORT,
        {"input": {"fileName": "nov.xml", "base64Data": data}},
        headers=alice.headers(),
    )
    assert body.get("errors") is None, body
    answer = body["data"]["statementsImport"]
    assert (answer["format"], answer["added"], answer["alreadyThere"]) == ("camt053", 5, 0)
    assert answer["closingBalance"]["currency"] == "EUR"
    where = {"conditions": [{"field": "amount", "op": "lt", "value": -100}]}
    body = await gql(
        client, SEARCH, {"input": {"where": where, "sortOrder": 1}}, headers=alice.headers()
    )
    assert body.get("errors") is None, body
    rows = body["data"]["transactionsSearch"]["transactions"]
    assert {row["counterparty"] for row in rows} == {
        "Bürobedarf Nord GmbH",
        "Cloud Hosting AG",
        "Taxi Hansa",
    }
    assert all(row["matched"] is False and row["batch"] for row in rows)


async def test_a_malformed_file_is_a_graphql_error_naming_the_element(
    client: httpx.AsyncClient, alice: Tenant
) -> None:
    data = base64.b64encode(fixture("malformed-camt053.xml")).decode()
    body = await gql(
        client,
        IMPORT,
        {"input": {"fileName": "bad.xml", "base64Data": data}},
        headers=alice.headers(),
    )
    error = body["errors"][0]
    assert "Stmt/Ntry[2]/NtryDtls/TxDtls[2]/Amt (line 68)" in error["message"]
    assert error["extensions"]["code"] == "BAD_REQUEST"
