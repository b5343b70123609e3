"""Tags (issue 41 item 3): the workspace's tags, documents.update's and documents.tag's
tagging, the ``tags`` where-clause field (eq, ne, in, nin, all, exists) on REST and in GraphQL's
typed filter, renaming and deleting, and the tenant wall."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from persistence.documents.matching import matches
from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, asgi_client, make_tenant
from tests.documents.conftest import call, doc, result

DOCS = [doc(f"doc_{n}", merchant=f"Shop {n}") for n in range(1, 6)]


@pytest.fixture
async def tagged(store: Store, client: httpx.AsyncClient, alice: Tenant) -> Tenant:
    await store.documents.writes.insert_many(alice.org_id, DOCS)
    for name in ("Travel", "Tax 2026", "Client X"):
        assert (await call(client, alice, "tags.create", {"name": name})).status_code == 200
    await tag(client, alice, ["doc_1", "doc_2"], add=["travel"])  # any case: the tag's spelling
    await tag(client, alice, ["doc_2", "doc_3"], add=["Tax 2026"])
    return alice


async def tag(client: httpx.AsyncClient, tenant: Tenant, ids: list[str], **body: Any) -> Any:
    answer = await call(client, tenant, "documents.tag", {"ids": ids, **body})
    assert answer.status_code == 200, answer.text
    return result(answer)


async def ids(client: httpx.AsyncClient, tenant: Tenant, *conditions: dict[str, Any]) -> list[str]:
    body = {"where": {"conditions": list(conditions)}, "sortBy": "id", "sortOrder": 1}
    found = result(await call(client, tenant, "documents.search", body))["documents"]
    return [d["id"] for d in found]


def tags(op: str, value: Any) -> dict[str, Any]:
    return {"field": "tags", "op": op, "value": value}


async def test_the_where_clause_tests_tags(client: httpx.AsyncClient, tagged: Tenant) -> None:
    assert await ids(client, tagged, tags("eq", "Travel")) == ["doc_1", "doc_2"]
    assert await ids(client, tagged, tags("in", ["Travel", "Tax 2026"])) == [
        "doc_1", "doc_2", "doc_3",
    ]  # fmt: skip
    assert await ids(client, tagged, tags("all", ["Travel", "Tax 2026"])) == ["doc_2"]
    assert await ids(client, tagged, tags("nin", ["Travel"])) == ["doc_3", "doc_4", "doc_5"]
    assert await ids(client, tagged, tags("ne", "Tax 2026")) == ["doc_1", "doc_4", "doc_5"]
    assert await ids(client, tagged, tags("exists", True)) == ["doc_1", "doc_2", "doc_3"]
    assert await ids(client, tagged, tags("exists", False)) == ["doc_4", "doc_5"]
    counted = await call(client, tagged, "documents.count", {"where": {"conditions": [
        tags("eq", "Travel")]}})  # fmt: skip
    assert result(counted)["count"] == 2
    # Taking the last tag off leaves an empty list: untagged, as a document never tagged.
    await tag(client, tagged, ["doc_1"], remove=["Travel"])
    assert await ids(client, tagged, tags("exists", False)) == ["doc_1", "doc_4", "doc_5"]


async def test_an_operator_a_tag_list_does_not_take_is_a_400(
    client: httpx.AsyncClient, tagged: Tenant
) -> None:
    answer = await call(client, tagged, "documents.search", {
        "where": {"conditions": [tags("gt", "Travel")]}})  # fmt: skip
    assert answer.status_code == 400
    message = answer.json()["error"]["errorMessage"]
    assert "where.conditions[0]" in message and "tags fields take" in message and "all" in message
    empty = await call(client, tagged, "documents.search", {
        "where": {"conditions": [tags("all", [])]}})  # fmt: skip
    assert empty.status_code == 400 and "non-empty array" in empty.text


async def test_graphql_typed_filter_takes_tags(client: httpx.AsyncClient, tagged: Tenant) -> None:
    query = """{ documentsConnection(filter: {tags: {all: ["Travel", "Tax 2026"]}},
                 first: 5) { nodes { id tags } } }"""
    answer = await client.post("/v1/graphql", json={"query": query}, headers=tagged.headers())
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["documentsConnection"]["nodes"] == [
        {"id": "doc_2", "tags": ["Travel", "Tax 2026"]}
    ]
    none = """{ documentsConnection(filter: {tags: {exists: false}}, first: 9) { totalCount } }"""
    answer = await client.post("/v1/graphql", json={"query": none}, headers=tagged.headers())
    assert answer.json()["data"]["documentsConnection"]["totalCount"] == 2


async def test_tags_list_counts_and_unknown_tags_are_refused(
    client: httpx.AsyncClient, tagged: Tenant
) -> None:
    listed = result(await call(client, tagged, "tags.list", {}))["tags"]
    assert [(t["name"], t["documentCount"]) for t in listed] == [
        ("Client X", 0), ("Tax 2026", 2), ("Travel", 2),
    ]  # fmt: skip
    assert all(t["colour"].startswith("#") and len(t["colour"]) == 7 for t in listed)
    unknown = await call(client, tagged, "documents.tag", {"ids": ["doc_1"], "add": ["Trvel"]})
    assert unknown.status_code == 400
    assert "add: 'Trvel' is not a tag of this workspace" in unknown.text
    update = await call(client, tagged, "documents.update", {"id": "doc_4", "tags": ["Nope"]})
    assert update.status_code == 400 and "tags: 'Nope'" in update.text
    taken = await call(client, tagged, "tags.create", {"name": " travel "})
    assert taken.status_code == 409


async def test_update_replaces_tags_and_records_the_edit(
    client: httpx.AsyncClient, tagged: Tenant
) -> None:
    answer = await call(client, tagged, "documents.update", {
        "id": "doc_4", "tags": ["client x", "Travel"]})  # fmt: skip
    assert answer.status_code == 200, answer.text
    assert result(answer)["document"]["tags"] == ["Client X", "Travel"]
    got = result(await call(client, tagged, "documents.get", {"id": "doc_4"}))["document"]
    history = [(e["field"], e["oldValue"], e["newValue"]) for e in got["editHistory"]]
    assert ("tags", [], ["Client X", "Travel"]) in history or (
        "tags", None, ["Client X", "Travel"]) in history  # fmt: skip
    cleared = await call(client, tagged, "documents.update", {"id": "doc_4", "tags": None})
    assert result(cleared)["document"]["tags"] == []


async def test_documents_tag_reports_what_it_did(
    client: httpx.AsyncClient, tagged: Tenant, bob: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(bob.org_id, [doc("doc_bob")])
    done = await tag(client, tagged, ["doc_1", "doc_3", "doc_bob", "doc_9"], add=["Client X"])
    # Another workspace's document is not found here, as one that does not exist.
    assert done == {"matched": 2, "modified": 2, "missing": ["doc_bob", "doc_9"]}
    again = await tag(client, tagged, ["doc_1"], add=["Client X"])
    assert again["modified"] == 0  # already there: nothing written
    bobs = await store.documents.reads.get(bob.org_id, "doc_bob")
    assert bobs is not None and not bobs.get("tags")
    both = await call(client, tagged, "documents.tag", {
        "ids": ["doc_1"], "add": ["Travel"], "remove": ["travel"]})  # fmt: skip
    assert both.status_code == 400 and "also in add" in both.text


async def test_rename_and_delete_rewrite_the_documents(
    client: httpx.AsyncClient, tagged: Tenant, store: Store
) -> None:
    listed = result(await call(client, tagged, "tags.list", {}))["tags"]
    travel = next(t for t in listed if t["name"] == "Travel")
    renamed = result(await call(client, tagged, "tags.update", {
        "id": travel["id"], "name": "Trips", "colour": "#AABBCC"}))  # fmt: skip
    assert renamed["documentsChanged"] == 2
    assert renamed["tag"] == {"id": travel["id"], "name": "Trips", "colour": "#aabbcc",
                              "documentCount": 2}  # fmt: skip
    assert await ids(client, tagged, tags("eq", "Trips")) == ["doc_1", "doc_2"]
    assert await ids(client, tagged, tags("eq", "Travel")) == []
    deleted = result(await call(client, tagged, "tags.delete", {"id": travel["id"]}))
    assert deleted == {"id": travel["id"], "deleted": True, "documentsChanged": 2}
    doc_2 = await store.documents.reads.get(tagged.org_id, "doc_2")
    assert doc_2 is not None and doc_2["tags"] == ["Tax 2026"]
    gone = await call(client, tagged, "tags.delete", {"id": travel["id"]})
    assert gone.status_code == 404


async def test_another_workspace_cannot_see_or_use_the_tags(
    client: httpx.AsyncClient, tagged: Tenant, bob: Tenant
) -> None:
    assert result(await call(client, bob, "tags.list", {}))["tags"] == []
    listed = result(await call(client, tagged, "tags.list", {}))["tags"]
    someone_elses = listed[0]["id"]
    for slug, body in (
        ("tags.update", {"id": someone_elses, "name": "Mine"}),
        ("tags.delete", {"id": someone_elses}),
    ):
        assert (await call(client, bob, slug, body)).status_code == 404
    # Bob may have his own tag of the same name.
    assert (await call(client, bob, "tags.create", {"name": "Travel"})).status_code == 200


def test_the_in_memory_matcher_reads_all_and_untagged() -> None:
    """A ranked search evaluates where-clauses in memory (``matching``): $all, and exists on a
    tag list ({$exists, $ne: []} and its $nor) as the store does."""
    from domain.where import WhereClause
    from persistence.documents.fields import SEARCH_FIELDS
    from persistence.where import compile_where

    def selector(*conditions: dict[str, Any]) -> dict[str, Any]:
        clause = WhereClause.model_validate({"conditions": list(conditions)})
        return compile_where(clause, SEARCH_FIELDS)

    both, one, none = {"tags": ["A", "B"]}, {"tags": ["A"]}, {"tags": []}
    assert matches(selector(tags("all", ["A", "B"])), both)
    assert not matches(selector(tags("all", ["A", "B"])), one)
    untagged = selector(tags("exists", False))
    assert matches(untagged, none) and matches(untagged, {}) and not matches(untagged, one)


@pytest.mark.wire
async def test_tags_over_the_wire(wire_store: Store, registry: Registry) -> None:
    """The store's side on the real protocol: the unique name, $all, a tag list's exists
    ({$ne: []}), $addToSet and $pull of a rename, $unwind of the counts."""
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    await wire_store.documents.writes.insert_many(alice.org_id, DOCS)
    async with asgi_client(wire_store, registry) as http:
        for name in ("Travel", "Tax 2026"):
            assert (await call(http, alice, "tags.create", {"name": name})).status_code == 200
        assert (await call(http, alice, "tags.create", {"name": "TRAVEL"})).status_code == 409
        await tag(http, alice, ["doc_1", "doc_2"], add=["Travel"])
        await tag(http, alice, ["doc_2", "doc_3"], add=["Tax 2026"])
        await tag(http, alice, ["doc_3"], remove=["Tax 2026"])  # leaves []: untagged
        assert await ids(http, alice, tags("all", ["Travel", "Tax 2026"])) == ["doc_2"]
        assert await ids(http, alice, tags("exists", False)) == ["doc_3", "doc_4", "doc_5"]
        assert await ids(http, alice, tags("nin", ["Travel"])) == ["doc_3", "doc_4", "doc_5"]
        listed = result(await call(http, alice, "tags.list", {}))["tags"]
        assert [(t["name"], t["documentCount"]) for t in listed] == [
            ("Tax 2026", 1), ("Travel", 2),
        ]  # fmt: skip
        travel = listed[1]["id"]
        renamed = await call(http, alice, "tags.update", {"id": travel, "name": "Trips"})
        assert result(renamed)["documentsChanged"] == 2
        assert await ids(http, alice, tags("eq", "Trips")) == ["doc_1", "doc_2"]
        assert await ids(http, alice, tags("eq", "Travel")) == []
        grouped = await http.post(
            "/v1/graphql", json={"query": TAG_GROUPS}, headers=alice.headers()
        )
        found = grouped.json()["data"]["documentsAggregate"]
        counts = {g["key"]["tag"]: g["count"] for g in found["groups"]}
        assert counts == {"Trips": 2, "Tax 2026": 1, None: 3}, found


TAG_GROUPS = """{ documentsAggregate(groupBy: [TAG]) {
  totalCount groups { key { tag currency } count sum { amount } } } }"""


async def test_aggregate_groups_by_tag(client: httpx.AsyncClient, tagged: Tenant) -> None:
    """groupBy TAG: a document counts under each of its tags, an untagged one under null;
    the total counts documents once."""
    answer = await client.post("/v1/graphql", json={"query": TAG_GROUPS}, headers=tagged.headers())
    assert answer.status_code == 200, answer.text
    found = answer.json()["data"]["documentsAggregate"]
    assert found["totalCount"] == 5
    groups = {g["key"]["tag"]: (g["count"], g["sum"]["amount"]) for g in found["groups"]}
    assert groups == {"Travel": (2, "20.00"), "Tax 2026": (2, "20.00"), None: (2, "20.00")}


async def test_a_document_carries_at_most_twenty_tags(
    client: httpx.AsyncClient, tagged: Tenant
) -> None:
    names = [f"T{n:02d}" for n in range(21)]
    for name in names:
        await call(client, tagged, "tags.create", {"name": name})
    over = await call(client, tagged, "documents.tag", {"ids": ["doc_1"], "add": names[:20]})
    assert over.status_code == 400  # doc_1 already carries Travel: 21
    assert "document 'doc_1' would carry 21 tags; at most 20" in over.text
    got = result(await call(client, tagged, "documents.get", {"id": "doc_1"}))["document"]
    assert got["tags"] == ["Travel"]  # nothing written: the check comes before any write
    too_many = await call(client, tagged, "documents.update", {"id": "doc_4", "tags": names})
    assert too_many.status_code == 400 and "tags" in too_many.text


async def test_a_workspace_holds_at_most_its_tags(
    client: httpx.AsyncClient, tagged: Tenant, bob: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workspace's cap (500; 5 here, the three of the fixture and two more) refuses the
    next tag with a 400 and writes nothing; another workspace has its own room."""
    monkeypatch.setattr("resolvers.resources.tags.MAX_TAGS", 5)
    for name in ("Fuel", "Meals"):
        assert (await call(client, tagged, "tags.create", {"name": name})).status_code == 200
    over = await call(client, tagged, "tags.create", {"name": "Hotels"})
    assert over.status_code == 400 and "a workspace has at most 5 tags" in over.text
    listed = result(await call(client, tagged, "tags.list", {}))["tags"]
    assert len(listed) == 5 and "Hotels" not in {t["name"] for t in listed}
    assert (await call(client, bob, "tags.create", {"name": "Hotels"})).status_code == 200
