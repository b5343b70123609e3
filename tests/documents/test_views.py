"""Saved views (issue 41 item 4): a where clause, words, sort and columns saved for oneself or
shared; validated when saved; counted now; changed and deleted by whom may; the tenant wall."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from persistence.store import Store
from tests.conftest import Tenant, member_of
from tests.documents.conftest import call, doc, result

DOCS = [
    doc("doc_1", merchant="Shell", category="Fuel"),
    doc("doc_2", merchant="Aral", category="Fuel", archived=True),
    doc("doc_3", merchant="Starbucks", category="Meals", summary="Latte with a client"),
]
FUEL = {"conditions": [{"field": "category", "op": "eq", "value": "Fuel"}]}


@pytest.fixture
async def viewer(store: Store, alice: Tenant) -> Tenant:
    await store.documents.writes.insert_many(alice.org_id, DOCS)
    return alice


async def save(client: httpx.AsyncClient, who: Tenant, **body: Any) -> Any:
    answer = await call(client, who, "views.create", body)
    assert answer.status_code == 200, answer.text
    return result(answer)["view"]


async def names_and_counts(client: httpx.AsyncClient, who: Tenant) -> list[tuple[str, Any]]:
    views = result(await call(client, who, "views.list", {"counts": True}))["views"]
    return [(v["name"], v["count"]) for v in views]


async def test_a_saved_view_runs_its_clause_and_counts_now(
    client: httpx.AsyncClient, viewer: Tenant
) -> None:
    fuel = await save(client, viewer, name="  Fuel  receipts ", where=FUEL, sortBy="amount")
    assert fuel["name"] == "Fuel receipts" and fuel["columns"][0] == "docDate"
    assert fuel["where"]["conditions"][0]["value"] == "Fuel" and fuel["sortOrder"] == -1
    await save(client, viewer, name="Everything fuel", where=FUEL, archived="include")
    await save(client, viewer, name="client", query="client")
    assert await names_and_counts(client, viewer) == [
        ("client", 1),
        ("Everything fuel", 2),
        ("Fuel receipts", 1),
    ]
    got = result(await call(client, viewer, "views.get", {"id": fuel["id"]}))["view"]
    assert got["count"] == 1 and got["viewerCanEdit"] is True
    # The same clause through documents.search lists what the count counts.
    body = {"where": got["where"], "useSearch": False, "archived": got["archived"]}
    listed = result(await call(client, viewer, "documents.search", body))["documents"]
    assert [d["id"] for d in listed] == ["doc_1"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"name": " "}, "name"),
        ({"name": "x", "columns": ["merchant", "secret"]}, "columns"),
        ({"name": "x", "columns": []}, "columns"),
        ({"name": "x", "sortOrder": True}, "sortOrder"),
        (
            {"name": "x", "where": {"conditions": [{"field": "nope", "op": "eq", "value": 1}]}},
            "nope",
        ),
        (
            {"name": "x", "where": {"conditions": [{"field": "amount", "op": "gt", "value": "a"}]}},
            "where.conditions[0].value: expected a number",
        ),
    ],
)
async def test_a_view_that_cannot_run_is_refused_naming_why(
    client: httpx.AsyncClient, viewer: Tenant, body: dict[str, Any], words: str
) -> None:
    answer = await call(client, viewer, "views.create", body)
    assert answer.status_code == 400 and words in answer.text, answer.text
    assert await names_and_counts(client, viewer) == []


async def test_shared_views_are_seen_by_all_and_changed_by_owner_or_manager(
    client: httpx.AsyncClient, store: Store, viewer: Tenant
) -> None:
    member = await member_of(store, viewer, "m@example.com")
    admin = await member_of(store, viewer, "a@example.com", "admin")
    mine = await save(client, member, name="Member's own", where=FUEL)
    shared = await save(client, member, name="Team fuel", where=FUEL, shared=True)
    assert [n for n, _ in await names_and_counts(client, viewer)] == ["Team fuel"]
    assert (await call(client, viewer, "views.get", {"id": mine["id"]})).status_code == 404
    other = await call(client, member, "views.update", {"id": shared["id"], "name": "Ours"})
    assert other.status_code == 200
    by_admin = await call(client, admin, "views.update", {"id": shared["id"], "name": "Fuel"})
    assert by_admin.status_code == 200 and result(by_admin)["view"]["viewerCanEdit"] is True
    # A member may not change another's shared view.
    await save(client, viewer, name="Owner's shared", shared=True)
    owners = next(
        v
        for v in result(await call(client, member, "views.list", {}))["views"]
        if v["name"] == "Owner's shared"
    )
    assert owners["viewerCanEdit"] is False
    refused = await call(client, member, "views.delete", {"id": owners["id"]})
    assert refused.status_code == 403
    assert (await call(client, admin, "views.delete", {"id": owners["id"]})).status_code == 200


async def test_an_update_changes_only_what_is_sent(
    client: httpx.AsyncClient, viewer: Tenant
) -> None:
    view = await save(client, viewer, name="Fuel", where=FUEL, query="shell")
    body = {"id": view["id"], "query": None, "columns": ["merchant", "amount"]}
    changed = result(await call(client, viewer, "views.update", body))["view"]
    assert changed["query"] is None and changed["columns"] == ["merchant", "amount"]
    assert changed["where"] == view["where"] and changed["name"] == "Fuel"
    null_name = await call(client, viewer, "views.update", {"id": view["id"], "name": None})
    assert null_name.status_code == 400 and "name" in null_name.text
    bad = {"id": view["id"], "where": {"conditions": [{"field": "nope", "op": "eq", "value": 1}]}}
    assert (await call(client, viewer, "views.update", bad)).status_code == 400
    got = result(await call(client, viewer, "views.get", {"id": view["id"]}))["view"]
    assert got["where"] == view["where"]  # the refused change wrote nothing


async def test_another_workspace_cannot_see_or_change_a_view(
    client: httpx.AsyncClient, viewer: Tenant, bob: Tenant
) -> None:
    shared = await save(client, viewer, name="Shared", shared=True)
    assert result(await call(client, bob, "views.list", {}))["views"] == []
    for slug, body in [
        ("views.get", {"id": shared["id"]}),
        ("views.update", {"id": shared["id"], "name": "Mine now"}),
        ("views.delete", {"id": shared["id"]}),
    ]:
        assert (await call(client, bob, slug, body)).status_code == 404


async def test_one_call_counts_a_bounded_number_of_views(
    client: httpx.AsyncClient, store: Store, viewer: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shared views add up over a workspace's people: one call counts at most MAX_COUNTED of
    them (the threats' cost), the rest answer null."""
    monkeypatch.setattr("resolvers.resources.views.MAX_COUNTED", 2)
    reads: list[Any] = []
    counting = store.documents.reads.count

    async def counted(workspace_id: str, query: Any) -> int:
        reads.append(query)
        return await counting(workspace_id, query)

    monkeypatch.setattr(store.documents.reads, "count", counted)
    for name in ("a", "b", "c"):
        await save(client, viewer, name=name, where=FUEL)
    assert await names_and_counts(client, viewer) == [("a", 1), ("b", 1), ("c", None)]
    assert len(reads) == 2


async def test_a_person_keeps_at_most_their_views(
    client: httpx.AsyncClient, viewer: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("resolvers.resources.views.MAX_VIEWS_PER_PERSON", 2)
    await save(client, viewer, name="one")
    await save(client, viewer, name="two")
    over = await call(client, viewer, "views.create", {"name": "three"})
    assert over.status_code == 400 and "at most 2 views" in over.text


@pytest.mark.wire
async def test_views_over_the_wire(wire_store: Store) -> None:
    """The visible-views read (own or shared) and a stored clause read back, on the real
    protocol."""
    await wire_store.views.create(
        "org_w",
        "usr_a",
        {"name": "a", "nameKey": "a", "shared": False, "where": FUEL, "columns": ["merchant"]},
    )
    await wire_store.views.create(
        "org_w",
        "usr_b",
        {"name": "b", "nameKey": "b", "shared": True, "where": None, "columns": ["merchant"]},
    )
    await wire_store.views.create(
        "org_w",
        "usr_b",
        {"name": "c", "nameKey": "c", "shared": False, "where": None, "columns": ["merchant"]},
    )
    seen = await wire_store.views.visible("org_w", "usr_a")
    assert [v["name"] for v in seen] == ["a", "b"] and seen[0]["where"] == FUEL
    assert await wire_store.views.visible("org_x", "usr_a") == []


async def test_views_through_graphql(client: httpx.AsyncClient, viewer: Tenant) -> None:
    """The same capability on the GraphQL face: saved with a typed where clause, read back with
    its count; a clause that cannot run is an error naming it, and nothing is saved."""
    from tests.graphql.helpers import gql

    made = await gql(
        client,
        "mutation($input: CreateViewInput!) { viewsCreate(input: $input) { view { id } } }",
        {"input": {"name": "Fuel", "where": FUEL}},
        viewer.headers(),
    )
    assert "errors" not in made, made
    view_id = made["data"]["viewsCreate"]["view"]["id"]
    got = await gql(
        client,
        "query($input: ViewRefInput!) { viewsGet(input: $input) "
        "{ view { name count where { conditions { field op value } } } } }",
        {"input": {"id": view_id}},
        viewer.headers(),
    )
    assert got["data"]["viewsGet"]["view"] == {
        "name": "Fuel",
        "count": 1,
        "where": {"conditions": [{"field": "category", "op": "eq", "value": "Fuel"}]},
    }
    bad = {"conditions": [{"field": "nope", "op": "eq", "value": 1}]}
    refused = await gql(
        client,
        "mutation($input: CreateViewInput!) { viewsCreate(input: $input) { view { id } } }",
        {"input": {"name": "Bad", "where": bad}},
        viewer.headers(),
    )
    assert refused["errors"] and "nope" in refused["errors"][0]["message"]
    assert [n for n, _ in await names_and_counts(client, viewer)] == ["Fuel"]
