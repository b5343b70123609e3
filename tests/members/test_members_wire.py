"""The last-owner guard and single-use invitations against the real protocol (SecantusDB over
TCP), where concurrent requests really interleave."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import asgi_client, make_tenant, member_of
from tests.members.conftest import call, ok

pytestmark = pytest.mark.wire


async def test_concurrent_demotions_and_acceptances(wire_store: Store, registry: Registry) -> None:
    store = wire_store
    alice = await make_tenant(store, "alice@example.com", "Alice Co")
    bob = await member_of(store, alice, "bob@example.com", "owner")
    async with asgi_client(store, registry) as http:
        for _ in range(5):
            first, second = await asyncio.gather(
                call(http, alice, "members.set-role", {"userId": bob.user_id, "role": "member"}),
                call(http, bob, "members.set-role", {"userId": alice.user_id, "role": "member"}),
            )
            assert await store.workspaces.owner_count(alice.org_id) >= 1, (first.text, second.text)
            # 403: the other demotion landed first, so this caller is no longer an owner.
            assert {first.status_code, second.status_code} <= {200, 400, 403}
            await store.workspaces.add_member(alice.org_id, alice.user_id, "owner")
            await store.workspaces.add_member(alice.org_id, bob.user_id, "owner")

        erin = await make_tenant(store, "erin@example.com", "Erin's own")
        code = ok(await call(http, alice, "members.invite", {"email": "erin@example.com"}))["code"]
        headers = {"Authorization": f"Bearer {erin.api_key}"}
        answers = await asyncio.gather(
            *(
                http.post(
                    "/v1/capabilities/members.accept-invite", json={"code": code}, headers=headers
                )
                for _ in range(4)
            )
        )
        assert sorted(a.status_code for a in answers) == [200, 400, 400, 400]
        assert await store.workspaces.role_of(erin.user_id, alice.org_id) == "member"


async def test_removing_the_last_owner_is_refused(wire_store: Store, registry: Registry) -> None:
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    async with asgi_client(wire_store, registry) as http:
        refused: httpx.Response = await call(
            http, alice, "members.remove", {"userId": alice.user_id}
        )
        assert refused.status_code == 400 and "last owner" in refused.text
    assert await wire_store.workspaces.role_of(alice.user_id, alice.org_id) == "owner"


async def test_an_admin_cannot_remove_the_owner_while_a_refused_step_down_is_undone(
    wire_store: Store, registry: Registry
) -> None:
    """The hostile probe's M4: the sole owner's step-down is refused, and an admin's removal of
    that owner runs at the same moment. The workspace must keep its owner every time: a refused
    change is never written and then undone (while undone, the owner read as a member and the
    admin's removal went through, leaving no owner)."""
    store = wire_store
    alice = await make_tenant(store, "alice@example.com", "Alice Co")
    dave = await member_of(store, alice, "dave@example.com", "admin")
    async with asgi_client(store, registry) as http:
        for _ in range(8):
            step_down, removal = await asyncio.gather(
                call(http, alice, "members.set-role", {"userId": alice.user_id, "role": "member"}),
                call(http, dave, "members.remove", {"userId": alice.user_id}),
            )
            assert step_down.status_code == 400, step_down.text
            assert removal.status_code == 403, removal.text
            assert await store.workspaces.role_of(alice.user_id, alice.org_id) == "owner"


async def watch_owners(store: Store, org_id: str, seen: list[int], done: asyncio.Event) -> None:
    """Count the workspace's owners again and again until ``done``."""
    while not done.is_set():
        seen.append(await store.workspaces.owner_count(org_id))


async def test_every_concurrent_pair_of_owner_changes_keeps_an_owner_at_every_moment(
    wire_store: Store, registry: Registry
) -> None:
    """Item 9 of issue 35: for every pair of calls that can take an owner away (demotions,
    removals, leaving, an admin's attempts), run at once while a watcher reads the owners: the
    workspace has an owner at every moment the watcher looks, and at the end."""
    store = wire_store
    alice = await make_tenant(store, "alice@example.com", "Alice Co")
    bob = await member_of(store, alice, "bob@example.com", "owner")
    dave = await member_of(store, alice, "dave@example.com", "admin")
    moves = {
        "alice demotes herself": (
            alice, "members.set-role", {"userId": alice.user_id, "role": "admin"}
        ),
        "alice demotes bob": (alice, "members.set-role", {"userId": bob.user_id, "role": "member"}),
        "bob demotes alice": (bob, "members.set-role", {"userId": alice.user_id, "role": "member"}),
        "bob removes alice": (bob, "members.remove", {"userId": alice.user_id}),
        "alice removes bob": (alice, "members.remove", {"userId": bob.user_id}),
        "alice leaves": (alice, "members.leave", {}),
        "bob leaves": (bob, "members.leave", {}),
        "dave removes alice": (dave, "members.remove", {"userId": alice.user_id}),
        "dave demotes bob": (dave, "members.set-role", {"userId": bob.user_id, "role": "member"}),
    }  # fmt: skip
    names = sorted(moves)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i:]]
    async with asgi_client(store, registry) as http:
        for first, second in pairs:
            seen: list[int] = []
            done = asyncio.Event()
            watcher = asyncio.create_task(watch_owners(store, alice.org_id, seen, done))
            answers = await asyncio.gather(
                *(call(http, who, slug, body) for who, slug, body in (moves[first], moves[second]))
            )
            done.set()
            await watcher
            assert all(answer.status_code in (200, 400, 403, 404, 409) for answer in answers), [
                a.text for a in answers
            ]
            assert seen and min(seen) >= 1, (first, second, seen)
            assert await store.workspaces.owner_count(alice.org_id) >= 1, (first, second)
            for person, role in ((alice, "owner"), (bob, "owner"), (dave, "admin")):
                await store.workspaces.add_member(alice.org_id, person.user_id, role)
