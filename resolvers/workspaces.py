"""Capabilities of the workspaces resource."""

from __future__ import annotations

from resolvers.context import Context
from resolvers.registry import capability
from schema.workspaces import ListWorkspaces, Workspace, WorkspaceList, WorkspaceSummary


@capability(
    "workspaces.list",
    input=ListWorkspaces,
    output=WorkspaceList,
    permissions=["read_workspaces"],
    effect="read",
    needs_workspace=False,
)
async def list_workspaces(ctx: Context, args: ListWorkspaces) -> WorkspaceList:
    """Lists the workspaces (organizations) the calling key may act in, with the caller's role.

    Use the returned ids as X-Service-Org-Id. A key restricted to one workspace lists only that one.
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
