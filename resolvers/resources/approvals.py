"""Capabilities of the approvals resource: review, approve or reject gated calls.

A gated capability in execute mode (``ApprovalGate`` on its ``@capability``) is stored by
``invoke()`` as an approval request. Owners and admins approve it: the stored call then runs
once, as its requester, through the same ``run()`` every face uses. Two concurrent approvals
cannot both run it: the request is claimed atomically first.

The requester is authorized again when the call runs, from the store as it is now: their
credential (API key, or OAuth grant) must still be live and hold the capability's scopes, they
must still be a member, and their role must still allow the capability; otherwise nothing runs
and the request keeps the reason in ``lastError``. A workspace may require that another person
approves (``requireOtherApprover``).

Reading a request needs the read scope of the capability it gates (``read_documents`` for a
bulk edit) and being its requester or an owner or admin. Secrets never show: the stored input's
secrets are sealed (``approval_gate``), and input and result are redacted when read; the
executed call's own secrets (a new rule's webhook secret) are answered to the approver once and
stored redacted.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

from resolvers.framework import cursors
from resolvers.framework.approval_gate import open_input
from resolvers.framework.context import Context, Principal
from resolvers.framework.errors import (
    BadRequest,
    CapabilityError,
    Forbidden,
    MissingScope,
    NotFound,
    RequesterRefused,
)
from resolvers.framework.invoke import run
from resolvers.framework.registry import MANAGERS, MEMBERS, CapabilitySpec, Registry, capability
from resolvers.services.auth.oauth_first_party import DASHBOARD_CLIENT_ID
from schema.approvals import (
    ApprovalCapability,
    ApprovalExecuted,
    ApprovalPage,
    ApprovalRejected,
    ApprovalRequest,
    ApprovalSettings,
    ApprovalStatus,
    ApproveRequest,
    ConfigureApproval,
    GatedCapability,
    GetApproval,
    GetApprovalSettings,
    ListApprovals,
    RejectRequest,
)
from schema.secrets import redact

log = logging.getLogger("fincap.approvals")
WORKSPACE_SETTINGS = ("write_workspaces",)


def _registry(ctx: Context) -> Registry:
    if ctx.registry is None:  # every face passes it through invoke(); a bug otherwise
        raise CapabilityError("approvals need the capability registry")
    return ctx.registry


async def _load(ctx: Context, request_id: str) -> dict[str, Any]:
    record = await ctx.store.approvals.get(ctx.require_workspace(), request_id)
    if record is None:
        raise NotFound(f"Approval request '{request_id}' not found")
    return record


def _require_reader(ctx: Context, record: dict[str, Any]) -> None:
    """Reading (or rejecting) a request needs the read scope of what it gates, and being its
    requester or an owner or admin."""
    spec = _registry(ctx).get(record["capabilitySlug"])
    needed = spec.read_permissions if spec is not None else ()
    if not ctx.principal.allows(needed):
        raise MissingScope(needed)
    if ctx.role not in MANAGERS and record["requestedBy"] != ctx.user_id:
        raise Forbidden(
            "Only the requester and the workspace's owners and admins can see or reject this "
            "request"
        )


def _view(ctx: Context, record: dict[str, Any]) -> ApprovalRequest:
    spec = _registry(ctx).get(record["capabilitySlug"])
    name = spec.name if spec is not None else record["capabilitySlug"]
    # Secrets are shown nowhere; a capability this server no longer has cannot say which of
    # its fields were secret, so its input and result are not shown at all.
    shown_input = redact(spec.input, record["input"]) if spec is not None else {}
    result = record.get("result")
    shown_result = redact(spec.result, result) if spec is not None and result else None
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
        input=shown_input,
        resolvedBy=record.get("resolvedBy") if status != "pending" else None,
        resolvedAt=record.get("resolvedAt"),
        rejectionMessage=record.get("rejectionMessage"),
        result=shown_result,
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
    """One approval request: the capability and input it would run, who requested it and when, who
    approved or rejected it, and the message or the call's result (secrets [redacted]). Readable
    by the requester, owners and admins with the read scope of the gated capability.
    """
    record = await _load(ctx, args.approvalRequestId)
    _require_reader(ctx, record)
    return _view(ctx, record)


# What approvals.list's status filter reads in the store ("running" is pending to readers).
STORED_STATUSES: dict[str, list[str] | None] = {
    "pending": ["pending", "running"],
    "executed": ["executed"],
    "rejected": ["rejected"],
    "all": None,
}


@capability(
    "approvals.list",
    input=ListApprovals,
    output=ApprovalPage,
    permissions=[],
    effect="read",
)
async def list_requests(ctx: Context, args: ListApprovals) -> ApprovalPage:
    """Approval requests of this workspace, newest first, by status (pending by default;
    executed, rejected or all), in pages of limit with nextCursor; each as approvals.get shows
    it. Owners and admins see everyone's, others their own; only requests for capabilities whose
    read scope the caller holds.
    """
    registry = _registry(ctx)
    # approvals.get's rule (_require_reader) as a filter: the gated capability's read scope…
    hidden = [spec.slug for spec in registry if not ctx.principal.allows(spec.read_permissions)]
    query_print = cursors.fingerprint({"capability": "approvals.list", "status": args.status})
    keyring = ctx.services.keyring
    rows = await ctx.store.approvals.page(
        ctx.require_workspace(),
        statuses=STORED_STATUSES[args.status],
        hidden_slugs=hidden,
        # … and being an owner or admin, or the requester.
        requested_by=None if ctx.role in MANAGERS else ctx.user_id,
        limit=args.limit + 1,
        after_row=cursors.keyset_after(args.cursor, query_print, keyring),
    )
    page, next_cursor = cursors.keyset_next(rows, args.limit, "createdAt", query_print, keyring)
    return ApprovalPage(requests=[_view(ctx, row) for row in page], nextCursor=next_cursor)


async def _credential_scopes(ctx: Context, requester: dict[str, Any]) -> frozenset[str]:
    """The scopes the requester's credential holds now; RequesterRefused when it is gone."""
    store, via, key_id = ctx.store, requester["via"], requester["keyId"]
    if via == "api_key":
        key = await store.api_keys.get_active(key_id)
        if key is None:
            raise RequesterRefused("the API key they used was revoked")
        grant = key.get("grantFamily")
        if grant is not None and not await store.oauth_tokens.family_alive(grant):
            raise RequesterRefused("the API key they used was made with an OAuth grant that ended")
        return frozenset(key.get("scopes") or ["all"])
    if via == "oauth":
        scopes = await store.oauth_tokens.family_scopes(key_id)
        if scopes is None and requester.get("clientId") == DASHBOARD_CLIENT_ID:
            # Asked in the dashboard, where the person acts for themselves: signing out does not
            # withdraw it (their membership and role are checked next, as for everyone).
            return frozenset(requester["scopes"])
        if scopes is None:
            raise RequesterRefused("the authorization (OAuth grant) they used was revoked or ended")
        return frozenset(scopes)
    # An automation rule acting for its author (key "rule:<id>"): the rule must still exist.
    rule_id = key_id.removeprefix("rule:")
    if await store.rules.get(ctx.require_workspace(), rule_id) is None:
        raise RequesterRefused("the rule that asked was deleted")
    return frozenset(requester["scopes"])


async def _requester_context(ctx: Context, spec: CapabilitySpec, record: dict[str, Any]) -> Context:
    """The requester's context in this workspace, authorized again from the store: a live
    credential with the capability's scopes, a membership, a role the capability allows."""
    requester = record["requester"]
    workspace_id = ctx.require_workspace()
    scopes = await _credential_scopes(ctx, requester)
    role = await ctx.store.workspaces.role_of(requester["userId"], workspace_id)
    if role is None:
        raise RequesterRefused("they are no longer a member of this workspace")
    principal = Principal(
        user_id=requester["userId"],
        key_id=requester["keyId"],
        restricted_to=workspace_id,
        scopes=scopes,
        via=requester["via"],
        client_id=requester.get("clientId"),
    )
    if not principal.allows(spec.permissions):
        raise RequesterRefused(
            f"their credential no longer holds the scope {', '.join(spec.permissions)}"
        )
    try:
        spec.require_role(role)
    except Forbidden as exc:
        raise RequesterRefused(exc.message) from None
    return Context(
        ctx.services,
        principal,
        workspace_id,
        role,
        ctx.request_id,
        registry=ctx.registry,
        approved_by=ctx.user_id,
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
    """Approves a pending request and runs its call once, as the requester, returning its result (a
    secret it makes is shown here once). Owners and admins, holding the call's scopes; not their
    own request when the workspace requires another approver. If the requester may no longer
    make the call, it is refused (403); a call that fails leaves the request pending with
    lastError.
    """
    workspace_id = ctx.require_workspace()
    record = await _load(ctx, args.approvalRequestId)
    spec = _stored_spec(ctx, record)
    if not ctx.principal.allows(spec.permissions):
        raise MissingScope(spec.permissions)
    if record["status"] != "pending":
        raise _already(record)
    policy = await ctx.store.workspaces.approval_policy(workspace_id)
    if policy["otherApprover"] and record["requestedBy"] == ctx.user_id:
        raise Forbidden(
            "This workspace requires another person to approve a request; ask another owner or "
            "admin"
        )
    claimed = await _taken(
        ctx, record["_id"], ctx.store.approvals.claim(workspace_id, record["_id"], ctx.user_id)
    )
    try:
        # Authorized again after the claim: between this check and the run nothing else can
        # take the request.
        requester = await _requester_context(ctx, spec, claimed)
        arguments = open_input(ctx.services.keyring, spec, claimed["_id"], claimed["input"])
        result = await run(spec, requester, arguments, approved=True)
    except CapabilityError as exc:
        await ctx.store.approvals.release(workspace_id, claimed["_id"], exc.message)
        raise
    except Exception:
        await ctx.store.approvals.release(workspace_id, claimed["_id"], "Internal server error")
        raise
    dumped = result.model_dump(mode="json", exclude_unset=True)
    await ctx.store.approvals.executed(workspace_id, claimed["_id"], redact(spec.result, dumped))
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
    """Rejects a pending request without running it, with an optional message for the requester.
    Owners and admins reject; a requester may withdraw their own request.
    """
    record = await _load(ctx, args.approvalRequestId)
    _require_reader(ctx, record)
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
    policy = await ctx.store.workspaces.approval_policy(ctx.require_workspace())
    return ApprovalSettings(
        capabilities=[
            GatedCapability(slug=spec.slug, name=spec.name, gated=spec.slug not in policy["off"])
            for spec in _registry(ctx)
            if spec.approval is not None
        ],
        requireOtherApprover=policy["otherApprover"],
    )


@capability(
    "approvals.settings",
    input=GetApprovalSettings,
    output=ApprovalSettings,
    permissions=[],
    effect="read",
)
async def settings(ctx: Context, args: GetApprovalSettings) -> ApprovalSettings:
    """The capabilities that can require approval in execute mode (dryRun false), whether they do
    here (each is gated until an owner or admin switches it off with approvals.configure), and
    whether someone other than the requester must approve.
    """
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
    """Changes the workspace's approval settings (owners and admins): capabilitySlug with gated
    switches one gated capability's approval on or off (with its scopes); requireOtherApprover
    true means nobody approves their own request (scope write_workspaces).
    """
    workspace_id = ctx.require_workspace()
    if (args.capabilitySlug is None) != (args.gated is None):
        raise BadRequest("Invalid request: capabilitySlug and gated go together")
    if args.capabilitySlug is None and args.requireOtherApprover is None:
        raise BadRequest(
            "Invalid request: send capabilitySlug with gated, or requireOtherApprover, or both"
        )
    if args.capabilitySlug is not None and args.gated is not None:
        spec = _registry(ctx).get(args.capabilitySlug)
        if spec is None:
            raise NotFound(f"Unknown capability '{args.capabilitySlug}'")
        if spec.approval is None:
            gateable = ", ".join(s.slug for s in _registry(ctx) if s.approval is not None)
            raise BadRequest(
                f"Invalid request: capabilitySlug: '{args.capabilitySlug}' cannot require "
                f"approval (these can: {gateable})"
            )
        # Loosening the gate of a capability is for a credential that could make its calls.
        if not ctx.principal.allows(spec.permissions):
            raise MissingScope(spec.permissions)
        if args.requireOtherApprover is not None and not ctx.principal.allows(WORKSPACE_SETTINGS):
            raise MissingScope(WORKSPACE_SETTINGS)
        await ctx.store.workspaces.set_gated(workspace_id, spec.slug, args.gated)
    if args.requireOtherApprover is not None:
        if not ctx.principal.allows(WORKSPACE_SETTINGS):
            raise MissingScope(WORKSPACE_SETTINGS)
        await ctx.store.workspaces.set_other_approver(workspace_id, args.requireOtherApprover)
    return await _settings(ctx)
