"""Stand-ins for capabilities another resource provides (integrations), in the shapes
the contract gives (spec §4.4, spec/decisions.md), recording every call, so the rule actions that
invoke them through the registry can be tested before those resources land."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from resolvers.framework.context import Context
from resolvers.framework.registry import capability
from schema.base import Boolean, CapabilityInput, CapabilityOutput


class Calls:
    """Every call received: (slug, workspace, user, input)."""

    made: ClassVar[list[tuple[str, str | None, str, dict[str, Any]]]] = []
    gated: ClassVar[bool] = False


class StandInListIntegrations(CapabilityInput):
    pass


class StandInIntegrationList(CapabilityOutput):
    integrations: list[dict[str, Any]]


@capability(
    "integrations.list",
    input=StandInListIntegrations,
    output=StandInIntegrationList,
    permissions=["read_integrations"],
    effect="read",
)
async def list_integrations(ctx: Context, args: StandInListIntegrations) -> StandInIntegrationList:
    """Stand-in: one connected Xero integration with one tenant."""
    Calls.made.append(("integrations.list", ctx.workspace_id, ctx.user_id, {}))
    return StandInIntegrationList(
        integrations=[
            {
                "id": "int_xero",
                "name": "Xero",
                "category": "accounting",
                "status": "connected",
                "tenants": [{"tenantId": "tenant-1", "name": "Demo Company"}],
            }
        ]
    )


class StandInSend(CapabilityInput):
    documentId: str = Field(min_length=1)
    integrationId: str = Field(min_length=1)
    tenantId: str = Field(min_length=1)
    dryRun: Boolean = True


class StandInSendResult(CapabilityOutput):
    status: str
    approvalRequestId: str | None = None
    exportRecordId: str | None = None


@capability(
    "integrations.send",
    input=StandInSend,
    output=StandInSendResult,
    permissions=["write_integrations"],
    effect="write",
)
async def send(ctx: Context, args: StandInSend) -> StandInSendResult:
    """Stand-in: queues (or, gated, answers approval_required as spec/decisions.md says)."""
    Calls.made.append(("integrations.send", ctx.workspace_id, ctx.user_id, args.model_dump()))
    if Calls.gated and not args.dryRun:
        return StandInSendResult(status="approval_required", approvalRequestId="apr_1")
    return StandInSendResult(status="queued", exportRecordId="exp_1")
