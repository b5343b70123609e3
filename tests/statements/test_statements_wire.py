"""On the real MongoDB protocol (the embedded server): the unique index is what keeps two
imports of one statement, even racing, from storing a line twice."""

from __future__ import annotations

import asyncio

import pytest
from pymongo.errors import DuplicateKeyError

from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import asgi_client, make_tenant
from tests.statements.helpers import call, fixture, import_bytes, result
from tests.statements.test_auto_match import FIRST, RECEIPTS, by_text, statement

pytestmark = pytest.mark.wire


async def test_racing_imports_store_each_line_once(wire_store: Store, registry: Registry) -> None:
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    async with asgi_client(wire_store, registry) as http:
        answers = await asyncio.gather(
            *(import_bytes(http, alice, fixture("camt053-batch.xml")) for _ in range(3))
        )
        added = [result(answer)["added"] for answer in answers if answer.status_code == 200]
        # One at a time per key (cost): a refused call is a 429, never a second copy.
        assert all(a.status_code in (200, 429) for a in answers)
        assert sum(added) == 5
        assert result(await import_bytes(http, alice, fixture("camt053-batch.xml")))["added"] == 0
    assert await wire_store.db["transactions"].count_documents({}) == 5


async def test_the_unique_index_refuses_a_second_copy(wire_store: Store) -> None:
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    row = {"_id": "txn_1", "workspaceId": alice.org_id, "key": "id:abc", "amount": -100}
    await wire_store.db["transactions"].insert_one(row)
    with pytest.raises(DuplicateKeyError):
        await wire_store.db["transactions"].insert_one({**row, "_id": "txn_2"})
    # The same key in another workspace is another transaction.
    await wire_store.db["transactions"].insert_one({**row, "_id": "txn_3", "workspaceId": "org_b"})
    # The store's insert counts the copy as already there instead of failing the import.
    added = await wire_store.transactions.insert_new(
        alice.org_id, [{**row, "_id": "txn_4"}, {**row, "_id": "txn_5", "key": "id:new"}]
    )
    assert [row["_id"] for row in added] == ["txn_5"]


async def test_auto_match_at_import_and_its_undo(wire_store: Store, registry: Registry) -> None:
    """The import's reads (documents in the window, matched and undone documents, unmatched
    rivals) and the match's compare-and-set, on the real protocol."""
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    await wire_store.documents.writes.insert_many(alice.org_id, RECEIPTS)
    async with asgi_client(wire_store, registry) as http:
        answer = result(await import_bytes(http, alice, FIRST, "s.csv", currency="GBP"))
        assert (answer["added"], answer["autoMatched"]) == (3, 2)
        shell = (await by_text(http, alice))["SHELL 2026-11-20"]
        assert shell["matches"][0]["via"] == "auto"
        await call(http, alice, "matches.undo", {"transactionId": shell["id"]})
        again = statement(("21/11/2026", "SHELL", "61.20"))
        answer = result(await import_bytes(http, alice, again, "t.csv", currency="GBP"))
        assert (answer["added"], answer["autoMatched"]) == (1, 0)
    assert await wire_store.transactions.auto_undone_documents(
        alice.org_id, ["doc_shell", "doc_pret"]
    ) == {"doc_shell"}
