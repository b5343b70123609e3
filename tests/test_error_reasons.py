"""``error.reason``: a stable, machine-readable name per error class, beside the spec's fields
(``errorCode``, ``errorMessage``) on REST, listed in ``/openapi.json`` and in the docs' table."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from app.host.config import Settings
from persistence.store import Store
from resolvers.framework.errors import CapabilityError, every_reason
from resolvers.framework.registry import Registry
from resolvers.resources import approvals, documents, members, workspaces
from tests import probe_resource
from tests.conftest import Tenant, app_on, member_of, second_workspace

ROOT = Path(__file__).resolve().parents[1]
SNAKE = re.compile(r"^[a-z]+(_[a-z]+)*$")


def error_classes() -> list[type[CapabilityError]]:
    found: list[type[CapabilityError]] = []
    pending: list[type[CapabilityError]] = [CapabilityError]
    while pending:
        cls = pending.pop(0)
        found.append(cls)
        pending += cls.__subclasses__()
    return found


def test_one_snake_case_reason_per_class() -> None:
    classes = error_classes()
    # The one hierarchy: an error class declared elsewhere would go unlisted.
    assert {cls.__module__ for cls in classes} == {CapabilityError.__module__}
    reasons = [cls.reason for cls in classes]
    assert all(SNAKE.match(reason) for reason in reasons), reasons
    assert len(set(reasons)) == len(classes), "two error classes share a reason"
    assert set(reasons) <= set(every_reason())


def test_the_docs_table_lists_every_reason() -> None:
    documented: set[str] = set()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        documented |= set(re.findall(r"^\| `([a-z_]+)` \| \d{3} \|", path.read_text(), re.M))
    assert documented == set(every_reason())


@pytest.fixture
async def api(store: Store) -> AsyncIterator[httpx.AsyncClient]:
    registry = Registry.from_modules(
        [workspaces, documents, members, approvals, probe_resource]
    ).freeze()
    app = app_on(store, registry, Settings(max_body_bytes=2000))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://fincap.test"
    ) as http:
        yield http


async def reason_of(response: httpx.Response, status: int) -> str:
    body = response.json()
    assert response.status_code == status and body["code"] == status
    error = body["error"]
    assert error["errorCode"] == status and isinstance(error["errorMessage"], str)
    assert set(error) == {"errorCode", "errorMessage", "reason"}
    reason: str = error["reason"]
    return reason


async def test_rest_failures_carry_their_reason(
    api: httpx.AsyncClient, store: Store, alice: Tenant, bob: Tenant
) -> None:
    call = "/v1/capabilities/documents.get"
    get = {"id": "doc_none"}
    await second_workspace(store, alice)  # with one, a call naming none would act there
    cases = [
        (api.post(call, json=get), 401, "unauthenticated"),
        (api.post(call, json=get, headers=alice.headers(None)), 400, "workspace_required"),
        (api.post(call, json={"id": ""}, headers=alice.headers()), 400, "invalid_request"),
        (api.post(call, json=get, headers=alice.headers(bob.org_id)), 403, "not_a_member"),
        (api.post(call, json=get, headers=alice.headers()), 404, "not_found"),
        (api.post("/v1/capabilities/no.such", json={}), 404, "not_found"),
        (api.get("/v1/nowhere"), 404, "not_found"),
        (api.put(call, json=get), 405, "method_not_allowed"),
        (api.post(call, content=b"[" + b" " * 3000 + b"]"), 413, "payload_too_large"),
    ]
    for request, status, reason in cases:
        assert await reason_of(await request, status) == reason, reason


async def test_a_role_refusal_is_role_required(
    api: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    member = await member_of(store, alice, "mia@example.com")
    refused = await api.post(
        "/v1/capabilities/members.remove", json={"userId": alice.user_id}, headers=member.headers()
    )
    assert await reason_of(refused, 403) == "role_required"


async def test_the_openapi_envelope_lists_the_reasons(api: httpx.AsyncClient) -> None:
    schema = (await api.get("/openapi.json")).json()["components"]["schemas"]["ErrorEnvelope"]
    error = schema["properties"]["error"]
    assert "reason" in error["required"]
    assert error["properties"]["reason"]["enum"] == every_reason()
