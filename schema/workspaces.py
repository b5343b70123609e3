"""Contract models of the workspaces resource."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from domain.roles import Role
from schema.base import CapabilityInput, CapabilityOutput

# The roles are declared once, with their meanings, in domain.roles.
WorkspaceRole = Role


class ListWorkspaces(CapabilityInput):
    """workspaces.list takes no parameters; send ``{}``."""


class WorkspaceSummary(CapabilityOutput):
    """A workspace the caller may act in."""

    id: str = Field(description="Workspace (organization) id, org_…")
    name: str = Field(description="The workspace's name")
    role: WorkspaceRole = Field(description="The caller's role in this workspace")
    isCurrent: bool = Field(description="True for the workspace named by X-Service-Org-Id")
    createdAt: datetime = Field(description="When the workspace was created")


class WorkspaceList(CapabilityOutput):
    """The workspaces allowed for the calling key."""

    currentOrgId: str | None = Field(description="The workspace of this request, if any")
    workspaces: list[WorkspaceSummary] = Field(description="Each workspace the key may act in")


class Workspace(CapabilityOutput):
    """A workspace the caller belongs to; the GraphQL graph adds its documents and counts."""

    id: str = Field(description="Workspace (organization) id, org_…")
    name: str = Field(description="The workspace's name")
    role: WorkspaceRole = Field(description="The caller's role in this workspace")
    createdAt: datetime = Field(description="When the workspace was created")


class GetInboundAddress(CapabilityInput):
    """workspaces.get-inbound-address takes no parameters; send ``{}``."""


class RotateInboundAddress(CapabilityInput):
    """workspaces.rotate-inbound-address takes no parameters; send ``{}``."""


class InboundAddress(CapabilityOutput):
    """Where to forward receipts: mail to this address lands in this workspace."""

    address: str = Field(description="The receiving address, <alias>@<domain>")
    alias: str = Field(description="The part before the @")
    domain: str = Field(description="The part after the @")
    createdAt: datetime = Field(
        description="When the address was made (a rotation makes a new one)"
    )
    rotatedAt: datetime | None = Field(description="When the address last changed, if ever")
    retiredAddress: str | None = Field(
        default=None, description="After a rotation: the address that no longer receives"
    )
