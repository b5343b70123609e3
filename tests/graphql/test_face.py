"""The GraphQL face end to end through the ASGI app: data, inputs, errors, auth, HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from persistence.store import Store
from resolvers.framework.errors import CapabilityError
from resolvers.services.auth import accounts
from tests.conftest import Tenant, app_on, second_workspace
from tests.graphql.helpers import GRAPHQL, gql

AUTH_REQUIRED = "API key authentication required"
WORKSPACES = "{ workspacesList { currentOrgId workspaces { id name role isCurrent createdAt } } }"
ECHO = "query Echo($input: ProbeEchoInput!) { probeEcho(input: $input) { workspaceId role limit } }"
CREATE = """
mutation Create($input: CreateSampleInput!) {
  sampleCreate(input: $input) {
    merchant total paidAt dueOn status tags note metadata received
    lines { description amount }
  }
}
"""


def only_error(body: dict[str, Any]) -> dict[str, Any]:
    errors = body["errors"]
    assert isinstance(errors, list) and len(errors) == 1, body
    error: dict[str, Any] = errors[0]
    return error


async def test_workspaces_list_query(api: httpx.AsyncClient, alice: Tenant) -> None:
    body = await gql(api, WORKSPACES, headers=alice.headers())
    assert "errors" not in body
    result = body["data"]["workspacesList"]
    assert result["currentOrgId"] == alice.org_id
    [workspace] = result["workspaces"]
    assert workspace["id"] == alice.org_id and workspace["name"] == "Alice Co"
    assert workspace["role"] == "owner"  # an enum value, from Literal["owner", "admin", "member"]
    assert workspace["isCurrent"] is True
    assert workspace["createdAt"].startswith("20") and "T" in workspace["createdAt"]


async def test_empty_input_is_optional_and_checked_like_rest(
    api: httpx.AsyncClient, alice: Tenant
) -> None:
    with_empty = await gql(
        api, "{ workspacesList(input: {}) { currentOrgId } }", headers=alice.headers()
    )
    assert with_empty["data"]["workspacesList"]["currentOrgId"] == alice.org_id
    unknown = await gql(
        api, "{ workspacesList(input: {x: 1}) { currentOrgId } }", headers=alice.headers()
    )
    assert only_error(unknown)["message"] == "Invalid request: x: unknown property (it takes none)"


async def test_input_defaults_apply(api: httpx.AsyncClient, alice: Tenant) -> None:
    body = await gql(api, ECHO, {"input": {}}, alice.headers())
    assert body["data"]["probeEcho"] == {"workspaceId": alice.org_id, "role": "owner", "limit": 5}


async def test_nested_inputs_and_enums(api: httpx.AsyncClient, alice: Tenant) -> None:
    query = "{ probeEcho(input: {limit: 9, filters: [{field: amount, value: 3}]}) { limit } }"
    body = await gql(api, query, headers=alice.headers())
    assert body == {"data": {"probeEcho": {"limit": 9}}}
    wrong_enum = await gql(
        api,
        "{ probeEcho(input: {filters: [{field: colour, value: 3}]}) { limit } }",
        headers=alice.headers(),
    )
    assert "ProbeFilterField" in only_error(wrong_enum)["message"]
    assert "data" not in wrong_enum  # rejected before execution


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"limit": 0}, "limit: Input should be greater than or equal to 1"),
        ({"limit": 101}, "limit: Input should be less than or equal to 100"),
        (
            {"filters": [{"field": "merchant", "value": -1}]},
            "filters[0].value: Input should be greater than or equal to 0",
        ),
    ],
)
async def test_validation_errors_name_the_field_path(
    api: httpx.AsyncClient, alice: Tenant, arguments: dict[str, object], expected: str
) -> None:
    body = await gql(api, ECHO, {"input": arguments}, alice.headers())
    error = only_error(body)
    assert error["message"] == f"Invalid request: {expected}"  # the REST face's exact text
    assert error["extensions"] == {
        "code": "BAD_REQUEST",
        "status": 400,
        "reason": "invalid_request",
    }
    assert error["path"] == ["probeEcho"]


async def test_mutation_with_scalars_defaults_and_absent_fields(
    api: httpx.AsyncClient, alice: Tenant
) -> None:
    arguments = {
        "merchant": "Café Ünïcode",
        "total": "12.50",
        "paidAt": "2026-03-01T10:30:00+00:00",
        "status": "_1st_reminder",
        "lines": [{"description": "coffee", "amount": "0.10"}],
        "note": None,
        "metadata": {"source": "scan", "pages": [1, 2]},
    }
    body = await gql(api, CREATE, {"input": arguments}, alice.headers())
    assert "errors" not in body, body
    record = body["data"]["sampleCreate"]
    assert record["merchant"] == "Café Ünïcode"
    assert record["total"] == "12.50"  # Decimal travels as a string: no float rounding
    assert record["lines"] == [{"description": "coffee", "amount": "0.10"}]
    assert record["paidAt"] == "2026-03-01T10:30:00+00:00"
    assert record["status"] == "_1st_reminder"  # the Literal value "1st-reminder"
    assert record["tags"] == [] and record["dueOn"] is None
    assert record["metadata"] == {"source": "scan", "pages": [1, 2]}
    # An explicit null reaches the model as set; an omitted optional field (dueOn) does not.
    # tags was omitted too, but its default is part of the schema (`= []`), so GraphQL sends it.
    assert record["received"] == [
        "lines",
        "merchant",
        "metadata",
        "note",
        "paidAt",
        "status",
        "tags",
        "total",
    ]


async def test_mutation_field_constraints_are_the_models(
    api: httpx.AsyncClient, alice: Tenant
) -> None:
    arguments = {"merchant": "x" * 41, "total": "1", "lines": [{"description": "", "amount": "-1"}]}
    error = only_error(await gql(api, CREATE, {"input": arguments}, alice.headers()))
    assert error["message"] == (
        "Invalid request: merchant: String should have at most 40 characters; "
        "lines[0].description: String should have at least 1 character; "
        "lines[0].amount: Input should be greater than or equal to 0"
    )


async def test_bad_decimal_is_a_request_error(api: httpx.AsyncClient, alice: Tenant) -> None:
    body = await gql(api, CREATE, {"input": {"merchant": "m", "total": "ten"}}, alice.headers())
    assert "data" not in body
    assert 'Value cannot represent a Decimal: "ten"' in only_error(body)["message"]


async def test_destructive_capability_is_a_mutation(api: httpx.AsyncClient, alice: Tenant) -> None:
    body = await gql(api, "mutation { samplePurge { purged } }", headers=alice.headers())
    assert body == {"data": {"samplePurge": {"purged": 0}}}
    as_query = await gql(api, "{ samplePurge { purged } }", headers=alice.headers())
    assert "Cannot query field 'samplePurge' on type 'Query'" in only_error(as_query)["message"]


@pytest.mark.parametrize("form", ["bearer", "service-header", "x-api-key", "query"])
async def test_every_key_form_is_accepted(api: httpx.AsyncClient, alice: Tenant, form: str) -> None:
    headers = {"X-Service-Org-Id": alice.org_id}
    params: dict[str, str] = {}
    if form == "bearer":
        headers["Authorization"] = f"Bearer {alice.api_key}"
    elif form == "service-header":
        headers["X-Service-API-Key"] = alice.api_key
    elif form == "x-api-key":
        headers["x-api-key"] = alice.api_key
    else:
        params["apiKey"] = alice.api_key
    response = await api.post(
        GRAPHQL,
        json={"query": "{ probeEcho(input: {limit: 7}) { limit } }"},
        headers=headers,
        params=params,
    )
    assert response.json() == {"data": {"probeEcho": {"limit": 7}}}


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer sk_not_a_real_key"}, {"x-api-key": "not-even-prefixed"}],
)
async def test_missing_or_bad_key_is_unauthenticated(
    api: httpx.AsyncClient, alice: Tenant, headers: dict[str, str]
) -> None:
    body = await gql(api, WORKSPACES, headers=headers)
    assert body["data"] == {
        "workspacesList": None
    }  # a field error: execution ran, the field failed
    error = only_error(body)
    assert error["message"] == AUTH_REQUIRED
    assert error["extensions"] == {
        "code": "UNAUTHENTICATED",
        "status": 401,
        "reason": "unauthenticated",
    }


async def test_revoked_key(api: httpx.AsyncClient, store: Store, alice: Tenant) -> None:
    created = await accounts.create_key(store, "alice@example.com")
    headers = {"Authorization": f"Bearer {created['apiKey']}"}
    assert "errors" not in await gql(api, WORKSPACES, headers=headers)
    assert await store.api_keys.revoke(alice.user_id, created["keyId"])
    error = only_error(await gql(api, WORKSPACES, headers=headers))
    assert error["extensions"] == {
        "code": "UNAUTHENTICATED",
        "status": 401,
        "reason": "unauthenticated",
    }


async def test_missing_org_is_bad_request(
    api: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await second_workspace(store, alice)  # with one, the call would act there
    error = only_error(await gql(api, ECHO, {"input": {}}, alice.headers(None)))
    assert error["message"].startswith("Organization context required: send the header X-Se")
    assert error["extensions"] == {
        "code": "BAD_REQUEST",
        "status": 400,
        "reason": "workspace_required",
    }


async def test_foreign_org_is_forbidden(api: httpx.AsyncClient, alice: Tenant, bob: Tenant) -> None:
    body = await gql(api, ECHO, {"input": {}}, alice.headers(bob.org_id))
    error = only_error(body)
    assert error["extensions"] == {"code": "FORBIDDEN", "status": 403, "reason": "not_a_member"}
    assert bob.org_id not in str(body) and "Bob" not in str(body)


async def test_restricted_key_in_other_workspace(
    api: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    second = await accounts.create_workspace(store, "alice@example.com", "Side Project")
    restricted = await accounts.create_key(store, "alice@example.com", restrict_to=alice.org_id)
    headers = {
        "Authorization": f"Bearer {restricted['apiKey']}",
        "X-Service-Org-Id": second["orgId"],
    }
    error = only_error(await gql(api, ECHO, {"input": {}}, headers))
    assert error["message"] == "This API key is restricted to a different workspace"
    assert error["extensions"] == {
        "code": "FORBIDDEN",
        "status": 403,
        "reason": "workspace_restricted",
    }


async def test_one_failing_field_leaves_the_others(
    api: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    # workspacesList needs no org; probeEcho does: the same request yields data and an error.
    await second_workspace(store, alice)
    body = await gql(
        api,
        "{ workspacesList { currentOrgId } probeEcho(input: {}) { limit } }",
        headers=alice.headers(None),
    )
    assert body["data"] == {"workspacesList": {"currentOrgId": None}, "probeEcho": None}
    assert only_error(body)["path"] == ["probeEcho"]


async def test_unexpected_error_reveals_nothing(api: httpx.AsyncClient, alice: Tenant) -> None:
    response = await api.post(
        GRAPHQL, json={"query": "{ probeCrash { limit } }"}, headers=alice.headers()
    )
    assert response.status_code == 200
    error = only_error(response.json())
    assert error["message"] == "Internal server error"
    assert error["extensions"] == {
        "code": "INTERNAL_SERVER_ERROR",
        "status": 500,
        "reason": CapabilityError.reason,
    }
    assert "secret-host" not in response.text and "RuntimeError" not in response.text


async def test_get_runs_queries(api: httpx.AsyncClient, alice: Tenant) -> None:
    response = await api.get(
        GRAPHQL,
        params={
            "query": "query($n: Int!) { probeEcho(input: {limit: $n}) { limit } }",
            "variables": '{"n": 3}',
        },
        headers=alice.headers(),
    )
    assert response.status_code == 200
    assert response.json() == {"data": {"probeEcho": {"limit": 3}}}


async def test_get_refuses_mutations_with_405(api: httpx.AsyncClient, alice: Tenant) -> None:
    response = await api.get(
        GRAPHQL, params={"query": "mutation { samplePurge { purged } }"}, headers=alice.headers()
    )
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["errors"][0]["extensions"]["status"] == 405


async def test_other_methods_are_405(api: httpx.AsyncClient) -> None:
    response = await api.put(GRAPHQL, json={"query": "{ __typename }"})
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST"


async def test_content_negotiation(api: httpx.AsyncClient) -> None:
    query = {"query": "{ __typename }"}
    default = await api.post(GRAPHQL, json=query)
    assert default.headers["content-type"] == "application/json; charset=utf-8"
    modern = await api.post(
        GRAPHQL, json=query, headers={"Accept": "application/graphql-response+json"}
    )
    assert modern.headers["content-type"] == "application/graphql-response+json; charset=utf-8"
    preferred = await api.post(
        GRAPHQL,
        json=query,
        headers={"Accept": "application/json;q=0.9, application/graphql-response+json"},
    )
    assert preferred.headers["content-type"].startswith("application/graphql-response+json")
    assert modern.json() == default.json() == {"data": {"__typename": "Query"}}


async def test_request_errors_status_depends_on_media_type(api: httpx.AsyncClient) -> None:
    invalid = {"query": "{ nope }"}
    legacy = await api.post(GRAPHQL, json=invalid)
    assert legacy.status_code == 200 and "data" not in legacy.json()
    modern = await api.post(
        GRAPHQL, json=invalid, headers={"Accept": "application/graphql-response+json"}
    )
    assert modern.status_code == 400 and "data" not in modern.json()
    assert "Cannot query field 'nope'" in modern.json()["errors"][0]["message"]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"{not json", "Malformed JSON body"),
        (b'{"query": 1}', "must be a string"),
        (b'{"variables": {}}', "No GraphQL query found"),
    ],
)
async def test_malformed_requests_are_400_with_json_errors(
    api: httpx.AsyncClient, content: bytes, fragment: str
) -> None:
    response = await api.post(
        GRAPHQL, content=content, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert fragment in error["message"]
    assert error["extensions"] == {
        "code": "BAD_REQUEST",
        "status": 400,
        "reason": "invalid_request",
    }


async def test_body_limit(store: Store) -> None:
    from app.host.config import Settings
    from tests.graphql.helpers import test_registry

    app = app_on(store, test_registry(), Settings(max_body_bytes=100))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://fincap.test") as client:
        small = await client.post(GRAPHQL, json={"query": "{ __typename }"})
        assert small.status_code == 200
        large = await client.post(GRAPHQL, json={"query": "{ __typename }" + " " * 200})
        assert large.status_code == 413
        assert large.json()["errors"][0]["extensions"]["code"] == "PAYLOAD_TOO_LARGE"


async def test_graphiql_for_browsers(api: httpx.AsyncClient) -> None:
    response = await api.get(GRAPHQL, headers={"Accept": "text/html,application/xhtml+xml"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "GraphQL explorer" in response.text and 'id="graphiql"' in response.text
    # Assets come from this server, not a CDN (offline installs, strict networks).
    assert "unpkg.com" not in response.text
    assert 'src="/v1/graphql/assets/graphiql@3.8.3/graphiql.min.js"' in response.text
    # The same URL asked for JSON (or with a query) is the API, not the page.
    api_response = await api.get(GRAPHQL, params={"query": "{ __typename }"})
    assert api_response.json() == {"data": {"__typename": "Query"}}
