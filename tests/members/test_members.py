"""members.*: invitations, roles, removal and leaving, through REST and GraphQL, and what a
removal ends at once (keys, tokens, WhatsApp numbers, cached roles on other processes)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy

import httpx
import pytest

from app.host.config import Settings
from engines.rules.config import AutomationConfig
from engines.rules.notify import SmtpConfig
from persistence.api_keys import digest
from persistence.store import Store
from resolvers import build_registry
from resolvers.framework.auth import new_api_key_secret
from resolvers.framework.errors import BadRequest
from resolvers.framework.registry import Registry
from resolvers.services.auth import accounts
from tests.conftest import Tenant, app_on, make_tenant
from tests.graphql.helpers import gql
from tests.members.conftest import Team, call, ok, refused
from tests.outbound import LOOPBACK_FAKES
from tests.rules.test_notifications import Inbox, smtp  # noqa: F401  (the SMTP fixture)


async def invite(http: httpx.AsyncClient, who: Tenant, email: str, role: str = "member") -> str:
    answer = ok(await call(http, who, "members.invite", {"email": email, "role": role}))
    assert answer["emailed"] is False and answer["code"].startswith("fic_")
    return str(answer["code"])


async def test_invite_then_accept_joins_with_the_role(
    client: httpx.AsyncClient, store: Store, team: Team
) -> None:
    erin = await make_tenant(store, "erin@example.com", "Erin's own")
    code = await invite(client, team.admin, "Erin@Example.com", "admin")

    listed = ok(await call(client, team.owner, "members.list"))
    members = {m["email"]: (m["role"], m["isYou"]) for m in listed["members"]}
    assert members == {
        "alice@example.com": ("owner", True),
        "dave@example.com": ("admin", False),
        "carol@example.com": ("member", False),
    }
    (open_one,) = listed["invitations"]
    assert open_one["email"] == "erin@example.com" and open_one["role"] == "admin"
    assert open_one["invitedBy"] == team.admin.user_id
    # Plain members see the members, not the invitations.
    assert ok(await call(client, team.member, "members.list"))["invitations"] == []

    # Only the digest of the code is stored.
    stored = await store.db["invitations"].find_one({"email": "erin@example.com"})
    assert stored is not None and stored["codeHash"] == digest(code)
    assert code not in str(stored)

    # Erin accepts with her own key; no workspace header is needed.
    joined = await client.post(
        "/v1/capabilities/members.accept-invite",
        json={"code": code},
        headers={"Authorization": f"Bearer {erin.api_key}"},
    )
    assert ok(joined) == {"workspaceId": team.owner.org_id, "name": "Alice Co", "role": "admin"}
    as_erin = Tenant(erin.user_id, team.owner.org_id, erin.api_key)
    assert ok(await call(client, as_erin, "members.list"))["invitations"] == []
    # A code works once.
    again = await client.post(
        "/v1/capabilities/members.accept-invite",
        json={"code": code},
        headers={"Authorization": f"Bearer {erin.api_key}"},
    )
    refused(again, 400, "code", "already used")


async def test_a_code_is_for_the_invited_address_only_and_expires(
    client: httpx.AsyncClient, store: Store, team: Team
) -> None:
    erin = await make_tenant(store, "erin@example.com", "Erin's own")
    mallory = await make_tenant(store, "mallory@example.com", "Mallory's own")
    code = await invite(client, team.owner, "erin@example.com")
    stolen = await client.post(
        "/v1/capabilities/members.accept-invite",
        json={"code": code},
        headers={"Authorization": f"Bearer {mallory.api_key}"},
    )
    refused(stolen, 403, "another e-mail address")
    assert await store.workspaces.role_of(mallory.user_id, team.owner.org_id) is None

    await store.db["invitations"].update_one(
        {"email": "erin@example.com"},
        {"$set": {"expiresAt": datetime.now(UTC) - timedelta(seconds=1)}},
    )
    late = await client.post(
        "/v1/capabilities/members.accept-invite",
        json={"code": code},
        headers={"Authorization": f"Bearer {erin.api_key}"},
    )
    refused(late, 400, "expired")
    # Inviting again replaces the code: the old one never works, the new one does.
    fresh = await invite(client, team.owner, "erin@example.com")
    assert fresh != code
    joined = await client.post(
        "/v1/capabilities/members.accept-invite",
        json={"code": fresh},
        headers={"Authorization": f"Bearer {erin.api_key}"},
    )
    assert ok(joined)["role"] == "member"


async def test_invitations_cancelled_and_bounded(client: httpx.AsyncClient, team: Team) -> None:
    await invite(client, team.owner, "ann@example.com", "owner")
    # An admin neither invites an owner nor withdraws an owner's invitation.
    refused(
        await call(
            client, team.admin, "members.invite", {"email": "x@example.com", "role": "owner"}
        ),
        403,
        "Only an owner",
    )
    refused(
        await call(client, team.admin, "members.cancel-invite", {"email": "ann@example.com"}),
        403,
        "Only an owner",
    )
    # Nor replaces it by inviting the same address as a member (the probe's Low item: the
    # owner's invitation was downgraded, its code replaced).
    refused(
        await call(client, team.admin, "members.invite", {"email": "ann@example.com"}),
        403,
        "Only an owner",
    )
    pending = ok(await call(client, team.owner, "members.list"))["invitations"]
    assert [(row["email"], row["role"]) for row in pending] == [("ann@example.com", "owner")]
    cancelled = ok(
        await call(client, team.owner, "members.cancel-invite", {"email": "ann@example.com"})
    )
    assert cancelled == {"email": "ann@example.com", "cancelled": True}
    refused(
        await call(client, team.owner, "members.invite", {"email": "carol@example.com"}),
        400,
        "already a member",
    )
    refused(
        await call(client, team.owner, "members.invite", {"email": "not-an-address"}),
        400,
        "email",
    )
    # A plain member cannot invite (403 naming who can).
    refused(
        await call(client, team.member, "members.invite", {"email": "y@example.com"}),
        403,
        "members.invite is for the workspace's owners and admins",
        "your role here is member",
    )


async def test_the_code_is_emailed_through_the_relay_when_configured(
    store: Store,
    registry: Registry,
    team: Team,
    smtp: tuple[Inbox, int],  # noqa: F811
) -> None:
    inbox, port = smtp
    # The relay is a fake on loopback: the outbound policy lets it through explicitly.
    app = app_on(store, registry, Settings(outbound_allow=LOOPBACK_FAKES))
    relay = SmtpConfig(host="127.0.0.1", port=port, sender="fincap@fincap.test", starttls=False)
    object.__setattr__(app.state.services, "automation", AutomationConfig(smtp=relay))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://fincap.test"
    ) as http:
        answer = ok(await call(http, team.owner, "members.invite", {"email": "erin@example.com"}))
    assert answer["emailed"] is True and "code" not in answer
    ((sender, recipients, content),) = inbox.messages
    assert (sender, recipients) == ("fincap@fincap.test", ["erin@example.com"])
    message = message_from_bytes(content, policy=policy.default)
    assert message["Subject"] == "[fincap] You are invited to Alice Co"
    body = message.get_content()  # type: ignore[attr-defined]
    assert "alice@example.com invited you" in body and "fic_" in body


async def test_roles_who_may_change_whom(client: httpx.AsyncClient, team: Team) -> None:
    owner, admin, member = team.owner, team.admin, team.member
    # An admin cannot make an owner nor change one.
    refused(
        await call(client, admin, "members.set-role", {"userId": member.user_id, "role": "owner"}),
        403,
        "Only an owner",
    )
    refused(
        await call(client, admin, "members.set-role", {"userId": owner.user_id, "role": "member"}),
        403,
        "Only an owner",
    )
    # A member changes nobody; an admin promotes a member to admin.
    refused(
        await call(client, member, "members.set-role", {"userId": member.user_id, "role": "admin"}),
        403,
        "owners and admins",
    )
    changed = ok(
        await call(client, admin, "members.set-role", {"userId": member.user_id, "role": "admin"})
    )
    assert (
        changed["member"]["role"] == "admin" and changed["member"]["email"] == "carol@example.com"
    )
    # The last owner cannot be demoted, nor leave; with a second owner, they can.
    refused(
        await call(client, owner, "members.set-role", {"userId": owner.user_id, "role": "admin"}),
        400,
        "last owner",
    )
    refused(await call(client, owner, "members.leave"), 400, "last owner")
    ok(await call(client, owner, "members.set-role", {"userId": admin.user_id, "role": "owner"}))
    ok(await call(client, owner, "members.set-role", {"userId": owner.user_id, "role": "admin"}))
    refused(
        await call(client, member, "members.set-role", {"userId": "usr_nobody", "role": "admin"}),
        404,
        "No member",
    )


async def test_two_owners_demoting_each_other_at_once_leave_an_owner(
    client: httpx.AsyncClient, store: Store, team: Team
) -> None:
    owner, other = team.owner, team.admin
    await store.workspaces.add_member(owner.org_id, other.user_id, "owner")
    for _ in range(5):
        first, second = await asyncio.gather(
            call(client, owner, "members.set-role", {"userId": other.user_id, "role": "admin"}),
            call(client, other, "members.set-role", {"userId": owner.user_id, "role": "admin"}),
        )
        assert await store.workspaces.owner_count(owner.org_id) >= 1, (first.text, second.text)
        await store.workspaces.add_member(owner.org_id, owner.user_id, "owner")
        await store.workspaces.add_member(owner.org_id, other.user_id, "owner")


async def test_removing_a_member_ends_their_access_at_once(
    client: httpx.AsyncClient, store: Store, team: Team
) -> None:
    owner, admin, member = team.owner, team.admin, team.member
    restricted = new_api_key_secret()
    await store.api_keys.create(member.user_id, restricted, restricted_to=owner.org_id)
    as_restricted = Tenant(member.user_id, owner.org_id, restricted)
    # Both of Carol's keys work here, and their role is now cached.
    ok(await call(client, as_restricted, "members.list"))
    ok(await call(client, member, "members.list"))
    await store.oauth_tokens.create(
        "fat_carols_token",
        "access",
        {
            "familyId": "fam_carol",
            "clientId": "c",
            "userId": member.user_id,
            "workspaceId": owner.org_id,
            "scopes": ["all"],
        },
        datetime.now(UTC) + timedelta(hours=1),
    )
    await store.whatsapp_senders.claim(
        "4915100000001",
        owner.org_id,
        member.user_id,
        code="AAAA-BBBB",
        by=owner.user_id,
        expires_at=datetime.now(UTC) + timedelta(hours=1),
    )
    await store.invitations.open(
        owner.org_id,
        "friend@example.com",
        role="member",
        code="fic_x",
        invited_by=member.user_id,
        expires_at=datetime.now(UTC) + timedelta(days=1),
        may_replace_owner=False,
    )

    # An admin cannot remove the owner; a member removes nobody.
    refused(await call(client, admin, "members.remove", {"userId": owner.user_id}), 403, "owner")
    refused(
        await call(client, member, "members.remove", {"userId": admin.user_id}),
        403,
        "owners and admins",
    )
    removed = ok(await call(client, admin, "members.remove", {"userId": member.user_id}))
    assert removed == {
        "userId": member.user_id,
        "removed": True,
        "apiKeysRevoked": 1,
        "tokensRevoked": 1,
        "whatsappNumbersRemoved": 1,
    }
    # At once, cached or not: the restricted key is revoked, the other is no longer a member.
    refused(await call(client, as_restricted, "members.list"), 401)
    refused(await call(client, member, "members.list"), 403, "not a member")
    assert await store.oauth_tokens.find_active("fat_carols_token", "access") is None
    assert await store.invitations.pending(owner.org_id) == []
    # Her own workspace is untouched.
    assert await store.workspaces.list_for_user(member.user_id) != []
    refused(await call(client, admin, "members.remove", {"userId": member.user_id}), 404)


async def test_a_member_leaves(client: httpx.AsyncClient, store: Store, team: Team) -> None:
    left = ok(await call(client, team.member, "members.leave"))
    assert left["userId"] == team.member.user_id and left["removed"] is True
    assert await store.workspaces.role_of(team.member.user_id, team.owner.org_id) is None


async def test_a_lowered_role_is_refused_at_once_on_another_process(
    store: Store, registry: Registry, team: Team
) -> None:
    """Two API processes over one store, each with its own auth cache (30 s). A change made
    through one is refused for writes on the other at once; reads there may see the old role
    for at most FINCAP_AUTH_CACHE_SECONDS."""
    first = app_on(store, registry, Settings(auth_cache_seconds=30))
    second = app_on(store, registry, Settings(auth_cache_seconds=30))
    admin = team.admin
    transport_one = httpx.ASGITransport(app=first)
    transport_two = httpx.ASGITransport(app=second)
    async with (
        httpx.AsyncClient(transport=transport_one, base_url="http://one.test") as one,
        httpx.AsyncClient(transport=transport_two, base_url="http://two.test") as two,
    ):
        # Dave, an admin, is known (and cached) as admin on the second process.
        assert ok(await call(two, admin, "members.list"))["invitations"] == []
        ok(await call(two, admin, "members.invite", {"email": "zed@example.com"}))
        # The owner demotes him through the first process.
        ok(
            await call(
                one, team.owner, "members.set-role", {"userId": admin.user_id, "role": "member"}
            )
        )
        # On the second, his next change is refused at once.
        refused(
            await call(two, admin, "members.invite", {"email": "zoe@example.com"}),
            403,
            "your role here is member",
        )
        refused(
            await call(two, admin, "whatsapp.register-sender", {"phoneNumber": "+4915100000009"}),
            403,
        )


async def test_members_through_graphql(client: httpx.AsyncClient, store: Store, team: Team) -> None:
    listed = await gql(
        client, "{ membersList { members { email role isYou } } }", headers=team.member.headers()
    )
    mine = [m for m in listed["data"]["membersList"]["members"] if m["isYou"]]
    assert mine == [{"email": "carol@example.com", "role": "member", "isYou": True}]
    invited = await gql(
        client,
        'mutation { membersInvite(input: {email: "erin@example.com"}) '
        "{ emailed code invitation { email role } } }",
        headers=team.owner.headers(),
    )
    answer = invited["data"]["membersInvite"]
    assert answer["emailed"] is False and answer["invitation"]["role"] == "member"
    erin = await make_tenant(store, "erin@example.com", "Erin's own")
    joined = await gql(
        client,
        "mutation($code: String!) { membersAcceptInvite(input: {code: $code}) "
        "{ workspaceId role } }",
        {"code": answer["code"]},
        headers={"Authorization": f"Bearer {erin.api_key}"},
    )
    assert joined["data"]["membersAcceptInvite"] == {
        "workspaceId": team.owner.org_id,
        "role": "member",
    }
    denied = await gql(
        client,
        f'mutation {{ membersRemove(input: {{userId: "{team.owner.user_id}"}}) {{ removed }} }}',
        headers=team.member.headers(),
    )
    assert denied["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    assert "owners and admins" in denied["errors"][0]["message"]


async def test_every_face_offers_the_members_capabilities(client: httpx.AsyncClient) -> None:
    """MCP lists them as tools and the CLI has a command for each (both come from the
    registry; their snapshots are tests/graphql/service.graphql and app/cli/discovery.json)."""
    from click.testing import CliRunner

    from app.cli import main
    from app.cli.commands import shipped_listing
    from tests.mcp.test_mcp_face import ACCEPT

    slugs = sorted(s.slug for s in build_registry() if s.slug.startswith("members."))
    assert slugs == [
        "members.accept-invite",
        "members.cancel-invite",
        "members.invite",
        "members.leave",
        "members.list",
        "members.remove",
        "members.set-role",
    ]
    tools = {
        tool["name"]: tool
        # Members is an opt-in toolset (administration): the connection names it.
        for tool in (
            await client.post(
                "/mcp?toolsets=default,members",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers=ACCEPT,
            )
        ).json()["result"]["tools"]
    }
    assert {name for name in tools if name.startswith("members_")} == {
        slug.replace(".", "_").replace("-", "_") for slug in slugs
    }
    assert tools["members_remove"]["annotations"]["destructiveHint"] is True
    listing = {item["slug"]: item for item in shipped_listing()}
    assert listing["members.remove"]["roles"] == ["owner", "admin"]
    assert listing["members.accept-invite"]["roles"] == []
    for slug in slugs:
        action = slug.split(".", 1)[1]
        shown = CliRunner().invoke(main, ["members", action, "--help"], terminal_width=200)
        assert shown.exit_code == 0, shown.output
    shown = CliRunner().invoke(main, ["members", "set-role", "--help"], terminal_width=200)
    assert "--user-id" in shown.output and "roles: owner, admin" in shown.output


async def test_a_person_without_an_account_gets_one_from_the_operator_and_joins(
    client: httpx.AsyncClient, store: Store, team: Team
) -> None:
    """fincap admin create-user: an account with no workspace, whose key accepts the invite."""
    code = await invite(client, team.owner, "newcomer@example.com")
    created = await accounts.create_user(store, "Newcomer@example.com")
    assert await store.workspaces.list_for_user(created["userId"]) == []
    joined = await client.post(
        "/v1/capabilities/members.accept-invite",
        json={"code": code},
        headers={"Authorization": f"Bearer {created['apiKey']}"},
    )
    assert ok(joined)["workspaceId"] == team.owner.org_id
    with pytest.raises(BadRequest, match="already has an account"):
        await accounts.create_user(store, "newcomer@example.com")
