"""Capabilities of the workspaces resource."""

from __future__ import annotations

from typing import Any

from resolvers.framework.context import Context
from resolvers.framework.registry import MANAGERS, capability
from schema.workspaces import (
    GetInboundAddress,
    InboundAddress,
    ListWorkspaces,
    RotateInboundAddress,
    Workspace,
    WorkspaceList,
    WorkspaceSummary,
)


@capability(
    "workspaces.list",
    input=ListWorkspaces,
    output=WorkspaceList,
    permissions=["read_workspaces"],
    effect="read",
    needs_workspace=False,
)
async def list_workspaces(ctx: Context, args: ListWorkspaces) -> WorkspaceList:
    """Lists the workspaces the calling credential may act in, with the caller's role. Use the ids
    as X-Service-Org-Id.
    """
    rows = await ctx.store.workspaces.list_for_user(ctx.user_id, only=ctx.principal.restricted_to)
    return WorkspaceList(
        currentOrgId=ctx.workspace_id,
        workspaces=[
            WorkspaceSummary(
                id=row["_id"],
                name=row["name"],
                role=row["role"],
                isCurrent=row["_id"] == ctx.workspace_id,
                createdAt=row["createdAt"],
            )
            for row in rows
        ],
    )


async def current_workspace(ctx: Context) -> Workspace | None:
    """The workspace ``ctx`` acts in, with the caller's role (for the GraphQL graph)."""
    row = await ctx.store.workspaces.get_for_member(ctx.user_id, ctx.require_workspace())
    if row is None:
        return None
    return Workspace(id=row["_id"], name=row["name"], role=row["role"], createdAt=row["createdAt"])


def _address(ctx: Context, record: dict[str, Any], retired: str | None = None) -> InboundAddress:
    domain = ctx.services.sources.inbound_domain
    return InboundAddress(
        address=f"{record['alias']}@{domain}",
        alias=record["alias"],
        domain=domain,
        createdAt=record["createdAt"],
        rotatedAt=record.get("rotatedAt"),
        retiredAddress=f"{retired}@{domain}" if retired else None,
    )


@capability(
    "workspaces.get-inbound-address",
    input=GetInboundAddress,
    output=InboundAddress,
    permissions=["read_workspaces"],
    effect="read",
)
async def get_inbound_address(ctx: Context, args: GetInboundAddress) -> InboundAddress:
    """The workspace's receiving email address: receipts and invoices forwarded or sent to it
    become documents here. Created on first use; workspaces.rotate-inbound-address replaces it.
    """
    record = await ctx.store.inbound_addresses.get_or_create(ctx.require_workspace())
    return _address(ctx, record)


@capability(
    "workspaces.rotate-inbound-address",
    input=RotateInboundAddress,
    output=InboundAddress,
    permissions=["write_integrations"],
    effect="write",
    roles=MANAGERS,
)
async def rotate_inbound_address(ctx: Context, args: RotateInboundAddress) -> InboundAddress:
    """Replaces the workspace's receiving email address with a new random one; mail to the old one
    is refused (use it when the address leaked). Owners and admins only.
    """
    workspace_id = ctx.require_workspace()
    record, retired = await ctx.store.inbound_addresses.rotate(workspace_id)
    return _address(ctx, record, retired)
