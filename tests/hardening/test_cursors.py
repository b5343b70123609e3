"""Item 13: cursors are signed, and their decoded values are plain scalars."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.host.config import Settings
from engines.keyring import Keyring
from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, app_on
from tests.documents.conftest import call, result

SECRET = base64.b64encode(b"s" * 32).decode()
OPERATORS = [{"$foo": 1}, {"$where": "sleep(1000)"}, {"$expr": {"$eq": [1, 1]}}, {"$regex": ".*"}]


@pytest.fixture
async def keyed_client(store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    app = app_on(store, registry, Settings(secret_key=SECRET))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://fincap.test") as http:
        yield http


def _unpadded(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


async def _first_page(http: httpx.AsyncClient, tenant: Tenant) -> tuple[dict[str, Any], str]:
    body = {"limit": 1, "useSearch": False}
    page = result(await call(http, tenant, "documents.search", body))
    assert page["nextCursor"]
    return body, page["nextCursor"]


@pytest.mark.parametrize("operator", OPERATORS)
async def test_forged_cursor_values_are_400(
    keyed_client: httpx.AsyncClient, seeded: Tenant, operator: dict[str, Any]
) -> None:
    body, cursor = await _first_page(keyed_client, seeded)
    payload = json.loads(Keyring.from_text(SECRET).verify("cursor", cursor))
    forged = {**payload, "v": operator}
    raw = json.dumps(forged, separators=(",", ":")).encode()
    attempts = {
        # What the tester sent: the cursor format before signing (base64 of the JSON state).
        "unsigned": _unpadded(raw),
        # The forged state with the original cursor's signature.
        "resigned": f"{_unpadded(raw)}.{cursor.rsplit('.', 1)[1]}",
        # Even signed with the server's own key (a leaked key), the operator never reaches
        # the filter: only scalars and dates are values.
        "leaked key": Keyring.from_text(SECRET).sign("cursor", raw),
    }
    for how, forged_cursor in attempts.items():
        response = await call(
            keyed_client, seeded, "documents.search", {**body, "cursor": forged_cursor}
        )
        assert response.status_code == 400, (how, response.text)
        assert response.json()["error"]["errorMessage"] == (
            "cursor: not a cursor returned by this capability"
        ), how


async def test_forged_offset_and_id_are_400(
    keyed_client: httpx.AsyncClient, seeded: Tenant
) -> None:
    keyring = Keyring.from_text(SECRET)
    body, cursor = await _first_page(keyed_client, seeded)
    payload = json.loads(keyring.verify("cursor", cursor))
    for forged in ({**payload, "id": {"$gt": ""}}, {**payload, "o": True}, {**payload, "x": 1}):
        signed = keyring.sign("cursor", json.dumps(forged).encode())
        response = await call(keyed_client, seeded, "documents.search", {**body, "cursor": signed})
        assert response.status_code == 400, forged


async def test_signed_cursors_page_and_survive_a_restart(
    store: Store, registry: Registry, seeded: Tenant
) -> None:
    """Two app instances with the same secret (a restart, or two processes) accept each
    other's cursors; an instance with another secret refuses them."""

    def client_with(secret: str | None) -> httpx.AsyncClient:
        app = app_on(store, registry, Settings(secret_key=secret))
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")

    async with (
        client_with(SECRET) as first,
        client_with(SECRET) as second,
        client_with(None) as stranger,
    ):
        body, cursor = await _first_page(first, seeded)
        page = result(await call(second, seeded, "documents.search", {**body, "cursor": cursor}))
        assert len(page["documents"]) == 1
        refused = await call(stranger, seeded, "documents.search", {**body, "cursor": cursor})
        assert refused.status_code == 400
