"""Fixtures of the members tests: a workspace with an owner, an admin and a member."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from persistence.store import Store
from tests.conftest import Tenant, member_of


@dataclass
class Team:
    """Alice owns the workspace; Dave is an admin and Carol a member of it (each with an
    unrestricted key of their own, acting in Alice's workspace)."""

    owner: Tenant
    admin: Tenant
    member: Tenant


@pytest.fixture
async def team(store: Store, alice: Tenant) -> Team:
    return Team(
        owner=alice,
        admin=await member_of(store, alice, "dave@example.com", "admin"),
        member=await member_of(store, alice, "carol@example.com", "member"),
    )


async def call(
    http: httpx.AsyncClient, who: Tenant, slug: str, body: dict[str, Any] | None = None
) -> httpx.Response:
    return await http.post(f"/v1/capabilities/{slug}", json=body or {}, headers=who.headers())


def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()["data"]["result"]


def refused(response: httpx.Response, status: int, *words: str) -> str:
    assert response.status_code == status, response.text
    message = str(response.json()["error"]["errorMessage"])
    for word in words:
        assert word in message, message
    return message
