"""Contract models of the members resource: who belongs to a workspace, with which role."""

from __future__ import annotations

from datetime import datetime

from pydantic import EmailStr, Field

from schema.base import CapabilityInput, CapabilityOutput
from schema.secrets import SecretText
from schema.workspaces import WorkspaceRole

InvitedRole = WorkspaceRole


class ListMembers(CapabilityInput):
    """members.list takes no parameters; send ``{}``."""


class Member(CapabilityOutput):
    """A person in the workspace."""

    userId: str = Field(description="The member's user id")
    email: str | None = Field(description="The member's account e-mail address")
    role: WorkspaceRole = Field(description="What the member may do here")
    joinedAt: datetime = Field(description="When they joined")
    isYou: bool = Field(description="True for the caller")


class Invitation(CapabilityOutput):
    """An invitation waiting to be accepted (its code is never shown again)."""

    email: str = Field(description="The address invited")
    role: WorkspaceRole = Field(description="The role the invitee gets on joining")
    invitedBy: str = Field(description="User id of the owner or admin who invited")
    createdAt: datetime = Field(description="When the invitation was made")
    expiresAt: datetime = Field(description="When its code stops working")


class MemberList(CapabilityOutput):
    """The workspace's members, oldest first, and (to owners and admins) open invitations."""

    members: list[Member] = Field(description="The members, oldest first")
    invitations: list[Invitation] = Field(
        description="Invitations not yet accepted; empty unless the caller is an owner or admin"
    )


class InviteMember(CapabilityInput):
    """Input of members.invite."""

    email: EmailStr = Field(
        max_length=320, description="The invitee's e-mail address (their fincap account's)"
    )
    role: InvitedRole = Field(
        default="member", description="member (default) or admin; owner only when an owner invites"
    )


class InvitedMember(CapabilityOutput):
    """The invitation made, and how it reaches the invitee."""

    invitation: Invitation = Field(description="The invitation")
    emailed: bool = Field(
        description="True when the code was sent to the invitee through the server's mail relay"
    )
    code: SecretText | None = Field(
        default=None,
        description="The one-time code (fic_…), shown this once when it was not e-mailed: pass "
        "it to the invitee, who accepts with members.accept-invite",
    )
    emailError: str | None = Field(
        default=None, description="Why the e-mail could not be sent (the code is shown instead)"
    )


class AcceptInvite(CapabilityInput):
    """Input of members.accept-invite."""

    code: str = Field(
        min_length=10, max_length=100, description="The invitation code (fic_…) sent to you"
    )


class JoinedWorkspace(CapabilityOutput):
    """The workspace the caller joined."""

    workspaceId: str = Field(description="Use it as X-Service-Org-Id")
    name: str = Field(description="The workspace's name")
    role: WorkspaceRole = Field(description="The caller's role there")


MEMBER_ID = "The member's user id (usr_…), from members.list"


class SetMemberRole(CapabilityInput):
    """Input of members.set-role."""

    userId: str = Field(min_length=1, max_length=100, description=MEMBER_ID)
    role: WorkspaceRole = Field(description="The new role")


class MemberChanged(CapabilityOutput):
    """A member after the change."""

    member: Member = Field(description="The member, with the new role")


class RemoveMember(CapabilityInput):
    """Input of members.remove."""

    userId: str = Field(min_length=1, max_length=100, description=MEMBER_ID)


class CancelInvite(CapabilityInput):
    """Input of members.cancel-invite."""

    email: EmailStr = Field(max_length=320, description="The address the invitation was sent to")


class LeaveWorkspace(CapabilityInput):
    """members.leave takes no parameters; send ``{}``."""


class MemberRemoved(CapabilityOutput):
    """Who is no longer a member, and what of theirs stopped working here."""

    userId: str = Field(description="The user removed")
    removed: bool = Field(description="True once they are no longer a member")
    apiKeysRevoked: int = Field(description="Their API keys restricted to this workspace, revoked")
    tokensRevoked: int = Field(description="Their OAuth tokens for this workspace, revoked")
    whatsappNumbersRemoved: int = Field(
        description="Their WhatsApp numbers registered here, forgotten"
    )


class InviteCancelled(CapabilityOutput):
    """Whether an open invitation for the address was withdrawn."""

    email: str = Field(description="The address")
    cancelled: bool = Field(description="True when an open invitation was withdrawn")
