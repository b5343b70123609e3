"""Helpers of the statements tests: fixtures' bytes, imports through REST, what is stored."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import Tenant

FIXTURES = Path(__file__).parent.parent / "fixtures" / "statements"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


async def call(
    client: httpx.AsyncClient, tenant: Tenant, slug: str, body: dict[str, Any]
) -> httpx.Response:
    return await client.post(f"/v1/capabilities/{slug}", json=body, headers=tenant.headers())


def result(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()["data"]["result"]


async def import_bytes(
    client: httpx.AsyncClient, tenant: Tenant, data: bytes, name: str = "statement", **extra: Any
) -> httpx.Response:
    body = {"fileName": name, "base64Data": base64.b64encode(data).decode(), **extra}
    return await call(client, tenant, "statements.import", body)


async def all_transactions(
    client: httpx.AsyncClient, tenant: Tenant, **extra: Any
) -> list[dict[str, Any]]:
    page = result(
        await call(
            client,
            tenant,
            "transactions.search",
            {"limit": 100, "sortBy": "bookingDate", "sortOrder": 1, **extra},
        )
    )
    return list(page["transactions"])
