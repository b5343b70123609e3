"""The lists nested in a workspace or a document as Relay connections: Workspace.members,
Workspace.rules, Document.duplicatesConnection and Document.editHistoryConnection (paged both
ways, bounded, scoped and role-checked like their capabilities), and rules as Nodes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from persistence.store import Store
from resolvers.framework.auth import new_api_key_secret
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, asgi_client, member_of
from tests.documents.conftest import call, doc, result
from tests.graphql.helpers import gql

PAGE = "pageInfo { hasNextPage hasPreviousPage startCursor endCursor }"
MEMBERS = f"""query($first: Int, $after: String, $last: Int, $before: String) {{
  workspace {{ members(first: $first, after: $after, last: $last, before: $before) {{
    totalCount {PAGE} edges {{ cursor node {{ userId email role isYou }} }} nodes {{ userId }}
  }} }} }}"""
RULES = f"""query($first: Int, $after: String, $last: Int, $before: String, $all: Boolean) {{
  workspace {{ rules(first: $first, after: $after, last: $last, before: $before,
                     includeDisabled: $all) {{
    totalCount {PAGE} edges {{ cursor node {{ id name status }} }} nodes {{ id }}
  }} }} }}"""
DUPLICATES = f"""query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {{
  node(id: $id) {{ ... on Document {{
    duplicatesConnection(first: $first, after: $after, last: $last, before: $before) {{
      totalCount {PAGE} edges {{ cursor node {{ id merchant duplicateOf {{ id }} }} }}
      nodes {{ id }} }}
    }} }} }}"""
HISTORY = f"""query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {{
  node(id: $id) {{ ... on Document {{
    editHistoryConnection(first: $first, after: $after, last: $last, before: $before) {{
      totalCount {PAGE} edges {{ cursor node {{ field newValue }} }} nodes {{ newValue }} }}
    }} }} }}"""
RULE_NODE = """query($id: ID!) { node(id: $id) { __typename id ... on Rule {
  name status triggerType createdBy } } }"""


@pytest.fixture
async def service(store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(store, registry) as http:
        yield http


async def key_with(store: Store, tenant: Tenant, *scopes: str) -> dict[str, str]:
    """Headers of a key of ``tenant`` restricted to ``scopes`` in its workspace."""
    secret = new_api_key_secret()
    await store.api_keys.create(
        tenant.user_id, secret, restricted_to=tenant.org_id, scopes=[*scopes]
    )
    return {"Authorization": f"Bearer {secret}", "X-Service-Org-Id": tenant.org_id}


async def connection(
    client: httpx.AsyncClient, query: str, headers: dict[str, str], path: str, **variables: Any
) -> dict[str, Any]:
    body = await gql(client, query, variables, headers)
    assert "errors" not in body, body
    found: Any = body["data"]
    for step in path.split("."):
        found = found[step]
    assert isinstance(found, dict), body
    return found


async def walk(
    client: httpx.AsyncClient, query: str, headers: dict[str, str], path: str, key: str, size: int
) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    """Every record's ``key``, paged forward with ``first: size`` to the end and then back from
    the end with ``last: size``; also each page's pageInfo (forward pages first)."""
    forward: list[str] = []
    infos: list[dict[str, Any]] = []
    after = None
    while True:
        page = await connection(client, query, headers, path, first=size, after=after)
        assert [e["node"][key] for e in page["edges"]] == [n[key] for n in page["nodes"]]
        forward += [n[key] for n in page["nodes"]]
        infos.append(page["pageInfo"])
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    last = await connection(client, query, headers, path, last=size)
    backward = [n[key] for n in last["nodes"]]
    before = last["pageInfo"]["startCursor"]
    while last["pageInfo"]["hasPreviousPage"]:
        last = await connection(client, query, headers, path, last=size, before=before)
        backward = [n[key] for n in last["nodes"]] + backward
        before = last["pageInfo"]["startCursor"]
    return forward, backward, infos


# -- Workspace.members ----------------------------------------------------------------------


@pytest.fixture
async def team(store: Store, alice: Tenant, bob: Tenant) -> list[Tenant]:
    """Alice's workspace with four more people in it (and Bob, alone in his)."""
    people = [alice]
    for n, role in enumerate(["admin", "member", "member", "owner"]):
        people.append(await member_of(store, alice, f"p{n}@example.com", role))  # type: ignore[arg-type]
    return people


async def test_members_page_forward_and_back_like_members_list(
    service: httpx.AsyncClient, team: list[Tenant]
) -> None:
    alice = team[0]
    listed = result(await call(service, alice, "members.list", {}))["members"]
    assert len(listed) == 5
    ids = [m["userId"] for m in listed]
    forward, backward, infos = await walk(
        service, MEMBERS, alice.headers(), "workspace.members", "userId", 2
    )
    assert forward == ids and backward == ids  # oldest first, as members.list
    assert [(i["hasPreviousPage"], i["hasNextPage"]) for i in infos] == [
        (False, True),
        (True, True),
        (True, False),
    ]
    first = await connection(service, MEMBERS, alice.headers(), "workspace.members", first=1)
    assert first["totalCount"] == 5
    node = first["edges"][0]["node"]
    assert node == {"userId": alice.user_id, "email": "alice@example.com", "role": "owner",
                    "isYou": True}  # fmt: skip


async def test_members_who_joined_in_the_same_millisecond_page_as_members_list(
    service: httpx.AsyncClient, store: Store, team: list[Tenant]
) -> None:
    """Ties on the time of joining are broken the same way by members.list and the connection
    (by user id), so paging neither skips nor repeats anyone."""
    alice = team[0]
    same = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    await store.workspaces._memberships.update_many(
        {"workspaceId": alice.org_id}, {"$set": {"createdAt": same}}
    )
    listed = result(await call(service, alice, "members.list", {}))["members"]
    ids = [m["userId"] for m in listed]
    assert ids == sorted(ids)
    forward, backward, _ = await walk(
        service, MEMBERS, alice.headers(), "workspace.members", "userId", 2
    )
    assert forward == ids and backward == ids


async def test_members_are_the_workspaces_own_and_cursors_stay_there(
    service: httpx.AsyncClient, team: list[Tenant], bob: Tenant
) -> None:
    alice = team[0]
    mine = await connection(service, MEMBERS, bob.headers(), "workspace.members")
    assert [n["userId"] for n in mine["nodes"]] == [bob.user_id] and mine["totalCount"] == 1
    alices = await connection(service, MEMBERS, alice.headers(), "workspace.members", first=2)
    body = await gql(service, MEMBERS, {"after": alices["pageInfo"]["endCursor"]}, bob.headers())
    assert body["data"]["workspace"]["members"] is None
    assert "cursor: belongs to a different query" in body["errors"][0]["message"]
    # Through the workspaces list too: each workspace answers its own members.
    query = "{ workspacesList(input: {}) { workspaces { id workspace { members { nodes { email } } } } } }"  # noqa: E501
    body = await gql(service, query, headers=team[1].headers(org=None))
    assert "errors" not in body, body
    emails = {
        w["id"]: sorted(n["email"] for n in w["workspace"]["members"]["nodes"])
        for w in body["data"]["workspacesList"]["workspaces"]
    }
    assert len(emails[alice.org_id]) == 5 and "bob@example.com" not in emails[alice.org_id]


async def test_a_caller_who_may_not_list_members_gets_the_rest_error(
    service: httpx.AsyncClient, store: Store, team: list[Tenant]
) -> None:
    headers = await key_with(store, team[0], "read_documents")
    rest = await service.post("/v1/capabilities/members.list", json={}, headers=headers)
    assert rest.status_code == 403
    body = await gql(service, MEMBERS, {}, headers)
    # read_workspaces is also what reaches a Workspace: the workspace is refused, as REST does.
    assert body["data"]["workspace"] is None
    assert body["errors"][0]["message"] == rest.json()["error"]["errorMessage"]


async def test_bad_pages_are_clear_errors(service: httpx.AsyncClient, team: list[Tenant]) -> None:
    alice = team[0]
    cases = [
        ({"first": 101}, "first: between 1 and 100 (got 101)"),
        ({"last": 0}, "last: between 1 and 100 (got 0)"),
        ({"first": 1, "last": 1}, "first and last: give one"),
        ({"after": "nonsense"}, "cursor: not a cursor"),
    ]
    for variables, message in cases:
        body = await gql(service, MEMBERS, variables, alice.headers())
        assert body["data"]["workspace"]["members"] is None, variables
        assert message in body["errors"][0]["message"], (variables, body)


# -- Workspace.rules ------------------------------------------------------------------------

DEFINITION = {
    "name": "Archive fuel",
    "trigger": {"type": "document-processed"},
    "conditions": {
        "logic": "and",
        "conditions": [{"field": "category", "op": "eq", "value": "Fuel"}],
    },
    "actions": [{"type": "archive"}],
}


async def save_rule(store: Store, tenant: Tenant, name: str) -> str:
    record = await store.rules.create(
        tenant.org_id,
        name=name,
        text=f"{name}: archive fuel receipts",
        definition=DEFINITION,
        created_by=tenant.user_id,
        webhook_secret=None,
        next_run_at=None,
    )
    return str(record["_id"])


@pytest.fixture
async def rules(store: Store, alice: Tenant, bob: Tenant) -> list[str]:
    """Seven rules of Alice's (the third disabled) and one of Bob's."""
    ids = [await save_rule(store, alice, f"rule {n}") for n in range(7)]
    await store.rules.set_status(alice.org_id, ids[2], "disabled", None)
    await save_rule(store, bob, "Bob's secret rule")
    return ids


async def test_rules_page_forward_and_back_like_rules_list(
    service: httpx.AsyncClient, alice: Tenant, rules: list[str]
) -> None:
    for include_disabled, total in ((False, 6), (True, 7)):
        listed = result(
            await call(
                service, alice, "rules.list", {"includeDisabled": include_disabled, "limit": 100}
            )
        )["rules"]
        ids = [r["id"] for r in listed]
        assert len(ids) == total
        query = RULES.replace("$all: Boolean", "$all: Boolean = " + str(include_disabled).lower())
        forward, backward, infos = await walk(
            service, query, alice.headers(), "workspace.rules", "id", 3
        )
        assert forward == ids and backward == ids  # newest first, as rules.list
        assert len(infos) == -(-total // 3) and infos[-1]["hasNextPage"] is False
        assert (rules[2] in forward) is include_disabled  # the disabled one
        page = await connection(service, query, alice.headers(), "workspace.rules", first=1)
        assert page["totalCount"] == total


async def test_a_rules_cursor_is_bound_to_its_arguments(
    service: httpx.AsyncClient, alice: Tenant, rules: list[str]
) -> None:
    page = await connection(service, RULES, alice.headers(), "workspace.rules", first=2)
    body = await gql(
        service, RULES, {"all": True, "after": page["pageInfo"]["endCursor"]}, alice.headers()
    )
    assert body["data"]["workspace"]["rules"] is None
    assert "cursor: belongs to a different query" in body["errors"][0]["message"]


async def test_rules_are_the_workspaces_own_and_need_rules_scope(
    service: httpx.AsyncClient, store: Store, bob: Tenant, rules: list[str]
) -> None:
    mine = await connection(service, RULES, bob.headers(), "workspace.rules", all=True)
    assert [n["id"] for n in mine["nodes"]] not in ([], rules) and mine["totalCount"] == 1
    assert mine["edges"][0]["node"]["name"] == "Bob's secret rule"
    headers = await key_with(store, bob, "read_documents", "read_workspaces")
    rest = await service.post("/v1/capabilities/rules.list", json={}, headers=headers)
    assert rest.status_code == 403
    body = await gql(service, RULES, {}, headers)
    assert body["data"]["workspace"]["rules"] is None
    assert body["errors"][0]["message"] == rest.json()["error"]["errorMessage"]


# -- Rules as Nodes -------------------------------------------------------------------------


async def test_a_rule_is_a_node_in_its_workspace_only(
    service: httpx.AsyncClient, store: Store, alice: Tenant, bob: Tenant, rules: list[str]
) -> None:
    body = await gql(service, RULE_NODE, {"id": rules[0]}, alice.headers())
    assert body == {
        "data": {
            "node": {
                "__typename": "Rule",
                "id": rules[0],
                "name": "rule 0",
                "status": "enabled",  # AutomationRule's enums, shared
                "triggerType": "document_processed",
                "createdBy": alice.user_id,
            }
        }
    }
    assert (await gql(service, RULE_NODE, {"id": rules[0]}, bob.headers())) == {
        "data": {"node": None}
    }
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_a1")])
    query = "query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }"
    body = await gql(service, query, {"ids": [rules[1], "doc_a1", "rul_nothing"]}, alice.headers())
    assert body["data"]["nodes"] == [
        {"__typename": "Rule", "id": rules[1]},
        {"__typename": "Document", "id": "doc_a1"},
        None,
    ]
    # The same ids through Bob: neither is his.
    body = await gql(service, query, {"ids": [rules[1], "doc_a1"]}, bob.headers())
    assert body["data"]["nodes"] == [None, None]


async def test_a_rule_node_needs_the_rules_scope_and_credentials(
    service: httpx.AsyncClient, store: Store, alice: Tenant, rules: list[str]
) -> None:
    headers = await key_with(store, alice, "read_documents")
    body = await gql(service, RULE_NODE, {"id": rules[0]}, headers)
    assert body["data"]["node"] is None
    assert "read_rules" in body["errors"][0]["message"]
    for wanted in (rules[0], "org_x"):
        body = await gql(service, RULE_NODE, {"id": wanted})
        assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED", wanted


# -- Document.duplicatesConnection and editHistoryConnection --------------------------------


@pytest.fixture
async def duplicated(store: Store, alice: Tenant, bob: Tenant) -> list[str]:
    """doc_o with five duplicates in Alice's workspace, created a day apart (and Bob's doc_b)."""
    start = datetime(2024, 3, 1, tzinfo=UTC)
    ids = [f"doc_d{n}" for n in range(5)]
    await store.documents.writes.insert_many(
        alice.org_id,
        [doc("doc_o", merchant="Original")]
        + [
            doc(i, merchant=f"Copy {n}", createdAt=start + timedelta(days=n))
            for n, i in enumerate(ids)
        ],
    )
    for i in reversed(ids):  # recorded newest first: the connection orders them oldest first
        await store.documents.writes.link_duplicate(alice.org_id, "doc_o", i)
    await store.documents.writes.insert_many(bob.org_id, [doc("doc_b")])
    return ids


async def test_duplicates_page_forward_and_back(
    service: httpx.AsyncClient, alice: Tenant, duplicated: list[str]
) -> None:
    headers = alice.headers()
    forward, backward, infos = await walk(
        service, DUPLICATES.replace("$id: ID!", '$id: ID! = "doc_o"'), headers,
        "node.duplicatesConnection", "id", 2,
    )  # fmt: skip
    assert forward == duplicated and backward == duplicated
    assert len(infos) == 3
    page = await connection(
        service, DUPLICATES, headers, "node.duplicatesConnection", id="doc_o", first=1
    )
    assert page["totalCount"] == 5
    assert page["edges"][0]["node"] == {"id": "doc_d0", "merchant": "Copy 0",
                                        "duplicateOf": {"id": "doc_o"}}  # fmt: skip
    empty = await connection(service, DUPLICATES, headers, "node.duplicatesConnection", id="doc_d0")
    assert empty["totalCount"] == 0 and empty["nodes"] == []
    assert empty["pageInfo"] == {"hasNextPage": False, "hasPreviousPage": False,
                                 "startCursor": None, "endCursor": None}  # fmt: skip


async def test_a_documents_cursor_is_bound_to_that_document(
    service: httpx.AsyncClient, store: Store, alice: Tenant, duplicated: list[str]
) -> None:
    await store.documents.writes.link_duplicate(alice.org_id, "doc_d0", "doc_d1")
    page = await connection(
        service, DUPLICATES, alice.headers(), "node.duplicatesConnection", id="doc_o", first=1
    )
    cursor = page["pageInfo"]["endCursor"]
    body = await gql(service, DUPLICATES, {"id": "doc_d0", "after": cursor}, alice.headers())
    assert "cursor: belongs to a different query" in body["errors"][0]["message"]
    body = await gql(service, DUPLICATES, {"id": "doc_o", "first": 500}, alice.headers())
    assert "first: between 1 and 100 (got 500)" in body["errors"][0]["message"]


async def test_edit_history_pages_forward_and_back(
    service: httpx.AsyncClient, store: Store, alice: Tenant, duplicated: list[str]
) -> None:
    record = await store.documents.reads.loaded(alice.org_id, "doc_o")
    assert record is not None
    for n in range(5):
        record = await store.documents.reads.loaded(alice.org_id, "doc_o")
        assert record is not None
        await store.documents.writes.update_fields(
            alice.org_id,
            record,
            {"merchant": f"Name {n}"},
            [
                {
                    "field": "merchant",
                    "oldValue": record.document["merchant"],
                    "newValue": f"Name {n}",
                    "editedBy": alice.user_id,
                    # The same moment for all: the history's own order still holds.
                    "editedAt": datetime(2024, 4, 1, tzinfo=UTC),
                    "via": "documents.update",
                }
            ],
        )
    names = [f"Name {n}" for n in range(5)]
    forward, backward, _ = await walk(
        service, HISTORY.replace("$id: ID!", '$id: ID! = "doc_o"'), alice.headers(),
        "node.editHistoryConnection", "newValue", 2,
    )  # fmt: skip
    assert forward == names and backward == names
    rest = result(await call(service, alice, "documents.get", {"id": "doc_o"}))["document"]
    assert [e["newValue"] for e in rest["editHistory"]] == names
    page = await connection(
        service, HISTORY, alice.headers(), "node.editHistoryConnection", id="doc_o", last=1
    )
    assert page["totalCount"] == 5 and page["nodes"] == [{"newValue": "Name 4"}]
    assert page["pageInfo"]["hasPreviousPage"] and not page["pageInfo"]["hasNextPage"]
