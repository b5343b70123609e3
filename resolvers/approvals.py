"""Capabilities of the approvals resource: review, approve or reject gated calls.

A gated capability in execute mode (``ApprovalGate`` on its ``@capability``) is stored by
``invoke()`` as an approval request. Owners and admins approve it: the stored call then runs
once, as its requester (their identity, role and the scopes of the credential they used),
through the same ``run()`` every face uses. Two concurrent approvals cannot both run it: the
request is claimed atomically first.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

from resolvers.context import Context, Principal
from resolvers.errors import BadRequest, CapabilityError, Forbidden, MissingScope, NotFound
from resolvers.invoke import run
from resolvers.registry import MANAGERS, MEMBERS, CapabilitySpec, Registry, capability
from schema.approvals import (
    ApprovalCapability,
    ApprovalExecuted,
    ApprovalRejected,
    ApprovalRequest,
    ApprovalSettings,
    ApprovalStatus,
    ApproveRequest,
    ConfigureApproval,
    GatedCapability,
    GetApproval,
    GetApprovalSettings,
    RejectRequest,
)

log = logging.getLogger("fincap.approvals")
REVIEWERS = frozenset({"owner", "admin"})


def _registry(ctx: Context) -> Registry:
    if ctx.registry is None:  # every face passes it through invoke(); a bug otherwise
        raise CapabilityError("approvals need the capability registry")
    return ctx.registry


async def _load(ctx: Context, request_id: str) -> dict[str, Any]:
    record = await ctx.store.approvals.get(ctx.require_workspace(), request_id)
    if record is None:
        raise NotFound(f"Approval request '{request_id}' not found")
    return record


def _view(ctx: Context, record: dict[str, Any]) -> ApprovalRequest:
    spec = _registry(ctx).get(record["capabilitySlug"])
    name = spec.name if spec is not None else record["capabilitySlug"]
    # "running" (claimed by an approval in progress) is still pending to readers.
    status: ApprovalStatus = "pending" if record["status"] == "running" else record["status"]
    return ApprovalRequest(
        id=record["_id"],
        status=status,
        capabilitySlug=record["capabilitySlug"],
        capability=ApprovalCapability(name=name, slug=record["capabilitySlug"]),
        title=record["title"],
        description=record["description"],
        requestedBy=record["requestedBy"],
        createdAt=record["createdAt"],
        input=record["input"],
        resolvedBy=record.get("resolvedBy") if status != "pending" else None,
        resolvedAt=record.get("resolvedAt"),
        rejectionMessage=record.get("rejectionMessage"),
        result=record.get("result"),
        lastError=record.get("lastError"),
    )


def _already(record: dict[str, Any]) -> BadRequest:
    if record["status"] == "running":
        return BadRequest(
            f"Invalid request: approval request '{record['_id']}' is being executed by another "
            "approval"
        )
    return BadRequest(
        f"Invalid request: approval request '{record['_id']}' is already {record['status']}"
    )


async def _taken(
    ctx: Context, request_id: str, transition: Awaitable[dict[str, Any] | None]
) -> dict[str, Any]:
    """The request a pending-only transition (claim or reject) took. When another approval or
    rejection got there first, a 400 that names the state it left the request in."""
    taken = await transition
    if taken is None:
        raise _already(await _load(ctx, request_id))
    return taken


@capability(
    "approvals.get",
    input=GetApproval,
    output=ApprovalRequest,
    permissions=[],
    effect="read",
)
async def get(ctx: Context, args: GetApproval) -> ApprovalRequest:
    """Details of a pending or resolved approval request: the capability and input it would
    run, who requested it and when, and (once resolved) who approved or rejected it, the
    rejection message or the executed call's result."""
    return _view(ctx, await _load(ctx, args.approvalRequestId))


async def _requester_context(ctx: Context, record: dict[str, Any]) -> Context:
    """The requester's context in this workspace, as when they made the call."""
    requester = record["requester"]
    workspace_id = ctx.require_workspace()
    role = await ctx.store.workspaces.role_of(requester["userId"], workspace_id)
    if role is None:
        raise Forbidden(
            "The requester is no longer a member of this workspace; reject the request instead"
        )
    principal = Principal(
        user_id=requester["userId"],
        key_id=requester["keyId"],
        restricted_to=workspace_id,
        scopes=frozenset(requester["scopes"]),
        via=requester["via"],
        client_id=requester.get("clientId"),
    )
    return Context(
        ctx.services, principal, workspace_id, role, ctx.request_id, registry=ctx.registry
    )


def _stored_spec(ctx: Context, record: dict[str, Any]) -> CapabilitySpec:
    spec = _registry(ctx).get(record["capabilitySlug"])
    if spec is None:
        raise BadRequest(
            f"Invalid request: capability '{record['capabilitySlug']}' no longer exists; "
            "reject the request"
        )
    return spec


@capability(
    "approvals.approve",
    input=ApproveRequest,
    output=ApprovalExecuted,
    permissions=[],
    effect="destructive",
    roles=MANAGERS,
)
async def approve(ctx: Context, args: ApproveRequest) -> ApprovalExecuted:
    """Approves a pending request and runs the reviewed call, once, as its requester, and
    returns the call's result. Owners and admins approve, and their credential must hold the
    scopes the reviewed capability needs. A request that is executed, rejected or being
    executed by a concurrent approval is a 400. When the call fails (a 4xx) nothing ran: the
    request stays pending with the error in lastError."""
    workspace_id = ctx.require_workspace()
    record = await _load(ctx, args.approvalRequestId)
    spec = _stored_spec(ctx, record)
    if not ctx.principal.allows(spec.permissions):
        raise MissingScope(spec.permissions)
    if record["status"] != "pending":
        raise _already(record)
    requester = await _requester_context(ctx, record)
    claimed = await _taken(
        ctx, record["_id"], ctx.store.approvals.claim(workspace_id, record["_id"], ctx.user_id)
    )
    try:
        result = await run(spec, requester, claimed["input"], approved=True)
    except CapabilityError as exc:
        await ctx.store.approvals.release(workspace_id, claimed["_id"], exc.message)
        raise
    except Exception:
        await ctx.store.approvals.release(workspace_id, claimed["_id"], "Internal server error")
        raise
    dumped = result.model_dump(mode="json", exclude_unset=True)
    await ctx.store.approvals.executed(workspace_id, claimed["_id"], dumped)
    return ApprovalExecuted(
        approvalRequestId=claimed["_id"], status="executed", capabilitySlug=spec.slug, result=dumped
    )


@capability(
    "approvals.reject",
    input=RejectRequest,
    output=ApprovalRejected,
    permissions=[],
    effect="write",
    roles=MEMBERS,
)
async def reject(ctx: Context, args: RejectRequest) -> ApprovalRejected:
    """Rejects a pending request without running the action, with an optional message (1-500
    characters) for the requester. Owners and admins reject; a requester may also withdraw
    their own request. A request an automation rule made is recorded in the document's
    activity as rejected."""
    record = await _load(ctx, args.approvalRequestId)
    if ctx.role not in REVIEWERS and record["requestedBy"] != ctx.user_id:
        raise Forbidden("Only owners and admins of the workspace, or the requester, can reject")
    rejected = await _taken(
        ctx,
        record["_id"],
        ctx.store.approvals.reject(
            ctx.require_workspace(), record["_id"], ctx.user_id, args.message
        ),
    )
    spec = _registry(ctx).get(rejected["capabilitySlug"])
    if spec is not None and spec.on_reject is not None:
        try:
            await spec.on_reject(ctx, rejected)
        except Exception:  # the rejection stands; only its follow-up record is missing
            log.exception("after-rejection hook failed", extra={"slug": spec.slug})
    return ApprovalRejected(
        approvalRequestId=rejected["_id"],
        status="rejected",
        capabilitySlug=rejected["capabilitySlug"],
        rejectionMessage=rejected.get("rejectionMessage"),
    )


async def _settings(ctx: Context) -> ApprovalSettings:
    off = await ctx.store.workspaces.ungated(ctx.require_workspace())
    return ApprovalSettings(
        capabilities=[
            GatedCapability(slug=spec.slug, name=spec.name, gated=spec.slug not in off)
            for spec in _registry(ctx)
            if spec.approval is not None
        ]
    )


@capability(
    "approvals.settings",
    input=GetApprovalSettings,
    output=ApprovalSettings,
    permissions=[],
    effect="read",
)
async def settings(ctx: Context, args: GetApprovalSettings) -> ApprovalSettings:
    """The capabilities that can require approval in execute mode (dryRun false), and whether
    they do in this workspace. Every one is gated until an owner or admin switches it off
    with approvals.configure."""
    return await _settings(ctx)


@capability(
    "approvals.configure",
    input=ConfigureApproval,
    output=ApprovalSettings,
    permissions=[],
    effect="write",
    roles=MANAGERS,
)
async def configure(ctx: Context, args: ConfigureApproval) -> ApprovalSettings:
    """Switches approval on or off for one gated capability in this workspace (owners and
    admins). Off: its execute-mode calls run at once. Returns the workspace's settings."""
    spec = _registry(ctx).get(args.capabilitySlug)
    if spec is None:
        raise NotFound(f"Unknown capability '{args.capabilitySlug}'")
    if spec.approval is None:
        gateable = ", ".join(s.slug for s in _registry(ctx) if s.approval is not None)
        raise BadRequest(
            f"Invalid request: capabilitySlug: '{args.capabilitySlug}' cannot require "
            f"approval (these can: {gateable})"
        )
    await ctx.store.workspaces.set_gated(ctx.require_workspace(), spec.slug, args.gated)
    return await _settings(ctx)
