"""The REST face end to end through the ASGI app: envelopes, key forms, workspaces, errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from importlib.metadata import version as package_version

import httpx
import pytest

from engines.ocr_availability import installed_ocr_engines
from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.resources import workspaces
from resolvers.services.auth import accounts
from tests import probe_resource
from tests.conftest import Tenant, asgi_client, second_workspace

AUTH_REQUIRED = "API key authentication required"


@pytest.fixture
async def api(store: Store) -> AsyncIterator[httpx.AsyncClient]:
    """The app with the real capabilities plus the test-only probe resource."""
    registry = Registry.from_modules([workspaces, probe_resource]).freeze()
    async with asgi_client(store, registry) as http:
        yield http


def assert_error(response: httpx.Response, status: int, message: str | None = None) -> str:
    body = response.json()
    assert response.status_code == status
    assert body["success"] is False and body["code"] == status
    assert body["error"]["errorCode"] == status
    if message is not None:
        assert body["error"]["errorMessage"] == message
    text: str = body["error"]["errorMessage"]
    return text


async def test_discovery_needs_no_key_and_lists_schemas(api: httpx.AsyncClient) -> None:
    response = await api.get("/v1/capabilities")
    assert response.status_code == 200
    body = response.json()
    assert body["success"] is True
    by_slug = {item["slug"]: item for item in body["capabilities"]}
    item = by_slug["probe.echo"]
    assert item["name"] == "probeEcho"
    assert item["permissions"] == ["read_documents"]
    assert item["description"] == "Echoes the workspace and the validated limit."
    schema = item["inputSchema"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["limit"] == {
        "default": 5,
        "maximum": 100,
        "minimum": 1,
        "title": "Limit",
        "type": "integer",
    }


async def test_success_envelope(api: httpx.AsyncClient, alice: Tenant) -> None:
    response = await api.post("/v1/capabilities/probe.echo", json={}, headers=alice.headers())
    assert response.status_code == 200
    assert response.json() == {
        "success": True,
        "code": 200,
        "data": {"result": {"workspaceId": alice.org_id, "role": "owner", "limit": 5}},
    }


@pytest.mark.parametrize(
    "form",
    ["bearer", "service-header", "x-api-key", "query", "body"],
)
async def test_every_key_form_is_accepted(api: httpx.AsyncClient, alice: Tenant, form: str) -> None:
    headers = {"X-Service-Org-Id": alice.org_id}
    params: dict[str, str] = {}
    body: dict[str, object] = {"limit": 7}
    if form == "bearer":
        headers["Authorization"] = f"Bearer {alice.api_key}"
    elif form == "service-header":
        headers["X-Service-API-Key"] = alice.api_key
    elif form == "x-api-key":
        headers["x-api-key"] = alice.api_key
    elif form == "query":
        params["apiKey"] = alice.api_key
    else:
        body["apiKey"] = alice.api_key  # removed before validation: not an unknown property
    response = await api.post(
        "/v1/capabilities/probe.echo", json=body, headers=headers, params=params
    )
    assert response.status_code == 200, response.text
    assert response.json()["data"]["result"]["limit"] == 7


async def test_body_api_key_is_removed_even_when_a_header_key_wins(
    api: httpx.AsyncClient, alice: Tenant
) -> None:
    response = await api.post(
        "/v1/capabilities/probe.echo", json={"apiKey": "sk_whatever"}, headers=alice.headers()
    )
    assert response.status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer sk_not_a_real_key"},
        {"Authorization": "Basic c2tfeDp5"},
        {"x-api-key": "not-even-prefixed"},
    ],
)
async def test_missing_or_bad_key_is_401(
    api: httpx.AsyncClient, alice: Tenant, headers: dict[str, str]
) -> None:
    response = await api.post(
        "/v1/capabilities/probe.echo",
        json={},
        headers={**headers, "X-Service-Org-Id": alice.org_id},
    )
    assert_error(response, 401, AUTH_REQUIRED)


async def test_revoked_key_is_401(api: httpx.AsyncClient, store: Store, alice: Tenant) -> None:
    created = await accounts.create_key(store, "alice@example.com")
    headers = {"Authorization": f"Bearer {created['apiKey']}", "X-Service-Org-Id": alice.org_id}
    assert (
        await api.post("/v1/capabilities/probe.echo", json={}, headers=headers)
    ).status_code == 200
    assert await store.api_keys.revoke(alice.user_id, created["keyId"])
    response = await api.post("/v1/capabilities/probe.echo", json={}, headers=headers)
    assert_error(response, 401, AUTH_REQUIRED)


async def test_missing_org_is_400_naming_the_header(
    api: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    """With two workspaces and an unrestricted key, a call that names none has no workspace:
    the spec's message, then what to send and where the ids are listed."""
    await second_workspace(store, alice)
    response = await api.post("/v1/capabilities/probe.echo", json={}, headers=alice.headers(None))
    message = assert_error(response, 400)
    assert message.startswith("Organization context required: ")
    assert "X-Service-Org-Id" in message and "GET /v1/workspaces" in message
    assert response.json()["error"]["reason"] == "workspace_required"


async def test_a_person_with_one_workspace_acts_there_without_the_header(
    api: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    response = await api.post("/v1/capabilities/probe.echo", json={}, headers=alice.headers(None))
    assert response.status_code == 200, response.text
    assert response.json()["data"]["result"]["workspaceId"] == alice.org_id
    listed = await api.post(
        "/v1/capabilities/workspaces.list", json={}, headers=alice.headers(None)
    )
    result = listed.json()["data"]["result"]
    assert result["currentOrgId"] == alice.org_id
    assert [(w["id"], w["isCurrent"]) for w in result["workspaces"]] == [(alice.org_id, True)]
    # A second workspace ends it at once (the auth cache forgets the only one): from now on
    # the call must say where.
    await second_workspace(store, alice)
    again = await api.post("/v1/capabilities/probe.echo", json={}, headers=alice.headers(None))
    assert_error(again, 400)
    assert again.json()["error"]["reason"] == "workspace_required"


async def test_workspaces_list_needs_no_org_and_marks_the_current_one(
    api: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    other = await second_workspace(store, alice)
    response = await api.post(
        "/v1/capabilities/workspaces.list", json={}, headers=alice.headers(None)
    )
    assert response.status_code == 200
    result = response.json()["data"]["result"]
    assert result["currentOrgId"] is None
    assert {w["id"]: w["isCurrent"] for w in result["workspaces"]} == {
        alice.org_id: False,
        other: False,
    }
    named = await api.post("/v1/capabilities/workspaces.list", json={}, headers=alice.headers())
    result = named.json()["data"]["result"]
    assert result["currentOrgId"] == alice.org_id
    assert {w["id"]: w["isCurrent"] for w in result["workspaces"]} == {
        alice.org_id: True,
        other: False,
    }


async def test_foreign_org_is_403_with_no_data(
    api: httpx.AsyncClient, alice: Tenant, bob: Tenant
) -> None:
    response = await api.post(
        "/v1/capabilities/probe.echo", json={}, headers=alice.headers(bob.org_id)
    )
    message = assert_error(response, 403)
    assert bob.org_id not in message and "Bob" not in message


async def test_unknown_org_is_403(api: httpx.AsyncClient, alice: Tenant) -> None:
    response = await api.post(
        "/v1/capabilities/probe.echo", json={}, headers=alice.headers("org_doesnotexist")
    )
    assert_error(response, 403)


async def test_restricted_key(api: httpx.AsyncClient, store: Store, alice: Tenant) -> None:
    second = await accounts.create_workspace(store, "alice@example.com", "Alice Side Project")
    restricted = await accounts.create_key(store, "alice@example.com", restrict_to=alice.org_id)
    auth = {"Authorization": f"Bearer {restricted['apiKey']}"}

    other = await api.post(
        "/v1/capabilities/probe.echo",
        json={},
        headers={**auth, "X-Service-Org-Id": second["orgId"]},
    )
    assert_error(other, 403, "This API key is restricted to a different workspace")

    # With no org named, a restricted key acts in its own workspace.
    own = await api.post("/v1/capabilities/probe.echo", json={}, headers=auth)
    assert own.json()["data"]["result"]["workspaceId"] == alice.org_id

    listed = await api.get("/v1/workspaces", headers=auth)
    assert [w["id"] for w in listed.json()["data"]["result"]["workspaces"]] == [alice.org_id]

    unrestricted = await api.get("/v1/workspaces", headers=alice.headers(None))
    ids = [w["id"] for w in unrestricted.json()["data"]["result"]["workspaces"]]
    # Oldest first; both may be created within the same millisecond, so compare as a set.
    assert sorted(ids) == sorted([alice.org_id, second["orgId"]])


async def test_get_workspaces_marks_the_current_one(api: httpx.AsyncClient, alice: Tenant) -> None:
    response = await api.get("/v1/workspaces", headers=alice.headers())
    assert response.status_code == 200
    result = response.json()["data"]["result"]
    assert result["currentOrgId"] == alice.org_id
    assert result["workspaces"] == [
        {
            "id": alice.org_id,
            "name": "Alice Co",
            "role": "owner",
            "isCurrent": True,
            "createdAt": result["workspaces"][0]["createdAt"],
        }
    ]
    assert_error(await api.get("/v1/workspaces"), 401, AUTH_REQUIRED)


async def test_unknown_slug_is_404_even_without_key(api: httpx.AsyncClient) -> None:
    response = await api.post("/v1/capabilities/documents.teleport", json={})
    assert "documents.teleport" in assert_error(response, 404)


async def test_unknown_property_is_400_naming_it(api: httpx.AsyncClient, alice: Tenant) -> None:
    response = await api.post(
        "/v1/capabilities/probe.echo", json={"limitt": 3}, headers=alice.headers()
    )
    assert assert_error(response, 400) == (
        "Invalid request: limitt: unknown property (known: limit, filters)"
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"limit": 0}, "limit: Input should be greater than or equal to 1"),
        ({"limit": 101}, "limit: Input should be less than or equal to 100"),
        (
            {"limit": "many"},
            "limit: Input should be a valid integer, unable to parse string as an integer",
        ),
        (
            {"filters": [{"field": "merchant", "value": -1}]},
            "filters[0].value: Input should be greater than or equal to 0",
        ),
        (
            {"filters": [{"field": "colour", "value": 1}]},
            "filters[0].field: Input should be 'merchant' or 'amount'",
        ),
    ],
)
async def test_constraint_violations_name_path_and_reason(
    api: httpx.AsyncClient, alice: Tenant, body: dict[str, object], expected: str
) -> None:
    response = await api.post("/v1/capabilities/probe.echo", json=body, headers=alice.headers())
    assert assert_error(response, 400) == f"Invalid request: {expected}"


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"{not json", "Malformed JSON body"),
        (b"", "Request body is required"),
        (b"[1, 2]", "Request body must be a JSON object"),
        (b"\xff\xfe", "Malformed JSON body"),
    ],
)
async def test_bad_bodies_are_400(
    api: httpx.AsyncClient, alice: Tenant, content: bytes, fragment: str
) -> None:
    response = await api.post(
        "/v1/capabilities/probe.echo",
        content=content,
        headers={**alice.headers(), "Content-Type": "application/json"},
    )
    assert fragment in assert_error(response, 400)


async def test_unexpected_error_is_a_bare_500(api: httpx.AsyncClient, alice: Tenant) -> None:
    response = await api.post("/v1/capabilities/probe.crash", json={}, headers=alice.headers())
    assert assert_error(response, 500) == "Internal server error"
    assert "secret-host" not in response.text


async def test_request_id_header(api: httpx.AsyncClient) -> None:
    first = await api.get("/healthz")
    second = await api.get("/healthz")
    health = first.json()
    assert {key: health[key] for key in ("status", "version", "ocr")} == {
        "status": "ok",
        "version": package_version("fincap"),
        "ocr": list(installed_ocr_engines()),  # what `fincap doctor` reports
    }
    # The in-memory store has no driver to watch it: its state is never known, not "down".
    assert health["store"]["state"] == "unknown" and health["disk"]["low"] is False
    assert len(first.headers["x-request-id"]) == 32
    assert first.headers["x-request-id"] != second.headers["x-request-id"]
    kept = await api.get("/healthz", headers={"X-Request-Id": "trace-42"})
    assert kept.headers["x-request-id"] == "trace-42"
    replaced = await api.get("/healthz", headers={"X-Request-Id": "bad id\twith spaces"})
    assert replaced.headers["x-request-id"] != "bad id\twith spaces"


async def test_readyz_reports_database(api: httpx.AsyncClient) -> None:
    response = await api.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "checks": {"store": True, "analysis": True}}


async def test_unknown_route_and_method_use_the_envelope(api: httpx.AsyncClient) -> None:
    assert_error(await api.get("/v1/nothing-here"), 404)
    assert_error(await api.get("/v1/capabilities/workspaces.list"), 405)


async def test_api_keys_are_stored_only_as_hashes(store: Store, alice: Tenant) -> None:
    stored = await store.db["api_keys"].find_one({"userId": alice.user_id})
    assert stored is not None
    assert alice.api_key not in str(stored)
    assert alice.api_key.startswith("sk_") and len(alice.api_key) >= 3 + 22  # ≥128 bits base64
