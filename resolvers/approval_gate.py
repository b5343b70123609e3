"""The gate ``invoke()`` passes a gated call through: run it, or store it for approval."""

from __future__ import annotations

import inspect
import json

from pydantic import BaseModel

from resolvers.context import Context
from resolvers.registry import ApprovalGate, CapabilitySpec
from schema.approvals import ApprovalCapability, ApprovalRequired


def needs_approval(spec: CapabilitySpec, args: BaseModel) -> ApprovalGate | None:
    """The gate that applies to this call, if any (before the workspace setting is read)."""
    gate = spec.approval
    return gate if gate is not None and gate.applies(args) else None


def requester_of(ctx: Context) -> dict[str, object]:
    """What is kept of the caller, so the approved call runs with the same identity and scopes."""
    principal = ctx.principal
    return {
        "userId": principal.user_id,
        "keyId": principal.key_id,
        "scopes": sorted(principal.scopes),
        "via": principal.via,
        "clientId": principal.client_id,
    }


async def describe_call(spec: CapabilitySpec, gate: ApprovalGate, args: BaseModel) -> str:
    if gate.describe is not None:
        described = gate.describe(args)
        # A description that costs work (reading a rule's sentence) is a coroutine.
        return await described if inspect.isawaitable(described) else described
    body = json.dumps(args.model_dump(mode="json", exclude_unset=True), sort_keys=True)
    return f"{spec.slug} with {body[:1000]}"


async def gate_call(
    ctx: Context, spec: CapabilitySpec, gate: ApprovalGate, args: BaseModel
) -> ApprovalRequired | None:
    """Store the call and return the approval answer, or None when the workspace turned this
    capability's gate off (the call runs now)."""
    workspace_id = ctx.require_workspace()
    if spec.slug in await ctx.store.workspaces.ungated(workspace_id):
        return None
    if gate.preflight and "dryRun" in type(args).model_fields:
        await spec.handler(ctx, args.model_copy(update={"dryRun": True}))
    # The input as the caller sent it (unset fields stay unset, so defaults apply again).
    stored_input = args.model_dump(mode="json", exclude_unset=True)
    record = await ctx.store.approvals.create(
        workspace_id,
        slug=spec.slug,
        input=stored_input,
        title=gate.title,
        description=await describe_call(spec, gate, args),
        requester=requester_of(ctx),
    )
    return ApprovalRequired(
        approvalRequestId=record["_id"],
        capability=ApprovalCapability(name=spec.name, slug=spec.slug),
        title=record["title"],
        description=record["description"],
    )
