"""``invoke()``: the one path every face takes to run a capability."""

from __future__ import annotations

import contextlib
import dataclasses
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from resolvers.framework.access_tokens import resource_covers
from resolvers.framework.approval_gate import gate_call, needs_approval
from resolvers.framework.auth import authenticate, resolve_workspace
from resolvers.framework.context import Context, Credentials, Principal
from resolvers.framework.errors import (
    BadRequest,
    CapabilityError,
    MissingScope,
    NotFound,
    Unauthenticated,
    store_errors,
)
from resolvers.framework.registry import CapabilitySpec, Registry
from resolvers.framework.validation import unpaired_surrogate, validation_problems

if TYPE_CHECKING:
    from resolvers.framework.services import Services


def lookup(registry: Registry, slug: str) -> CapabilitySpec:
    """The public capability ``slug``; an internal one is as unknown as a missing one."""
    spec = registry.get(slug)
    if spec is None or spec.internal:
        raise NotFound(f"Unknown capability '{slug}'")
    return spec


async def invoke(
    registry: Registry,
    slug: str,
    arguments: Any,
    credentials: Credentials,
    services: Services,
    *,
    selected_fields: frozenset[str] | None = None,
) -> BaseModel:
    """Run capability ``slug``: look up → authenticate → workspace → scopes → role → validate
    → run. ``selected_fields``: what the face shows of each listed document (``Context``).

    Raises a ``CapabilityError`` subclass for every expected failure. A call that changes
    something reads its credential and membership from the store, never from the auth cache:
    a revoked key, a removed member or a lowered role is refused at once on every process.
    """
    spec = lookup(registry, slug)
    ctx = await authorize(
        credentials,
        services,
        spec.permissions,
        needs_workspace=spec.needs_workspace,
        registry=registry,
        fresh=not spec.read_only,
    )
    if selected_fields is not None:
        ctx = dataclasses.replace(ctx, selected_fields=selected_fields)
    return await run(spec, ctx, arguments)


async def run(
    spec: CapabilitySpec, ctx: Context, arguments: Any, *, approved: bool = False
) -> BaseModel:
    """Check the role, validate and run ``spec`` in an authorized context: the rest of
    ``invoke()``.

    The caller's role is checked here, so every path that runs a capability checks it: the
    faces, an automation rule acting for its author (``invoke_as``) and an approved call run
    as its requester. A gated call in execute mode is stored for approval instead (unless
    ``approved``: the approvals resource runs a reviewed call through here, as its requester).
    """
    spec.require_role(ctx.role)
    args = validate_input(spec, arguments)
    if ctx.workspace_id is not None and not approved:
        # Metered for billing: a dictionary increment here, written in batches (usage_meter).
        # A reviewed call run by approvals.approve was metered when it was requested.
        ctx.services.api_calls.count(ctx.workspace_id)
    # An expensive call holds its key's slot and spends its budget from before the approval
    # gate on: describing a gated call may cost as much as running it (rules.execute reads
    # its sentence for the reviewer).
    expensive = (
        ctx.services.expensive_calls.slot(
            ctx.principal.key_id,
            spec.slug,
            spec.cost,
            member=ctx.principal.user_id,
            workspace=ctx.workspace_id,
        )
        if spec.cost
        else contextlib.nullcontext()
    )
    with store_errors(), expensive:
        gate = None if approved else needs_approval(spec, args)
        if gate is not None:
            waiting = await gate_call(ctx, spec, gate, args)
            if waiting is not None:
                return spec.output.model_validate(waiting.model_dump())
        result = await spec.handler(ctx, args)
    # The output model filters what leaves: a handler cannot leak a stored-only field.
    checked = spec.result.model_validate(result, from_attributes=True)
    if spec.output is spec.result:
        return checked
    # A gated capability's public model admits the approval answer too; fields the handler
    # left unset stay unset (absent, not null).
    return spec.output.model_validate(checked.model_dump(exclude_unset=True))


async def invoke_as(
    registry: Registry, slug: str, arguments: Any, ctx: Context, *, approved: bool = False
) -> BaseModel:
    """Run capability ``slug`` in a context built by trusted server code (an automation rule
    acting for the user who saved it): scopes, then ``run`` as ``invoke`` does (validation,
    the approval gate, the handler, the output model). ``approved``: an owner or admin already
    approved this very call (a rule's held actions), so the gate does not ask again.

    ``NotFound`` when the capability is not part of this service.
    """
    spec = lookup(registry, slug)
    if not ctx.principal.allows(spec.permissions):
        raise MissingScope(spec.permissions)
    bound = dataclasses.replace(ctx, registry=registry)
    return await run(spec, bound, arguments, approved=approved)


async def authorize(
    credentials: Credentials,
    services: Services,
    permissions: tuple[str, ...],
    *,
    needs_workspace: bool,
    registry: Registry | None = None,
    fresh: bool = False,
    principal: Principal | None = None,
) -> Context:
    """Authenticate (401), resolve the workspace (400/403) and check scopes (403).

    Shared by ``invoke`` and the few plain routes that are not capabilities (file downloads).
    ``fresh``: read the credential and the membership from the store, not the auth cache.
    ``principal``: who ``credentials`` were found to be earlier in the same request (the
    GraphQL face authenticates before it reads the body), not looked up again.
    ``ServiceUnavailable`` (503) while the store cannot be reached.
    """
    with store_errors():
        return await _authorize(
            credentials, services, permissions, needs_workspace, registry, fresh, principal
        )


async def _authorize(
    credentials: Credentials,
    services: Services,
    permissions: tuple[str, ...],
    needs_workspace: bool,
    registry: Registry | None,
    fresh: bool,
    known: Principal | None = None,
) -> Context:
    cache = services.auth_cache
    principal = known or await authenticate(services.store, credentials, cache, fresh=fresh)
    presented_to = services.base_url + credentials.audience
    if not resource_covers(principal.resource, presented_to):
        raise Unauthenticated(
            f"This token was issued for {principal.resource}, not {presented_to} (RFC 8707); "
            "authorize again for this resource"
        )
    workspace_id, role = await resolve_workspace(
        services.store,
        principal,
        credentials.org_id,
        required=needs_workspace,
        cache=cache,
        fresh=fresh,
    )
    if not principal.allows(permissions):
        raise MissingScope(permissions)
    return Context(services, principal, workspace_id, role, credentials.request_id, registry)


def validate_input(spec: CapabilitySpec, arguments: Any) -> BaseModel:
    if not isinstance(arguments, dict):
        raise BadRequest("Request body must be a JSON object")
    try:
        args = spec.input.model_validate(arguments)
    except ValidationError as exc:
        problems, more = validation_problems(exc, spec.input)
        raise BadRequest.naming(problems, more=more) from None
    # Checked on valid input only (its size is bounded by the model), for every face alike.
    if (location := unpaired_surrogate(arguments)) is not None:
        why = (
            "contains an unpaired UTF-16 surrogate (an escape such as \\ud800 without its "
            "pair); strings must be valid Unicode"
        )
        raise BadRequest.naming([(location, why)])
    return args


__all__ = ["CapabilityError", "authorize", "invoke", "invoke_as", "lookup", "run", "validate_input"]
