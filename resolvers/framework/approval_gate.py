"""The gate ``invoke()`` passes a gated call through: run it, or store it for approval.

A stored call never holds a secret in the clear: the input's ``SecretText`` fields are sealed
with the keyring, bound to the request (``seal_input``), opened only to run the approved call
(``open_input``), and shown as ``[redacted]`` in the request's description and wherever the
request is read (``resolvers.resources.approvals``).
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from pydantic import BaseModel

from engines.keyring import Keyring
from persistence.approvals import new_request_id
from resolvers.framework.context import Context
from resolvers.framework.registry import ApprovalGate, CapabilitySpec
from schema.approvals import ApprovalCapability, ApprovalRequired
from schema.secrets import map_secrets, redact

SECRET_PURPOSE = "approval-input-secret"


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


def seal_input(
    keyring: Keyring, spec: CapabilitySpec, request_id: str, data: dict[str, Any]
) -> dict[str, Any]:
    """``data`` with its secrets encrypted, bound to the request ``request_id``."""
    bound = request_id.encode()
    sealed: dict[str, Any] = map_secrets(
        spec.input, data, lambda value: keyring.encrypt(SECRET_PURPOSE, str(value).encode(), bound)
    )
    return sealed


def open_input(
    keyring: Keyring, spec: CapabilitySpec, request_id: str, data: dict[str, Any]
) -> dict[str, Any]:
    """A stored input as the requester sent it (secrets decrypted), to run the call."""
    bound = request_id.encode()
    opened: dict[str, Any] = map_secrets(
        spec.input, data, lambda value: keyring.decrypt(SECRET_PURPOSE, value, bound).decode()
    )
    return opened


async def describe_call(spec: CapabilitySpec, gate: ApprovalGate, args: BaseModel) -> str:
    """What a reviewer reads. The default writes the input with its secrets redacted; a
    gate's own ``describe`` must not print a secret field either (resolvers/THREATS.md)."""
    if gate.describe is not None:
        described = gate.describe(args)
        # A description that costs work (reading a rule's sentence) is a coroutine.
        return await described if inspect.isawaitable(described) else described
    shown = redact(spec.input, args.model_dump(mode="json", exclude_unset=True))
    body = json.dumps(shown, sort_keys=True)
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
    # The input as the caller sent it (unset fields stay unset, so defaults apply again),
    # its secrets sealed to this request.
    request_id = new_request_id()
    stored_input = seal_input(
        ctx.services.keyring,
        spec,
        request_id,
        args.model_dump(mode="json", exclude_unset=True),
    )
    record = await ctx.store.approvals.create(
        workspace_id,
        slug=spec.slug,
        input=stored_input,
        title=gate.title,
        description=await describe_call(spec, gate, args),
        requester=requester_of(ctx),
        request_id=request_id,
    )
    return ApprovalRequired(
        approvalRequestId=record["_id"],
        capability=ApprovalCapability(name=spec.name, slug=spec.slug),
        title=record["title"],
        description=record["description"],
    )
