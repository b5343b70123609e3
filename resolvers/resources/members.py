"""Capabilities of the members resource: who belongs to a workspace, and with which role.

Roles: owners manage everything, billing included; admins manage members, sources and
integrations but cannot make, change or remove an owner; members use the workspace. A workspace
always keeps an owner (``persistence.workspaces`` guards the last one against races too).

People join by invitation: an owner or admin invites an e-mail address; the invitee, signed in
with the fincap account of that address, accepts with the one-time code (stored as a digest,
valid ``INVITATION_TTL``, single use). The code is e-mailed through the server's mail relay
(``FINCAP_SMTP_*``) when one is configured, and otherwise shown once in the answer for the
inviter to pass on.

A change takes effect at once: the store tells the auth cache (``on_membership_change``) and
every write re-reads the membership (``invoke``). Removing someone (or their leaving) also
revokes their API keys restricted to the workspace and their OAuth tokens for it, forgets their
WhatsApp numbers there and withdraws the invitations they sent.
"""

from __future__ import annotations

import logging
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from engines.rules.notify import NotifyError, send_email
from persistence.workspaces import MembershipChange
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest, Conflict, Forbidden, NotFound
from resolvers.framework.registry import MANAGERS, MEMBERS, SIGNED_IN, capability
from resolvers.framework.services import Services
from schema.members import (
    AcceptInvite,
    CancelInvite,
    Invitation,
    InviteCancelled,
    InvitedMember,
    InviteMember,
    JoinedWorkspace,
    LeaveWorkspace,
    ListMembers,
    Member,
    MemberChanged,
    MemberList,
    MemberRemoved,
    RemoveMember,
    SetMemberRole,
)
from schema.secrets import REDACTED

log = logging.getLogger("fincap.members")
CODE_PREFIX = "fic_"
INVITATION_TTL = timedelta(days=7)
MAX_OPEN_INVITATIONS = 100
NO_INVITATION = (
    "Invalid request: code: no open invitation has this code (unknown, already used or "
    "expired); ask for a new one"
)
OWNERS_ONLY = "Only an owner can make, change or remove an owner"


def _member(ctx: Context, row: dict[str, Any], email: str | None) -> Member:
    return Member(
        userId=row["userId"],
        email=email,
        role=row["role"],
        joinedAt=row["createdAt"],
        isYou=row["userId"] == ctx.user_id,
    )


def _invitation(row: dict[str, Any]) -> Invitation:
    return Invitation(
        email=row["email"],
        role=row["role"],
        invitedBy=row["invitedBy"],
        createdAt=row["createdAt"],
        expiresAt=row["expiresAt"],
    )


def _refuse(outcome: MembershipChange, user_id: str, ctx: Context) -> None:
    """The error a guarded membership change answers, if it was refused."""
    if outcome == "missing":
        raise NotFound(f"No member '{user_id}' in this workspace")
    if outcome == "owners-only":
        raise Forbidden(OWNERS_ONLY)
    if outcome == "busy":
        raise Conflict("Another change of this member's role is under way; try again")
    if outcome == "last-owner":
        who = "you are" if user_id == ctx.user_id else f"'{user_id}' is"
        raise BadRequest(
            f"Invalid request: {who} the workspace's last owner; make another member owner first"
        )


@capability(
    "members.list",
    input=ListMembers,
    output=MemberList,
    permissions=["read_workspaces"],
    effect="read",
)
async def list_members(ctx: Context, args: ListMembers) -> MemberList:
    """Lists the members of this workspace, oldest first, with e-mail address and role. Owners and
    admins also see open invitations.
    """
    workspace_id = ctx.require_workspace()
    rows = await ctx.store.workspaces.members(workspace_id)
    emails = await ctx.store.users.emails([row["userId"] for row in rows])
    invitations = (
        [_invitation(row) for row in await ctx.store.invitations.pending(workspace_id)]
        if ctx.role in MANAGERS
        else []
    )
    return MemberList(
        members=[_member(ctx, row, emails.get(row["userId"])) for row in rows],
        invitations=invitations,
    )


async def _email_invitation(
    services: Services, email: str, workspace: str, inviter: str, role: str, code: str
) -> None:
    smtp = services.automation.smtp
    assert smtp is not None
    await send_email(
        smtp,
        email,
        f"[fincap] You are invited to {workspace}"[:200],
        "\n".join(
            [
                f"{inviter} invited you to the fincap workspace '{workspace}' ({role}) on "
                f"{services.base_url}.",
                "",
                "Sign in with the fincap account of this e-mail address and accept with this "
                "code (it works once, for 7 days):",
                "",
                f"    {code}",
                "",
                f"    fincap members accept-invite --code {code}",
                "",
                "or POST /v1/capabilities/members.accept-invite with "
                '{"code": "…"}. If you did not expect this, ignore it.',
            ]
        ),
        outbound=services.outbound,
    )


@capability(
    "members.invite",
    input=InviteMember,
    output=InvitedMember,
    permissions=["write_workspaces"],
    effect="write",
    roles=MANAGERS,
)
async def invite(ctx: Context, args: InviteMember) -> InvitedMember:
    """Invites an e-mail address to this workspace as member (default), admin or (owners only)
    owner. The invitee, signed in as that address, accepts with members.accept-invite and the
    one-time code (7 days): e-mailed when the server has a mail relay (emailed true), else
    returned here once. Owners and admins only.
    """
    workspace_id = ctx.require_workspace()
    if args.role == "owner" and ctx.role != "owner":
        raise Forbidden(OWNERS_ONLY)
    email = str(args.email).strip().lower()
    existing = await ctx.store.users.find_by_email(email)
    if existing is not None and await ctx.store.workspaces.role_of(existing["_id"], workspace_id):
        raise BadRequest("Invalid request: email: already a member of this workspace")
    open_ones = {row["email"] for row in await ctx.store.invitations.pending(workspace_id)}
    if email not in open_ones and len(open_ones) >= MAX_OPEN_INVITATIONS:
        raise BadRequest(
            f"A workspace has at most {MAX_OPEN_INVITATIONS} open invitations; cancel one first"
        )
    code = CODE_PREFIX + secrets.token_urlsafe(32)
    row = await ctx.store.invitations.open(
        workspace_id,
        email,
        role=args.role,
        code=code,
        invited_by=ctx.user_id,
        expires_at=datetime.now(UTC) + INVITATION_TTL,
        may_replace_owner=ctx.role == "owner",
    )
    if row is None:  # the address's open invitation is to become owner
        raise Forbidden(OWNERS_ONLY)
    if ctx.services.automation.smtp is None:
        return InvitedMember(invitation=_invitation(row), emailed=False, code=code)
    workspace = await ctx.store.workspaces.get_for_member(ctx.user_id, workspace_id) or {}
    inviter = (await ctx.store.users.emails([ctx.user_id])).get(ctx.user_id, ctx.user_id)
    try:
        await _email_invitation(
            ctx.services, email, workspace.get("name", workspace_id), inviter, args.role, code
        )
    except NotifyError as exc:
        log.warning("invitation e-mail not sent", extra={"workspaceId": workspace_id})
        return InvitedMember(
            invitation=_invitation(row),
            emailed=False,
            code=code,
            # The relay's words may echo the message, code included: never shown back.
            emailError=str(exc).replace(code, REDACTED),
        )
    return InvitedMember(invitation=_invitation(row), emailed=True)


@capability(
    "members.accept-invite",
    input=AcceptInvite,
    output=JoinedWorkspace,
    permissions=["write_workspaces"],
    effect="write",
    needs_workspace=False,
    roles=SIGNED_IN,
)
async def accept_invite(ctx: Context, args: AcceptInvite) -> JoinedWorkspace:
    """Joins the workspace an invitation code opens, with the role it names; the caller must be
    signed in as the invited address. A code works once, for 7 days. Use the returned
    workspaceId from now on.
    """
    code = args.code.strip()
    invitation = await ctx.store.invitations.find_by_code(code)
    if invitation is None:
        raise BadRequest(NO_INVITATION)
    user = await ctx.store.users.get(ctx.user_id) or {}
    if user.get("email") != invitation["email"]:
        raise Forbidden(
            "This invitation is for another e-mail address; accept it signed in with that "
            "address's account"
        )
    taken = await ctx.store.invitations.consume(invitation["_id"], code)
    if taken is None:  # accepted by a concurrent call, or expired a moment ago
        raise BadRequest(NO_INVITATION)
    workspace_id = taken["workspaceId"]
    await ctx.store.workspaces.join(workspace_id, ctx.user_id, taken["role"], taken["invitedBy"])
    workspace = await ctx.store.workspaces.get_for_member(ctx.user_id, workspace_id)
    if workspace is None:  # the workspace is gone; nothing to join
        raise BadRequest(NO_INVITATION)
    return JoinedWorkspace(workspaceId=workspace_id, name=workspace["name"], role=workspace["role"])


@capability(
    "members.cancel-invite",
    input=CancelInvite,
    output=InviteCancelled,
    permissions=["write_workspaces"],
    effect="destructive",
    roles=MANAGERS,
)
async def cancel_invite(ctx: Context, args: CancelInvite) -> InviteCancelled:
    """Withdraws the open invitation of an e-mail address: its code stops working. Owners and
    admins (an invitation to become owner: owners only)."""
    workspace_id = ctx.require_workspace()
    email = str(args.email).strip().lower()
    outcome = await ctx.store.invitations.cancel(
        workspace_id, email, may_cancel_owner=ctx.role == "owner"
    )
    if outcome == "owners-only":
        raise Forbidden(OWNERS_ONLY)
    return InviteCancelled(email=email, cancelled=outcome == "cancelled")


@capability(
    "members.set-role",
    input=SetMemberRole,
    output=MemberChanged,
    permissions=["write_workspaces"],
    effect="write",
    roles=MANAGERS,
)
async def set_role(ctx: Context, args: SetMemberRole) -> MemberChanged:
    """Changes a member's role at once. Owners and admins; only an owner makes or changes an owner.
    The last owner cannot be demoted: make another member owner first.
    """
    workspace_id = ctx.require_workspace()
    outcome = await ctx.store.workspaces.change_role(
        workspace_id, args.userId, args.role, may_touch_owner=ctx.role == "owner"
    )
    _refuse(outcome, args.userId, ctx)
    row = await ctx.store.workspaces.membership(workspace_id, args.userId)
    if row is None:  # removed by a concurrent call
        raise NotFound(f"No member '{args.userId}' in this workspace")
    emails = await ctx.store.users.emails([args.userId])
    return MemberChanged(member=_member(ctx, row, emails.get(args.userId)))


async def _remove(ctx: Context, user_id: str) -> MemberRemoved:
    """End ``user_id``'s membership and what it let them do here."""
    workspace_id = ctx.require_workspace()
    store = ctx.store
    outcome = await store.workspaces.remove_member(
        workspace_id, user_id, may_touch_owner=ctx.role == "owner" or user_id == ctx.user_id
    )
    _refuse(outcome, user_id, ctx)
    keys = await store.api_keys.revoke_restricted_to(user_id, workspace_id)
    tokens = await store.oauth_tokens.revoke_for_membership(user_id, workspace_id)
    await store.oauth_consents.forget_for_membership(user_id, workspace_id)
    numbers = await store.whatsapp_senders.remove_for_member(workspace_id, user_id)
    await store.invitations.cancel_sent_by(workspace_id, user_id)
    return MemberRemoved(
        userId=user_id,
        removed=True,
        apiKeysRevoked=keys,
        tokensRevoked=tokens,
        whatsappNumbersRemoved=numbers,
    )


@capability(
    "members.remove",
    input=RemoveMember,
    output=MemberRemoved,
    permissions=["write_workspaces"],
    effect="destructive",
    roles=MANAGERS,
)
async def remove(ctx: Context, args: RemoveMember) -> MemberRemoved:
    """Removes a member from this workspace at once, revoking their keys restricted to it and their
    tokens for it; what they added stays. Owners and admins; only an owner removes an owner; the
    last owner stays.
    """
    return await _remove(ctx, args.userId)


@capability(
    "members.leave",
    input=LeaveWorkspace,
    output=MemberRemoved,
    permissions=["write_workspaces"],
    effect="destructive",
    roles=MEMBERS,
)
async def leave(ctx: Context, args: LeaveWorkspace) -> MemberRemoved:
    """Leaves this workspace (your keys restricted to it and your tokens for it stop working). The
    last owner cannot leave: make another member owner first.
    """
    return await _remove(ctx, ctx.user_id)
